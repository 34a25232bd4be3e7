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
import { readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import { compileFunction } from 'node:vm';

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
  const run = compileFunction(code, ['exports', 'require', 'module', '__filename', '__dirname'], { filename });
  run.call(module.exports, module.exports, chunkRequire, module, filename, dirname(filename));
  loaded.set(file, module.exports);
  return module.exports;
}

/**
 * A chunk holds all its dependencies but those the main bundle holds
 * (`vnfm-shared:<source path>`); what it still requires are Node's built-in
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
  if (isBuiltin(id)) return require(id);
  throw Object.assign(new Error(`Cannot find module '${id}' (vnfm loads only built-in modules from its chunks)`), { code: 'MODULE_NOT_FOUND' });
}
