/**
 * What a package script can reach: run by vnfm as root, it runs as an
 * unprivileged user in a mount namespace that hides VNFM_HOME, and cannot
 * read vnfm's environment, key file or database; run by another user, it
 * runs as that user (documented). Whatever it prints of a secret it was
 * given, or of the VIM's credentials, reaches the log as `***`.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import type { VimConnection, VnfInstance } from '../../src/lcm/index.js';
import { createManagementDriver, resolveScriptIsolation, runPackageScript, type HookContext, type ScriptIsolation, type SealedValue } from '../../src/mgmt/index.js';
import { secretForms } from '../../src/mgmt/package-script.js';
import { isolatedCommand } from '../../src/mgmt/script-isolation.js';

const sealedOf = (plain: string): SealedValue => ({ sealed: `enc:${Buffer.from(plain).toString('base64')}`, keyId: 'k1' });
const open = async (v: SealedValue) => Buffer.from(v.sealed.slice(4), 'base64').toString();

const instance: VnfInstance = {
  id: 'inst-1',
  vnfInstanceDescription: '',
  vnfdId: 'd',
  vnfPkgId: 'p',
  vnfProvider: '',
  vnfProductName: '',
  vnfSoftwareVersion: '',
  vnfdVersion: '',
  instantiationState: 'NOT_INSTANTIATED',
  vimId: 'vim-id',
  createdAt: '',
  updatedAt: '',
};

const VIM_TOKEN = 'vim-bearer-token-0c9e7d';
const vim: VimConnection = {
  id: 'vim-id',
  name: 'edge',
  inline: false,
  spec: { type: 'kubernetes', authUrl: 'https://127.0.0.1:6443', auth: { method: 'bearer-token' }, verifyTls: true },
  secrets: { bearerToken: VIM_TOKEN },
};

function ctx(packageDir: string, file: string, request: unknown): HookContext & { logs: string[] } {
  const logs: string[] = [];
  return {
    hook: 'instantiate_end',
    vnfInstanceId: 'inst-1',
    operation: 'INSTANTIATE',
    request,
    implementation: { implementation: 'configure', artifactFile: file },
    packageDir,
    signal: new AbortController().signal,
    report: () => {},
    log: (l) => logs.push(l),
    vim,
    instance,
    acceptHostKeys: [],
    allowPackageScripts: true,
    logs,
  };
}

/**
 * A VNFM_HOME laid out as vnfm keeps it (key file 0600, package members
 * 0600 in 0700 directories), except that the home and the database are
 * left readable to all: only the namespace hides them then.
 */
function vnfmHome(script: string): { home: string; packageDir: string } {
  const home = join(mkdtempSync(join(tmpdir(), 'vnfm-iso-')), 'home');
  const packageDir = join(home, 'packages', 'p1');
  mkdirSync(join(packageDir, 'Scripts'), { recursive: true, mode: 0o700 });
  mkdirSync(join(packageDir, 'Files'), { mode: 0o700 });
  writeFileSync(join(home, 'master.key'), 'MASTER-KEY-LINE-must-stay-hidden\n', { mode: 0o600 });
  writeFileSync(join(home, 'vnfm.db'), 'DATABASE-CONTENT-must-stay-hidden', { mode: 0o644 });
  writeFileSync(join(packageDir, 'Scripts', 'probe.sh'), script, { mode: 0o600 });
  writeFileSync(join(packageDir, 'Files', 'data.txt'), 'package data\n', { mode: 0o600 });
  chmodSync(home, 0o755);
  return { home, packageDir };
}

const PROBE = `#!/bin/bash
home=$(sed -n 's/.*"home":"\\([^"]*\\)".*/\\1/p')
echo "uid=$(id -u)"
if tr '\\0' '\\n' < /proc/$PPID/environ >/dev/null 2>&1; then echo "parent-environ=readable"; else echo "parent-environ=denied"; fi
tr '\\0' '\\n' < /proc/$PPID/environ 2>/dev/null | grep -c VNFM_MASTER_KEY || true
env | grep -c VNFM_MASTER_KEY || true
cat "$home/master.key" 2>/dev/null || echo "key-file=unreadable"
cat "$home/vnfm.db" 2>/dev/null || echo "database=unreadable"
echo "home-entries=$(ls -A "$home" 2>/dev/null | wc -l)"
echo "package-data=$(cat Files/data.txt)"
touch Files/new 2>/dev/null && echo "package=writable" || echo "package=read-only"
touch "$HOME/scratch" && echo "own-home=writable"
`;

describe('package scripts run by vnfm as root', () => {
  const root = process.getuid?.() === 0;

  it(root ? 'run as nobody in a namespace hiding VNFM_HOME: no master key, key file or database' : "run as vnfm's own user (vnfm is not root)", async () => {
    const { home, packageDir } = vnfmHome(PROBE);
    const iso = resolveScriptIsolation({ uid: process.getuid?.(), hide: [home], path: process.env['PATH'] });
    if (!root) {
      expect(iso).toMatchObject({ kind: 'same-user' });
      return;
    }
    expect(iso).toMatchObject({
      kind: 'other-user',
      user: { name: 'nobody', uid: 65534 },
      hide: [home],
      namespace: { unshare: expect.stringMatching(/unshare$/), setpriv: expect.stringMatching(/setpriv$/) },
    });
    const c = ctx(packageDir, 'Scripts/probe.sh', { additionalParams: { home } });
    await runPackageScript(c, c.implementation!, { open, env: { PATH: process.env['PATH'], HOME: '/root', VNFM_MASTER_KEY: 'env-master-key' }, isolation: iso });
    const out = c.logs.filter((l) => l.startsWith('Scripts/probe.sh: ')).map((l) => l.slice('Scripts/probe.sh: '.length));
    expect(out).toEqual([
      'uid=65534',
      'parent-environ=denied',
      '0',
      '0',
      'key-file=unreadable',
      'database=unreadable',
      'home-entries=0',
      'package-data=package data',
      'package=read-only',
      'own-home=writable',
      'exited with code 0',
    ]);
    expect(c.logs[0]).toMatch(
      /^running Scripts\/probe\.sh: \/bin\/bash \S+\/vnfm-script-\w+\/package\/Scripts\/probe\.sh in \S+\/package as nobody \(uid 65534\) in a private mount namespace hiding /,
    );
    expect(c.logs[0]).toMatch(/, in a PID namespace of its own: what it starts ends with it$/);
    expect(c.logs.join('\n')).not.toMatch(/env-master-key|MASTER-KEY-LINE|DATABASE-CONTENT/);
    // The copy and the script's HOME are gone (other files' scripts may have theirs meanwhile); the package itself is as it was.
    const workspace = / (\S+\/vnfm-script-\w+)\/package\//.exec(c.logs[0]!)![1]!;
    expect(existsSync(workspace)).toBe(false);
    expect(existsSync(join(packageDir, 'Files', 'new'))).toBe(false);
  });

  it('without a mount namespace the user is still switched (spawn uid/gid)', async () => {
    const iso: ScriptIsolation = { kind: 'other-user', user: { name: 'nobody', uid: 65534, gid: 65534 }, hide: ['/x'] };
    expect(isolatedCommand(iso, '/bin/bash', ['s.sh'])).toEqual({ command: '/bin/bash', args: ['s.sh'], uid: 65534, gid: 65534, processes: 'tracked' });
    if (!root) return;
    const { home, packageDir } = vnfmHome(PROBE);
    const c = ctx(packageDir, 'Scripts/probe.sh', { additionalParams: { home } });
    await runPackageScript(c, c.implementation!, { open, env: { PATH: process.env['PATH'] }, isolation: { ...iso, hide: [home] } });
    const out = c.logs.filter((l) => l.startsWith('Scripts/probe.sh: ')).map((l) => l.slice('Scripts/probe.sh: '.length));
    // The key file stays unreadable by its mode; the database left 0644 in a 0755 home is what the namespace is for.
    expect(out.slice(0, 5)).toEqual(['uid=65534', 'parent-environ=denied', '0', '0', 'key-file=unreadable']);
    expect(c.logs[0]).toContain('as nobody (uid 65534) (no mount namespace on this host), what it starts followed in /proc and stopped with it');
  });
});

describe('an abort', () => {
  it('stops a script run as another user, and what it started', async () => {
    const token = String(Date.now() % 1_000_000);
    const { home, packageDir } = vnfmHome(`sleep 300.${token} &\nuntil grep -q ${token} /proc/$!/cmdline; do sleep 0.02; done\necho started\nwait\n`);
    const iso = resolveScriptIsolation({ uid: process.getuid?.(), hide: [home], path: process.env['PATH'] });
    const controller = new AbortController();
    let seen: number[] = [];
    const c = ctx(packageDir, 'Scripts/probe.sh', {});
    const run = runPackageScript(
      {
        ...c,
        signal: controller.signal,
        log: (l) => {
          if (!l.endsWith(': started')) return;
          // In its PID namespace the script knows other pids than these: the sleep is found by its command line.
          seen = running(`.${token}`);
          controller.abort(new Error('timed out after 5s'));
        },
      },
      c.implementation!,
      { open, env: { PATH: process.env['PATH'] }, isolation: iso, killGraceMs: 2000 },
    );
    await expect(run).rejects.toThrow('package script Scripts/probe.sh (hook instantiate_end, artifact configure) was stopped: timed out after 5s');
    expect(seen).toHaveLength(1);
    expect(seen.filter(alive)).toEqual([]);
    expect(running(`.${token}`)).toEqual([]);
    expect(readdirSync(tmpdir()).filter((f) => f.startsWith('vnfm-script-') && existsSync(join(tmpdir(), f, 'package', 'Scripts', 'probe.sh')))).toEqual([]);
  });
});

/** Running, not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The pids of the processes running with `text` in their command line. */
function running(text: string): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text) && alive(pid);
      } catch {
        return false;
      }
    });
}

describe('resolveScriptIsolation', () => {
  it("vnfm not root: scripts run as vnfm's user; another VNFM_SCRIPT_USER is refused", () => {
    expect(resolveScriptIsolation({ uid: 1000, hide: ['/h'] })).toMatchObject({ kind: 'same-user' });
    const err = (() => {
      try {
        return resolveScriptIsolation({ uid: 1000, user: 'nobody', hide: ['/h'] });
      } catch (e) {
        return e;
      }
    })() as UsageError;
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toBe('VNFM_SCRIPT_USER=nobody: only vnfm running as root can run package scripts as another user (vnfm runs as uid 1000)');
  });

  it('vnfm as root: VNFM_SCRIPT_USER picks the user (root itself means no switch); an unknown user is refused', () => {
    expect(resolveScriptIsolation({ uid: 0, user: 'root', hide: ['/h'] })).toMatchObject({ kind: 'same-user' });
    expect(resolveScriptIsolation({ uid: 0, user: '65534', hide: ['/h'] })).toMatchObject({ kind: 'other-user', user: { name: 'nobody', uid: 65534 } });
    expect(() => resolveScriptIsolation({ uid: 0, user: 'no-such-user-vnfm', hide: ['/h'] })).toThrow(/^VNFM_SCRIPT_USER=no-such-user-vnfm: no such user$/);
  });
});

describe('the management driver', () => {
  it('refuses, before the operation starts, a script user that cannot work', async () => {
    const driver = createManagementDriver({
      secrets: async () => {
        throw new Error('unused');
      },
      seal: async (p: string) => sealedOf(p),
      open,
      scriptIsolation: () => resolveScriptIsolation({ uid: 1000, user: 'nobody', hide: ['/h'] }),
    });
    const dir = mkdtempSync(join(tmpdir(), 'vnfm-prep-'));
    mkdirSync(join(dir, 'Scripts'));
    writeFileSync(join(dir, 'Scripts', 'x.sh'), 'exit 0\n');
    const prepare = driver.prepare!({
      operation: 'INSTANTIATE',
      hooks: ['instantiate_start', 'instantiate_end'],
      implementations: { instantiate_end: { implementation: 'x', artifactFile: 'Scripts/x.sh' } },
      request: { flavourId: 'simple' },
      source: 'inst.json',
      packageDir: dir,
      allowPackageScripts: async () => true,
    });
    await expect(prepare).rejects.toThrow(UsageError);
    await expect(prepare).rejects.toThrow(/only vnfm running as root can run package scripts as another user/);
  });
});

describe('package script output', () => {
  it("shows no secret it was given, in any form: plain, JSON-escaped, a line of a key, in a URL, the VIM's, or in its record", async () => {
    const password = 'pa"ss\\word-71d';
    const key = ['-----BEGIN PRIVATE KEY-----', 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC', 'BKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj', '-----END PRIVATE KEY-----'].join('\n');
    const dir = mkdtempSync(join(tmpdir(), 'vnfm-redact-'));
    mkdirSync(join(dir, 'Scripts'));
    writeFileSync(
      join(dir, 'Scripts', 'leak.sh'),
      [
        'payload=$(cat)',
        'echo "got: $payload"',
        'printf "%s\\n" "$payload" | sed -n \'s/.*"key":"\\([^"]*\\)".*/\\1/p\' | sed \'s/\\\\n/\\n/g\'',
        'echo "registry https://admin:hunter2-url@registry:5000/v2"',
        `echo "token ${VIM_TOKEN}" >&2`,
        `echo '{"vnfm_record": {"token": "${VIM_TOKEN}", "ok": true}}'`,
      ].join('\n'),
    );
    const c = ctx(dir, 'Scripts/leak.sh', { additionalParams: { password: sealedOf(password), key: sealedOf(key), user: 'admin' } });
    const outcome = await runPackageScript(c, c.implementation!, { open });
    const log = c.logs.join('\n');
    expect(log).toContain('got: {"operation":"instantiate_end"');
    expect(log).toContain('"user":"admin"');
    for (const s of secretForms([password, key, VIM_TOKEN])) expect(log).not.toContain(s);
    expect(log).not.toContain('pa\\"ss');
    expect(log).not.toContain('hunter2-url');
    expect(log).toContain('registry https://admin:***@registry:5000/v2');
    expect(log).toContain(`Scripts/leak.sh [stderr]: token ***`);
    expect(outcome).toEqual({ record: { 'package-script:configure': { token: '***', ok: true } } });
  });
});
