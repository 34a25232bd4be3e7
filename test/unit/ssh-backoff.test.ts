/** The back-off of SSH connection attempts while a node's sshd is not up. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_SSH_RETRY, nextRetryDelay, retryDelay, retrySchedule, sshRetryOf } from '../../src/mgmt/ssh/index.js';

describe('SSH retry back-off', () => {
  it('defaults to 1 s doubling up to 15 s, for 300 s in all', () => {
    expect(DEFAULT_SSH_RETRY).toEqual({ totalMs: 300_000, minMs: 1_000, maxMs: 15_000 });
    expect(sshRetryOf({ totalMs: 5_000, minMs: undefined })).toEqual({ totalMs: 5_000, minMs: 1_000, maxMs: 15_000 });
  });

  it('doubles the pause after each failed attempt, up to the maximum', () => {
    const d = [0, 1, 2, 3, 4, 5, 6, 20, 100].map((n) => retryDelay(n, DEFAULT_SSH_RETRY));
    expect(d).toEqual([1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000, 15_000, 15_000]);
  });

  it('cuts the last pause so the last attempt starts by the total, then gives up', () => {
    const retry = { totalMs: 10_000, minMs: 1_000, maxMs: 4_000 };
    expect(retrySchedule(retry)).toEqual([1_000, 2_000, 4_000, 3_000]);
    expect(nextRetryDelay(3, 9_500, retry)).toBe(500);
    expect(nextRetryDelay(3, 10_000, retry)).toBeUndefined();
  });

  it('with the defaults, pauses 23 times over the 300 s (24 attempts)', () => {
    const s = retrySchedule(DEFAULT_SSH_RETRY);
    expect(s.reduce((a, b) => a + b, 0)).toBe(300_000);
    expect(s.slice(0, 5)).toEqual([1_000, 2_000, 4_000, 8_000, 15_000]);
    expect(s).toHaveLength(4 + Math.ceil((300_000 - 15_000) / 15_000));
  });
});
