/**
 * Loads a "chunk" of the bundle: one heavy package (the Kubernetes client,
 * the prompts, YAML, SSH) or one of vnfm's own rooms (the sandbox, a driver),
 * bundled into its own CommonJS file by scripts/bundle.mjs and evaluated only
 * when a command first needs it. Node then never reads or parses that code
 * for `--version` or `vim-list`.
 *
 * bin/vnfm reads chunks from build/chunks/; the single executable from its
 * embedded assets (`chunks/<file>`). Either way the same code runs.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { Script } from 'node:vm';
import { trustedCachePath } from '../src/cache-files.js';

const loaded = new Map<string, unknown>();
/** The main bundle's modules that rooms' chunks import, by source path (scripts/bundle.mjs fills it). */
let shared: Record<string, () => unknown> = {};

export function shareModules(modules: Record<string, () => unknown>): void {
  shared = modules;
}

function readChunk(file: string): { code: string; filename: string } {
  // node:sea exists from Node 20.12; older Nodes only ever run bin/vnfm.
  const sea = require('node:sea') as typeof import('node:sea');
  if (sea.isSea()) {
    return { code: sea.getAsset(`chunks/${file}`, 'utf8'), filename: join(dirname(process.execPath), 'vnfm-chunks', file) };
  }
  const filename = join(__dirname, 'chunks', file);
  return { code: readFileSync(filename, 'utf8'), filename };
}

export function loadChunk(file: string): unknown {
  if (loaded.has(file)) return loaded.get(file);
  const { code, filename } = readChunk(file);
  const module = { exports: {} as unknown };
  // Node's own wrapper, on one line, so the chunk's own lines keep their numbers in stack traces; a chunk's 'use strict' stays the body's first statement.
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${code}\n})`;
  const cache = codeCache(file, code);
  const script = new Script(wrapped, { filename, cachedData: cache?.read() });
  if (cache && (!cache.found || script.cachedDataRejected)) process.once('exit', () => cache.write(script));
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run.call(module.exports, module.exports, chunkRequire, module, filename, dirname(filename));
  loaded.set(file, module.exports);
  return module.exports;
}

/**
 * V8's code cache of a chunk, kept beside bin/vnfm's cache of the bundle
 * (VNFM_HOME/cache, made by the store, 0700): compiling the Kubernetes
 * driver's or the sandbox's chunk from source is a large part of a command's
 * CPU. The file is named after the chunk's content, Node's version and the
 * architecture, so a new build or Node never reads an old cache; V8 checks
 * it again and ignores one that does not match. Written at exit (so it holds
 * the functions the command compiled too), only when there was none or V8
 * rejected it, and only into a directory of this user that no one else can
 * write. A missing or read-only home just compiles from source.
 */
function codeCache(file: string, code: string): { found: boolean; read(): Buffer | undefined; write(script: Script): void } | undefined {
  const home = process.env.VNFM_HOME ? resolve(process.env.VNFM_HOME) : join(process.env.HOME || (require('node:os') as typeof import('node:os')).homedir(), '.vnfm');
  const dir = join(home, 'cache');
  const stem = `chunk-${file.replace(/\.cjs$/, '')}-`;
  const name = `${stem}${process.version}-${process.arch}-${(require('node:crypto') as typeof import('node:crypto')).createHash('sha256').update(code).digest('hex').slice(0, 24)}.v8`;
  const path = join(dir, name);
  let data: Buffer | undefined;
  try {
    if (trustedCachePath(dir, true) && trustedCachePath(path, false)) data = readFileSync(path);
  } catch {
    // No cache yet.
  }
  return {
    found: data !== undefined,
    read: () => data,
    write(script) {
      try {
        if (!existsSync(home)) return;
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        if (!trustedCachePath(dir, true)) return;
        for (const old of readdirSync(dir)) if (old.startsWith(`${stem}v`) && old.endsWith('.v8') && old !== name) rmSync(join(dir, old), { force: true });
        const tmp = join(dir, `.${name}.${process.pid}`);
        writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
        renameSync(tmp, path);
      } catch {
        // A read-only or full home: the next command compiles from source again.
      }
    },
  };
}

/**
 * A chunk holds all its dependencies but those the main bundle holds
 * (`vnfm-shared:<source path>`) and those the base room's chunk holds
 * (`vnfm-room:<room>:<source path>`, one of that chunk's entries: see
 * BASE_ROOM in scripts/bundle.mjs); what it still requires are Node's built-in
 * modules and optional helpers that packages try and do without (bufferutil,
 * supports-color, ssh2's native crypto). Those are never looked for on disk,
 * so bin/vnfm behaves as the executable does, whatever else is installed in
 * node_modules.
 */
function chunkRequire(id: string): unknown {
  if (id.startsWith('vnfm-shared:')) {
    const get = shared[id.slice('vnfm-shared:'.length)];
    if (!get) throw new Error(`internal: a chunk asked for ${id}, which the main bundle does not offer (rebuild with npm run build)`);
    return get();
  }
  if (id.startsWith('vnfm-room:')) {
    const [, room, rel] = id.split(':');
    const entries = (loadChunk(`room-${room}.cjs`) as { entries: Record<string, unknown> }).entries;
    if (!rel || !(rel in entries)) throw new Error(`internal: a chunk asked for ${id}, which the ${room} chunk does not offer (rebuild with npm run build)`);
    return entries[rel];
  }
  if (isBuiltin(id)) return require(id);
  throw Object.assign(new Error(`Cannot find module '${id}' (vnfm loads only built-in modules from its chunks)`), { code: 'MODULE_NOT_FOUND' });
}
