/**
 * An OpenStack instance as its Heat stack is now: the resource tree
 * vnf-describe shows (with the instance's own drift: a scaling group whose
 * size differs from the replicas recorded, server VNFCs gone or not
 * recorded) and the servers and replicas vnf-sync records. Reads only.
 */
import { UsageError, VnfmError } from '../../errors.js';
import type { DriverContext } from '../../infra/driver.js';
import type { OpenStackInfraDriver } from '../../infra/openstack/driver-contract.js';
import { stackNameOf } from '../../infra/openstack/driver-contract.js';
import type { LcmDeps } from '../engine.js';
import type { VimConnection, VnfInstance } from '../../model/lcm.js';
import type { LiveNode, LiveScale, VnfLiveState } from '../../model/live.js';
import { vnfcsOf } from '../../model/vnfcs.js';
import { cpsByVdu } from '../heat-nfv.js';
import { packageOf } from '../package-content.js';
import { flavourOf } from '../requests.js';
import { resolveOpenStackVim } from '../vim-connection.js';

const SERVER = 'OS::Nova::Server';

const flatten = (nodes: readonly LiveNode[]): LiveNode[] => nodes.flatMap((n) => [n, ...flatten(n.children)]);

async function driverFor(deps: LcmDeps, instance: VnfInstance, source: string): Promise<{ vim: VimConnection; driver: OpenStackInfraDriver }> {
  const vim = await resolveOpenStackVim(deps, source, undefined, instance);
  if (!deps.openstackDriver) throw new VnfmError(`VIM "${vim.name}" is an OpenStack VIM, and this vnfm was set up without the OpenStack infra-driver`);
  return { vim, driver: await deps.openstackDriver(vim) };
}

export async function describeOpenStack(deps: LcmDeps, instance: VnfInstance, signal: AbortSignal): Promise<VnfLiveState> {
  const info = instance.instantiatedVnfInfo!;
  const { vim, driver } = await driverFor(deps, instance, 'vnf-describe');
  if (!driver.describe) throw new UsageError("the OpenStack driver in use cannot read a stack's resources", { hint: 'use the driver vnfm ships' });
  const found = await driver.describe(instance.id, signal);
  const base = {
    vnfInstanceId: instance.id,
    ...(instance.vnfInstanceName ? { vnfInstanceName: instance.vnfInstanceName } : {}),
    vimType: 'openstack',
    vim: vim.name,
    ...(vim.id ? { vimId: vim.id } : {}),
  };
  if (!found) return { ...base, stack: stackNameOf(instance.id), objects: [], drift: [`stack ${stackNameOf(instance.id)}: deleted`], ready: false };
  const objects = found.resources;
  const all = flatten(objects);
  // A scaling group (VDU1_scale_group) is its VDU's when the servers it holds are named after one VDU.
  for (const n of objects) {
    const vdus = new Set(
      flatten(n.children)
        .filter((c) => c.kind === SERVER)
        .map((c) => c.name),
    );
    const vduId = vdus.size === 1 ? [...vdus][0]! : n.name;
    const recorded = info.metadata.vduReplicas[vduId];
    if (n.replicas !== undefined && recorded !== undefined && n.replicas !== recorded) n.drift.push(`scaled elsewhere: ${n.replicas}, recorded ${recorded}`);
  }
  const drift = all.flatMap((n) => n.drift.map((d) => `${n.kind}/${n.name}: ${d}`));
  const servers = new Map(all.filter((n) => n.kind === SERVER && n.id).map((n) => [n.id!, n]));
  const recorded = vnfcsOf(info);
  for (const v of recorded) if (!servers.has(v.resourceId)) drift.push(`VNFC ${v.id}: server ${v.resourceId} is gone`);
  const known = new Set(recorded.map((v) => v.resourceId));
  for (const [id, n] of servers) if (!known.has(id)) drift.push(`${SERVER}/${n.name} (${id}): not recorded as a VNFC`);
  const stackDone = found.stack.status.endsWith('_COMPLETE') && !found.stack.status.startsWith('DELETE_');
  if (!stackDone) drift.unshift(`stack ${found.stack.name}: ${found.stack.status}${found.stack.statusReason ? `: ${found.stack.statusReason}` : ''}`);
  return { ...base, stack: found.stack.name, objects, drift, ready: stackDone && all.every((n) => n.exists && n.ready) };
}

export async function liveOpenStackScale(deps: LcmDeps, instance: VnfInstance, signal: AbortSignal): Promise<LiveScale> {
  const info = instance.instantiatedVnfInfo!;
  const { vim, driver } = await driverFor(deps, instance, 'vnf-sync');
  const flavour = flavourOf(instance, (await packageOf(deps, instance.vnfPkgId)).vnfd);
  const ctx: DriverContext = { journal: { record: () => undefined, steps: () => [] }, report: () => undefined, signal };
  const vnfcs = await driver.listVnfcs(ctx, { instanceId: instance.id, vdus: cpsByVdu(flavour) });
  const replicas = Object.fromEntries(Object.keys(info.metadata.vduReplicas).map((vduId) => [vduId, vnfcs.filter((v) => v.vduId === vduId).length]));
  return { vnfcs, replicas, ...(vim.id ? { vimConnectionId: vim.id } : {}) };
}
