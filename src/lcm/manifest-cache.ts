/**
 * What each definition file of a package parsed to, kept as JSON under
 * VNFM_HOME/cache/manifests and named by the SHA-256 of the file's text: an
 * operation reads the same manifests again and again (every instantiate of
 * a package, every scale and heal), and js-yaml took a twentieth of the CPU
 * of an instantiate of 50 objects where JSON.parse takes a few hundredths of
 * that. Named by the text itself, an entry never goes stale. Only documents
 * that JSON gives back exactly are kept: plain objects, arrays, strings,
 * booleans, null and finite numbers (not -0); a file with a timestamp (a
 * Date) or binary data is parsed every time. An object a YAML alias reaches
 * twice is one object in what js-yaml gives (a change to it shows at both
 * places), so the entry lists where each such object is reached again and
 * the copies JSON makes there are made that object again. Entries are read only from a
 * directory and files of vnfm's own user that no one else can write, as the
 * launcher's code cache is; any failure to read or write one is ignored.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { trustedCachePath } from '../cache-files.js';

/** Names the parse: a change to what parsing yields (schema, loader) changes it, and with it every entry's name. */
const FORMAT = 'js-yaml 4 DEFAULT_SCHEMA loadAll, v1';

export interface ManifestCache {
  /** The documents of a file with this text, as parsed before; undefined when not kept. */
  load(text: string): unknown[] | undefined;
  /** Keeps the documents of a file with this text, when JSON gives them back exactly. */
  save(text: string, docs: readonly unknown[]): void;
}

/** Keys and indexes from the list of documents down to a value. */
type Path = (string | number)[];

/** An entry: the documents, and where an object already met is reached again (`[where, first]`). */
interface Entry {
  docs: unknown[];
  links: [Path, Path][];
}

/** The cache under `home` (written only into a VNFM_HOME that exists). */
export function manifestCache(home: string): ManifestCache {
  const dir = join(home, 'cache', 'manifests');
  const fileOf = (text: string) => join(dir, `${createHash('sha256').update(FORMAT).update('\0').update(text).digest('hex')}.json`);
  return {
    load(text) {
      try {
        const file = fileOf(text);
        if (!trustedCachePath(dir, true) || !trustedCachePath(file, false)) return undefined;
        const entry = JSON.parse(readFileSync(file, 'utf8')) as Partial<Entry>;
        if (!Array.isArray(entry.docs) || !Array.isArray(entry.links)) return undefined;
        return relinked(entry.docs, entry.links);
      } catch {
        return undefined;
      }
    },
    save(text, docs) {
      try {
        const links: [Path, Path][] = [];
        if (!existsSync(home) || !jsonExact(docs, [], new Map(), links)) return;
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        if (!trustedCachePath(dir, true)) return;
        const file = fileOf(text);
        const tmp = `${file}.${process.pid}.tmp`;
        writeFileSync(tmp, JSON.stringify({ docs, links }), { mode: 0o600 });
        renameSync(tmp, file);
      } catch {
        // A cache: the next operation parses the file again.
      }
    },
  };
}

/**
 * Whether JSON.parse(JSON.stringify(value)) is a copy of `value` that no use
 * can tell from it, once the objects `links` lists are made one again: each
 * object or array met a second time is listed with the path it was first met
 * at (and not walked again).
 */
export function jsonExact(value: unknown, path: Path = [], seen = new Map<object, Path>(), links: [Path, Path][] = []): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0);
  if (typeof value !== 'object') return false;
  const first = seen.get(value);
  if (first) {
    links.push([path, first]);
    return true;
  }
  seen.set(value, path);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!(i in value) || !jsonExact(value[i], [...path, i], seen, links)) return false;
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key !== 'string') return false;
    const d = Object.getOwnPropertyDescriptor(value, key)!;
    if (!d.enumerable || !('value' in d) || !jsonExact(d.value, [...path, key], seen, links)) return false;
  }
  return true;
}

/** The documents with each listed place holding the object first met at its other path again; undefined if a path leads nowhere. */
function relinked(docs: unknown[], links: [Path, Path][]): unknown[] | undefined {
  const at = (path: Path): unknown =>
    path.reduce<unknown>((node, key) => (node !== null && typeof node === 'object' ? (node as Record<string | number, unknown>)[key] : undefined), docs);
  for (const link of links) {
    if (!Array.isArray(link) || !Array.isArray(link[0]) || !Array.isArray(link[1]) || link[0].length === 0) return undefined;
    const [where, first] = link;
    const target = at(first);
    const parent = at(where.slice(0, -1));
    const key = where[where.length - 1]!;
    if (target === null || typeof target !== 'object' || parent === null || typeof parent !== 'object' || !Object.hasOwn(parent, key)) return undefined;
    Object.defineProperty(parent, key, { value: target, writable: true, enumerable: true, configurable: true });
  }
  return docs;
}
