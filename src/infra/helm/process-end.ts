/**
 * Clean-ups that must run however the process ends: on exit, and on
 * SIGINT/SIGTERM/SIGHUP (after which Node runs no exit handlers). The signal
 * listener runs before the program's own (it is prepended), so it never
 * takes the program's place: where the program listens, the program decides
 * what the signal does; where nobody else does, the signal is raised again
 * and ends the process as it would have. A clean-up is told whether the
 * process is ending (exit, or a signal nobody else listens to) or goes on
 * (the program handles the signal itself). A clean-up may answer a promise:
 * a signal that ends the process waits for it (a bounded time) before it
 * does; at an exit nothing can wait.
 */
const cleanups = new Set<(ending: boolean) => unknown>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** How long a signal that ends the process waits for the clean-ups that answer a promise (a store's delete). */
const SIGNAL_CLEANUP_MS = 5_000;
let hooked = false;
let raising = false;

function runAll(ending: boolean): Promise<unknown>[] {
  const pending: Promise<unknown>[] = [];
  for (const fn of cleanups) {
    try {
      const out = fn(ending);
      if (out instanceof Promise) pending.push(out.catch(() => undefined));
    } catch {
      // Best effort at the end: one failing clean-up does not stop the others.
    }
  }
  return pending;
}

const onExit = () => void runAll(true);

function onSignal(signal: NodeJS.Signals): void {
  const ending = process.listenerCount(signal) === 1;
  if (raising) return;
  const pending = runAll(ending);
  if (ending) {
    raising = true;
    const raise = () => {
      for (const s of SIGNALS) process.removeListener(s, onSignal);
      process.removeListener('exit', onExit);
      hooked = false;
      raising = false;
      process.kill(process.pid, signal);
    };
    if (pending.length === 0) raise();
    // A clean-up that is a promise (a delete in a shared store) is waited for, a bounded time, before the signal ends the process.
    else void Promise.race([Promise.all(pending), new Promise((r) => setTimeout(r, SIGNAL_CLEANUP_MS))]).then(raise);
  }
}

/** Runs `fn` when the process ends, until the returned function is called. */
export function atProcessEnd(fn: (ending: boolean) => unknown): () => void {
  cleanups.add(fn);
  if (!hooked) {
    hooked = true;
    process.on('exit', onExit);
    for (const s of SIGNALS) process.prependListener(s, onSignal);
  }
  return () => {
    cleanups.delete(fn);
    if (cleanups.size === 0 && hooked) {
      hooked = false;
      process.removeListener('exit', onExit);
      for (const s of SIGNALS) process.removeListener(s, onSignal);
    }
  };
}
