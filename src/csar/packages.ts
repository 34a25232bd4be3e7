/**
 * Onboarded packages: onboarding (validate, then keep a private copy under
 * VNFM_HOME), listing, enabling/disabling, deleting, downloading.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { echo, ConflictError, NotFoundError, UsageError, VnfmError } from '../errors.js';
import type { PackageContentRepository, PackageFilter, PackageRepository } from '../store/index.js';
import type { PackageContentIo, StagedContent } from '../store/transfer.js';
import { buildCsar } from './build.js';
import type { Finding, PackageFiles } from '../model/package-files.js';
import { DEFAULT_LIMITS, formatBytes, LIMIT_FLAGS, openPackage, type PackageLimits } from './open-package.js';
import type { OperationalState, VnfPackage } from '../model/package.js';
import { PackageError } from './package-error.js';
import { summarizeVnfd } from './summary.js';
import { validatePackage, type PackageValidation } from './validate.js';

export interface PackageDeps {
  packages: PackageRepository;
  /**
   * The packages' zips in the shared store (PostgreSQL): onboarding writes
   * them there, and a client without a package's directory fetches it from
   * there. Absent on SQLite, where the directory is the only copy.
   */
  contents?: PackageContentRepository | undefined;
  /** VNFM_HOME: package copies live in `<home>/packages/<id>/`. */
  home: string;
  now: () => Date;
  onEvent?: (event: { type: 'progress' | 'warning'; message: string }) => void;
}

/** The size of the chunks a zip is written to the shared store in (its reads of the file, one at a time). */
const CONTENT_CHUNK_BYTES = 1024 * 1024;

export const packagesDir = (home: string) => join(home, 'packages');
export const packageDir = (home: string, id: string) => join(packagesDir(home), id);
/** The package as onboarded (a zip), what vnfpkg-download returns. */
export const packageZip = (home: string, id: string) => join(packageDir(home, id), 'package.zip');
/** Its members, unpacked, for the drivers. */
export const packageContent = (home: string, id: string) => join(packageDir(home, id), 'content');

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
 * Validates the package, then stores a private copy and the record. A package
 * with errors is refused with every finding (exit 2); nothing is kept.
 */
export async function onboardPackage(deps: PackageDeps, opts: OnboardOptions): Promise<OnboardResult> {
  if (opts.name !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(opts.name)) {
    throw new UsageError(`${echo(opts.name)} is not a usable package name`, { hint: 'use letters, digits, ".", "_" and "-" (at most 128)' });
  }
  if (opts.name && deps.packages.find(opts.name)) {
    throw new ConflictError(`a package named "${opts.name}" already exists`, { hint: 'choose another --name' });
  }
  await removeAbandonedStaging(deps.home);
  const id = randomUUID();
  const staging = join(packagesDir(deps.home), `.staging-${process.pid}-${id}`);
  await mkdir(staging, { recursive: true, mode: 0o700 });
  try {
    deps.onEvent?.({ type: 'progress', message: `validating ${opts.path}` });
    let copied: { hash: string; size: number } | undefined;
    const validation = await validatePackage(opts.path, { limits: opts.limits }, async (files, result) => {
      if (result.vnfd && deps.packages.find(result.vnfd.id)) {
        throw new ConflictError(`a package with vnfdId ${result.vnfd.id} is already onboarded`, {
          hint: 'give the new package its own descriptor_id, or delete the old one with: vnfm vnfpkg-delete ' + result.vnfd.id,
        });
      }
      deps.onEvent?.({ type: 'progress', message: 'copying the package into the store' });
      copied = await keepCopy(opts.path, files, staging, { ...DEFAULT_LIMITS, ...opts.limits }.maxTotalBytes);
    });
    if (!validation.valid) throw new PackageError(validation.findings.filter((f) => f.severity === 'error'));
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
      summary: summarizeVnfd(vnfd, await listContent(join(staging, 'content')), validation.kubernetesDefinitions),
      createdAt: now,
      updatedAt: now,
    };
    const upload = deps.contents && (await uploadContents(deps, id, join(staging, 'package.zip'), copied!));
    await rename(staging, packageDir(deps.home, id));
    try {
      // On the shared store the record and the complete upload appear together, or neither does.
      if (upload) upload.finish(() => deps.packages.insert(pkg));
      else deps.packages.insert(pkg);
    } catch (err) {
      upload?.abort();
      await rm(packageDir(deps.home, id), { recursive: true, force: true });
      throw err;
    }
    return { pkg, findings: validation.findings };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Copies the package (a zip as it is; a directory built into one) and unpacks
 * its members, stopping at `maxBytes` unpacked in all.
 */
async function keepCopy(origin: string, files: PackageFiles, staging: string, maxBytes: number): Promise<{ hash: string; size: number }> {
  const zip = join(staging, 'package.zip');
  if ((await stat(origin)).isDirectory()) await buildCsar(origin, zip);
  else await copyFile(origin, zip);
  await unpackMembers(files, join(staging, 'content'), origin, maxBytes);
  return hashFile(zip);
}

async function unpackMembers(files: PackageFiles, content: string, origin: string, maxBytes: number): Promise<void> {
  const budget = unpackBudget(origin, maxBytes);
  for (const member of files.list()) {
    const target = join(content, member);
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    await pipeline(await files.stream(member), budget(), createWriteStream(target, { flags: 'wx', mode: 0o600 }));
  }
}

async function hashFile(file: string): Promise<{ hash: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { hash: hash.digest('hex'), size };
}

/**
 * Writes the zip into the shared store chunk by chunk as it is read (never
 * whole in memory), checking that the bytes sent are the bytes hashed.
 * Returns the upload, to be finished with the package's record.
 */
async function uploadContents(
  deps: PackageDeps,
  id: string,
  zip: string,
  expected: { hash: string; size: number },
): Promise<{ finish(withRecord: () => void): void; abort(): void }> {
  const contents = deps.contents!;
  deps.onEvent?.({ type: 'progress', message: `writing the package (${formatBytes(expected.size)}) into the shared store` });
  const upload = contents.begin(id);
  try {
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of createReadStream(zip, { highWaterMark: CONTENT_CHUNK_BYTES })) {
      upload.write(chunk as Buffer);
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    const sha256 = hash.digest('hex');
    if (sha256 !== expected.hash || size !== expected.size) throw new VnfmError(`${zip} changed while it was written into the shared store`, { hint: 'onboard the package again' });
    return { finish: (withRecord) => upload.finish(sha256, size, withRecord), abort: () => upload.abort() };
  } catch (err) {
    upload.abort();
    throw err;
  }
}

/** Fetches in flight in this process, so that concurrent callers share one. */
const fetching = new Map<string, Promise<void>>();

/**
 * Makes sure the package's files are under `<home>/packages/<id>/`: the one
 * function every command that reads a package's files calls first. When the
 * directory is missing and the shared store holds the package's zip (another
 * client onboarded it), streams the zip into a temporary file under
 * VNFM_HOME, checks its SHA-256, unpacks it as onboarding does and renames
 * the result into place: another process doing the same at once finds the
 * directory there and keeps it. On SQLite (no `contents`) it does nothing.
 */
export async function ensurePackageContent(deps: Pick<PackageDeps, 'home' | 'contents'>, pkg: VnfPackage): Promise<void> {
  if (!deps.contents || existsSync(packageContent(deps.home, pkg.id))) return;
  const key = `${deps.home}\0${pkg.id}`;
  let running = fetching.get(key);
  if (!running) {
    running = fetchPackage(deps.home, deps.contents, pkg).finally(() => fetching.delete(key));
    fetching.set(key, running);
  }
  await running;
}

async function fetchPackage(home: string, contents: PackageContentRepository, pkg: VnfPackage): Promise<void> {
  const info = contents.info(pkg.id);
  if (!info?.complete) {
    throw new NotFoundError(`package ${pkg.id}'s files are neither in ${packageDir(home, pkg.id)} nor in the shared store`, {
      hint: 'it was onboarded before the shared store kept package contents, or on SQLite: delete it and onboard it again (vnfm vnfpkg-delete, vnfpkg-onboard)',
    });
  }
  await removeAbandonedStaging(home);
  const staging = join(packagesDir(home), `.staging-${process.pid}-fetch-${randomUUID()}`);
  await mkdir(staging, { recursive: true, mode: 0o700 });
  try {
    const zip = join(staging, 'package.zip');
    const hash = createHash('sha256');
    let size = 0;
    const out = createWriteStream(zip, { flags: 'wx', mode: 0o600 });
    try {
      for (const chunk of contents.chunks(pkg.id)) {
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
    await unpackChecked(zip, join(staging, 'content'));
    try {
      await rename(staging, packageDir(home, pkg.id));
    } catch (err) {
      // Another process fetched it meanwhile: its copy is the same package.
      if (!['ENOTEMPTY', 'EEXIST'].includes((err as NodeJS.ErrnoException).code ?? '') || !existsSync(packageContent(home, pkg.id))) throw err;
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * One counter shared by every member's copy. The reader already holds each
 * member to the size its central directory declares, and the declared total
 * to the limit; this holds the bytes actually written to it as well, whatever
 * a member stream yields.
 */
function unpackBudget(origin: string, maxBytes: number): () => Transform {
  let written = 0;
  return () =>
    new Transform({
      transform(chunk: Buffer, _enc, cb) {
        written += chunk.length;
        if (written > maxBytes) {
          cb(
            new PackageError({
              severity: 'error',
              code: 'package-too-large',
              file: origin,
              message: `${origin}: unpacking stopped at the limit of ${formatBytes(maxBytes)}`,
              hint: `split the package, or raise the limit if it is genuine: ${LIMIT_FLAGS.maxTotalBytes} SIZE`,
            }),
          );
          return;
        }
        cb(null, chunk);
      },
    });
}

async function listContent(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await listContent(join(dir, entry.name), rel)));
    else out.push(rel);
  }
  return out.sort();
}

/** Staging directories of onboardings whose process died (their pid is gone). */
async function removeAbandonedStaging(home: string): Promise<void> {
  const dir = packagesDir(home);
  if (!existsSync(dir)) return;
  for (const name of await readdir(dir)) {
    const m = /^\.staging-(\d+)-/.exec(name);
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

/**
 * Where store-export reads packages' zips and store-import puts them: the
 * shared store's chunks, or the package directories under VNFM_HOME.
 */
export function packageContentIo(deps: Pick<PackageDeps, 'home' | 'contents'>): PackageContentIo {
  return {
    read(id) {
      if (deps.contents?.info(id)?.complete) {
        const chunks = deps.contents.chunks(id);
        return (async function* () {
          yield* chunks;
        })();
      }
      const zip = packageZip(deps.home, id);
      return existsSync(zip) ? createReadStream(zip, { highWaterMark: CONTENT_CHUNK_BYTES }) : undefined;
    },
    stage: (id) => (deps.contents ? stageInStore(deps.contents, id) : stageInHome(deps.home, id)),
  };
}

function mismatch(id: string, got: { hash: string; size: number }, expected: { sha256: string; sizeBytes: number }): VnfmError | undefined {
  if (got.hash === expected.sha256 && got.size === expected.sizeBytes) return undefined;
  return new VnfmError(
    `package ${id}'s contents in the export do not match its record (SHA-256 ${got.hash}, ${got.size} bytes; recorded ${expected.sha256}, ${expected.sizeBytes} bytes)`,
    {
      hint: 'export the store again; nothing was imported',
    },
  );
}

async function stageInStore(contents: PackageContentRepository, id: string): Promise<StagedContent> {
  const upload = contents.begin(id);
  const hash = createHash('sha256');
  let size = 0;
  let sum: { hash: string; size: number } | undefined;
  return {
    write: async (chunk) => {
      upload.write(chunk);
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
 * Unpacks a zip whose hash matched what onboarding recorded: the one
 * onboarding checked, so the reader's size limits (met then, perhaps raised)
 * are not applied again.
 */
async function unpackChecked(zip: string, into: string): Promise<void> {
  const unlimited = Number.MAX_SAFE_INTEGER;
  const files = await openPackage(zip, { maxMembers: unlimited, maxMemberBytes: unlimited, maxTotalBytes: unlimited, maxRatio: unlimited });
  try {
    await unpackMembers(files, into, zip, unlimited);
  } finally {
    await files.close();
  }
}

async function stageInHome(home: string, id: string): Promise<StagedContent> {
  await removeAbandonedStaging(home);
  const staging = join(packagesDir(home), `.staging-${process.pid}-import-${randomUUID()}`);
  await mkdir(staging, { recursive: true, mode: 0o700 });
  const zip = join(staging, 'package.zip');
  const out = createWriteStream(zip, { flags: 'wx', mode: 0o600 });
  const hash = createHash('sha256');
  let size = 0;
  return {
    write: async (chunk) => {
      hash.update(chunk);
      size += chunk.length;
      if (!out.write(chunk)) await new Promise<void>((ok) => out.once('drain', () => ok()));
    },
    close: async (expected) => {
      await new Promise<void>((ok, fail) => out.end((err?: Error | null) => (err ? fail(err) : ok())));
      const bad = mismatch(id, { hash: hash.digest('hex'), size }, expected);
      if (bad) throw bad;
      await unpackChecked(zip, join(staging, 'content'));
    },
    commit: () => undefined,
    publish: async () => {
      // A directory left by a package of that id deleted from the records only: the imported one replaces it.
      await rm(packageDir(home, id), { recursive: true, force: true });
      await rename(staging, packageDir(home, id));
    },
    discard: async () => {
      out.destroy();
      await rm(staging, { recursive: true, force: true });
    },
  };
}

export function listPackages(packages: PackageRepository, filter: PackageFilter = {}): VnfPackage[] {
  return packages.list(filter);
}

export function getPackage(packages: PackageRepository, ref: string): VnfPackage {
  return packages.get(ref);
}

export function setOperationalState(deps: PackageDeps, ref: string, state: OperationalState): VnfPackage {
  const pkg = deps.packages.get(ref);
  if (pkg.operationalState === state) return pkg;
  return deps.packages.setStates(pkg.id, { operationalState: state }, deps.now().toISOString());
}

/** Deletes the record (refused while IN_USE) with the zip in the shared store, then the private copy. */
export async function deletePackage(deps: PackageDeps, ref: string): Promise<VnfPackage> {
  const pkg = deps.packages.get(ref);
  if (deps.contents) deps.contents.deleteWith(pkg.id, () => deps.packages.delete(pkg.id));
  else deps.packages.delete(pkg.id);
  await rm(packageDir(deps.home, pkg.id), { recursive: true, force: true });
  return pkg;
}

/** Writes the onboarded zip to `outFile` (atomically; an existing file only with `force`). */
export async function downloadPackage(deps: PackageDeps, ref: string, outFile: string, force = false): Promise<VnfPackage> {
  const pkg = deps.packages.get(ref);
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

/** The VNFD's definitions files of an onboarded package, top file first. */
export async function readVnfdFiles(deps: PackageDeps, ref: string): Promise<{ pkg: VnfPackage; files: { path: string; text: string }[] }> {
  const pkg = deps.packages.get(ref);
  await ensurePackageContent(deps, pkg);
  const content = packageContent(deps.home, pkg.id);
  const meta = await readFile(join(content, 'TOSCA-Metadata', 'TOSCA.meta'), 'utf8');
  const entry = /^Entry-Definitions\s*:\s*(\S+)/im.exec(meta)?.[1];
  const defs = (await listContent(content)).filter((p) => p.startsWith('Definitions/') && /\.ya?ml$/.test(p));
  const ordered = entry ? [entry, ...defs.filter((p) => p !== entry)] : defs;
  return { pkg, files: await Promise.all(ordered.map(async (path) => ({ path, text: await readFile(join(content, path), 'utf8') }))) };
}

export type { PackageValidation };
