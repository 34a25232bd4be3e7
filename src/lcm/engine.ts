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
import { ConflictError, echo, InterruptedError, NotFoundError, TerminatedError, TimeoutError, UsageError, VimCheckError, VnfmError } from '../errors.js';
import type { DriverContext, JournalStep, ResourceRef } from '../infra/driver.js';
import type { KubernetesInfraDriver } from '../infra/kubernetes/driver-contract.js';
import type { OpenStackInfraDriver } from '../infra/openstack/driver-contract.js';
import { noopManagementDriver } from '../mgmt/noop.js';
import type { InstanceFields, PackageScriptUse } from '../mgmt/index.js';
import { openOpLog } from './op-log.js';
import type { Vim } from '../vim/index.js';
import type { Flavour, LcmHook } from '../vnfd/index.js';
import type { AffectedVnfc, LcmOpOcc, LcmOperation, LcmRequest, PriorState, ProblemDetails, VimConnection, VnfInstance } from '../model/lcm.js';
import { vnfcsOf } from '../model/vnfcs.js';
import { nameProblem } from '../model/names.js';
import type { LcmDeps, LcmEvent } from './deps.js';
import { assertInstanceFree, lockFor, nowIso, pidOf, resolutionHint, sweepStaleLock } from './locks.js';

export type { LcmDeps, LcmEvent } from './deps.js';
export { assertInstanceFree, canRollBack, describeHolder, lockStatus, resolutionHint, sweepStaleLock } from './locks.js';

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
  /**
   * The package's members unpacked for the hooks (made once per process,
   * removed when it exits): called only when the flavour implements a hook,
   * so an operation without hooks unpacks nothing.
   */
  packageDir: () => Promise<string>;
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
 * Where the hooks find the package's files: unpacked when the flavour
 * implements the hook (any hook, for `prepare`), else the empty string (a
 * hook without an implementation reads nothing).
 */
async function hookPackageDir(plan: Plan, hook?: LcmHook): Promise<string> {
  const hooks = plan.flavour?.hooks ?? {};
  const implemented = hook ? hooks[hook] !== undefined : Object.keys(hooks).length > 0;
  return implemented ? plan.packageDir() : '';
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
    packageDir: await hookPackageDir(plan),
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

/**
 * The plan with one connection to its VIM for the preflight and the run: one
 * set of TLS connections and one discovery of the API server, not two.
 */
function oneConnection<D>(plan: Plan<D>): Plan<D> {
  let driver: Promise<D> | undefined;
  return {
    ...plan,
    connect: (deps, vim) => {
      if (vim !== plan.vim) return plan.connect(deps, vim);
      driver ??= plan.connect(deps, vim);
      driver.catch(() => (driver = undefined));
      return driver;
    },
  };
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

/**
 * The fields the hooks set, less a vnfInstanceName (a Tacker script's
 * vnf_instance) that breaks the rules vnf-create applies or that another
 * instance holds: the instance keeps the name it had, and the log says why.
 */
async function keptHookFields(deps: LcmDeps, fields: InstanceFields, instanceId: string, note: (message: string) => void): Promise<InstanceFields> {
  const name = fields.vnfInstanceName;
  if (name === undefined) return fields;
  const why =
    nameProblem('instance', name) !== undefined
      ? 'it is not a usable instance name'
      : (await deps.store.instances.isNameFree(name, instanceId))
        ? undefined
        : 'another instance has it';
  if (!why) return fields;
  note(`the name ${echo(name)} a hook gave the instance was not taken: ${why}`);
  const { vnfInstanceName: _n, ...kept } = fields;
  return kept;
}

/**
 * Asks a registered VIM whether it answers, and records what it said as its
 * status (as vim-check does); not when the request uses it in another region
 * (a v1 entry's accessInfo.region), which says nothing of the VIM as registered.
 */
async function checkRegisteredVim(deps: LcmDeps, vim: VimConnection): Promise<void> {
  if (!deps.checkInlineVim) return;
  const record = async (status: Vim['status']) => {
    const stored = vim.id ? await deps.store.vims.find(vim.id) : undefined;
    if (stored && stored.status !== status && stored.spec.regionName === vim.spec.regionName) await deps.store.vims.update({ ...stored, status, updatedAt: nowIso(deps) });
  };
  try {
    await deps.checkInlineVim(vim);
  } catch (err) {
    if (err instanceof VimCheckError) await record('UNREACHABLE');
    throw err;
  }
  await record('REACHABLE');
}

/** Starts a new operation on the instance: the plan has been made from the checked request. */
export async function runOperation(deps: LcmDeps, instance: VnfInstance, makePlan: () => Promise<Plan>, opts: OperationOptions = {}): Promise<OperationResult> {
  throwIfAborted(opts.signal);
  await sweepStaleLock(deps, instance.id, opts.onEvent);
  await assertInstanceFree(deps, instance.id);
  const made = await makePlan();
  // An inline VIM was checked as the request was read.
  if (!made.vim.inline) await checkRegisteredVim(deps, made.vim);
  throwIfAborted(opts.signal);
  const plan = oneConnection(await prepared(deps, made, opts));
  await preflight(deps, plan, opts.signal);
  throwIfAborted(opts.signal);
  const ops = deps.store.opOccs;
  const op = await ops.exclusive(async () => {
    // Checked again under the write lock: another process may have started meanwhile.
    await assertInstanceFree(deps, instance.id);
    const now = nowIso(deps);
    const current = await deps.store.instances.get(instance.id);
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
    await ops.insert(occ, priorOf(current));
    await ops.takeLock(lockFor(deps, instance.id, occ.id));
    return occ;
  });
  opts.onEvent?.({ type: 'occurrence', opOcc: op });
  return execute(deps, op, plan, 'PROCESSING', 'COMPLETED', opts);
}

/**
 * Takes the lock for an existing FAILED_TEMP occurrence (retry or rollback)
 * and moves it to `state`.
 */
export async function resumeOccurrence(deps: LcmDeps, opId: string, state: 'PROCESSING' | 'ROLLING_BACK'): Promise<LcmOpOcc> {
  const ops = deps.store.opOccs;
  return await ops.exclusive(async () => {
    const op = await ops.get(opId);
    assertFailedTemp(op, state === 'PROCESSING' ? 'retried' : 'rolled back');
    await assertInstanceFree(deps, op.vnfInstanceId, op.id);
    await ops.takeLock(lockFor(deps, op.vnfInstanceId, op.id));
    return await ops.setState(op.id, state, nowIso(deps), { error: null, pid: pidOf(deps) });
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
  let op = started.operationState === running ? started : await ops.setState(started.id, running, nowIso(deps), { pid: pidOf(deps) });
  if (op !== started) opts.onEvent?.({ type: 'occurrence', opOcc: op });
  const instance = await deps.store.instances.get(op.vnfInstanceId);
  const steps: JournalStep[] = await ops.journal(op.id);
  // A step the driver is about to take is on disk before it returns (a crash then finds it). A step done
  // waits for the next step or the end of this turn of the event loop, to share its write (one statement)
  // with the other objects' steps: one lock and one commit of the store for many objects, not one each.
  const unsaved: { seq: number; step: JournalStep }[] = [];
  let saving: NodeJS.Immediate | undefined;
  let unsavable: unknown;
  // Each step has its place (seq) in the journal from the start, so writes need no order among them: one starts as
  // the step is recorded, not in a later microtask (on SQLite its statement has run by the time record returns).
  const writing = new Set<Promise<void>>();
  const save = async (): Promise<void> => {
    const write = saveNow();
    writing.add(write);
    void write.then(
      () => writing.delete(write),
      () => writing.delete(write),
    );
    await Promise.all([...writing]);
  };
  // Recorded from the driver's synchronous journal: the write is on its way at once (on SQLite it is done before
  // record returns); one that fails is thrown to the driver at its next step, or to the operation at its end.
  const saveSoon = () =>
    void save().catch((err: unknown) => {
      unsavable ??= err;
    });
  const saveNow = async () => {
    if (saving) clearImmediate(saving);
    saving = undefined;
    if (unsavable !== undefined) throw unsavable;
    if (unsaved.length === 0) return;
    const batch = unsaved.splice(0);
    try {
      await ops.insertJournalSteps(op.id, batch);
    } catch (err) {
      unsaved.unshift(...batch);
      throw err;
    }
  };
  const ctx: DriverContext = {
    journal: {
      record(step) {
        unsaved.push({ seq: steps.length, step });
        steps.push(step);
        if (step.state !== 'done') saveSoon();
        else saving ??= setImmediate(saveSoon);
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
  const note = (message: string) => {
    log.write(message);
    opts.onEvent?.({ type: 'notice', message });
  };
  const hook = async (name: LcmHook, result?: VnfInstance) => {
    opts.onEvent?.({ type: 'hook', hook: name });
    const outcome = await mgmt.runHook({
      hook: name,
      vnfInstanceId: instance.id,
      operation: plan.operation,
      request: plan.params,
      ...(plan.flavour?.hooks[name] ? { implementation: plan.flavour.hooks[name] } : {}),
      packageDir: await hookPackageDir(plan, name),
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
    await save();
    if (plan.hooks) await hook(plan.hooks[1], ran);
    const final = await ops.exclusive(async () => {
      const now = nowIso(deps);
      // A name a hook set is checked under the write lock, where no other client can take it before the write.
      const after = { ...withHookRecords(instance, ran, records), ...(await keptHookFields(deps, fields, instance.id, note)) };
      const affectedVnfcs = diffVnfcs(instance, after);
      // A new name (a modify request's) is checked again as it is written: another client may have taken it since the plan.
      await deps.store.instances.update({ ...after, updatedAt: now }, { checkName: true });
      const o = await ops.setState(op.id, done, now, { error: null, resourceChanges: { affectedVnfcs }, pid: null });
      await ops.releaseLock(op.vnfInstanceId, op.id);
      return o;
    });
    opts.onEvent?.({ type: 'occurrence', opOcc: final });
    return { opOcc: final, vnfInstance: await deps.store.instances.get(op.vnfInstanceId) };
  } catch (err) {
    // A wait on the shared store ended by a signal or the deadline throws before the signal's handler or the timer has run.
    const stop = !signal.aborted && (err instanceof InterruptedError || err instanceof TimeoutError) ? AbortSignal.abort(err) : signal;
    // The store refusing writes: the state below fails with the same error.
    await save().catch(() => undefined);
    op = await ops.exclusive(async () => {
      const o = await ops.setState(op.id, 'FAILED_TEMP', nowIso(deps), { error: problemOf(err, stop), pid: null });
      await ops.releaseLock(op.vnfInstanceId, op.id);
      return o;
    });
    opts.onEvent?.({ type: 'occurrence', opOcc: op });
    throw explainFailure(err, op, stop, running === 'ROLLING_BACK');
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
    const account =
      r instanceof TimeoutError ? r.message : r instanceof InterruptedError ? stopped : `${timedOut ? (signal.reason as TimeoutError).message : stopped}: ${r.message}`;
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
