/**
 * Finds and loads better-sqlite3's native addon, so that `database.ts` can
 * hand it over as `nativeBinding` and better-sqlite3 never searches the
 * directories around it (the bundle has no node_modules beside it, the single
 * executable has none at all).
 *
 * From the source tree or bin/vnfm: the addon that npm built in
 * node_modules/better-sqlite3. Inside the single executable: the copy embedded
 * as an asset, written once into a private cache under VNFM_HOME, named by its
 * SHA-256 and checked against it before it is loaded: hashed when its inode,
 * size or times differ from the last check's (kept beside it), so any change
 * to it is caught without hashing 2 MB at every start. A shared library can
 * only be loaded from a file, hence the cache.
 */
import { closeSync, constants, existsSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as sea from 'node:sea';
import { VnfmError } from '../errors.js';

/** SEA asset names, shared with scripts/dist.mjs. */
export const ADDON_ASSET = 'better_sqlite3.node';
export const ADDON_HASH_ASSET = 'better_sqlite3.node.sha256';

/** Where, under VNFM_HOME, the executable keeps its extracted addon. */
export const NATIVE_CACHE_DIR = join('cache', 'native');

let loaded: object | undefined;

/** The addon's exports, loaded once per process. `home` is VNFM_HOME, already created 0700. */
export function loadNativeBinding(home: string): object {
  loaded ??= runningAsSingleExecutable() ? loadEmbeddedAddon(home) : loadInstalledAddon();
  return loaded;
}

/** Whether this process is the single executable (`npm run dist`) rather than Node running vnfm. */
export function runningAsSingleExecutable(): boolean {
  return sea.isSea();
}

function loadInstalledAddon(): object {
  const require = createRequire(import.meta.url);
  let file = installedAddonBesideBundle();
  if (file === undefined) {
    try {
      file = join(dirname(require.resolve('better-sqlite3')), '..', 'build', 'Release', 'better_sqlite3.node');
    } catch (cause) {
      throw new VnfmError('better-sqlite3 is not installed', { hint: 'run npm ci in the vnfm directory', cause });
    }
  }
  if (!existsSync(file)) {
    throw new VnfmError(`better-sqlite3's native addon is missing (${file})`, { hint: 'run npm rebuild better-sqlite3' });
  }
  return require(file) as object;
}

/**
 * bin/vnfm's bundle is build/vnfm.cjs, with the project's node_modules beside build/: the addon is
 * there, found without Node's package resolution (a walk and a package.json read at every start).
 * Elsewhere (the source tree under test, another layout) undefined, and the resolution decides.
 */
function installedAddonBesideBundle(): string | undefined {
  const bundle = fileURLToPath(import.meta.url);
  if (basename(bundle) !== 'vnfm.cjs') return undefined;
  const file = join(dirname(bundle), '..', 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
  return existsSync(file) ? file : undefined;
}

function loadEmbeddedAddon(home: string): object {
  const expected = sea.getAsset(ADDON_HASH_ASSET, 'utf8').trim();
  const dir = join(home, NATIVE_CACHE_DIR);
  ensureCacheDir(home, dir);
  const file = join(dir, `better_sqlite3-${expected}.node`);
  let fd = openVerified(file, expected);
  if (fd === undefined) {
    const bytes = new Uint8Array(sea.getRawAsset(ADDON_ASSET) as ArrayBuffer);
    if (sha256(bytes) !== expected)
      throw new VnfmError('this vnfm executable is damaged: its SQLite addon does not match its checksum', { hint: 'copy the executable again and compare it with SHA256SUMS' });
    // Written under a temporary name and renamed, so a concurrent vnfm never sees half a file.
    const tmp = join(dir, `.tmp-${process.pid}-${expected}`);
    rmSync(tmp, { force: true });
    writeFileSync(tmp, bytes, { mode: 0o500, flag: 'wx' });
    renameSync(tmp, file);
    fd = openVerified(file, expected);
    if (fd === undefined) throw new VnfmError(`${file} changed while vnfm wrote it`, { hint: `remove ${dir} and run vnfm again` });
  }
  try {
    const module = { exports: {} as object };
    // Load the very file that was hashed, through its descriptor where Linux allows, so it cannot be swapped in between.
    const target = existsSync('/proc/self/fd') ? `/proc/self/fd/${fd}` : file;
    try {
      process.dlopen(module, target);
    } catch (cause) {
      throw addonLoadError(file, dir, cause);
    }
    return module.exports;
  } finally {
    closeSync(fd);
  }
}

/** The cache directory: created 0700, a real directory (no symlink) owned by this user, like VNFM_HOME itself. */
function ensureCacheDir(home: string, dir: string): void {
  for (const d of [join(home, 'cache'), dir]) {
    mkdirSync(d, { recursive: true, mode: 0o700 });
    const st = lstatSync(d);
    if (!st.isDirectory()) {
      throw new VnfmError(`${d} is not a directory (a symlink?); vnfm keeps its SQLite addon there and trusts no link`, { hint: `remove ${d}; vnfm recreates it` });
    }
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
      throw new VnfmError(`${d} belongs to another user (uid ${st.uid})`, { hint: 'set VNFM_HOME to a directory you own' });
    }
    if ((st.mode & 0o077) !== 0) {
      throw new VnfmError(`${d} is open to other users (mode ${(st.mode & 0o777).toString(8)})`, { hint: `chmod 700 ${d}` });
    }
  }
}

/**
 * Opens the cached addon without following a symlink and checks owner and
 * content; returns its descriptor, or undefined when there is no good copy
 * (a bad one is removed, to be written again).
 */
function openVerified(file: string, expected: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new VnfmError(`${file} is a symlink; vnfm loads its SQLite addon only from a file it wrote`, { hint: `remove ${file}` });
    throw err;
  }
  const st = fstatSync(fd);
  const foreign = typeof process.getuid === 'function' && st.uid !== process.getuid();
  if (!st.isFile() || foreign) {
    closeSync(fd);
    throw new VnfmError(`${file} is not a regular file owned by you`, { hint: `remove ${file}` });
  }
  // The file as it was when last hashed here (same inode, size and times to the nanosecond, which any write
  // changes) is not hashed again: reading and hashing 2 MB was a tenth of a short command's CPU.
  const identity = fileIdentity(fd);
  if (readStamp(file) === identity) return fd;
  if (sha256(readFileSync(fd)) === expected) {
    writeStamp(file, identity);
    return fd;
  }
  closeSync(fd);
  rmSync(file, { force: true });
  rmSync(stampOf(file), { force: true });
  return undefined;
}

/** Beside the addon: the identity of the file whose hash was last checked (`dev:ino:size:mtime:ctime`, nanoseconds). */
const stampOf = (file: string): string => `${file}.checked`;

function fileIdentity(fd: number): string {
  const st = fstatSync(fd, { bigint: true });
  return [st.dev, st.ino, st.size, st.mtimeNs, st.ctimeNs].join(':');
}

function readStamp(file: string): string | undefined {
  try {
    const fd = openSync(stampOf(file), constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const st = fstatSync(fd);
      // Only a stamp this user wrote and no one else could have: the directory is 0700 and the file 0600.
      if (!st.isFile() || (typeof process.getuid === 'function' && st.uid !== process.getuid()) || (st.mode & 0o077) !== 0) return undefined;
      return readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

function writeStamp(file: string, identity: string): void {
  const tmp = `${stampOf(file)}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, identity, { mode: 0o600 });
    renameSync(tmp, stampOf(file));
  } catch {
    // A read-only home: the addon is hashed again next time.
    rmSync(tmp, { force: true });
  }
}

function sha256(bytes: Uint8Array): string {
  // Required here, not imported: only the executable hashes, and node:crypto costs bin/vnfm's start-up a few milliseconds.
  const { createHash } = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
  return createHash('sha256').update(bytes).digest('hex');
}

function addonLoadError(file: string, dir: string, cause: unknown): VnfmError {
  const message = (cause as Error)?.message ?? String(cause);
  const mount = noexecMountOf(realpathSync(dir));
  if (mount !== undefined || /failed to map segment|operation not permitted/i.test(message)) {
    return new VnfmError(
      `cannot load the SQLite addon from ${file}: ${mount ? `${mount} is mounted noexec` : 'its filesystem does not allow executable mappings (mounted noexec?)'}`,
      {
        hint: 'set VNFM_HOME to a directory on a filesystem mounted without noexec',
        cause,
      },
    );
  }
  return new VnfmError(`cannot load the SQLite addon from ${file}: ${message}`, {
    hint: 'this executable needs glibc 2.34 or newer (GLIBCXX_3.4.29); on older systems install vnfm with npm instead',
    cause,
  });
}

/** The mount point holding `path` if it is mounted noexec (Linux), else undefined. */
function noexecMountOf(path: string): string | undefined {
  let info: string;
  try {
    info = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return undefined;
  }
  let best: { point: string; noexec: boolean } | undefined;
  for (const line of info.split('\n')) {
    const fields = line.split(' ');
    const point = fields[4]?.replace(/\\040/g, ' ');
    if (!point || !(path === point || path.startsWith(point.endsWith('/') ? point : point + '/'))) continue;
    // Later lines are mounted on top of earlier ones; the longest match is the one in effect.
    if (!best || point.length >= best.point.length) best = { point, noexec: fields[5]?.split(',').includes('noexec') ?? false };
  }
  return best?.noexec ? best.point : undefined;
}
