/**
 * Change external connectivity (SOL003 ChangeExtVnfConnectivityRequest,
 * Tacker `openstack vnflcm change-ext-conn`), an occurrence CHANGE_EXT_CONN.
 * As in Tacker v2 (vnflcm_driver_v2.change_ext_conn_process), an OpenStack
 * VNF only: the request's extVirtualLinks replace the recorded links of the
 * same id (others are added), the connection points they name get new
 * entries in the stack's `nfv` parameter (network, port, fixed IPs), and the
 * stack is updated with it; everything else in `nfv` stays. A Kubernetes VNF
 * is refused before anything is recorded ("not support vim type" in Tacker).
 * Rollback updates the stack with the `nfv` recorded before.
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
import type { LcmOperation, VnfInstance } from '../model/lcm.js';
import { instanceVim } from './modify.js';
import { buildNfvParameter, cpsByVdu, type HeatStackRecord } from './heat-nfv.js';
import { openOnboarded } from './package-content.js';
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
  additionalParams?: Json;
}

function checkRequest(source: string, body: unknown, cps: Set<string>): ChangeExtVnfConnectivityRequest {
  if (!isObject(body)) throw new ValidationError(source, undefined, 'is not a JSON object (a ChangeExtVnfConnectivityRequest)');
  for (const key of Object.keys(body)) {
    if (!FIELDS.includes(key)) throw new ValidationError(source, key, 'is not a field of a ChangeExtVnfConnectivityRequest', { hint: `its fields: ${FIELDS.join(', ')}` });
  }
  if (body['vimConnectionInfo'] !== undefined)
    throw new ValidationError(source, 'vimConnectionInfo', 'is not supported here', { hint: 'move the instance to another VIM with vnfm vnf-update first' });
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

function heatOf(instance: VnfInstance): HeatStackRecord {
  const heat = (instance.instantiatedVnfInfo?.metadata as { heat?: HeatStackRecord } | undefined)?.heat;
  if (!heat) throw new UsageError(`vnf instance ${instance.id} has no Heat stack recorded`, { hint: 'it was not instantiated on an OpenStack VIM' });
  return heat;
}

/** Refuses what cannot change its external connectivity, before anything is recorded. */
function assertOpenStack(deps: LcmDeps, instance: VnfInstance): void {
  if (instance.instantiationState !== 'INSTANTIATED') {
    throw new ConflictError(`vnf instance ${instance.id} is NOT_INSTANTIATED: it has no external connectivity to change`, {
      hint: `instantiate it first: vnfm vnf-instantiate ${instance.id} FILE`,
    });
  }
  if (plannerOf(deps, instance) !== openStackPlanner) {
    throw new UsageError(`vnf instance ${instance.id} is a Kubernetes VNF: changing external connectivity is not supported for Kubernetes VNFs (nor by Tacker)`, {
      hint: 'a CNF connects through Services and network attachments in its manifests: change them with vnfm vnf-change-package',
    });
  }
}

async function planChangeExtConn(deps: LcmDeps, instance: VnfInstance, body: unknown, source: string): Promise<OpenStackPlan> {
  assertOpenStack(deps, instance);
  const pkg = await openOnboarded(deps, deps.store.packages.get(instance.vnfPkgId));
  const flavour = flavourOf(instance, pkg.vnfd);
  const request = checkRequest(source, body, new Set(Object.values(cpsByVdu(flavour)).flat()));
  const heat = heatOf(instance);
  const vim = await instanceVim(deps, instance, source);
  const ids = new Set(request.extVirtualLinks.map((l) => l['id']));
  const links = [...(heat.extVirtualLinks ?? []).filter((l) => !isObject(l) || !ids.has(l['id'])), ...request.extVirtualLinks];
  const CP = buildNfvParameter(flavour, {}, { extVirtualLinks: request.extVirtualLinks }).CP;
  const nfv = { ...heat.nfv, CP: { ...heat.nfv.CP, ...CP } };
  return {
    operation: CHANGE_EXT_CONN,
    connect: openStackPlanner.connect,
    params: request as never,
    vim,
    flavour,
    packageDir: pkg.workDir,
    hooks: ['change_external_connectivity_start', 'change_external_connectivity_end'],
    async run(driver, ctx) {
      await driver.scale(ctx, { instanceId: instance.id, nfv, remove: {} });
      const info = instance.instantiatedVnfInfo!;
      const fresh = vnfcRecords(await driver.listVnfcs(ctx, { instanceId: instance.id, vdus: cpsByVdu(flavour) }), vim.id);
      return { ...instance, instantiatedVnfInfo: { ...info, ...fresh, metadata: { ...info.metadata, heat: { ...heat, nfv, extVirtualLinks: links } } as typeof info.metadata } };
    },
  };
}

/** CHANGE_EXT_CONN with a ChangeExtVnfConnectivityRequest (OpenStack VNFs). */
export async function changeExtConn(deps: LcmDeps, vnfRef: string, body: unknown, opts: OperationOptions = {}): Promise<OperationResult> {
  const instance = deps.store.instances.get(vnfRef);
  assertOpenStack(deps, instance);
  return runOperation(deps, instance, () => planChangeExtConn(deps, instance, body, opts.source ?? 'request'), opts);
}

export async function retryExtConn(deps: LcmDeps, opRef: string, opts: OperationOptions): Promise<OperationResult> {
  const first = deps.store.opOccs.get(opRef);
  sweepStaleLock(deps, first.vnfInstanceId, opts.onEvent);
  const op = deps.store.opOccs.get(first.id);
  assertFailedTemp(op, 'retried');
  const instance = deps.store.instances.get(op.vnfInstanceId);
  const source = opts.source ?? `occurrence ${op.id}`;
  const plan = await planChangeExtConn(deps, instance, op.operationParams, source);
  const consented = await retryConsent(plan, opts, source);
  const resumed = resumeOccurrence(deps, op.id, 'PROCESSING');
  opts.onEvent?.({ type: 'occurrence', opOcc: resumed });
  return execute(deps, resumed, { ...plan, params: op.operationParams, consented }, 'PROCESSING', 'COMPLETED', opts);
}

/** The stack updated with the `nfv` recorded before the change (the instance's, which changes only on COMPLETED). */
export async function rollbackExtConn(deps: LcmDeps, opRef: string, opts: OperationOptions): Promise<OperationResult> {
  const first = deps.store.opOccs.get(opRef);
  sweepStaleLock(deps, first.vnfInstanceId, opts.onEvent);
  const op = deps.store.opOccs.get(first.id);
  assertFailedTemp(op, 'rolled back');
  const instance = deps.store.instances.get(op.vnfInstanceId);
  const source = opts.source ?? `occurrence ${op.id}`;
  const heat = heatOf(instance);
  const vim = await instanceVim(deps, instance, source);
  const pkg = await openOnboarded(deps, deps.store.packages.get(instance.vnfPkgId));
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
  const resumed = resumeOccurrence(deps, op.id, 'ROLLING_BACK');
  opts.onEvent?.({ type: 'occurrence', opOcc: resumed });
  return execute(deps, resumed, plan, 'ROLLING_BACK', 'ROLLED_BACK', opts);
}
