/**
 * VNFM_MASTER_KEY_COMMAND: the master key printed by a command (a secret
 * manager's CLI), run through /bin/sh only by the commands that open or seal
 * a secret, once per command; its failures are exit 5 and never show what it
 * printed; VNFM_MASTER_KEY wins over it; it is gone from the environment of
 * what vnfm starts; key-rotate works with NEW,OLD printed, as with the
 * environment variable.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { generateFernetKey, keyIdOf, loadKeyring, rotateMasterKey } from '../../src/crypto/index.js';
import { runKeyCommand } from '../../src/crypto/key-command.js';
import { SecretKeyError, UsageError } from '../../src/errors.js';
import { openStore } from '../../src/store/index.js';
import { openSecrets } from '../../src/vim/index.js';

interface Setup {
  dir: string;
  home: string;
  /** The file the key command prints (what a secret manager would hold). */
  secret: string;
  /** One line per run of the key command. */
  runs: string;
  /** The command: records its run and its environment, then prints the secret. */
  command: string;
}

function setup(): Setup {
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-keycmd-'));
  const secret = join(dir, 'secret');
  const runs = join(dir, 'runs');
  return { dir, home: join(dir, 'home'), secret, runs, command: `echo run >> '${runs}'; env > '${join(dir, 'env')}'; cat '${secret}'` };
}

const runCount = (s: Setup) => (existsSync(s.runs) ? readFileSync(s.runs, 'utf8').split('\n').filter(Boolean).length : 0);

function vimConfig(dir: string, token: string): string {
  const path = join(dir, `${token}.yaml`);
  writeFileSync(path, `auth_url: https://127.0.0.1:6443\ntype: kubernetes\nproject_name: default\nbearer_token: ${token}\nssl_ca_cert: None\n`);
  return path;
}

async function run(home: string, argv: string[], env: Record<string, string | undefined>) {
  const out = { stdout: '', stderr: '' };
  const stream = (key: 'stdout' | 'stderr') => {
    const s = new PassThrough();
    s.on('data', (d: Buffer) => (out[key] += d.toString()));
    return s;
  };
  const fullEnv: Record<string, string | undefined> = { PATH: process.env['PATH'], VNFM_HOME: home, ...env };
  const code = await main(argv, { env: fullEnv, cwd: home.replace(/\/home$/, ''), streams: { stdin: new PassThrough(), stdout: stream('stdout'), stderr: stream('stderr') } });
  return { code, ...out, env: fullEnv };
}

async function tokens(home: string, key: string): Promise<Record<string, string | undefined>> {
  const store = openStore(home);
  try {
    const keyring = loadKeyring({ home, env: { VNFM_MASTER_KEY: key }, createIfMissing: false });
    return Object.fromEntries(await Promise.all((await store.vims.list()).map(async (v) => [v.name, (await openSecrets(store.vims, keyring, v)).bearerToken])));
  } finally {
    await store.close();
  }
}

describe('VNFM_MASTER_KEY_COMMAND', () => {
  it('is run once by a command that seals a secret, never by one that reads none, and writes no key file; the command sees no master key variable', async () => {
    const s = setup();
    const key = generateFernetKey();
    writeFileSync(s.secret, `${key}\n`);
    const env = { VNFM_MASTER_KEY_COMMAND: s.command, SECRET_MANAGER_TOKEN: 'token-for-the-manager' };
    const reg = await run(s.home, ['vim-register', '--no-check', '--config-file', vimConfig(s.dir, 'tok-a'), 'a'], env);
    expect(reg.code, reg.stderr).toBe(0);
    expect(runCount(s)).toBe(1);
    expect(existsSync(join(s.home, 'master.key'))).toBe(false);
    expect(await tokens(s.home, key)).toEqual({ a: 'tok-a' });
    // The command had vnfm's environment (its secret manager's token) without the key's variables.
    const seen = readFileSync(join(s.dir, 'env'), 'utf8');
    expect(seen).toContain('SECRET_MANAGER_TOKEN=token-for-the-manager');
    expect(seen).not.toMatch(/^VNFM_MASTER_KEY(_COMMAND)?=/m);
    // Gone from the environment vnfm was given, so nothing vnfm starts can fetch the key.
    expect(reg.env['VNFM_MASTER_KEY_COMMAND']).toBeUndefined();

    for (const argv of [['vim-list'], ['vim-show', 'a'], ['vnf-list'], ['op-list'], ['store-info']]) {
      const r = await run(s.home, argv, env);
      expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
    }
    expect(runCount(s)).toBe(1);
  });

  it('VNFM_MASTER_KEY wins over it (the command is not run)', async () => {
    const s = setup();
    const key = generateFernetKey();
    writeFileSync(s.secret, `${generateFernetKey()}\n`);
    const r = await run(s.home, ['vim-register', '--no-check', '--config-file', vimConfig(s.dir, 'tok-b'), 'b'], { VNFM_MASTER_KEY: key, VNFM_MASTER_KEY_COMMAND: s.command });
    expect(r.code, r.stderr).toBe(0);
    expect(runCount(s)).toBe(0);
    expect(await tokens(s.home, key)).toEqual({ b: 'tok-b' });
  });

  it('a command that fails, prints nothing, prints no key or prints another key: exit 5 naming the variable, its output never shown, nothing stored', async () => {
    const s = setup();
    const key = generateFernetKey();
    writeFileSync(s.secret, key);
    expect((await run(s.home, ['vim-register', '--no-check', '--config-file', vimConfig(s.dir, 'tok-c'), 'c'], { VNFM_MASTER_KEY_COMMAND: s.command })).code).toBe(0);
    const other = generateFernetKey();
    const cases: [string, RegExp][] = [
      [`printf '%s' '${other}'; exit 3`, /VNFM_MASTER_KEY_COMMAND exited with status 3 \(its output is not shown\)/],
      ['true', /VNFM_MASTER_KEY_COMMAND printed nothing/],
      [`echo 'not-a-key-but-secret-text'`, /key 1 of the output of VNFM_MASTER_KEY_COMMAND is not a Fernet key/],
      [`echo '${other}'`, /encrypted with key [0-9a-f]{16}, which the output of VNFM_MASTER_KEY_COMMAND does not hold/],
      ['kill -9 $$', /VNFM_MASTER_KEY_COMMAND was killed by SIGKILL/],
    ];
    for (const [command, message] of cases) {
      const r = await run(s.home, ['vim-register', '--no-check', '--config-file', vimConfig(s.dir, 'tok-d'), 'd'], { VNFM_MASTER_KEY_COMMAND: command });
      expect(r.code, `${command}: ${r.stderr}`).toBe(5);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toContain(other);
      expect(r.stderr).not.toContain('not-a-key-but-secret-text');
    }
    expect(await tokens(s.home, key)).toEqual({ c: 'tok-c' });
  });

  it('a command that does not finish in time is stopped: exit 5 naming the variable', () => {
    const err = (() => {
      try {
        runKeyCommand('exec sleep 30', {}, 200);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(SecretKeyError);
    expect((err as SecretKeyError).exitCode).toBe(5);
    expect((err as Error).message).toBe('VNFM_MASTER_KEY_COMMAND did not finish within 0.2 s and was stopped');
  });

  it('key-rotate: with NEW,OLD printed every secret is sealed under NEW, which then opens them alone; one key printed rotates nothing and says how', async () => {
    const s = setup();
    const oldKey = generateFernetKey();
    writeFileSync(s.secret, oldKey);
    const env = { VNFM_MASTER_KEY_COMMAND: s.command };
    for (const name of ['a', 'b']) expect((await run(s.home, ['vim-register', '--no-check', '--config-file', vimConfig(s.dir, `rot-${name}`), name], env)).code).toBe(0);

    const single = await run(s.home, ['key-rotate', '-o', 'json'], env);
    expect(single.code, single.stderr).toBe(0);
    expect(JSON.parse(single.stdout)).toMatchObject({ rotated: 0, source: 'command', retired_key_ids: [] });
    expect(single.stderr).toMatch(/which holds one key: to rotate, put a new key first there \(NEW,OLD/);

    const newKey = generateFernetKey();
    writeFileSync(s.secret, `${newKey},${oldKey}\n`);
    const rot = await run(s.home, ['key-rotate', '-o', 'json'], env);
    expect(rot.code, rot.stderr).toBe(0);
    expect(JSON.parse(rot.stdout)).toMatchObject({ rotated: 2, source: 'command', key_id: keyIdOf(newKey), retired_key_ids: [keyIdOf(oldKey)] });
    expect(rot.stderr).toMatch(/remove them from what VNFM_MASTER_KEY_COMMAND prints/);
    expect(rot.stdout + rot.stderr).not.toContain(newKey);
    expect(existsSync(join(s.home, 'master.key'))).toBe(false);

    writeFileSync(s.secret, `${newKey}\n`);
    expect(await tokens(s.home, newKey)).toEqual({ a: 'rot-a', b: 'rot-b' });
    const after = await run(s.home, ['vim-register', '--no-check', '--config-file', vimConfig(s.dir, 'rot-c'), 'c'], env);
    expect(after.code, after.stderr).toBe(0);
    writeFileSync(s.secret, `${oldKey}\n`);
    expect((await run(s.home, ['vim-register', '--no-check', '--config-file', vimConfig(s.dir, 'rot-d'), 'd'], env)).code).toBe(5);
  });

  it('rotating to a given key is refused (vnfm cannot write to the secret manager): the hint says to print NEW,OLD', async () => {
    const key = generateFernetKey();
    const refused = await rotateMasterKey({
      home: mkdtempSync(join(tmpdir(), 'vnfm-keycmd-')),
      env: { VNFM_MASTER_KEY_COMMAND: `echo '${key}'` },
      secrets: {} as never,
      newKey: generateFernetKey(),
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(UsageError);
    expect((refused as UsageError).message).toBe('cannot rotate to a given key while the keys come from VNFM_MASTER_KEY_COMMAND');
    expect((refused as UsageError).hint).toMatch(/put the new key first in what VNFM_MASTER_KEY_COMMAND prints \(<new>,<old>\)/);
  });
});
