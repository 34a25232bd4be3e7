/**
 * What start-up loads. `--version`, `vim-list` and `vnf-list` need the store
 * and a printer: they must not read any chunk (the Kubernetes client, YAML,
 * the sandbox, the drivers), and the main bundle must not carry the rooms
 * that scripts/bundle.mjs puts in chunks. Speed itself is measured by
 * bench/startup.mjs, not here.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';

const root = resolve(import.meta.dirname, '../..');
const work = mkdtempSync(join(tmpdir(), 'vnfm-startup-'));
// Records every file under build/chunks/ the program reads, written out at exit.
const preload = join(work, 'record-chunks.cjs');
writeFileSync(
  preload,
  `const fs = require('node:fs');
const read = fs.readFileSync;
const seen = [];
fs.readFileSync = function (file, ...rest) {
  if (typeof file === 'string' && file.includes('/chunks/')) seen.push(file.split('/').pop());
  return read.call(this, file, ...rest);
};
process.on('exit', () => fs.writeFileSync(process.env.CHUNK_RECORD, JSON.stringify(seen)));
`,
);

// Records the Node modules the process loaded (process.moduleLoadList), written out at exit.
const modulesPreload = join(work, 'record-modules.cjs');
writeFileSync(
  modulesPreload,
  `process.on('exit', () => {
  const names = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
  require('node:fs').writeFileSync(process.env.MODULE_RECORD, JSON.stringify(names));
});
`,
);

function chunksRead(args: string[], home: string): { code: number | null; chunks: string[]; stdout: string } {
  const record = join(work, `record-${Math.random().toString(36).slice(2)}.json`);
  const r = spawnSync(process.execPath, ['--require', preload, BIN, ...args], {
    env: { PATH: process.env['PATH'], HOME: work, VNFM_HOME: home, CHUNK_RECORD: record, NO_COLOR: '1' },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, chunks: JSON.parse(readFileSync(record, 'utf8')) as string[] };
}

describe('start-up', () => {
  const home = join(work, 'home');

  it.each([[['--version']], [['vim-list']], [['vnf-list']], [['vnf-list', '-o', 'json']], [['op-list']]])('vnfm %j reads no chunk', (args) => {
    const r = chunksRead(args, home);
    expect(r.code).toBe(0);
    expect(r.chunks).toEqual([]);
  });

  // Node's own modules that only some commands use: scripts/bundle.mjs gives the main bundle stand-ins
  // that load them at first use, main() takes stdin only when a command reads it, and stdout and stderr
  // are written to their descriptors (src/cli/stdio.ts) without Node's stream, socket or terminal classes.
  const HEAVY_BUILTINS = ['crypto', 'child_process', 'readline', 'worker_threads', 'zlib', 'dgram', 'fs/promises', 'timers/promises', 'stream', 'net', 'tty'];
  it.each([[['--version']], [['vim-list']], [['vnf-list']]])('vnfm %j loads none of the heavy Node modules', (args) => {
    const record = join(work, `modules-${Math.random().toString(36).slice(2)}.json`);
    const r = spawnSync(process.execPath, ['--require', modulesPreload, BIN, ...args], {
      env: { PATH: process.env['PATH'], HOME: work, VNFM_HOME: home, MODULE_RECORD: record, NO_COLOR: '1' },
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    const loaded = JSON.parse(readFileSync(record, 'utf8')) as string[];
    // The recorder itself sees modules (so an empty list is not a silent failure).
    expect(loaded).toContain('fs');
    expect(loaded.filter((m) => HEAVY_BUILTINS.includes(m) || m.startsWith('internal/crypto/') || m.startsWith('internal/readline/'))).toEqual([]);
  });

  it('the stand-ins load a module when a command uses it: vnfpkg-validate hashes with crypto', () => {
    const record = join(work, `modules-${Math.random().toString(36).slice(2)}.json`);
    const r = spawnSync(process.execPath, ['--require', modulesPreload, BIN, 'vnfpkg-validate', join(root, 'csar-samples', 'basic-cnf', 'package')], {
      env: { PATH: process.env['PATH'], HOME: work, VNFM_HOME: home, MODULE_RECORD: record, NO_COLOR: '1' },
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(JSON.parse(readFileSync(record, 'utf8'))).toContain('crypto');
  });

  it('--version prints what commander prints: the version and the commit the bundle was built from', () => {
    const version = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { env: { PATH: process.env['PATH'], HOME: work, VNFM_HOME: home }, encoding: 'utf8' });
    const r = version(['--version']);
    expect(r.status).toBe(0);
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const expected = `${JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version} (commit ${head.slice(0, 12)}`;
    expect(r.stdout).toMatch(new RegExp(`^${expected.replace(/[.()]/g, '\\$&')}(-dirty)?\\)\n$`));
    expect(r.stderr).toBe('');
    // The same line as commander's own --version (taken when another option comes first).
    expect(version(['--debug', '--version']).stdout).toBe(r.stdout);
  });

  it('sandbox --help reads no chunk; validating a package reads the YAML chunk (so the recorder sees chunks)', () => {
    const r = chunksRead(['sandbox', '--help'], home);
    expect(r.code).toBe(0);
    expect(r.chunks).toEqual([]);
    const v = chunksRead(['vnfpkg-validate', join(root, 'csar-samples', 'basic-cnf', 'package')], home);
    expect(v.code).toBe(0);
    expect(v.chunks).toContain('js-yaml.cjs');
  });

  it('the sandbox, the infrastructure drivers and the management drivers are chunks, not in the main bundle', () => {
    const chunks = readdirSync(join(root, 'build', 'chunks'));
    expect(chunks).toEqual(expect.arrayContaining(['room-sandbox.cjs', 'room-kubernetes.cjs', 'room-openstack.cjs']));
    const main = readFileSync(join(root, 'build', 'vnfm.cjs'), 'utf8');
    // esbuild names each module it initialises lazily (as every module a dynamic import reaches) by its source path.
    const modules = [...main.matchAll(/(?:__esm|__commonJS)\(\{"(src\/[^"]+)"/g)].map((m) => m[1]);
    expect(modules.length).toBeGreaterThan(50);
    expect(modules.filter((m) => m.startsWith('src/sandbox/'))).toEqual([]);
    expect(modules.filter((m) => m === 'src/infra/kubernetes/driver.ts' || m === 'src/infra/openstack/heat.ts')).toEqual([]);
    // What the main bundle has of them: the stand-in that loads the chunk.
    expect(main).toContain('"vnfm-room:sandbox:src/sandbox/index.ts"');
  });

  it("the domain's use cases (packages, VNFDs, VIM configuration, the lifecycle and its planners) are a chunk too; the main bundle keeps what the start-up commands use of them", () => {
    expect(readdirSync(join(root, 'build', 'chunks'))).toContain('room-domain.cjs');
    const main = readFileSync(join(root, 'build', 'vnfm.cjs'), 'utf8');
    const modules = [...main.matchAll(/(?:__esm|__commonJS)\(\{"(src\/[^"]+)"/g)].map((m) => m[1]!);
    const domain = modules.filter((m) => /^src\/(lcm|csar|vnfd|vim)\//.test(m));
    // vnf-list and op-list read through lcm/instances.ts, vim-list through vim/vims.ts.
    expect(domain).toEqual(expect.arrayContaining(['src/lcm/instances.ts', 'src/vim/vims.ts']));
    expect(domain.filter((m) => m.startsWith('src/csar/validate') || m.startsWith('src/vnfd/') || m.startsWith('src/lcm/planners/') || m === 'src/vim/register.ts')).toEqual([]);
    expect(main).toContain('"vnfm-room:domain:src/vim/register.ts"');
  });

  it('no chunk calls import(): the chunks run through vm.Script, which has no loader for it, so what a chunk loads lazily from another is a require', () => {
    for (const file of readdirSync(join(root, 'build', 'chunks')).filter((f) => f.endsWith('.cjs'))) {
      const code = readFileSync(join(root, 'build', 'chunks', file), 'utf8');
      expect(code.match(/[^\w$.]import\("vnfm-[^"]*"\)/g), file).toBeNull();
    }
  });
});

describe('the code cache under VNFM_HOME', () => {
  const run = (args: string[], home: string) =>
    spawnSync(process.execPath, [BIN, ...args], { env: { PATH: process.env['PATH'], HOME: work, VNFM_HOME: home, NO_COLOR: '1' }, encoding: 'utf8' });
  const cacheFiles = (home: string) => readdirSync(join(home, 'cache')).filter((f) => f.endsWith('.v8'));

  it('--version creates no home; the first command that opens the store leaves a cache that the next run uses as it is', () => {
    const home = join(work, 'cc-home');
    expect(run(['--version'], home).status).toBe(0);
    expect(existsSync(home)).toBe(false);
    expect(run(['vim-list'], home).status).toBe(0);
    const [file] = cacheFiles(home);
    expect(file).toMatch(new RegExp(`^vnfm-${process.version}-${process.arch}-\\d+-\\d+-vim-list\\.v8$`));
    const path = join(home, 'cache', file!);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const before = statSync(path).mtimeMs;
    const again = run(['vim-list'], home);
    expect(again.status).toBe(0);
    // Rewritten only when V8 refuses it: an unchanged file means the cache was taken.
    expect(statSync(path).mtimeMs).toBe(before);
  });

  it("each command keeps its own cache; a usage error writes none; another build's caches are removed", () => {
    const home = join(work, 'cc-commands');
    expect(run(['vim-list'], home).status).toBe(0);
    expect(run(['--no-color', 'vnf-list', '-o', 'json'], home).status).toBe(0);
    expect(run(['vnf-lsit'], home).status).toBe(2);
    expect(run(['vnf-list', '--output', 'xml'], home).status).toBe(2);
    const names = cacheFiles(home).map((f) => f.replace(/^vnfm-.*-\d+-\d+-/, ''));
    expect(names.sort()).toEqual(['vim-list.v8', 'vnf-list.v8']);
    const stale = join(home, 'cache', `vnfm-${process.version}-${process.arch}-1-1-vim-list.v8`);
    writeFileSync(stale, 'an older build', { mode: 0o600 });
    expect(run(['op-list'], home).status).toBe(0);
    expect(existsSync(stale)).toBe(false);
    expect(cacheFiles(home)).toHaveLength(3);
  });

  it('a damaged or writable-by-others cache is not used, and is replaced', () => {
    const home = join(work, 'cc-bad');
    expect(run(['vim-list'], home).status).toBe(0);
    const path = join(home, 'cache', cacheFiles(home)[0]!);
    writeFileSync(path, 'not a code cache');
    const r = run(['vim-list', '-o', 'json'], home);
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe('[]');
    expect(readFileSync(path).length).toBeGreaterThan(1000);
    chmodSync(path, 0o666);
    expect(run(['vim-list'], home).status).toBe(0);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(cacheFiles(home)).toHaveLength(1);
  });
});
