/**
 * The stack's scaling groups: the sizes the templates vnfm sends carry for
 * groups sized by signals (hot.ts), the member counts Heat has, and Tacker
 * v1's scaling (openstack.py `scale` and `scale_wait`): one
 * OS::Heat::ScalingPolicy signal per step, each waited for and checked
 * before the next, so that no scale level is recorded that the stack does not
 * have.
 */
import type { Sleep } from '../../clock.js';
import { InterruptedError, TimeoutError, VnfmError } from '../../errors.js';
import type { DriverContext, ResourceRef } from '../driver.js';
import type { HeatTemplates, ScalingGroupSize, ScalingPolicySignal } from './driver-contract.js';
import type { HeatEvent, HeatSession, StackRef } from './heat.js';
import { groupMembers, parseHot, POLICY_TYPE, sizedBySignals, templateGroups, withGroupSizes, type GroupMembers } from './hot.js';
import { step } from './stack-actions.js';

export interface SignalTiming {
  /** Milliseconds since the epoch. */
  now(): number;
  sleep: Sleep;
  /** Pauses between polls: the first, and the longest it grows to. */
  poll: { min: number; max: number };
  /**
   * How long after a signal the group may show no scaling at all before the
   * wait ends: Heat takes no action on a signal to a group at its max_size or
   * min_size or in its cooldown, and records nothing when it does not.
   */
  quietMs: number;
}

const sizesOf = (groups: readonly ScalingGroupSize[]): Record<string, number> => Object.fromEntries(groups.map((g) => [g.group, g.members]));

const named = (g: ScalingGroupSize) => `scaling group ${g.group}${g.vduId ? ` (${g.vduId})` : ''}`;

const MISMATCH_HINT =
  "vnfm records only what Heat has: the instance keeps the scale level it had. Compare the group in the Base HOT (max_size, min_size, its policies' scaling_adjustment) with the VNFD (vdu_profile, the aspect's deltas)";

/** The scaling groups of one Heat session's stacks. */
export class GroupSizes {
  constructor(
    private readonly heat: HeatSession,
    private readonly timing: SignalTiming,
  ) {}

  /** The members of the stack's top-level groups, as Heat lists them now. */
  async members(ctx: DriverContext, stack: StackRef): Promise<Record<string, GroupMembers>> {
    return groupMembers(await this.heat.listResources(stack, 1, ctx.signal), stack.id);
  }

  /** The package's template with `groups`' sizes in each group sized by signals (then parsed), else its text as it is. */
  templateFor(templates: HeatTemplates, groups: readonly ScalingGroupSize[] | undefined): string | Record<string, unknown> {
    if (!groups?.length) return templates.template;
    const parsed = parseHot(templates.template);
    return (parsed && withGroupSizes(parsed, sizesOf(groups))) ?? templates.template;
  }

  /**
   * What an update that keeps the stack's template sends as its template:
   * the stack's own, with each group sized by signals at the size `groups`
   * gives it, else at the size it has now; undefined when the template
   * already says so (or has no such group), and nothing is to be sent.
   */
  async keptTemplate(ctx: DriverContext, stack: StackRef, groups: readonly ScalingGroupSize[] | undefined): Promise<Record<string, unknown> | undefined> {
    const template = await this.heat.getTemplate(stack, ctx.signal);
    const bySignals = templateGroups(template).filter(sizedBySignals);
    if (bySignals.length === 0) return undefined;
    const sizes = sizesOf(groups ?? []);
    if (bySignals.some((g) => sizes[g.name] === undefined)) {
      const live = await this.members(ctx, stack);
      for (const g of bySignals) if (sizes[g.name] === undefined && live[g.name]) sizes[g.name] = live[g.name]!.members;
    }
    return withGroupSizes(template, sizes);
  }

  /** Fails naming each group whose member count is not the one given. */
  async check(ctx: DriverContext, stack: StackRef, groups: readonly ScalingGroupSize[] | undefined, after: string): Promise<void> {
    if (!groups?.length) return;
    const live = await this.members(ctx, stack);
    const wrong = groups.filter((g) => live[g.group]?.members !== g.members);
    if (wrong.length === 0) return;
    const say = (g: ScalingGroupSize) => {
      const found = live[g.group];
      if (!found) return `Heat stack ${stack.name} has no ${named(g)}`;
      return `${named(g)} of Heat stack ${stack.name} has ${found.members} member${found.members === 1 ? '' : 's'}${found.failed ? ` (and ${found.failed} failed)` : ''}, ${g.members} expected`;
    };
    throw new VnfmError(`after ${after}, ${wrong.map(say).join('; ')}`, { hint: MISMATCH_HINT });
  }

  /**
   * Signals `s.policy` once per step not yet taken, waiting after each for
   * the group to be resized and checking its member count before the next.
   * The steps already taken are told by the group's size, so a retry after
   * a failure part-way sends only the missing signals.
   */
  async signalSteps(ctx: DriverContext, stack: StackRef, s: ScalingPolicySignal): Promise<void> {
    const group: ScalingGroupSize = { group: s.group, members: s.from, ...(s.vduId ? { vduId: s.vduId } : {}) };
    const policy: ResourceRef = { apiVersion: 'orchestration/v1', kind: POLICY_TYPE, name: s.policy, namespace: stack.name };
    await this.whenIdle(ctx, stack, s.group, policy);
    let current = (await this.members(ctx, stack))[s.group];
    if (!current) throw new VnfmError(`Heat stack ${stack.name} has no scaling group ${s.group}, which ${s.policy} adjusts`, { hint: MISMATCH_HINT });
    const taken = current.members === s.from ? 0 : s.steps.indexOf(current.members) + 1;
    if (taken === 0 && current.members !== s.from) {
      throw new VnfmError(
        `${named(group)} of Heat stack ${stack.name} has ${current.members} members: neither the ${s.from} recorded nor a step of this scale (${s.steps.join(', ')})`,
        { hint: 'it was resized outside vnfm: vnfm vnf-sync INSTANCE records what Heat has; then scale again' },
      );
    }
    for (let i = taken; i < s.steps.length; i++) {
      const target = s.steps[i]!;
      const detail = `signal ${i + 1} of ${s.steps.length}: ${s.group} ${current.members} -> ${target}`;
      if (i > taken) await this.whenIdle(ctx, stack, s.group, policy);
      step(ctx, { action: 'scale', resource: policy, state: 'intended', detail });
      const seen = await this.signalOnce(ctx, stack, s, policy);
      current = (await this.members(ctx, stack))[s.group];
      if (current?.members !== target) throw await this.notResized(stack, s, { ...group, members: target }, current, seen);
      step(ctx, { action: 'scale', resource: policy, state: 'done', detail });
      ctx.report({ resource: policy, message: `${s.group} has ${target} members`, done: true });
    }
  }

  /**
   * Waits until the group takes a signal: Heat ignores one while the group is
   * still scaling (an earlier attempt's signal) or in its cooldown, so, as
   * Tacker does (heat_client.py `get_cooldown`), vnfm waits for
   * `cooldown_end` in the group's metadata to pass.
   */
  private async whenIdle(ctx: DriverContext, stack: StackRef, group: string, resource: ResourceRef): Promise<void> {
    const t = this.timing;
    for (let pause = t.poll.min, told = false; ; pause = Math.min(t.poll.max, Math.round(pause * 1.5))) {
      const metadata = await this.heat.resourceMetadata(stack, group, ctx.signal);
      const cooldownLeft = cooldownEnd(metadata) - t.now();
      if (metadata['scaling_in_progress'] !== true && !(cooldownLeft > 0)) return;
      if (!told) {
        const why = metadata['scaling_in_progress'] === true ? 'still scaling' : `in its cooldown for ${Math.ceil(cooldownLeft / 1000)} s`;
        ctx.report({ resource, message: `waiting: ${group} is ${why}` });
        told = true;
      }
      await t.sleep(metadata['scaling_in_progress'] === true ? pause : Math.min(cooldownLeft + COOLDOWN_MARGIN_MS, t.poll.max * 5), ctx.signal);
    }
  }

  /**
   * One signal and its wait. Heat answers a signal at once and resizes the
   * group afterwards: the wait ends with the policy's SIGNAL_COMPLETE event
   * (the resize done), when the group's scaling ends without one (it
   * failed), or when the group shows no scaling for `quietMs` (Heat took no
   * action: no event, no trace but in its log). Returns whether the group
   * was seen scaling.
   */
  private async signalOnce(ctx: DriverContext, stack: StackRef, s: ScalingPolicySignal, resource: ResourceRef): Promise<boolean> {
    const t = this.timing;
    let marker = await this.heat.lastEventId(stack, ctx.signal);
    const sent = t.now();
    await this.heat.signalResource(stack, s.policy, ctx.signal);
    ctx.report({ resource, message: `signalled: ${s.group} is resized by Heat` });
    let started = false;
    for (let pause = t.poll.min; ; pause = Math.min(t.poll.max, Math.round(pause * 1.5))) {
      throwIfAborted(ctx.signal);
      let completed = false;
      for (const e of await this.heat.listEvents(stack, marker ? { marker } : {}, ctx.signal)) {
        marker = e.id;
        reportEvent(ctx, stack, e);
        if (e.resourceName === s.policy && e.status === 'SIGNAL_COMPLETE') completed = true;
      }
      if (completed) return true;
      const scaling = (await this.heat.resourceMetadata(stack, s.group, ctx.signal))['scaling_in_progress'] === true;
      if (scaling) started = true;
      else if (started || t.now() - sent >= t.quietMs) return started;
      await t.sleep(pause, ctx.signal);
    }
  }

  /** The error for a group that did not reach `expected` after a signal, with what Heat says about it. */
  private async notResized(stack: StackRef, s: ScalingPolicySignal, expected: ScalingGroupSize, found: GroupMembers | undefined, seen: boolean): Promise<VnfmError> {
    const has = found ? `${found.members} member${found.members === 1 ? '' : 's'}${found.failed ? ` (and ${found.failed} failed)` : ''}` : 'no members';
    let why: string;
    const nested = found?.nested && (await this.heat.getStack(found.nested).catch(() => undefined));
    if (nested?.status.endsWith('_FAILED')) why = `Heat's resize of the group ended ${nested.status}: ${nested.statusReason || 'no reason given'}`;
    else if (!seen) {
      why = `Heat took no action on the signal within ${Math.round(this.timing.quietMs / 1000)} s: the group is at its max_size or min_size, or in its cooldown, or Heat failed to resize it (heat-engine's log says which)`;
    } else why = 'Heat resized it by another number of members than the step needs (scaling_adjustment of the policy)';
    return new VnfmError(`${named(expected)} of Heat stack ${stack.name} has ${has} after the signal to ${s.policy}, ${expected.members} expected: ${why}`, {
      hint: MISMATCH_HINT,
    });
  }
}

/** Signals sent this soon after the end of a cooldown Heat's clock measures may still fall in it. */
const COOLDOWN_MARGIN_MS = 1_000;

/** When the group's cooldown ends (`cooldown_end`: {"<UTC time without zone>": reason}), in ms since the epoch; 0 when none is set. */
function cooldownEnd(metadata: Record<string, unknown>): number {
  const end = metadata['cooldown_end'];
  const at = end && typeof end === 'object' ? Object.keys(end)[0] : undefined;
  const ms = at ? Date.parse(/(?:[zZ]|[+-]\d\d:?\d\d)$/.test(at) ? at : `${at}Z`) : NaN;
  return Number.isFinite(ms) ? ms : 0;
}

function reportEvent(ctx: DriverContext, stack: StackRef, e: HeatEvent): void {
  ctx.report({
    resource: { apiVersion: 'orchestration/v1', kind: 'Resource', name: e.resourceName, namespace: stack.name },
    message: `${e.status}${e.statusReason && !/state changed|completed successfully|No signal details/i.test(e.statusReason) ? `: ${e.statusReason}` : ''}`,
    done: e.status.endsWith('_COMPLETE'),
  });
}

function throwIfAborted(signal: AbortSignal): void {
  if (!signal.aborted) return;
  const r = signal.reason as unknown;
  throw r instanceof TimeoutError || r instanceof InterruptedError ? r : new InterruptedError('interrupted');
}
