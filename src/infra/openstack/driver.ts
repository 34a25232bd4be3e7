/**
 * The OpenStack infra-driver: each operation is a Heat stack create, update
 * or delete followed by a wait on the stack's events (heat.ts).
 */
import { sleep as realSleep } from '../../clock.js';
import { VnfmError } from '../../errors.js';
import type { DriverContext, ResourceRef, Vnfc } from '../driver.js';
import { stackNameOf, type OpenStackInfraDriver, type OpenStackVnfcQuery } from './driver-contract.js';
import { createHeatSession, HeatError, type HeatResource, type HeatSession, type HeatSessionOptions, type HeatStack, type StackRef } from './heat.js';
import type { KeystoneCredentials } from './keystone.js';
import { heatTree } from './describe.js';
import { createGlanceSession } from './glance.js';
import { GroupSizes } from './group-sizes.js';
import { createImageService } from './images.js';
import { createNovaSession } from './nova.js';
import { KeystoneTokens } from './service-connection.js';
import { contentOf, HeatStacks, memberOf, SERVER_TYPE, servers, stackResource, step } from './stack-actions.js';

/** Nested stacks vnf-describe reads: a scaling group, its members' provider templates, and what those nest. */
const DESCRIBE_DEPTH = 5;

export interface OpenStackDriverOptions extends HeatSessionOptions {
  /** How deep `GET .../resources?nested_depth=` looks for servers (a group of provider templates is 2 deep). */
  nestedDepth?: number;
  /** Replaces the Heat session (tests). */
  session?: HeatSession;
  /** How long a scaling policy's group may show no scaling after a signal before vnfm counts the signal as not acted on (10 s). */
  signalQuietMs?: number;
}

const FLOATING_IP_TYPES = new Set(['OS::Neutron::FloatingIP', 'OS::Neutron::FloatingIPAssociation']);

export function createOpenStackDriver(creds: KeystoneCredentials, opts: OpenStackDriverOptions = {}): OpenStackInfraDriver & { close(): void } {
  // One token for Heat, Glance and Nova.
  const tokens = new KeystoneTokens(creds, opts, opts.now ?? Date.now);
  const heat = opts.session ?? createHeatSession(creds, { ...opts, tokens });
  const depth = opts.nestedDepth ?? 4;
  const sleep = opts.sleep ?? realSleep;

  const stacks = new HeatStacks(heat, depth, sleep);
  const sizes = new GroupSizes(heat, {
    now: opts.now ?? Date.now,
    sleep,
    poll: opts.pollMs ?? { min: 200, max: 2_000 },
    quietMs: opts.signalQuietMs ?? 10_000,
  });

  return {
    images: createImageService(createGlanceSession(creds, { ...opts, tokens }), { sleep, poll: opts.pollMs ?? { min: 200, max: 2_000 } }),

    async deploy(ctx, input) {
      const made = await stacks.create(ctx, input.instanceId, input.templates, input.nfv, sizes.templateFor(input.templates, input.groups));
      await sizes.check(ctx, await stacks.requireRef(ctx, input.instanceId), input.groups, 'the instantiation');
      return made;
    },

    async scale(ctx, input) {
      const stack = await stacks.requireRef(ctx, input.instanceId);
      const env = input.environments;
      if (input.signal) {
        if (env) {
          // The signalled group keeps the size it has; the signals resize it.
          const signalled = input.signal.group;
          const kept = await sizes.keptTemplate(
            ctx,
            stack,
            input.groups?.filter((g) => g.group !== signalled),
          );
          const content = { files: env.files, environmentFiles: env.environmentFiles, ...(kept ? { template: kept } : {}) };
          await stacks.update(ctx, stack, content, true, 'Heat environments');
        }
        await sizes.signalSteps(ctx, stack, input.signal);
        await sizes.check(ctx, stack, input.groups, `the scale through ${input.signal.policy}`);
        return;
      }
      // Before any member is marked unhealthy: a marked member no longer counts towards its group's size.
      const kept = await sizes.keptTemplate(ctx, stack, input.groups);
      await markNewestUnhealthy(heat, ctx, stack, input.remove, depth);
      const capacities = Object.entries(input.nfv.VDU)
        .filter(([, v]) => v.desired_capacity !== undefined)
        .map(([vduId, v]) => `${vduId}=${v.desired_capacity}`)
        .join(', ');
      await stacks.update(
        ctx,
        stack,
        { parameters: { nfv: input.nfv }, ...(kept ? { template: kept } : {}), ...(env ? { files: env.files, environmentFiles: env.environmentFiles } : {}) },
        true,
        `desired_capacity ${capacities}`,
      );
      await sizes.check(ctx, stack, input.groups, 'the scale');
    },

    async heal(ctx, input) {
      if (input.all) {
        await stacks.remove(ctx, input.instanceId);
        await stacks.create(ctx, input.instanceId, input.templates, input.nfv, sizes.templateFor(input.templates, input.groups));
        await sizes.check(ctx, await stacks.requireRef(ctx, input.instanceId), input.groups, 'the heal');
        return;
      }
      const stack = await stacks.requireRef(ctx, input.instanceId);
      // Before the servers are marked unhealthy: a marked member no longer counts towards its group's size.
      const kept = await sizes.keptTemplate(ctx, stack, input.groups);
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
      await stacks.update(ctx, stack, { parameters: { nfv: input.nfv }, ...(kept ? { template: kept } : {}) }, true, `heal of ${input.vnfcs.length} VNFC(s)`);
      await sizes.check(ctx, stack, input.groups, 'the heal');
    },

    async remove(ctx, input) {
      const grace = input.gracePeriodSeconds ?? 0;
      if (grace > 0 && (await stacks.findRef(ctx, input.instanceId))) {
        const resource = stackResource(stackNameOf(input.instanceId));
        step(ctx, { action: 'wait', resource, state: 'intended', detail: `graceful termination: ${grace} s` });
        ctx.report({ resource, message: `graceful termination: deleting in ${grace} s` });
        await sleep(grace * 1000, ctx.signal);
        step(ctx, { action: 'wait', resource, state: 'done' });
      }
      await stacks.remove(ctx, input.instanceId);
    },

    async changePackage(ctx, input) {
      const stack = await stacks.findRef(ctx, input.instanceId);
      const template = sizes.templateFor(input.templates, input.groups);
      let made: ResourceRef[];
      if (!stack) made = await stacks.create(ctx, input.instanceId, input.templates, input.nfv, template);
      else {
        await stacks.update(ctx, stack, contentOf(input.templates, input.nfv, template), false, `templates of ${input.templates.templatePath}`, input.templates);
        made = [stackResource(stack.name)];
      }
      await sizes.check(ctx, stack ?? (await stacks.requireRef(ctx, input.instanceId)), input.groups, 'the change of package');
      return made;
    },

    async describe(instanceId, signal) {
      const stack = await heat.findStack(stackNameOf(instanceId), signal);
      if (!stack) return undefined;
      return {
        stack: { name: stack.name, id: stack.id, status: stack.status, statusReason: stack.statusReason },
        resources: heatTree(await heat.listResources(stack, DESCRIBE_DEPTH, signal), stack.id),
      };
    },
    findStack: (nameOrId, signal) => foundStack(heat, nameOrId, signal),
    consoleLog: createNovaSession(creds, { ...opts, tokens }).consoleOutput,
    async listVnfcs(ctx, query) {
      return listServers(heat, ctx, query, depth, await stacks.requireRef(ctx, query.instanceId));
    },

    close() {
      // Every request uses its own connection: nothing stays open.
    },
  };
}

/** Scale-in: the newest members holding each VDU's servers are marked unhealthy, so that Heat removes those and not the oldest. */
/** A stack by name or id, as adoption reads it (driver-contract.ts: findStack). */
async function foundStack(heat: HeatSession, nameOrId: string, signal: AbortSignal | undefined) {
  const stack = await heat.findStack(nameOrId, signal);
  return stack && { name: stack.name, id: stack.id, status: stack.status, statusReason: stack.statusReason, parameters: stack.parameters };
}

async function markNewestUnhealthy(heat: HeatSession, ctx: DriverContext, stack: HeatStack, remove: Record<string, number>, depth: number): Promise<void> {
  const doomed = Object.entries(remove).filter(([, n]) => n > 0);
  if (doomed.length === 0) return;
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
