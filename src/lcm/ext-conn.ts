/**
 * Change external connectivity (SOL003 ChangeExtVnfConnectivityRequest,
 * Tacker `openstack vnflcm change-ext-conn`), an occurrence CHANGE_EXT_CONN,
 * planned by the planner of the instance's VIM (planners/openstack-ext-conn.ts
 * for an OpenStack VNF, as in Tacker v2); a planner without it refuses before
 * anything is recorded ("not support vim type" in Tacker), saying why.
 */
import { ConflictError, echo, UsageError, ValidationError } from '../errors.js';
import { assertFailedTemp, execute, resumeOccurrence, runOperation, sweepStaleLock, type LcmDeps, type OperationOptions, type OperationResult, type Plan } from './engine.js';
import type { VimConnection, VimConnectionInfo, VnfInstance } from '../model/lcm.js';
import { plannerOf } from './planners/index.js';
import type { ExtConnWork } from './planners/planner.js';
import { retryConsent } from './operations.js';
import { instanceVim, mergeVimConnectionInfo, requestVimConnectionInfo, withVimFields, type MergedVim } from './vim-merge.js';
import { cpsByVdu } from './heat-nfv.js';
import { openOnboarded } from './package-content.js';
import { flavourOf } from './requests.js';

const FIELDS = ['extVirtualLinks', 'vimConnectionInfo', 'additionalParams', 'extensions'];

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface ChangeExtVnfConnectivityRequest {
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

/** The request checked against the package, the VIM it runs on, and the planner's plan of the change. */
async function planChange(deps: LcmDeps, instance: VnfInstance, work: ExtConnWork<unknown>, body: unknown, source: string, opts: OperationOptions): Promise<Plan> {
  const pkg = await openOnboarded(deps, await deps.store.packages.get(instance.vnfPkgId));
  const flavour = flavourOf(instance, pkg.vnfd);
  const request = checkRequest(source, body, new Set(Object.values(cpsByVdu(flavour)).flat()));
  const { vim, vimFields, vimConnectionInfo } = await vimOfChange(deps, instance, source, request, noticeTo(opts));
  return work.plan(deps, {
    instance,
    source,
    pkg,
    flavour,
    extVirtualLinks: request.extVirtualLinks,
    vim,
    params: { ...request, ...(vimConnectionInfo ? { vimConnectionInfo } : {}) } as never,
    recordVim: (after) => withVimFields(after, vimFields),
  });
}

/** The instance's planner's change-ext-conn, or the refusal of what cannot change its external connectivity. */
async function extConnOf(deps: LcmDeps, instance: VnfInstance): Promise<ExtConnWork<unknown>> {
  if (instance.instantiationState !== 'INSTANTIATED') {
    throw new ConflictError(`vnf instance ${instance.id} is NOT_INSTANTIATED: it has no external connectivity to change`, {
      hint: `instantiate it first: vnfm vnf-instantiate ${instance.id} FILE`,
    });
  }
  const planner = await plannerOf(deps, instance);
  if (planner.changeExtConn) return planner.changeExtConn;
  const refusal = planner.extConnRefusal ?? { reason: `is a VNF on a ${planner.name} VIM`, hint: 'change its connections with vnfm vnf-change-package' };
  throw new UsageError(`vnf instance ${instance.id} ${refusal.reason}`, { hint: refusal.hint });
}

/** CHANGE_EXT_CONN with a ChangeExtVnfConnectivityRequest. */
export async function changeExtConn(deps: LcmDeps, vnfRef: string, body: unknown, opts: OperationOptions = {}): Promise<OperationResult> {
  const instance = await deps.store.instances.get(vnfRef);
  const work = await extConnOf(deps, instance);
  return runOperation(deps, instance, () => planChange(deps, instance, work, body, opts.source ?? 'request', opts), opts);
}

export async function retryExtConn(deps: LcmDeps, opRef: string, opts: OperationOptions): Promise<OperationResult> {
  const first = await deps.store.opOccs.get(opRef);
  await sweepStaleLock(deps, first.vnfInstanceId, opts.onEvent);
  const op = await deps.store.opOccs.get(first.id);
  assertFailedTemp(op, 'retried');
  const instance = await deps.store.instances.get(op.vnfInstanceId);
  const source = opts.source ?? `occurrence ${op.id}`;
  const plan = await planChange(deps, instance, await extConnOf(deps, instance), op.operationParams, source, opts);
  const consented = await retryConsent(plan, opts, source);
  const resumed = await resumeOccurrence(deps, op.id, 'PROCESSING');
  opts.onEvent?.({ type: 'occurrence', opOcc: resumed });
  return execute(deps, resumed, { ...plan, params: op.operationParams, consented }, 'PROCESSING', 'COMPLETED', opts);
}

/** The way back from a FAILED_TEMP change, planned by the instance's planner. */
export async function rollbackExtConn(deps: LcmDeps, opRef: string, opts: OperationOptions): Promise<OperationResult> {
  const first = await deps.store.opOccs.get(opRef);
  await sweepStaleLock(deps, first.vnfInstanceId, opts.onEvent);
  const op = await deps.store.opOccs.get(first.id);
  assertFailedTemp(op, 'rolled back');
  const instance = await deps.store.instances.get(op.vnfInstanceId);
  const work = await extConnOf(deps, instance);
  const source = opts.source ?? `occurrence ${op.id}`;
  const vim = await instanceVim(deps, instance, source);
  const pkg = await openOnboarded(deps, await deps.store.packages.get(instance.vnfPkgId));
  const plan = await work.rollback(deps, { instance, op, source, vim, pkg, flavour: flavourOf(instance, pkg.vnfd) });
  const resumed = await resumeOccurrence(deps, op.id, 'ROLLING_BACK');
  opts.onEvent?.({ type: 'occurrence', opOcc: resumed });
  return execute(deps, resumed, plan, 'ROLLING_BACK', 'ROLLED_BACK', opts);
}
