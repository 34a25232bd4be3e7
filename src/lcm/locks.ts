/**
 * An instance's lock and what a dead process left behind: who holds the
 * lock and whether it still runs, turning a dead holder's occurrences
 * FAILED_TEMP, and refusing an operation while another one holds or blocks
 * the instance.
 */
import { ConflictError } from '../errors.js';
import type { LcmOpOcc, LcmOperationState } from '../model/lcm.js';
import type { VnfLock } from '../store/index.js';
import type { LcmDeps, LcmEvent } from './deps.js';
import { holderOf, holderStatus, thisHost, type HolderStatus } from './lock-holder.js';

export const ACTIVE: LcmOperationState[] = ['STARTING', 'PROCESSING', 'ROLLING_BACK'];

export const nowIso = (deps: LcmDeps) => deps.now().toISOString();
export const pidOf = (deps: LcmDeps) => deps.pid ?? process.pid;
const hostOf = (deps: LcmDeps) => deps.host ?? thisHost();

/** The lock row for an occurrence this process starts or resumes. */
export function lockFor(deps: LcmDeps, vnfInstanceId: string, opId: string): VnfLock {
  return { vnfInstanceId, opId, acquiredAt: nowIso(deps), ...holderOf(pidOf(deps), hostOf(deps)) };
}

/** Whether the holder of a lock still runs, as far as this host can tell. */
export function lockStatus(deps: LcmDeps, lock: VnfLock): HolderStatus {
  return holderStatus(lock, hostOf(deps));
}

/** "vnfm pid P on host H since T": the holder of a lock, for messages. */
export function describeHolder(lock: VnfLock): string {
  return `vnfm pid ${lock.pid} on host ${lock.hostName ?? '(not recorded)'} since ${lock.acquiredAt}`;
}

/**
 * Turns what a dead process left behind into FAILED_TEMP: its lock, and any
 * occurrence still marked as running that holds no lock.
 */
export async function sweepStaleLock(deps: LcmDeps, vnfInstanceId: string, onEvent?: (e: LcmEvent) => void): Promise<LcmOpOcc[]> {
  const ops = deps.store.opOccs;
  const swept = await ops.exclusive(async () => {
    const out: LcmOpOcc[] = [];
    const lock = await ops.lock(vnfInstanceId);
    const status = lock && lockStatus(deps, lock);
    if (lock && status?.state === 'gone') {
      const op = await ops.find(lock.opId);
      await ops.releaseLock(vnfInstanceId, lock.opId);
      if (op && ACTIVE.includes(op.operationState)) {
        out.push(
          await ops.setState(op.id, 'FAILED_TEMP', nowIso(deps), {
            pid: null,
            error: {
              status: 500,
              title: 'vnfm process died',
              detail: `the vnfm process (pid ${lock.pid} on host ${lock.hostName ?? '(not recorded)'}) running this ${op.operation} stopped before finishing it (killed or crashed: ${status.why}); the instance may be partly changed`,
            },
          }),
        );
      }
    }
    const held = await ops.lock(vnfInstanceId);
    for (const op of await ops.unfinished(vnfInstanceId)) {
      if (ACTIVE.includes(op.operationState) && held?.opId !== op.id) {
        out.push(
          await ops.setState(op.id, 'FAILED_TEMP', nowIso(deps), {
            pid: null,
            error: { status: 500, title: 'vnfm process died', detail: `this ${op.operation} was left ${op.operationState} by a vnfm process that is gone` },
          }),
        );
      }
    }
    return out;
  });
  for (const op of swept) {
    onEvent?.({ type: 'notice', message: `occurrence ${op.id} (${op.operation}) was left running by a vnfm process that is gone: now FAILED_TEMP` });
  }
  return swept;
}

/** Refuses when another process holds the lock or an occurrence of the instance waits in FAILED_TEMP. */
export async function assertInstanceFree(deps: LcmDeps, vnfInstanceId: string, exceptOpId?: string): Promise<void> {
  const ops = deps.store.opOccs;
  const lock = await ops.lock(vnfInstanceId);
  if (lock) {
    const op = await ops.find(lock.opId);
    const unchecked = lockStatus(deps, lock).state !== 'running';
    // A lease (store/operation-leases.ts) says how long the holder is trusted without this host seeing it.
    const lease = (lock as { leaseExpiresAt?: string; heartbeatAt?: string }).leaseExpiresAt;
    const beat = (lock as { heartbeatAt?: string }).heartbeatAt;
    throw new ConflictError(`vnf instance ${vnfInstanceId} is locked by ${describeHolder(lock)} (operation ${op?.operation ?? 'unknown'}, occurrence ${lock.opId})`, {
      hint: unchecked
        ? lease
          ? `that vnfm holds a lease on the instance until ${lease} (last heartbeat ${beat ?? 'unknown'}), renewed while it runs: follow it with vnfm op-watch ${lock.opId}; once the lease runs out without a heartbeat, the next command takes it for gone and the occurrence becomes FAILED_TEMP; if you know it is gone now: vnfm op-fail --force ${lock.opId}`
          : `this host cannot check that process: wait for it there (vnfm op-show ${lock.opId}); if it is gone for good, release the instance: vnfm op-fail --force ${lock.opId}`
        : `wait for it to finish; follow it with: vnfm op-watch ${lock.opId}`,
    });
  }
  const blocking = (await ops.unfinished(vnfInstanceId)).find((o) => o.id !== exceptOpId);
  if (blocking) {
    throw new ConflictError(`vnf instance ${vnfInstanceId} has a ${blocking.operationState} ${blocking.operation} occurrence (${blocking.id}) that must be resolved first`, {
      hint: resolutionHint(blocking),
    });
  }
}

export function resolutionHint(op: Pick<LcmOpOcc, 'id' | 'operation' | 'operationParams'>): string {
  const choices = [`retry it: vnfm op-retry ${op.id}`];
  if (canRollBack(op)) choices.push(`undo it: vnfm op-rollback ${op.id}`);
  choices.push(`give up on it: vnfm op-fail ${op.id}`);
  return choices.join('; or ');
}

export function canRollBack(op: Pick<LcmOpOcc, 'operation' | 'operationParams'>): boolean {
  // MODIFY_INFO and CHANGE_EXT_CONN (modify.ts, ext-conn.ts) are recorded under their SOL003 names, outside LcmOperation.
  const named = op.operation as string;
  // ADOPT (adopt.ts): rolled back, it forgets the instance and leaves the VIM as it is.
  if (op.operation === 'INSTANTIATE' || op.operation === 'CHANGE_VNFPKG' || named === 'MODIFY_INFO' || named === 'CHANGE_EXT_CONN' || named === 'ADOPT') return true;
  return op.operation === 'SCALE' && (op.operationParams as { type?: string }).type === 'SCALE_OUT';
}
