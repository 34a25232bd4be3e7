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
import { UsageError, ValidationError } from '../../errors.js';
import type { AdoptInput, AdoptionFindings, KubernetesInfraDriver } from '../../infra/kubernetes/driver-contract.js';
import type { DriverContext } from '../../infra/driver.js';
import type { InstantiateVnfRequest, InstantiatedVnfInfo, VimConnection, VnfInstance } from '../../model/lcm.js';
import type { LcmDeps } from '../engine.js';
import { manifestCache } from '../manifest-cache.js';
import { packageOf, readPackageObjects } from '../package-content.js';
import { levelReplicas } from '../replicas.js';
import type { TackerInstance } from '../tacker-instance.js';
import { recordedVim } from '../vim-connection.js';
import { chooseNamespace, refreshed, vduTargets, withNamespace } from './kubernetes-objects.js';
import type { AdoptionPlan } from './planner.js';
import { ADOPT, adoptedFlavour, adoptedScale, adoptionRefused } from './adoption.js';

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
  const runs = (vduId: string, n: number) => {
    const t = targets.find((x) => x.vduId === vduId);
    return `${t ? `${t.resource.kind} ${t.resource.name} (${vduId})` : vduId} runs ${n} replicas`;
  };
  let findings: (AdoptionFindings & { scale: ReturnType<typeof adoptedScale> }) | undefined;
  const inspect = async (driver: KubernetesInfraDriver, signal: AbortSignal) => {
    if (!driver.inspectAdoption || !driver.adopt) throw new UsageError('the Kubernetes driver in use cannot adopt', { hint: 'use the driver vnfm ships' });
    const found = await driver.inspectAdoption(input, signal);
    const scale = adoptedScale(tacker, flavour, found.replicas, runs);
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
