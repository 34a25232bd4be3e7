/**
 * Onboarded packages: onboarding (validate, then keep the zip under
 * VNFM_HOME: the one copy, read in place, see stored-package.ts), listing,
 * enabling/disabling, deleting, downloading.
 */
import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { constants, createReadStream, createWriteStream, existsSync, type Stats } from 'node:fs';
import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ConflictError, NotFoundError, UsageError, VnfmError } from '../errors.js';
import type { PackageContentRepository, PackageFilter, PackageRepository } from '../store/index.js';
import { checkName } from '../store/names.js';
import type { PackageContentIo, StagedContent } from '../store/transfer.js';
import { atProcessEnd } from '../infra/helm/process-end.js';
import { buildCsar } from './build.js';
import { hashFileOffThread, hashingTap, type HashingTap } from './hashes.js';
import type { Finding } from '../model/package-files.js';
import { formatBytes, type PackageLimits } from './open-package.js';
import type { OperationalState, VnfPackage } from '../model/package.js';
import { PackageError } from './package-error.js';
import { legacyContent, openStoredZip, packageDir, packageZip, packagesDir, removeAbandoned } from './stored-package.js';
import { summarizeVnfd } from './summary.js';
import { validatePackage, type PackageValidation } from './validate.js';

export { packageDir, packageZip, packagesDir } from './stored-package.js';

export interface PackageDeps {
  packages: PackageRepository;
  /**
   * The packages' zips in the shared store (PostgreSQL): onboarding writes
   * them there, and a client without a package's directory fetches it from
   * there. Absent on SQLite, where the directory is the only copy.
   */
  contents?: PackageContentRepository | undefined;
  /** VNFM_HOME: package zips live in `<home>/packages/<id>/package.zip`. */
  home: string;
  now: () => Date;
  onEvent?: (event: { type: 'progress' | 'warning'; message: string }) => void;
}

/** The size of the chunks a zip is written to the shared store in (its reads of the file, one at a time). */
const CONTENT_CHUNK_BYTES = 1024 * 1024;

export interface OnboardOptions {
  path: string;
  name?: string;
  userDefinedData?: Record<string, string>;
  /** Safety limits of the package reader, where the operator raised or lowered them. */
  limits?: Partial<PackageLimits>;
}

export interface OnboardResult {
  pkg: VnfPackage;
  /** Warnings and notes from validation (errors stop onboarding). */
  findings: Finding[];
}

/**
 * Validates the package, then stores its zip and the record. A package with
 * errors is refused with every finding (exit 2); nothing is kept.
 *
 * A zip is read once: the reading that validates its members hands every
 * byte to a thread that hashes the whole file (the checksum), and the
 * kernel copies it into the store meanwhile; a directory is built into a
 * zip once it validated. Its members are not unpacked: they are read from
 * the zip in place.
 */
export async function onboardPackage(deps: PackageDeps, opts: OnboardOptions): Promise<OnboardResult> {
  if (opts.name !== undefined) checkName('package', opts.name);
  if (opts.name && (await deps.packages.find(opts.name))) {
    throw new ConflictError(`a package named "${opts.name}" already exists`, { hint: 'choose another --name' });
  }
  await removeAbandoned(deps.home);
  const id = randomUUID();
  const staging = join(packagesDir(deps.home), `.staging-${process.pid}-${id}`);
  await mkdir(staging, { recursive: true, mode: 0o700 });
  const zip = join(staging, 'package.zip');
  let copying: Promise<{ hash: string; size: number }> | undefined;
  let tap: HashingTap | undefined;
  let kernelCopy: Promise<void> | undefined;
  try {
    deps.onEvent?.({ type: 'progress', message: `validating ${opts.path}` });
    const source = await stat(opts.path).catch(() => undefined);
    if (source?.isFile()) {
      // A zip is read once, by validation, which hands every byte to a thread hashing the whole file;
      // the kernel copies it into the store meanwhile (no bytes through the program), and the copy is
      // kept only if the file did not change while it was read and copied.
      tap = hashingTap();
      kernelCopy = copyFile(opts.path, zip, constants.COPYFILE_EXCL);
      kernelCopy.catch(() => undefined);
    }
    let members: string[] = [];
    const validation = await validatePackage(opts.path, { limits: opts.limits, ...(tap ? { tap } : {}) }, async (files, result) => {
      if (result.vnfd && (await deps.packages.find(result.vnfd.id))) {
        throw new ConflictError(`a package with vnfdId ${result.vnfd.id} is already onboarded`, {
          hint: 'give the new package its own descriptor_id, or delete the old one with: vnfm vnfpkg-delete ' + result.vnfd.id,
        });
      }
      members = files.list();
      if (!tap) {
        deps.onEvent?.({ type: 'progress', message: 'building the package into the store' });
        copying = buildCsar(opts.path, zip).then(() => hashFileOffThread(zip));
        copying.catch(() => undefined);
      }
    });
    if (!validation.valid) throw new PackageError(validation.findings.filter((f) => f.severity === 'error'));
    let copied: { hash: string; size: number };
    if (tap) {
      // The whole file went through the tap before validation returned.
      await kernelCopy;
      copied = await tap.digest();
      await checkUnchanged(opts.path, source!, zip, copied.size);
    } else copied = await copying!;
    const vnfd = validation.vnfd!;
    const now = deps.now().toISOString();
    const pkg: VnfPackage = {
      id,
      ...(opts.name ? { name: opts.name } : {}),
      vnfdId: vnfd.id,
      vnfProvider: vnfd.provider,
      vnfProductName: vnfd.productName,
      vnfSoftwareVersion: vnfd.softwareVersion,
      vnfdVersion: vnfd.descriptorVersion,
      onboardingState: 'ONBOARDED',
      operationalState: 'ENABLED',
      usageState: 'NOT_IN_USE',
      userDefinedData: opts.userDefinedData ?? {},
      checksum: { algorithm: 'SHA-256', hash: copied!.hash },
      sizeBytes: copied!.size,
      summary: summarizeVnfd(vnfd, members, validation.kubernetesDefinitions),
      createdAt: now,
      updatedAt: now,
    };
    const upload = deps.contents && (await uploadContents(deps, id, zip, copied));
    await rename(staging, packageDir(deps.home, id));
    try {
      // On the shared store the record and the complete upload appear together, or neither does.
      if (upload) await upload.finish(() => deps.packages.insert(pkg));
      else await deps.packages.insert(pkg);
    } catch (err) {
      await upload?.abort();
      await rm(packageDir(deps.home, id), { recursive: true, force: true });
      throw err;
    }
    return { pkg, findings: validation.findings };
  } finally {
    // A copy still running (validation failed first) ends before its directory goes.
    await copying?.catch(() => undefined);
    await kernelCopy?.catch(() => undefined);
    await tap?.close();
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * The zip validated and hashed is the zip copied: the file is the same one
 * (device, inode), of the same size, and was not written (its change time,
 * which every write moves and no one can set back) from before it was read
 * until the copy ended; the copy has as many bytes as were hashed.
 */
async function checkUnchanged(path: string, before: Stats, copy: string, hashed: number): Promise<void> {
  const after = await stat(path);
  const copied = (await stat(copy)).size;
  const same =
    after.dev === before.dev &&
    after.ino === before.ino &&
    after.size === before.size &&
    after.mtimeMs === before.mtimeMs &&
    after.ctimeMs === before.ctimeMs &&
    copied === hashed &&
    hashed === before.size;
  if (!same) {
    throw new VnfmError(`${path} changed while it was onboarded (${hashed} bytes hashed, ${copied} copied, ${after.size} now)`, {
      hint: 'onboard it again once nothing writes to it',
    });
  }
}

/**
 * Writes the zip into the shared store chunk by chunk as it is read (never
 * whole in memory), checking that the bytes sent are the bytes hashed.
 * Returns the upload, to be finished with the package's record.
 *
 * Until it is finished or aborted, the upload is removed if the process
 * ends (Ctrl-C, SIGTERM, SIGHUP, an exit): its chunks do not wait an hour
 * for the next onboarding to find them abandoned. Only a process killed
 * outright (SIGKILL, a crash) leaves them to that.
 */
async function uploadContents(
  deps: PackageDeps,
  id: string,
  zip: string,
  expected: { hash: string; size: number },
): Promise<{ finish(withRecord: () => Promise<void>): Promise<void>; abort(): Promise<void> }> {
  const contents = deps.contents!;
  deps.onEvent?.({ type: 'progress', message: `writing the package (${formatBytes(expected.size)}) into the shared store` });
  const upload = await contents.begin(id);
  // `processEnding` is false where the program handles the signal itself and goes on: the upload then ends its own way.
  // Set when the process is ending: the upload writes nothing more (no chunk, no record) while it is removed.
  let ending = false;
  const halted = () => new Promise<never>(() => undefined);
  const release = atProcessEnd((processEnding?: boolean) => {
    if (processEnding === false) return undefined;
    ending = true;
    // A signal waits for the removal; at an exit it may not finish: an upload left so is removed as abandoned (begin).
    return upload.abort();
  });
  const abort = async () => {
    release();
    await upload.abort();
  };
  try {
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of createReadStream(zip, { highWaterMark: CONTENT_CHUNK_BYTES })) {
      if (ending) await halted();
      await upload.write(chunk as Buffer);
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    const sha256 = hash.digest('hex');
    if (sha256 !== expected.hash || size !== expected.size) throw new VnfmError(`${zip} changed while it was written into the shared store`, { hint: 'onboard the package again' });
    return {
      finish: async (withRecord) => {
        if (ending) await halted();
        // Ending meanwhile: the transaction rolls back (its write lock free for the removal), then nothing more.
        const withRecordUnlessEnding = () => (ending ? Promise.reject(new VnfmError('the process is ending')) : withRecord());
        await upload.finish(sha256, size, withRecordUnlessEnding).catch((err: unknown) => (ending ? halted() : Promise.reject(err)));
        release();
      },
      abort,
    };
  } catch (err) {
    await abort();
    throw err;
  }
}

/** Fetches in flight in this process, so that concurrent callers share one. */
const fetching = new Map<string, Promise<void>>();

/**
 * Makes sure the package's zip is at `<home>/packages/<id>/package.zip`: the
 * one function every command that reads a package's files calls first. When
 * it is missing and the shared store holds it (another client onboarded the
 * package), streams it into a temporary file under VNFM_HOME, checks its
 * SHA-256 and renames it into place: another process doing the same at once
 * finds it there and keeps it. A store written when the members were kept
 * unpacked beside the zip loses that second copy here, once; the zip alone
 * is read.
 */
export async function ensurePackageContent(deps: Pick<PackageDeps, 'home' | 'contents'>, pkg: VnfPackage): Promise<void> {
  if (existsSync(packageZip(deps.home, pkg.id))) {
    await dropLegacyContent(deps.home, pkg.id);
    return;
  }
  if (!deps.contents) return;
  const key = `${deps.home}\0${pkg.id}`;
  let running = fetching.get(key);
  if (!running) {
    running = fetchPackage(deps.home, deps.contents, pkg).finally(() => fetching.delete(key));
    fetching.set(key, running);
  }
  await running;
}

async function fetchPackage(home: string, contents: PackageContentRepository, pkg: VnfPackage): Promise<void> {
  const info = await contents.info(pkg.id);
  if (!info?.complete) {
    throw new NotFoundError(`package ${pkg.id}'s files are neither in ${packageDir(home, pkg.id)} nor in the shared store`, {
      hint: 'it was onboarded before the shared store kept package contents, or on SQLite: delete it and onboard it again (vnfm vnfpkg-delete, vnfpkg-onboard)',
    });
  }
  await removeAbandoned(home);
  const staging = join(packagesDir(home), `.staging-${process.pid}-fetch-${randomUUID()}`);
  await mkdir(staging, { recursive: true, mode: 0o700 });
  try {
    const zip = join(staging, 'package.zip');
    const hash = createHash('sha256');
    let size = 0;
    const out = createWriteStream(zip, { flags: 'wx', mode: 0o600 });
    try {
      for await (const chunk of contents.chunks(pkg.id)) {
        hash.update(chunk);
        size += chunk.length;
        if (!out.write(chunk)) await new Promise<void>((ok) => out.once('drain', () => ok()));
      }
    } finally {
      await new Promise<void>((ok, fail) => out.end((err?: Error | null) => (err ? fail(err) : ok())));
    }
    const sha256 = hash.digest('hex');
    if (sha256 !== info.sha256 || size !== info.sizeBytes) {
      throw new VnfmError(
        `package ${pkg.id}'s contents in the shared store do not match their record (SHA-256 ${sha256}, ${size} bytes; recorded ${info.sha256}, ${info.sizeBytes} bytes)`,
        {
          hint: 'delete the package and onboard it again',
        },
      );
    }
    await checkReadable(zip);
    try {
      await rename(staging, packageDir(home, pkg.id));
    } catch (err) {
      // Another process fetched it meanwhile: its copy is the same package.
      if (!['ENOTEMPTY', 'EEXIST'].includes((err as NodeJS.ErrnoException).code ?? '') || !existsSync(packageZip(home, pkg.id))) throw err;
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * The members a store kept unpacked beside the zip before the zip alone was
 * kept: moved aside in one rename (a reader that had it open keeps its
 * files), then removed.
 */
async function dropLegacyContent(home: string, id: string): Promise<void> {
  const content = legacyContent(home, id);
  if (!existsSync(content)) return;
  const aside = join(packagesDir(home), `.staging-${process.pid}-legacy-${randomUUID()}`);
  try {
    await rename(content, aside);
  } catch {
    // Another process moved it first.
    return;
  }
  await rm(aside, { recursive: true, force: true });
}

/**
 * Where store-export reads packages' zips and store-import puts them: the
 * shared store's chunks, or the package directories under VNFM_HOME.
 */
export function packageContentIo(deps: Pick<PackageDeps, 'home' | 'contents'>): PackageContentIo {
  return {
    async read(id) {
      if ((await deps.contents?.info(id))?.complete) return deps.contents!.chunks(id);
      const zip = packageZip(deps.home, id);
      return existsSync(zip) ? createReadStream(zip, { highWaterMark: CONTENT_CHUNK_BYTES }) : undefined;
    },
    stage: async (id) => {
      // The package's directory is made of the id: one that cannot be is refused before anything is staged.
      const dir = packageDir(deps.home, id);
      return deps.contents ? stageInStore(deps.contents, id) : stageInHome(deps.home, dir);
    },
  };
}

/** A zip in an export document that is not the one its record describes: the document is bad (exit 2). */
function mismatch(id: string, got: { hash: string; size: number }, expected: { sha256: string; sizeBytes: number }): UsageError | undefined {
  if (got.hash === expected.sha256 && got.size === expected.sizeBytes) return undefined;
  return new UsageError(
    `package ${id}'s contents in the export do not match its record (SHA-256 ${got.hash}, ${got.size} bytes; recorded ${expected.sha256}, ${expected.sizeBytes} bytes)`,
    {
      hint: 'export the store again; nothing was imported',
    },
  );
}

async function stageInStore(contents: PackageContentRepository, id: string): Promise<StagedContent> {
  const upload = await contents.begin(id);
  const hash = createHash('sha256');
  let size = 0;
  let sum: { hash: string; size: number } | undefined;
  return {
    write: async (chunk) => {
      await upload.write(chunk);
      hash.update(chunk);
      size += chunk.length;
    },
    close: async (expected) => {
      sum = { hash: hash.digest('hex'), size };
      const bad = mismatch(id, sum, expected);
      if (bad) throw bad;
    },
    commit: () => upload.complete(sum!.hash, sum!.size),
    publish: async () => undefined,
    discard: async () => upload.abort(),
  };
}

/**
 * Opens a zip whose hash matched what onboarding recorded (the one
 * onboarding checked, so the reader's size limits are not applied again),
 * to refuse one whose central directory cannot be read before it is kept.
 */
async function checkReadable(zip: string): Promise<void> {
  const files = await openStoredZip(zip);
  await files.close();
}

async function stageInHome(home: string, dir: string): Promise<StagedContent> {
  await removeAbandoned(home);
  const staging = join(packagesDir(home), `.staging-${process.pid}-import-${randomUUID()}`);
  await mkdir(staging, { recursive: true, mode: 0o700 });
  const zip = join(staging, 'package.zip');
  const out = createWriteStream(zip, { flags: 'wx', mode: 0o600 });
  // Held for the next write or close: a failure (a full disk, or a write still pending when a refused import discards the file) is never an uncaught 'error'.
  let failed: Error | undefined;
  out.on('error', (err) => (failed ??= err));
  const hash = createHash('sha256');
  let size = 0;
  return {
    write: async (chunk) => {
      if (failed) throw failed;
      hash.update(chunk);
      size += chunk.length;
      // once() rejects on 'error': a write that fails does not wait for a drain that never comes.
      if (!out.write(chunk)) await once(out, 'drain');
    },
    close: async (expected) => {
      await new Promise<void>((ok, fail) => out.end((err?: Error | null) => (err ? fail(err) : ok())));
      const bad = mismatch(basename(dir), { hash: hash.digest('hex'), size }, expected);
      if (bad) throw bad;
      await checkReadable(zip);
    },
    commit: () => undefined,
    publish: async () => {
      // A directory left by a package of that id deleted from the records only: the imported one replaces it.
      await rm(dir, { recursive: true, force: true });
      await rename(staging, dir);
    },
    discard: async () => {
      out.destroy();
      await rm(staging, { recursive: true, force: true });
    },
  };
}

export async function listPackages(packages: PackageRepository, filter: PackageFilter = {}): Promise<VnfPackage[]> {
  return await packages.list(filter);
}

export async function getPackage(packages: PackageRepository, ref: string): Promise<VnfPackage> {
  return await packages.get(ref);
}

export async function setOperationalState(deps: PackageDeps, ref: string, state: OperationalState): Promise<VnfPackage> {
  const pkg = await deps.packages.get(ref);
  if (pkg.operationalState === state) return pkg;
  return await deps.packages.setStates(pkg.id, { operationalState: state }, deps.now().toISOString());
}

/** Deletes the record (refused while IN_USE) with the zip in the shared store, then the zip under VNFM_HOME. */
export async function deletePackage(deps: PackageDeps, ref: string): Promise<VnfPackage> {
  const pkg = await deps.packages.get(ref);
  // Before anything is deleted: an id that cannot be a package's directory refuses the whole delete.
  const dir = packageDir(deps.home, pkg.id);
  if (deps.contents) await deps.contents.deleteWith(pkg.id, () => deps.packages.delete(pkg.id));
  else await deps.packages.delete(pkg.id);
  await rm(dir, { recursive: true, force: true });
  return pkg;
}

/** Writes the onboarded zip to `outFile` (atomically; an existing file only with `force`). */
export async function downloadPackage(deps: PackageDeps, ref: string, outFile: string, force = false): Promise<VnfPackage> {
  const pkg = await deps.packages.get(ref);
  if (!force && existsSync(outFile)) throw new ConflictError(`${outFile} already exists`, { hint: 'choose another --file, or pass --force to overwrite it' });
  await ensurePackageContent(deps, pkg);
  const tmp = `${outFile}.${process.pid}.tmp`;
  try {
    await copyFile(packageZip(deps.home, pkg.id), tmp);
    await rename(tmp, outFile);
  } catch (err) {
    await rm(tmp, { force: true });
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(packageZip(deps.home, pkg.id))) {
      throw new NotFoundError(`the stored copy of package ${pkg.id} is missing from ${packageDir(deps.home, pkg.id)}`, {
        hint: 'onboard the package again',
      });
    }
    throw err;
  }
  return pkg;
}

/** The VNFD's definitions files of an onboarded package, top file first, read from its zip. */
export async function readVnfdFiles(deps: PackageDeps, ref: string): Promise<{ pkg: VnfPackage; files: { path: string; text: string }[] }> {
  const pkg = await deps.packages.get(ref);
  await ensurePackageContent(deps, pkg);
  const files = await openStoredZip(packageZip(deps.home, pkg.id));
  try {
    const meta = await files.readText('TOSCA-Metadata/TOSCA.meta');
    const entry = /^Entry-Definitions\s*:\s*(\S+)/im.exec(meta)?.[1];
    const defs = files.list().filter((p) => p.startsWith('Definitions/') && /\.ya?ml$/.test(p));
    const ordered = entry ? [entry, ...defs.filter((p) => p !== entry)] : defs;
    const out: { path: string; text: string }[] = [];
    for (const path of ordered) out.push({ path, text: await files.readText(path, files.size(path)) });
    return { pkg, files: out };
  } finally {
    await files.close();
  }
}

export type { PackageValidation };
