/**
 * Runs one helm process: its own process group (so a terminal's Ctrl-C
 * reaches vnfm, which decides), a minimal environment, output collected, and
 * on abort SIGTERM then SIGKILL to the group. The call settles only after the
 * process has exited, so its private directory can then be removed.
 */
import { spawn } from 'node:child_process';
import { InterruptedError } from '../../errors.js';

export interface HelmRun {
  executable: string;
  args: string[];
  env: Record<string, string>;
  signal?: AbortSignal;
  /** After SIGTERM, how long helm has before SIGKILL (default 5000 ms). */
  killGraceMs?: number;
  /** Called with the child's pid once it runs. */
  onSpawn?(pid: number): void;
}

export interface HelmOutput {
  status: number;
  /** The signal that ended helm, when one did (killed from outside: OOM, kill -9). */
  signal?: NodeJS.Signals;
  stdout: string;
  stderr: string;
}

/** Output beyond this is dropped (a release manifest is far smaller). */
const MAX_STDOUT = 64 * 1024 * 1024;
const MAX_STDERR = 256 * 1024;

/** Process groups of the helm processes running now: ended with vnfm, so none is left writing to a release unsupervised. */
const running = new Set<number>();
let exitHooked = false;
function endRunning(): void {
  for (const pid of running) {
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
  }
}

export function runHelm(run: HelmRun): Promise<HelmOutput> {
  const { signal } = run;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const child = spawn(run.executable, run.args, { env: run.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out = collector(MAX_STDOUT);
    const err = collector(MAX_STDERR);
    child.stdout.on('data', out.add);
    child.stderr.on('data', err.add);
    let killTimer: NodeJS.Timeout | undefined;
    const kill = (sig: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, sig);
      } catch {
        // Already gone.
      }
    };
    const onAbort = () => {
      kill('SIGTERM');
      killTimer = setTimeout(() => kill('SIGKILL'), run.killGraceMs ?? 5000);
      killTimer.unref();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.once('spawn', () => {
      if (child.pid === undefined) return;
      running.add(child.pid);
      if (!exitHooked) {
        exitHooked = true;
        process.on('exit', endRunning);
      }
      run.onSpawn?.(child.pid);
    });
    child.once('error', (e) => {
      signal?.removeEventListener('abort', onAbort);
      clearTimeout(killTimer);
      reject(e);
    });
    child.once('close', (code, sig) => {
      if (child.pid !== undefined) running.delete(child.pid);
      signal?.removeEventListener('abort', onAbort);
      clearTimeout(killTimer);
      if (signal?.aborted) return reject(abortReason(signal));
      resolve({ status: code ?? 128, ...(sig ? { signal: sig } : {}), stdout: out.text(), stderr: err.text() });
    });
  });
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new InterruptedError('the operation was interrupted');
}

function collector(max: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  return {
    add: (c: Buffer) => {
      if (size >= max) return;
      chunks.push(c.subarray(0, max - size));
      size += c.length;
    },
    text: () => Buffer.concat(chunks).toString('utf8'),
  };
}
