/**
 * How often vnfm knocks on a new VM's sshd: first after `minMs`, the pause
 * doubling up to `maxMs`, until `totalMs` have passed since the first try.
 */
import type { SshRetry } from './types.js';

export const DEFAULT_SSH_RETRY: SshRetry = { totalMs: 300_000, minMs: 1_000, maxMs: 15_000 };

/** Per attempt (TCP and SSH handshake) when the caller gives none. */
export const DEFAULT_READY_TIMEOUT_MS = 20_000;

export function sshRetryOf(retry: Partial<SshRetry> = {}): SshRetry {
  return { ...DEFAULT_SSH_RETRY, ...Object.fromEntries(Object.entries(retry).filter(([, v]) => v !== undefined)) };
}

/** The pause after failed attempt number `attempt` (0 for the first). */
export function retryDelay(attempt: number, retry: SshRetry): number {
  const min = Math.max(1, retry.minMs);
  return Math.min(min * 2 ** Math.min(attempt, 40), Math.max(min, retry.maxMs));
}

/**
 * The pause before the next attempt when `elapsedMs` have passed since the
 * first one, or undefined when it is time to give up. The last pause is cut
 * so that the last attempt starts by `totalMs`.
 */
export function nextRetryDelay(attempt: number, elapsedMs: number, retry: SshRetry): number | undefined {
  const left = retry.totalMs - elapsedMs;
  if (left <= 0) return undefined;
  return Math.min(retryDelay(attempt, retry), left);
}

/** The pauses of a node that never answers, attempts taking no time (for docs and tests). */
export function retrySchedule(retry: SshRetry): number[] {
  const out: number[] = [];
  let elapsed = 0;
  for (let n = 0; ; n++) {
    const d = nextRetryDelay(n, elapsed, retry);
    if (d === undefined) return out;
    out.push(d);
    elapsed += d;
  }
}
