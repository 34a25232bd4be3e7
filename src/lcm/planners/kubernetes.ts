/**
 * The Kubernetes planner: a VNF is the objects of the package's definition
 * files (additionalParams.lcm-kubernetes-def-files) in one namespace, its
 * VDUs their workloads; each plan hands the driver the objects, namespace,
 * replicas and VDU targets, and rollback plans the way back from the
 * journal and the state before.
 */
import { ConflictError, ValidationError } from '../../errors.js';
import type { ChangePackageInput, DeployInput, KubernetesInfraDriver } from '../../infra/kubernetes/driver-contract.js';
import { journalResources, unionResources, type LcmDeps, type KubernetesPlan } from '../engine.js';
import type {
  ChangeCurrentVnfPkgRequest,
  HealVnfRequest,
  InstantiateVnfRequest,
  InstantiatedVnfInfo,
  LcmOpOcc,
  ScaleVnfRequest,
  VimConnection,
  VimConnectionInfo,
  VnfInstance,
} from '../../model/lcm.js';
import { manifestCache } from '../manifest-cache.js';
import { openOnboarded, packageOf, readPackageObjects } from '../package-content.js';
import { carriedScaleLevels, levelReplicas } from '../replicas.js';
import { checkChangePackage, checkChangePackageShape, checkHealRequest, checkInstantiateRequest, checkScaleRequest, checkTerminateRequest, flavourOf } from '../requests.js';
import { checkedInline, defaultVim, instanceVim, KUBERNETES_VIM_TYPES, kubernetesVims, recordedVim, resolveVimConnection, vimLookup } from '../vim-connection.js';
import { packageIdentity } from '../../model/package.js';
import { vnfcsOf } from '../../model/vnfcs.js';
import type { PackageChangeInput, Planner } from './planner.js';
import { applyContainerUpdate, planContainerUpdate } from '../container-update.js';
import { describeKubernetes, liveKubernetesScale } from './kubernetes-live.js';
import { planKubernetesAdoption } from './kubernetes-adopt.js';

import { barePods, chooseNamespace, FIXED_KINDS, refreshed, replicasByWorkload, vduTargets, withNamespace } from './kubernetes-objects.js';

export { chooseNamespace };

// ---------------------------------------------------------------------------
// Plans

async function planInstantiate(deps: LcmDeps, instance: VnfInstance, body: unknown, source: string): Promise<KubernetesPlan> {
  const pkg = await packageOf(deps, instance.vnfPkgId);
  const checked = checkInstantiateRequest(source, body, instance, pkg.vnfd, pkg);
  const request = checked.request;
  const lookup = vimLookup(deps);
  const vim = await checkedInline(deps, await resolveVimConnection(source, request.vimConnectionInfo, lookup, () => defaultVim(source, lookup)));
  const { objects: own, sources } = await readPackageObjects(pkg.zip, checked.defFiles, manifestCache(deps.home));
  const namespace = chooseNamespace(source, checked.namespace, own, vim, checked.defFiles);
  const objects = withNamespace(own, namespace);
  const level = levelReplicas(checked.flavour, request.instantiationLevelId);
  const targets = vduTargets(checked.flavour, objects, namespace);
  const vimRecord = await recordedVim(deps, vim, request.vimConnectionInfo, Object.values(request.vimConnectionInfo ?? {})[0]?.vimType ?? 'kubernetes');
  const params: InstantiateVnfRequest = { ...request, vimConnectionInfo: vimRecord };
  const input: DeployInput = {
    instanceId: instance.id,
    namespace,
    objects,
    replicas: replicasByWorkload(targets, level.replicas),
    sources,
    vdus: targets,
    ...(checked.readiness ? { readiness: checked.readiness } : {}),
    ...(checked.createNamespace ? { createNamespace: true } : {}),
  };
  return {
    operation: 'INSTANTIATE',
    connect,
    params,
    vim,
    flavour: checked.flavour,
    packageDir: pkg.workDir,
    hooks: ['instantiate_start', 'instantiate_end'],
    check: (driver, signal) => driver.check(input, signal),
    async run(driver, ctx) {
      const resources = await driver.deploy(ctx, input);
      const info: InstantiatedVnfInfo = {
        flavourId: checked.flavour.id,
        ...(level.instantiationLevelId ? { instantiationLevelId: level.instantiationLevelId } : {}),
        vnfState: 'STARTED',
        scaleStatus: level.scaleStatus,
        maxScaleLevels: level.maxScaleLevels,
        ...(await refreshed(driver, ctx, targets, vim.id)),
        resources,
        metadata: {
          namespace,
          'lcm-kubernetes-def-files': checked.defFiles,
          vduReplicas: level.replicas,
          ...(checked.readiness ? { vnfm_readiness: checked.readiness } : {}),
        },
      };
      const { vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
      return {
        ...rest,
        instantiationState: 'INSTANTIATED',
        ...(vim.inline ? { vimConnectionInfo: vimRecord } : { vimId: vim.id! }),
        instantiatedVnfInfo: info,
      };
    },
  };
}

/** What every operation after instantiate starts from: the package, flavour, objects and targets in use. */
export async function current(deps: LcmDeps, instance: VnfInstance, source: string, given: Record<string, VimConnectionInfo> | undefined) {
  const info = instance.instantiatedVnfInfo;
  if (!info) throw new ConflictError(`vnf instance ${instance.id} is NOT_INSTANTIATED`, { hint: `instantiate it first: vnfm vnf-instantiate ${instance.id} --request-file FILE` });
  const pkg = await packageOf(deps, instance.vnfPkgId);
  const flavour = flavourOf(instance, pkg.vnfd);
  const lookup = vimLookup(deps);
  const vim = given
    ? await checkedInline(deps, await resolveVimConnection(source, given, lookup, () => instanceVim(deps, instance, source, kubernetesVims)))
    : await instanceVim(deps, instance, source, kubernetesVims);
  const read = await readPackageObjects(pkg.zip, info.metadata['lcm-kubernetes-def-files'], manifestCache(deps.home));
  // The namespace recorded at instantiate, whatever the manifests say.
  const objects = withNamespace(read.objects, info.metadata.namespace);
  const targets = vduTargets(flavour, objects, info.metadata.namespace);
  return { info, pkg, flavour, vim, objects, targets, params: given ? { vimConnectionInfo: await recordedVim(deps, vim, given) } : {} };
}

async function planScale(deps: LcmDeps, instance: VnfInstance, body: unknown, source: string): Promise<KubernetesPlan> {
  const given = (body as ScaleVnfRequest | undefined)?.vimConnectionInfo;
  const cur = await current(deps, instance, source, given);
  const checked = checkScaleRequest(source, body, instance, cur.flavour);
  const aspect = cur.flavour.aspects[checked.request.aspectId]!;
  const deployed = Object.keys(aspect.vduDeltas).filter((vduId) => cur.targets.some((t) => t.vduId === vduId));
  if (Object.keys(aspect.vduDeltas).length > 0 && deployed.length === 0) {
    throw new ValidationError(
      source,
      'aspectId',
      `aspect ${aspect.id} scales ${Object.keys(aspect.vduDeltas).join(', ')}, and this instance deployed none of them (its definition files: ${cur.info.metadata['lcm-kubernetes-def-files'].join(', ')})`,
      {
        hint: 'scale an aspect of a VDU the instance runs; vnfm vnf-show lists its VNFCs',
      },
    );
  }
  const moves = cur.targets.filter((t) => aspect.vduDeltas[t.vduId] !== undefined && checked.replicas[t.vduId] !== cur.info.metadata.vduReplicas[t.vduId]);
  for (const t of moves) {
    if (FIXED_KINDS.has(t.resource.kind)) {
      throw new ValidationError(source, 'aspectId', `aspect ${aspect.id} scales ${t.vduId}, whose workload is a ${t.resource.kind}: its replicas cannot be set`);
    }
  }
  return {
    operation: 'SCALE',
    connect,
    params: { ...checked.request, ...cur.params },
    vim: cur.vim,
    flavour: cur.flavour,
    packageDir: cur.pkg.workDir,
    hooks: ['scale_start', 'scale_end'],
    async run(driver, ctx) {
      for (const t of moves) await driver.scale(ctx, { resource: t.resource, replicas: checked.replicas[t.vduId]!, readiness: cur.info.metadata.vnfm_readiness });
      return {
        ...instance,
        instantiatedVnfInfo: {
          ...cur.info,
          scaleStatus: cur.info.scaleStatus.map((s) => (s.aspectId === aspect.id ? { ...s, scaleLevel: checked.toLevel } : s)),
          ...(await refreshed(driver, ctx, cur.targets, cur.vim.id)),
          metadata: { ...cur.info.metadata, vduReplicas: checked.replicas },
        },
      };
    },
  };
}

async function planHeal(deps: LcmDeps, instance: VnfInstance, body: unknown, source: string, retry: boolean): Promise<KubernetesPlan> {
  const given = (body as HealVnfRequest | undefined)?.vimConnectionInfo;
  const cur = await current(deps, instance, source, given);
  const checked = checkHealRequest(source, body, instance, retry);
  const wanted = new Set(checked.vnfcs.map((v) => v.id));
  const vnfcs = vnfcsOf(cur.info).filter((v) => wanted.has(v.id));
  return {
    operation: 'HEAL',
    connect,
    params: { ...checked.request, ...cur.params },
    vim: cur.vim,
    flavour: cur.flavour,
    packageDir: cur.pkg.workDir,
    hooks: ['heal_start', 'heal_end'],
    async run(driver, ctx) {
      await driver.heal(ctx, { instanceId: instance.id, vnfcs, barePods: barePods(cur.objects, cur.info.metadata.namespace), readiness: cur.info.metadata.vnfm_readiness });
      return { ...instance, instantiatedVnfInfo: { ...cur.info, ...(await refreshed(driver, ctx, cur.targets, cur.vim.id)) } };
    },
  };
}

async function planTerminate(deps: LcmDeps, instance: VnfInstance, body: unknown, source: string): Promise<KubernetesPlan> {
  const request = checkTerminateRequest(source, body, instance);
  const cur = await current(deps, instance, source, request.vimConnectionInfo);
  const grace = request.terminationType === 'FORCEFUL' ? 0 : request.gracefulTerminationTimeout;
  return {
    operation: 'TERMINATE',
    connect,
    params: { ...request, ...cur.params },
    vim: cur.vim,
    flavour: cur.flavour,
    packageDir: cur.pkg.workDir,
    hooks: ['terminate_start', 'terminate_end'],
    async run(driver, ctx) {
      await driver.remove(ctx, { instanceId: instance.id, resources: cur.info.resources, ...(grace !== undefined ? { gracePeriodSeconds: grace } : {}) });
      // The VIM is let go with the resources, so it can be deleted while the instance stays.
      const { instantiatedVnfInfo: _i, vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
      return { ...rest, instantiationState: 'NOT_INSTANTIATED' };
    },
  };
}

async function planChangePackage(deps: LcmDeps, instance: VnfInstance, body: unknown, source: string): Promise<KubernetesPlan> {
  const request = checkChangePackageShape(source, body, instance);
  const newPkgRecord = await deps.store.packages.find(request.vnfdId);
  if (!newPkgRecord || newPkgRecord.vnfdId !== request.vnfdId) {
    throw new ValidationError(source, 'vnfdId', `no onboarded package has vnfdId ${request.vnfdId}`, {
      hint: 'onboard it first (vnfm vnfpkg-onboard), then check with vnfm vnfpkg-list',
    });
  }
  if (newPkgRecord.onboardingState !== 'ONBOARDED' || newPkgRecord.operationalState !== 'ENABLED') {
    throw new ValidationError(source, 'vnfdId', `package ${newPkgRecord.id} is ${newPkgRecord.onboardingState}/${newPkgRecord.operationalState}`, {
      hint: `enable it: vnfm vnfpkg-update ${newPkgRecord.id} --operational-state ENABLED`,
    });
  }
  const cur = await current(deps, instance, source, request.vimConnectionInfo);
  const newPkg = await openOnboarded(deps, newPkgRecord);
  const checked = checkChangePackage(source, request, instance, newPkg.vnfd, newPkg);
  const read = await readPackageObjects(newPkg.zip, checked.defFiles, manifestCache(deps.home));
  const sources = read.sources;
  const namespace = checked.namespace ?? cur.info.metadata.namespace;
  const objects = withNamespace(read.objects, namespace);
  const readiness = checked.readiness ?? cur.info.metadata.vnfm_readiness;
  const targets = vduTargets(checked.flavour, objects, namespace);
  const defaults = levelReplicas(checked.flavour, cur.info.instantiationLevelId).replicas;
  const replicas = Object.fromEntries(Object.keys(checked.flavour.vdus).map((vduId) => [vduId, cur.info.metadata.vduReplicas[vduId] ?? defaults[vduId] ?? 1]));
  const input: ChangePackageInput = {
    instanceId: instance.id,
    namespace,
    objects,
    current: cur.info.resources,
    replicas: replicasByWorkload(targets, replicas),
    sources,
    vdus: targets,
    ...(readiness ? { readiness } : {}),
  };
  return {
    operation: 'CHANGE_VNFPKG',
    connect,
    params: { ...request, ...cur.params } as ChangeCurrentVnfPkgRequest,
    vim: cur.vim,
    flavour: checked.flavour,
    packageDir: newPkg.workDir,
    hooks: ['change_current_package_start', 'change_current_package_end'],
    check: (driver, signal) => driver.check(input, signal),
    async run(driver, ctx) {
      const resources = await driver.changePackage(ctx, input);
      return {
        ...instance,
        ...packageIdentity(newPkgRecord),
        instantiatedVnfInfo: {
          ...cur.info,
          ...carriedScaleLevels(checked.flavour, cur.info.scaleStatus),
          ...(await refreshed(driver, ctx, targets, cur.vim.id)),
          resources,
          metadata: { namespace, 'lcm-kubernetes-def-files': checked.defFiles, vduReplicas: replicas, ...(readiness ? { vnfm_readiness: readiness } : {}) },
        },
      };
    },
  };
}

async function planRollback(deps: LcmDeps, instance: VnfInstance, op: LcmOpOcc, source: string): Promise<KubernetesPlan> {
  const params = op.operationParams as { vimConnectionInfo?: Record<string, VimConnectionInfo> };
  const lookup = vimLookup(deps);
  const vim = await resolveVimConnection(source, params.vimConnectionInfo, lookup, () => instanceVim(deps, instance, source, kubernetesVims));
  const steps = await deps.store.opOccs.journal(op.id);
  const pkg = await packageOf(deps, instance.vnfPkgId);
  const base = { operation: op.operation, params: op.operationParams, vim, packageDir: pkg.workDir, connect };
  if (op.operation === 'INSTANTIATE') {
    return {
      ...base,
      async run(driver, ctx) {
        await driver.remove(ctx, { instanceId: instance.id, resources: unionResources(journalResources(steps), instance.instantiatedVnfInfo?.resources ?? []) });
        const { instantiatedVnfInfo: _i, vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
        return { ...rest, instantiationState: 'NOT_INSTANTIATED' };
      },
    };
  }
  const info = instance.instantiatedVnfInfo;
  if (!info) throw new ConflictError(`vnf instance ${instance.id} is NOT_INSTANTIATED: there is nothing to roll back`, { hint: `vnfm op-fail ${op.id}` });
  const flavour = flavourOf(instance, pkg.vnfd);
  const prior = (await deps.store.opOccs.priorState(op.id))?.instantiatedVnfInfo ?? info;
  const read = await readPackageObjects(pkg.zip, prior.metadata['lcm-kubernetes-def-files'], manifestCache(deps.home));
  const sources = read.sources;
  const objects = withNamespace(read.objects, prior.metadata.namespace);
  const targets = vduTargets(flavour, objects, prior.metadata.namespace);
  if (op.operation === 'SCALE') {
    // The instance records the state before the scale (it changes only on COMPLETED): scale every VDU of the aspect back to it.
    const aspect = flavour.aspects[(op.operationParams as ScaleVnfRequest).aspectId];
    const back = targets.filter((t) => aspect?.vduDeltas[t.vduId] !== undefined && !FIXED_KINDS.has(t.resource.kind));
    return {
      ...base,
      flavour,
      async run(driver, ctx) {
        for (const t of back) await driver.scale(ctx, { resource: t.resource, replicas: prior.metadata.vduReplicas[t.vduId] ?? 0, readiness: prior.metadata.vnfm_readiness });
        return { ...instance, instantiatedVnfInfo: { ...prior, ...(await refreshed(driver, ctx, targets, vim.id)) } };
      },
    };
  }
  // CHANGE_VNFPKG: the old package's manifests again, over whatever the new one created.
  return {
    ...base,
    flavour,
    async run(driver, ctx) {
      const resources = await driver.changePackage(ctx, {
        instanceId: instance.id,
        namespace: prior.metadata.namespace,
        objects,
        current: unionResources(prior.resources, journalResources(steps)),
        replicas: replicasByWorkload(targets, prior.metadata.vduReplicas),
        sources,
        vdus: targets,
        ...(prior.metadata.vnfm_readiness ? { readiness: prior.metadata.vnfm_readiness } : {}),
      });
      return { ...instance, instantiatedVnfInfo: { ...prior, ...(await refreshed(driver, ctx, targets, vim.id)), resources } };
    },
  };
}

/** Its infra-driver, from the lcm dependencies. */
async function connect(deps: LcmDeps, vim: VimConnection): Promise<KubernetesInfraDriver> {
  return deps.kubernetesDriver(vim);
}

/** Tacker refuses change_ext_conn on a Kubernetes VIM ("not support vim type"), and so does vnfm. */
export const KUBERNETES_EXT_CONN = {
  reason: 'is a Kubernetes VNF: changing external connectivity is not supported for Kubernetes VNFs (nor by Tacker)',
  hint: 'a CNF connects through Services and network attachments in its manifests: change them with vnfm vnf-change-package',
};

/** vnf-update moving the instance to another package: Tacker v2's container update (container-update.ts). */
async function planContainerChange(_deps: LcmDeps, input: PackageChangeInput): Promise<Pick<KubernetesPlan, 'connect' | 'run'>> {
  const { instance, vim } = input;
  const update = await planContainerUpdate(instance, input.source, input.current, input.target, input.flavour, input.images, input.configPaths, input.now);
  return {
    connect,
    async run(driver, ctx) {
      if (input.images === 'new') for (const line of update.changed) ctx.report({ message: `image ${line}` });
      return applyContainerUpdate(driver, ctx, instance, update, vim);
    },
  };
}

export const kubernetesPlanner: Planner<KubernetesInfraDriver> = {
  name: 'kubernetes',
  registeredType: 'kubernetes',
  vimTypes: KUBERNETES_VIM_TYPES,
  vims: kubernetesVims,
  connect,
  instantiate: planInstantiate,
  scale: planScale,
  heal: (deps, instance, body, source, retry) => planHeal(deps, instance, body, source, retry),
  terminate: planTerminate,
  changePackage: planChangePackage,
  rollback: planRollback,
  adopt: planKubernetesAdoption,
  modify: { packageChange: planContainerChange },
  extConnRefusal: KUBERNETES_EXT_CONN,
  async describe(deps, instance, signal) {
    const cur = await current(deps, instance, 'vnf-describe', undefined);
    return describeKubernetes(deps, instance, { vim: cur.vim, targets: cur.targets, ownManagers: ['vnfm'] }, signal);
  },
  async liveScale(deps, instance, signal) {
    const cur = await current(deps, instance, 'vnf-sync', undefined);
    return liveKubernetesScale(deps, instance, { vim: cur.vim, targets: cur.targets }, signal);
  },
};
