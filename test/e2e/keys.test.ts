/**
 * The master key through the real program: the key file, VNFM_MASTER_KEY,
 * wrong and missing keys, and rotation.
 */
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateFernetKey, loadKeyring } from '../../src/crypto/index.js';
import { openStore } from '../../src/store/index.js';
import { openSecrets } from '../../src/vim/index.js';
import { newHome, vnfm } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'vnfm-keys-'));

function k8sConfig(token: string): string {
  const path = join(dir, `${token}.yaml`);
  writeFileSync(path, `auth_url: https://127.0.0.1:6443\ntype: kubernetes\nproject_name: default\nbearer_token: ${token}\nssl_ca_cert: None\n`);
  return path;
}

/** Every VIM's bearer token, decrypted with the keys as they are on disk or in `env`. */
function readTokens(home: string, env: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const store = openStore(home);
  try {
    const keyring = loadKeyring({ home, env, createIfMissing: false });
    return Object.fromEntries(store.vims.list().map((v) => [v.name, openSecrets(store.vims, keyring, v).bearerToken]));
  } finally {
    store.close();
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
    expect(readTokens(home)).toEqual({ a: 'token-a', b: 'token-b', c: 'token-c' });
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

    const malformed = await vnfm(['vim-list', '-o', 'json'], { home, env: { VNFM_MASTER_KEY: 'not-a-key' } });
    // Listing needs no key: secrets are never decrypted to show a VIM.
    expect(malformed.code).toBe(0);
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
    expect(readTokens(home, { VNFM_MASTER_KEY: newKey })).toEqual({ a: 'env-a', b: 'env-b' });
    const stale = await vnfm(['vim-register', '--no-check', '--config-file', k8sConfig('x'), 'x'], { home, env: { VNFM_MASTER_KEY: oldKey } });
    expect(stale.code).toBe(5);
  });
});
