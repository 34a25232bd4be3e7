/**
 * The LCM operations as use cases: each plans the request with the planner
 * of the instance's VIM type (planners/) and runs the plan through the
 * engine. Retry plans again from the recorded request; rollback asks the
 * planner for the way back.
 */
import { UsageError } from '../errors.js';
import {
  assertFailedTemp,
  canRollBack,
  execute,
  resumeOccurrence,
  runOperation,
  sweepStaleLock,
  type LcmDeps,
  type OperationOptions,
  type OperationResult,
  type Plan,
} from './engine.js';
import type { InstantiateVnfRequest, LcmOperation, VnfInstance } from '../model/lcm.js';
import { planOf, plannerOf } from './planners/index.js';
import { instantiateWarnings } from './replicas.js';
import { normalizeRequest, v1VimNotices } from './requests.js';
import { vimLookup } from './vim-connection.js';
import { packageScriptRefusal, packageScriptsOf } from '../mgmt/hook-scripts.js';

function start(operation: LcmOperation) {
  return async (deps: LcmDeps, vnfRef: string, request: unknown, opts: OperationOptions = {}): Promise<OperationResult> => {
    const instance = await deps.store.instances.get(vnfRef);
    const source = opts.source ?? 'request';
    return runOperation(
      deps,
      instance,
      async () => {
        const body = normalizeRequest(source, request);
        for (const message of await v1VimNotices(vimLookup(deps), request)) opts.onEvent?.({ type: 'notice', message });
        const plan = await planOf(await plannerOf(deps, instance, body), operation)(deps, instance, body, source, false, opts);
        if (operation === 'INSTANTIATE' && plan.flavour) {
          const levelId = (plan.params as InstantiateVnfRequest).instantiationLevelId;
          for (const message of instantiateWarnings(plan.flavour, levelId)) opts.onEvent?.({ type: 'notice', message });
        }
        return plan;
      },
      opts,
    );
  };
}

/**
 * Plans INSTANTIATE of `instance` — the request checked against the package,
 * the VIM and the definition files — without running it or recording
 * anything: the instance need not be recorded yet.
 */
export async function checkInstantiation(deps: LcmDeps, instance: VnfInstance, request: unknown, opts: OperationOptions = {}): Promise<void> {
  const source = opts.source ?? 'request';
  const body = normalizeRequest(source, request);
  await (await plannerOf(deps, instance, body)).instantiate(deps, instance, body, source, false, opts);
}

/** INSTANTIATE with an InstantiateVnfRequest. */
export const instantiateVnf: (deps: LcmDeps, vnfRef: string, request: unknown, opts?: OperationOptions) => Promise<OperationResult> = start('INSTANTIATE');
/** SCALE with a ScaleVnfRequest. */
export const scaleVnf: (deps: LcmDeps, vnfRef: string, request: unknown, opts?: OperationOptions) => Promise<OperationResult> = start('SCALE');
/** HEAL with a HealVnfRequest (all VNFCs when it names none). */
export const healVnf: (deps: LcmDeps, vnfRef: string, request: unknown, opts?: OperationOptions) => Promise<OperationResult> = start('HEAL');
/** TERMINATE with a TerminateVnfRequest. */
export const terminateVnf: (deps: LcmDeps, vnfRef: string, request: unknown, opts?: OperationOptions) => Promise<OperationResult> = start('TERMINATE');
/** CHANGE_VNFPKG with a ChangeCurrentVnfPkgRequest. */
export const changeVnfPackage: (deps: LcmDeps, vnfRef: string, request: unknown, opts?: OperationOptions) => Promise<OperationResult> = start('CHANGE_VNFPKG');

/** Runs a FAILED_TEMP occurrence's operation again from its recorded request; the drivers pick up where it stopped. */
export async function retryOpOcc(deps: LcmDeps, opRef: string, opts: OperationOptions = {}): Promise<OperationResult> {
  const first = await deps.store.opOccs.get(opRef);
  await sweepStaleLock(deps, first.vnfInstanceId, opts.onEvent);
  const op = await deps.store.opOccs.get(first.id);
  assertFailedTemp(op, 'retried');
  const instance = await deps.store.instances.get(op.vnfInstanceId);
  const source = opts.source ?? `occurrence ${op.id}`;
  const plan = await planOf(await plannerOf(deps, instance, op.operationParams, op), op.operation)(deps, instance, op.operationParams, source, true, opts);
  const consented = await retryConsent(plan, opts, source);
  // Keep the request as first recorded (the plan may have normalised it).
  const resumed = await resumeOccurrence(deps, op.id, 'PROCESSING');
  opts.onEvent?.({ type: 'occurrence', opOcc: resumed });
  return execute(deps, resumed, { ...plan, params: op.operationParams, consented }, 'PROCESSING', 'COMPLETED', opts);
}

/**
 * A retry runs the operation's package scripts again: the operator allows
 * them again (flag or prompt), asked before the occurrence is resumed, so a
 * refusal leaves it FAILED_TEMP as it was.
 */
export async function retryConsent(plan: Plan, opts: OperationOptions, source: string): Promise<boolean> {
  const scripts = plan.hooks ? packageScriptsOf(plan.hooks, plan.flavour?.hooks ?? {}) : [];
  if (!scripts.length || opts.allowPackageScripts === true) return opts.allowPackageScripts === true;
  const consent = opts.allowPackageScripts;
  if (typeof consent === 'function' && (await consent(scripts))) return true;
  throw packageScriptRefusal(source, scripts);
}

/** Undoes a FAILED_TEMP INSTANTIATE, SCALE_OUT or CHANGE_VNFPKG: ROLLING_BACK → ROLLED_BACK (FAILED_TEMP again if the rollback fails). */
export async function rollbackOpOcc(deps: LcmDeps, opRef: string, opts: OperationOptions = {}): Promise<OperationResult> {
  const first = await deps.store.opOccs.get(opRef);
  await sweepStaleLock(deps, first.vnfInstanceId, opts.onEvent);
  const op = await deps.store.opOccs.get(first.id);
  assertFailedTemp(op, 'rolled back');
  if (!canRollBack(op)) {
    const what = op.operation === 'SCALE' ? 'SCALE_IN' : op.operation;
    throw new UsageError(`occurrence ${op.id} is a ${what}, which cannot be rolled back`, {
      hint: `retry it (vnfm op-retry ${op.id}) or give up on it (vnfm op-fail ${op.id})`,
    });
  }
  const instance = await deps.store.instances.get(op.vnfInstanceId);
  const source = opts.source ?? `occurrence ${op.id}`;
  const plan = await (await plannerOf(deps, instance, op.operationParams, op)).rollback(deps, instance, op, source);
  const resumed = await resumeOccurrence(deps, op.id, 'ROLLING_BACK');
  opts.onEvent?.({ type: 'occurrence', opOcc: resumed });
  return execute(deps, resumed, plan, 'ROLLING_BACK', 'ROLLED_BACK', opts);
}
