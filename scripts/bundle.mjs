#!/usr/bin/env node
// Bundles vnfm into build/vnfm.cjs (one CommonJS file: what bin/vnfm runs and
// what `npm run dist` injects into the single executable) plus one file per
// heavy package in build/chunks/, evaluated only when a command first uses it
// (scripts/chunk-loader.ts). Start-up cost grows with the code Node has to read
// and parse, so `--version`, `--help`, `vim-list`, `vnf-list` and `op-list`
// must not pay for the Kubernetes client, SSH, YAML or the prompts, nor for
// vnfm's own rooms that they do not use (the domain's use cases, the
// infrastructure drivers, the SSH management drivers) and the workspace
// package it carries (the Kubernetes API sandbox, packages/kube-sandbox):
// each of those is a chunk too, build/chunks/room-<name>.cjs.
//
//   node scripts/bundle.mjs [--metafile]   (--metafile: build/vnfm.meta.json, for esbuild's analyzer)
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { join, relative, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import { LAUNCHER_WRAPPER } from './launcher-wrapper.mjs';

const root = resolve(import.meta.dirname, '..');
const buildDir = join(root, 'build');
const chunkDir = join(buildDir, 'chunks');

/**
 * Packages kept out of the main bundle. Add a package here when it is large
 * and only some commands need it; the size check below names offenders.
 */
export const CHUNKED_PACKAGES = ['inquirer', 'js-yaml', 'node-ssh'];

/**
 * vnfm's own rooms kept out of the main bundle: a module outside the room
 * that loads one of its files with `await import(...)` gets it from the
 * room's chunk, evaluated at first use. A workspace package (WORKSPACE_PACKAGES,
 * imported by its name, `await import('@vnfm/kube-sandbox')`) is a room too: its
 * sources are the bundle's like vnfm's own. Files of a room that the main bundle
 * imports statically (small shared definitions, such as the Kubernetes
 * driver's package-kinds.ts used by lcm/) stay in the main bundle, and the
 * chunk uses the main bundle's copy, as it does for everything else the main
 * bundle holds (errors.ts above all: one class per error, so `instanceof`
 * holds across chunks).
 */
export const CHUNKED_ROOMS = {
  // The domain's use cases: packages, VNFDs, VIM configuration, the lifecycle engine and its planners.
  // What the start-up commands (`vim-list`, `vnf-list`, `op-list`) use of them, they import statically,
  // and it stays in the main bundle; the rest (two thirds of the code that was in the main bundle) is
  // read only by the commands that change or check something. It is the base of the other rooms:
  // a room's chunk takes from it what it shares with it (see BASE_ROOM).
  domain: ['src/lcm/', 'src/csar/', 'src/vnfd/', 'src/vim/'],
  sandbox: 'packages/kube-sandbox/src/',
  kubernetes: 'src/infra/kubernetes/',
  openstack: 'src/infra/openstack/',
  // the Helm CLI seam and the Helm planner's plans: only for Helm CNFs
  helm: 'src/infra/helm/',
  'helm-plans': 'src/lcm/planners/helm-plans.ts',
  mgmt: 'src/mgmt/',
  // the shared store's PostgreSQL side: only with VNFM_DATABASE_URL
  postgres: 'src/store/postgres/',
  // what only some list options use: -o jsonpath=, --filter (a list's -o json
  // writer is 4 KB and stays in the main bundle: `vnf-list -o json` is a
  // start-up command too)
  jsonpath: 'src/cli/output/jsonpath.ts',
  'tacker-filter': 'src/cli/output/tacker-filter.ts',
};

/**
 * The room the other rooms build on: a module that the main bundle does not
 * hold and this room's chunk does is taken by the other chunks from it
 * (`require('vnfm-room:domain:src/vnfd/index.ts')`, served by
 * scripts/chunk-loader.ts), as they take the main bundle's modules from it:
 * each module has one instance. Its chunk is built first, then the others.
 */
const BASE_ROOM = 'domain';

/**
 * The main bundle stays small enough to parse in a few milliseconds. Lowered
 * from 1408 KiB when the sandbox, the drivers and the management drivers
 * became chunks; raise it only with `npm run bench` figures in hand. Raised
 * to 1000 KiB for the Helm planner's wiring, the planner registry and the
 * shared store's seam (start-up measured at 0.95–1.17× `node -e 0` at 969 KiB).
 * Lowered to 560 KiB when the domain's use cases became a chunk (881 -> 463
 * KiB; `vim-list` 1.78x -> 1.51x `node -e 0`, bench/startup.mjs --startup).
 */
const MAIN_BUNDLE_BUDGET = 560 * 1024;

/**
 * The workspace packages vnfm imports by name, and their entry in this tree.
 * npm links them into node_modules (package.json "workspaces"); the bundle
 * takes them from this tree's packages/ instead, so that a copy of the tree
 * (the release test's) bundles its own sources, whatever node_modules it uses.
 */
export const WORKSPACE_PACKAGES = { '@vnfm/kube-sandbox': './packages/kube-sandbox/src/index.ts' };
/** Where the sources live whose imports of CHUNKED_PACKAGES decide the chunks' contents. */
const SOURCE_DIRS = ['src', 'packages/kube-sandbox/src'];

const chunkFile = (pkg) => pkg.replace(/^@/, '').replace(/\//g, '-') + '.cjs';
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const chunkFilter = new RegExp(`^(${CHUNKED_PACKAGES.map(escapeRe).join('|')})(/.*)?$`);

/** The commit the bundle is built from, `-dirty` when tracked files differ from it; `unknown` outside git. */
function gitCommit() {
  const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    const sha = git('rev-parse', 'HEAD');
    return git('status', '--porcelain', '--untracked-files=no') ? `${sha}-dirty` : sha;
  } catch {
    return 'unknown';
  }
}

/**
 * The names src/ takes from each chunked package, so a chunk can hold only
 * what vnfm uses (the whole Kubernetes client is 15 MB of JavaScript, the part
 * vnfm uses a fraction of it). Any use this scan does not understand keeps the
 * whole package: a bigger chunk, never a missing export.
 */
function usedExports() {
  const used = new Map(CHUNKED_PACKAGES.map((p) => [p, new Set()]));
  const files = SOURCE_DIRS.flatMap((dir) =>
    readdirSync(join(root, dir), { recursive: true })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(root, dir, f)),
  );
  const names = (list) =>
    list
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n && !n.startsWith('type '))
      .map((n) => n.split(/\s+as\s+|\s*:\s*/)[0].trim());
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const pkg of CHUNKED_PACKAGES) {
      const q = `['"]${escapeRe(pkg)}['"]`;
      if (!new RegExp(q).test(text)) continue;
      const set = used.get(pkg);
      let understood = 0;
      const all = new RegExp(q, 'g');
      const total = text.match(all).length;
      for (const m of text.matchAll(new RegExp(`import\\s+type\\s[^;]*?from\\s*${q}`, 'g'))) understood += m ? 1 : 0;
      for (const m of text.matchAll(new RegExp(`(?:import|export)\\s+(?!type\\s)([\\w$]+)?\\s*,?\\s*(?:\\*\\s+as\\s+([\\w$]+)|\\{([^}]*)\\})?\\s*from\\s*${q}`, 'g'))) {
        understood++;
        if (m[1] && m[1] !== 'type') set.add('default');
        if (m[3]) names(m[3]).forEach((n) => set.add(n));
        if (m[2]) {
          // A namespace import is understood when every use is `ns.Name`.
          const uses = [...text.matchAll(new RegExp(`\\b${escapeRe(m[2])}\\b(\\.([\\w$]+))?`, 'g'))];
          if (uses.slice(1).some((u) => !u[2])) set.add('*');
          uses.forEach((u) => u[2] && set.add(u[2]));
        }
      }
      for (const m of text.matchAll(new RegExp(`const\\s*\\{([^}]*)\\}\\s*=\\s*await\\s+import\\(\\s*${q}\\s*\\)`, 'g'))) {
        understood++;
        names(m[1]).forEach((n) => set.add(n));
      }
      if (understood < total) set.add('*');
    }
  }
  return used;
}

/**
 * A chunk's entry (the names src uses, or the whole package) and the names
 * the main bundle's stand-in for the package exports. Names that exist only as
 * TypeScript types (`k8s.KubernetesObject`) are dropped.
 */
async function chunkPlan(pkg, used) {
  const exported = Object.keys(await import(pkg));
  const actual = exported.filter((n) => n !== 'default' && /^[A-Za-z_$][\w$]*$/.test(n));
  if (used.has('*')) return { entry: `module.exports = require(${JSON.stringify(pkg)});`, names: actual };
  const names = actual.filter((n) => used.has(n));
  const lines = used.has('default') && exported.includes('default') ? [`export { default } from ${JSON.stringify(pkg)};`] : [];
  if (names.length) lines.push(`export { ${names.join(', ')} } from ${JSON.stringify(pkg)};`);
  return { entry: lines.join('\n'), names };
}

/**
 * Stands in for a chunked package in the main bundle: an ES module with the
 * package's default and named exports, read from the chunk when a module that
 * imports it is first evaluated. It keeps Node's rule for a default import
 * (a CommonJS package's default is its module.exports).
 */
function chunkRouting(plans) {
  return {
    name: 'vnfm-chunks',
    setup(build) {
      build.onResolve({ filter: chunkFilter }, (args) => {
        const [, pkg, subpath] = chunkFilter.exec(args.path);
        if (subpath) return { errors: [{ text: `import "${pkg}" itself, not "${args.path}": ${pkg} is loaded as a chunk (scripts/bundle.mjs)` }] };
        return { path: pkg, namespace: 'vnfm-chunk' };
      });
      build.onLoad({ filter: /.*/, namespace: 'vnfm-chunk' }, (args) => {
        const { names } = plans.get(args.path);
        return {
          contents: [
            `import { loadChunk } from ${JSON.stringify(join(root, 'scripts', 'chunk-loader.ts'))};`,
            `const m = loadChunk(${JSON.stringify(chunkFile(args.path))});`,
            `export default m && m.__esModule ? m.default : m;`,
            names.length ? `export const { ${names.join(', ')} } = m;` : '',
          ].join('\n'),
          resolveDir: root,
          loader: 'js',
        };
      });
    },
  };
}

// better-sqlite3 falls back to the `bindings` package, which searches the
// directories around the calling file for its addon. vnfm always hands it the
// loaded addon (src/store/native-binding.ts); this stub makes a missed case
// fail loudly instead of searching node_modules.
const noBindingsSearch = {
  name: 'no-bindings-search',
  setup(build) {
    build.onResolve({ filter: /^bindings$/ }, () => ({ path: 'bindings', namespace: 'vnfm-stub' }));
    build.onLoad({ filter: /.*/, namespace: 'vnfm-stub' }, () => ({
      contents: `module.exports = () => { throw new Error('internal: better-sqlite3 was opened without nativeBinding'); };`,
      loader: 'js',
    }));
  },
};

// node-postgres asks whether it runs on Cloudflare Workers by making a
// `Response`, which on Node 20 loads the whole fetch implementation (undici:
// ~50 ms of every command on a PostgreSQL store). vnfm runs on Node only.
const nodeOnlyPg = {
  name: 'node-only-pg',
  setup(build) {
    build.onLoad({ filter: /[\\/]pg[\\/]lib[\\/]stream\.js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      const probe = "typeof Response === 'function'";
      if (!text.includes(probe)) throw new Error(`${args.path}: node-postgres no longer probes for Cloudflare with ${probe}; look again at node-only-pg`);
      return { contents: text.replace(probe, 'false'), loader: 'js' };
    });
  },
};

/** What every build of vnfm's code takes: the addon stub and node-postgres on Node alone. */
const nodeFixes = [noBindingsSearch, nodeOnlyPg];

const common = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // ssh2's optional native helpers: never bundled (it falls back to
  // JavaScript), so bin/vnfm and the executable run the same code.
  // pg-native: the optional libpq binding node-postgres does without.
  external: ['cpu-features', '*.node', 'pg-native'],
  alias: WORKSPACE_PACKAGES,
  define: {
    __VNFM_COMMIT__: JSON.stringify(gitCommit()),
    // import.meta is empty in CommonJS: give code that uses it its file's location.
    'import.meta.url': '__vnfm_import_meta.url',
    'import.meta.dirname': '__dirname',
    'import.meta.filename': '__filename',
  },
  // Worked out when first read (a URL costs a little at every start, and few commands read it).
  banner: { js: `const __vnfm_import_meta = { get url() { return require('node:url').pathToFileURL(__filename).href; } };` },
  legalComments: 'none',
  // The bundle and its chunks run through vm.Script, which has no loader for a real import(): a dynamic import
  // of a module another chunk or the main bundle holds (`import('vnfm-shared:…')`) becomes a require.
  supported: { 'dynamic-import': false },
  // Less text to read and compile at every start (the main bundle 985 -> 731 KB, the Kubernetes
  // client's chunk 16 -> 6 MB). Names stay as written, so stack traces (--debug) still name functions.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
};

/** The room a source file belongs to, if it is one of CHUNKED_ROOMS: the one with the longest matching path. */
const roomOf = (file) => {
  const rel = relative(root, file);
  let best;
  let length = 0;
  for (const [name, paths] of Object.entries(CHUNKED_ROOMS)) {
    for (const path of [paths].flat()) {
      if (rel.startsWith(path) && path.length > length) [best, length] = [name, path.length];
    }
  }
  return best;
};
const roomFile = (name) => `room-${name}.cjs`;
const loaderPath = join(root, 'scripts', 'chunk-loader.ts');

// roomRouting and sharing each resolve a path again through esbuild, marking
// the nested call so that it skips itself. The marks add up (each keeps the
// other's): with one mark replacing the other, a dynamic import inside a room
// sent the two plugins resolving each other without end (GBs of memory).

/**
 * Routes `await import('…/infra/kubernetes/index.js')` or
 * `await import('@vnfm/kube-sandbox')` (from outside the room) to the room's
 * chunk, and records the files so loaded: the chunk's entries.
 */
const roomImportFilter = new RegExp(`^(\\.|(${Object.keys(WORKSPACE_PACKAGES).map(escapeRe).join('|')})$)`);
function roomRouting(entries) {
  return {
    name: 'vnfm-rooms',
    setup(build) {
      build.onResolve({ filter: roomImportFilter }, async (args) => {
        if (args.kind !== 'dynamic-import' || args.pluginData?.vnfmRoom) return undefined;
        const r = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: { ...args.pluginData, vnfmRoom: true } });
        if (r.errors.length > 0 || r.external || r.namespace !== 'file') return undefined;
        const room = roomOf(r.path);
        if (!room || room === roomOf(args.importer)) return undefined;
        const rel = relative(root, r.path);
        entries.get(room).add(rel);
        return { path: `${room}:${rel}`, namespace: 'vnfm-room' };
      });
      build.onLoad({ filter: /.*/, namespace: 'vnfm-room' }, (args) => {
        const [room, rel] = args.path.split(':');
        return {
          contents: `module.exports = require(${JSON.stringify(loaderPath)}).loadChunk(${JSON.stringify(roomFile(room))}).entries[${JSON.stringify(rel)}];`,
          resolveDir: root,
          loader: 'js',
        };
      });
    },
  };
}

/**
 * In a room's chunk: a module the main bundle holds is not bundled again but
 * taken from the main bundle (`require('vnfm-shared:src/errors.ts')`, served
 * by scripts/chunk-loader.ts), so each module has one instance; in the other
 * rooms' chunks, a module the base room's chunk holds is taken from that
 * chunk (`baseInputs`; `entries` records it as one of the chunk's entries).
 */
function sharing(mainInputs, used, baseInputs, entries) {
  return {
    name: 'vnfm-shared',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData?.vnfmShared || args.kind === 'entry-point' || isBuiltin(args.path) || chunkFilter.test(args.path)) return undefined;
        const r = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: { ...args.pluginData, vnfmShared: true } });
        if (r.errors.length > 0 || r.external || r.namespace !== 'file') return undefined;
        const rel = relative(root, r.path);
        if (baseInputs?.has(rel) && !mainInputs.has(rel)) {
          entries.get(BASE_ROOM).add(rel);
          return { path: `vnfm-room:${BASE_ROOM}:${rel}`, external: true };
        }
        if (!mainInputs.has(rel)) return undefined;
        used.add(rel);
        return { path: `vnfm-shared:${rel}`, external: true };
      });
    },
  };
}

/** Hands the chunks the main bundle's modules they import (see sharing()). */
function sharedRegistry(used) {
  return {
    name: 'vnfm-shared-registry',
    setup(build) {
      build.onResolve({ filter: /^vnfm-shared-registry$/ }, () => ({ path: 'registry', namespace: 'vnfm-shared-registry' }));
      build.onLoad({ filter: /.*/, namespace: 'vnfm-shared-registry' }, () => ({
        contents: [
          `import { shareModules } from ${JSON.stringify(loaderPath)};`,
          `shareModules({`,
          ...[...used].sort().map((rel) => `  ${JSON.stringify(rel)}: () => require(${JSON.stringify(join(root, rel))}),`),
          `});`,
        ].join('\n'),
        resolveDir: root,
        loader: 'js',
      }));
    },
  };
}

/**
 * Node's own modules that the main bundle loads at first use rather than at
 * start. esbuild hoists a module's imports into its initialiser, and the
 * entry's import graph initialises most modules at start, so without this
 * `vnfm --version` would load crypto, child_process (with net and dgram),
 * readline, zlib, worker_threads and the streams: a third of its start-up CPU.
 * Each `require("node:X")` of the main bundle becomes a stand-in object with
 * one getter per export of X (its names taken from the Node that builds),
 * which loads X on the first read; `import * as` and default imports
 * (esbuild's __toESM copies getters, never values) stay lazy too. A module that
 * reads a property at top level (`class A extends stream.Transform`) just loads
 * X then. The chunks require Node's modules themselves, untouched.
 */
export const LAZY_BUILTINS = [
  'node:child_process',
  'node:crypto',
  'node:fs/promises',
  'node:os',
  'node:readline',
  'node:stream',
  'node:stream/promises',
  'node:timers/promises',
  'node:tty',
  'node:v8',
  'node:worker_threads',
  'node:zlib',
];

/** Rewrites the main bundle's requires of LAZY_BUILTINS to stand-ins (see above). */
function lazyBuiltins(file) {
  const req = createRequire(import.meta.url);
  let code = readFileSync(file, 'utf8');
  const keys = {};
  for (const id of LAZY_BUILTINS) {
    const call = `require(${JSON.stringify(id)})`;
    if (!code.includes(call)) continue;
    keys[id] = Object.getOwnPropertyNames(req(id)).filter((k) => k !== '__esModule');
    code = code.split(call).join(`__vnfm_lazy(${JSON.stringify(id)})`);
  }
  const helper = [
    `var __vnfm_lazy_keys = ${JSON.stringify(keys)};`,
    // One stand-in per module, whichever of the bundle's modules import it.
    'var __vnfm_lazy_made = {};',
    'function __vnfm_lazy(id) {',
    '  if (__vnfm_lazy_made[id]) return __vnfm_lazy_made[id];',
    '  let real;',
    '  const load = () => (real ??= require(id));',
    '  const o = {};',
    '  for (const k of __vnfm_lazy_keys[id]) Object.defineProperty(o, k, { get: () => load()[k], set: (v) => { load()[k] = v; }, enumerable: true, configurable: true });',
    '  return (__vnfm_lazy_made[id] = o);',
    '}',
  ].join('\n');
  // After the banner's line: defined before any module of the bundle runs.
  const nl = code.indexOf('\n') + 1;
  code = code.slice(0, nl) + helper + '\n' + code.slice(nl);
  // esbuild escapes what is not ASCII in code, but keeps some comments as they are: escaped
  // there too, an ASCII bundle is read by bin/vnfm without decoding UTF-8.
  code = code.replace(/^(\s*(?:\/\/|\/\*).*)$/gm, (line) => line.replace(/[^\x00-\x7f]/gu, (c) => `\\u{${c.codePointAt(0).toString(16)}}`));
  writeFileSync(file, code);
}

/** Node's CommonJS wrapper around the main bundle, for bin/vnfm (see launcher-wrapper.mjs). */
function wrapForLauncher(file) {
  writeFileSync(file, LAUNCHER_WRAPPER[0] + readFileSync(file, 'latin1') + LAUNCHER_WRAPPER[1], 'latin1');
}

// Built beside the current output and swapped in by rename: a vnfm started
// during the build (another terminal, a test run) sees the old files or the
// new ones, never half of either.
const staging = join(buildDir, `.staging-${process.pid}`);
rmSync(staging, { recursive: true, force: true });
mkdirSync(join(staging, 'chunks'), { recursive: true });
const metafile = process.argv.includes('--metafile');
const used = usedExports();
// A package src/ does not import yet (node-ssh before the SSH driver lands) gets no chunk.
const plans = new Map();
for (const pkg of CHUNKED_PACKAGES) if (used.get(pkg).size > 0) plans.set(pkg, await chunkPlan(pkg, used.get(pkg)));

// Three steps: the main bundle, to learn what it holds and which room files
// other code loads lazily; the rooms' chunks, taking from the main bundle
// what it holds; the main bundle again, now offering the chunks those modules.
const entryFile = join(root, 'scripts', 'vnfm-entry.ts');
/** The main bundle's entry, with the shared modules' registry evaluated before it. */
const withRegistry = {
  name: 'vnfm-entry-registry',
  setup(build) {
    build.onLoad({ filter: /vnfm-entry\.ts$/ }, (args) =>
      args.path === entryFile ? { contents: `import 'vnfm-shared-registry';\n${readFileSync(entryFile, 'utf8')}`, loader: 'ts' } : undefined,
    );
  },
};
const roomEntries = new Map(Object.keys(CHUNKED_ROOMS).map((name) => [name, new Set()]));
const firstPass = await esbuild.build({
  ...common,
  entryPoints: ['scripts/vnfm-entry.ts'],
  write: false,
  outfile: join(staging, 'vnfm.cjs'),
  plugins: [roomRouting(roomEntries), chunkRouting(plans), ...nodeFixes],
  metafile: true,
});
const mainInputs = new Set(Object.keys(firstPass.metafile.inputs));
const sharedUsed = new Set();
// A chunk may load another room lazily too (a driver and the sandbox): build
// until no chunk names a room entry the chunks were not built with.
let rooms;
let roomBuilds;
for (let round = 0; ; round++) {
  const before = [...roomEntries.values()].reduce((n, files) => n + files.size, 0);
  rooms = [...roomEntries].filter(([, files]) => files.size > 0).map(([name, files]) => [name, [...files].sort()]);
  // The base room first: the others take from its chunk what it holds.
  rooms.sort(([a], [b]) => Number(b === BASE_ROOM) - Number(a === BASE_ROOM));
  const buildRoom = ([name, list], baseInputs) =>
    esbuild.build({
      ...common,
      stdin: {
        contents: [
          ...list.map((rel, i) => `import * as e${i} from ${JSON.stringify(`./${rel}`)};`),
          `export const entries = { ${list.map((rel, i) => `${JSON.stringify(rel)}: e${i}`).join(', ')} };`,
        ].join('\n'),
        resolveDir: root,
        loader: 'ts',
      },
      outfile: join(staging, 'chunks', roomFile(name)),
      // A room is vnfm's own code (its dependencies come from the main bundle or a chunk), written as ES modules, which
      // are strict: kept strict as CommonJS, so a write to a frozen object (the sandbox's stored objects) throws here too.
      banner: { js: `'use strict';\n${common.banner.js}` },
      plugins: [roomRouting(roomEntries), sharing(mainInputs, sharedUsed, baseInputs, roomEntries), chunkRouting(plans), ...nodeFixes],
      metafile: true,
    });
  const base = rooms[0]?.[0] === BASE_ROOM ? await buildRoom(rooms[0], undefined) : undefined;
  const baseInputs = new Set(Object.keys(base?.metafile.inputs ?? {}));
  roomBuilds = [...(base ? [base] : []), ...(await Promise.all(rooms.slice(base ? 1 : 0).map((room) => buildRoom(room, baseInputs))))];
  if ([...roomEntries.values()].reduce((n, files) => n + files.size, 0) === before) break;
  if (round === 3) throw new Error("bundle: the rooms' entries did not settle");
}
// A source file in two chunks would be two modules (two copies of a class, of a cache).
const owner = new Map();
for (const [i, [name]] of rooms.entries()) {
  for (const input of Object.keys(roomBuilds[i].metafile.inputs)) {
    if (!SOURCE_DIRS.some((dir) => input.startsWith(`${dir}/`))) continue;
    if (owner.has(input)) {
      console.error(
        `bundle: ${input} is in the chunks of both ${owner.get(input)} and ${name}; import it statically from outside the rooms so the main bundle holds it, or keep it within one room`,
      );
      rmSync(staging, { recursive: true, force: true });
      process.exit(1);
    }
    owner.set(input, name);
  }
}
const builds = await Promise.all([
  esbuild.build({
    ...common,
    entryPoints: ['scripts/vnfm-entry.ts'],
    outfile: join(staging, 'vnfm.cjs'),
    plugins: [withRegistry, sharedRegistry(sharedUsed), roomRouting(roomEntries), chunkRouting(plans), ...nodeFixes],
    metafile,
  }),
  // Each chunk carries its own dependencies (a second copy of js-yaml in the
  // Kubernetes client's chunk costs less than wiring chunks to each other).
  ...[...plans].map(([pkg, plan]) =>
    esbuild.build({
      ...common,
      stdin: { contents: plan.entry, resolveDir: root, loader: 'js' },
      outfile: join(staging, 'chunks', chunkFile(pkg)),
      plugins: [...nodeFixes],
    }),
  ),
]);

lazyBuiltins(join(staging, 'vnfm.cjs'));
wrapForLauncher(join(staging, 'vnfm.cjs'));

const size = statSync(join(staging, 'vnfm.cjs')).size;
if (size > MAIN_BUNDLE_BUDGET) {
  rmSync(staging, { recursive: true, force: true });
  console.error(`bundle: build/vnfm.cjs would be ${(size / 1024).toFixed(0)} KiB, over the ${MAIN_BUNDLE_BUDGET / 1024} KiB start-up budget.`);
  console.error("Run `node scripts/bundle.mjs --metafile` and look at build/vnfm.meta.json (esbuild's analyzer) for what grew it:");
  console.error(
    "a large package goes into CHUNKED_PACKAGES, a room of vnfm's own loaded by few commands into CHUNKED_ROOMS (and is imported with await import() from outside it); if the rest outgrew it, raise MAIN_BUNDLE_BUDGET and check `npm run bench`.",
  );
  if (metafile) writeFileSync(join(buildDir, 'vnfm.meta.json'), JSON.stringify(builds[0].metafile));
  process.exit(1);
}
if (metafile) writeFileSync(join(buildDir, 'vnfm.meta.json'), JSON.stringify(builds[0].metafile));

// The chunks first: the new main bundle may load a chunk the old one had not.
const oldChunks = join(buildDir, `.old-chunks-${process.pid}`);
if (existsSync(chunkDir)) renameSync(chunkDir, oldChunks);
renameSync(join(staging, 'chunks'), chunkDir);
renameSync(join(staging, 'vnfm.cjs'), join(buildDir, 'vnfm.cjs'));
rmSync(oldChunks, { recursive: true, force: true });
rmSync(staging, { recursive: true, force: true });
// What older builds left: the per-file tsc output that bin/vnfm once ran. Test reports
// (build/fidelity-report*, written by the conformance suite) and the manual pages (scripts/man.mjs) stay.
for (const name of readdirSync(buildDir)) {
  if (!['vnfm.cjs', 'chunks', 'sea', 'vnfm.meta.json', 'man'].includes(name) && !name.startsWith('.') && !name.startsWith('fidelity-report'))
    rmSync(join(buildDir, name), { recursive: true, force: true });
}
