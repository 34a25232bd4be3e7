/**
 * The single executable as an air-gapped machine gets it: built here
 * (`npm run dist`'s scripts), copied alone into an empty directory and run
 * with an empty PATH (no `node`, no node_modules anywhere it could look) and
 * a fresh VNFM_HOME.
 */
import { execFile, execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/cli/version.js';

const root = resolve(import.meta.dirname, '../..');
const exeName = `vnfm-${process.platform}-${process.arch}`;

let dir: string;
let exe: string;
let home: string;
const children: ChildProcessWithoutNullStreams[] = [];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function env(vnfmHome = home): NodeJS.ProcessEnv {
  return { PATH: '', HOME: dir, VNFM_HOME: vnfmHome };
}

function run(args: string[], vnfmHome = home): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(exe, args, { cwd: dir, env: env(vnfmHome), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

const cacheDir = () => join(home, 'cache', 'native');
const cachedAddon = () =>
  join(
    cacheDir(),
    readdirSync(cacheDir()).find((f) => f.endsWith('.node'))!,
  );

beforeAll(async () => {
  // The same steps as `npm run dist` minus the type check, which `npm test` has done.
  const node = promisify(execFile);
  await node(process.execPath, [join(root, 'scripts', 'bundle.mjs')], { cwd: root });
  await node(process.execPath, [join(root, 'scripts', 'dist.mjs')], { cwd: root });
  dir = mkdtempSync(join(tmpdir(), 'vnfm-sea-'));
  exe = join(dir, exeName);
  copyFileSync(join(root, 'dist', exeName), exe);
  execFileSync('/usr/bin/chmod', ['755', exe]);
  home = join(dir, 'home');
}, 300_000);

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the single executable, alone in an empty directory with an empty PATH', () => {
  it('is listed in dist/SHA256SUMS with its checksum', () => {
    const sums = readFileSync(join(root, 'dist', 'SHA256SUMS'), 'utf8');
    const digest = createHash('sha256').update(readFileSync(exe)).digest('hex');
    expect(sums).toContain(`${digest}  ${exeName}\n`);
  });

  it('prints its version and the commit it was built from', async () => {
    const r = await run(['--version']);
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(new RegExp(`^${VERSION.replace(/\./g, '\\.')} \\(commit ${head.slice(0, 12)}(-dirty)?\\)\n$`));
  });

  it('reports vnfm, Node.js and SQLite versions and the commit it was built from', async () => {
    const r = await run(['version', '-o', 'json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const info = JSON.parse(r.stdout);
    expect(info).toMatchObject({ version: VERSION, node: process.version, single_executable: true, platform: `${process.platform}-${process.arch}` });
    expect(info.sqlite).toMatch(/^3\.\d+\.\d+$/);
    // Every sample and template, read from the embedded archive.
    const shipped = ['templates', 'csar-samples'].flatMap((d) => readdirSync(join(root, d), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()));
    expect(info.shipped_files).toBe(shipped.length);
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    expect(info.commit).toMatch(new RegExp(`^${head}(-dirty)?$`));
  });

  it('keeps its SQLite addon in a private cache, named by its SHA-256', () => {
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(statSync(cacheDir()).mode & 0o777).toBe(0o700);
    const file = cachedAddon();
    const digest = createHash('sha256').update(readFileSync(file)).digest('hex');
    expect(file).toMatch(new RegExp(`better_sqlite3-${digest}\\.node$`));
  });

  it('keeps a code cache per command under VNFM_HOME, used as it is by the next run; --version without a home writes nothing', async () => {
    const fresh = join(dir, 'cache-home');
    expect((await run(['--version'], fresh)).code).toBe(0);
    expect(() => statSync(fresh)).toThrow();
    expect((await run(['vim-list'], fresh)).code).toBe(0);
    expect((await run(['vnf-list'], fresh)).code).toBe(0);
    expect((await run(['no-such-command'], fresh)).code).toBe(2);
    const caches = () => readdirSync(join(fresh, 'cache')).filter((f) => f.endsWith('.v8'));
    expect(
      caches()
        .map((f) => f.replace(/^vnfm-exe-v[\d.]+-\w+-[0-9a-f]{16}-/, ''))
        .sort(),
    ).toEqual(['vim-list.v8', 'vnf-list.v8']);
    const file = join(
      fresh,
      'cache',
      caches().find((f) => f.endsWith('-vim-list.v8'))!,
    );
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const before = statSync(file).mtimeMs;
    const again = await run(['vim-list'], fresh);
    expect(again).toMatchObject({ code: 0, stderr: expect.stringContaining('No VIMs registered') });
    // Rewritten only when V8 refuses it: an unchanged file means the cache was taken.
    expect(statSync(file).mtimeMs).toBe(before);
  });

  it('runs the sandbox, registers it as a VIM and lists it', async () => {
    const sandbox = spawn(exe, ['sandbox', '--listen', '127.0.0.1:0', '-o', 'json'], { cwd: dir, env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
    children.push(sandbox);
    let stderr = '';
    sandbox.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => sandbox.on('close', (code) => r(code)));
    // It prints its JSON once listening.
    const info = await new Promise<{ url: string; vim_config: string }>((resolvePromise, reject) => {
      let out = '';
      sandbox.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        try {
          resolvePromise(JSON.parse(out));
        } catch {
          // not all of it yet
        }
      });
      sandbox.on('close', (code) => reject(new Error(`sandbox exited with ${code}: ${stderr}`)));
    });
    expect(info.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);

    const reg = await run(['vim-register', '--config-file', info.vim_config, 'v']);
    expect(reg.stderr).toContain('registered');
    expect(reg.code).toBe(0);
    const list = await run(['vim-list', '-o', 'json']);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ name: 'v', type: 'kubernetes', auth_url: info.url, status: 'REACHABLE' })]);

    sandbox.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('exports an embedded sample, builds, validates and onboards it', async () => {
    const list = await run(['sample-list', '-o', 'json']);
    expect(list.code, list.stderr).toBe(0);
    // Every sample of the repository is inside the executable.
    const samples = readdirSync(join(root, 'csar-samples'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    expect(samples.length).toBeGreaterThanOrEqual(3);
    expect(JSON.parse(list.stdout).map((s: { name: string }) => s.name)).toEqual(samples);
    const out = join(dir, 'basic-cnf');
    const exported = await run(['sample-export', 'basic-cnf', out]);
    expect(exported.code, exported.stderr).toBe(0);
    const v = await run(['vnfpkg-validate', join(out, 'package'), '-o', 'json']);
    expect(v.stderr).not.toMatch(/unexpected failure/);
    expect(v.code, v.stdout).toBe(0);
    expect((await run(['vnfpkg-build', join(out, 'package'), '-o', join(dir, 'basic-cnf.zip')])).code).toBe(0);
    const on = await run(['vnfpkg-onboard', join(dir, 'basic-cnf.zip'), '-o', 'json']);
    expect(on.code, on.stderr).toBe(0);
    expect(JSON.parse(on.stdout).onboardingState).toBe('ONBOARDED');
  });

  it('writes a damaged cached addon again, and refuses a symlink in its place', async () => {
    const file = cachedAddon();
    writeFileSync(file, 'not a shared library');
    expect((await run(['vim-list', '-o', 'json'])).code).toBe(0);
    expect(readFileSync(file).length).toBeGreaterThan(1_000_000);

    // Damaged in place with its size and modification time kept: its change time still tells, and it is hashed again.
    const good = readFileSync(file);
    const { atime, mtime } = statSync(file);
    const damaged = Buffer.from(good);
    damaged.fill(0, 0, 4096);
    writeFileSync(file, damaged);
    utimesSync(file, atime, mtime);
    expect((await run(['vim-list', '-o', 'json'])).code).toBe(0);
    expect(readFileSync(file).equals(good)).toBe(true);

    const real = join(dir, 'addon-copy.node');
    copyFileSync(file, real);
    rmSync(file);
    symlinkSync(real, file);
    const r = await run(['vim-list']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file} is a symlink`);
    expect(lstatSync(file).isSymbolicLink()).toBe(true);
    rmSync(file);
    expect((await run(['vim-list', '-o', 'json'])).code).toBe(0);
  });

  it('says so when its cache is on a noexec mount', async () => {
    const mnt = join(dir, 'noexec');
    mkdirSync(mnt);
    // A private mount namespace (CI runs as root), so the mount vanishes with the command.
    const r = await new Promise<Run>((resolvePromise, reject) => {
      const child = spawn(
        '/usr/bin/unshare',
        ['--mount', '--propagation', 'private', '/bin/sh', '-c', `/bin/mount -t tmpfs -o noexec tmpfs "$1" && exec "$2" vim-list`, 'sh', mnt, exe],
        {
          cwd: dir,
          env: env(join(mnt, 'home')),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${mnt} is mounted noexec`);
    expect(r.stderr).toContain('hint: set VNFM_HOME to a directory on a filesystem mounted without noexec');
  });
});
