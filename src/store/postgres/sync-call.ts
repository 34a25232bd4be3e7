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
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';

/** A request as posted to the worker, and its answer as posted back. */
export interface Numbered<T> {
  seq: number;
  req: T;
}

export class SyncCaller<Req, Res> {
  readonly #port: MessagePort;
  readonly #flag: Int32Array;
  #seq = 0;

  constructor(port: MessagePort, signal: SharedArrayBuffer) {
    this.#port = port;
    this.#flag = new Int32Array(signal);
  }

  /** The worker's answer, or undefined when none came within timeoutMs. */
  call(req: Req, timeoutMs: number): { answer: Res } | undefined {
    this.#seq = this.#seq >= 0x7fffffff ? 1 : this.#seq + 1;
    const seq = this.#seq;
    this.#port.postMessage({ seq, req } satisfies Numbered<Req>);
    const deadline = Date.now() + timeoutMs;
    for (let seen = Atomics.load(this.#flag, 0); seen !== seq; seen = Atomics.load(this.#flag, 0)) {
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      Atomics.wait(this.#flag, 0, seen, left);
    }
    // Answers to requests given up on earlier come first: skip them.
    for (let got = receiveMessageOnPort(this.#port); got; got = receiveMessageOnPort(this.#port)) {
      const msg = got.message as Numbered<Res>;
      if (msg.seq === seq) return { answer: msg.req };
    }
    throw new Error('internal: the worker set the answer flag without posting an answer');
  }
}

/** The worker's side: the answer first, then its number, then the wake-up. */
export function answer<Res>(port: MessagePort, signal: SharedArrayBuffer, seq: number, res: Res): void {
  const flag = new Int32Array(signal);
  port.postMessage({ seq, req: res } satisfies Numbered<Res>);
  Atomics.store(flag, 0, seq);
  Atomics.notify(flag, 0);
}
