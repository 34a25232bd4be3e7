/**
 * The OpenStack planner: a VNF is the Heat stack `vnf-<instance id>` made
 * from the package's Base HOT for the flavour, the Heat environments, and
 * the `nfv` JSON parameter (heat-nfv.ts).
 */
import { ConflictError, echo, UsageError, ValidationError, VnfmError } from '../../errors.js';
import type { OpenStackInfraDriver } from '../../infra/openstack/driver-contract.js';
import { openStackExtConn } from './openstack-ext-conn.js';
import { stackNameOf } from '../../infra/openstack/driver-contract.js';
import type { Flavour } from '../../vnfd/index.js';
import type { LcmDeps, OpenStackPlan, OperationOptions } from '../engine.js';
import type {
  ChangeCurrentVnfPkgRequest,
  HealVnfRequest,
  InstantiateVnfRequest,
  LcmOpOcc,
  ScaleVnfRequest,
  VimConnection,
  VimConnectionInfo,
  VnfInstance,
} from '../../model/lcm.js';
import {
  dropInstanceEnvironments,
  loadInstanceEnvironments,
  readHeatEnvironments,
  readStackTemplates,
  saveInstanceEnvironments,
  withEnvironments,
  type HeatEnvironments,
} from '../heat-files.js';
import { planImages, removeImages, uploadImages } from '../heat-images.js';
import { buildNfvParameter, checkExtVirtualLinks, checkNfvOverrides, cpsByVdu, nfvReads, withCapacities, type HeatStackRecord, type OpenStackInfo } from '../heat-nfv.js';
import { groupSizes, policySignal, vduGroups } from '../heat-scaling.js';
import { openOnboarded, packageOf } from '../package-content.js';
import { carriedScaleLevels, levelReplicas } from '../replicas.js';
import { checkHealRequest, checkScaleRequest, checkTerminateRequest, checkChangePackageShape, flavourOf } from '../requests.js';
import { instanceVimFields, OPENSTACK_VIM_TYPES, openStackVims, RECORDED_OPENSTACK_VIM_TYPE, recordedVim, resolveOpenStackVim } from '../vim-connection.js';
import { checkUserData } from '../user-data.js';
import { classAtInstantiationOnly, consentToUserData, planClassNfv } from './openstack-user-data.js';
import { standardNfv, standardTemplates, unindexedReads, type StandardInputs } from '../heat-standard.js';
import { planStandardScale, standardIndexes, withoutStandard } from './openstack-standard.js';
import { packageIdentity } from '../../model/package.js';
import { vnfcRecords, vnfcsOf } from '../../model/vnfcs.js';
import type { Planner, PlanOperation } from './planner.js';
import { describeOpenStack, liveOpenStackScale } from './openstack-live.js';
import { planOpenStackAdoption } from './openstack-adopt.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---------------------------------------------------------------------------
// Environments

/**
 * `--heat-environment` files when given, else (on instantiate) the VIM's
 * `extra.heat_environments`, else the instance's own. A retried instantiate
 * uses the ones its first attempt kept (the stack was made with them).
 */
async function environmentsFor(
  deps: LcmDeps,
  instance: VnfInstance,
  vim: VimConnection,
  opts: OperationOptions,
  first: boolean,
  retry = false,
): Promise<{ envs: HeatEnvironments; given: boolean }> {
  if (opts.heatEnvironments?.length) return { envs: await readHeatEnvironments(opts.heatEnvironments, deps.home), given: true };
  if (first && retry) {
    const kept = await loadInstanceEnvironments(deps.home, instance.id);
    if (kept.paths.length > 0) return { envs: kept, given: false };
  }
  if (first) {
    const defaults = vim.spec.extra?.['heat_environments'];
    const list = Array.isArray(defaults) ? defaults.filter((p): p is string => typeof p === 'string') : typeof defaults === 'string' ? [defaults] : [];
    return { envs: await readHeatEnvironments(list, deps.home), given: list.length > 0 };
  }
  return { envs: await loadInstanceEnvironments(deps.home, instance.id), given: false };
}

// ---------------------------------------------------------------------------
// Plans

async function refreshed(driver: OpenStackInfraDriver, ctx: Parameters<OpenStackInfraDriver['listVnfcs']>[0], instanceId: string, flavour: Flavour, vimId: string | undefined) {
  return vnfcRecords(await driver.listVnfcs(ctx, { instanceId, vdus: cpsByVdu(flavour) }), vimId);
}

function openStackInfo(instance: VnfInstance): OpenStackInfo {
  const info = instance.instantiatedVnfInfo as OpenStackInfo | undefined;
  if (!info) throw new ConflictError(`vnf instance ${instance.id} is NOT_INSTANTIATED`, { hint: `instantiate it first: vnfm vnf-instantiate ${instance.id} --request-file FILE` });
  if (!info.metadata.heat) throw new UsageError(`vnf instance ${instance.id} has no Heat stack recorded`, { hint: 'it was not instantiated on an OpenStack VIM' });
  return info;
}

type OpenStackPlanner = PlanOperation<OpenStackInfraDriver>;

const planInstantiate: OpenStackPlanner = async (deps, instance, body, source, retry, opts) => {
  if (instance.instantiationState === 'INSTANTIATED') {
    throw new ConflictError(`vnf instance ${instance.id} is already INSTANTIATED`, { hint: `terminate it first (vnfm vnf-terminate ${instance.id}), or create another instance` });
  }
  if (!isObject(body))
    throw new ValidationError(source, undefined, 'is not a JSON object (an InstantiateVnfRequest)', { hint: 'see csar-samples/heat-vnf/requests/instantiate.json' });
  const pkg = await packageOf(deps, instance.vnfPkgId);
  const flavours = Object.keys(pkg.vnfd.flavours);
  const flavourId = body['flavourId'];
  if (typeof flavourId !== 'string' || !pkg.vnfd.flavours[flavourId]) {
    throw new ValidationError(source, 'flavourId', flavourId === undefined ? 'is required' : `${echo(flavourId)} is not a flavour of VNFD ${pkg.vnfd.id}`, {
      hint: `choose from: ${flavours.join(', ')}`,
    });
  }
  const flavour = pkg.vnfd.flavours[flavourId]!;
  const levelId = body['instantiationLevelId'];
  if (levelId !== undefined && (typeof levelId !== 'string' || !flavour.instantiationLevels[levelId])) {
    throw new ValidationError(source, 'instantiationLevelId', `${echo(levelId)} is not an instantiation level of flavour ${flavourId}`, {
      hint: `choose from: ${Object.keys(flavour.instantiationLevels).join(', ') || '(none)'}`,
    });
  }
  if (body['additionalParams'] !== undefined && !isObject(body['additionalParams'])) throw new ValidationError(source, 'additionalParams', 'must be an object');
  const extVirtualLinks = checkExtVirtualLinks(source, body['extVirtualLinks'], flavour);
  const overrides = checkNfvOverrides(source, body['additionalParams']);
  const userData = await checkUserData(source, body['additionalParams'], { id: pkg.pkg.id, zip: pkg.zip, hasMember: pkg.hasMember });
  if (userData) opts.onEvent?.({ type: 'notice', message: userData.notice });
  const packageClass = userData?.kind === 'package-class' ? await consentToUserData(source, userData, pkg.pkg.id, 'instantiate_start', opts) : undefined;
  const given = isObject(body['vimConnectionInfo']) ? (body['vimConnectionInfo'] as Record<string, VimConnectionInfo>) : undefined;
  const vim = await resolveOpenStackVim(deps, source, given, instance);
  const hot = await readStackTemplates(pkg.zip, flavour, source, pkg.pkg.id, pkg.vnfd.id);
  const { envs } = await environmentsFor(deps, instance, vim, opts, true, retry);
  const level = levelReplicas(flavour, levelId as string | undefined);
  // Tacker v2's StandardUserData: one resource per VNFC, VDU1-0, VDU1-1, … (heat-standard.ts).
  const vduIndexes = userData?.kind === 'tacker-v2-standard' ? standardIndexes(source, hot.templatePath, flavour, level.replicas) : undefined;
  const extManagedVirtualLinks = vduIndexes && Array.isArray(body['extManagedVirtualLinks']) ? body['extManagedVirtualLinks'] : undefined;
  const templates = withEnvironments(vduIndexes ? standardTemplates(hot, flavour, vduIndexes, extManagedVirtualLinks) : hot, envs);
  const zone = typeof vim.spec.extra?.['availability_zone'] === 'string' ? (vim.spec.extra['availability_zone'] as string) : undefined;
  const nfvOpts = { ...(extVirtualLinks ? { extVirtualLinks } : {}), ...(overrides ? { overrides } : {}), ...(zone ? { zone } : {}), reads: nfvReads(templates) };
  const standardInputs: StandardInputs = { ...nfvOpts, ...(extManagedVirtualLinks ? { extManagedVirtualLinks } : {}) };
  const byClass =
    packageClass &&
    (await planClassNfv(deps, { use: packageClass, pkg, flavour, hot, request: body, instance, replicas: level.replicas, reads: nfvOpts.reads, overrides }, opts.signal));
  const images = byClass?.images ?? planImages(flavour, vduIndexes ? unindexedReads(nfvOpts.reads, flavour) : nfvOpts.reads, overrides, pkg.pkg.id, hot.templatePath);
  images.notices.forEach(noticeOf(opts));
  const nfv = byClass?.nfv ?? (vduIndexes ? standardNfv(templates, flavour, standardInputs) : buildNfvParameter(flavour, level.replicas, nfvOpts));
  const vimRecord = await recordedVim(deps, vim, given, RECORDED_OPENSTACK_VIM_TYPE);
  return {
    connect,
    operation: 'INSTANTIATE',
    params: { ...(body as unknown as InstantiateVnfRequest), vimConnectionInfo: vimRecord },
    vim,
    flavour,
    packageDir: pkg.workDir,
    hooks: ['instantiate_start', 'instantiate_end'],
    async run(driver, ctx) {
      await saveInstanceEnvironments(deps.home, instance.id, envs);
      // As Tacker: the package's images in Glance before the stack, the stack given their ids.
      const ids = await uploadImages(driver, ctx, images, { zip: pkg.zip, packageId: pkg.pkg.id, instanceId: instance.id, vimName: vim.name }, noticeOf(opts));
      const withIds = () =>
        vduIndexes ? standardNfv(templates, flavour, { ...standardInputs, images: ids }) : buildNfvParameter(flavour, level.replicas, { ...nfvOpts, images: ids });
      const sent = byClass ? await byClass.after(ids) : Object.keys(ids).length ? withIds() : nfv;
      const resources = await driver.deploy(ctx, { instanceId: instance.id, templates, nfv: sent, groups: groupSizes(vduGroups(templates, flavour), level.replicas, sent) });
      const heat: HeatStackRecord = {
        stackName: stackNameOf(instance.id),
        templatePath: hot.templatePath,
        nfv: sent,
        ...(vduIndexes ? { vduIndexes } : {}),
        ...(extManagedVirtualLinks ? { extManagedVirtualLinks } : {}),
        ...(extVirtualLinks ? { extVirtualLinks } : {}),
        ...(overrides ? { nfvOverrides: overrides } : {}),
        ...(packageClass ? { userDataClass: { file: packageClass.file, className: packageClass.className, generation: packageClass.generation } } : {}),
        environments: envs.paths,
      };
      const info: OpenStackInfo = {
        flavourId,
        ...(level.instantiationLevelId ? { instantiationLevelId: level.instantiationLevelId } : {}),
        vnfState: 'STARTED',
        scaleStatus: level.scaleStatus,
        maxScaleLevels: level.maxScaleLevels,
        ...(await refreshed(driver, ctx, instance.id, flavour, vim.id)),
        resources,
        metadata: { namespace: '', 'lcm-kubernetes-def-files': [], vduReplicas: level.replicas, heat },
      };
      const { vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
      return { ...rest, instantiationState: 'INSTANTIATED', ...instanceVimFields(vim, vimRecord), instantiatedVnfInfo: info };
    },
  };
};

async function current(deps: LcmDeps, instance: VnfInstance, source: string, given: Record<string, VimConnectionInfo> | undefined) {
  const info = openStackInfo(instance);
  const pkg = await packageOf(deps, instance.vnfPkgId);
  const flavour = flavourOf(instance, pkg.vnfd);
  const vim = await resolveOpenStackVim(deps, source, given, instance);
  return { info, pkg, flavour, vim, params: given ? { vimConnectionInfo: await recordedVim(deps, vim, given, RECORDED_OPENSTACK_VIM_TYPE) } : {} };
}

const planScale: OpenStackPlanner = async (deps, instance, body, source, _retry, opts) => {
  const given = (body as ScaleVnfRequest | undefined)?.vimConnectionInfo;
  const cur = await current(deps, instance, source, given);
  const checked = checkScaleRequest(source, body, instance, cur.flavour);
  const vduIndexes = cur.info.metadata.heat.vduIndexes;
  if (vduIndexes) {
    const { envs, given: newEnvs } = await environmentsFor(deps, instance, cur.vim, opts, false);
    return planStandardScale({ deps, instance, source, cur, checked, indexes: vduIndexes, envs, newEnvs }, { connect, refreshed, checkScaledVnfcs });
  }
  const aspect = cur.flavour.aspects[checked.request.aspectId]!;
  const vduIds = Object.keys(aspect.vduDeltas);
  const nfv = withCapacities(cur.info.metadata.heat.nfv, checked.replicas, vduIds);
  const hot = await readStackTemplates(cur.pkg.zip, cur.flavour, source, cur.pkg.pkg.id, cur.pkg.vnfd.id);
  const groups = vduGroups(hot, cur.flavour);
  // Tacker v1's form: the aspect's ScalingPolicy signalled per step; Heat then removes the oldest members on a scale-in, as with Tacker.
  const signal = policySignal(groups, cur.flavour, { ...checked, aspectId: aspect.id, replicas: cur.info.metadata.vduReplicas }, hot.templatePath);
  const remove = signal ? {} : Object.fromEntries(vduIds.map((v) => [v, Math.max(0, (cur.info.metadata.vduReplicas[v] ?? 0) - (checked.replicas[v] ?? 0))]));
  const { envs, given: newEnvs } = await environmentsFor(deps, instance, cur.vim, opts, false);
  return {
    connect,
    operation: 'SCALE',
    params: { ...checked.request, ...cur.params },
    vim: cur.vim,
    flavour: cur.flavour,
    packageDir: cur.pkg.workDir,
    hooks: ['scale_start', 'scale_end'],
    ...(signal ? {} : { removing: remove }),
    async run(driver, ctx) {
      if (newEnvs) await saveInstanceEnvironments(deps.home, instance.id, envs);
      await driver.scale(ctx, {
        instanceId: instance.id,
        nfv,
        remove,
        groups: groupSizes(groups, checked.replicas, nfv),
        ...(signal ? { signal } : {}),
        ...(newEnvs ? { environments: envs } : {}),
      });
      const vnfcs = await refreshed(driver, ctx, instance.id, cur.flavour, cur.vim.id);
      checkScaledVnfcs(instance.id, vduIds, vnfcsOf(cur.info), vnfcs.vnfcInfo, checked.replicas);
      return {
        ...instance,
        instantiatedVnfInfo: {
          ...cur.info,
          scaleStatus: cur.info.scaleStatus.map((s) => (s.aspectId === aspect.id ? { ...s, scaleLevel: checked.toLevel } : s)),
          ...vnfcs,
          metadata: { ...cur.info.metadata, vduReplicas: checked.replicas, heat: { ...cur.info.metadata.heat, nfv, ...(newEnvs ? { environments: envs.paths } : {}) } },
        } as OpenStackInfo,
      };
    },
  };
};

/**
 * The servers Heat has of each scaled VDU against the replicas the new scale
 * level means: a VDU whose servers vnfm sees (it had VNFCs) and that Heat did
 * not bring to that number fails the scale, so that no scale level is
 * recorded that the stack does not have (a group whose template fixes its
 * size, for one, ignores the nfv parameter).
 */
function checkScaledVnfcs(instanceId: string, vduIds: string[], before: readonly { vduId: string }[], after: readonly { vduId: string }[], replicas: Record<string, number>): void {
  const wrong = vduIds.filter((v) => before.some((c) => c.vduId === v) && after.filter((c) => c.vduId === v).length !== replicas[v]);
  if (wrong.length === 0) return;
  const say = (v: string) => `${v} has ${after.filter((c) => c.vduId === v).length} servers, ${replicas[v]} expected`;
  throw new VnfmError(`after the scale of vnf instance ${instanceId}, ${wrong.map(say).join('; ')}`, {
    hint: 'the Base HOT does not scale these VDUs: each should be in an OS::Heat::AutoScalingGroup whose desired_capacity reads nfv.VDU.<vdu>.desired_capacity, or that OS::Heat::ScalingPolicy resources <aspect>_scale_out / <aspect>_scale_in adjust: the instance keeps the scale level it had',
  });
}

const planHeal: OpenStackPlanner = async (deps, instance, body, source, retry, opts) => {
  const given = (body as HealVnfRequest | undefined)?.vimConnectionInfo;
  const cur = await current(deps, instance, source, given);
  const checked = checkHealRequest(source, body, instance, retry);
  const params = isObject(checked.request.additionalParams) ? checked.request.additionalParams : {};
  const all = params['all'] === true && !checked.request.vnfcInstanceId?.length;
  const wanted = new Set(checked.vnfcs.map((v) => v.id));
  const vnfcs = vnfcsOf(cur.info).filter((v) => wanted.has(v.id));
  const { envs, given: newEnvs } = await environmentsFor(deps, instance, cur.vim, opts, false);
  const hot = await readStackTemplates(cur.pkg.zip, cur.flavour, source, cur.pkg.pkg.id, cur.pkg.vnfd.id);
  // A StandardUserData stack is made again (all: true) with the resources it has; Tacker's heal keeps the parameters.
  const { vduIndexes, extManagedVirtualLinks } = cur.info.metadata.heat;
  const templates = withEnvironments(vduIndexes ? standardTemplates(hot, cur.flavour, vduIndexes, extManagedVirtualLinks) : hot, envs);
  const groups = groupSizes(vduGroups(templates, cur.flavour), cur.info.metadata.vduReplicas, cur.info.metadata.heat.nfv);
  return {
    connect,
    operation: 'HEAL',
    params: { ...checked.request, ...cur.params },
    vim: cur.vim,
    flavour: cur.flavour,
    packageDir: cur.pkg.workDir,
    hooks: ['heal_start', 'heal_end'],
    async run(driver, ctx) {
      if (newEnvs) await saveInstanceEnvironments(deps.home, instance.id, envs);
      await driver.heal(ctx, {
        instanceId: instance.id,
        vnfcs,
        all,
        templates,
        nfv: cur.info.metadata.heat.nfv,
        groups,
        ...(checked.request.cause ? { cause: checked.request.cause } : {}),
      });
      const heat = { ...cur.info.metadata.heat, ...(newEnvs ? { environments: envs.paths } : {}) };
      return {
        ...instance,
        instantiatedVnfInfo: { ...cur.info, ...(await refreshed(driver, ctx, instance.id, cur.flavour, cur.vim.id)), metadata: { ...cur.info.metadata, heat } } as OpenStackInfo,
      };
    },
  };
};

const planTerminate: OpenStackPlanner = async (deps, instance, body, source) => {
  const request = checkTerminateRequest(source, body, instance);
  const cur = await current(deps, instance, source, request.vimConnectionInfo);
  const grace = request.terminationType === 'FORCEFUL' ? 0 : (request.gracefulTerminationTimeout ?? 0);
  return {
    connect,
    operation: 'TERMINATE',
    params: { ...request, ...cur.params },
    vim: cur.vim,
    flavour: cur.flavour,
    packageDir: cur.pkg.workDir,
    hooks: ['terminate_start', 'terminate_end'],
    async run(driver, ctx) {
      await driver.remove(ctx, { instanceId: instance.id, gracePeriodSeconds: grace });
      await removeImages(driver, ctx, instance.id);
      await dropInstanceEnvironments(deps.home, instance.id);
      const { instantiatedVnfInfo: _i, vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
      return { ...rest, instantiationState: 'NOT_INSTANTIATED' };
    },
  };
};

const planChangePackage: OpenStackPlanner = async (deps, instance, body, source, _retry, opts) => {
  const request = checkChangePackageShape(source, body, instance);
  const record = await deps.store.packages.find(request.vnfdId);
  if (!record || record.vnfdId !== request.vnfdId) {
    throw new ValidationError(source, 'vnfdId', `no onboarded package has vnfdId ${request.vnfdId}`, {
      hint: 'onboard it first (vnfm vnfpkg-onboard), then check with vnfm vnfpkg-list',
    });
  }
  if (record.onboardingState !== 'ONBOARDED' || record.operationalState !== 'ENABLED') {
    throw new ValidationError(source, 'vnfdId', `package ${record.id} is ${record.onboardingState}/${record.operationalState}`, {
      hint: `enable it: vnfm vnfpkg-update ${record.id} --operational-state ENABLED`,
    });
  }
  const cur = await current(deps, instance, source, request.vimConnectionInfo);
  const newPkg = await openOnboarded(deps, record);
  const userData = await checkUserData(source, request.additionalParams, { id: record.id, zip: newPkg.zip, hasMember: newPkg.hasMember });
  if (userData?.kind === 'package-class') throw classAtInstantiationOnly(source, userData, record.id);
  if (userData) opts.onEvent?.({ type: 'notice', message: userData.notice });
  const flavour = newPkg.vnfd.flavours[cur.info.flavourId];
  if (!flavour) {
    throw new ValidationError(source, 'vnfdId', `VNFD ${newPkg.vnfd.id} has no flavour ${echo(cur.info.flavourId)}, the flavour vnf instance ${instance.id} runs`, {
      hint: `its flavours: ${Object.keys(newPkg.vnfd.flavours).join(', ')}`,
    });
  }
  const heatRecord = cur.info.metadata.heat;
  const extVirtualLinks = checkExtVirtualLinks(source, (request as ChangeCurrentVnfPkgRequest).extVirtualLinks, flavour) ?? heatRecord.extVirtualLinks;
  const overrides = checkNfvOverrides(source, request.additionalParams) ?? heatRecord.nfvOverrides;
  const replicas = Object.fromEntries(
    Object.keys(flavour.vdus).map((v) => [v, cur.info.metadata.vduReplicas[v] ?? levelReplicas(flavour, cur.info.instantiationLevelId).replicas[v] ?? 1]),
  );
  const { envs, given: newEnvs } = await environmentsFor(deps, instance, cur.vim, opts, false);
  const hot = await readStackTemplates(newPkg.zip, flavour, source, record.id, newPkg.vnfd.id);
  // StandardUserData named, or a StandardUserData stack changed without naming a class: the new templates get the VDUs' indexes.
  const standard = userData ? userData.kind === 'tacker-v2-standard' : heatRecord.vduIndexes !== undefined;
  if (standard && !userData)
    opts.onEvent?.({ type: 'notice', message: "the stack is in Tacker v2's StandardUserData form (a resource per VNFC): the new package's templates are given it too" });
  const vduIndexes = standard
    ? Object.fromEntries(Object.entries(standardIndexes(source, hot.templatePath, flavour, replicas)).map(([v, first]) => [v, heatRecord.vduIndexes?.[v] ?? first]))
    : undefined;
  const extManagedVirtualLinks = vduIndexes ? heatRecord.extManagedVirtualLinks : undefined;
  const templates = withEnvironments(vduIndexes ? standardTemplates(hot, flavour, vduIndexes, extManagedVirtualLinks) : hot, envs);
  const nfvOpts = { ...(extVirtualLinks ? { extVirtualLinks } : {}), ...(overrides ? { overrides } : {}), reads: nfvReads(templates) };
  const standardInputs: StandardInputs = { ...nfvOpts, ...(extManagedVirtualLinks ? { extManagedVirtualLinks } : {}) };
  const nfv = vduIndexes ? standardNfv(templates, flavour, standardInputs) : buildNfvParameter(flavour, replicas, nfvOpts);
  // The new package's images: those the instance has already (same checksum) are used again; the old ones go with the instance.
  const images = planImages(flavour, vduIndexes ? unindexedReads(nfvOpts.reads, flavour) : nfvOpts.reads, overrides, record.id, hot.templatePath);
  images.notices.forEach(noticeOf(opts));
  const groups = groupSizes(vduGroups(templates, flavour), replicas, nfv);
  return {
    connect,
    operation: 'CHANGE_VNFPKG',
    params: { ...request, ...cur.params } as ChangeCurrentVnfPkgRequest,
    vim: cur.vim,
    flavour,
    packageDir: newPkg.workDir,
    hooks: ['change_current_package_start', 'change_current_package_end'],
    async run(driver, ctx) {
      if (newEnvs) await saveInstanceEnvironments(deps.home, instance.id, envs);
      const ids = await uploadImages(driver, ctx, images, { zip: newPkg.zip, packageId: record.id, instanceId: instance.id, vimName: cur.vim.name }, noticeOf(opts));
      const withIds = () => (vduIndexes ? standardNfv(templates, flavour, { ...standardInputs, images: ids }) : buildNfvParameter(flavour, replicas, { ...nfvOpts, images: ids }));
      const sent = Object.keys(ids).length ? withIds() : nfv;
      const resources = await driver.changePackage(ctx, { instanceId: instance.id, templates, nfv: sent, groups });
      return {
        ...instance,
        ...packageIdentity(record),
        instantiatedVnfInfo: {
          ...cur.info,
          ...carriedScaleLevels(flavour, cur.info.scaleStatus),
          ...(await refreshed(driver, ctx, instance.id, flavour, cur.vim.id)),
          resources,
          metadata: {
            ...cur.info.metadata,
            vduReplicas: replicas,
            heat: {
              ...withoutStandard(heatRecord),
              templatePath: hot.templatePath,
              nfv: sent,
              ...(vduIndexes ? { vduIndexes, ...(extManagedVirtualLinks ? { extManagedVirtualLinks } : {}) } : {}),
              ...(extVirtualLinks ? { extVirtualLinks } : {}),
              ...(newEnvs ? { environments: envs.paths } : {}),
            },
          },
        } as OpenStackInfo,
      };
    },
  };
};

/** The way back from a FAILED_TEMP INSTANTIATE (delete the stack), SCALE_OUT (the newest members go) or CHANGE_VNFPKG (the old templates again). */
async function planRollback(deps: LcmDeps, instance: VnfInstance, op: LcmOpOcc, source: string): Promise<OpenStackPlan> {
  const params = op.operationParams as { vimConnectionInfo?: Record<string, VimConnectionInfo> };
  const pkg = await packageOf(deps, instance.vnfPkgId);
  const vim = await resolveOpenStackVim(deps, source, instance.instantiationState === 'NOT_INSTANTIATED' ? params.vimConnectionInfo : undefined, instance);
  const base = { connect, operation: op.operation, params: op.operationParams, vim, packageDir: pkg.workDir };
  if (op.operation === 'INSTANTIATE') {
    return {
      ...base,
      async run(driver, ctx) {
        await driver.remove(ctx, { instanceId: instance.id });
        await removeImages(driver, ctx, instance.id);
        await dropInstanceEnvironments(deps.home, instance.id);
        const { instantiatedVnfInfo: _i, vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
        return { ...rest, instantiationState: 'NOT_INSTANTIATED' };
      },
    };
  }
  const info = openStackInfo(instance);
  const flavour = flavourOf(instance, pkg.vnfd);
  const prior = ((await deps.store.opOccs.priorState(op.id))?.instantiatedVnfInfo as OpenStackInfo | undefined) ?? info;
  const envs = await loadInstanceEnvironments(deps.home, instance.id);
  const hot = await readStackTemplates(pkg.zip, flavour, source, pkg.pkg.id, pkg.vnfd.id);
  // A StandardUserData stack goes back to the resources (and parameters) it had before the operation.
  const { vduIndexes, extManagedVirtualLinks } = prior.metadata.heat;
  const templates = withEnvironments(vduIndexes ? standardTemplates(hot, flavour, vduIndexes, extManagedVirtualLinks) : hot, envs);
  // The groups back at the sizes recorded before the operation (a group sized by signals gets its size written into the template).
  const groups = groupSizes(vduGroups(templates, flavour), prior.metadata.vduReplicas, prior.metadata.heat.nfv);
  if (op.operation === 'SCALE') {
    const aspect = flavour.aspects[(op.operationParams as ScaleVnfRequest).aspectId];
    const vduIds = Object.keys(aspect?.vduDeltas ?? {});
    if (vduIndexes) {
      return {
        ...base,
        flavour,
        async run(driver, ctx) {
          await driver.changePackage(ctx, { instanceId: instance.id, templates, nfv: prior.metadata.heat.nfv });
          return { ...instance, instantiatedVnfInfo: { ...prior, ...(await refreshed(driver, ctx, instance.id, flavour, vim.id)) } };
        },
      };
    }
    return {
      ...base,
      flavour,
      async run(driver, ctx) {
        // How far the scale-out got is what Heat has now, not what the record says: the newest members go.
        const now = await driver.listVnfcs(ctx, { instanceId: instance.id, vdus: cpsByVdu(flavour) });
        const remove = Object.fromEntries(vduIds.map((v) => [v, Math.max(0, now.filter((c) => c.vduId === v).length - (prior.metadata.vduReplicas[v] ?? 0))]));
        await driver.scale(ctx, { instanceId: instance.id, nfv: prior.metadata.heat.nfv, remove, groups });
        return { ...instance, instantiatedVnfInfo: { ...prior, ...(await refreshed(driver, ctx, instance.id, flavour, vim.id)) } };
      },
    };
  }
  return {
    ...base,
    flavour,
    async run(driver, ctx) {
      const resources = await driver.changePackage(ctx, { instanceId: instance.id, templates, nfv: prior.metadata.heat.nfv, groups });
      return { ...instance, instantiatedVnfInfo: { ...prior, ...(await refreshed(driver, ctx, instance.id, flavour, vim.id)), resources } };
    },
  };
}

const noticeOf = (opts: OperationOptions) => (message: string) => opts.onEvent?.({ type: 'notice', message });
/** Its infra-driver, from the lcm dependencies (which may lack it). */
async function connect(deps: LcmDeps, vim: VimConnection): Promise<OpenStackInfraDriver> {
  if (!deps.openstackDriver) throw new VnfmError(`VIM "${vim.name}" is an OpenStack VIM, and this vnfm was set up without the OpenStack infra-driver`);
  return deps.openstackDriver(vim);
}

export const openStackPlanner: Planner<OpenStackInfraDriver> = {
  name: 'openstack',
  registeredType: 'openstack',
  vimTypes: OPENSTACK_VIM_TYPES,
  vims: openStackVims,
  connect,
  instantiate: planInstantiate,
  scale: planScale,
  heal: planHeal,
  terminate: planTerminate,
  changePackage: planChangePackage,
  rollback: planRollback,
  describe: describeOpenStack,
  liveScale: liveOpenStackScale,
  adopt: planOpenStackAdoption,
  modify: { keepsVim: 'moves an OpenStack VNF to another VIM, which vnf-update does not do (its Heat stack stays where it is)' },
  changeExtConn: openStackExtConn(connect),
};
