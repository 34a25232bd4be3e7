#!/usr/bin/env node
// Cuts a release: `npm run release -- <version|major|minor|patch>`.
//
//   1. CHANGELOG.md: the Unreleased section becomes "## [X.Y.Z] - DATE", under
//      a new, empty Unreleased (Keep a Changelog); refused when Unreleased is
//      empty.
//   2. The version goes into package.json, package-lock.json and
//      src/cli/version.ts; the four files are committed ("vnfm X.Y.Z") and
//      tagged vX.Y.Z, so that the builds name a clean commit
//      (`vnfm --version`: "X.Y.Z (commit 0123456789ab)").
//   3. dist/release/X.Y.Z/ receives
//        vnfm-X.Y.Z.tgz                     the npm package (npm pack)
//        vnfm-X.Y.Z-<platform>-<arch>       the single executable (scripts/dist.mjs)
//        vnfm_X.Y.Z_<arch>.deb              the Debian package (scripts/deb.mjs)
//        better-sqlite3-v…-node-v…-….tar.gz the SQLite addon as prebuild-install
//                                           reads it, so an offline npm install
//                                           need not compile (README, "Install")
//        SHA256SUMS
//
// Options: --date YYYY-MM-DD (default today, UTC); --out DIR; --no-typecheck
// (skips `tsc`, for tests of this script: `npm test` type-checks).
// The working tree must be clean: what is released is what is committed.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const root = resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const step = (what) => process.stderr.write(`release: ${what}\n`);
const fail = (message) => {
  console.error(`release: ${message}`);
  process.exit(1);
};
const option = (name) => {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const value = args[i + 1];
  if (value === undefined || value.startsWith('--')) fail(`${name} needs a value`);
  args.splice(i, 2);
  return value;
};
const flag = (name) => {
  const i = args.indexOf(name);
  if (i >= 0) args.splice(i, 1);
  return i >= 0;
};

const date = option('--date') ?? new Date().toISOString().slice(0, 10);
const outOption = option('--out');
const typecheck = !flag('--no-typecheck');
if (args.length !== 1 || args[0].startsWith('-')) {
  console.error('usage: npm run release -- <X.Y.Z|major|minor|patch> [--date YYYY-MM-DD] [--out DIR] [--no-typecheck]');
  process.exit(2);
}
if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) fail(`--date ${date} is not YYYY-MM-DD`);

const run = (cmd, cmdArgs, opts = {}) => execFileSync(cmd, cmdArgs, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], ...opts });
const git = (...a) => execFileSync('git', a, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const readJson = (file) => JSON.parse(readFileSync(join(root, file), 'utf8'));
const writeJson = (file, data) => writeFileSync(join(root, file), JSON.stringify(data, null, 2) + '\n');

// --- the version ---
const current = readJson('package.json').version;
const semver = /^(\d+)\.(\d+)\.(\d+)$/;
const [, ma, mi, pa] = semver.exec(current) ?? fail(`package.json's version ${current} is not X.Y.Z`);
const bumps = { major: `${+ma + 1}.0.0`, minor: `${ma}.${+mi + 1}.0`, patch: `${ma}.${mi}.${+pa + 1}` };
const version = bumps[args[0]] ?? args[0];
const parts = semver.exec(version)?.slice(1).map(Number) ?? fail(`${version} is not X.Y.Z, major, minor or patch`);
const newer = parts[0] - ma || parts[1] - mi || parts[2] - pa;
if (newer <= 0) fail(`${version} is not newer than the current version ${current}`);

try {
  if (git('status', '--porcelain', '--untracked-files=no') !== '') fail('the working tree has uncommitted changes: commit them first (a release is what is committed)');
} catch (err) {
  if (err.status === undefined) throw err;
  fail('not in a git working tree: a release is made from a commit');
}
if (git('tag', '--list', `v${version}`) !== '') fail(`the tag v${version} exists already`);

// --- CHANGELOG.md ---
const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
const heading = /^## \[Unreleased\][^\n]*\n/m.exec(changelog) ?? fail('CHANGELOG.md has no "## [Unreleased]" section');
const bodyStart = heading.index + heading[0].length;
const next = /^## \[/m.exec(changelog.slice(bodyStart));
const body = changelog.slice(bodyStart, next ? bodyStart + next.index : undefined);
if (!/^\s*- /m.test(body)) fail('the Unreleased section of CHANGELOG.md lists nothing: there is nothing to release');
writeFileSync(
  join(root, 'CHANGELOG.md'),
  `${changelog.slice(0, heading.index)}## [Unreleased]\n\n## [${version}] - ${date}\n${body.replace(/^\n*/, '\n')}${next ? changelog.slice(bodyStart + next.index) : ''}`,
);

// --- the version everywhere it is written ---
const pkg = readJson('package.json');
pkg.version = version;
writeJson('package.json', pkg);
const lock = readJson('package-lock.json');
lock.version = version;
lock.packages[''].version = version;
writeJson('package-lock.json', lock);
const versionTs = join(root, 'src', 'cli', 'version.ts');
const source = readFileSync(versionTs, 'utf8');
if (!/export const VERSION = '[^']*';/.test(source)) fail('src/cli/version.ts has no VERSION line');
writeFileSync(versionTs, source.replace(/export const VERSION = '[^']*';/, `export const VERSION = '${version}';`));

const released = ['CHANGELOG.md', 'package.json', 'package-lock.json', 'src/cli/version.ts'];
git('commit', '-q', '-m', `vnfm ${version}`, '--', ...released);
git('tag', '-a', `v${version}`, '-m', `vnfm ${version}`);
step(`CHANGELOG.md, package.json, package-lock.json and src/cli/version.ts at ${version}: committed ${git('rev-parse', '--short=12', 'HEAD')}, tagged v${version}`);

// --- the builds ---
const out = outOption ? resolve(outOption) : join(root, 'dist', 'release', version);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
if (typecheck) run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json']);
// npm pack's prepack bundles (build/vnfm.cjs, build/chunks/) and writes the manual pages: the executable and the .deb use both.
run('npm', ['pack', '--pack-destination', out], { stdio: ['ignore', 'ignore', 'inherit'] });
run(process.execPath, [join(root, 'scripts', 'dist.mjs')]);
const exeName = `vnfm-${process.platform}-${process.arch}`;
copyFileSync(join(root, 'dist', exeName), join(out, `vnfm-${version}-${process.platform}-${process.arch}`));
run(process.execPath, [join(root, 'scripts', 'deb.mjs'), '--out', out]);

// better-sqlite3's addon as prebuild-install looks for it (npm_config_better_sqlite3_local_prebuilds=DIR):
// <name>-v<version>-node-v<ABI>-<platform>-<arch>.tar.gz holding build/Release/better_sqlite3.node. For this Node's ABI only.
const sqliteDir = join(dirname(require.resolve('better-sqlite3/package.json')));
const sqliteVersion = JSON.parse(readFileSync(join(sqliteDir, 'package.json'), 'utf8')).version;
const prebuild = `better-sqlite3-v${sqliteVersion}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
const epoch = git('log', '-1', '--format=%ct');
const tar = execFileSync('tar', ['--owner=0', '--group=0', '--numeric-owner', `--mtime=@${epoch}`, '-cf', '-', '-C', sqliteDir, 'build/Release/better_sqlite3.node'], {
  maxBuffer: 1 << 30,
});
writeFileSync(join(out, prebuild), gzipSync(tar, { level: 9 }));

const files = readdirSync(out)
  .filter((f) => f !== 'SHA256SUMS')
  .sort();
writeFileSync(
  join(out, 'SHA256SUMS'),
  files
    .map(
      (f) =>
        `${createHash('sha256')
          .update(readFileSync(join(out, f)))
          .digest('hex')}  ${f}\n`,
    )
    .join(''),
);
step(`vnfm ${version} in ${relative(process.cwd(), out) || out}:`);
for (const f of [...files, 'SHA256SUMS']) step(`  ${f} (${(statSync(join(out, f)).size / 1e6).toFixed(1)} MB)`);
step(`publish: git push origin HEAD v${version}; the files above go beside the tag`);
