/**
 * The files vnfm ships with: `templates/` (vim-configs, request bodies, the
 * ETSI NFV type definitions) and `csar-samples/`. From the source tree and
 * bin/vnfm they are read from the repository; the single executable carries
 * them in one embedded archive (a plain ustar file written by
 * scripts/dist.mjs), so an air-gapped machine has every sample with no files
 * beside the executable.
 *
 * Paths are relative and use `/`: `templates/vim-config-kubernetes.yaml`,
 * `csar-samples/<name>/TOSCA-Metadata/TOSCA.meta`.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as sea from 'node:sea';
import { NotFoundError, VnfmError } from '../errors.js';

/** The top-level directories that ship; scripts/dist.mjs packs exactly these. */
export const SHIPPED_DIRS = ['templates', 'csar-samples'] as const;

/** The SEA asset holding them. */
export const SHIPPED_FILES_ASSET = 'shipped-files.tar';

interface Source {
  list(): string[];
  read(path: string): Buffer | undefined;
}

let source: Source | undefined;

function getSource(): Source {
  source ??= sea.isSea() ? archiveSource(Buffer.from(sea.getRawAsset(SHIPPED_FILES_ASSET) as ArrayBuffer)) : treeSource(findRepositoryRoot());
  return source;
}

/** Every shipped file under `prefix` (a directory such as `csar-samples/foo`, or '' for all), sorted. */
export function listShippedFiles(prefix = ''): string[] {
  const dir = normalize(prefix);
  return getSource()
    .list()
    .filter((p) => dir === '' || p.startsWith(dir + '/'))
    .sort();
}

/** The bytes of one shipped file. */
export function readShippedFile(path: string): Buffer {
  const data = getSource().read(normalize(path));
  if (!data) throw new NotFoundError(`vnfm ships no file ${path}`, { hint: `see the shipped files with: ${SHIPPED_DIRS.map((d) => d + '/').join(', ')}` });
  return data;
}

/**
 * Writes the shipped tree under `prefix` into `dest` (created if missing) and
 * returns the files written: for code that needs a real directory, such as
 * validating a sample package.
 */
export function copyShippedTree(prefix: string, dest: string): string[] {
  const dir = normalize(prefix);
  const files = listShippedFiles(dir);
  if (files.length === 0) throw new NotFoundError(`vnfm ships no directory ${prefix}`, { hint: 'check the name against the csar-samples/ and templates/ directories' });
  return files.map((file) => {
    const target = join(dest, file.slice(dir.length + 1));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, readShippedFile(file));
    return target;
  });
}

/** Refuses anything that could leave the shipped trees. */
function normalize(path: string): string {
  const p = path.replace(/\/+$/, '');
  if (p === '') return p;
  const parts = p.split('/');
  if (p.startsWith('/') || parts.some((s) => s === '' || s === '.' || s === '..') || !(SHIPPED_DIRS as readonly string[]).includes(parts[0]!)) {
    throw new VnfmError(`"${path}" is not a path inside vnfm's shipped files`, { hint: `use a relative path under ${SHIPPED_DIRS.join('/ or ')}/` });
  }
  return p;
}

/** The repository vnfm runs from: the nearest directory up from this code with package.json and templates/. */
function findRepositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'templates'))) return dir;
    const parent = resolve(dir, '..');
    if (parent === dir) throw new VnfmError('cannot find the templates/ directory of this vnfm installation', { hint: 'reinstall vnfm' });
    dir = parent;
  }
}

function treeSource(root: string): Source {
  return {
    list: () =>
      SHIPPED_DIRS.filter((d) => existsSync(join(root, d))).flatMap((d) =>
        readdirSync(join(root, d), { recursive: true, encoding: 'utf8' })
          .filter((f) => statSync(join(root, d, f)).isFile())
          .map((f) => `${d}/${f.split('\\').join('/')}`),
      ),
    read: (path) => {
      const file = join(root, path);
      return existsSync(file) && statSync(file).isFile() ? readFileSync(file) : undefined;
    },
  };
}

/** Reads the ustar archive in place: regular files only, as scripts/dist.mjs writes them. */
function archiveSource(tar: Buffer): Source {
  const files = new Map<string, Buffer>();
  const field = (block: Buffer, at: number, len: number) => {
    const raw = block.subarray(at, at + len);
    const end = raw.indexOf(0);
    return raw.subarray(0, end === -1 ? len : end).toString('utf8');
  };
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const name = field(header, 0, 100);
    const prefix = field(header, 345, 155);
    const size = parseInt(field(header, 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(header[156]!);
    if (type === '0' || type === '\0') files.set(prefix ? `${prefix}/${name}` : name, tar.subarray(at + 512, at + 512 + size));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return { list: () => [...files.keys()], read: (path) => files.get(path) };
}
