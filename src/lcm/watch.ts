/**
 * Following an operation that another vnfm runs — on this machine or, on a
 * shared store, on another one: its journal steps and state changes as the
 * store records them, until it ends. Polls the store (reads never wait on a
 * lock); a holder that is gone (its process, or its lease on another
 * machine) is recognised as any command recognises it, and the occurrence
 * becomes FAILED_TEMP.
 */
import type { JournalStep } from '../model/resources.js';
import { sweepStaleLock, type LcmDeps } from './engine.js';
import { getOpOcc } from './instances.js';

type OpOcc = Awaited<ReturnType<typeof getOpOcc>>;

export interface WatchOptions {
  /** Each journal step recorded since the last look, in order. */
  onStep(step: JournalStep): void;
  /** The occurrence when its state changes (and once at the start). */
  onState(op: OpOcc): void;
  /** Waits between looks (the cli's timer; tests pass their own). */
  sleep(): Promise<void>;
  signal?: AbortSignal;
}

const FINAL = new Set(['COMPLETED', 'FAILED', 'ROLLED_BACK', 'FAILED_TEMP']);

/** Resolves with the occurrence in its final state (or FAILED_TEMP, which waits for an operator). */
export async function watchOpOcc(deps: LcmDeps, ref: string, opts: WatchOptions): Promise<OpOcc> {
  let op = await getOpOcc(deps, ref);
  let seen = 0;
  let state = '';
  for (;;) {
    const steps = await deps.store.opOccs.journal(op.id);
    for (const step of steps.slice(seen)) opts.onStep(step);
    seen = steps.length;
    if (op.operationState !== state) {
      state = op.operationState;
      opts.onState(op);
    }
    // FAILED_TEMP counts as the end only once no one holds the instance for this occurrence (not between a retry's steps).
    if (FINAL.has(op.operationState) && (await deps.store.opOccs.lock(op.vnfInstanceId))?.opId !== op.id) return op;
    if (opts.signal?.aborted) return op;
    await opts.sleep();
    await sweepStaleLock(deps, op.vnfInstanceId);
    op = await getOpOcc(deps, op.id);
  }
}
