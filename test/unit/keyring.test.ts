import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { ConflictError, SecretKeyError, UsageError } from '../../src/errors.js';
import { Fernet, type Keyring, type RotationStep, type SecretStore, type StoredSecret, generateFernetKey, keyIdOf, loadKeyring, rotateMasterKey } from '../../src/crypto/index.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const temps: string[] = [];
function tempDir(prefix = 'vnfm-keyring-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
}
afterAll(() => temps.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

const keyFile = (home: string): string => path.join(home, 'master.key');
const keyFileLines = (home: string): string[] => fs.readFileSync(keyFile(home), 'utf8').split('\n').filter(Boolean);
const fileMode = (file: string): number => fs.statSync(file).mode & 0o777;
const noEnv = {};

class MemorySecretStore implements SecretStore {
  readonly rows = new Map<string, StoredSecret>();
  rewriteCalls = 0;
  activeKeyId?: string;
  /** Runs after the rewrite has committed, as a writer in another process would. */
  onRewrite?: () => void;

  async listSecrets(): Promise<StoredSecret[]> {
    return [...this.rows.values()].map((r) => ({ ...r }));
  }
  async rewriteSecrets(rewrite: (s: StoredSecret) => { token: string; keyId: string } | undefined, activeKeyId?: string): Promise<number> {
    this.rewriteCalls++;
    // All or nothing, like the store's transaction.
    const updates: StoredSecret[] = [];
    for (const row of this.rows.values()) {
      const out = rewrite({ ...row });
      if (out) updates.push({ ref: row.ref, ...out });
    }
    for (const u of updates) this.rows.set(u.ref, u);
    if (activeKeyId !== undefined) this.activeKeyId = activeKeyId;
    this.onRewrite?.();
    return updates.length;
  }
  put(ref: string, plain: string, keyring: Keyring): void {
    this.rows.set(ref, { ref, ...keyring.encrypt(plain) });
  }
}

async function expectAllReadable(store: SecretStore, keyring: Keyring, expected: Map<string, string>): Promise<void> {
  const rows = await store.listSecrets();
  expect(rows).toHaveLength(expected.size);
  for (const row of rows) expect(keyring.decrypt(row.token, row.keyId)).toBe(expected.get(row.ref));
}

describe('loadKeyring', () => {
  let home: string;
  beforeEach(() => {
    home = path.join(tempDir(), 'home');
  });

  it('creates <home>/master.key, mode 0600, on first use and reuses it', () => {
    const first = loadKeyring({ home, env: noEnv, createIfMissing: true });
    expect(first.source).toBe('file');
    expect(first.path).toBe(keyFile(home));
    expect(fileMode(keyFile(home))).toBe(0o600);
    expect(keyFileLines(home)).toHaveLength(1);
    expect(first.primaryKeyId).toMatch(/^[0-9a-f]{16}$/);
    expect(first.keyIds).toEqual([first.primaryKeyId]);

    const again = loadKeyring({ home, env: noEnv, createIfMissing: false });
    expect(again.primaryKeyId).toBe(first.primaryKeyId);
    const { token, keyId } = first.encrypt('s3cret');
    expect(keyId).toBe(first.primaryKeyId);
    expect(again.decrypt(token, keyId)).toBe('s3cret');
    expect(fs.readdirSync(home)).toEqual(['master.key']);
  });

  it("refuses a FIFO in the key file's place instead of blocking on it", () => {
    fs.mkdirSync(home);
    expect(spawnSync('mkfifo', ['-m', '600', keyFile(home)]).status).toBe(0);
    expect(() => loadKeyring({ home, env: noEnv, createIfMissing: false })).toThrow(/is not a regular file/);
  });

  it('takes the keys from VNFM_MASTER_KEY and writes no file', () => {
    const [k1, k2] = [generateFernetKey(), generateFernetKey()];
    const keyring = loadKeyring({ home, env: { VNFM_MASTER_KEY: ` ${k1} , ${k2}` }, createIfMissing: true });
    expect(keyring.source).toBe('env');
    expect(keyring.path).toBeUndefined();
    expect(keyring.keyIds).toEqual([keyIdOf(k1), keyIdOf(k2)]);
    expect(fs.existsSync(home)).toBe(false);
    // Old secrets under the second key still read; new ones use the first.
    const old = new Fernet(k2).encrypt('old');
    expect(keyring.decrypt(old, keyIdOf(k2))).toBe('old');
    expect(keyring.decrypt(old)).toBe('old');
    expect(keyring.encrypt('new').keyId).toBe(keyIdOf(k1));
  });

  it('never reads the key file when VNFM_MASTER_KEY is set', () => {
    fs.mkdirSync(home);
    fs.writeFileSync(keyFile(home), 'not a key\n', { mode: 0o644 });
    const key = generateFernetKey();
    expect(loadKeyring({ home, env: { VNFM_MASTER_KEY: key }, createIfMissing: false }).primaryKeyId).toBe(keyIdOf(key));
  });

  it('refuses a malformed VNFM_MASTER_KEY without echoing it', () => {
    const load = () => loadKeyring({ home, env: { VNFM_MASTER_KEY: `${generateFernetKey()},hunter2` }, createIfMissing: true });
    expect(load).toThrow(SecretKeyError);
    expect(load).toThrow(/key 2 of VNFM_MASTER_KEY is not a Fernet key/);
    expect(load).not.toThrow(/hunter2/);
  });

  it('refuses to make a new key when secrets exist but the key file is missing', () => {
    let err: unknown;
    try {
      loadKeyring({ home, env: noEnv, createIfMissing: false });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SecretKeyError);
    expect((err as SecretKeyError).message).toBe(`the store holds encrypted secrets but ${keyFile(home)} is missing`);
    expect((err as SecretKeyError).hint).toMatch(/restore the key file.*VNFM_MASTER_KEY/);
    expect(fs.existsSync(keyFile(home))).toBe(false);
  });

  it('names the missing key when a secret was encrypted with another key', () => {
    const other = generateFernetKey();
    const { token, keyId } = loadKeyring({ home: tempDir(), env: { VNFM_MASTER_KEY: other }, createIfMissing: true }).encrypt('x');
    const fileRing = loadKeyring({ home, env: noEnv, createIfMissing: true });
    expect(() => fileRing.decrypt(token, keyId)).toThrow(SecretKeyError);
    expect(() => fileRing.decrypt(token, keyId)).toThrow(`encrypted with key ${keyId}, which is not in the keyring (the key file ${keyFile(home)}`);
    const envRing = loadKeyring({ home, env: { VNFM_MASTER_KEY: generateFernetKey() }, createIfMissing: false });
    expect(() => envRing.decrypt(token, keyId)).toThrow(/not in the keyring \(the VNFM_MASTER_KEY environment variable/);
    expect(() => envRing.decrypt(token)).toThrow(SecretKeyError);
  });

  it('reports a corrupt token under a known key as corrupt, not as a missing key', () => {
    const keyring = loadKeyring({ home, env: noEnv, createIfMissing: true });
    const { token, keyId } = keyring.encrypt('x');
    const tampered = `${token.slice(0, 20)}${token[20] === 'A' ? 'B' : 'A'}${token.slice(21)}`;
    expect(() => keyring.decrypt(tampered, keyId)).toThrow(/could not be decrypted: the stored token is corrupt/);
  });

  it.each([0o640, 0o604, 0o660, 0o620])('refuses a key file with mode %o and says how to fix it', (mode) => {
    loadKeyring({ home, env: noEnv, createIfMissing: true });
    fs.chmodSync(keyFile(home), mode);
    let err: unknown;
    try {
      loadKeyring({ home, env: noEnv, createIfMissing: true });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SecretKeyError);
    expect((err as SecretKeyError).message).toContain('accessible to other users');
    expect((err as SecretKeyError).hint).toBe(`chmod 600 ${keyFile(home)}`);
  });

  it('refuses an empty or malformed key file, naming the line', () => {
    fs.mkdirSync(home);
    fs.writeFileSync(keyFile(home), '\n', { mode: 0o600 });
    expect(() => loadKeyring({ home, env: noEnv, createIfMissing: true })).toThrow(/holds no key/);
    fs.writeFileSync(keyFile(home), `# primary first\n${generateFernetKey()}\nnope\n`);
    expect(() => loadKeyring({ home, env: noEnv, createIfMissing: true })).toThrow(/line 3 of .*master\.key is not a Fernet key/);
  });

  it('keeps no key where JSON or inspection could print it', () => {
    const key = generateFernetKey();
    const keyring = loadKeyring({ home, env: { VNFM_MASTER_KEY: key }, createIfMissing: false });
    expect(JSON.stringify(keyring)).not.toContain(key.slice(0, 20));
  });
});

/** The crypto room compiled to JavaScript, for child processes to import. */
let compiledIndexUrl: string;
beforeAll(() => {
  const out = tempDir('vnfm-crypto-build-');
  const tsc = spawnSync(
    process.execPath,
    [
      path.join(repoRoot, 'node_modules/typescript/bin/tsc'),
      ...['--outDir', out, '--rootDir', path.join(repoRoot, 'src'), '--module', 'NodeNext', '--moduleResolution', 'NodeNext'],
      ...['--target', 'ES2022', '--strict', '--skipLibCheck', '--types', 'node'],
      path.join(repoRoot, 'src/crypto/index.ts'),
    ],
    { cwd: repoRoot, encoding: 'utf8' },
  );
  if (tsc.status !== 0) throw new Error(`tsc failed: ${tsc.stdout}${tsc.stderr}`);
  fs.writeFileSync(path.join(out, 'package.json'), '{"type":"module"}\n');
  compiledIndexUrl = pathToFileURL(path.join(out, 'crypto/index.js')).href;
});

interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}
interface ChildControl {
  kill(): void;
  send(text: string): void;
}
function runNode(script: string, opts: { onLine?: (line: string, child: ChildControl) => void } = {}): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
    const control: ChildControl = { kill: () => child.kill('SIGKILL'), send: (text) => child.stdin.write(text) };
    let stdout = '';
    let stderr = '';
    let pending = '';
    child.stdin.on('error', () => undefined);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        opts.onLine?.(line, control);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

describe('loadKeyring across processes', () => {
  it('gives eight processes racing to create the key file one and the same key', async () => {
    const home = path.join(tempDir(), 'home');
    // Each child loads the module, says READY and waits for GO, so that all
    // eight reach the missing key file at nearly the same moment.
    const script = `
      import { loadKeyring } from ${JSON.stringify(compiledIndexUrl)};
      process.stdout.write('READY\\n');
      process.stdin.once('data', () => {
        const keyring = loadKeyring({ home: ${JSON.stringify(home)}, env: {}, createIfMissing: true });
        process.stdout.write('KEY ' + keyring.primaryKeyId + '\\n');
        process.stdin.destroy();
      });`;
    const waiting: ChildControl[] = [];
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        runNode(script, {
          onLine: (line, child) => {
            if (line !== 'READY') return;
            waiting.push(child);
            if (waiting.length === 8) for (const c of waiting) c.send('GO\n');
          },
        }),
      ),
    );
    for (const r of results) expect(r.stderr).toBe('');
    const ids = results.map((r) => /KEY (\w+)/.exec(r.stdout)?.[1]);
    expect(ids[0]).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(ids)).toEqual(new Set([ids[0]]));
    expect(keyFileLines(home).map(keyIdOf)).toEqual([ids[0]]);
    expect(fileMode(keyFile(home))).toBe(0o600);
    expect(fs.readdirSync(home)).toEqual(['master.key']);
  });
});

describe('rotateMasterKey', () => {
  let home: string;
  let store: MemorySecretStore;
  let expected: Map<string, string>;

  function seed(keyring: Keyring, count = 25): void {
    for (let i = 0; i < count; i++) {
      const plain = `secret-${i}-${'x'.repeat(i)}`;
      store.put(`vim/${i}/password`, plain, keyring);
      expected.set(`vim/${i}/password`, plain);
    }
  }

  beforeEach(() => {
    home = path.join(tempDir(), 'home');
    store = new MemorySecretStore();
    expected = new Map();
  });

  it('re-encrypts every secret under a new key file key and drops the old key', async () => {
    const before = loadKeyring({ home, env: noEnv, createIfMissing: true });
    seed(before);
    const result = await rotateMasterKey({ home, env: noEnv, secrets: store });
    expect(result.rotated).toBe(25);
    expect(result.source).toBe('file');
    expect(result.path).toBe(keyFile(home));
    expect(result.keyId).not.toBe(before.primaryKeyId);
    expect(result.retiredKeyIds).toEqual([before.primaryKeyId]);
    expect(store.rewriteCalls).toBe(1);
    expect(store.activeKeyId).toBe(result.keyId);

    const after = loadKeyring({ home, env: noEnv, createIfMissing: false });
    expect(after.keyIds).toEqual([result.keyId]);
    expect(fileMode(keyFile(home))).toBe(0o600);
    for (const row of await store.listSecrets()) expect(row.keyId).toBe(result.keyId);
    await expectAllReadable(store, after, expected);
    expect(fs.readdirSync(home)).toEqual(['master.key']);
  });

  it('rotates to a key it is given', async () => {
    seed(loadKeyring({ home, env: noEnv, createIfMissing: true }), 3);
    const newKey = generateFernetKey();
    expect((await rotateMasterKey({ home, env: noEnv, secrets: store, newKey })).keyId).toBe(keyIdOf(newKey));
    expect(keyFileLines(home)).toEqual([newKey]);
    await expect(rotateMasterKey({ home, env: noEnv, secrets: store, newKey: 'short' })).rejects.toThrow(UsageError);
  });

  it.each<RotationStep>(['key-file-extended', 're-encrypted', 'verified', 'key-file-replaced'])(
    'leaves every secret readable from disk when it dies after %s, and a second run finishes',
    async (step) => {
      const before = loadKeyring({ home, env: noEnv, createIfMissing: true });
      seed(before);
      const crash = new Error('simulated crash');
      await expect(
        rotateMasterKey({
          home,
          env: noEnv,
          secrets: store,
          afterStep: (s) => {
            if (s === step) throw crash;
          },
        }),
      ).rejects.toThrow(crash);

      const onDisk = loadKeyring({ home, env: noEnv, createIfMissing: false });
      expect(onDisk.keyIds).toHaveLength(step === 'key-file-replaced' ? 1 : 2);
      await expectAllReadable(store, onDisk, expected);

      const again = await rotateMasterKey({ home, env: noEnv, secrets: store });
      const final = loadKeyring({ home, env: noEnv, createIfMissing: false });
      expect(final.keyIds).toEqual([again.keyId]);
      await expectAllReadable(store, final, expected);
    },
  );

  it('changes nothing when a secret cannot be decrypted', async () => {
    seed(loadKeyring({ home, env: noEnv, createIfMissing: true }), 3);
    const lost = new Fernet(generateFernetKey());
    store.rows.set('vim/orphan', { ref: 'vim/orphan', token: lost.encrypt('x'), keyId: 'ffffffffffffffff' });
    const keyFileBefore = fs.readFileSync(keyFile(home), 'utf8');
    const rowsBefore = await store.listSecrets();
    await expect(rotateMasterKey({ home, env: noEnv, secrets: store })).rejects.toThrow(/key ffffffffffffffff, which is not in the keyring/);
    expect(fs.readFileSync(keyFile(home), 'utf8')).toBe(keyFileBefore);
    expect(await store.listSecrets()).toEqual(rowsBefore);
  });

  it('refuses to rotate when secrets exist and the key file is missing', async () => {
    store.rows.set('a', { ref: 'a', token: new Fernet(generateFernetKey()).encrypt('x'), keyId: '0000000000000000' });
    await expect(rotateMasterKey({ home, env: noEnv, secrets: store })).rejects.toThrow(SecretKeyError);
    expect(fs.existsSync(keyFile(home))).toBe(false);
  });

  it('leaves a sealed value outside the VIMs that no key opens as it is, and rotates the rest', async () => {
    seed(loadKeyring({ home, env: noEnv, createIfMissing: true }), 3);
    const lost = { ref: 'lcm_op_occs/1/operation_params:$.password', token: new Fernet(generateFernetKey()).encrypt('x'), keyId: 'ffffffffffffffff' };
    store.rows.set(lost.ref, lost);
    const result = await rotateMasterKey({ home, env: noEnv, secrets: store });
    expect(result.rotated).toBe(3);
    expect(result.unreadable).toEqual([lost.ref]);
    expect(store.rows.get(lost.ref)).toEqual(lost);
    await expectAllReadable(
      { listSecrets: async () => (await store.listSecrets()).filter((r) => r.ref !== lost.ref), rewriteSecrets: async () => 0 },
      loadKeyring({ home, env: noEnv, createIfMissing: false }),
      expected,
    );
  });

  it('keeps the old key when a secret written after the re-encryption does not open with the new key alone', async () => {
    const before = loadKeyring({ home, env: noEnv, createIfMissing: true });
    seed(before, 2);
    // A writer that ignored the store's active key: the check before the key file is switched catches it.
    store.onRewrite = () => {
      store.onRewrite = undefined;
      store.put('vim/late', 'written meanwhile', before);
      expected.set('vim/late', 'written meanwhile');
    };
    await expect(rotateMasterKey({ home, env: noEnv, secrets: store })).rejects.toThrow(/1 secret\(s\) do not open with the new master key .*vim\/late.*the old keys are kept/);
    const onDisk = loadKeyring({ home, env: noEnv, createIfMissing: false });
    expect(onDisk.keyIds).toHaveLength(2);
    expect(onDisk.keyIds).toContain(before.primaryKeyId);
    await expectAllReadable(store, onDisk, expected);
    // Run again: the late secret is rotated too and the old key goes.
    const again = await rotateMasterKey({ home, env: noEnv, secrets: store });
    expect(loadKeyring({ home, env: noEnv, createIfMissing: false }).keyIds).toEqual([again.keyId]);
    await expectAllReadable(store, loadKeyring({ home, env: noEnv, createIfMissing: false }), expected);
  });

  it('holds the lock for the whole rotation and releases it on failure too', async () => {
    seed(loadKeyring({ home, env: noEnv, createIfMissing: true }), 2);
    const events: string[] = [];
    const lock = {
      acquire: async () => void events.push('acquire'),
      release: async () => void events.push('release'),
    };
    await rotateMasterKey({ home, env: noEnv, secrets: store, lock, afterStep: (s) => events.push(s) });
    expect(events).toEqual(['acquire', 'key-file-extended', 're-encrypted', 'verified', 'key-file-replaced', 'release']);
    events.length = 0;
    const busy = {
      acquire: async () => {
        throw new ConflictError('a master key rotation is in progress by pid 1');
      },
      release: async () => void events.push('release'),
    };
    const keyFileBefore = fs.readFileSync(keyFile(home), 'utf8');
    await expect(rotateMasterKey({ home, env: noEnv, secrets: store, lock: busy })).rejects.toThrow(ConflictError);
    expect(events).toEqual([]);
    expect(fs.readFileSync(keyFile(home), 'utf8')).toBe(keyFileBefore);
  });

  it('removes key temp files that killed writers left, and keeps those of live ones', async () => {
    seed(loadKeyring({ home, env: noEnv, createIfMissing: true }), 1);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const stale = path.join(home, `.master.key.${dead}.0123456789ab.tmp`);
    const live = path.join(home, `.master.key.${process.ppid}.0123456789ab.tmp`);
    fs.writeFileSync(stale, `${generateFernetKey()}\n`, { mode: 0o600 });
    fs.writeFileSync(live, `${generateFernetKey()}\n`, { mode: 0o600 });
    loadKeyring({ home, env: noEnv, createIfMissing: false });
    expect(fs.existsSync(stale)).toBe(false);
    expect(fs.existsSync(live)).toBe(true);
    fs.rmSync(live);
    fs.writeFileSync(stale, `${generateFernetKey()}\n`, { mode: 0o600 });
    await rotateMasterKey({ home, env: noEnv, secrets: store });
    expect(fs.readdirSync(home)).toEqual(['master.key']);
  });

  describe('with VNFM_MASTER_KEY', () => {
    const oldKey = generateFernetKey();
    const newKey = generateFernetKey();

    it('re-encrypts everything under the first key and writes no file', async () => {
      seed(loadKeyring({ home, env: { VNFM_MASTER_KEY: oldKey }, createIfMissing: true }));
      const env = { VNFM_MASTER_KEY: `${newKey},${oldKey}` };
      const result = await rotateMasterKey({ home, env, secrets: store });
      expect(result).toEqual({ rotated: 25, keyId: keyIdOf(newKey), source: 'env', retiredKeyIds: [keyIdOf(oldKey)], unreadable: [] });
      expect(fs.existsSync(home)).toBe(false);
      await expectAllReadable(store, loadKeyring({ home, env: { VNFM_MASTER_KEY: newKey }, createIfMissing: false }), expected);
      expect((await rotateMasterKey({ home, env, secrets: store })).rotated).toBe(0);
    });

    it('reports nothing to rotate when the one key already holds every secret', async () => {
      const env = { VNFM_MASTER_KEY: oldKey };
      seed(loadKeyring({ home, env, createIfMissing: true }), 4);
      expect(await rotateMasterKey({ home, env, secrets: store })).toEqual({ rotated: 0, keyId: keyIdOf(oldKey), source: 'env', retiredKeyIds: [], unreadable: [] });
    });

    it('refuses a given new key, hinting to prepend one to VNFM_MASTER_KEY', async () => {
      let err: unknown;
      try {
        await rotateMasterKey({ home, env: { VNFM_MASTER_KEY: oldKey }, secrets: store, newKey });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UsageError);
      expect((err as UsageError).hint).toMatch(/VNFM_MASTER_KEY=<new>,<old>.*vnfm key-generate/);
    });

    it('names the key it lacks when the env no longer holds the old key', async () => {
      seed(loadKeyring({ home, env: { VNFM_MASTER_KEY: oldKey }, createIfMissing: true }), 2);
      await expect(rotateMasterKey({ home, env: { VNFM_MASTER_KEY: newKey }, secrets: store })).rejects.toThrow(new RegExp(`key ${keyIdOf(oldKey)}, which is not in the keyring`));
    });
  });
});

/**
 * A child process rotates a SQLite-backed store (WAL, one transaction for
 * the re-encryption, as the real store does) and freezes at a chosen point
 * until it is SIGKILLed there.
 */
describe('rotateMasterKey killed with SIGKILL', () => {
  const SECRETS = 2000;

  function createDb(file: string, keyring: Keyring): Map<string, string> {
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE secret (ref TEXT PRIMARY KEY, token TEXT NOT NULL, key_id TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO secret (ref, token, key_id) VALUES (?, ?, ?)');
    const plain = new Map<string, string>();
    db.transaction(() => {
      for (let i = 0; i < SECRETS; i++) {
        const ref = `vim/${i}/bearer_token`;
        const value = `token-${i}-${'z'.repeat(i % 50)}`;
        const { token, keyId } = keyring.encrypt(value);
        insert.run(ref, token, keyId);
        plain.set(ref, value);
      }
    })();
    db.close();
    return plain;
  }

  function childScript(home: string, dbFile: string, freezeAt: string): string {
    return `
      import { createRequire } from 'node:module';
      import { rotateMasterKey } from ${JSON.stringify(compiledIndexUrl)};
      const Database = createRequire(${JSON.stringify(path.join(repoRoot, 'package.json'))})('better-sqlite3');
      const freezeAt = ${JSON.stringify(freezeAt)};
      // Report the point reached, then block this thread for good: the parent kills us here.
      const freeze = (point) => {
        if (point !== freezeAt) return;
        process.stdout.write('FROZEN ' + point + '\\n');
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
      };
      const db = new Database(${JSON.stringify(dbFile)});
      db.pragma('journal_mode = WAL');
      const update = db.prepare('UPDATE secret SET token = ?, key_id = ? WHERE ref = ?');
      const list = () => db.prepare('SELECT ref, token, key_id AS keyId FROM secret').all();
      const rewriteAll = db.transaction((rewrite) => {
          const rows = list();
          let n = 0;
          rows.forEach((row, i) => {
            const out = rewrite(row);
            if (out) { update.run(out.token, out.keyId, row.ref); n++; }
            if (i === Math.floor(rows.length / 2)) freeze('mid-transaction');
          });
          return n;
        });
      const store = { listSecrets: async () => list(), rewriteSecrets: async (rewrite) => rewriteAll(rewrite) };
      const result = await rotateMasterKey({ home: ${JSON.stringify(home)}, env: {}, secrets: store, afterStep: freeze });
      process.stdout.write('DONE ' + JSON.stringify(result) + '\\n');`;
  }

  function readAll(dbFile: string): { ref: string; token: string; keyId: string }[] {
    const db = new Database(dbFile, { readonly: false });
    try {
      return db.prepare('SELECT ref, token, key_id AS keyId FROM secret').all() as { ref: string; token: string; keyId: string }[];
    } finally {
      db.close();
    }
  }

  it.each(['key-file-extended', 'mid-transaction', 're-encrypted', 'verified', 'key-file-replaced'])('keeps every secret readable when killed at %s', async (point) => {
    const home = path.join(tempDir(), 'home');
    const dbFile = path.join(tempDir(), 'state.db');
    const original = loadKeyring({ home, env: noEnv, createIfMissing: true });
    const plain = createDb(dbFile, original);

    let frozenAt: string | undefined;
    const r = await runNode(childScript(home, dbFile, point), {
      onLine: (line, child) => {
        if (line.startsWith('FROZEN ')) {
          frozenAt = line.slice('FROZEN '.length);
          child.kill();
        }
      },
    });
    expect(r.stderr).toBe('');
    expect(frozenAt).toBe(point);
    expect(r.signal).toBe('SIGKILL');

    const rows = readAll(dbFile);
    expect(rows).toHaveLength(SECRETS);
    const onDisk = loadKeyring({ home, env: noEnv, createIfMissing: false });
    for (const row of rows) expect(onDisk.decrypt(row.token, row.keyId)).toBe(plain.get(row.ref));
    // One transaction: the secrets are either all under the old key or all under the new one.
    const keyIds = new Set(rows.map((row) => row.keyId));
    expect(keyIds.size).toBe(1);
    expect(keyIds.has(original.primaryKeyId)).toBe(point === 'key-file-extended' || point === 'mid-transaction');
    expect(fileMode(keyFile(home))).toBe(0o600);
  });

  it('finishes in a child that is not killed', async () => {
    const home = path.join(tempDir(), 'home');
    const dbFile = path.join(tempDir(), 'state.db');
    const plain = createDb(dbFile, loadKeyring({ home, env: noEnv, createIfMissing: true }));
    const r = await runNode(childScript(home, dbFile, 'never'));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout.trim().slice('DONE '.length)) as { rotated: number; keyId: string };
    expect(result.rotated).toBe(SECRETS);
    const onDisk = loadKeyring({ home, env: noEnv, createIfMissing: false });
    expect(onDisk.keyIds).toEqual([result.keyId]);
    for (const row of readAll(dbFile)) expect(onDisk.decrypt(row.token, row.keyId)).toBe(plain.get(row.ref));
  });
});
