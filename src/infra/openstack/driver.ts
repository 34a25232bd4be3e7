/**
 * The OpenStack infra-driver: each operation is a Heat stack create, update
 * or delete followed by a wait on the stack's events (heat.ts).
 */
import { NotFoundError, VnfmError } from '../../errors.js';
import type { DriverContext, JournalStep, ResourceRef, Vnfc } from '../driver.js';
import {
  stackNameOf,
  type HeatTemplates,
  type NfvParameter,
  type OpenStackInfraDriver,
  type OpenStackVnfcQuery,
} from './driver-contract.js';
import { createHeatSession, HeatError, StackStalledError, type HeatEvent, type HeatResource, type HeatSession, type HeatSessionOptions, type HeatStack, type StackContent, type StackRef } from './heat.js';
import type { KeystoneCredentials } from './keystone.js';
import { heatTree } from './describe.js';

/** Nested stacks vnf-describe reads: a scaling group, its members' provider templates, and what those nest. */
const DESCRIBE_DEPTH = 5;
import { sleep as pauseFor } from '../../clock.js';

export interface OpenStackDriverOptions extends HeatSessionOptions {
  /** How deep `GET .../resources?nested_depth=` looks for servers (a group of provider templates is 2 deep). */
  nestedDepth?: number;
  /** Replaces the Heat session (tests). */
  session?: HeatSession;
}

const SERVER_TYPE = 'OS::Nova::Server';
/** How often one wait re-sends its request after Heat dropped the work. */
const MAX_TAKEOVERS = 2;
const FLOATING_IP_TYPES = new Set(['OS::Neutron::FloatingIP', 'OS::Neutron::FloatingIPAssociation']);

const stackResource = (name: string): ResourceRef => ({ apiVersion: 'orchestration/v1', kind: 'Stack', name });

export function createOpenStackDriver(creds: KeystoneCredentials, opts: OpenStackDriverOptions = {}): OpenStackInfraDriver & { close(): void } {
  const heat = opts.session ?? createHeatSession(creds, opts);
  const depth = opts.nestedDepth ?? 4;

  function step(ctx: DriverContext, s: JournalStep): void {
    ctx.journal.record(s);
  }

  async function findRef(ctx: DriverContext, instanceId: string): Promise<HeatStack | undefined> {
    const stack = await heat.findStack(stackNameOf(instanceId), ctx.signal);
    return stack && stack.status !== 'DELETE_COMPLETE' ? stack : undefined;
  }

  async function requireRef(ctx: DriverContext, instanceId: string): Promise<HeatStack> {
    const stack = await findRef(ctx, instanceId);
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
  async function settle(
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
        stack = await heat.waitForStack(ref, { action: waitFor, ...(after ? { since: after } : {}), onEvent: (e) => reportEvent(ctx, ref, e) }, ctx.signal);
      } catch (err) {
        if (!(err instanceof StackStalledError) || !resend || takeovers >= MAX_TAKEOVERS) throw err;
        ctx.report({ resource: stackResource(ref.name), message: `Heat restarted and left the stack ${err.heatStack.status} with no progress: sending the ${resend.action === 'DELETE' ? 'delete' : 'update'} again to take the work over` });
        after = await heat.lastEventId(ref, ctx.signal);
        await resend.send();
        waitFor = resend.action;
        continue;
      }
      if (stack && stack.status.endsWith('_FAILED')) throw await stackFailure(stack);
      return stack;
    }
  }

  function reportEvent(ctx: DriverContext, ref: StackRef, e: HeatEvent): void {
    ctx.report({
      resource: { apiVersion: 'orchestration/v1', kind: 'Resource', name: e.resourceName, namespace: ref.name },
      message: `${e.status}${e.statusReason && !/state changed|completed successfully/i.test(e.statusReason) ? `: ${e.statusReason}` : ''}`,
      done: e.status.endsWith('_COMPLETE'),
    });
  }

  /**
   * Sends a request on a stack an earlier attempt left IN_PROGRESS. A
   * convergence Heat accepts it and supersedes the old work (which may belong
   * to an engine that is gone); a legacy Heat refuses it (409) while its
   * engine still works, and then the action is waited for first.
   */
  async function sendOver(ctx: DriverContext, stack: HeatStack, send: () => Promise<void>): Promise<void> {
    try {
      await send();
    } catch (err) {
      if (!(err instanceof HeatError && err.status === 409 && stack.status.endsWith('_IN_PROGRESS'))) throw err;
      ctx.report({ resource: stackResource(stack.name), message: `waiting for the ${stack.status} left by an earlier attempt` });
      const action = stack.status.split('_')[0] as 'CREATE' | 'UPDATE' | 'DELETE';
      await heat.waitForStack(stack, { action }, ctx.signal);
      await send();
    }
  }

  async function stackFailure(stack: HeatStack): Promise<VnfmError> {
    let failed: HeatResource[] = [];
    try {
      failed = (await heat.listResources(stack, depth)).filter((r) => r.status.endsWith('_FAILED'));
    } catch {
      // The reason alone still explains the failure.
    }
    // A group or provider template fails because a resource inside it did: name the innermost ones.
    const leaves = failed.filter((r) => !failed.some((o) => r.nestedStack && o.stack.id === r.nestedStack.id));
    const list = leaves.map((r) => `${r.name} (${r.type}${r.stack.name !== stack.name ? ` in ${r.stack.name}` : ''})${r.statusReason ? `: ${r.statusReason}` : ''}`);
    return new VnfmError(
      `Heat stack ${stack.name} ended ${stack.status}: ${stack.statusReason || 'no reason given'}${list.length ? `; failed: ${list.join('; ')}` : ''}`,
      { hint: 'fix what Heat names (the template, the environment, or the cloud: quotas, images, flavours, networks)' },
    );
  }

  function rejected(err: unknown, templates: HeatTemplates): unknown {
    if (!(err instanceof HeatError) || err.status !== 400) return err;
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

  function contentOf(templates: HeatTemplates, nfv: NfvParameter): StackContent {
    return { template: templates.template, files: templates.files, environmentFiles: templates.environmentFiles, parameters: { nfv } };
  }

  async function create(ctx: DriverContext, instanceId: string, templates: HeatTemplates, nfv: NfvParameter): Promise<ResourceRef[]> {
    const name = stackNameOf(instanceId);
    const resource = stackResource(name);
    let existing = await findRef(ctx, instanceId);
    if (existing?.status === 'DELETE_IN_PROGRESS') {
      await removeStack(ctx, existing);
      existing = undefined;
    }
    if (existing) {
      // A failed or interrupted attempt left the stack: bring it to what is asked instead of creating a second one.
      const current = existing;
      step(ctx, { action: 'update', resource, state: 'intended', detail: `stack exists (${current.status}): updated` });
      const since = await heat.lastEventId(current, ctx.signal);
      const send = async () => {
        try {
          await heat.updateStack(current, contentOf(templates, nfv), ctx.signal);
        } catch (err) {
          throw rejected(err, templates);
        }
      };
      await sendOver(ctx, current, send);
      ctx.report({ resource, message: current.status.endsWith('_IN_PROGRESS') ? `updating (taking over the ${current.status} of an earlier attempt)` : 'updating' });
      await settle(ctx, current, 'UPDATE', since, { action: 'UPDATE', send });
      step(ctx, { action: 'update', resource, state: 'done', detail: current.id });
      ctx.report({ resource, message: 'UPDATE_COMPLETE', done: true });
      return [resource];
    }
    step(ctx, { action: 'create', resource, state: 'intended' });
    let ref: StackRef;
    try {
      ref = await heat.createStack(name, contentOf(templates, nfv), ctx.signal);
    } catch (err) {
      throw rejected(err, templates);
    }
    ctx.report({ resource, message: `creating (stack id ${ref.id})` });
    const created = ref;
    const ended = await settle(ctx, ref, 'CREATE', undefined, {
      action: 'UPDATE',
      send: async () => {
        try {
          await heat.updateStack(created, contentOf(templates, nfv), ctx.signal);
        } catch (err) {
          throw rejected(err, templates);
        }
      },
    });
    step(ctx, { action: 'create', resource, state: 'done', detail: ref.id });
    ctx.report({ resource, message: ended?.status ?? 'CREATE_COMPLETE', done: true });
    return [resource];
  }

  async function update(ctx: DriverContext, stack: HeatStack, content: Partial<StackContent>, patch: boolean, detail: string, templates?: HeatTemplates): Promise<void> {
    const resource = stackResource(stack.name);
    step(ctx, { action: 'update', resource, state: 'intended', detail });
    const since = await heat.lastEventId(stack, ctx.signal);
    const send = async () => {
      try {
        if (patch) await heat.patchStack(stack, content, ctx.signal);
        else await heat.updateStack(stack, content as StackContent, ctx.signal);
      } catch (err) {
        throw templates ? rejected(err, templates) : err;
      }
    };
    await sendOver(ctx, stack, send);
    ctx.report({ resource, message: `updating: ${detail}` });
    await settle(ctx, stack, 'UPDATE', since, { action: 'UPDATE', send });
    step(ctx, { action: 'update', resource, state: 'done', detail });
    ctx.report({ resource, message: 'UPDATE_COMPLETE', done: true });
  }

  async function remove(ctx: DriverContext, instanceId: string): Promise<void> {
    const name = stackNameOf(instanceId);
    const resource = stackResource(name);
    step(ctx, { action: 'delete', resource, state: 'intended' });
    const stack = await findRef(ctx, instanceId);
    if (stack) await removeStack(ctx, stack);
    step(ctx, { action: 'delete', resource, state: 'done' });
    ctx.report({ resource, message: stack ? 'deleted' : 'already gone', done: true });
  }

  /**
   * Deletes the stack and waits until its name is free. A delete left
   * DELETE_IN_PROGRESS by an earlier attempt is sent again: a convergence
   * Heat takes it over (its engine may be gone), a legacy one answers 409
   * and the running delete is waited for.
   */
  async function removeStack(ctx: DriverContext, stack: HeatStack): Promise<void> {
    const since = await heat.lastEventId(stack, ctx.signal);
    const send = () => heat.deleteStack(stack, ctx.signal);
    try {
      await send();
    } catch (err) {
      if (!(err instanceof HeatError && err.status === 409)) throw err;
    }
    ctx.report({ resource: stackResource(stack.name), message: 'deleting' });
    await settle(ctx, stack, 'DELETE', since, { action: 'DELETE', send });
    await nameReleased(ctx, stack.name);
  }

  /**
   * Heat records DELETE_COMPLETE a moment before it lets the stack's name go;
   * a stack created under that name in between is refused as existing.
   */
  async function nameReleased(ctx: DriverContext, name: string): Promise<void> {
    for (let pause = 50; ; pause = Math.min(pause * 2, 1000)) {
      const left = await heat.findStack(name, ctx.signal);
      if (!left || left.status !== 'DELETE_COMPLETE') {
        if (!left) return;
        throw new VnfmError(`Heat stack ${name} is ${left.status} after its deletion completed`, { hint: 'another client works on the stack; retry once it is done' });
      }
      await pauseFor(pause, ctx.signal);
    }
  }

  /** Servers named after a VDU, at any depth, oldest first. */
  function servers(resources: HeatResource[], vduIds: Set<string>): HeatResource[] {
    return resources
      .filter((r) => r.type === SERVER_TYPE && vduIds.has(r.name))
      .sort((a, b) => (a.creationTime ?? '').localeCompare(b.creationTime ?? '') || a.physicalId.localeCompare(b.physicalId));
  }

  /** The member of a scaling group that holds a server: the resource whose nested stack the server is in. */
  function memberOf(resources: HeatResource[], server: HeatResource): HeatResource | undefined {
    return resources.find((r) => r.nestedStack?.id === server.stack.id);
  }

  return {
    deploy: (ctx, input) => create(ctx, input.instanceId, input.templates, input.nfv),

    async scale(ctx, input) {
      const stack = await requireRef(ctx, input.instanceId);
      const doomed = Object.entries(input.remove).filter(([, n]) => n > 0);
      if (doomed.length) {
        const all = await heat.listResources(stack, depth, ctx.signal);
        for (const [vduId, count] of doomed) {
          const members = servers(all, new Set([vduId]))
            .map((s) => memberOf(all, s))
            .filter((m): m is HeatResource => m !== undefined && m.stack.id !== stack.id)
            .sort((a, b) => (b.creationTime ?? '').localeCompare(a.creationTime ?? '') || b.name.localeCompare(a.name));
          for (const member of members.slice(0, count)) {
            const ref: ResourceRef = { apiVersion: 'orchestration/v1', kind: member.type, name: member.name, namespace: member.stack.name };
            step(ctx, { action: 'update', resource: ref, state: 'intended', detail: 'mark unhealthy before scale-in' });
            await heat.markUnhealthy(member.stack, member.name, `scale-in of ${vduId} by vnfm`, ctx.signal);
            step(ctx, { action: 'update', resource: ref, state: 'done', detail: 'marked unhealthy' });
            ctx.report({ resource: ref, message: 'marked unhealthy: removed first' });
          }
        }
      }
      const capacities = Object.entries(input.nfv.VDU)
        .filter(([, v]) => v.desired_capacity !== undefined)
        .map(([vduId, v]) => `${vduId}=${v.desired_capacity}`)
        .join(', ');
      const env = input.environments;
      await update(ctx, stack, { parameters: { nfv: input.nfv }, ...(env ? { files: env.files, environmentFiles: env.environmentFiles } : {}) }, true, `desired_capacity ${capacities}`);
    },

    async heal(ctx, input) {
      if (input.all) {
        await remove(ctx, input.instanceId);
        await create(ctx, input.instanceId, input.templates, input.nfv);
        return;
      }
      const stack = await requireRef(ctx, input.instanceId);
      const reason = input.cause ? `heal by vnfm: ${input.cause}` : 'heal by vnfm';
      for (const vnfc of input.vnfcs) {
        const meta = (vnfc.metadata ?? {}) as { stack?: StackRef; resourceName?: string };
        if (!meta.stack || !meta.resourceName) {
          throw new VnfmError(`VNFC ${vnfc.id} has no Heat resource recorded`, { hint: 'heal with additionalParams.all: true to create the whole stack again' });
        }
        const ref: ResourceRef = { apiVersion: 'orchestration/v1', kind: vnfc.vimLevelResourceType, name: meta.resourceName, namespace: meta.stack.name };
        step(ctx, { action: 'update', resource: ref, state: 'intended', detail: `mark unhealthy (${vnfc.id})` });
        try {
          await heat.markUnhealthy(meta.stack, meta.resourceName, reason, ctx.signal);
        } catch (err) {
          // A retry after the server was already replaced finds its old stack gone: nothing left to mark.
          if (!(err instanceof HeatError && err.status === 404)) throw err;
        }
        step(ctx, { action: 'update', resource: ref, state: 'done', detail: 'marked unhealthy' });
        ctx.report({ resource: ref, message: 'marked unhealthy: Heat rebuilds it' });
      }
      await update(ctx, stack, { parameters: { nfv: input.nfv } }, true, `heal of ${input.vnfcs.length} VNFC(s)`);
    },

    async remove(ctx, input) {
      const grace = input.gracePeriodSeconds ?? 0;
      if (grace > 0 && (await findRef(ctx, input.instanceId))) {
        const resource = stackResource(stackNameOf(input.instanceId));
        step(ctx, { action: 'wait', resource, state: 'intended', detail: `graceful termination: ${grace} s` });
        ctx.report({ resource, message: `graceful termination: deleting in ${grace} s` });
        await pauseFor(grace * 1000, ctx.signal);
        step(ctx, { action: 'wait', resource, state: 'done' });
      }
      await remove(ctx, input.instanceId);
    },

    async changePackage(ctx, input) {
      const stack = await findRef(ctx, input.instanceId);
      if (!stack) return create(ctx, input.instanceId, input.templates, input.nfv);
      await update(ctx, stack, contentOf(input.templates, input.nfv), false, `templates of ${input.templates.templatePath}`, input.templates);
      return [stackResource(stack.name)];
    },

    async describe(instanceId, signal) {
      const stack = await heat.findStack(stackNameOf(instanceId), signal);
      if (!stack) return undefined;
      return { stack: { name: stack.name, id: stack.id, status: stack.status, statusReason: stack.statusReason }, resources: heatTree(await heat.listResources(stack, DESCRIBE_DEPTH, signal), stack.id) };
    },
    async listVnfcs(ctx, query) {
      return listServers(heat, ctx, query, depth, await requireRef(ctx, query.instanceId));
    },

    close() {
      // Every request uses its own connection: nothing stays open.
    },
  };
}

async function listServers(heat: HeatSession, ctx: DriverContext, query: OpenStackVnfcQuery, depth: number, stack: HeatStack): Promise<Vnfc[]> {
  const all = await heat.listResources(stack, depth, ctx.signal);
  const vduIds = new Set(Object.keys(query.vdus));
  const found = all
    .filter((r) => r.type === SERVER_TYPE && vduIds.has(r.name) && !r.status.startsWith('DELETE'))
    .sort((a, b) => a.name.localeCompare(b.name) || (a.creationTime ?? '').localeCompare(b.creationTime ?? '') || a.physicalId.localeCompare(b.physicalId));
  const vnfcs: Vnfc[] = [];
  for (const server of found) {
    const sameStack = all.filter((r) => r.stack.id === server.stack.id);
    const addresses: Record<string, string[]> = {};
    const floating = new Map<string, string>();
    for (const fip of sameStack.filter((r) => FLOATING_IP_TYPES.has(r.type))) {
      const shown = await heat.showResource(fip.stack, fip.name, ctx.signal);
      const portId = shown.attributes?.['port_id'];
      const ip = shown.attributes?.['floating_ip_address'];
      if (typeof portId === 'string' && typeof ip === 'string') floating.set(portId, ip);
    }
    for (const cp of query.vdus[server.name] ?? []) {
      const port = sameStack.find((r) => r.name === cp);
      if (!port) continue;
      const shown = await heat.showResource(port.stack, port.name, ctx.signal);
      const fixed = fixedIps(shown.attributes?.['fixed_ips']);
      const fip = floating.get(port.physicalId);
      addresses[cp] = fip ? [fip, ...fixed.filter((ip) => ip !== fip)] : fixed;
    }
    vnfcs.push({
      id: `${server.name}-${server.physicalId}`,
      vduId: server.name,
      resourceId: server.physicalId,
      vimLevelResourceType: server.type,
      state: 'STARTED',
      metadata: {
        stack: server.stack,
        resourceName: server.name,
        ...(server.parentResource ? { parentResource: server.parentResource } : {}),
        addresses,
        ...(server.creationTime ? { creationTime: server.creationTime } : {}),
      },
    });
  }
  return vnfcs;
}

/** Neutron's `fixed_ips`: `[{ip_address, subnet_id}]`; a provider template may hand it over as JSON text. */
function fixedIps(raw: unknown): string[] {
  let value = raw;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return value ? [value as string] : [];
    }
  }
  if (!Array.isArray(value)) return [];
  return value.flatMap((x: unknown) =>
    typeof x === 'string' ? [x] : x && typeof x === 'object' && typeof (x as { ip_address?: unknown }).ip_address === 'string' ? [(x as { ip_address: string }).ip_address] : [],
  );
}

