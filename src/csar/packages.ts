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
import { echo, ConflictError, NotFoundError, UsageError } from '../errors.js';
import type { PackageFilter, PackageRepository } from '../store/index.js';
import { buildCsar } from './build.js';
import type { Finding, PackageFiles } from '../model/package-files.js';
import { DEFAULT_LIMITS, formatBytes, LIMIT_FLAGS, type PackageLimits } from './open-package.js';
import type { OperationalState, VnfPackage } from '../model/package.js';
import { PackageError } from './package-error.js';
import { summarizeVnfd } from './summary.js';
import { validatePackage, type PackageValidation } from './validate.js';

export interface PackageDeps {
  packages: PackageRepository;
  /** VNFM_HOME: package copies live in `<home>/packages/<id>/`. */
  home: string;
  now: () => Date;
  onEvent?: (event: { type: 'progress' | 'warning'; message: string }) => void;
}

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
    await rename(staging, packageDir(deps.home, id));
    try {
      deps.packages.insert(pkg);
    } catch (err) {
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
  const content = join(staging, 'content');
  const budget = unpackBudget(origin, maxBytes);
  for (const member of files.list()) {
    const target = join(content, member);
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    await pipeline(await files.stream(member), budget(), createWriteStream(target, { flags: 'wx', mode: 0o600 }));
  }
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(zip)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { hash: hash.digest('hex'), size };
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

/** Deletes the record (refused while IN_USE), then the private copy. */
export async function deletePackage(deps: PackageDeps, ref: string): Promise<VnfPackage> {
  const pkg = deps.packages.get(ref);
  deps.packages.delete(pkg.id);
  await rm(packageDir(deps.home, pkg.id), { recursive: true, force: true });
  return pkg;
}

/** Writes the onboarded zip to `outFile` (atomically; an existing file only with `force`). */
export async function downloadPackage(deps: PackageDeps, ref: string, outFile: string, force = false): Promise<VnfPackage> {
  const pkg = deps.packages.get(ref);
  if (!force && existsSync(outFile)) throw new ConflictError(`${outFile} already exists`, { hint: 'choose another --file, or pass --force to overwrite it' });
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
  const content = packageContent(deps.home, pkg.id);
  const meta = await readFile(join(content, 'TOSCA-Metadata', 'TOSCA.meta'), 'utf8');
  const entry = /^Entry-Definitions\s*:\s*(\S+)/im.exec(meta)?.[1];
  const defs = (await listContent(content)).filter((p) => p.startsWith('Definitions/') && /\.ya?ml$/.test(p));
  const ordered = entry ? [entry, ...defs.filter((p) => p !== entry)] : defs;
  return { pkg, files: await Promise.all(ordered.map(async (path) => ({ path, text: await readFile(join(content, path), 'utf8') }))) };
}

export type { PackageValidation };
