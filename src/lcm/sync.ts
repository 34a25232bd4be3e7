/**
 * vnf-sync: the instance's recorded VNFCs and scale levels brought to what
 * runs at its VIM now, as Tacker's periodic database sync of CNF instances
 * does (tacker/sol_refactored/infra_drivers/kubernetes/kubernetes_common.py,
 * sync_db): the VNFCs are listed again, and each VDU's replicas give its
 * aspect's scale level through the VNFD's deltas, refused (nothing written)
 * when no level gives them or they leave the VDU's vdu_profile range.
 * Differences from Tacker: the replicas are the workload's spec.replicas
 * (what was scaled), not the pods counted while some may be starting; and
 * the change is written only when no operation holds or blocks the
 * instance, in one transaction that checks the instance did not change
 * while the VIM was read.
 */
import { ConflictError, UsageError } from '../errors.js';
import type { InstantiatedVnfInfo, ScaleInfo, VnfInstance } from '../model/lcm.js';
import type { LiveScale } from '../model/live.js';
import { vnfcRecords } from '../model/vnfcs.js';
import type { Flavour } from '../vnfd/index.js';
import { assertInstanceFree, sweepStaleLock, type LcmDeps } from './engine.js';
import { assertInstantiated } from './describe.js';
import { withCapacities, type HeatStackRecord } from './heat-nfv.js';
import { packageOf } from './package-content.js';
import { plannerOf } from './planners/index.js';
import { aspectDelta } from './replicas.js';
import { flavourOf } from './requests.js';

export interface SyncChange {
  type: 'VNFC_ADDED' | 'VNFC_REMOVED' | 'SCALE_LEVEL' | 'REPLICAS';
  /** The vnfcInfo id, aspect id or VDU id. */
  id: string;
  from?: number;
  to?: number;
  /** "vnfc added: VDU1-vdu1-x (Pod vdu1-x)", "vdu1_aspect scale level 1 → 2". */
  message: string;
}

export interface SyncOptions {
  /** Show what would change, write nothing. */
  dryRun?: boolean;
  signal?: AbortSignal;
}

export interface SyncResult {
  /** The instance as recorded afterwards (as it would be, with dryRun). */
  vnfInstance: VnfInstance;
  changes: SyncChange[];
  /** Whether the changes were written. */
  written: boolean;
}

export async function syncVnf(deps: LcmDeps, ref: string, opts: SyncOptions = {}): Promise<SyncResult> {
  const instance = await deps.store.instances.get(ref);
  assertInstantiated(instance, 'vnf-sync');
  await sweepStaleLock(deps, instance.id);
  // Refused at once while an operation holds or blocks the instance: what it changes is not settled.
  await assertInstanceFree(deps, instance.id);
  const planner = await plannerOf(deps, instance);
  if (!planner.liveScale) throw new UsageError(`vnf-sync cannot read instances on ${planner.name} VIMs`);
  const live = await planner.liveScale(deps, instance, opts.signal ?? new AbortController().signal);
  const pkg = await packageOf(deps, instance.vnfPkgId);
  const flavour = flavourOf(instance, pkg.vnfd);
  const { info, changes } = synced(instance.instantiatedVnfInfo!, flavour, live);
  const after: VnfInstance = { ...instance, instantiatedVnfInfo: info };
  if (changes.length === 0 || opts.dryRun) return { vnfInstance: after, changes, written: false };
  const written = await deps.store.opOccs.exclusive(async () => {
    await assertInstanceFree(deps, instance.id);
    const now = await deps.store.instances.get(instance.id);
    if (now.updatedAt !== instance.updatedAt || now.instantiationState !== 'INSTANTIATED') {
      throw new ConflictError(`vnf instance ${instance.id} changed while vnf-sync read its VIM (recorded at ${now.updatedAt}): nothing was written`, {
        hint: `run vnfm vnf-sync ${ref} again`,
      });
    }
    const record = { ...after, updatedAt: deps.now().toISOString() };
    await deps.store.instances.update(record);
    return record;
  });
  return { vnfInstance: written, changes, written: true };
}

/** The instance's info with the live VNFCs, replicas and scale levels, and what changed. */
export function synced(info: InstantiatedVnfInfo, flavour: Flavour, live: LiveScale): { info: InstantiatedVnfInfo; changes: SyncChange[] } {
  const changes: SyncChange[] = [];
  const levels = scaleLevels(info, flavour, live.replicas);
  for (const s of info.scaleStatus) {
    const to = levels.find((l) => l.aspectId === s.aspectId)!.scaleLevel;
    if (to !== s.scaleLevel) changes.push({ type: 'SCALE_LEVEL', id: s.aspectId, from: s.scaleLevel, to, message: `${s.aspectId} scale level ${s.scaleLevel} → ${to}` });
  }
  const vduReplicas = { ...info.metadata.vduReplicas };
  for (const [vduId, n] of Object.entries(live.replicas)) {
    const was = vduReplicas[vduId];
    if (was !== n) changes.push({ type: 'REPLICAS', id: vduId, ...(was !== undefined ? { from: was } : {}), to: n, message: `${vduId} replicas ${was ?? 'unrecorded'} → ${n}` });
    vduReplicas[vduId] = n;
  }
  const records = vnfcRecords(live.vnfcs, live.vimConnectionId);
  const before = new Map(info.vnfcInfo.map((c) => [c.id, c]));
  const now = new Set(records.vnfcInfo.map((c) => c.id));
  for (const c of records.vnfcInfo) {
    if (!before.has(c.id)) changes.push({ type: 'VNFC_ADDED', id: c.id, message: `vnfc added: ${c.id} (${kindOf(records, c.vnfcResourceInfoId)} ${c.vnfcResourceInfoId})` });
  }
  for (const c of info.vnfcInfo) {
    if (!now.has(c.id)) changes.push({ type: 'VNFC_REMOVED', id: c.id, message: `vnfc removed: ${c.id} (${c.vnfcResourceInfoId})` });
  }
  // What vnf-update set on a VNFC that stays is kept with it.
  const vnfcInfo = records.vnfcInfo.map((c) => {
    const old = before.get(c.id);
    return old?.vnfcConfigurableProperties ? { ...c, vnfcConfigurableProperties: old.vnfcConfigurableProperties } : c;
  });
  const vnfcChanged = changes.some((c) => c.type === 'VNFC_ADDED' || c.type === 'VNFC_REMOVED');
  return {
    info: {
      ...info,
      scaleStatus: levels,
      ...(vnfcChanged ? { vnfcResourceInfo: records.vnfcResourceInfo, vnfcInfo } : {}),
      metadata: { ...info.metadata, vduReplicas, ...heatCapacities(info.metadata, changes, vduReplicas) },
    },
    changes,
  };
}

/**
 * A Heat VNF's recorded `nfv` parameter with the live size of each group
 * sized by its desired_capacity: the next operation sends that parameter
 * again (change-ext-conn, a rollback), and with the old capacity Heat would
 * shrink or grow the group back behind the record.
 */
function heatCapacities(metadata: InstantiatedVnfInfo['metadata'], changes: SyncChange[], replicas: Record<string, number>): { heat?: HeatStackRecord } {
  const heat = (metadata as { heat?: HeatStackRecord }).heat;
  if (!heat) return {};
  const resized = changes.filter((c) => c.type === 'REPLICAS' && heat.nfv.VDU?.[c.id]?.desired_capacity !== undefined).map((c) => c.id);
  return resized.length ? { heat: { ...heat, nfv: withCapacities(heat.nfv, replicas, resized) } } : {};
}

const kindOf = (records: ReturnType<typeof vnfcRecords>, id: string): string => {
  const r = records.vnfcResourceInfo.find((x) => x.id === id);
  const kind = (r?.metadata as { kind?: string } | undefined)?.kind;
  return kind ?? (r?.computeResource.vimLevelResourceType === 'OS::Nova::Server' ? 'server' : 'Pod');
};

/**
 * Each aspect's level that gives the live replicas of every VDU it scales,
 * counted from the recorded level and replicas with the VNFD's deltas; the
 * recorded level when the replicas did not change.
 */
function scaleLevels(info: InstantiatedVnfInfo, flavour: Flavour, live: Record<string, number>): ScaleInfo[] {
  for (const [vduId, n] of Object.entries(live)) {
    const profile = flavour.vdus[vduId]?.vduProfile;
    if (profile && (n < profile.minNumberOfInstances || n > profile.maxNumberOfInstances)) {
      throw new ConflictError(
        `VDU ${vduId} runs ${n} instances, outside its vdu_profile (${profile.minNumberOfInstances} to ${profile.maxNumberOfInstances}): nothing was recorded`,
        {
          hint: 'scale its workload back into that range (or with vnfm vnf-scale once recorded), then run vnf-sync again',
        },
      );
    }
  }
  return info.scaleStatus.map((s) => {
    const aspect = flavour.aspects[s.aspectId];
    const vdus = Object.keys(aspect?.vduDeltas ?? {}).filter((v) => live[v] !== undefined && info.metadata.vduReplicas[v] !== undefined);
    if (!aspect || vdus.length === 0 || vdus.every((v) => live[v] === info.metadata.vduReplicas[v])) return s;
    const fits = (level: number) => vdus.every((v) => info.metadata.vduReplicas[v]! + aspectDelta(aspect, v, s.scaleLevel, level) === live[v]);
    for (let level = 0; level <= aspect.maxScaleLevel; level++) if (fits(level)) return { ...s, scaleLevel: level };
    const gives = vdus.map(
      (v) => `${v}: ${Array.from({ length: aspect.maxScaleLevel + 1 }, (_, l) => info.metadata.vduReplicas[v]! + aspectDelta(aspect, v, s.scaleLevel, l)).join(', ')}`,
    );
    throw new ConflictError(
      `the live replicas (${vdus.map((v) => `${v} ${live[v]}`).join(', ')}) match no scale level of aspect ${s.aspectId} (levels 0 to ${aspect.maxScaleLevel} give ${gives.join('; ')}): nothing was recorded`,
      { hint: 'scale the workload to a count one of those levels gives, then run vnf-sync again' },
    );
  });
}
