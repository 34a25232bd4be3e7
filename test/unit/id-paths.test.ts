/**
 * Ids that become paths under VNFM_HOME (an instance's Heat files, an
 * occurrence's log) are taken only in vnfm's own form: a row another client
 * wrote into a shared store with an id such as `../../x` is refused before
 * anything is read, written or removed.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dropInstanceEnvironments, loadInstanceEnvironments } from '../../src/lcm/heat-files.js';
import { openOpLog, opLogPath } from '../../src/lcm/op-log.js';

const root = mkdtempSync(join(tmpdir(), 'vnfm-id-paths-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('ids that become paths', () => {
  const home = join(root, 'home');
  const victim = join(root, 'victim');
  mkdirSync(join(home, 'instances'), { recursive: true });
  mkdirSync(victim, { recursive: true });
  writeFileSync(join(victim, 'keep.txt'), 'still here');

  it.each(['../victim', '../../victim', '/tmp', '', 'a/b', `${'0'.repeat(8)}-0000-0000-0000-00000000000/`])('an instance id %j removes nothing', async (id) => {
    await expect(dropInstanceEnvironments(home, id)).rejects.toThrow(/is not a UUID: refusing to make a path of it/);
    await expect(loadInstanceEnvironments(home, id)).rejects.toThrow(/is not a UUID/);
    expect(existsSync(join(victim, 'keep.txt'))).toBe(true);
  });

  it('an occurrence id that is not a UUID makes no log path', () => {
    expect(() => opLogPath(home, '../victim/keep')).toThrow(/occurrence id "..\/victim\/keep" is not a UUID/);
    expect(() => openOpLog(home, '../../etc/x', () => new Date())).toThrow(/is not a UUID/);
  });

  it('a UUID is taken', async () => {
    const id = '6f1d3c2a-1b2c-4d5e-8f90-a1b2c3d4e5f6';
    expect(opLogPath(home, id)).toBe(join(home, 'logs', `${id}.log`));
    await expect(dropInstanceEnvironments(home, id)).resolves.toBeUndefined();
  });
});
