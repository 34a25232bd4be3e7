/**
 * CREATE then INSTANTIATE as one use case (Tacker's `openstack vnflcm create
 * --I`). Unlike tackerclient, which creates the instance and then sends the
 * request, the request is planned first against the instance-to-be, so a
 * request the checks refuse creates nothing.
 */
import type { LcmDeps, OperationOptions, OperationResult } from './engine.js';
import { createVnf, deleteVnfs, draftVnf, type CreateVnfOptions } from './instances.js';
import type { VnfInstance } from '../model/lcm.js';
import { checkInstantiation, instantiateVnf } from './operations.js';

export interface CreateAndInstantiateOptions extends OperationOptions {
  /** Called once the instance is recorded, before its INSTANTIATE starts. */
  onCreated?: (instance: VnfInstance) => void;
}

export async function createAndInstantiateVnf(deps: LcmDeps, create: CreateVnfOptions, request: unknown, opts: CreateAndInstantiateOptions = {}): Promise<OperationResult> {
  const { onCreated, ...run } = opts;
  await checkInstantiation(deps, await draftVnf(deps, create), request, run);
  // createVnf checks the package and the name again: another process may have changed them meanwhile.
  const instance = await createVnf(deps, create);
  onCreated?.(instance);
  try {
    return await instantiateVnf(deps, instance.id, request, run);
  } catch (err) {
    // Stopped before its occurrence was recorded (the VIM unreachable at the
    // pre-flight check, package scripts not allowed, Ctrl-C): nothing reached
    // the VIM, so the instance goes too. Once started, it stays with its
    // FAILED_TEMP occurrence for op-retry, op-rollback or op-fail.
    if ((await deps.store.opOccs.list({ vnfInstanceId: instance.id })).length === 0) {
      try {
        await deleteVnfs(deps, [instance]);
      } catch {
        // The instance stays NOT_INSTANTIATED and listed; the error that stopped the instantiate is the one to report.
      }
    }
    throw err;
  }
}
