#!/usr/bin/env node
// What installing vnfm without a clone costs: the npm package's size and file
// count (`npm pack`, which bundles first), then `npm install -g` of it into an
// empty prefix with no network (--offline, an empty npm cache, proxies on a
// closed loopback port), its SQLite addon from a prebuild as the release
// ships it; and the .deb's size when dist/ holds one (`npm run deb`).
//
//   node bench/install.mjs [--compile]
//
// --compile installs a second time with --build-from-source: SQLite compiled
// at install (minutes; needs python3, make, g++ and Node's headers).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const root = resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const work = mkdtempSync(join(tmpdir(), 'vnfm-bench-install-'));
const NO_NETWORK = 'http://127.0.0.1:9';
const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
const duSize = (dir) => Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);

try {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  let t = performance.now();
  execFileSync('npm', ['pack', '--pack-destination', work], { cwd: root, stdio: ['ignore', 'ignore', 'ignore'] });
  const packSeconds = (performance.now() - t) / 1000;
  const tgz = join(work, `vnfm-${version}.tgz`);
  const entries = execFileSync('tar', ['-tzf', tgz], { encoding: 'utf8', maxBuffer: 1 << 26 })
    .trim()
    .split('\n');
  const bundled = entries.filter((e) => e.startsWith('package/node_modules/')).length;
  console.log(`npm pack (bundle, man pages):       ${packSeconds.toFixed(1)} s`);
  console.log(
    `npm package:                         ${mb(statSync(tgz).size)}, ${entries.length} files (${entries.length - bundled} of vnfm, ${bundled} of better-sqlite3 and its install helpers)`,
  );

  // The prebuild as scripts/release.mjs writes it.
  const sqliteDir = dirname(require.resolve('better-sqlite3/package.json'));
  const sqliteVersion = JSON.parse(readFileSync(join(sqliteDir, 'package.json'), 'utf8')).version;
  const prebuilds = join(work, 'prebuilds');
  execFileSync('mkdir', [prebuilds]);
  const tar = execFileSync('tar', ['-cf', '-', '-C', sqliteDir, 'build/Release/better_sqlite3.node'], { maxBuffer: 1 << 30 });
  writeFileSync(join(prebuilds, `better-sqlite3-v${sqliteVersion}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`), gzipSync(tar));

  const install = (name, extra, env) => {
    const prefix = join(work, name);
    t = performance.now();
    execFileSync('npm', ['install', '-g', '--prefix', prefix, tgz, '--offline', '--no-audit', '--no-fund', ...extra], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        ...process.env,
        npm_config_cache: join(work, `cache-${name}`),
        npm_config_proxy: NO_NETWORK,
        npm_config_https_proxy: NO_NETWORK,
        https_proxy: NO_NETWORK,
        http_proxy: NO_NETWORK,
        HTTPS_PROXY: NO_NETWORK,
        HTTP_PROXY: NO_NETWORK,
        ...env,
      },
    });
    const seconds = (performance.now() - t) / 1000;
    execFileSync(join(prefix, 'bin', 'vnfm'), ['--version'], { env: { PATH: dirname(process.execPath), HOME: work } });
    return { seconds, size: duSize(prefix) };
  };
  const fast = install('prefix', [], { npm_config_better_sqlite3_local_prebuilds: prebuilds });
  console.log(`npm install -g offline (prebuild):   ${fast.seconds.toFixed(1)} s, ${mb(fast.size)} installed`);
  if (process.argv.includes('--compile')) {
    const slow = install('prefix-compiled', ['--build-from-source'], {});
    console.log(`npm install -g offline (compiling):  ${slow.seconds.toFixed(1)} s, ${mb(slow.size)} installed`);
  }

  const deb = existsSync(join(root, 'dist'))
    ? readdirSync(join(root, 'dist')).find((f) => f === `vnfm_${version}_${process.arch === 'x64' ? 'amd64' : process.arch}.deb`)
    : undefined;
  if (deb) {
    const field = (f) => execFileSync('dpkg-deb', ['--field', join(root, 'dist', deb), f], { encoding: 'utf8' }).trim();
    console.log(`.deb:                                ${mb(statSync(join(root, 'dist', deb)).size)}, ${mb(Number(field('Installed-Size')) * 1024)} installed`);
  } else {
    console.log('.deb:                                not in dist/ (npm run deb builds it)');
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
