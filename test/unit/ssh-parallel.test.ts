/** forEachNode: several nodes at once, within a limit, every node to its end. */
import { describe, expect, it } from 'vitest';
import { ExitCode, TimeoutError, VnfmError } from '../../src/errors.js';
import { forEachNode, NodesFailedError } from '../../src/mgmt/ssh/index.js';

/** A task per item that the test finishes by hand. */
function gated<T>(items: readonly T[]) {
  const started: T[] = [];
  const finish = new Map<T, { ok(): void; fail(e: unknown): void }>();
  let running = 0;
  let most = 0;
  const fn = (item: T) =>
    new Promise<string>((resolve, reject) => {
      started.push(item);
      running++;
      most = Math.max(most, running);
      finish.set(item, {
        ok: () => {
          running--;
          resolve(`done ${String(item)}`);
        },
        fail: (e) => {
          running--;
          reject(e);
        },
      });
    });
  return { fn, started, finish, most: () => most, items };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('forEachNode', () => {
  it('runs at most `limit` at once and returns the results in input order', async () => {
    const g = gated(['a', 'b', 'c', 'd', 'e']);
    const all = forEachNode(g.items, 2, (x) => x, g.fn);
    await tick();
    expect(g.started).toEqual(['a', 'b']);
    g.finish.get('b')!.ok();
    await tick();
    expect(g.started).toEqual(['a', 'b', 'c']);
    for (const x of ['a', 'c']) g.finish.get(x)!.ok();
    await tick();
    for (const x of ['d', 'e']) g.finish.get(x)!.ok();
    expect(await all).toEqual(['done a', 'done b', 'done c', 'done d', 'done e']);
    expect(g.most()).toBe(2);
  });

  it('runs every node to its end when some fail, then names each failed node with its error', async () => {
    const g = gated(['n1', 'n2', 'n3', 'n4']);
    const all = forEachNode(g.items, 4, (x) => `VDU ${x}`, g.fn);
    await tick();
    g.finish.get('n3')!.fail(new VnfmError('disk full', { hint: 'free some space' }));
    g.finish.get('n1')!.fail(new Error('connection reset'));
    await tick();
    expect(g.started).toEqual(['n1', 'n2', 'n3', 'n4']);
    let settled = false;
    void all.catch(() => undefined).finally(() => (settled = true));
    await tick();
    expect(settled).toBe(false); // n2 and n4 still run
    g.finish.get('n2')!.ok();
    g.finish.get('n4')!.ok();
    const err = await all.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NodesFailedError);
    const e = err as NodesFailedError;
    expect(e.message).toBe('2 of 4 nodes failed:\n- VDU n1: connection reset\n- VDU n3: disk full');
    expect(e.failures.map((f) => f.node)).toEqual(['VDU n1', 'VDU n3']);
    expect(e.hint).toBe('free some space');
    expect(e.exitCode).toBe(ExitCode.failed);
  });

  it("keeps the failures' common exit code and their common cause (the operation's signal)", async () => {
    const reason = new TimeoutError('the operation timed out');
    const fail = (x: string) => Promise.reject(Object.assign(new TimeoutError(`${x}: interrupted`, { cause: reason })));
    const err = (await forEachNode(['a', 'b'], 1, (x) => x, fail).catch((e: unknown) => e)) as NodesFailedError;
    expect(err.exitCode).toBe(ExitCode.timeout);
    expect(err.cause).toBe(reason);
  });

  it('returns [] for no nodes and treats a limit below 1 as 1', async () => {
    expect(await forEachNode([], 5, String, async () => 1)).toEqual([]);
    const g = gated([1, 2]);
    const all = forEachNode(g.items, 0, String, g.fn);
    await tick();
    expect(g.started).toEqual([1]);
    g.finish.get(1)!.ok();
    await tick();
    g.finish.get(2)!.ok();
    expect(await all).toEqual(['done 1', 'done 2']);
  });
});
