/**
 * What each definition file of a package parsed to, kept as JSON under
 * VNFM_HOME/cache/manifests and named by the SHA-256 of the file's text: an
 * operation reads the same manifests again and again (every instantiate of
 * a package, every scale and heal), and js-yaml took a twentieth of the CPU
 * of an instantiate of 50 objects where JSON.parse takes a few hundredths of
 * that. Named by the text itself, an entry never goes stale. Only documents
 * that JSON gives back exactly are kept: plain objects, arrays, strings,
 * booleans, null and finite numbers (not -0), with no object reached twice
 * (a YAML alias shares it, a copy would not); a file with a timestamp (a
 * Date) or binary data is parsed every time. Entries are read only from a
 * directory and files of vnfm's own user that no one else can write, as the
 * launcher's code cache is; any failure to read or write one is ignored.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Names the parse: a change to what parsing yields (schema, loader) changes it, and with it every entry's name. */
const FORMAT = 'js-yaml 4 DEFAULT_SCHEMA loadAll, v1';

export interface ManifestCache {
  /** The documents of a file with this text, as parsed before; undefined when not kept. */
  load(text: string): unknown[] | undefined;
  /** Keeps the documents of a file with this text, when JSON gives them back exactly. */
  save(text: string, docs: readonly unknown[]): void;
}

/** The cache under `home` (written only into a VNFM_HOME that exists). */
export function manifestCache(home: string): ManifestCache {
  const dir = join(home, 'cache', 'manifests');
  const fileOf = (text: string) => join(dir, `${createHash('sha256').update(FORMAT).update('\0').update(text).digest('hex')}.json`);
  return {
    load(text) {
      try {
        const file = fileOf(text);
        if (!trusted(dir, true) || !trusted(file, false)) return undefined;
        const docs = JSON.parse(readFileSync(file, 'utf8')) as unknown;
        return Array.isArray(docs) ? docs : undefined;
      } catch {
        return undefined;
      }
    },
    save(text, docs) {
      try {
        if (!existsSync(home) || !jsonExact(docs)) return;
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        if (!trusted(dir, true)) return;
        const file = fileOf(text);
        const tmp = `${file}.${process.pid}.tmp`;
        writeFileSync(tmp, JSON.stringify(docs), { mode: 0o600 });
        renameSync(tmp, file);
      } catch {
        // A cache: the next operation parses the file again.
      }
    },
  };
}

/** Ours, of the kind wanted, and writable by no one else. */
function trusted(path: string, isDir: boolean): boolean {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st || (isDir ? !st.isDirectory() : !st.isFile())) return false;
  return (typeof process.getuid !== 'function' || st.uid === process.getuid()) && (st.mode & 0o022) === 0;
}

/** Whether JSON.parse(JSON.stringify(value)) is a copy of `value` that no use can tell from it. */
export function jsonExact(value: unknown, seen = new Set<object>()): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0);
  if (typeof value !== 'object') return false;
  if (seen.has(value)) return false;
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!(i in value) || !jsonExact(value[i], seen)) return false;
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key !== 'string') return false;
    const d = Object.getOwnPropertyDescriptor(value, key)!;
    if (!d.enumerable || !('value' in d) || !jsonExact(d.value, seen)) return false;
  }
  return true;
}
