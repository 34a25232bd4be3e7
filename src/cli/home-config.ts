/**
 * `VNFM_HOME/config.yaml`: settings a machine keeps instead of exporting them
 * in every shell. Today one key:
 *
 *   database: postgres://vnfm@db.example.net/vnfm?sslrootcert=/etc/vnfm/ca.pem
 *
 * A flag or an environment variable wins over the file. A file that holds a
 * password must be private to its owner (as ssh requires of a key); a key
 * vnfm does not know is refused rather than ignored, so a typo never leaves
 * a setting silently unused.
 */
import { fstatSync, openSync, closeSync, readFileSync, constants } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors.js';

export const HOME_CONFIG_FILE = 'config.yaml';
const KNOWN_KEYS = ['database'] as const;
const MAX_BYTES = 64 * 1024;

export interface HomeConfig {
  /** The file read. */
  path: string;
  /** The shared store's URL (`database`). */
  database?: string;
}

/** True when the URL carries a password (in its user part or as `?password=`). */
function holdsPassword(url: string): boolean {
  try {
    const u = new URL(url);
    return u.password !== '' || u.searchParams.has('password');
  } catch {
    return /\/\/[^/@]*:[^@]*@|[?&]password=/i.test(url);
  }
}

/** Reads `<home>/config.yaml`; `undefined` when there is none. */
export async function readHomeConfig(home: string): Promise<HomeConfig | undefined> {
  const path = join(home, HOME_CONFIG_FILE);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read the configuration file ${path}: ${(err as Error).message}`, { cause: err });
  }
  let text: string;
  let mode: number;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new UsageError(`the configuration file ${path} is not a regular file`);
    if (st.size > MAX_BYTES) throw new UsageError(`the configuration file ${path} is larger than ${MAX_BYTES / 1024} KiB`);
    mode = st.mode & 0o777;
    text = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  const { parseConfigYaml } = await import('../yaml.js');
  const doc = parseConfigYaml(text, path);
  if (doc === null || doc === undefined) return { path };
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new UsageError(`the configuration file ${path} is not a mapping of keys to values`, { hint: `write it as lines of KEY: VALUE; vnfm reads ${KNOWN_KEYS.join(', ')}` });
  }
  for (const key of Object.keys(doc)) {
    if (!(KNOWN_KEYS as readonly string[]).includes(key)) {
      throw new UsageError(`the configuration file ${path} has the key "${key}", which vnfm does not know`, {
        hint: `vnfm reads ${KNOWN_KEYS.join(', ')} there; remove or correct "${key}"`,
      });
    }
  }
  const database = (doc as Record<string, unknown>)['database'];
  if (database === undefined || database === null) return { path };
  if (typeof database !== 'string' || !/^postgres(ql)?:\/\//i.test(database)) {
    throw new UsageError(`the configuration file ${path}: database is not a postgres:// URL`, {
      hint: 'write it as database: postgres://USER@HOST:PORT/DATABASE?sslrootcert=CA, or remove the key for the local SQLite store',
    });
  }
  if (holdsPassword(database) && process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new UsageError(`the configuration file ${path} holds a database password and other users may read it (mode ${mode.toString(8).padStart(4, '0')})`, {
      hint: `chmod 600 ${path}, or take the password out of the URL (PGPASSWORD or ~/.pgpass)`,
    });
  }
  return { path, database };
}
