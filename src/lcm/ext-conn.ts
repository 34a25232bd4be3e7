/**
 * Change external connectivity (SOL003 ChangeExtVnfConnectivityRequest,
 * Tacker `openstack vnflcm change-ext-conn`), an occurrence CHANGE_EXT_CONN.
 * As in Tacker v2 (vnflcm_driver_v2.change_ext_conn_process), an OpenStack
 * VNF only: the request's extVirtualLinks replace the recorded links of the
 * same id (others are added), the connection points they name get new
 * entries in the stack's `nfv` parameter (network, port, fixed IPs), and the
 * stack is updated with it; everything else in `nfv` stays. A Kubernetes VNF
 * is refused before anything is recorded ("not support vim type" in Tacker).
 * vimConnectionInfo in the v2 map form is merged into the instance as
 * Tacker v2's change_ext_conn_process merges it (vim-merge.ts, as vnf-update
 * merges it) and the stack is updated on the VIM it gives, which the instance
 * then records; in the v1 array form it is not used, as in Tacker v1 (whose
 * change_ext_conn runs on the instance's VIM). Rollback updates the stack
 * with the `nfv` recorded before, on the instance's VIM, which changes only
 * when the change completes.
 */
import { ConflictError, echo, UsageError, ValidationError } from '../errors.js';
import {
  assertFailedTemp,
  execute,
  resumeOccurrence,
  runOperation,
  sweepStaleLock,
  type LcmDeps,
  type OpenStackPlan,
  type OperationOptions,
  type OperationResult,
} from './engine.js';
import type { LcmOperation, VimConnection, VimConnectionInfo, VnfInstance } from '../model/lcm.js';
import { instanceVim, mergeVimConnectionInfo, requestVimConnectionInfo, withVimFields, type MergedVim } from './vim-merge.js';
import { buildNfvParameter, cpsByVdu, type HeatStackRecord } from './heat-nfv.js';
import { openOnboarded } from './package-content.js';
import { readStackTemplates } from './heat-files.js';
import { standardExtConnCps } from './heat-standard.js';
import { plannerOf } from './planners/index.js';
import { openStackPlanner } from './planners/openstack.js';
import { retryConsent } from './operations.js';
import { flavourOf } from './requests.js';
import { vnfcRecords } from '../model/vnfcs.js';

/** Recorded under its SOL003 name, outside the operations the planner tables know (as MODIFY_INFO). */
const CHANGE_EXT_CONN = 'CHANGE_EXT_CONN' as LcmOperation;
const FIELDS = ['extVirtualLinks', 'vimConnectionInfo', 'additionalParams', 'extensions'];

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

interface ChangeExtVnfConnectivityRequest {
  extVirtualLinks: Json[];
  /** The v2 map (merged into the instance), or Tacker v1's array (not used). */
  vimConnectionInfo?: Record<string, VimConnectionInfo> | Json[];
  additionalParams?: Json;
}

function checkRequest(source: string, body: unknown, cps: Set<string>): ChangeExtVnfConnectivityRequest {
  if (!isObject(body)) throw new ValidationError(source, undefined, 'is not a JSON object (a ChangeExtVnfConnectivityRequest)');
  for (const key of Object.keys(body)) {
    if (!FIELDS.includes(key)) throw new ValidationError(source, key, 'is not a field of a ChangeExtVnfConnectivityRequest', { hint: `its fields: ${FIELDS.join(', ')}` });
  }
  // Its shape is checked before anything is recorded; the VIM it gives is looked up when the change is planned.
  if (body['vimConnectionInfo'] !== undefined) requestVimConnectionInfo(source, body['vimConnectionInfo']);
  const links = body['extVirtualLinks'];
  if (!Array.isArray(links) || links.length === 0) throw new ValidationError(source, 'extVirtualLinks', 'is required: the external virtual links to connect (a non-empty list)');
  links.forEach((link, i) => {
    const field = `extVirtualLinks[${i}]`;
    if (!isObject(link) || typeof link['id'] !== 'string' || typeof link['resourceId'] !== 'string' || !Array.isArray(link['extCps'])) {
      throw new ValidationError(source, field, 'must be {"id": ..., "resourceId": NETWORK_ID, "extCps": [...]}');
    }
    (link['extCps'] as unknown[]).forEach((cp, j) => {
      const cpdId = isObject(cp) ? cp['cpdId'] : undefined;
      if (typeof cpdId !== 'string' || !cps.has(cpdId)) {
        throw new ValidationError(source, `${field}.extCps[${j}].cpdId`, `${echo(String(cpdId))} is not an external connection point of the flavour`, {
          hint: `choose from: ${[...cps].join(', ')}`,
        });
      }
    });
  });
  if (body['additionalParams'] !== undefined && !isObject(body['additionalParams'])) throw new ValidationError(source, 'additionalParams', 'must be an object');
  return body as unknown as ChangeExtVnfConnectivityRequest;
}

const noticeTo = (opts: OperationOptions) => (message: string) => opts.onEvent?.({ type: 'notice', message });

/**
 * The VIM the change runs on, what the instance records of it afterwards,
 * and the request's vimConnectionInfo as the occurrence records it: the v2
 * map merged into the instance; the v1 array kept (without what Tacker v1
 * does not read, credentials among it) and not used.
 */
async function vimOfChange(
  deps: LcmDeps,
  instance: VnfInstance,
  source: string,
  request: ChangeExtVnfConnectivityRequest,
  onNotice?: (message: string) => void,
): Promise<{ vim: VimConnection; vimFields?: MergedVim['vimFields']; vimConnectionInfo?: ChangeExtVnfConnectivityRequest['vimConnectionInfo'] }> {
  const given = request.vimConnectionInfo;
  if (given === undefined) return { vim: await instanceVim(deps, instance, source) };
  if (Array.isArray(given)) {
    const vim = await instanceVim(deps, instance, source);
    onNotice?.(
      `vimConnectionInfo in the v1 (array) form is not used by a change of external connectivity, as in Tacker v1: the stack is updated on the instance's VIM, "${vim.name}"${vim.id ? ` (${vim.id})` : ''}; ` +
        'to move the instance to another VIM with the change, give vimConnectionInfo in the v2 map form',
    );
    const kept = Object.entries(requestVimConnectionInfo(source, given)).map(([id, entry]) => ({ id, ...entry }));
    return { vim, vimConnectionInfo: kept };
  }
  const merged = await mergeVimConnectionInfo(deps, instance, source, requestVimConnectionInfo(source, given), onNotice ? { onNotice } : {});
  return { vim: merged.vim, ...(merged.vimFields ? { vimFields: merged.vimFields } : {}), vimConnectionInfo: merged.recorded };
}

function heatOf(instance: VnfInstance): HeatStackRecord {
  const heat = (instance.instantiatedVnfInfo?.metadata as { heat?: HeatStackRecord } | undefined)?.heat;
  if (!heat) throw new UsageError(`vnf instance ${instance.id} has no Heat stack recorded`, { hint: 'it was not instantiated on an OpenStack VIM' });
  return heat;
}

/** Refuses what cannot change its external connectivity, before anything is recorded. */
async function assertOpenStack(deps: LcmDeps, instance: VnfInstance): Promise<void> {
  if (instance.instantiationState !== 'INSTANTIATED') {
    throw new ConflictError(`vnf instance ${instance.id} is NOT_INSTANTIATED: it has no external connectivity to change`, {
      hint: `instantiate it first: vnfm vnf-instantiate ${instance.id} FILE`,
    });
  }
  if ((await plannerOf(deps, instance)) !== openStackPlanner) {
    throw new UsageError(`vnf instance ${instance.id} is a Kubernetes VNF: changing external connectivity is not supported for Kubernetes VNFs (nor by Tacker)`, {
      hint: 'a CNF connects through Services and network attachments in its manifests: change them with vnfm vnf-change-package',
    });
  }
}

async function planChangeExtConn(deps: LcmDeps, instance: VnfInstance, body: unknown, source: string, onNotice?: (message: string) => void): Promise<OpenStackPlan> {
  await assertOpenStack(deps, instance);
  const pkg = await openOnboarded(deps, await deps.store.packages.get(instance.vnfPkgId));
  const flavour = flavourOf(instance, pkg.vnfd);
  const request = checkRequest(source, body, new Set(Object.values(cpsByVdu(flavour)).flat()));
  const heat = heatOf(instance);
  const { vim, vimFields, vimConnectionInfo } = await vimOfChange(deps, instance, source, request, onNotice);
  const ids = new Set(request.extVirtualLinks.map((l) => l['id']));
  const links = [...(heat.extVirtualLinks ?? []).filter((l) => !isObject(l) || !ids.has(l['id'])), ...request.extVirtualLinks];
  // A StandardUserData stack reads each connection point per index (VDU1_CP1-0): Tacker's change_ext_conn fills those.
  const CP = heat.vduIndexes
    ? standardExtConnCps(await readStackTemplates(pkg.zip, flavour, source, pkg.pkg.id, pkg.vnfd.id), flavour, heat.vduIndexes, request.extVirtualLinks)
    : buildNfvParameter(flavour, {}, { extVirtualLinks: request.extVirtualLinks }).CP;
  const nfv = { ...heat.nfv, CP: { ...heat.nfv.CP, ...CP } };
  return {
    operation: CHANGE_EXT_CONN,
    connect: openStackPlanner.connect,
    params: { ...request, ...(vimConnectionInfo ? { vimConnectionInfo } : {}) } as never,
    vim,
    flavour,
    packageDir: pkg.workDir,
    hooks: ['change_external_connectivity_start', 'change_external_connectivity_end'],
    async run(driver, ctx) {
      await driver.scale(ctx, { instanceId: instance.id, nfv, remove: {} });
      const info = instance.instantiatedVnfInfo!;
      const fresh = vnfcRecords(await driver.listVnfcs(ctx, { instanceId: instance.id, vdus: cpsByVdu(flavour) }), vim.id);
      const metadata = { ...info.metadata, heat: { ...heat, nfv, extVirtualLinks: links } } as typeof info.metadata;
      return withVimFields({ ...instance, instantiatedVnfInfo: { ...info, ...fresh, metadata } }, vimFields);
    },
  };
}

/** CHANGE_EXT_CONN with a ChangeExtVnfConnectivityRequest (OpenStack VNFs). */
export async function changeExtConn(deps: LcmDeps, vnfRef: string, body: unknown, opts: OperationOptions = {}): Promise<OperationResult> {
  const instance = await deps.store.instances.get(vnfRef);
  await assertOpenStack(deps, instance);
  return runOperation(deps, instance, () => planChangeExtConn(deps, instance, body, opts.source ?? 'request', noticeTo(opts)), opts);
}

export async function retryExtConn(deps: LcmDeps, opRef: string, opts: OperationOptions): Promise<OperationResult> {
  const first = await deps.store.opOccs.get(opRef);
  await sweepStaleLock(deps, first.vnfInstanceId, opts.onEvent);
  const op = await deps.store.opOccs.get(first.id);
  assertFailedTemp(op, 'retried');
  const instance = await deps.store.instances.get(op.vnfInstanceId);
  const source = opts.source ?? `occurrence ${op.id}`;
  const plan = await planChangeExtConn(deps, instance, op.operationParams, source, noticeTo(opts));
  const consented = await retryConsent(plan, opts, source);
  const resumed = await resumeOccurrence(deps, op.id, 'PROCESSING');
  opts.onEvent?.({ type: 'occurrence', opOcc: resumed });
  return execute(deps, resumed, { ...plan, params: op.operationParams, consented }, 'PROCESSING', 'COMPLETED', opts);
}

/** The stack updated with the `nfv` recorded before the change (the instance's, which changes only on COMPLETED). */
export async function rollbackExtConn(deps: LcmDeps, opRef: string, opts: OperationOptions): Promise<OperationResult> {
  const first = await deps.store.opOccs.get(opRef);
  await sweepStaleLock(deps, first.vnfInstanceId, opts.onEvent);
  const op = await deps.store.opOccs.get(first.id);
  assertFailedTemp(op, 'rolled back');
  const instance = await deps.store.instances.get(op.vnfInstanceId);
  const source = opts.source ?? `occurrence ${op.id}`;
  const heat = heatOf(instance);
  const vim = await instanceVim(deps, instance, source);
  const pkg = await openOnboarded(deps, await deps.store.packages.get(instance.vnfPkgId));
  const flavour = flavourOf(instance, pkg.vnfd);
  const plan: OpenStackPlan = {
    operation: CHANGE_EXT_CONN,
    connect: openStackPlanner.connect,
    params: op.operationParams,
    vim,
    flavour,
    packageDir: pkg.workDir,
    async run(driver, ctx) {
      await driver.scale(ctx, { instanceId: instance.id, nfv: heat.nfv, remove: {} });
      return instance;
    },
  };
  const resumed = await resumeOccurrence(deps, op.id, 'ROLLING_BACK');
  opts.onEvent?.({ type: 'occurrence', opOcc: resumed });
  return execute(deps, resumed, plan, 'ROLLING_BACK', 'ROLLED_BACK', opts);
}
