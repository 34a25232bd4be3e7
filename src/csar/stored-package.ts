/**
 * An onboarded package as the store keeps it: its zip alone, read in place.
 *
 * The zip is the one copy because it is the package: its SHA-256 is the
 * checksum vnfpkg-show reports, vnfpkg-download returns it byte for byte,
 * the shared store and store-export carry it, and an unpacked tree could
 * not give it back (a rebuilt zip is another file with another hash).
 * Members are read through the zip reader, by the central directory, so
 * what the planners read (the VNFD, definition files, Base HOT) costs no
 * copy at all. What needs a real directory (a package script run in the
 * package, helm reading a chart) gets the members it needs unpacked into a
 * private work directory under VNFM_HOME, removed when the process ends;
 * one left by a process that was killed is removed by the next onboarding
 * or unpacking (its pid is gone).
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream, existsSync, rmSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { echo, VnfmError } from '../errors.js';
import { isUuid } from '../model/ids.js';
import type { PackageFiles } from '../model/package-files.js';
import { openPackage, type OpenedPackage, type PackageLimits } from './open-package.js';

export const packagesDir = (home: string) => join(home, 'packages');

/**
 * A package's directory: the one place a package id becomes a path, for
 * every path of a package (its zip, onboarding, fetching, importing,
 * deleting). The id must be a UUID, as vnfm makes them: one name inside
 * `packages/`, never `..` or a path of its own. A record of another form
 * (a row another client wrote into the shared store) is refused before any
 * file is touched.
 */
export function packageDir(home: string, id: string): string {
  if (!isUuid(id)) {
    throw new VnfmError(`package id ${echo(id)} is not a UUID: refusing to make a path of it (nothing was read, written or removed)`, {
      hint: "vnfm never makes such an id: the record was written by something else; remove it from the store's vnf_packages table by hand",
    });
  }
  return join(packagesDir(home), id);
}
/** The package as onboarded (a zip): the one copy the store keeps, what vnfpkg-download returns. */
export const packageZip = (home: string, id: string) => join(packageDir(home, id), 'package.zip');
/** Where stores written before the zip alone was kept also hold its members unpacked (removed on first use). */
export const legacyContent = (home: string, id: string) => join(packageDir(home, id), 'content');

const unlimited = Number.MAX_SAFE_INTEGER;
/**
 * A stored zip was held to the limits when it was onboarded (perhaps raised
 * for it then): reading it again applies none.
 */
export const STORED_LIMITS: Partial<PackageLimits> = { maxMembers: unlimited, maxMemberBytes: unlimited, maxTotalBytes: unlimited, maxRatio: unlimited };

/** Opens a stored package's zip for reading its members in place. */
export function openStoredZip(zip: string): Promise<OpenedPackage> {
  return openPackage(zip, STORED_LIMITS);
}

/**
 * Unpacks `paths` (all members when absent) into `into`, through `budget`
 * when given (a transform that stops at a byte limit).
 */
export async function unpackMembers(files: PackageFiles, into: string, paths: readonly string[] = files.list(), budget?: () => Transform): Promise<void> {
  for (const member of paths) {
    const target = join(into, member);
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    const out = createWriteStream(target, { flags: 'wx', mode: 0o600 });
    if (budget) await pipeline(await files.stream(member), budget(), out);
    else await pipeline(await files.stream(member), out);
  }
}

/** Whether `member` is `prefix` itself or lies under it ('' takes every member). */
export function underPrefix(member: string, prefix: string): boolean {
  if (prefix === '') return true;
  const p = prefix.replace(/\/+$/, '');
  return member === p || member.startsWith(`${p}/`);
}

/** Work directories of this process, by zip and prefix, removed when it exits. */
const workDirs = new Map<string, Promise<string>>();
let cleanupRegistered = false;

function removeWorkDirsNow(): void {
  for (const dir of created) rmSync(dir, { recursive: true, force: true });
  created.clear();
  workDirs.clear();
}
const created = new Set<string>();

/**
 * The members of a stored zip under `prefix` ('' for all), unpacked once per
 * process into a private directory that keeps the package's layout (a member
 * `p` is at `join(dir, p)`). The directory is removed when the process exits
 * (or by `releaseWorkDirs`).
 */
export function unpackedWorkDir(home: string, zip: string, prefix = ''): Promise<string> {
  const key = `${zip}\0${prefix}`;
  let made = workDirs.get(key);
  if (!made) {
    made = makeWorkDir(home, zip, prefix);
    made.catch(() => workDirs.delete(key));
    workDirs.set(key, made);
  }
  return made;
}

async function makeWorkDir(home: string, zip: string, prefix: string): Promise<string> {
  if (!cleanupRegistered) {
    cleanupRegistered = true;
    process.once('exit', removeWorkDirsNow);
  }
  await removeAbandoned(home);
  // Named after the package (its zip's directory) for whoever looks while the command runs.
  const dir = join(packagesDir(home), `.work-${process.pid}-${basename(dirname(zip))}-${randomUUID().slice(0, 8)}`);
  created.add(dir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  try {
    const files = await openStoredZip(zip);
    try {
      await unpackMembers(
        files,
        dir,
        files.list().filter((m) => underPrefix(m, prefix)),
      );
    } finally {
      await files.close();
    }
    return dir;
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    created.delete(dir);
    throw err;
  }
}

/** Removes this process's work directories now (an operation is over; tests). */
export async function releaseWorkDirs(): Promise<void> {
  const dirs = [...created];
  created.clear();
  workDirs.clear();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
}

/** Staging and work directories of processes that died (their pid is gone). */
export async function removeAbandoned(home: string): Promise<void> {
  const dir = packagesDir(home);
  if (!existsSync(dir)) return;
  for (const name of await readdir(dir)) {
    const m = /^\.(?:staging|work)-(\d+)-/.exec(name);
    if (m && !isAlive(Number(m[1]))) await rm(join(dir, name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
