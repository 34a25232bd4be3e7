/**
 * The statements a shared store has on the wire, so that a stopped command
 * (Ctrl-C, SIGTERM, --timeout) does not wait for another client's write
 * lock past a grace: the store's answers race the stop.
 */
import type pg from 'pg';
import { InterruptedError, TerminatedError, TimeoutError } from '../../errors.js';

/** After an interruption, how long a statement already on the wire may still take (an answer on its way), and each later one. */
const INTERRUPT_GRACE_MS = 3_000;
const AFTER_GRACE_MS = 500;

/** A statement on the wire: when it was sent, and how to give up on it. */
interface Wait {
  started: number;
  /** When it is given up, once the command was interrupted. */
  timer?: NodeJS.Timeout;
  giveUp(err: Error): void;
}

export class StatementWaits {
  readonly #waits = new Set<Wait>();
  #interruption: { reason: Error; at: number } | undefined;

  /** `display`: the database URL as it may be shown. */
  constructor(private readonly display: string) {}

  /**
   * A statement's answer, unless the command is interrupted (interrupt)
   * while it waits: then, past a grace for an answer on its way, the wait is
   * given up with the interruption's error and the connection closed (the
   * server rolls its transaction back).
   */
  answer(client: pg.PoolClient, pending: Promise<pg.QueryResult>): Promise<pg.QueryResult> {
    return new Promise((resolve, reject) => {
      const wait: Wait = {
        started: Date.now(),
        giveUp: (err) => {
          // Answered meanwhile: its connection may serve another statement by now.
          if (!this.#waits.delete(wait)) return;
          pending.catch(() => undefined);
          (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
          reject(err);
        },
      };
      const settle = (ok: boolean, value: unknown) => {
        if (!this.#waits.delete(wait)) return;
        clearTimeout(wait.timer);
        if (ok) resolve(value as pg.QueryResult);
        else reject(value as Error);
      };
      this.#waits.add(wait);
      pending.then(
        (v) => settle(true, v),
        (e: unknown) => settle(false, e),
      );
      if (this.#interruption) this.#giveUpLater(wait);
    });
  }

  #giveUpLater(wait: Wait): void {
    const at = this.#interruption!.at;
    const stopAt = Math.max(at + INTERRUPT_GRACE_MS, wait.started + AFTER_GRACE_MS);
    wait.timer = setTimeout(() => wait.giveUp(this.#error(this.#interruption!.reason, Date.now() - wait.started)), Math.max(0, stopAt - Date.now())).unref();
  }

  /**
   * The command was stopped (Ctrl-C, SIGTERM, its --timeout): a statement
   * waiting for the store (another client's write lock) is given up after a
   * grace, and so is each later one after a shorter one, with `reason`'s
   * kind of error naming the wait, so the command ends as it was asked to;
   * what it could not record is left to its lease.
   */
  interrupt(reason: Error): void {
    if (this.#interruption) return;
    this.#interruption = { reason, at: Date.now() };
    for (const wait of this.#waits) this.#giveUpLater(wait);
  }

  #error(reason: Error, waitedMs: number): Error {
    const waited = `while waiting ${(waitedMs / 1000).toFixed(1)} s for the database ${this.display}`;
    const hint =
      "another client may hold the shared store's write lock (vnfm store-info shows the locks); what this command could not record is left to its lease: " +
      'an operation it ran becomes FAILED_TEMP once its holder is found gone, or when the lease runs out (VNFM_LEASE_TIMEOUT)';
    if (reason instanceof TimeoutError) return new TimeoutError(`${reason.message} ${waited}`, { hint, cause: reason });
    if (reason instanceof TerminatedError) return new TerminatedError(`${reason.message} ${waited}`, { hint });
    return new InterruptedError(`${reason instanceof InterruptedError ? reason.message : 'interrupted'} ${waited}`, { hint });
  }
}
