#!/usr/bin/env node
// Builds the single executable: dist/vnfm-<platform>-<arch>, a copy of this
// Node.js with build/vnfm.cjs and its assets injected (Node's Single
// Executable Applications), and dist/SHA256SUMS. Run through `npm run dist`,
// which bundles first.
//
// Assets: the SQLite addon (and its SHA-256, checked before each load by
// src/store/native-binding.ts), the lazily loaded chunks (scripts/chunk-loader.ts)
// and templates/ + csar-samples/ as one ustar archive (src/assets/index.ts).
//
// The executable is built for the machine it is built on: the SQLite addon is
// native code, so an arm64 executable is built on arm64 (see README).
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { Script } from 'node:vm';
import { LAUNCHER_WRAPPER } from './launcher-wrapper.mjs';

const root = resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const bundle = join(root, 'build', 'vnfm.cjs');
const chunkDir = join(root, 'build', 'chunks');
const work = join(root, 'build', 'sea');
const distDir = join(root, 'dist');
const target = join(distDir, `vnfm-${process.platform}-${process.arch}`);

// Must match SHIPPED_DIRS in src/assets/index.ts and the asset names there and in src/store/native-binding.ts.
const SHIPPED_DIRS = ['templates', 'csar-samples'];
const SHIPPED_FILES_ASSET = 'shipped-files.tar';
const ADDON_ASSET = 'better_sqlite3.node';
const ADDON_HASH_ASSET = 'better_sqlite3.node.sha256';
// The fuse postject flips so that Node looks for the injected blob (Node's SEA documentation).
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

const sha256 = (data) => createHash('sha256').update(data).digest('hex');
const step = (what) => process.stderr.write(`dist: ${what}\n`);

if (!existsSync(bundle)) {
  console.error('dist: build/vnfm.cjs is missing; run npm run dist (it builds first)');
  process.exit(1);
}

/** A deterministic ustar archive: sorted paths, mode 0644, owner 0, time 0; regular files only. */
function ustar(dirs) {
  const files = [];
  const walk = (rel) => {
    const abs = join(root, rel);
    const st = lstatSync(abs);
    if (st.isSymbolicLink()) throw new Error(`${rel} is a symlink: shipped files must be plain files`);
    if (st.isDirectory()) for (const name of readdirSync(abs).sort()) walk(`${rel}/${name}`);
    else if (st.isFile()) files.push(rel);
  };
  for (const d of dirs) if (existsSync(join(root, d))) walk(d);
  const blocks = [];
  for (const rel of files) {
    const data = readFileSync(join(root, rel));
    const header = Buffer.alloc(512);
    let name = rel;
    let prefix = '';
    if (Buffer.byteLength(name) > 100) {
      const cut = rel.lastIndexOf('/', 155);
      prefix = rel.slice(0, cut);
      name = rel.slice(cut + 1);
      if (cut <= 0 || Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155) throw new Error(`${rel}: path too long for the archive`);
    }
    const octal = (n, len) => n.toString(8).padStart(len - 1, '0') + '\0';
    header.write(name, 0);
    header.write(octal(0o644, 8), 100);
    header.write(octal(0, 8), 108);
    header.write(octal(0, 8), 116);
    header.write(octal(data.length, 12), 124);
    header.write(octal(0, 12), 136);
    header.write('        ', 148);
    header.write('0', 156);
    header.write('ustar\0', 257);
    header.write('00', 263);
    header.write(prefix, 345);
    let sum = 0;
    for (const b of header) sum += b;
    header.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return { tar: Buffer.concat(blocks), count: files.length };
}

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
mkdirSync(distDir, { recursive: true });

const { tar, count } = ustar(SHIPPED_DIRS);
writeFileSync(join(work, SHIPPED_FILES_ASSET), tar);
step(`${count} shipped files from ${SHIPPED_DIRS.join(', ')} (${(tar.length / 1024).toFixed(0)} KiB)`);

const addon = join(dirname(require.resolve('better-sqlite3')), '..', 'build', 'Release', 'better_sqlite3.node');
writeFileSync(join(work, ADDON_HASH_ASSET), sha256(readFileSync(addon)) + '\n');

const assets = {
  [ADDON_ASSET]: addon,
  [ADDON_HASH_ASSET]: join(work, ADDON_HASH_ASSET),
  [SHIPPED_FILES_ASSET]: join(work, SHIPPED_FILES_ASSET),
};
for (const file of readdirSync(chunkDir)) assets[`chunks/${file}`] = join(chunkDir, file);

// The executable's main (scripts/sea-main.cjs) compiles the bundle, an asset, with V8's code cache as bin/vnfm
// does (bin/code-cache.cjs, put in front of it), and until a command has a cache of its own, with one made here
// by this Node, the executable's own.
const wrappedText = readFileSync(bundle, 'latin1');
if (!wrappedText.startsWith(LAUNCHER_WRAPPER[0]) || !wrappedText.endsWith(LAUNCHER_WRAPPER[1])) {
  console.error('dist: build/vnfm.cjs is not the wrapped bundle scripts/bundle.mjs writes; run npm run build');
  process.exit(1);
}
assets['vnfm.cjs'] = bundle;
writeFileSync(join(work, 'vnfm.v8'), new Script(wrappedText, { filename: bundle }).createCachedData());
assets['vnfm.v8'] = join(work, 'vnfm.v8');
const seaMain = join(work, 'vnfm-main.cjs');
writeFileSync(
  seaMain,
  [
    `const vnfmBuild = ${JSON.stringify(sha256(Buffer.from(wrappedText, 'latin1')).slice(0, 16))};`,
    `const codeCache = (() => { const module = { exports: {} };\n${readFileSync(join(root, 'bin', 'code-cache.cjs'), 'utf8')}\nreturn module.exports; })();`,
    readFileSync(join(root, 'scripts', 'sea-main.cjs'), 'utf8'),
  ].join('\n'),
);

const blob = join(work, 'sea-prep.blob');
const seaConfig = join(work, 'sea-config.json');
writeFileSync(
  seaConfig,
  JSON.stringify({ main: seaMain, output: blob, disableExperimentalSEAWarning: true, useCodeCache: process.env.VNFM_SEA_CODE_CACHE !== '0', assets }, null, 2),
);
execFileSync(process.execPath, ['--experimental-sea-config', seaConfig], { stdio: ['ignore', 'ignore', 'inherit'] });

rmSync(target, { force: true });
copyFileSync(process.execPath, target);
chmodSync(target, 0o755);
// Strip before injecting, never after: stripping an injected binary breaks it.
try {
  execFileSync('strip', [target], { stdio: 'ignore' });
} catch {
  step('strip not found: the executable keeps its symbols (about 12 MB larger)');
}
const postject = join(dirname(require.resolve('postject/package.json')), 'dist', 'cli.js');
execFileSync(process.execPath, [postject, target, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE], { stdio: ['ignore', 'ignore', 'pipe'] });

const sums = readdirSync(distDir)
  .filter((f) => f !== 'SHA256SUMS' && statSync(join(distDir, f)).isFile())
  .sort()
  .map((f) => `${sha256(readFileSync(join(distDir, f)))}  ${f}\n`)
  .join('');
writeFileSync(join(distDir, 'SHA256SUMS'), sums);
step(`${relative(root, target)} (${(statSync(target).size / 1e6).toFixed(1)} MB), SHA256SUMS written`);
