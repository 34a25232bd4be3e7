/**
 * VNF instances and occurrences outside of running operations: creating,
 * listing, showing and deleting instances; listing, showing and failing
 * occurrences.
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, UsageError } from '../errors.js';
import { assertFailedTemp, assertInstanceFree, describeHolder, lockStatus, sweepStaleLock, type LcmDeps } from './engine.js';
import type { HolderStatus } from './lock-holder.js';
import type { VnfLock } from '../store/index.js';
import { collect } from '../store/db.js';
import { checkName } from '../store/names.js';
import type { ListRead } from '../store/vnf-instance-repository.js';
import type { LcmOpOcc, LcmOperationState, VnfInstance } from '../model/lcm.js';
import { packageIdentity } from '../model/package.js';

export interface CreateVnfOptions {
  /** The package: by vnfdId, package id or package name. */
  vnfdId?: string;
  package?: string;
  name?: string;
  description?: string;
}

/** Creates a NOT_INSTANTIATED instance of an onboarded, enabled package; the package becomes IN_USE. */
export async function createVnf(deps: LcmDeps, opts: CreateVnfOptions): Promise<VnfInstance> {
  const instance = await draftVnf(deps, opts);
  // Its name checked again under the write lock: another client may have taken it since.
  await deps.store.instances.insert(instance, { checkName: true });
  return instance;
}

/**
 * The instance createVnf would create, checked but not recorded: what an
 * operation's request can be checked against before the instance exists.
 */
export async function draftVnf(deps: LcmDeps, opts: CreateVnfOptions): Promise<VnfInstance> {
  const ref = opts.vnfdId ?? opts.package;
  if (!ref || (opts.vnfdId && opts.package)) {
    throw new UsageError('name the package with either --vnfd-id or --package', { hint: 'vnfm vnf-create VNFD_ID [--name NAME], or vnfm vnf-create --package PACKAGE' });
  }
  const pkg = await deps.store.packages.get(ref);
  if (opts.vnfdId && pkg.vnfdId !== opts.vnfdId) {
    throw new UsageError(`"${opts.vnfdId}" is not a vnfdId (it names package ${pkg.id}, vnfdId ${pkg.vnfdId})`, {
      hint: `use --package ${opts.vnfdId}, or --vnfd-id ${pkg.vnfdId}`,
    });
  }
  if (pkg.onboardingState !== 'ONBOARDED') {
    throw new ConflictError(`package ${pkg.id} is ${pkg.onboardingState}, not ONBOARDED`, { hint: 'onboard it again with vnfm vnfpkg-onboard' });
  }
  if (pkg.operationalState !== 'ENABLED') {
    throw new ConflictError(`package ${pkg.id} is DISABLED`, { hint: `enable it: vnfm vnfpkg-update ${pkg.id} --operational-state ENABLED` });
  }
  if (opts.name !== undefined) {
    checkName('instance', opts.name);
    await deps.store.instances.assertNameFree(opts.name);
  }
  const now = deps.now().toISOString();
  const instance: VnfInstance = {
    id: randomUUID(),
    ...(opts.name ? { vnfInstanceName: opts.name } : {}),
    vnfInstanceDescription: opts.description ?? '',
    ...packageIdentity(pkg),
    instantiationState: 'NOT_INSTANTIATED',
    createdAt: now,
    updatedAt: now,
  };
  return instance;
}

/** What vnf-list narrows to: the VIM and the package by id or name (an unregistered VIM id, as given inline, also works); a name may hold `*`. */
export interface VnfFilter {
  state?: VnfInstance['instantiationState'];
  vim?: string;
  package?: string;
  name?: string;
}

export async function listVnfs(deps: LcmDeps, filter: VnfFilter = {}): Promise<VnfInstance[]> {
  return collect(await readVnfs(deps, filter));
}

/**
 * The instances read page by page as they are iterated; `how.summary`: only
 * what a table shows (VnfInstanceRepository.read). The references in the
 * filter are resolved at once, so an unknown package fails here.
 */
export async function readVnfs(deps: LcmDeps, filter: VnfFilter = {}, how: ListRead = {}): Promise<AsyncIterable<VnfInstance>> {
  return deps.store.instances.read(
    {
      ...(filter.state ? { state: filter.state } : {}),
      ...(filter.vim ? { vimId: (await deps.store.vims.find(filter.vim))?.id ?? filter.vim } : {}),
      ...(filter.package ? { vnfPkgId: (await deps.store.packages.get(filter.package)).id } : {}),
      ...(filter.name ? { name: filter.name } : {}),
    },
    how,
  );
}

export async function getVnf(deps: LcmDeps, ref: string): Promise<VnfInstance> {
  return await deps.store.instances.get(ref);
}

/** Resolves every reference first, so one unknown name deletes nothing. */
export async function resolveVnfs(deps: LcmDeps, refs: string[]): Promise<VnfInstance[]> {
  if (refs.length === 0) throw new UsageError('name at least one VNF instance', { hint: 'vnfm vnf-delete VNF [VNF...]' });
  const found: VnfInstance[] = [];
  for (const r of refs) found.push(await deps.store.instances.get(r));
  return [...new Map(found.map((i) => [i.id, i])).values()];
}

/**
 * Deletes NOT_INSTANTIATED instances with no operation running or waiting in
 * FAILED_TEMP (it may have left resources at the VIM); their occurrences go
 * with them, and a package with no instance left becomes NOT_IN_USE.
 */
export async function deleteVnfs(deps: LcmDeps, targets: VnfInstance[]): Promise<VnfInstance[]> {
  for (const i of targets) {
    const current = await deps.store.instances.get(i.id);
    if (current.instantiationState !== 'NOT_INSTANTIATED') {
      throw new ConflictError(`vnf instance ${i.id} is INSTANTIATED`, { hint: `terminate it first: vnfm vnf-terminate ${i.id}` });
    }
  }
  for (const i of targets) {
    await sweepStaleLock(deps, i.id);
    await deps.store.opOccs.exclusive(async () => {
      await assertInstanceFree(deps, i.id);
      await deps.store.instances.delete(i.id, deps.now().toISOString());
    });
  }
  return targets;
}

export interface OpOccFilter {
  /** An instance id or name. */
  vnf?: string;
  state?: LcmOperationState;
  operation?: string;
  /** Started at or after / before these times (ISO 8601, UTC). */
  since?: string;
  until?: string;
}

/** Occurrences, oldest first; those left running by a dead process are listed as what they are now: FAILED_TEMP. */
export async function listOpOccs(deps: LcmDeps, filter: OpOccFilter = {}): Promise<LcmOpOcc[]> {
  return collect(await readOpOccs(deps, filter));
}

/** The occurrences read page by page as they are iterated; `how.summary`: only what a table shows (LcmOpOccRepository.read). */
export async function readOpOccs(deps: LcmDeps, filter: OpOccFilter = {}, how: ListRead = {}): Promise<AsyncIterable<LcmOpOcc>> {
  const vnfInstanceId = filter.vnf ? (await deps.store.instances.get(filter.vnf)).id : undefined;
  for (const id of await deps.store.opOccs.lockedInstances()) await sweepStaleLock(deps, id);
  return deps.store.opOccs.read(
    {
      ...(vnfInstanceId ? { vnfInstanceId } : {}),
      ...(filter.state ? { state: filter.state } : {}),
      ...(filter.operation ? { operation: filter.operation } : {}),
      ...(filter.since ? { since: filter.since } : {}),
      ...(filter.until ? { until: filter.until } : {}),
    },
    how,
  );
}

/** An occurrence; one left running by a dead process is shown as what it is now: FAILED_TEMP. */
export async function getOpOcc(deps: LcmDeps, ref: string): Promise<LcmOpOcc> {
  const op = await deps.store.opOccs.get(ref);
  await sweepStaleLock(deps, op.vnfInstanceId);
  return await deps.store.opOccs.get(op.id);
}

export interface FailOptions {
  /**
   * Also give up on an occurrence still marked as running (STARTING,
   * PROCESSING, ROLLING_BACK) whose vnfm this host cannot see running: its
   * lock is released. Refused while that vnfm verifiably runs on this host.
   */
  force?: boolean;
  /** The lock the operator confirmed (failTarget's): refused if the occurrence is held otherwise by now. */
  confirmed?: VnfLock;
}

/** An occurrence `op-fail` is about to give up on, and what holds it (for the operator to confirm). */
export interface FailTarget {
  opOcc: LcmOpOcc;
  /** The lock of a running occurrence, and what this host can tell of its holder (with --force). */
  lock?: VnfLock;
  holder?: HolderStatus;
  /** "vnf instance X is locked by vnfm pid P on host H since T (operation Y)", when locked. */
  lockedBy?: string;
}

const RUNNING: LcmOperationState[] = ['STARTING', 'PROCESSING', 'ROLLING_BACK'];

/**
 * What `op-fail` would give up on, after sweeping what a dead vnfm left:
 * refuses (exit 4) an occurrence that is neither FAILED_TEMP nor, with
 * force, running under a holder this host cannot see alive.
 */
export async function failTarget(deps: LcmDeps, ref: string, opts: FailOptions = {}): Promise<FailTarget> {
  const first = await deps.store.opOccs.get(ref);
  await sweepStaleLock(deps, first.vnfInstanceId);
  return await checkFailable(deps, await deps.store.opOccs.get(first.id), opts);
}

async function checkFailable(deps: LcmDeps, op: LcmOpOcc, opts: FailOptions): Promise<FailTarget> {
  if (!RUNNING.includes(op.operationState)) {
    assertFailedTemp(op, 'failed');
    return { opOcc: op };
  }
  const lock = await deps.store.opOccs.lock(op.vnfInstanceId);
  const held = lock?.opId === op.id ? lock : undefined;
  const holder = held && lockStatus(deps, held);
  const lockedBy = held && `vnf instance ${op.vnfInstanceId} is locked by ${describeHolder(held)} (operation ${op.operation}, occurrence ${op.id})`;
  if (!opts.force) {
    throw new ConflictError(`occurrence ${op.id} (${op.operation}) is ${op.operationState}: only a FAILED_TEMP occurrence can be failed${lockedBy ? `; ${lockedBy}` : ''}`, {
      hint: `wait for it (vnfm op-show ${op.id}); if the vnfm running it is gone for good: vnfm op-fail --force ${op.id}`,
    });
  }
  if (opts.confirmed && !(held && held.pid === opts.confirmed.pid && held.acquiredAt === opts.confirmed.acquiredAt && held.hostId === opts.confirmed.hostId)) {
    throw new ConflictError(`occurrence ${op.id} changed hands while you were asked${lockedBy ? `: ${lockedBy}` : ''}`, {
      hint: `look again: vnfm op-show ${op.id}`,
    });
  }
  if (holder?.state === 'running') {
    throw new ConflictError(`refusing to force occurrence ${op.id} to FAILED: ${lockedBy}, and that process is running`, {
      hint: `stop it (Ctrl-C, or kill -TERM ${held!.pid}): it leaves the occurrence FAILED_TEMP; or wait for it (vnfm op-show ${op.id})`,
    });
  }
  return { opOcc: op, ...(held ? { lock: held, holder: holder!, lockedBy: lockedBy! } : {}) };
}

/**
 * Gives up on a FAILED_TEMP occurrence: FAILED, and the instance is free
 * again (as it is). With force, also a running occurrence whose holder is not
 * verifiably alive (see FailOptions): FAILED, its lock released, and the
 * error records who held it.
 */
export async function failOpOcc(deps: LcmDeps, ref: string, opts: FailOptions = {}): Promise<LcmOpOcc> {
  const first = await deps.store.opOccs.get(ref);
  await sweepStaleLock(deps, first.vnfInstanceId);
  const ops = deps.store.opOccs;
  return await ops.exclusive(async () => {
    // Checked again under the write lock: the holder may have finished or failed meanwhile.
    const target = await checkFailable(deps, await ops.get(first.id), opts);
    const op = target.opOcc;
    if (op.operationState === 'FAILED_TEMP') return await ops.setState(op.id, 'FAILED', deps.now().toISOString(), { pid: null });
    if (target.lock) await ops.releaseLock(op.vnfInstanceId, op.id);
    const holder = target.lock ? describeHolder(target.lock) : 'a vnfm process that holds no lock';
    return await ops.setState(op.id, 'FAILED', deps.now().toISOString(), {
      pid: null,
      error: {
        status: 500,
        title: 'Failed by the operator',
        detail: `op-fail --force while ${op.operationState}, run by ${holder}; the instance may be partly changed`,
      },
    });
  });
}

/** Deletes one NOT_INSTANTIATED instance (see deleteVnfs). */
export async function deleteVnf(deps: LcmDeps, ref: string): Promise<VnfInstance> {
  return (await deleteVnfs(deps, [await deps.store.instances.get(ref)]))[0]!;
}
