/**
 * VNF instances and occurrences outside of running operations: creating,
 * listing, showing and deleting instances; listing, showing and failing
 * occurrences.
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, UsageError } from '../errors.js';
import { assertFailedTemp, assertInstanceFree, sweepStaleLock, type LcmDeps } from './engine.js';
import type { LcmOpOcc, LcmOperationState, VnfInstance } from './model.js';

export interface CreateVnfOptions {
  /** The package: by vnfdId, package id or package name. */
  vnfdId?: string;
  package?: string;
  name?: string;
  description?: string;
}

/** Creates a NOT_INSTANTIATED instance of an onboarded, enabled package; the package becomes IN_USE. */
export function createVnf(deps: LcmDeps, opts: CreateVnfOptions): VnfInstance {
  const ref = opts.vnfdId ?? opts.package;
  if (!ref || (opts.vnfdId && opts.package)) {
    throw new UsageError('name the package with either --vnfd-id or --package', { hint: 'vnfm vnf-create --vnfd-id VNFD_ID [--name NAME]' });
  }
  const pkg = deps.store.packages.get(ref);
  if (opts.vnfdId && pkg.vnfdId !== opts.vnfdId) {
    throw new UsageError(`"${opts.vnfdId}" is not a vnfdId (it names package ${pkg.id}, vnfdId ${pkg.vnfdId})`, { hint: `use --package ${opts.vnfdId}, or --vnfd-id ${pkg.vnfdId}` });
  }
  if (pkg.onboardingState !== 'ONBOARDED') {
    throw new ConflictError(`package ${pkg.id} is ${pkg.onboardingState}, not ONBOARDED`, { hint: 'onboard it again with vnfm vnfpkg-onboard' });
  }
  if (pkg.operationalState !== 'ENABLED') {
    throw new ConflictError(`package ${pkg.id} is DISABLED`, { hint: `enable it: vnfm vnfpkg-update ${pkg.id} --operational-state ENABLED` });
  }
  if (opts.name !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(opts.name)) {
    throw new UsageError(`"${opts.name}" is not a usable instance name`, { hint: 'use letters, digits, ".", "_" and "-" (at most 128)' });
  }
  if (opts.name && deps.store.instances.find(opts.name)) {
    throw new ConflictError(`a VNF instance named "${opts.name}" already exists`, { hint: 'choose another --name' });
  }
  const now = deps.now().toISOString();
  const instance: VnfInstance = {
    id: randomUUID(),
    ...(opts.name ? { vnfInstanceName: opts.name } : {}),
    vnfInstanceDescription: opts.description ?? '',
    vnfdId: pkg.vnfdId,
    vnfPkgId: pkg.id,
    vnfProvider: pkg.vnfProvider,
    vnfProductName: pkg.vnfProductName,
    vnfSoftwareVersion: pkg.vnfSoftwareVersion,
    vnfdVersion: pkg.vnfdVersion,
    instantiationState: 'NOT_INSTANTIATED',
    createdAt: now,
    updatedAt: now,
  };
  deps.store.instances.insert(instance);
  return instance;
}

export function listVnfs(deps: LcmDeps): VnfInstance[] {
  return deps.store.instances.list();
}

export function getVnf(deps: LcmDeps, ref: string): VnfInstance {
  return deps.store.instances.get(ref);
}

/** Resolves every reference first, so one unknown name deletes nothing. */
export function resolveVnfs(deps: LcmDeps, refs: string[]): VnfInstance[] {
  if (refs.length === 0) throw new UsageError('name at least one VNF instance', { hint: 'vnfm vnf-delete VNF [VNF...]' });
  const found = refs.map((r) => deps.store.instances.get(r));
  return [...new Map(found.map((i) => [i.id, i])).values()];
}

/**
 * Deletes NOT_INSTANTIATED instances with no operation running or waiting in
 * FAILED_TEMP (it may have left resources at the VIM); their occurrences go
 * with them, and a package with no instance left becomes NOT_IN_USE.
 */
export function deleteVnfs(deps: LcmDeps, targets: VnfInstance[]): VnfInstance[] {
  for (const i of targets) {
    const current = deps.store.instances.get(i.id);
    if (current.instantiationState !== 'NOT_INSTANTIATED') {
      throw new ConflictError(`vnf instance ${i.id} is INSTANTIATED`, { hint: `terminate it first: vnfm vnf-terminate ${i.id}` });
    }
  }
  for (const i of targets) {
    sweepStaleLock(deps, i.id);
    deps.store.opOccs.exclusive(() => {
      assertInstanceFree(deps, i.id);
      deps.store.instances.delete(i.id, deps.now().toISOString());
    });
  }
  return targets;
}

export interface OpOccFilter {
  /** An instance id or name. */
  vnf?: string;
  state?: LcmOperationState;
}

/** Occurrences, oldest first; those left running by a dead process are listed as what they are now: FAILED_TEMP. */
export function listOpOccs(deps: LcmDeps, filter: OpOccFilter = {}): LcmOpOcc[] {
  const vnfInstanceId = filter.vnf ? deps.store.instances.get(filter.vnf).id : undefined;
  for (const id of deps.store.opOccs.lockedInstances()) sweepStaleLock(deps, id);
  return deps.store.opOccs.list({ ...(vnfInstanceId ? { vnfInstanceId } : {}), ...(filter.state ? { state: filter.state } : {}) });
}

/** An occurrence; one left running by a dead process is shown as what it is now: FAILED_TEMP. */
export function getOpOcc(deps: LcmDeps, ref: string): LcmOpOcc {
  const op = deps.store.opOccs.get(ref);
  sweepStaleLock(deps, op.vnfInstanceId);
  return deps.store.opOccs.get(op.id);
}

/** Gives up on a FAILED_TEMP occurrence: FAILED, and the instance is free again (as it is). */
export function failOpOcc(deps: LcmDeps, ref: string): LcmOpOcc {
  const first = deps.store.opOccs.get(ref);
  sweepStaleLock(deps, first.vnfInstanceId);
  const ops = deps.store.opOccs;
  return ops.exclusive(() => {
    const op = ops.get(first.id);
    assertFailedTemp(op, 'failed');
    return ops.setState(op.id, 'FAILED', deps.now().toISOString(), { pid: null });
  });
}

/** Deletes one NOT_INSTANTIATED instance (see deleteVnfs). */
export function deleteVnf(deps: LcmDeps, ref: string): VnfInstance {
  return deleteVnfs(deps, [deps.store.instances.get(ref)])[0]!;
}
