/**
 * What every OpenStack operation is made of: a Heat stack created, updated
 * or deleted, then waited for through its events, with the journal step
 * before and after; a stack an earlier attempt or a restarted Heat engine
 * left IN_PROGRESS is taken over by sending the request again.
 */
import type { Sleep } from '../../clock.js';
import { NotFoundError, VnfmError } from '../../errors.js';
import type { DriverContext, JournalStep, ResourceRef } from '../driver.js';
import { cloudRefusal, failedStackHint, resourceTypeRefusal } from './cloud-refusals.js';
import { stackNameOf, type HeatTemplates, type NfvParameter } from './driver-contract.js';
import { HeatError, StackStalledError, type HeatEvent, type HeatResource, type HeatSession, type HeatStack, type StackContent, type StackRef } from './heat.js';

export const SERVER_TYPE = 'OS::Nova::Server';
/** How often one wait re-sends its request after Heat dropped the work. */
const MAX_TAKEOVERS = 2;

export const stackResource = (name: string): ResourceRef => ({ apiVersion: 'orchestration/v1', kind: 'Stack', name });

export function step(ctx: DriverContext, s: JournalStep): void {
  ctx.journal.record(s);
}

function reportEvent(ctx: DriverContext, ref: StackRef, e: HeatEvent): void {
  ctx.report({
    resource: { apiVersion: 'orchestration/v1', kind: 'Resource', name: e.resourceName, namespace: ref.name },
    message: `${e.status}${e.statusReason && !/state changed|completed successfully/i.test(e.statusReason) ? `: ${e.statusReason}` : ''}`,
    done: e.status.endsWith('_COMPLETE'),
  });
}

function rejected(err: unknown, templates: HeatTemplates): unknown {
  if (!(err instanceof HeatError)) return err;
  // Heat's policy on a resource type the template uses: the user may use Heat, not that type.
  const forbidden = err.status === 403 ? resourceTypeRefusal(err.heatMessage) : undefined;
  if (forbidden) return new VnfmError(`Heat refused the stack: the VIM user lacks ${forbidden.what}: ${err.heatMessage}`, { hint: forbidden.hint, cause: err });
  if (err.status !== 400) return err;
  // Heat checks what the template names against the cloud (a network, an image's status): then the cloud, not the file, is at fault.
  const refusal = cloudRefusal(err.heatMessage, false);
  if (refusal) return new VnfmError(`Heat refused the stack: the VIM lacks ${refusal.what}: ${err.heatMessage}`, { hint: refusal.hint, cause: err });
  const named = Object.keys(templates.files).filter((k) => err.heatMessage.includes(`<${k}>`) || err.heatMessage.includes(k));
  // "... for facade OS::Neutron::Net missing in provider": the provider template an environment maps that type to.
  const facade = /facade (\S+)/.exec(err.heatMessage)?.[1];
  if (facade) {
    for (const env of templates.environmentFiles) {
      const line = new RegExp(`^\\s*${facade.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*:\\s*["']?([^\\s"'#]+)`, 'm').exec(templates.files[env] ?? '');
      if (line?.[1] && templates.files[line[1]] !== undefined && !named.includes(line[1])) named.push(env, line[1]);
    }
  }
  const files = [templates.templatePath, ...named.map((k) => templates.sources[k] ?? k)];
  return new VnfmError(`Heat rejected the template ${files.join(' / ')}: ${err.heatMessage}`, {
    hint: `fix ${named.length ? files.at(-1) : templates.templatePath}; nothing was created`,
    cause: err,
  });
}

/** What a stack is made of: the templates (the top one as `template` when given: the package's with its groups' sizes) and the nfv parameter. */
export function contentOf(templates: HeatTemplates, nfv: NfvParameter, template: StackContent['template'] = templates.template): StackContent {
  return { template, files: templates.files, environmentFiles: templates.environmentFiles, parameters: { nfv } };
}

/** Servers named after a VDU, at any depth, oldest first. */
export function servers(resources: HeatResource[], vduIds: Set<string>): HeatResource[] {
  return resources
    .filter((r) => r.type === SERVER_TYPE && vduIds.has(r.name))
    .sort((a, b) => (a.creationTime ?? '').localeCompare(b.creationTime ?? '') || a.physicalId.localeCompare(b.physicalId));
}

/** The member of a scaling group that holds a server: the resource whose nested stack the server is in. */
export function memberOf(resources: HeatResource[], server: HeatResource): HeatResource | undefined {
  return resources.find((r) => r.nestedStack?.id === server.stack.id);
}

/** The stack actions of one Heat session, for the driver's operations. */
export class HeatStacks {
  constructor(
    private readonly heat: HeatSession,
    private readonly depth: number,
    private readonly sleep: Sleep,
  ) {}

  async findRef(ctx: DriverContext, instanceId: string): Promise<HeatStack | undefined> {
    const stack = await this.heat.findStack(stackNameOf(instanceId), ctx.signal);
    return stack && stack.status !== 'DELETE_COMPLETE' ? stack : undefined;
  }

  async requireRef(ctx: DriverContext, instanceId: string): Promise<HeatStack> {
    const stack = await this.findRef(ctx, instanceId);
    if (!stack) {
      throw new NotFoundError(`the Heat stack ${stackNameOf(instanceId)} of vnf instance ${instanceId} does not exist`, {
        hint: 'it was deleted outside vnfm: terminate the instance (a missing stack counts as deleted), then instantiate it again',
      });
    }
    return stack;
  }

  /**
   * Waits for the end of `action` and throws Heat's reason and the failed
   * resources when it failed. `resend` sends the request again (same content)
   * when a restarted Heat engine dropped the work (StackStalledError): a
   * convergence Heat takes an IN_PROGRESS stack over on a new update or
   * delete, and a legacy one, whose restarted engine marks the stack FAILED,
   * accepts the update of a FAILED stack.
   */
  async settle(
    ctx: DriverContext,
    ref: StackRef,
    action: 'CREATE' | 'UPDATE' | 'DELETE',
    since: string | undefined,
    resend?: { action: 'UPDATE' | 'DELETE'; send(): Promise<void> },
  ): Promise<HeatStack | undefined> {
    let waitFor = action;
    let after = since;
    for (let takeovers = 0; ; takeovers++) {
      let stack: HeatStack | undefined;
      try {
        stack = await this.heat.waitForStack(ref, { action: waitFor, ...(after ? { since: after } : {}), onEvent: (e) => reportEvent(ctx, ref, e) }, ctx.signal);
      } catch (err) {
        if (!(err instanceof StackStalledError) || !resend || takeovers >= MAX_TAKEOVERS) throw err;
        ctx.report({
          resource: stackResource(ref.name),
          message: `Heat restarted and left the stack ${err.heatStack.status} with no progress: sending the ${resend.action === 'DELETE' ? 'delete' : 'update'} again to take the work over`,
        });
        after = await this.heat.lastEventId(ref, ctx.signal);
        await resend.send();
        waitFor = resend.action;
        continue;
      }
      if (stack && stack.status.endsWith('_FAILED')) throw await this.stackFailure(stack);
      return stack;
    }
  }

  /**
   * Sends a request on a stack an earlier attempt left IN_PROGRESS. A
   * convergence Heat accepts it and supersedes the old work (which may belong
   * to an engine that is gone); a legacy Heat refuses it (409) while its
   * engine still works, and then the action is waited for first.
   */
  async sendOver(ctx: DriverContext, stack: HeatStack, send: () => Promise<void>): Promise<void> {
    try {
      await send();
    } catch (err) {
      if (!(err instanceof HeatError && err.status === 409 && stack.status.endsWith('_IN_PROGRESS'))) throw err;
      ctx.report({ resource: stackResource(stack.name), message: `waiting for the ${stack.status} left by an earlier attempt` });
      const action = stack.status.split('_')[0] as 'CREATE' | 'UPDATE' | 'DELETE';
      await this.heat.waitForStack(stack, { action }, ctx.signal);
      await send();
    }
  }

  async stackFailure(stack: HeatStack): Promise<VnfmError> {
    let failed: HeatResource[] = [];
    try {
      failed = (await this.heat.listResources(stack, this.depth)).filter((r) => r.status.endsWith('_FAILED'));
    } catch {
      // The reason alone still explains the failure.
    }
    // A group or provider template fails because a resource inside it did: name the innermost ones.
    const leaves = failed.filter((r) => !failed.some((o) => r.nestedStack && o.stack.id === r.nestedStack.id));
    const list = leaves.map((r) => `${r.name} (${r.type}${r.stack.name !== stack.name ? ` in ${r.stack.name}` : ''})${r.statusReason ? `: ${r.statusReason}` : ''}`);
    const reason = stack.statusReason || 'no reason given';
    return new VnfmError(`Heat stack ${stack.name} ended ${stack.status}: ${reason}${list.length ? `; failed: ${list.join('; ')}` : ''}`, {
      hint: failedStackHint([reason, ...leaves.map((r) => r.statusReason)].join('\n')),
    });
  }

  async create(ctx: DriverContext, instanceId: string, templates: HeatTemplates, nfv: NfvParameter, template?: StackContent['template']): Promise<ResourceRef[]> {
    const name = stackNameOf(instanceId);
    const resource = stackResource(name);
    let existing = await this.findRef(ctx, instanceId);
    if (existing?.status === 'DELETE_IN_PROGRESS') {
      await this.removeStack(ctx, existing);
      existing = undefined;
    }
    if (existing) {
      // A failed or interrupted attempt left the stack: bring it to what is asked instead of creating a second one.
      const current = existing;
      step(ctx, { action: 'update', resource, state: 'intended', detail: `stack exists (${current.status}): updated` });
      const since = await this.heat.lastEventId(current, ctx.signal);
      const send = async () => {
        try {
          await this.heat.updateStack(current, contentOf(templates, nfv, template), ctx.signal);
        } catch (err) {
          throw rejected(err, templates);
        }
      };
      await this.sendOver(ctx, current, send);
      ctx.report({ resource, message: current.status.endsWith('_IN_PROGRESS') ? `updating (taking over the ${current.status} of an earlier attempt)` : 'updating' });
      await this.settle(ctx, current, 'UPDATE', since, { action: 'UPDATE', send });
      step(ctx, { action: 'update', resource, state: 'done', detail: current.id });
      ctx.report({ resource, message: 'UPDATE_COMPLETE', done: true });
      return [resource];
    }
    step(ctx, { action: 'create', resource, state: 'intended' });
    let ref: StackRef;
    try {
      ref = await this.heat.createStack(name, contentOf(templates, nfv, template), ctx.signal);
    } catch (err) {
      throw rejected(err, templates);
    }
    ctx.report({ resource, message: `creating (stack id ${ref.id})` });
    const created = ref;
    const ended = await this.settle(ctx, ref, 'CREATE', undefined, {
      action: 'UPDATE',
      send: async () => {
        try {
          await this.heat.updateStack(created, contentOf(templates, nfv, template), ctx.signal);
        } catch (err) {
          throw rejected(err, templates);
        }
      },
    });
    step(ctx, { action: 'create', resource, state: 'done', detail: ref.id });
    ctx.report({ resource, message: ended?.status ?? 'CREATE_COMPLETE', done: true });
    return [resource];
  }

  async update(ctx: DriverContext, stack: HeatStack, content: Partial<StackContent>, patch: boolean, detail: string, templates?: HeatTemplates): Promise<void> {
    const resource = stackResource(stack.name);
    step(ctx, { action: 'update', resource, state: 'intended', detail });
    const since = await this.heat.lastEventId(stack, ctx.signal);
    const send = async () => {
      try {
        if (patch) await this.heat.patchStack(stack, content, ctx.signal);
        else await this.heat.updateStack(stack, content as StackContent, ctx.signal);
      } catch (err) {
        throw templates ? rejected(err, templates) : err;
      }
    };
    await this.sendOver(ctx, stack, send);
    ctx.report({ resource, message: `updating: ${detail}` });
    await this.settle(ctx, stack, 'UPDATE', since, { action: 'UPDATE', send });
    step(ctx, { action: 'update', resource, state: 'done', detail });
    ctx.report({ resource, message: 'UPDATE_COMPLETE', done: true });
  }

  async remove(ctx: DriverContext, instanceId: string): Promise<void> {
    const name = stackNameOf(instanceId);
    const resource = stackResource(name);
    step(ctx, { action: 'delete', resource, state: 'intended' });
    const stack = await this.findRef(ctx, instanceId);
    if (stack) await this.removeStack(ctx, stack);
    step(ctx, { action: 'delete', resource, state: 'done' });
    ctx.report({ resource, message: stack ? 'deleted' : 'already gone', done: true });
  }

  /**
   * Deletes the stack and waits until its name is free. A delete left
   * DELETE_IN_PROGRESS by an earlier attempt is sent again: a convergence
   * Heat takes it over (its engine may be gone), a legacy one answers 409
   * and the running delete is waited for.
   */
  async removeStack(ctx: DriverContext, stack: HeatStack): Promise<void> {
    const since = await this.heat.lastEventId(stack, ctx.signal);
    const send = () => this.heat.deleteStack(stack, ctx.signal);
    try {
      await send();
    } catch (err) {
      if (!(err instanceof HeatError && err.status === 409)) throw err;
    }
    ctx.report({ resource: stackResource(stack.name), message: 'deleting' });
    await this.settle(ctx, stack, 'DELETE', since, { action: 'DELETE', send });
    await this.nameReleased(ctx, stack.name);
  }

  /**
   * Heat records DELETE_COMPLETE a moment before it lets the stack's name go;
   * a stack created under that name in between is refused as existing.
   */
  async nameReleased(ctx: DriverContext, name: string): Promise<void> {
    for (let pause = 50; ; pause = Math.min(pause * 2, 1000)) {
      const left = await this.heat.findStack(name, ctx.signal);
      if (!left || left.status !== 'DELETE_COMPLETE') {
        if (!left) return;
        throw new VnfmError(`Heat stack ${name} is ${left.status} after its deletion completed`, { hint: 'another client works on the stack; retry once it is done' });
      }
      await this.sleep(pause, ctx.signal);
    }
  }
}
