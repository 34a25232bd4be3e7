/**
 * The one waiter and the one clock. Everything that waits between polls or
 * retries (the Kubernetes client, Heat, the OpenStack driver, the SSH client,
 * the credentials receiver) sleeps through `sleep`, which the operation's
 * AbortSignal ends early (Ctrl-C, --timeout) with the signal's reason; code
 * that takes a `Sleep` or a `Clock` in its options lets tests wait without
 * real timers.
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface Clock {
  now(): Date;
  sleep: Sleep;
}

/** Waits `ms`, or rejects with `signal.reason` as soon as the signal aborts (at once when it already has). */
export const sleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export const now = (): Date => new Date();

/** The real clock. */
export const systemClock: Clock = { now, sleep };
