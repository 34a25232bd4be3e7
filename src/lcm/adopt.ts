/**
 * vnf-adopt: VNFs Tacker instantiated, taken over as they run. Each instance
 * of Tacker's file is planned first — its package (the onboarded one with
 * its vnfdId, or the one named), its VIM (the registered one with its
 * vimId, or the one named), and what runs at the VIM compared with the
 * package by the planner of the VIM's type — and any difference refuses the
 * whole file before anything is recorded. Then each is recorded under
 * Tacker's id (and name) with an occurrence ADOPT, vnfm's own operation:
 * the instance INSTANTIATED as an instantiate would have left it, so the
 * operations that follow run as on any other. op-rollback of an ADOPT forgets
 * the instance and leaves the VIM as it is.
 */
import { ConflictError, NotFoundError, UsageError, ValidationError } from '../errors.js';
import type { LcmOpOcc, VimConnection, VnfInstance } from '../model/lcm.js';
import { runOperation, sweepStaleLock, type LcmDeps, type OperationOptions, type OperationResult } from './engine.js';
import { deleteVnfs, draftVnf } from './instances.js';
import { ADOPT } from './planners/adoption.js';
import { plannerOfVimType } from './planners/index.js';
import type { AdoptionPlan, AdoptionSummary } from './planners/planner.js';
import { readTackerInstances, type TackerInstance } from './tacker-instance.js';
import { vimLookup } from './vim-connection.js';

export { ADOPT };

export interface AdoptOptions extends OperationOptions {
  /** The package (id, name or vnfdId) instead of the one with the instance's vnfdId. */
  package?: string;
  /** The registered VIM (id or name) instead of the one with the instance's vimId. */
  vim?: string;
  /** Check and show what would be adopted; record nothing, write nothing to the VIM. */
  dryRun?: boolean;
}

export interface Adoption {
  /** Tacker's instance as the file gave it. */
  tacker: TackerInstance;
  /** The instance as recorded (as it would be, with dryRun: NOT_INSTANTIATED, not recorded). */
  vnfInstance: VnfInstance;
  /** The ADOPT occurrence (absent with dryRun). */
  opOcc?: LcmOpOcc;
  summary: AdoptionSummary;
  vim: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Planned {
  tacker: TackerInstance;
  draft: VnfInstance;
  plan: AdoptionPlan;
  summary: AdoptionSummary;
}

/** Adopts every instance of Tacker's `doc` (read from `file`): all checked first, then each recorded with its occurrence. */
export async function adoptFromTacker(deps: LcmDeps, file: string, doc: unknown, opts: AdoptOptions = {}): Promise<Adoption[]> {
  const found = readTackerInstances(file, doc);
  const ids = new Set<string>();
  for (const t of found) {
    if (ids.has(t.id)) throw new ValidationError(t.source, 'id', `names instance ${t.id} a second time in the file`);
    ids.add(t.id);
  }
  const signal = opts.signal ?? new AbortController().signal;
  const planned: Planned[] = [];
  for (const tacker of found) planned.push(await planOne(deps, tacker, opts, signal));
  if (opts.dryRun) return planned.map((p) => ({ tacker: p.tacker, vnfInstance: p.draft, summary: p.summary, vim: p.plan.vim.name }));
  const out: Adoption[] = [];
  for (const p of planned) {
    const result = await recordOne(deps, p, opts);
    out.push({ tacker: p.tacker, vnfInstance: result.vnfInstance, opOcc: result.opOcc, summary: p.summary, vim: p.plan.vim.name });
  }
  return out;
}

async function planOne(deps: LcmDeps, tacker: TackerInstance, opts: AdoptOptions, signal: AbortSignal): Promise<Planned> {
  const source = tacker.source;
  if (tacker.instantiationState !== 'INSTANTIATED') {
    throw new UsageError(`Tacker's vnf instance ${tacker.id} (${source}) is ${tacker.instantiationState}: there is nothing running to adopt`, {
      hint: 'create it with vnfm vnf-create and instantiate it with vnfm vnf-instantiate instead',
    });
  }
  if (!UUID.test(tacker.id)) throw new ValidationError(source, 'id', `is ${JSON.stringify(tacker.id)}, not the UUID Tacker gives every instance`);
  const known = await deps.store.instances.find(tacker.id);
  if (known?.id === tacker.id) {
    throw new ConflictError(`vnf instance ${tacker.id} is recorded already (${known.instantiationState}): it was adopted before, or created with this id`, {
      hint: `see it with vnfm vnf-show ${tacker.id}; to adopt it again, first forget it (vnfm op-rollback of its ADOPT occurrence)`,
    });
  }
  const pkg = opts.package ? await deps.store.packages.get(opts.package) : await deps.store.packages.find(tacker.vnfdId);
  if (!pkg || (!opts.package && pkg.vnfdId !== tacker.vnfdId)) {
    throw new NotFoundError(`no onboarded package has vnfdId ${tacker.vnfdId}, the package of Tacker's vnf instance ${tacker.id} (${source})`, {
      hint: 'onboard the same package as Tacker has (vnfm vnfpkg-onboard PACKAGE.zip), or name it with --package',
    });
  }
  if (pkg.vnfdId !== tacker.vnfdId) {
    throw new ValidationError(source, 'vnfdId', `is ${tacker.vnfdId}, and package ${pkg.name ?? pkg.id} has vnfdId ${pkg.vnfdId}: it is not the package of this instance`, {
      hint: `name the package with vnfdId ${tacker.vnfdId} (vnfm vnfpkg-list), or leave --package out`,
    });
  }
  const draft: VnfInstance = {
    ...(await draftVnf(deps, { package: pkg.id, ...(tacker.vnfInstanceName ? { name: tacker.vnfInstanceName } : {}), description: tacker.vnfInstanceDescription })),
    id: tacker.id,
  };
  const vim = await adoptionVim(deps, tacker, opts.vim);
  const planner = plannerOfVimType(vim.spec.type);
  if (!planner.adopt) throw new UsageError(`vnf-adopt cannot take over VNFs on ${planner.name} VIMs`);
  const plan = await planner.adopt(deps, draft, tacker, vim);
  const driver = await plan.connect(deps, plan.vim);
  await plan.check(driver, signal);
  const summary = await plan.summary(driver, signal);
  return { tacker, draft, plan: onlyDriver(plan, driver), summary };
}

/** The plan with the driver its check used: the run asks the same connection. */
function onlyDriver(plan: AdoptionPlan, driver: unknown): AdoptionPlan {
  return { ...plan, connect: (deps, vim) => (vim === plan.vim ? Promise.resolve(driver) : plan.connect(deps, vim)) };
}

/** The registered VIM: the one named, else the one whose id or name is Tacker's vimId of the instance. */
async function adoptionVim(deps: LcmDeps, tacker: TackerInstance, named: string | undefined): Promise<VimConnection> {
  const ref = named ?? tacker.vimId;
  if (!ref) {
    throw new ValidationError(tacker.source, 'vimConnectionInfo', 'names no VIM (no vimId)', { hint: 'name the registered VIM the instance runs on with --vim NAME' });
  }
  const stored = await deps.store.vims.find(ref);
  if (!stored) {
    throw new NotFoundError(
      named ? `VIM "${named}" is not registered` : `no registered VIM has the id or name ${ref}, the vimId Tacker recorded for vnf instance ${tacker.id} (${tacker.source})`,
      { hint: 'register the VIM Tacker uses (vnfm vim-register --config-file vim-config.yaml NAME) and name it with --vim NAME' },
    );
  }
  const planner = plannerOfVimType(stored.spec.type);
  return planner.vims.registered(tacker.source, 'vimConnectionInfo', vimLookup(deps), stored);
}

/** Records the instance, then its ADOPT occurrence; stopped before the occurrence was recorded, the instance goes again. */
async function recordOne(deps: LcmDeps, p: Planned, opts: AdoptOptions): Promise<OperationResult> {
  await deps.store.instances.insert(p.draft, { checkName: true });
  try {
    return await runOperation(deps, p.draft, async () => p.plan, opts);
  } catch (err) {
    if ((await deps.store.opOccs.list({ vnfInstanceId: p.draft.id })).length === 0) {
      try {
        await deleteVnfs(deps, [p.draft]);
      } catch {
        // The instance stays NOT_INSTANTIATED and listed; the error that stopped the adoption is the one to report.
      }
    }
    throw err;
  }
}

/**
 * op-rollback of an ADOPT: the instance is forgotten — its record and its
 * occurrences deleted, its package released — and the VIM left as it is
 * (what was adopted keeps running, labelled). Only while the ADOPT is the
 * instance's last occurrence: once vnfm has operated on it, the VIM holds
 * vnfm's changes and forgetting them is not a rollback.
 */
export async function forgetAdoption(deps: LcmDeps, opRef: string, opts: OperationOptions = {}): Promise<OperationResult> {
  const first = await deps.store.opOccs.get(opRef);
  await sweepStaleLock(deps, first.vnfInstanceId, opts.onEvent);
  const ops = deps.store.opOccs;
  const result = await ops.exclusive(async () => {
    const op = await ops.get(first.id);
    if (op.operationState !== 'COMPLETED' && op.operationState !== 'FAILED_TEMP') {
      throw new ConflictError(`occurrence ${op.id} (ADOPT) is ${op.operationState}: only a COMPLETED or FAILED_TEMP adoption can be rolled back`, {
        hint: `see it with: vnfm op-show ${op.id}`,
      });
    }
    const later = (await ops.list({ vnfInstanceId: op.vnfInstanceId })).filter((o) => o.id !== op.id && o.startTime >= op.startTime);
    if (later.length > 0) {
      throw new ConflictError(
        `vnf instance ${op.vnfInstanceId} has had ${later.length} operation(s) since it was adopted (the last: ${later[later.length - 1]!.operation}): the adoption can no longer be rolled back`,
        {
          hint: `terminate the instance (vnfm vnf-terminate ${op.vnfInstanceId}) or keep it`,
        },
      );
    }
    if (op.operationState === 'FAILED_TEMP') await ops.releaseLock(op.vnfInstanceId, op.id);
    const instance = await deps.store.instances.get(op.vnfInstanceId);
    const now = deps.now().toISOString();
    const rolled: LcmOpOcc = { ...op, operationState: 'ROLLED_BACK', stateEnteredTime: now };
    const { instantiatedVnfInfo: _i, vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
    await deps.store.instances.update({ ...rest, instantiationState: 'NOT_INSTANTIATED', updatedAt: now });
    await deps.store.instances.delete(instance.id, now);
    return { opOcc: rolled, vnfInstance: { ...rest, instantiationState: 'NOT_INSTANTIATED', updatedAt: now } as VnfInstance };
  });
  opts.onEvent?.({ type: 'occurrence', opOcc: result.opOcc });
  return result;
}
