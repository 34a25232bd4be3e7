/**
 * vnfm installed without a clone: `npm run release` cut on a copy of this
 * tree (its CHANGELOG and version, never this tree's), then what it wrote
 * installed as a user would: the npm package into an empty prefix with no
 * network and an empty npm cache, the .deb into a dpkg root of its own with an
 * empty PATH, each running `vnfm demo`; `dpkg -r` leaves nothing behind.
 * One release build serves every test of the file.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const DATE = '2031-02-03';
const DEB_ARCH = process.arch === 'x64' ? 'amd64' : process.arch;
/** Any attempt to reach a network from an install goes here, to a closed port on loopback, and fails. */
const NO_NETWORK = 'http://127.0.0.1:9';

let work: string;
let tree: string;
let out: string;
let version: string;
let previous: string;
let changelogBefore: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? work, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: tree, encoding: 'utf8', env: gitEnv }).trim();
const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'release test',
  GIT_AUTHOR_EMAIL: 'release@test.invalid',
  GIT_COMMITTER_NAME: 'release test',
  GIT_COMMITTER_EMAIL: 'release@test.invalid',
};

/** The steps of `vnfm demo -o json`, by name. */
function demoSteps(r: Run): string[] {
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { step: string }[]).map((s) => s.step.replace(/ \(.*\)$/, ''));
}

const DEMO_STEPS = [
  'onboard the packages',
  'create the VNF instance',
  'instantiate',
  'scale out vdu1_aspect',
  'heal one VNFC',
  'scale in vdu1_aspect',
  'change to package v2',
  'terminate',
  'delete the VNF instance',
];

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'vnfm-release-'));
  tree = join(work, 'tree');
  mkdirSync(tree);
  // The tree as it is (tracked and new files), committed in a repository of its own: the release commits and tags there.
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root })
    .toString()
    .split('\0')
    .filter((f) => f !== '' && existsSync(join(root, f)));
  const list = join(work, 'files');
  writeFileSync(list, files.join('\0'));
  execFileSync('sh', ['-c', `tar --null -T "$1" -cf - | tar -xf - -C "$2"`, 'copy', list, tree], { cwd: root });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'the tree under test');
  // The dependencies npm ci installed, shared (a link: never committed, never copied).
  symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'));
  writeFileSync(join(tree, '.git', 'info', 'exclude'), 'node_modules\n');

  previous = (JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8')) as { version: string }).version;
  changelogBefore = readFileSync(join(tree, 'CHANGELOG.md'), 'utf8');
  const [ma, mi] = previous.split('.').map(Number);
  version = `${ma}.${mi! + 1}.0`;
  // No type check (npm test has done it); the .deb uncompressed (xz takes a minute of CPU and tests nothing here).
  const r = await run(process.execPath, ['scripts/release.mjs', 'minor', '--date', DATE, '--no-typecheck'], {
    cwd: tree,
    env: { ...gitEnv, VNFM_DEB_COMPRESSION: 'none' },
  });
  expect(r.code, r.stderr).toBe(0);
  out = join(tree, 'dist', 'release', version);
}, 900_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('npm run release', () => {
  it('turns the Unreleased section into a dated one under a fresh empty Unreleased, and keeps every entry', () => {
    const after = readFileSync(join(tree, 'CHANGELOG.md'), 'utf8');
    expect(after).toContain(`## [Unreleased]\n\n## [${version}] - ${DATE}\n\n### `);
    expect(after.replace(`\n## [${version}] - ${DATE}\n`, '')).toBe(changelogBefore);
  });

  it('bumps the version everywhere it is written, commits and tags', () => {
    expect(JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8'))).toMatchObject({ version });
    const lock = JSON.parse(readFileSync(join(tree, 'package-lock.json'), 'utf8')) as { version: string; packages: Record<string, { version: string }> };
    expect([lock.version, lock.packages['']!.version]).toEqual([version, version]);
    expect(readFileSync(join(tree, 'src', 'cli', 'version.ts'), 'utf8')).toContain(`export const VERSION = '${version}';`);
    expect(git('log', '-1', '--format=%s')).toBe(`vnfm ${version}`);
    expect(git('rev-parse', `v${version}^{commit}`)).toBe(git('rev-parse', 'HEAD'));
    expect(git('status', '--porcelain', '--untracked-files=no')).toBe('');
  });

  it('writes the npm package, the executable, the .deb and the SQLite prebuild with their SHA256SUMS', () => {
    const exe = `vnfm-${version}-${process.platform}-${process.arch}`;
    const prebuild = expect.stringMatching(new RegExp(`^better-sqlite3-v[\\d.]+-node-v${process.versions.modules}-${process.platform}-${process.arch}\\.tar\\.gz$`));
    expect(readdirSync(out).sort()).toEqual(['SHA256SUMS', prebuild, exe, `vnfm-${version}.tgz`, `vnfm_${version}_${DEB_ARCH}.deb`].sort());
    const sums = readFileSync(join(out, 'SHA256SUMS'), 'utf8').trim().split('\n');
    expect(sums).toHaveLength(4);
    for (const line of sums) {
      const [digest, file] = line.split(/ {2}/);
      expect(
        createHash('sha256')
          .update(readFileSync(join(out, file!)))
          .digest('hex'),
        file,
      ).toBe(digest);
    }
  });

  it('refuses a second release with nothing in Unreleased, changing nothing', async () => {
    const r = await run(process.execPath, ['scripts/release.mjs', 'patch', '--no-typecheck'], { cwd: tree, env: gitEnv });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the Unreleased section of CHANGELOG.md lists nothing');
    expect(git('status', '--porcelain', '--untracked-files=no')).toBe('');
    expect(git('log', '-1', '--format=%s')).toBe(`vnfm ${version}`);
  });

  it('the executable prints the released version and the release commit', async () => {
    const r = await run(join(out, `vnfm-${version}-${process.platform}-${process.arch}`), ['--version'], { env: { PATH: '', HOME: work, VNFM_HOME: join(work, 'exe-home') } });
    expect(r).toMatchObject({ code: 0, stdout: `${version} (commit ${git('rev-parse', 'HEAD').slice(0, 12)})\n`, stderr: '' });
  });
});

describe('the npm package', () => {
  let prefix: string;
  let install: Run;

  beforeAll(async () => {
    prefix = join(work, 'prefix');
    // No registry and no cache: an empty cache directory, --offline, and every proxy pointed at a closed loopback port.
    // better-sqlite3's addon comes from the release's prebuild (prebuild-install's local prebuilds), not compiled.
    install = await run('npm', ['install', '-g', '--prefix', prefix, join(out, `vnfm-${version}.tgz`), '--offline', '--no-audit', '--no-fund'], {
      env: {
        ...process.env,
        npm_config_cache: join(work, 'empty-npm-cache'),
        npm_config_better_sqlite3_local_prebuilds: out,
        npm_config_proxy: NO_NETWORK,
        npm_config_https_proxy: NO_NETWORK,
        HTTP_PROXY: NO_NETWORK,
        HTTPS_PROXY: NO_NETWORK,
        http_proxy: NO_NETWORK,
        https_proxy: NO_NETWORK,
      },
    });
  }, 600_000);

  it('holds what runs and no more: no sources, tests or benchmarks', () => {
    const entries = execFileSync('tar', ['-tzf', join(out, `vnfm-${version}.tgz`)], { encoding: 'utf8', maxBuffer: 1 << 26 })
      .trim()
      .split('\n')
      .map((e) => e.replace(/^package\//, ''));
    const own = entries.filter((e) => !e.startsWith('node_modules/'));
    const tops = [...new Set(own.map((e) => e.split('/')[0]))].sort();
    expect(tops).toEqual(['CHANGELOG.md', 'LICENSE', 'README.md', 'bin', 'build', 'csar-samples', 'package.json', 'templates']);
    expect(own).toEqual(expect.arrayContaining(['bin/vnfm', 'build/vnfm.cjs', 'build/man/vnfm.1', 'build/man/vnfm-vnf-instantiate.1']));
    expect(own.filter((e) => e.startsWith('build/') && !/^build\/(vnfm\.cjs|chunks\/[\w-]+\.cjs|man\/vnfm(-[a-z-]+)?\.1)$/.test(e))).toEqual([]);
    // The one runtime dependency, bundled: its sources and install helpers, never its compiler output.
    expect(entries.filter((e) => e.startsWith('node_modules/')).map((e) => e.split('/')[1])).toContain('better-sqlite3');
    expect(entries.filter((e) => /^node_modules\/better-sqlite3\/build\/Release\/(obj|\.deps)/.test(e))).toEqual([]);
  });

  it('installs into an empty prefix with no network and an empty npm cache', () => {
    expect(install.code, install.stderr).toBe(0);
    expect(existsSync(join(prefix, 'lib', 'node_modules', 'vnfm', 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'))).toBe(true);
  });

  it('runs vnfm demo from the prefix (node and the prefix on PATH, nothing of the tree)', async () => {
    const home = join(work, 'npm-home');
    const env = { PATH: `${join(prefix, 'bin')}:${dirname(process.execPath)}`, HOME: home, VNFM_HOME: join(home, '.vnfm') };
    const version_ = await run('vnfm', ['--version'], { env, cwd: work });
    expect(version_.stdout).toBe(`${version} (commit ${git('rev-parse', 'HEAD').slice(0, 12)})\n`);
    expect(demoSteps(await run('vnfm', ['demo', '-o', 'json'], { env, cwd: work }))).toEqual(DEMO_STEPS);
  });

  it('links vnfm(1), which describes every command', async () => {
    expect(readdirSync(join(prefix, 'share', 'man', 'man1'))).toEqual(['vnfm.1']);
    const page = readFileSync(join(prefix, 'share', 'man', 'man1', 'vnfm.1'), 'utf8');
    const help = await run(join(prefix, 'bin', 'vnfm'), ['--help'], { env: { PATH: dirname(process.execPath), HOME: work } });
    const commands = [...help.stdout.matchAll(/^ {2}([a-z][a-z-]+)(?= )/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
    expect(commands.length).toBeGreaterThan(40);
    const sections = [...page.matchAll(/^\.SS vnfm (\S+)/gm)].map((m) => m[1]!.replace(/\\-/g, '-'));
    expect(sections).toEqual(commands);
  });
});

describe('the Debian package', () => {
  let droot: string;
  let deb: string;
  const dpkg = (...args: string[]) =>
    run('dpkg', [`--root=${droot}`, ...(process.getuid?.() === 0 ? [] : ['--force-not-root']), ...args], { env: { ...process.env, PATH: process.env['PATH'] ?? '/usr/bin:/bin' } });
  /** Every file and directory under the dpkg root but dpkg's own database and log. */
  const leftovers = () =>
    (readdirSync(droot, { recursive: true, encoding: 'utf8' }) as string[]).filter((p) => !/^var(\/lib(\/dpkg(\/.*)?)?|\/log(\/dpkg\.log)?)?$/.test(p)).sort();

  beforeAll(() => {
    deb = join(out, `vnfm_${version}_${DEB_ARCH}.deb`);
    droot = join(work, 'dpkg-root');
    mkdirSync(join(droot, 'var', 'lib', 'dpkg', 'info'), { recursive: true });
    mkdirSync(join(droot, 'var', 'lib', 'dpkg', 'updates'), { recursive: true });
    // The root's package database knows this machine's C and C++ libraries, so the package's Depends are checked for real.
    writeFileSync(join(droot, 'var', 'lib', 'dpkg', 'status'), execFileSync('dpkg-query', ['-s', 'libc6', 'libstdc++6'], { encoding: 'utf8' }) + '\n');
  });

  it('holds the executable, completion for bash, zsh and fish, the manual pages and the license', () => {
    const contents = execFileSync('dpkg-deb', ['--contents', deb], { encoding: 'utf8' });
    const files = [...contents.matchAll(/^-\S+ \S+\s+\d+ \S+ \S+ \.\/(\S+)$/gm)].map((m) => m[1]!);
    expect(files).toEqual(
      expect.arrayContaining([
        'usr/bin/vnfm',
        'usr/share/bash-completion/completions/vnfm',
        'usr/share/zsh/vendor-completions/_vnfm',
        'usr/share/fish/vendor_completions.d/vnfm.fish',
        'usr/share/man/man1/vnfm.1.gz',
        'usr/share/man/man1/vnfm-vnf-instantiate.1.gz',
        'usr/share/doc/vnfm/copyright',
        'usr/share/doc/vnfm/changelog.gz',
      ]),
    );
    expect(contents).toMatch(/^-rwxr-xr-x root\/root .* \.\/usr\/bin\/vnfm$/m);
    // vnfm(1) and a page per command, as the executable lists its commands.
    const help = execFileSync(join(out, `vnfm-${version}-${process.platform}-${process.arch}`), ['--help'], { encoding: 'utf8', env: { PATH: '', HOME: work } });
    const commands = [...help.matchAll(/^ {2}([a-z][a-z-]+)(?= )/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
    const pages = files.filter((f) => f.startsWith('usr/share/man/man1/')).map((f) => f.slice('usr/share/man/man1/'.length));
    expect(pages.sort()).toEqual(['vnfm.1.gz', ...commands.map((c) => `vnfm-${c}.1.gz`)].sort());
    const control = execFileSync('dpkg-deb', ['--field', deb, 'Package', 'Version', 'Architecture'], { encoding: 'utf8' });
    expect(control).toBe(`Package: vnfm\nVersion: ${version}\nArchitecture: ${DEB_ARCH}\n`);
  });

  it('installs with dpkg -i, runs vnfm demo with an empty PATH, and dpkg -r leaves nothing behind', async () => {
    const installed = await dpkg('-i', deb);
    expect(installed.code, installed.stderr).toBe(0);
    expect((await dpkg('-s', 'vnfm')).stdout).toContain('Status: install ok installed');
    const exe = join(droot, 'usr', 'bin', 'vnfm');
    const home = join(work, 'deb-home');
    const env = { PATH: '', HOME: home, VNFM_HOME: join(home, '.vnfm') };
    const v = await run(exe, ['--version'], { env, cwd: work });
    expect(v.stdout).toBe(`${version} (commit ${git('rev-parse', 'HEAD').slice(0, 12)})\n`);
    expect(demoSteps(await run(exe, ['demo', '-o', 'json'], { env, cwd: work }))).toEqual(DEMO_STEPS);
    // The completion script the package installed is the one the executable prints.
    const bash = await run(exe, ['completion', 'bash'], { env, cwd: work });
    expect(readFileSync(join(droot, 'usr', 'share', 'bash-completion', 'completions', 'vnfm'), 'utf8')).toBe(bash.stdout);
    expect(leftovers().length).toBeGreaterThan(10);

    const removed = await dpkg('-r', 'vnfm');
    expect(removed.code, removed.stderr).toBe(0);
    expect(leftovers()).toEqual([]);
    expect((await dpkg('-s', 'vnfm')).stdout).not.toContain('installed');
  });
});
