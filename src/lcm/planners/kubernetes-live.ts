/**
 * A Kubernetes instance (applied by vnfm, or a Helm release) as it is on
 * the cluster now: the tree vnf-describe shows and the VNFCs and replicas
 * vnf-sync records. Reads only.
 */
import { UsageError } from '../../errors.js';
import type { DriverContext, ResourceRef } from '../../infra/driver.js';
import type { LiveObject } from '../../infra/kubernetes/describe.js';
import type { KubernetesInfraDriver, VduTarget } from '../../infra/kubernetes/driver-contract.js';
import type { LcmDeps } from '../engine.js';
import type { InstantiatedVnfInfo, VimConnection, VnfInstance } from '../../model/lcm.js';
import type { LiveNode, LiveRelease, LiveScale, VnfLiveState } from '../../model/live.js';
import { vnfcsOf } from '../../model/vnfcs.js';
import { instanceVim, kubernetesVims } from '../vim-connection.js';
import { isHelmInstance, vduReleases, withReleaseNames } from './helm-deployment.js';

export interface KubernetesLiveInput {
  vim: VimConnection;
  /** Each VDU's workload. */
  targets: VduTarget[];
  /** Field managers whose writes are the instance's own: vnfm; helm too for a release. */
  ownManagers: string[];
}

const keyOf = (r: { kind: string; name: string; namespace?: string | undefined }): string => `${r.kind}/${r.namespace ?? ''}/${r.name}`;

function toNode(o: LiveObject): LiveNode {
  return {
    kind: o.ref.kind,
    name: o.ref.name,
    ...(o.ref.namespace ? { namespace: o.ref.namespace } : {}),
    applied: o.applied,
    exists: o.exists,
    ready: o.ready,
    reason: o.reason,
    ...(o.replicas !== undefined ? { replicas: o.replicas } : {}),
    drift: [...o.drift],
    events: o.events,
    children: o.children.map(toNode),
  };
}

export function flattenNodes(nodes: readonly LiveNode[]): LiveNode[] {
  return nodes.flatMap((n) => [n, ...flattenNodes(n.children)]);
}

function driverOf(driver: KubernetesInfraDriver): Required<Pick<KubernetesInfraDriver, 'describe'>>['describe'] {
  if (!driver.describe) throw new UsageError('the Kubernetes driver in use cannot read live objects', { hint: 'use the driver vnfm ships' });
  return driver.describe.bind(driver);
}

/** The VDUs' workloads as the recorded VNFCs name them (their owners): what a Helm release's instance knows without its manifest. */
export function recordedTargets(info: InstantiatedVnfInfo): VduTarget[] {
  const byVdu = new Map<string, ResourceRef>();
  for (const v of vnfcsOf(info)) if (v.owner && !byVdu.has(v.vduId)) byVdu.set(v.vduId, v.owner);
  return [...byVdu].map(([vduId, resource]) => ({ vduId, resource }));
}

/**
 * The live tree, with the instance's own drift added: a VDU workload whose
 * replicas differ from those recorded (scaled elsewhere), and VNFCs
 * recorded that are gone or live ones not recorded (vnf-sync records them).
 */
export async function describeKubernetes(deps: LcmDeps, instance: VnfInstance, input: KubernetesLiveInput, signal: AbortSignal): Promise<VnfLiveState> {
  const info = instance.instantiatedVnfInfo!;
  const driver = await deps.kubernetesDriver(input.vim);
  const live = await driverOf(driver)(
    {
      resources: info.resources,
      namespace: info.metadata.namespace,
      ownManagers: input.ownManagers,
      ...(info.metadata.vnfm_adopted ? { adoptedAt: info.metadata.vnfm_adopted.at } : {}),
      ...(info.metadata.vnfm_readiness ? { readiness: info.metadata.vnfm_readiness } : {}),
    },
    signal,
  );
  const objects = live.map(toNode);
  const all = flattenNodes(objects);
  const applied = new Map(all.filter((n) => n.applied).map((n) => [keyOf(n), n]));
  for (const t of input.targets) {
    const node = applied.get(keyOf({ ...t.resource, namespace: t.resource.namespace ?? info.metadata.namespace }));
    const recorded = info.metadata.vduReplicas[t.vduId];
    if (node?.exists && node.replicas !== undefined && recorded !== undefined && node.replicas !== recorded) {
      node.drift.push(`scaled elsewhere: ${node.replicas}, recorded ${recorded}`);
    }
  }
  const drift = all.flatMap((n) => n.drift.map((d) => `${n.kind}/${n.name}: ${d}`));
  drift.push(...vnfcDrift(info, all));
  return {
    vnfInstanceId: instance.id,
    ...(instance.vnfInstanceName ? { vnfInstanceName: instance.vnfInstanceName } : {}),
    vimType: isHelmInstance(info) ? 'helm' : 'kubernetes',
    vim: input.vim.name,
    ...(input.vim.id ? { vimId: input.vim.id } : {}),
    namespace: info.metadata.namespace,
    objects,
    drift,
    ready: all.every((n) => n.exists && n.ready),
  };
}

/** Recorded VNFCs whose pod (or Machine) is gone, and live ones of a VDU workload not recorded. */
function vnfcDrift(info: InstantiatedVnfInfo, all: LiveNode[]): string[] {
  const recorded = vnfcsOf(info);
  const owners = new Set(recorded.flatMap((v) => (v.owner ? [keyOf({ ...v.owner, namespace: v.owner.namespace ?? info.metadata.namespace })] : [])));
  const liveUnits = new Map<string, LiveNode>();
  const collect = (n: LiveNode) => {
    for (const c of n.children) {
      if (c.kind === 'Pod' || c.kind === 'Machine') liveUnits.set(c.name, c);
      collect(c);
    }
  };
  for (const n of all) if (n.applied && owners.has(keyOf(n))) collect(n);
  const out: string[] = [];
  const names = new Set(recorded.map((v) => v.resourceId));
  for (const v of recorded) if (!liveUnits.has(v.resourceId)) out.push(`VNFC ${v.id}: ${v.metadata?.['kind'] === 'Machine' ? 'machine' : 'pod'} ${v.resourceId} is gone`);
  for (const [name, n] of liveUnits) if (!names.has(name)) out.push(`${n.kind}/${name}: not recorded as a VNFC`);
  return out;
}

/** The VNFCs of each VDU now, and each workload's replicas (spec.replicas; the VNFC count for a kind without). */
export async function liveKubernetesScale(deps: LcmDeps, instance: VnfInstance, input: Pick<KubernetesLiveInput, 'vim' | 'targets'>, signal: AbortSignal): Promise<LiveScale> {
  const info = instance.instantiatedVnfInfo!;
  const driver = await deps.kubernetesDriver(input.vim);
  const ctx: DriverContext = { journal: { record: () => undefined, steps: () => [] }, report: () => undefined, signal };
  const vnfcs = await driver.listVnfcs(ctx, input.targets);
  const live = await driverOf(driver)({ resources: input.targets.map((t) => t.resource), namespace: info.metadata.namespace, events: 0 }, signal);
  const workloads = new Map(
    flattenNodes(live.map(toNode))
      .filter((n) => n.applied)
      .map((n) => [keyOf(n), n]),
  );
  const replicas: Record<string, number> = {};
  for (const t of input.targets) {
    const node = workloads.get(keyOf({ ...t.resource, namespace: t.resource.namespace ?? info.metadata.namespace }));
    replicas[t.vduId] = node?.exists && node.replicas !== undefined ? node.replicas : vnfcs.filter((v) => v.vduId === t.vduId).length;
  }
  return { vnfcs, replicas, ...(input.vim.id ? { vimConnectionId: input.vim.id } : {}) };
}

/** A Helm instance: its recorded objects (of every release), the VDUs its VNFCs name, helm's writes its own; its releases as recorded. */
export async function describeRelease(deps: LcmDeps, instance: VnfInstance, signal: AbortSignal): Promise<VnfLiveState> {
  const vim = await instanceVim(deps, instance, 'vnf-describe', kubernetesVims);
  const info = instance.instantiatedVnfInfo!;
  const state = await describeKubernetes(deps, instance, { vim, targets: recordedTargets(info), ownManagers: ['helm', 'vnfm'] }, signal);
  return { ...state, releases: recordedReleases(info) };
}

/** The releases an instance records, in install order, each with the VDUs it holds. */
function recordedReleases(info: InstantiatedVnfInfo): LiveRelease[] {
  const m = info.metadata;
  const vdus = Object.keys(m.vduReplicas);
  if (m.helm_releases) return m.helm_releases.map((r) => ({ name: r.release_name, namespace: m.namespace, revision: r.revision, chart: r.helm_chart_path, vdus: r.vdus }));
  return m.release_name ? [{ name: m.release_name, namespace: m.namespace, revision: m.revision ?? 0, chart: m.helm_chart_path ?? '', vdus }] : [];
}

/** The VNFCs and replicas of every release's VDUs, each VNFC recording its release as operations do. */
export async function liveReleaseScale(deps: LcmDeps, instance: VnfInstance, signal: AbortSignal): Promise<LiveScale> {
  const vim = await instanceVim(deps, instance, 'vnf-sync', kubernetesVims);
  const info = instance.instantiatedVnfInfo!;
  const live = await liveKubernetesScale(deps, instance, { vim, targets: recordedTargets(info) }, signal);
  return { ...live, vnfcs: withReleaseNames(live.vnfcs, vduReleases(info, Object.keys(info.metadata.vduReplicas))) };
}

/**
 * What an operation that stopped (FAILED_TEMP, or FAILED after op-fail)
 * left on the cluster: the objects its journal records as created or
 * changed, read live as vnf-describe reads an instance's, with the events of
 * those not ready. No instance records them, so there is no drift of
 * replicas or VNFCs to tell; an object recorded that is gone says so.
 */
export async function describeJournalled(
  deps: LcmDeps,
  instance: VnfInstance,
  input: { vim: VimConnection; resources: ResourceRef[]; namespace: string; vimType: 'kubernetes' | 'helm' },
  signal: AbortSignal,
): Promise<VnfLiveState> {
  const driver = await deps.kubernetesDriver(input.vim);
  const live = await driverOf(driver)({ resources: input.resources, namespace: input.namespace, ownManagers: input.vimType === 'helm' ? ['helm', 'vnfm'] : ['vnfm'] }, signal);
  const objects = live.map(toNode);
  const all = flattenNodes(objects);
  return {
    vnfInstanceId: instance.id,
    ...(instance.vnfInstanceName ? { vnfInstanceName: instance.vnfInstanceName } : {}),
    vimType: input.vimType,
    vim: input.vim.name,
    ...(input.vim.id ? { vimId: input.vim.id } : {}),
    namespace: input.namespace,
    objects,
    drift: all.flatMap((n) => n.drift.map((d) => `${n.kind}/${n.name}: ${d}`)),
    ready: all.length > 0 && all.every((n) => n.exists && n.ready),
  };
}
