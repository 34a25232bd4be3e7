/**
 * Runs one helm process: its own process group (so a terminal's Ctrl-C
 * reaches vnfm, which decides), a minimal environment, output collected, and
 * on abort SIGTERM then SIGKILL to the group. The call settles only after the
 * process has exited, so its private directory can then be removed.
 */
import { spawn } from 'node:child_process';
import { InterruptedError } from '../../errors.js';
import { atProcessEnd } from './process-end.js';

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

function endGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // Already gone.
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
      if (child.pid !== undefined) endGroup(child.pid, sig);
    };
    // Ended with vnfm, so no helm is left writing to a release unsupervised.
    let unregister: (() => void) | undefined;
    const onAbort = () => {
      kill('SIGTERM');
      killTimer = setTimeout(() => kill('SIGKILL'), run.killGraceMs ?? 5000);
      killTimer.unref();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.once('spawn', () => {
      if (child.pid === undefined) return;
      const pid = child.pid;
      unregister = atProcessEnd(() => endGroup(pid, 'SIGTERM'));
      run.onSpawn?.(pid);
    });
    child.once('error', (e) => {
      unregister?.();
      signal?.removeEventListener('abort', onAbort);
      clearTimeout(killTimer);
      reject(e);
    });
    child.once('close', (code, sig) => {
      unregister?.();
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
