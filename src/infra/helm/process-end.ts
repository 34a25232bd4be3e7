/**
 * Clean-ups that must run however the process ends: on exit, and on
 * SIGINT/SIGTERM/SIGHUP (after which Node runs no exit handlers). The signal
 * listener runs before the program's own (it is prepended), so it never
 * takes the program's place: where the program listens, the program decides
 * what the signal does; where nobody else does, the signal is raised again
 * and ends the process as it would have. A clean-up is told whether the
 * process is ending (exit, or a signal nobody else listens to) or goes on
 * (the program handles the signal itself).
 */
const cleanups = new Set<(ending: boolean) => void>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
let hooked = false;

function runAll(ending: boolean): void {
  for (const fn of cleanups) {
    try {
      fn(ending);
    } catch {
      // Best effort at the end: one failing clean-up does not stop the others.
    }
  }
}

const onExit = () => runAll(true);

function onSignal(signal: NodeJS.Signals): void {
  const ending = process.listenerCount(signal) === 1;
  runAll(ending);
  if (ending) {
    for (const s of SIGNALS) process.removeListener(s, onSignal);
    process.removeListener('exit', onExit);
    hooked = false;
    process.kill(process.pid, signal);
  }
}

/** Runs `fn` when the process ends, until the returned function is called. */
export function atProcessEnd(fn: (ending: boolean) => void): () => void {
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
