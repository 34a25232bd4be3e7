/**
 * A PackageFiles over an in-memory map of path → text, so the VNFD and
 * manifest checks can be tested without zips; and a reader that turns a
 * fixture directory into such a map.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import type { PackageFiles } from '../../src/model/package-files.js';

export function memoryPackage(members: Record<string, string>, origin = 'memory'): PackageFiles {
  const paths = Object.keys(members).sort();
  const get = (path: string): string => {
    const text = members[path];
    if (text === undefined) throw new Error(`${path} is not in the package`);
    return text;
  };
  return {
    origin,
    list: () => [...paths],
    has: (path) => Object.hasOwn(members, path),
    size: (path) => Buffer.byteLength(get(path)),
    async readText(path, maxBytes = 4 * 1024 * 1024) {
      const text = get(path);
      if (Buffer.byteLength(text) > maxBytes) throw new Error(`${path} is larger than ${maxBytes} bytes`);
      return text;
    },
    async stream(path) {
      return Readable.from([Buffer.from(get(path))]);
    },
    async close() {},
  };
}

/** Every regular file under `dir`, keyed by its '/'-separated path relative to `dir`. */
export async function readDirectoryTree(dir: string): Promise<Record<string, string>> {
  const members: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    members[relative(dir, full).split(sep).join('/')] = await readFile(full, 'utf8');
  }
  return members;
}
