/**
 * The master key through the real program: the key file, VNFM_MASTER_KEY,
 * wrong and missing keys, and rotation.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateFernetKey, loadKeyring } from '../../src/crypto/index.js';
import { holderOf } from '../../src/lcm/lock-holder.js';
import { ROTATION_LOCK, openStore } from '../../src/store/index.js';
import { openSecrets, sealSecrets } from '../../src/vim/index.js';
import { BIN, newHome, vnfm } from '../support/cli.js';
import { packageRecord } from '../support/store-records.js';

const dir = mkdtempSync(join(tmpdir(), 'vnfm-keys-'));

function k8sConfig(token: string): string {
  const path = join(dir, `${token}.yaml`);
  writeFileSync(path, `auth_url: https://127.0.0.1:6443\ntype: kubernetes\nproject_name: default\nbearer_token: ${token}\nssl_ca_cert: None\n`);
  return path;
}

/** Every VIM's bearer token, decrypted with the keys as they are on disk or in `env`. */
async function readTokens(home: string, env: Record<string, string | undefined> = {}): Promise<Record<string, string | undefined>> {
  const store = openStore(home);
  try {
    const keyring = loadKeyring({ home, env, createIfMissing: false });
    return Object.fromEntries(await Promise.all((await store.vims.list()).map(async (v) => [v.name, (await openSecrets(store.vims, keyring, v)).bearerToken])));
  } finally {
    await store.close();
  }
}

describe('master key', () => {
  it('is made on first use as a 0600 file, and key-rotate replaces it with every secret still readable', async () => {
    const home = newHome();
    for (const name of ['a', 'b', 'c']) {
      const r = await vnfm(['vim-register', '--no-check', '--config-file', k8sConfig(`token-${name}`), name], { home });
      expect(r.code, r.stderr).toBe(0);
    }
    const keyFile = join(home, 'master.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const before = readFileSync(keyFile, 'utf8');
    const rot = await vnfm(['key-rotate', '-o', 'json'], { home });
    expect(rot.code, rot.stderr).toBe(0);
    expect(JSON.parse(rot.stdout)).toMatchObject({ rotated: 3, source: 'file' });
    const after = readFileSync(keyFile, 'utf8');
    expect(after).not.toBe(before);
    expect(after.trim().split('\n')).toHaveLength(1);
    expect(await readTokens(home)).toEqual({ a: 'token-a', b: 'token-b', c: 'token-c' });
  });

  it('VNFM_MASTER_KEY writes no key file; another key is refused with exit 5 and nothing stored', async () => {
    const home = newHome();
    const key = generateFernetKey();
    const r = await vnfm(['vim-register', '--no-check', '--config-file', k8sConfig('tok-env'), 'a'], { home, env: { VNFM_MASTER_KEY: key } });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(home, 'master.key'))).toBe(false);

    const other = generateFernetKey();
    const wrong = await vnfm(['vim-register', '--no-check', '--config-file', k8sConfig('tok-2'), 'b'], { home, env: { VNFM_MASTER_KEY: other } });
    expect(wrong.code).toBe(5);
    expect(wrong.stderr).toMatch(/encrypted with key [0-9a-f]{16}, which VNFM_MASTER_KEY does not hold/);
    expect(wrong.stderr).not.toContain(other);
    expect(JSON.parse((await vnfm(['vim-list', '-o', 'json'], { home })).stdout)).toHaveLength(1);

    const noKey = await vnfm(['vim-register', '--no-check', '--config-file', k8sConfig('tok-3'), 'c'], { home });
    expect(noKey.code).toBe(5);
    expect(noKey.stderr).toMatch(/master\.key is missing/);
    expect(existsSync(join(home, 'master.key'))).toBe(false);

    // Listing decrypts nothing, yet a malformed key is refused there too, before anything is read.
    const malformed = await vnfm(['vim-list', '-o', 'json'], { home, env: { VNFM_MASTER_KEY: 'not-a-key' } });
    expect(malformed.code).toBe(5);
    expect(malformed.stderr).toMatch(/key 1 of VNFM_MASTER_KEY is not a Fernet key/);
    expect(malformed.stderr).not.toContain('not-a-key');
    expect(malformed.stdout).toBe('');
    const bad = await vnfm(['vim-register', '--no-check', '--config-file', k8sConfig('tok-4'), 'd'], { home, env: { VNFM_MASTER_KEY: 'not-a-key' } });
    expect(bad.code).toBe(5);
    expect(bad.stderr).not.toContain('not-a-key');
  });

  it('rotates keys kept in VNFM_MASTER_KEY: NEW,OLD, then NEW alone', async () => {
    const home = newHome();
    const oldKey = generateFernetKey();
    for (const name of ['a', 'b']) {
      await vnfm(['vim-register', '--no-check', '--config-file', k8sConfig(`env-${name}`), name], { home, env: { VNFM_MASTER_KEY: oldKey } });
    }
    const gen = await vnfm(['key-generate'], { home });
    const newKey = gen.stdout.trim();
    expect(newKey).toMatch(/^[A-Za-z0-9_-]{43}=$/);
    const rot = await vnfm(['key-rotate', '-o', 'json'], { home, env: { VNFM_MASTER_KEY: `${newKey},${oldKey}` } });
    expect(rot.code, rot.stderr).toBe(0);
    expect(JSON.parse(rot.stdout)).toMatchObject({ rotated: 2, source: 'env' });
    expect(rot.stderr).toMatch(/remove them from VNFM_MASTER_KEY/);
    expect(await readTokens(home, { VNFM_MASTER_KEY: newKey })).toEqual({ a: 'env-a', b: 'env-b' });
    const stale = await vnfm(['vim-register', '--no-check', '--config-file', k8sConfig('x'), 'x'], { home, env: { VNFM_MASTER_KEY: oldKey } });
    expect(stale.code).toBe(5);
  });

  it('refuses a malformed key file with exit 5 in commands that open no secret, naming the line and never echoing it', async () => {
    const home = newHome();
    expect((await vnfm(['vim-register', '--no-check', '--config-file', k8sConfig('tok-m'), 'm'], { home })).code).toBe(0);
    writeFileSync(join(home, 'master.key'), 'garbage-key-material\n', { mode: 0o600 });
    for (const args of [['vim-list'], ['vnfpkg-list'], ['vnf-list'], ['op-list']]) {
      const r = await vnfm(args, { home });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(5);
      expect(r.stderr).toMatch(/line 1 of .*master\.key is not a Fernet key/);
      expect(r.stderr).not.toContain('garbage-key-material');
    }
  });

  it('refuses key-rotate with exit 4 while another live process holds the rotation lock, changing nothing; a dead holder is taken over', async () => {
    const home = newHome();
    expect((await vnfm(['vim-register', '--no-check', '--config-file', k8sConfig('held-a'), 'a'], { home })).code).toBe(0);
    const keyFileBefore = readFileSync(join(home, 'master.key'), 'utf8');
    const store = openStore(home);
    try {
      // This test process is the live holder.
      await store.secrets.acquireLock(ROTATION_LOCK, holderOf(), '2026-01-01T00:00:00.000Z', () => true);
      const refused = await vnfm(['key-rotate'], { home });
      expect(refused.code).toBe(4);
      expect(refused.stderr).toContain(`a master key rotation is in progress by pid ${process.pid}`);
      expect(readFileSync(join(home, 'master.key'), 'utf8')).toBe(keyFileBefore);

      // A holder that no longer runs (a rotation killed midway) is taken over.
      const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
      await store.secrets.releaseLock(ROTATION_LOCK, holderOf());
      await store.secrets.acquireLock(ROTATION_LOCK, { ...holderOf(), pid: dead, startTime: '1' }, '2026-01-01T00:00:00.000Z', () => true);
      const taken = await vnfm(['key-rotate'], { home });
      expect(taken.code, taken.stderr).toBe(0);
      expect(taken.stderr).toContain(`taking over the rotation lock of pid ${dead}`);
      expect(await store.secrets.lockHolder(ROTATION_LOCK)).toBeUndefined();
    } finally {
      await store.close();
    }
    expect(await readTokens(home)).toEqual({ a: 'held-a' });
  });

  it('refuses key-rotate with exit 4 while an LCM operation holds an instance lock, and an operation while a rotation runs', async () => {
    const home = newHome();
    expect((await vnfm(['vim-register', '--no-check', '--config-file', k8sConfig('op-a'), 'a'], { home })).code).toBe(0);
    const now = '2026-01-01T00:00:00.000Z';
    const store = openStore(home);
    try {
      await store.packages.insert(packageRecord());
      await store.instances.insert({
        id: 'inst-1',
        vnfInstanceDescription: '',
        vnfdId: 'vnfd-1',
        vnfPkgId: 'p1',
        vnfProvider: 'ACME',
        vnfProductName: 'cnf',
        vnfSoftwareVersion: '1.0',
        vnfdVersion: '1.0',
        instantiationState: 'NOT_INSTANTIATED',
        createdAt: now,
        updatedAt: now,
      });
      await store.opOccs.insert(
        {
          id: 'op-1',
          vnfInstanceId: 'inst-1',
          operation: 'INSTANTIATE',
          operationState: 'PROCESSING',
          stateEnteredTime: now,
          startTime: now,
          operationParams: { flavourId: 'simple' },
          journal: [],
          isAutomaticInvocation: false,
        },
        { vnfPkgId: 'p1', vnfdId: 'vnfd-1', instantiationState: 'NOT_INSTANTIATED' },
      );
      // This test process runs the operation.
      await store.opOccs.takeLock({ vnfInstanceId: 'inst-1', opId: 'op-1', acquiredAt: now, ...holderOf() });
      const refused = await vnfm(['key-rotate'], { home });
      expect(refused.code).toBe(4);
      expect(refused.stderr).toMatch(/an operation is in progress on vnf instance inst-1 \(pid \d+\)/);
      await store.opOccs.releaseLock('inst-1', 'op-1');

      // And the other way round: no operation takes an instance lock while a rotation runs.
      await store.secrets.acquireLock(ROTATION_LOCK, holderOf(), now, () => true);
      const wired = openStore(home, { isHolderAlive: () => true });
      try {
        await expect(wired.opOccs.exclusive(() => wired.opOccs.takeLock({ vnfInstanceId: 'inst-1', opId: 'op-1', acquiredAt: now, ...holderOf() }))).rejects.toThrow(
          /a master key rotation is in progress by pid/,
        );
      } finally {
        await wired.close();
      }
      await store.secrets.releaseLock(ROTATION_LOCK, holderOf());
    } finally {
      await store.close();
    }
    const rot = await vnfm(['key-rotate'], { home });
    expect(rot.code, rot.stderr).toBe(0);
    expect(await readTokens(home)).toEqual({ a: 'op-a' });
  });

  it('serialises two key-rotate run at once: each ends 0 or refused with exit 4, and no secret is lost (3 rounds, 2000 secrets)', async () => {
    const home = newHome();
    // Enough secrets that a rotation takes a while, so that two started together overlap.
    const expected: Record<string, string> = {};
    const store = openStore(home);
    try {
      const keyring = loadKeyring({ home, env: {}, createIfMissing: true });
      await store.db.transaction(async () => {
        for (let i = 0; i < 2000; i++) {
          const name = `v${i}`;
          expected[name] = `twice-${i}`;
          await store.vims.insert(
            {
              id: `id-${i}`,
              name,
              description: '',
              isDefault: false,
              status: 'PENDING',
              createdAt: '2026-01-01T00:00:00.000Z',
              updatedAt: '2026-01-01T00:00:00.000Z',
              secretNames: ['bearerToken'],
              spec: { type: 'kubernetes', authUrl: 'https://127.0.0.1:6443', auth: { method: 'bearer-token' }, verifyTls: false },
            },
            sealSecrets(keyring, { bearerToken: `twice-${i}` }),
          );
        }
      })();
    } finally {
      await store.close();
    }
    for (let round = 0; round < 3; round++) {
      const runs = await Promise.all([vnfm(['key-rotate'], { home }), vnfm(['key-rotate'], { home })]);
      for (const r of runs) {
        expect([0, 4], r.stderr).toContain(r.code);
        if (r.code === 4) expect(r.stderr).toMatch(/a master key rotation is in progress by pid \d+ .*since/);
      }
      expect(runs.some((r) => r.code === 0)).toBe(true);
      expect(readFileSync(join(home, 'master.key'), 'utf8').trim().split('\n')).toHaveLength(1);
      expect(await readTokens(home)).toEqual(expected);
    }
    expect(readdirSync(home).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  }, 120_000);

  it('races key-rotate x2 against vim-register (5 rounds), then opens every secret', async () => {
    const home = newHome();
    const expected: Record<string, string> = {};
    expect((await vnfm(['vim-register', '--no-check', '--config-file', k8sConfig('race-base'), 'base'], { home })).code).toBe(0);
    expected['base'] = 'race-base';
    for (let round = 0; round < 5; round++) {
      const name = `r${round}`;
      const [reg, ...rots] = await Promise.all([
        vnfm(['vim-register', '--no-check', '--config-file', k8sConfig(`race-${name}`), name], { home }),
        vnfm(['key-rotate'], { home }),
        vnfm(['key-rotate'], { home }),
      ]);
      expect(reg!.code, reg!.stderr).toBe(0);
      expected[name] = `race-${name}`;
      for (const r of rots) expect([0, 4], r.stderr).toContain(r.code);
    }
    expect(readFileSync(join(home, 'master.key'), 'utf8').trim().split('\n')).toHaveLength(1);
    expect(await readTokens(home)).toEqual(expected);
    // The program itself still reads the store: a command that loads the keys and checks them against every stored secret.
    const after = await vnfm(['vim-register', '--no-check', '--config-file', k8sConfig('race-after'), 'after'], { home });
    expect(after.code, after.stderr).toBe(0);
    expect((await vnfm(['key-rotate', '-o', 'json'], { home })).code).toBe(0);
    expect(await readTokens(home)).toEqual({ ...expected, after: 'race-after' });
  });

  it('a key-rotate killed with SIGKILL at any moment leaves every secret readable; the next one takes its lock over, finishes and leaves no temp file', async () => {
    const home = newHome();
    const expected: Record<string, string> = {};
    const store = openStore(home);
    try {
      const keyring = loadKeyring({ home, env: {}, createIfMissing: true });
      await store.db.transaction(async () => {
        for (let i = 0; i < 2000; i++) {
          expected[`k${i}`] = `killed-${i}`;
          await store.vims.insert(
            {
              id: `id-${i}`,
              name: `k${i}`,
              description: '',
              isDefault: false,
              status: 'PENDING',
              createdAt: '2026-01-01T00:00:00.000Z',
              updatedAt: '2026-01-01T00:00:00.000Z',
              secretNames: ['bearerToken'],
              spec: { type: 'kubernetes', authUrl: 'https://127.0.0.1:6443', auth: { method: 'bearer-token' }, verifyTls: false },
            },
            sealSecrets(keyring, { bearerToken: `killed-${i}` }),
          );
        }
      })();
    } finally {
      await store.close();
    }
    for (const delayMs of [150, 400, 700, 1000]) {
      const child = spawn(process.execPath, [BIN, 'key-rotate'], { env: { PATH: process.env['PATH'], HOME: home.replace(/\/home$/, ''), VNFM_HOME: home }, stdio: 'ignore' });
      const closed = new Promise((r) => child.once('close', r));
      await new Promise((r) => setTimeout(r, delayMs));
      // Killed mid-rotation, or already done: either way every secret must be readable with the keys on disk.
      child.kill('SIGKILL');
      await closed;
      expect(await readTokens(home)).toEqual(expected);
    }
    const finish = await vnfm(['key-rotate'], { home });
    expect(finish.code, finish.stderr).toBe(0);
    expect(readFileSync(join(home, 'master.key'), 'utf8').trim().split('\n')).toHaveLength(1);
    expect(readdirSync(home).filter((f) => f.startsWith('.master.key.'))).toEqual([]);
    expect(await readTokens(home)).toEqual(expected);
  }, 120_000);

  it('removes the key temp file a killed rotation left behind (it holds a retired key)', async () => {
    const home = newHome();
    expect((await vnfm(['vim-register', '--no-check', '--config-file', k8sConfig('tmp-a'), 'a'], { home })).code).toBe(0);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const stale = join(home, `.master.key.${dead}.a1b2c3d4e5f6.tmp`);
    writeFileSync(stale, `${generateFernetKey()}\n${readFileSync(join(home, 'master.key'), 'utf8')}`, { mode: 0o600 });
    const rot = await vnfm(['key-rotate'], { home });
    expect(rot.code, rot.stderr).toBe(0);
    expect(existsSync(stale)).toBe(false);
    expect(readdirSync(home).filter((f) => f.startsWith('.master.key.'))).toEqual([]);
    expect(await readTokens(home)).toEqual({ a: 'tmp-a' });
  });
});
