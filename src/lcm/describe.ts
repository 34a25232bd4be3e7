/**
 * vnf-describe: an INSTANTIATED instance as it is at its VIM now, read by
 * the planner of its VIM type (live objects of a CNF, the resources of a
 * Heat stack); and an instance whose first instantiate stopped short
 * (FAILED_TEMP, or FAILED after op-fail), from what that operation's
 * journal records as created. Writes nothing.
 */
import { ConflictError, UsageError } from '../errors.js';
import type { LcmOpOcc, VimConnection, VimConnectionInfo, VnfInstance } from '../model/lcm.js';
import type { VnfLiveState } from '../model/live.js';
import type { ResourceRef } from '../infra/driver.js';
import { journalResources, type LcmDeps } from './engine.js';
import { plannerOf } from './planners/index.js';
import { describeJournalled } from './planners/kubernetes-live.js';
import { instanceVim, kubernetesVims, resolveVimConnection, vimLookup } from './vim-connection.js';

/** Refuses an instance with nothing at a VIM. */
export function assertInstantiated(instance: VnfInstance, command: string): void {
  if (instance.instantiationState === 'INSTANTIATED' && instance.instantiatedVnfInfo) return;
  throw new ConflictError(`vnf instance ${instance.vnfInstanceName ?? instance.id} is NOT_INSTANTIATED: nothing of it runs at a VIM for ${command} to read`, {
    hint: `instantiate it first: vnfm vnf-instantiate ${instance.vnfInstanceName ?? instance.id} --request-file FILE`,
  });
}

/** The instance's last operation, when it stopped short: FAILED_TEMP, or FAILED (op-fail). */
async function stoppedOperation(deps: LcmDeps, instance: VnfInstance): Promise<LcmOpOcc | undefined> {
  let last: LcmOpOcc | undefined;
  for (const op of await deps.store.opOccs.list({ vnfInstanceId: instance.id })) last = op;
  return last && (last.operationState === 'FAILED_TEMP' || last.operationState === 'FAILED') ? last : undefined;
}

function lastOperationOf(op: LcmOpOcc, fromJournal: boolean): NonNullable<VnfLiveState['lastOperation']> {
  return {
    id: op.id,
    operation: op.operation,
    operationState: op.operationState,
    ...(op.error ? { error: `${op.error.title}: ${op.error.detail}` } : {}),
    fromJournal,
  };
}

export async function describeVnf(deps: LcmDeps, ref: string, signal: AbortSignal = new AbortController().signal): Promise<VnfLiveState> {
  const instance = await deps.store.instances.get(ref);
  const stopped = await stoppedOperation(deps, instance);
  const left = await stoppedInstantiate(deps, instance, 'vnf-describe');
  if (left) {
    const state = await describeJournalled(deps, instance, left, signal);
    return { ...state, lastOperation: lastOperationOf(left.op, true) };
  }
  assertInstantiated(instance, 'vnf-describe');
  const planner = await plannerOf(deps, instance);
  if (!planner.describe) throw new UsageError(`vnf-describe cannot read instances on ${planner.name} VIMs`);
  const state = await planner.describe(deps, instance, signal);
  return stopped ? { ...state, lastOperation: lastOperationOf(stopped, false) } : state;
}

/** What a first instantiate that stopped short left at a Kubernetes VIM, as its journal records it. */
export interface StoppedInstantiate {
  op: LcmOpOcc;
  vim: VimConnection;
  resources: ResourceRef[];
  namespace: string;
  vimType: 'kubernetes' | 'helm';
}

/**
 * A first instantiate that stopped short (FAILED_TEMP, or FAILED after
 * op-fail): the instance records nothing at the VIM, the journal of the
 * operation records what it created (what a rollback deletes), on the VIM
 * its request named. Undefined for an instance instantiated, or whose last
 * operation is no such instantiate; refused on other VIMs than Kubernetes.
 */
export async function stoppedInstantiate(deps: LcmDeps, instance: VnfInstance, command: string): Promise<StoppedInstantiate | undefined> {
  if (instance.instantiationState === 'INSTANTIATED' && instance.instantiatedVnfInfo) return undefined;
  const op = await stoppedOperation(deps, instance);
  if (op?.operation !== 'INSTANTIATE') return undefined;
  const name = instance.vnfInstanceName ?? instance.id;
  const planner = await plannerOf(deps, instance, undefined, op);
  if (planner.name !== 'kubernetes' && planner.name !== 'helm') {
    throw new ConflictError(
      `vnf instance ${name} is NOT_INSTANTIATED: its instantiate is ${op.operationState} (occurrence ${op.id}), and ${command} reads what it left only on Kubernetes VIMs`,
      {
        hint: `vnfm op-show ${op.id.slice(0, 8)} says why it stopped; vnfm op-rollback ${op.id.slice(0, 8)} removes what it created`,
      },
    );
  }
  const params = op.operationParams as { vimConnectionInfo?: Record<string, VimConnectionInfo>; additionalParams?: { namespace?: unknown } };
  const vim = await resolveVimConnection(command, params.vimConnectionInfo, vimLookup(deps), () => instanceVim(deps, instance, command, kubernetesVims));
  const resources = journalResources(await deps.store.opOccs.journal(op.id));
  const given = params.additionalParams?.namespace;
  const namespace = typeof given === 'string' && given ? given : (resources.find((r) => r.namespace)?.namespace ?? vim.spec.projectName ?? 'default');
  return { op, vim, resources, namespace, vimType: planner.name };
}
