/**
 * Modify VNF information (SOL003 VnfInfoModificationRequest, Tacker
 * `openstack vnflcm update`), an LCM operation occurrence MODIFY_INFO:
 * vnfInstanceName and vnfInstanceDescription are replaced; metadata,
 * extensions and vnfConfigurableProperties are JSON merge patches (RFC 7396);
 * a vimConnectionInfo entry replaces the instance's VIM (the entry of its
 * key, as Tacker merges them; a key is never removed); a new vnfdId moves
 * the instance to another package of the same provider and product. On a
 * Kubernetes VNF that is Tacker v2's container update: the containers of the Pods, Deployments, ReplicaSets and
 * DaemonSets the instance deployed take the images the new package's
 * manifests of the same kind and name give them (container by container
 * name), and the ConfigMaps/Secrets of the files the request's
 * metadata.configmap_secret_paths lists replace theirs (the workloads using
 * them restart, a ReplicaSet's Pods deleted for it to make new ones), as Tacker's container_update_mgmt_v2.py does. The VNFD's
 * modify_information_start/end hooks run around it, a package script being
 * given the new package (Tacker's `new_csar_dir`).
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, echo, UsageError, ValidationError } from '../errors.js';
import type { HookContext, ManagementDriver } from '../mgmt/index.js';
import { noopManagementDriver } from '../mgmt/noop.js';
import { checkName } from '../store/names.js';
import { packageIdentity, type VnfPackage } from '../model/package.js';
import {
  assertFailedTemp,
  assertInstanceFree,
  execute,
  resumeOccurrence,
  runOperation,
  sweepStaleLock,
  type KubernetesPlan,
  type LcmDeps,
  type OperationOptions,
  type OperationResult,
  type Plan,
} from './engine.js';
import type { LcmOpOcc, LcmOperation, VimConnection, VimConnectionInfo, VnfInfoModificationRequest, VnfInstance } from '../model/lcm.js';
import { retryConsent, retryOpOcc as retryOther, rollbackOpOcc as rollbackOther } from './operations.js';
import { openOnboarded } from './package-content.js';
import { flavourOf } from './requests.js';
import { instanceVim, mergeVimConnectionInfo, requestVimConnectionInfo, withVimFields, type MergedVim } from './vim-merge.js';
import { jsonMergePatch } from './merge-patch.js';
import { plannerOf } from './planners/index.js';

/** RFC 7396 JSON merge patch, as Tacker's inst_utils.json_merge_patch applies a modify request. */
export { jsonMergePatch };
import { retryExtConn, rollbackExtConn } from './ext-conn.js';
import { forgetAdoption } from './adopt.js';

/**
 * The occurrence's operation. LcmOperation names the operations the
 * infra-drivers plan; MODIFY_INFO is planned here alone, so it is recorded
 * under its SOL003 name without joining their planner tables.
 */
const MODIFY_INFO = 'MODIFY_INFO' as LcmOperation;

const FIELDS = [
  'vnfInstanceName',
  'vnfInstanceDescription',
  'vnfdId',
  'vnfPkgId',
  'vnfConfigurableProperties',
  'metadata',
  'extensions',
  'vimConnectionInfo',
  'vnfcInfoModifications',
];
const HINT =
  'a VnfInfoModificationRequest has vnfInstanceName, vnfInstanceDescription, vnfdId, metadata, extensions, vnfConfigurableProperties, vimConnectionInfo, vnfcInfoModifications';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The request's shape, as Tacker v2's VnfInfoModificationRequest_V200 schema checks it (no other fields). */
export function checkModifyRequest(source: string, body: unknown): VnfInfoModificationRequest {
  if (!isObject(body)) throw new ValidationError(source, undefined, 'is not a JSON object (a VnfInfoModificationRequest)', { hint: HINT });
  for (const key of Object.keys(body)) {
    if (!FIELDS.includes(key)) throw new ValidationError(source, key, 'is not a field of a VnfInfoModificationRequest', { hint: HINT });
  }
  const mods = body['vnfcInfoModifications'];
  if (mods !== undefined) {
    if (!Array.isArray(mods)) throw new ValidationError(source, 'vnfcInfoModifications', 'must be an array of {id, vnfcConfigurableProperties}');
    mods.forEach((m, i) => {
      if (!isObject(m) || typeof m['id'] !== 'string' || !isObject(m['vnfcConfigurableProperties'])) {
        throw new ValidationError(source, `vnfcInfoModifications[${i}]`, 'must be {"id": VNFC_ID, "vnfcConfigurableProperties": {...}}', {
          hint: 'the ids are the vnfcInfo ids vnfm vnf-show prints',
        });
      }
      const extra = Object.keys(m).find((k) => k !== 'id' && k !== 'vnfcConfigurableProperties');
      if (extra) throw new ValidationError(source, `vnfcInfoModifications[${i}].${extra}`, 'is not a field of a VnfcInfoModifications');
    });
  }
  for (const key of ['vnfInstanceName', 'vnfInstanceDescription']) {
    const v = body[key];
    if (v !== undefined && v !== null && typeof v !== 'string') throw new ValidationError(source, key, `must be a string (or null), not ${echo(JSON.stringify(v))}`);
  }
  // The rules vnf-create applies (null removes the name).
  if (typeof body['vnfInstanceName'] === 'string') checkName('instance', body['vnfInstanceName'], { file: source, field: 'vnfInstanceName' });
  for (const key of ['vnfdId', 'vnfPkgId']) {
    const v = body[key];
    if (v !== undefined && (typeof v !== 'string' || v === '')) throw new ValidationError(source, key, 'must be a non-empty string (it cannot be removed)');
  }
  for (const key of ['vnfConfigurableProperties', 'metadata', 'extensions']) {
    const v = body[key];
    if (v !== undefined && !isObject(v)) throw new ValidationError(source, key, "must be an object (KeyValuePairs): a JSON merge patch of the instance's " + key);
  }
  const request = { ...body } as VnfInfoModificationRequest;
  if (body['vimConnectionInfo'] !== undefined) request.vimConnectionInfo = requestVimConnectionInfo(source, body['vimConnectionInfo']);
  return request;
}

/** The package a new vnfdId (or Tacker v1's vnfPkgId) names, checked as Tacker checks it. */
async function targetPackage(deps: LcmDeps, source: string, request: VnfInfoModificationRequest, instance: VnfInstance): Promise<VnfPackage | undefined> {
  const field = request.vnfdId !== undefined ? 'vnfdId' : 'vnfPkgId';
  const ref = request.vnfdId ?? request.vnfPkgId;
  if (ref === undefined || ref === instance.vnfdId || ref === instance.vnfPkgId) return undefined;
  const pkg = await deps.store.packages.find(ref);
  if (!pkg || (field === 'vnfdId' ? pkg.vnfdId !== ref : pkg.id !== ref)) {
    throw new ValidationError(source, field, `no onboarded package has ${field} ${echo(ref)}`, {
      hint: 'onboard it first (vnfm vnfpkg-onboard), then check with vnfm vnfpkg-list',
    });
  }
  if (pkg.vnfdId === instance.vnfdId) return undefined;
  if (pkg.onboardingState !== 'ONBOARDED' || pkg.operationalState !== 'ENABLED') {
    throw new ValidationError(source, field, `package ${pkg.id} (vnfdId ${pkg.vnfdId}) is ${pkg.onboardingState}/${pkg.operationalState}, not ENABLED`, {
      hint: `enable it: vnfm vnfpkg-update ${pkg.id} --operational-state ENABLED`,
    });
  }
  if (pkg.vnfProvider !== instance.vnfProvider || pkg.vnfProductName !== instance.vnfProductName) {
    throw new ValidationError(
      source,
      field,
      `vnfdId ${pkg.vnfdId} is a package of "${pkg.vnfProvider}" / "${pkg.vnfProductName}", and the instance is "${instance.vnfProvider}" / "${instance.vnfProductName}": a modification moves an instance only to another version of its own VNF (the same vnfProvider and vnfProductName)`,
      { hint: 'for another VNF, terminate this one and create an instance of the other package (vnfm vnf-create VNFD_ID)' },
    );
  }
  return pkg;
}

/** A new vnfInstanceName must be free before anything is recorded (exit 4); the instance's write checks it again in its transaction. */
async function checkNameFree(deps: LcmDeps, request: VnfInfoModificationRequest, instance: VnfInstance): Promise<void> {
  const name = request.vnfInstanceName;
  if (typeof name === 'string' && name !== instance.vnfInstanceName) await deps.store.instances.assertNameFree(name, instance.id);
}

/** The instance's recorded attributes after the request (what Tacker's modify_info_process sets). */
function modified(instance: VnfInstance, request: VnfInfoModificationRequest, pkg: VnfPackage | undefined): VnfInstance {
  const out: VnfInstance = { ...instance };
  if (request.vnfInstanceName !== undefined) {
    if (request.vnfInstanceName === null) delete out.vnfInstanceName;
    else out.vnfInstanceName = request.vnfInstanceName;
  }
  if (request.vnfInstanceDescription !== undefined) out.vnfInstanceDescription = request.vnfInstanceDescription ?? '';
  if (pkg) {
    Object.assign(out, packageIdentity(pkg));
  }
  for (const key of ['metadata', 'extensions', 'vnfConfigurableProperties'] as const) {
    if (request[key] === undefined) continue;
    const merged = jsonMergePatch(instance[key] ?? {}, request[key]) as Json;
    if (Object.keys(merged).length) out[key] = merged;
    else delete out[key];
  }
  const info = out.instantiatedVnfInfo;
  if (request.vnfcInfoModifications?.length && info) {
    const vnfcInfo = info.vnfcInfo.map((v) => {
      const mod = request.vnfcInfoModifications!.filter((m) => m.id === v.id);
      if (!mod.length) return v;
      const props = mod.reduce((acc, m) => jsonMergePatch(acc, m.vnfcConfigurableProperties) as Json, (v.vnfcConfigurableProperties ?? {}) as Json);
      return { ...v, vnfcConfigurableProperties: props };
    });
    out.instantiatedVnfInfo = { ...info, vnfcInfo };
  }
  return out;
}

/** vnfcInfoModifications must name VNFCs the instance has (Tacker: "vnfcInstanceId(...) does not exist"). */
function checkVnfcIds(source: string, request: VnfInfoModificationRequest, instance: VnfInstance): void {
  const ids = new Set((instance.instantiatedVnfInfo?.vnfcInfo ?? []).map((v) => v.id));
  request.vnfcInfoModifications?.forEach((m, i) => {
    if (!ids.has(m.id)) {
      throw new ValidationError(source, `vnfcInfoModifications[${i}].id`, `the instance has no VNFC ${echo(m.id)}`, {
        hint: `its vnfcInfo ids: vnfm vnf-show ${instance.id} -o json | jq -r '.instantiatedVnfInfo.vnfcInfo[].id'`,
      });
    }
  });
}

/** Hands the new package to the hooks (Tacker scripts get it as `new_csar_dir`). */
function withNewPackage(deps: LcmDeps, newPackageDir: () => (() => Promise<string>) | undefined): LcmDeps {
  const mgmt: ManagementDriver = deps.mgmt ?? noopManagementDriver;
  const wrapped: ManagementDriver = {
    runHook: async (ctx: HookContext) => {
      const unpack = newPackageDir();
      // Unpacked only for a hook that has an implementation to read it.
      return mgmt.runHook(unpack && ctx.implementation ? { ...ctx, newPackageDir: await unpack() } : ctx);
    },
  };
  if (mgmt.prepare) wrapped.prepare = (input) => mgmt.prepare!(input);
  return { ...deps, mgmt: wrapped };
}

interface ModifyPlan {
  plan: Plan;
  newPackageDir?: () => Promise<string>;
}

async function planModify(deps: LcmDeps, instance: VnfInstance, body: unknown, source: string, onNotice?: (message: string) => void): Promise<ModifyPlan> {
  const request = checkModifyRequest(source, body);
  checkVnfcIds(source, request, instance);
  await checkNameFree(deps, request, instance);
  if (instance.instantiationState !== 'INSTANTIATED')
    throw new ConflictError(`vnf instance ${instance.id} is no longer INSTANTIATED`, { hint: 'give up on the occurrence: vnfm op-fail OP' });
  const pkgRecord = await targetPackage(deps, source, request, instance);
  const oldPkg = await openOnboarded(deps, await deps.store.packages.get(instance.vnfPkgId));
  const newPkg = pkgRecord ? await openOnboarded(deps, pkgRecord) : undefined;
  const flavour = flavourOf(instance, oldPkg.vnfd);
  const planner = await plannerOf(deps, instance);
  let vim: VimConnection;
  let vimFields: MergedVim['vimFields'];
  let params: VnfInfoModificationRequest = request;
  if (request.vimConnectionInfo) {
    const keepsVim = planner.modify?.keepsVim;
    const refuseMove = (field: string) => {
      if (!keepsVim) return;
      throw new ValidationError(source, field, keepsVim, { hint: `leave vimConnectionInfo out for a VNF on a ${planner.name} VIM` });
    };
    const merged = await mergeVimConnectionInfo(deps, instance, source, request.vimConnectionInfo as Record<string, VimConnectionInfo>, { body, onNotice, replacing: refuseMove });
    vim = merged.vim;
    vimFields = merged.vimFields;
    params = { ...request, vimConnectionInfo: merged.recorded };
  } else {
    vim = await instanceVim(deps, instance, source);
  }
  const after = (base: VnfInstance): VnfInstance => withVimFields(modified(base, request, pkgRecord), vimFields);
  const common = {
    operation: MODIFY_INFO,
    params: params as never,
    vim,
    flavour,
    packageDir: oldPkg.workDir,
    hooks: ['modify_information_start', 'modify_information_end'] as ['modify_information_start', 'modify_information_end'],
  };
  const packageChange = planner.modify?.packageChange;
  if (!newPkg || !packageChange) {
    // No VIM work: Tacker's modify_info_process changes the records only.
    const plan: Plan = { ...common, connect: planner.connect, run: async () => after(instance) };
    return { plan, ...(newPkg ? { newPackageDir: newPkg.workDir } : {}) };
  }
  const configPaths = request.metadata?.['configmap_secret_paths'];
  const work = await packageChange(deps, { instance, source, current: oldPkg, target: newPkg, images: 'new', flavour, vim, configPaths, now: deps.now().toISOString() });
  const plan: Plan = { ...common, connect: work.connect, run: async (driver, ctx) => after(await work.run(driver, ctx)) };
  return { plan, newPackageDir: newPkg.workDir };
}

/** Runs a VnfInfoModificationRequest on the instance: an occurrence MODIFY_INFO, COMPLETED or FAILED_TEMP. */
export async function modifyVnfInfo(deps: LcmDeps, vnfRef: string, body: unknown, opts: OperationOptions = {}): Promise<OperationResult> {
  const instance = await deps.store.instances.get(vnfRef);
  const source = opts.source ?? 'request';
  if (instance.instantiationState === 'NOT_INSTANTIATED') return await modifyRecordOnly(deps, instance, body, source, opts);
  let newPackageDir: (() => Promise<string>) | undefined;
  const run = async () => {
    const made = await planModify(deps, instance, body, source, (message) => opts.onEvent?.({ type: 'notice', message }));
    newPackageDir = made.newPackageDir;
    return made.plan;
  };
  // The hooks see the new package, known once the plan is made.
  return runOperation(
    withNewPackage(deps, () => newPackageDir),
    instance,
    run,
    opts,
  );
}

/**
 * A NOT_INSTANTIATED instance has no VIM and no flavour: the occurrence is
 * recorded COMPLETED with the instance's new attributes, no hook runs (as in
 * Tacker, whose scripts are found through the flavour), and
 * vimConnectionInfo is refused (Tacker: "cannot be modified in NOT_INSTANTIATED").
 */
async function modifyRecordOnly(deps: LcmDeps, instance: VnfInstance, body: unknown, source: string, opts: OperationOptions): Promise<OperationResult> {
  await sweepStaleLock(deps, instance.id, opts.onEvent);
  const request = checkModifyRequest(source, body);
  if (request.vimConnectionInfo) {
    throw new ConflictError(`${source}: vimConnectionInfo cannot be modified while vnf instance ${instance.id} is NOT_INSTANTIATED (as in Tacker)`, {
      hint: `give it with the instantiation: vnfm vnf-instantiate ${instance.id} FILE`,
    });
  }
  checkVnfcIds(source, request, instance);
  await checkNameFree(deps, request, instance);
  const pkg = await targetPackage(deps, source, request, instance);
  const ops = deps.store.opOccs;
  const op = await ops.exclusive(async () => {
    await assertInstanceFree(deps, instance.id);
    const now = deps.now().toISOString();
    const current = await deps.store.instances.get(instance.id);
    const occ: LcmOpOcc = {
      id: randomUUID(),
      vnfInstanceId: instance.id,
      operation: MODIFY_INFO,
      operationState: 'COMPLETED',
      stateEnteredTime: now,
      startTime: now,
      operationParams: request as never,
      journal: [],
      resourceChanges: { affectedVnfcs: [] },
      isAutomaticInvocation: false,
    };
    await ops.insert(occ, { vnfPkgId: current.vnfPkgId, vnfdId: current.vnfdId, instantiationState: current.instantiationState });
    await deps.store.instances.update({ ...modified(current, request, pkg), updatedAt: now }, { checkName: true });
    return await ops.get(occ.id);
  });
  opts.onEvent?.({ type: 'occurrence', opOcc: op });
  return { opOcc: op, vnfInstance: await deps.store.instances.get(instance.id) };
}

/** op-retry: a MODIFY_INFO is planned again from its recorded request; other operations as before. */
export async function retryOpOcc(deps: LcmDeps, opRef: string, opts: OperationOptions = {}): Promise<OperationResult> {
  const first = await deps.store.opOccs.get(opRef);
  if ((first.operation as string) === 'CHANGE_EXT_CONN') return retryExtConn(deps, opRef, opts);
  if ((first.operation as string) === 'ADOPT') {
    throw new UsageError(`occurrence ${first.id} is an ADOPT, which is not retried`, {
      hint: `forget it (vnfm op-rollback ${first.id}; the VIM is left as it is), then run vnfm vnf-adopt again`,
    });
  }
  if ((first.operation as string) !== 'MODIFY_INFO') return retryOther(deps, opRef, opts);
  await sweepStaleLock(deps, first.vnfInstanceId, opts.onEvent);
  const op = await deps.store.opOccs.get(first.id);
  assertFailedTemp(op, 'retried');
  const instance = await deps.store.instances.get(op.vnfInstanceId);
  const source = opts.source ?? `occurrence ${op.id}`;
  const made = await planModify(deps, instance, op.operationParams, source);
  const consented = await retryConsent(made.plan, opts, source);
  const resumed = await resumeOccurrence(deps, op.id, 'PROCESSING');
  opts.onEvent?.({ type: 'occurrence', opOcc: resumed });
  return execute(
    withNewPackage(deps, () => made.newPackageDir),
    resumed,
    { ...made.plan, params: op.operationParams, consented },
    'PROCESSING',
    'COMPLETED',
    opts,
  );
}

/**
 * op-rollback: a MODIFY_INFO changed no record before it completed (Tacker's
 * modify_info_rollback does nothing); a container update's images go back to
 * the current package's. ROLLED_BACK, no hooks.
 */
export async function rollbackOpOcc(deps: LcmDeps, opRef: string, opts: OperationOptions = {}): Promise<OperationResult> {
  const first = await deps.store.opOccs.get(opRef);
  if ((first.operation as string) === 'CHANGE_EXT_CONN') return rollbackExtConn(deps, opRef, opts);
  if ((first.operation as string) === 'ADOPT') return forgetAdoption(deps, opRef, opts);
  if ((first.operation as string) !== 'MODIFY_INFO') return rollbackOther(deps, opRef, opts);
  await sweepStaleLock(deps, first.vnfInstanceId, opts.onEvent);
  const op = await deps.store.opOccs.get(first.id);
  assertFailedTemp(op, 'rolled back');
  const instance = await deps.store.instances.get(op.vnfInstanceId);
  const source = opts.source ?? `occurrence ${op.id}`;
  const request = op.operationParams as VnfInfoModificationRequest;
  const vim = await instanceVim(deps, instance, source);
  const oldPkg = await openOnboarded(deps, await deps.store.packages.get(instance.vnfPkgId));
  const planner = await plannerOf(deps, instance);
  const base = { operation: MODIFY_INFO, params: op.operationParams, vim, packageDir: oldPkg.workDir };
  const moved = (request.vnfdId ?? request.vnfPkgId) !== undefined && instance.instantiatedVnfInfo;
  const packageChange = planner.modify?.packageChange;
  let plan: Plan;
  if (!moved || !packageChange) {
    plan = { ...base, connect: planner.connect, run: async () => instance };
  } else {
    // The images of the current package again, on what the failed update left.
    const flavour = flavourOf(instance, oldPkg.vnfd);
    const work = await packageChange(deps, { instance, source, current: oldPkg, target: oldPkg, images: 'old', flavour, vim });
    plan = { ...base, flavour, ...work };
  }
  const resumed = await resumeOccurrence(deps, op.id, 'ROLLING_BACK');
  opts.onEvent?.({ type: 'occurrence', opOcc: resumed });
  return execute(deps, resumed, plan, 'ROLLING_BACK', 'ROLLED_BACK', opts);
}
