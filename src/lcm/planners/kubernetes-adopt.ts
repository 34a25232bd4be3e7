/**
 * Adopting a CNF Tacker instantiated on a Kubernetes VIM: the objects of the
 * definition files Tacker recorded, in the namespace it recorded, compared
 * with the package (each must exist with the package's kind, name,
 * namespace and container images) and with Tacker's scale levels (each VDU
 * must run the replicas its aspect's level gives, as Tacker's own sync
 * counts them), then labelled as the instance's without changing their
 * specs. The instance is recorded as an instantiate would have recorded it,
 * so the operations that follow run as on any other.
 */
import { ConflictError, UsageError, ValidationError } from '../../errors.js';
import type { AdoptInput, AdoptionFindings, KubernetesInfraDriver } from '../../infra/kubernetes/driver-contract.js';
import type { DriverContext } from '../../infra/driver.js';
import type { InstantiateVnfRequest, InstantiatedVnfInfo, LcmOperation, VimConnection, VnfInstance } from '../../model/lcm.js';
import type { Flavour } from '../../vnfd/index.js';
import type { LcmDeps } from '../engine.js';
import { manifestCache } from '../manifest-cache.js';
import { packageOf, readPackageObjects } from '../package-content.js';
import { aspectDelta, levelReplicas } from '../replicas.js';
import type { TackerInstance } from '../tacker-instance.js';
import { recordedVim } from '../vim-connection.js';
import { chooseNamespace, refreshed, vduTargets, withNamespace } from './kubernetes-objects.js';
import type { AdoptionPlan } from './planner.js';

/** vnfm's own operation (not ETSI's), recorded under this name as MODIFY_INFO is. */
export const ADOPT = 'ADOPT' as LcmOperation;

/** The flavour Tacker recorded, from the package's VNFD. */
export function adoptedFlavour(tacker: TackerInstance, flavours: Record<string, Flavour>, vnfdId: string): Flavour {
  if (!tacker.flavourId) throw new ValidationError(tacker.source, 'instantiatedVnfInfo.flavourId', 'is missing: Tacker records it on every instantiated VNF');
  const flavour = flavours[tacker.flavourId];
  if (!flavour) {
    throw new ValidationError(
      tacker.source,
      'instantiatedVnfInfo.flavourId',
      `is ${tacker.flavourId}, which VNFD ${vnfdId} does not have (it has ${Object.keys(flavours).join(', ')})`,
      {
        hint: 'adopt with the package the instance was instantiated from',
      },
    );
  }
  return flavour;
}

/**
 * Tacker's scale levels on the flavour's aspects (0 for an aspect it does not
 * name), the VDU replicas they give, and each way they differ from the
 * flavour or the live replicas.
 */
export function adoptedScale(
  tacker: TackerInstance,
  flavour: Flavour,
  live: Record<string, number>,
  workloadOf: (vduId: string) => string,
): { scaleStatus: { aspectId: string; scaleLevel: number }[]; replicas: Record<string, number>; differences: string[] } {
  const at = levelReplicas(flavour, tacker.instantiationLevelId);
  const differences: string[] = [];
  for (const s of tacker.scaleStatus) {
    const aspect = flavour.aspects[s.aspectId];
    if (!aspect) differences.push(`Tacker's scaleStatus names aspect ${s.aspectId}, which flavour ${flavour.id} of the package does not have`);
    else if (s.scaleLevel > aspect.maxScaleLevel)
      differences.push(`aspect ${s.aspectId} is at scale level ${s.scaleLevel}, above its max_scale_level ${aspect.maxScaleLevel} in the package`);
  }
  const scaleStatus = at.scaleStatus.map((s) => tacker.scaleStatus.find((t) => t.aspectId === s.aspectId && flavour.aspects[t.aspectId]) ?? s);
  const replicas = { ...at.replicas };
  for (const s of scaleStatus) {
    const aspect = flavour.aspects[s.aspectId]!;
    const from = at.scaleStatus.find((x) => x.aspectId === s.aspectId)?.scaleLevel ?? 0;
    for (const vduId of Object.keys(aspect.vduDeltas)) replicas[vduId] = (at.replicas[vduId] ?? 0) + aspectDelta(aspect, vduId, from, Math.min(s.scaleLevel, aspect.maxScaleLevel));
  }
  for (const [vduId, n] of Object.entries(live)) {
    const want = replicas[vduId];
    if (want === undefined || want === n) continue;
    const aspect = scaleStatus.find((s) => flavour.aspects[s.aspectId]?.vduDeltas[vduId] !== undefined);
    const why = aspect ? `scale level ${aspect.scaleLevel} of ${aspect.aspectId} gives ${want}` : `the package gives it ${want}`;
    differences.push(`${workloadOf(vduId)} (${vduId}) runs ${n} replicas; Tacker's ${why}`);
  }
  return { scaleStatus, replicas: { ...replicas, ...live }, differences };
}

/** The refusal of an adoption: every difference, one a line. */
export function adoptionRefused(tacker: TackerInstance, what: string, differences: string[]): ConflictError {
  return new ConflictError(
    `cannot adopt Tacker's vnf instance ${tacker.id} (${tacker.source}): ${what} differs from the package in ${differences.length} way${differences.length === 1 ? '' : 's'}, nothing was recorded:\n  ${differences.join('\n  ')}`,
    { hint: 'adopt with the package and VIM the instance runs from (--package, --vim), or bring the VIM back to what the package defines' },
  );
}

export async function planKubernetesAdoption(deps: LcmDeps, instance: VnfInstance, tacker: TackerInstance, vim: VimConnection): Promise<AdoptionPlan<KubernetesInfraDriver>> {
  const source = tacker.source;
  const pkg = await packageOf(deps, instance.vnfPkgId);
  const flavour = adoptedFlavour(tacker, pkg.vnfd.flavours, pkg.vnfd.id);
  const defFiles = tacker.defFiles;
  if (!defFiles?.length) {
    throw new ValidationError(
      source,
      'instantiatedVnfInfo',
      'names no lcm-kubernetes-def-files (v2: in metadata; v1: in additionalParams): vnfm cannot tell which objects are the instance',
      {
        hint: 'export the instance with: openstack vnflcm show ID -f json (the file holds them as Tacker recorded them)',
      },
    );
  }
  const { objects: own, sources } = await readPackageObjects(pkg.zip, defFiles, manifestCache(deps.home));
  const namespace = tacker.namespace ?? chooseNamespace(source, undefined, own, vim, defFiles);
  const objects = withNamespace(own, namespace);
  const targets = vduTargets(flavour, objects, namespace);
  const input: AdoptInput = { instanceId: instance.id, namespace, objects, sources, vdus: targets };
  const workloadOf = (vduId: string) => {
    const t = targets.find((x) => x.vduId === vduId);
    return t ? `${t.resource.kind} ${t.resource.name}` : vduId;
  };
  let findings: (AdoptionFindings & { scale: ReturnType<typeof adoptedScale> }) | undefined;
  const inspect = async (driver: KubernetesInfraDriver, signal: AbortSignal) => {
    if (!driver.inspectAdoption || !driver.adopt) throw new UsageError('the Kubernetes driver in use cannot adopt', { hint: 'use the driver vnfm ships' });
    const found = await driver.inspectAdoption(input, signal);
    const scale = adoptedScale(tacker, flavour, found.replicas, workloadOf);
    const differences = [...found.differences, ...scale.differences];
    if (differences.length > 0) throw adoptionRefused(tacker, `the cluster's namespace ${namespace}`, differences);
    findings = { ...found, scale };
    return findings;
  };
  const vimConnectionInfo = await recordedVim(deps, vim, undefined, 'kubernetes');
  const params: InstantiateVnfRequest = {
    flavourId: flavour.id,
    ...(tacker.instantiationLevelId ? { instantiationLevelId: tacker.instantiationLevelId } : {}),
    vimConnectionInfo,
    additionalParams: {
      'lcm-kubernetes-def-files': defFiles,
      namespace,
      vnfm_adopted_from: { vnfInstanceId: tacker.id, api: tacker.api, file: source },
    },
  };
  const quiet = (signal: AbortSignal): DriverContext => ({ journal: { record: () => undefined, steps: () => [] }, report: () => undefined, signal });
  return {
    operation: ADOPT,
    connect: async (d, v) => d.kubernetesDriver(v),
    params,
    vim,
    flavour,
    packageDir: pkg.workDir,
    check: async (driver, signal) => {
      await inspect(driver, signal);
    },
    async summary(driver, signal) {
      const f = findings ?? (await inspect(driver, signal));
      const vnfcs = await driver.listVnfcs(quiet(signal), targets);
      return { namespace, resources: f.resources, vnfcs: vnfcs.map((v) => v.id), scaleStatus: f.scale.scaleStatus };
    },
    async run(driver, ctx) {
      // Checked again as it runs: the cluster may have changed since the check.
      const f = await inspect(driver, ctx.signal);
      const resources = await driver.adopt!(ctx, input);
      const info: InstantiatedVnfInfo = {
        flavourId: flavour.id,
        ...(tacker.instantiationLevelId ? { instantiationLevelId: tacker.instantiationLevelId } : {}),
        vnfState: tacker.vnfState ?? 'STARTED',
        scaleStatus: f.scale.scaleStatus,
        maxScaleLevels: levelReplicas(flavour).maxScaleLevels,
        ...(await refreshed(driver, ctx, targets, vim.id)),
        resources,
        metadata: { namespace, 'lcm-kubernetes-def-files': defFiles, vduReplicas: f.scale.replicas, vnfm_adopted: { tacker: tacker.api, at: deps.now().toISOString() } },
      };
      const { vimConnectionInfo: _c, ...rest } = instance;
      return { ...rest, instantiationState: 'INSTANTIATED', vimId: vim.id!, instantiatedVnfInfo: info };
    },
  };
}
