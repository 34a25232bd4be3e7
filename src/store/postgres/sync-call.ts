/**
 * A synchronous call to a worker thread: the caller posts a numbered
 * request and blocks (Atomics.wait) until the worker has posted the answer
 * and written the request's number to a shared flag; the answer is then read
 * with receiveMessageOnPort; an answer carries its request's number too, so
 * one that comes after its caller gave up is never taken for a later one.
 *
 * The number, not a 0/1 flip, is what makes it safe: a worker's notify can
 * come after the caller has already read that answer (the flag was set before
 * the caller started waiting) and has posted its next request. Woken by that
 * late notify, a caller waiting for "the flag changed" would look for an
 * answer that is not there yet; a caller waiting for its own number waits on.
 *
 * While the main thread blocks, its event loop runs nothing: not a signal
 * handler, not a timer. So the worker watches SIGINT and SIGTERM for it
 * (worker.ts): it writes the signal's number to the flag's second slot and
 * wakes the caller, which stops waiting shortly after (a grace for an answer
 * that is on its way) and reports the interruption; once back on its event
 * loop, the main thread's own handler runs as usual. A deadline (an
 * operation's --timeout) stops a wait the same way.
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';

/** A request as posted to the worker, and its answer as posted back. */
export interface Numbered<T> {
  seq: number;
  req: T;
}

/** The shared flag's slots. */
export const FLAG_SLOTS = 3;
/** The number of the last request answered. */
const ANSWERED = 0;
/** A signal the worker caught for the main thread (its number), 0 when none is pending. */
const SIGNALLED = 1;
/** Which signals the main thread handles itself (bit 0 SIGINT, bit 1 SIGTERM); the worker lets the others end the process as they would. */
const HANDLED = 2;

/** The signals the worker watches, with their bit in the HANDLED slot. */
export const WATCHED_SIGNALS = { SIGINT: 2, SIGTERM: 15 } as const;
export type WatchedSignal = keyof typeof WATCHED_SIGNALS;
const BIT: Record<WatchedSignal, number> = { SIGINT: 1, SIGTERM: 2 };

/** After a signal (or the deadline), how long a wait still goes on for an answer already on its way. */
export const INTERRUPT_GRACE_MS = 3_000;
/** Past that grace, how long each later call (recording what the interruption leaves) may wait. */
const AFTER_GRACE_MS = 500;

/** Why a caller stopped waiting before its answer came. */
export type Interruption = { signal: WatchedSignal } | { deadline: true };

export type CallOutcome<Res> = { answer: Res } | { interrupted: Interruption; waitedMs: number } | undefined;

export class SyncCaller<Req, Res> {
  readonly #port: MessagePort;
  readonly #flag: Int32Array;
  #seq = 0;
  #deadline: number | undefined;
  /** The first interruption seen, and until when waits may still go on after it. */
  #interruption: Interruption | undefined;
  #stopAt = Infinity;

  constructor(port: MessagePort, signal: SharedArrayBuffer) {
    this.#port = port;
    this.#flag = new Int32Array(signal);
  }

  /** Posts a request that has no answer to wait for. */
  post(req: Req): void {
    this.#port.postMessage({ seq: 0, req } satisfies Numbered<Req>);
  }

  /** Tells the worker which signals the main thread handles itself. */
  handles(signals: Partial<Record<WatchedSignal, boolean>>): void {
    let bits = 0;
    for (const [name, on] of Object.entries(signals) as [WatchedSignal, boolean][]) if (on) bits |= BIT[name];
    Atomics.store(this.#flag, HANDLED, bits);
  }

  /** Waits stop at `at` (epoch ms), as they would at a signal; undefined lifts it. */
  setDeadline(at: number | undefined): void {
    this.#deadline = at;
  }

  /** The interruption seen so far, if any. */
  get interruption(): Interruption | undefined {
    return this.#interruption;
  }

  #interrupt(why: Interruption, now: number): void {
    if (this.#interruption) return;
    this.#interruption = why;
    this.#stopAt = now + INTERRUPT_GRACE_MS;
  }

  #noticeInterruption(now: number): void {
    const signo = Atomics.exchange(this.#flag, SIGNALLED, 0);
    if (signo !== 0) this.#interrupt({ signal: signo === WATCHED_SIGNALS.SIGINT ? 'SIGINT' : 'SIGTERM' }, now);
    if (this.#deadline !== undefined && now >= this.#deadline) this.#interrupt({ deadline: true }, now);
  }

  /** The worker's answer; undefined when none came within timeoutMs; the interruption when a signal or the deadline ended the wait. */
  call(req: Req, timeoutMs: number): CallOutcome<Res> {
    this.#seq = this.#seq >= 0x7fffffff ? 1 : this.#seq + 1;
    const seq = this.#seq;
    this.#port.postMessage({ seq, req } satisfies Numbered<Req>);
    const start = Date.now();
    const giveUpAt = start + timeoutMs;
    for (let seen = Atomics.load(this.#flag, ANSWERED); seen !== seq; seen = Atomics.load(this.#flag, ANSWERED)) {
      const now = Date.now();
      this.#noticeInterruption(now);
      const stopAt = this.#interruption ? Math.max(this.#stopAt, start + AFTER_GRACE_MS) : Infinity;
      if (now >= stopAt) return { interrupted: this.#interruption!, waitedMs: now - start };
      if (now >= giveUpAt) return undefined;
      const until = Math.min(giveUpAt, stopAt, this.#deadline !== undefined && !this.#interruption ? Math.max(this.#deadline, now + 1) : Infinity);
      Atomics.wait(this.#flag, ANSWERED, seen, until - now);
    }
    // Answers to requests given up on earlier come first: skip them.
    for (let got = receiveMessageOnPort(this.#port); got; got = receiveMessageOnPort(this.#port)) {
      const msg = got.message as Numbered<Res>;
      if (msg.seq === seq) return { answer: msg.req };
    }
    throw new Error('internal: the worker set the answer flag without posting an answer');
  }
}

/**
 * The worker's side: the answer first, then its number, then the wake-up.
 * The number never goes back: the late answer of a request its caller gave
 * up on must not hide the answer of a later one already written.
 */
export function answer<Res>(port: MessagePort, signal: SharedArrayBuffer, seq: number, res: Res): void {
  const flag = new Int32Array(signal);
  port.postMessage({ seq, req: res } satisfies Numbered<Res>);
  for (let cur = Atomics.load(flag, ANSWERED); isNewer(seq, cur); cur = Atomics.load(flag, ANSWERED)) {
    if (Atomics.compareExchange(flag, ANSWERED, cur, seq) === cur) break;
  }
  Atomics.notify(flag, ANSWERED);
}

/** Whether request number a came after b (numbers wrap from 0x7fffffff to 1). */
function isNewer(a: number, b: number): boolean {
  const d = (a - b + 0x7fffffff) % 0x7fffffff;
  return d > 0 && d < 0x40000000;
}

/**
 * The worker's side of a signal: when the main thread handles it, the
 * number goes to the flag and the caller is woken (the main thread's own
 * watcher has the signal too and runs its handler once it is back on its
 * event loop); when it does not, false: the worker stops watching and lets
 * the signal do what it does by default.
 */
export function signalled(signal: SharedArrayBuffer, name: WatchedSignal): boolean {
  const flag = new Int32Array(signal);
  if ((Atomics.load(flag, HANDLED) & BIT[name]) === 0) return false;
  Atomics.store(flag, SIGNALLED, WATCHED_SIGNALS[name]);
  Atomics.notify(flag, ANSWERED);
  return true;
}
