/**
 * The contract between the operation engine (`lcm/`) and the infra-drivers.
 * The engine turns a request, the VNFD and the instance into concrete driver
 * inputs; a driver talks to one kind of VIM and reports what it does. Drivers
 * never import the engine.
 */
import type { JournalStep, ResourceRef } from '../model/resources.js';

export type { JournalStep, ResourceRef, Vnfc } from '../model/resources.js';

/** Where a driver records its steps; the engine persists each call before returning. */
export interface Journal {
  record(step: JournalStep): void;
  /** Every step of this occurrence so far, including those of earlier attempts (retry). */
  steps(): readonly JournalStep[];
}

/** Progress for the user: which resource waits for what. */
export interface DriverEvent {
  resource?: ResourceRef;
  /** e.g. "created", "waiting for 2/3 replicas ready", "ready", "deleted". */
  message: string;
  /** True once the resource has reached what the step waits for. */
  done?: boolean;
}

export interface DriverContext {
  journal: Journal;
  report(event: DriverEvent): void;
  /** Aborted on Ctrl-C and on --timeout; drivers stop waiting and throw. */
  signal: AbortSignal;
}
