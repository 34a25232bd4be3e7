/**
 * The operation engine. Every LCM operation runs the same way: the request
 * is checked (nothing changes on a refusal), the instance's lock is taken and
 * an occurrence recorded (STARTING → PROCESSING), the hooks and the
 * infra-driver run with a journal that is on disk before each step, and the
 * occurrence ends COMPLETED (with the instance's new state, in the same
 * transaction) or FAILED_TEMP (with the error, lock released). A FAILED_TEMP
 * occurrence blocks the instance until it is retried, rolled back or failed.
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, InterruptedError, NotFoundError, TerminatedError, TimeoutError, UsageError, VimCheckError, VnfmError } from '../errors.js';
import type { DriverContext, DriverEvent, JournalStep, ResourceRef } from '../infra/driver.js';
import type { KubernetesInfraDriver } from '../infra/kubernetes/driver-contract.js';
import type { OpenStackInfraDriver } from '../infra/openstack/driver-contract.js';
import type { SecretReader } from '../infra/kubernetes/secrets.js';
import type { ManagementDriver } from '../mgmt/index.js';
import { noopManagementDriver } from '../mgmt/noop.js';
import type { InstanceFields, Open, PackageScriptUse, Seal } from '../mgmt/index.js';
import { openOpLog } from './op-log.js';
import type { Store, VnfLock } from '../store/index.js';
import { holderOf, holderStatus, thisHost, type HolderStatus, type HostFacts } from './lock-holder.js';
import type { Vim, VimSecrets } from '../vim/index.js';
import type { Flavour, LcmHook } from '../vnfd/index.js';
import type {
  AffectedVnfc,
  LcmOpOcc,
  LcmOperation,
  LcmOperationState,
  LcmRequest,
  PriorState,
  ProblemDetails,
  VimConnection,
  VnfInstance,
} from '../model/lcm.js';
import { vnfcsOf } from '../model/vnfcs.js';

/** What the engine needs from outside; the cli supplies the real ones, tests their own. */
export interface LcmDeps {
  store: Store;
  /** VNFM_HOME, where onboarded packages are unpacked. */
  home: string;
  now(): Date;
  /** Decrypts a registered VIM's secrets (needs the keyring). */
  openVimSecrets(vim: Vim): Promise<VimSecrets>;
  /** The Kubernetes infra-driver for a VIM. */
  kubernetesDriver(vim: VimConnection): KubernetesInfraDriver | Promise<KubernetesInfraDriver>;
  /** The OpenStack (Heat) infra-driver for a VIM; operations on OpenStack VIMs fail without it. */
  openstackDriver?(vim: VimConnection): OpenStackInfraDriver | Promise<OpenStackInfraDriver>;
  /** Hooks around the infra-driver; the no-op driver when absent. */
  mgmt?: ManagementDriver;
  /** Reads Secrets on a VIM (vnf-kubeconfig). */
  secretReader?(vim: VimConnection): Promise<SecretReader>;
  /** Seals the credentials of an inline VIM kept with an instance (vnfm's keyring); without it they are not kept. */
  seal?: Seal;
  /** Opens what `seal` sealed. */
  open?: Open;
  /**
   * Contacts a VIM with its credentials; throws VimCheckError (exit 6) when it
   * does not answer or refuses them. Asked for an inline VIM when the request
   * is read, and for a registered one before every new operation is recorded
   * (a VIM's status from registration or vim-check may be stale).
   */
  checkInlineVim?(vim: VimConnection): Promise<void>;
  /** The pid recorded in locks (this process's by default); its host, boot and start time are read from this host. */
  pid?: number;
  /** How a lock's holder is checked: this host's facts by default (see lock-holder.ts). */
  host?: HostFacts;
}

/** Progress of an operation, for the cli's live view or log lines. */
export type LcmEvent =
  | { type: 'occurrence'; opOcc: LcmOpOcc }
  | { type: 'driver'; event: DriverEvent }
  | { type: 'hook'; hook: LcmHook }
  /** A line a hook's package script or remote command printed, as its log keeps it (secrets redacted). */
  | { type: 'output'; hook: LcmHook; line: string }
  | { type: 'notice'; message: string };

export interface OperationOptions {
  /** Aborted on Ctrl-C or --timeout: the reason should be an InterruptedError or a TimeoutError. */
  signal?: AbortSignal;
  onEvent?(event: LcmEvent): void;
  /** Where the request came from, for messages (the request file). */
  source?: string;
  /** OpenStack: Heat environment files (`openstack stack create -e`), replacing the VIM's and the instance's. */
  heatEnvironments?: string[];
  /**
   * Consent to run package scripts in hooks: true (`--allow-package-scripts`),
   * or asked for the scripts listed (a prompt on a terminal). Absent: refused.
   */
  allowPackageScripts?: boolean | ((scripts: readonly PackageScriptUse[]) => Promise<boolean>);
  /** Server ids or addresses whose changed SSH host key the operator accepts. */
  acceptHostKeys?: string[];
}

export interface OperationResult {
  opOcc: LcmOpOcc;
  vnfInstance: VnfInstance;
}

/** What an operation (or a rollback) will do, decided before anything changes; `D` is its infra-driver. */
export interface Plan<D = unknown> {
  operation: LcmOperation;
  /** Recorded as the occurrence's operationParams: never with secrets. */
  params: LcmRequest;
  vim: VimConnection;
  flavour?: Flavour;
  packageDir: string;
  /** The operator consented to the package scripts `prepare` listed (asked before the operation started). */
  consented?: boolean;
  /** Start and end hooks; none for a rollback. */
  hooks?: [LcmHook, LcmHook];
  /** Scale-in: how many VNFCs of each VDU the infra-driver removes (the newest first). */
  removing?: Record<string, number>;
  /** The infra-driver for the plan's VIM (its planner's connect). */
  connect(deps: LcmDeps, vim: VimConnection): Promise<D>;
  /** Asks the driver to refuse what the VIM cannot take, before the occurrence is recorded (see preflight). */
  check?(driver: D, signal: AbortSignal): Promise<void>;
  /** Does the VIM work and returns the instance as it is afterwards. */
  run(driver: D, ctx: DriverContext): Promise<VnfInstance>;
}

export type KubernetesPlan = Plan<KubernetesInfraDriver>;
export type OpenStackPlan = Plan<OpenStackInfraDriver>;

/** Binds a plan to its infra-driver. */
async function bindDriver<D>(deps: LcmDeps, plan: Plan<D>): Promise<(ctx: DriverContext) => Promise<VnfInstance>> {
  const driver = await plan.connect(deps, plan.vim);
  return (ctx) => plan.run(driver, ctx);
}

const ACTIVE: LcmOperationState[] = ['STARTING', 'PROCESSING', 'ROLLING_BACK'];

const nowIso = (deps: LcmDeps) => deps.now().toISOString();
const pidOf = (deps: LcmDeps) => deps.pid ?? process.pid;
const hostOf = (deps: LcmDeps) => deps.host ?? thisHost();

/** The lock row for an occurrence this process starts or resumes. */
function lockFor(deps: LcmDeps, vnfInstanceId: string, opId: string): VnfLock {
  return { vnfInstanceId, opId, acquiredAt: nowIso(deps), ...holderOf(pidOf(deps), hostOf(deps)) };
}

/** Whether the holder of a lock still runs, as far as this host can tell. */
export function lockStatus(deps: LcmDeps, lock: VnfLock): HolderStatus {
  return holderStatus(lock, hostOf(deps));
}

/** "vnfm pid P on host H since T": the holder of a lock, for messages. */
export function describeHolder(lock: VnfLock): string {
  return `vnfm pid ${lock.pid} on host ${lock.hostName ?? '(not recorded)'} since ${lock.acquiredAt}`;
}

/**
 * Turns what a dead process left behind into FAILED_TEMP: its lock, and any
 * occurrence still marked as running that holds no lock.
 */
export function sweepStaleLock(deps: LcmDeps, vnfInstanceId: string, onEvent?: (e: LcmEvent) => void): LcmOpOcc[] {
  const ops = deps.store.opOccs;
  const swept = ops.exclusive(() => {
    const out: LcmOpOcc[] = [];
    const lock = ops.lock(vnfInstanceId);
    const status = lock && lockStatus(deps, lock);
    if (lock && status?.state === 'gone') {
      const op = ops.find(lock.opId);
      ops.releaseLock(vnfInstanceId, lock.opId);
      if (op && ACTIVE.includes(op.operationState)) {
        out.push(
          ops.setState(op.id, 'FAILED_TEMP', nowIso(deps), {
            pid: null,
            error: {
              status: 500,
              title: 'vnfm process died',
              detail: `the vnfm process (pid ${lock.pid} on host ${lock.hostName ?? '(not recorded)'}) running this ${op.operation} stopped before finishing it (killed or crashed: ${status.why}); the instance may be partly changed`,
            },
          }),
        );
      }
    }
    const held = ops.lock(vnfInstanceId);
    for (const op of ops.unfinished(vnfInstanceId)) {
      if (ACTIVE.includes(op.operationState) && held?.opId !== op.id) {
        out.push(
          ops.setState(op.id, 'FAILED_TEMP', nowIso(deps), {
            pid: null,
            error: { status: 500, title: 'vnfm process died', detail: `this ${op.operation} was left ${op.operationState} by a vnfm process that is gone` },
          }),
        );
      }
    }
    return out;
  });
  for (const op of swept) {
    onEvent?.({ type: 'notice', message: `occurrence ${op.id} (${op.operation}) was left running by a vnfm process that is gone: now FAILED_TEMP` });
  }
  return swept;
}

/** Refuses when another process holds the lock or an occurrence of the instance waits in FAILED_TEMP. */
export function assertInstanceFree(deps: LcmDeps, vnfInstanceId: string, exceptOpId?: string): void {
  const ops = deps.store.opOccs;
  const lock = ops.lock(vnfInstanceId);
  if (lock) {
    const op = ops.find(lock.opId);
    const unchecked = lockStatus(deps, lock).state !== 'running';
    // A lease (store/operation-leases.ts) says how long the holder is trusted without this host seeing it.
    const lease = (lock as { leaseExpiresAt?: string; heartbeatAt?: string }).leaseExpiresAt;
    const beat = (lock as { heartbeatAt?: string }).heartbeatAt;
    throw new ConflictError(`vnf instance ${vnfInstanceId} is locked by ${describeHolder(lock)} (operation ${op?.operation ?? 'unknown'}, occurrence ${lock.opId})`, {
      hint: unchecked
        ? lease
          ? `that vnfm holds a lease on the instance until ${lease} (last heartbeat ${beat ?? 'unknown'}), renewed while it runs: follow it with vnfm op-watch ${lock.opId}; once the lease runs out without a heartbeat, the next command takes it for gone and the occurrence becomes FAILED_TEMP; if you know it is gone now: vnfm op-fail --force ${lock.opId}`
          : `this host cannot check that process: wait for it there (vnfm op-show ${lock.opId}); if it is gone for good, release the instance: vnfm op-fail --force ${lock.opId}`
        : `wait for it to finish; follow it with: vnfm op-watch ${lock.opId}`,
    });
  }
  const blocking = ops.unfinished(vnfInstanceId).find((o) => o.id !== exceptOpId);
  if (blocking) {
    throw new ConflictError(
      `vnf instance ${vnfInstanceId} has a ${blocking.operationState} ${blocking.operation} occurrence (${blocking.id}) that must be resolved first`,
      { hint: resolutionHint(blocking) },
    );
  }
}

export function resolutionHint(op: Pick<LcmOpOcc, 'id' | 'operation' | 'operationParams'>): string {
  const choices = [`retry it: vnfm op-retry ${op.id}`];
  if (canRollBack(op)) choices.push(`undo it: vnfm op-rollback ${op.id}`);
  choices.push(`give up on it: vnfm op-fail ${op.id}`);
  return choices.join('; or ');
}

export function canRollBack(op: Pick<LcmOpOcc, 'operation' | 'operationParams'>): boolean {
  // MODIFY_INFO and CHANGE_EXT_CONN (modify.ts, ext-conn.ts) are recorded under their SOL003 names, outside LcmOperation.
  const named = op.operation as string;
  if (op.operation === 'INSTANTIATE' || op.operation === 'CHANGE_VNFPKG' || named === 'MODIFY_INFO' || named === 'CHANGE_EXT_CONN') return true;
  return op.operation === 'SCALE' && (op.operationParams as { type?: string }).type === 'SCALE_OUT';
}

function priorOf(instance: VnfInstance): PriorState {
  return {
    vnfPkgId: instance.vnfPkgId,
    vnfdId: instance.vnfdId,
    instantiationState: instance.instantiationState,
    ...(instance.instantiatedVnfInfo ? { instantiatedVnfInfo: instance.instantiatedVnfInfo } : {}),
  };
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  const r = signal.reason as unknown;
  if (r instanceof TimeoutError || r instanceof InterruptedError) throw r;
  throw new InterruptedError('interrupted');
}

/**
 * Lets the management driver refuse hooks it cannot run (before anything
 * changes) and seal the secrets its hooks need in the request to record.
 */
async function prepared(deps: LcmDeps, plan: Plan, opts: OperationOptions): Promise<Plan> {
  const mgmt = deps.mgmt ?? noopManagementDriver;
  if (!plan.hooks || !mgmt.prepare) return plan;
  let consented = false;
  const params = await mgmt.prepare({
    operation: plan.operation,
    hooks: plan.hooks,
    implementations: plan.flavour?.hooks ?? {},
    request: plan.params,
    source: opts.source ?? 'request',
    packageDir: plan.packageDir,
    allowPackageScripts: async (scripts) => {
      const consent = opts.allowPackageScripts;
      consented = typeof consent === 'function' ? await consent(scripts) : consent === true;
      return consented;
    },
  });
  return { ...plan, params, consented };
}

/**
 * The infra-driver's read-only checks of the plan against the VIM (kinds it
 * lacks, versions, VDUs it cannot scale): a refusal here leaves no
 * occurrence behind. The driver checks again when it runs, since the
 * cluster may change in between.
 */
async function preflight<D>(deps: LcmDeps, plan: Plan<D>, signal: AbortSignal | undefined): Promise<void> {
  if (!plan.check) return;
  const driver = await plan.connect(deps, plan.vim);
  await plan.check(driver, signal ?? new AbortController().signal);
}

/** Keeps what the hooks recorded (and what earlier operations did) in the instance's metadata. */
function withHookRecords(before: VnfInstance, after: VnfInstance, records: Record<string, unknown>): VnfInstance {
  const info = after.instantiatedVnfInfo;
  if (!info) return after;
  const merged: Record<string, unknown> = { ...before.instantiatedVnfInfo?.metadata.mgmt, ...info.metadata.mgmt, ...records };
  for (const [k, v] of Object.entries(merged)) if (v === null || v === undefined) delete merged[k];
  const { mgmt: _m, ...metadata } = info.metadata;
  return { ...after, instantiatedVnfInfo: { ...info, metadata: Object.keys(merged).length ? { ...metadata, mgmt: merged } : metadata } };
}

/** Asks a registered VIM whether it answers, and records what it said as its status (as vim-check does). */
async function checkRegisteredVim(deps: LcmDeps, vim: VimConnection): Promise<void> {
  if (!deps.checkInlineVim) return;
  const record = (status: Vim['status']) => {
    const stored = vim.id ? deps.store.vims.find(vim.id) : undefined;
    if (stored && stored.status !== status) deps.store.vims.update({ ...stored, status, updatedAt: nowIso(deps) });
  };
  try {
    await deps.checkInlineVim(vim);
  } catch (err) {
    if (err instanceof VimCheckError) record('UNREACHABLE');
    throw err;
  }
  record('REACHABLE');
}

/** Starts a new operation on the instance: the plan has been made from the checked request. */
export async function runOperation(
  deps: LcmDeps,
  instance: VnfInstance,
  makePlan: () => Promise<Plan>,
  opts: OperationOptions = {},
): Promise<OperationResult> {
  throwIfAborted(opts.signal);
  sweepStaleLock(deps, instance.id, opts.onEvent);
  assertInstanceFree(deps, instance.id);
  const made = await makePlan();
  // An inline VIM was checked as the request was read.
  if (!made.vim.inline) await checkRegisteredVim(deps, made.vim);
  throwIfAborted(opts.signal);
  const plan = await prepared(deps, made, opts);
  await preflight(deps, plan, opts.signal);
  throwIfAborted(opts.signal);
  const ops = deps.store.opOccs;
  const op = ops.exclusive(() => {
    // Checked again under the write lock: another process may have started meanwhile.
    assertInstanceFree(deps, instance.id);
    const now = nowIso(deps);
    const current = deps.store.instances.get(instance.id);
    const occ: LcmOpOcc = {
      id: randomUUID(),
      vnfInstanceId: instance.id,
      operation: plan.operation,
      operationState: 'STARTING',
      stateEnteredTime: now,
      startTime: now,
      operationParams: plan.params,
      journal: [],
      isAutomaticInvocation: false,
      pid: pidOf(deps),
    };
    ops.insert(occ, priorOf(current));
    ops.takeLock(lockFor(deps, instance.id, occ.id));
    return occ;
  });
  opts.onEvent?.({ type: 'occurrence', opOcc: op });
  return execute(deps, op, plan, 'PROCESSING', 'COMPLETED', opts);
}

/**
 * Takes the lock for an existing FAILED_TEMP occurrence (retry or rollback)
 * and moves it to `state`.
 */
export function resumeOccurrence(deps: LcmDeps, opId: string, state: 'PROCESSING' | 'ROLLING_BACK'): LcmOpOcc {
  const ops = deps.store.opOccs;
  return ops.exclusive(() => {
    const op = ops.get(opId);
    assertFailedTemp(op, state === 'PROCESSING' ? 'retried' : 'rolled back');
    assertInstanceFree(deps, op.vnfInstanceId, op.id);
    ops.takeLock(lockFor(deps, op.vnfInstanceId, op.id));
    return ops.setState(op.id, state, nowIso(deps), { error: null, pid: pidOf(deps) });
  });
}

export function assertFailedTemp(op: LcmOpOcc, what: string): void {
  if (op.operationState !== 'FAILED_TEMP') {
    throw new ConflictError(`occurrence ${op.id} (${op.operation}) is ${op.operationState}: only a FAILED_TEMP occurrence can be ${what}`, {
      hint: `see it with: vnfm op-show ${op.id}`,
    });
  }
}

/** Runs a planned operation whose occurrence is locked; ends it COMPLETED/ROLLED_BACK or FAILED_TEMP. */
export async function execute(
  deps: LcmDeps,
  started: LcmOpOcc,
  plan: Plan,
  running: 'PROCESSING' | 'ROLLING_BACK',
  done: 'COMPLETED' | 'ROLLED_BACK',
  opts: OperationOptions,
): Promise<OperationResult> {
  const ops = deps.store.opOccs;
  const signal = opts.signal ?? new AbortController().signal;
  let op = started.operationState === running ? started : ops.setState(started.id, running, nowIso(deps), { pid: pidOf(deps) });
  if (op !== started) opts.onEvent?.({ type: 'occurrence', opOcc: op });
  const instance = deps.store.instances.get(op.vnfInstanceId);
  const steps: JournalStep[] = ops.journal(op.id);
  const ctx: DriverContext = {
    journal: {
      record(step) {
        ops.appendJournal(op.id, step);
        steps.push(step);
      },
      steps: () => steps,
    },
    report: (event) => opts.onEvent?.({ type: 'driver', event }),
    signal,
  };
  const mgmt = deps.mgmt ?? noopManagementDriver;
  const records: Record<string, unknown> = {};
  const fields: InstanceFields = {};
  const log = openOpLog(deps.home, op.id, () => deps.now());
  const hook = async (name: LcmHook, result?: VnfInstance) => {
    opts.onEvent?.({ type: 'hook', hook: name });
    const outcome = await mgmt.runHook({
      hook: name,
      vnfInstanceId: instance.id,
      operation: plan.operation,
      request: plan.params,
      ...(plan.flavour?.hooks[name] ? { implementation: plan.flavour.hooks[name] } : {}),
      packageDir: plan.packageDir,
      signal,
      report: (message) => opts.onEvent?.({ type: 'driver', event: { message } }),
      vim: plan.vim,
      instance,
      ...(result ? { result } : {}),
      log: (line) => {
        log.write(`[${name}] ${line}`);
        opts.onEvent?.({ type: 'output', hook: name, line });
      },
      ...(plan.removing ? { removing: plan.removing } : {}),
      acceptHostKeys: opts.acceptHostKeys ?? [],
      // Consent was asked before a new operation started; retry and rollback carry the operator's flag.
      allowPackageScripts: opts.allowPackageScripts === true || (typeof opts.allowPackageScripts === 'function' && plan.consented === true),
    });
    if (outcome?.record) Object.assign(records, outcome.record);
    if (outcome?.instanceFields) Object.assign(fields, outcome.instanceFields);
  };
  try {
    const run = await bindDriver(deps, plan);
    if (plan.hooks) await hook(plan.hooks[0]);
    const ran = await run(ctx);
    if (plan.hooks) await hook(plan.hooks[1], ran);
    const after = { ...withHookRecords(instance, ran, records), ...fields };
    const affectedVnfcs = diffVnfcs(instance, after);
    const final = ops.exclusive(() => {
      const now = nowIso(deps);
      deps.store.instances.update({ ...after, updatedAt: now });
      const o = ops.setState(op.id, done, now, { error: null, resourceChanges: { affectedVnfcs }, pid: null });
      ops.releaseLock(op.vnfInstanceId, op.id);
      return o;
    });
    opts.onEvent?.({ type: 'occurrence', opOcc: final });
    return { opOcc: final, vnfInstance: deps.store.instances.get(op.vnfInstanceId) };
  } catch (err) {
    op = ops.exclusive(() => {
      const o = ops.setState(op.id, 'FAILED_TEMP', nowIso(deps), { error: problemOf(err, signal), pid: null });
      ops.releaseLock(op.vnfInstanceId, op.id);
      return o;
    });
    opts.onEvent?.({ type: 'occurrence', opOcc: op });
    throw explainFailure(err, op, signal, running === 'ROLLING_BACK');
  }
}

function diffVnfcs(before: VnfInstance, after: VnfInstance): AffectedVnfc[] {
  const was = vnfcsOf(before.instantiatedVnfInfo);
  const now = vnfcsOf(after.instantiatedVnfInfo);
  const ids = (list: typeof was) => new Set(list.map((v) => v.id));
  const wasIds = ids(was);
  const nowIds = ids(now);
  const entry = (v: (typeof was)[number], changeType: AffectedVnfc['changeType']): AffectedVnfc => ({
    id: v.id,
    vduId: v.vduId,
    changeType,
    computeResource: { resourceId: v.resourceId, vimLevelResourceType: v.vimLevelResourceType },
  });
  return [...now.filter((v) => !wasIds.has(v.id)).map((v) => entry(v, 'ADDED')), ...was.filter((v) => !nowIds.has(v.id)).map((v) => entry(v, 'REMOVED'))];
}

/** Why the operation stopped: the signal's reason, or the driver's account of it (what it was still waiting for), which has the reason as its cause. */
function abortReason(signal: AbortSignal, err?: unknown): VnfmError {
  const r = signal.reason as unknown;
  const reason = r instanceof TimeoutError || r instanceof InterruptedError ? r : new InterruptedError('interrupted');
  return err instanceof VnfmError && err !== reason && err.cause === reason ? err : reason;
}

export function problemOf(err: unknown, signal: AbortSignal): ProblemDetails {
  if (signal.aborted) {
    const r = abortReason(signal, err);
    // The signal's reason says which it was; the driver's own account (when it gave one) says where.
    const reason = signal.reason as unknown;
    return reason instanceof TimeoutError
      ? { status: 504, title: 'Timed out', detail: r.message }
      : { status: 503, title: reason instanceof TerminatedError ? 'Terminated' : 'Interrupted', detail: r.message };
  }
  if (err instanceof VnfmError) {
    const status = err instanceof NotFoundError ? 404 : err instanceof ConflictError ? 409 : err instanceof UsageError ? 422 : err instanceof VimCheckError ? 503 : 500;
    return { status, title: err.name, detail: err.message + (err.hint ? ` (hint: ${err.hint})` : '') };
  }
  const e = err as Error;
  return { status: 500, title: 'Infra-driver error', detail: e?.message ?? String(err) };
}

function explainFailure(err: unknown, op: LcmOpOcc, signal: AbortSignal, rollingBack: boolean): VnfmError {
  const what = `${rollingBack ? 'rollback of ' : ''}${op.operation} of vnf instance ${op.vnfInstanceId}`;
  const hint = resolutionHint(op);
  if (signal.aborted) {
    const r = abortReason(signal, err);
    const reason = signal.reason as unknown;
    const timedOut = reason instanceof TimeoutError;
    // SIGTERM's reason says so ("terminated (SIGTERM)"); Ctrl-C's is "interrupted".
    const stopped = reason instanceof InterruptedError ? reason.message : 'interrupted';
    const account = r instanceof TimeoutError ? r.message : r instanceof InterruptedError ? stopped : `${timedOut ? (signal.reason as TimeoutError).message : stopped}: ${r.message}`;
    const message = `${what} ${account}; occurrence ${op.id} is FAILED_TEMP`;
    if (timedOut) return new TimeoutError(message, { hint, cause: err });
    return reason instanceof TerminatedError ? new TerminatedError(message, { hint, cause: err }) : new InterruptedError(message, { hint, cause: err });
  }
  const detail = err instanceof Error ? err.message : String(err);
  const innerHint = err instanceof VnfmError && err.hint ? `${err.hint}; then ` : '';
  return new VnfmError(`${what} failed: ${detail}; occurrence ${op.id} is FAILED_TEMP`, { hint: innerHint + hint, cause: err });
}

/** Resources the journal says were created or changed, in the order first seen. */
export function journalResources(steps: readonly JournalStep[]): ResourceRef[] {
  const seen = new Map<string, ResourceRef>();
  for (const s of steps) {
    if (s.action !== 'create' && s.action !== 'apply' && s.action !== 'update') continue;
    const key = `${s.resource.apiVersion}|${s.resource.kind}|${s.resource.namespace ?? ''}|${s.resource.name}`;
    if (!seen.has(key)) seen.set(key, s.resource);
  }
  return [...seen.values()];
}

/** Merges resource lists keeping the first occurrence's order. */
export function unionResources(...lists: ResourceRef[][]): ResourceRef[] {
  const seen = new Map<string, ResourceRef>();
  for (const r of lists.flat()) {
    const key = `${r.apiVersion}|${r.kind}|${r.namespace ?? ''}|${r.name}`;
    if (!seen.has(key)) seen.set(key, r);
  }
  return [...seen.values()];
}
