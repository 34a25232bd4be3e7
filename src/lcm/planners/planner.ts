/**
 * The contract every planner keeps: one per VIM type, each turning a
 * checked request into a Plan for its infra-driver (see index.ts for the
 * registry and how a planner is added).
 */
import type { LcmDeps, OperationOptions, Plan } from '../engine.js';
import type { LcmOpOcc, LcmOperation, LcmRequest, VimConnection, VnfInstance } from '../../model/lcm.js';
import type { VimReader } from '../vim-connection.js';
import type { LiveScale, VnfLiveState } from '../../model/live.js';
import type { ResourceRef } from '../../model/resources.js';
import type { TackerInstance } from '../tacker-instance.js';
import type { OnboardedPackage } from '../package-content.js';
import type { Flavour } from '../../model/vnfd.js';

/** What an adoption takes over, as vnf-adopt --dry-run shows it. */
export interface AdoptionSummary {
  /** Kubernetes: the namespace; OpenStack: absent. */
  namespace?: string;
  /** OpenStack: the Heat stack, by name and id. */
  stack?: { name: string; id: string; status: string };
  /** The objects (or the stack) recorded as the instance's resources, in creation order. */
  resources: ResourceRef[];
  /** The VNFCs found (`<vduId>-<pod or server>`). */
  vnfcs: string[];
  scaleStatus: { aspectId: string; scaleLevel: number }[];
}

/**
 * The plan of an adoption: an operation plan whose `check` compares the VIM
 * with the package (refusing, with each difference named, before anything is
 * recorded) and whose `run` marks what it found as the instance's; `summary`
 * is what the check found (after `check` has run).
 */
export interface AdoptionPlan<D = unknown> extends Plan<D> {
  check(driver: D, signal: AbortSignal): Promise<void>;
  summary(driver: D, signal: AbortSignal): Promise<AdoptionSummary>;
}

/** Plans the adoption of `tacker` as `instance` (NOT_INSTANTIATED, not recorded yet) on `vim`. */
export type PlanAdoption<D = unknown> = (deps: LcmDeps, instance: VnfInstance, tacker: TackerInstance, vim: VimConnection) => Promise<AdoptionPlan<D>>;

/**
 * Plans one operation on `instance` from its request `body` (normalised),
 * checking it against the package, the VIM and the instance's state before
 * anything changes. `retry` is set when an occurrence is planned again from
 * its recorded request.
 */
export type PlanOperation<D = unknown> = (deps: LcmDeps, instance: VnfInstance, body: unknown, source: string, retry: boolean, opts: OperationOptions) => Promise<Plan<D>>;

/** The VIM work of a package a vnf-update (MODIFY_INFO) moves the instance to, or of going back from it. */
export interface PackageChangeInput {
  instance: VnfInstance;
  source: string;
  /** The instance's current package and the one its images come from ('new': the request's; 'old': a rollback, the current one again). */
  current: OnboardedPackage;
  target: OnboardedPackage;
  images: 'new' | 'old';
  flavour: Flavour;
  vim: VimConnection;
  /** The request's metadata.configmap_secret_paths. */
  configPaths?: unknown;
  /** When the update is planned (restart annotations); absent on a rollback. */
  now?: string;
}

/** What a planner does at its VIM for vnf-update; what it leaves out changes the records only (Tacker's modify_info_process). */
export interface ModifyWork<D> {
  /** Why a vimConnectionInfo entry may not point the instance at another VIM; absent: it may. */
  readonly keepsVim?: string;
  /** Plans the VIM work of a new package (Kubernetes: Tacker v2's container update). */
  packageChange?(deps: LcmDeps, input: PackageChangeInput): Promise<Pick<Plan<D>, 'connect' | 'run'>>;
}

/** Recorded under its SOL003 name, outside the operations the planner tables know (as MODIFY_INFO). */
export const CHANGE_EXT_CONN = 'CHANGE_EXT_CONN' as LcmOperation;

/** A change of external connectivity, its request checked against the package and its VIM chosen (ext-conn.ts). */
export interface ExtConnChange {
  instance: VnfInstance;
  source: string;
  pkg: OnboardedPackage;
  flavour: Flavour;
  extVirtualLinks: Record<string, unknown>[];
  /** The VIM the change runs on (the instance's, or the one the request's vimConnectionInfo merges in). */
  vim: VimConnection;
  /** The request as the occurrence records it. */
  params: LcmRequest;
  /** The instance afterwards with the VIM the change ran on recorded. */
  recordVim(after: VnfInstance): VnfInstance;
}

/** The way back from a FAILED_TEMP change, on the instance's VIM. */
export interface ExtConnRollback {
  instance: VnfInstance;
  op: LcmOpOcc;
  source: string;
  vim: VimConnection;
  pkg: OnboardedPackage;
  flavour: Flavour;
}

/** change-ext-conn (CHANGE_EXT_CONN), Tacker's change_ext_conn: the plan of the change, and of its way back from FAILED_TEMP. */
export interface ExtConnWork<D> {
  plan(deps: LcmDeps, change: ExtConnChange): Promise<Plan<D>>;
  rollback(deps: LcmDeps, back: ExtConnRollback): Promise<Plan<D>>;
}

export interface Planner<D = unknown> {
  /** The registry's key, in messages too: "kubernetes", "openstack". */
  readonly name: string;
  /** The type (VimSpec.type) of the registered VIMs it serves. */
  readonly registeredType: string;
  /** The vimType values (lower case) of the vimConnectionInfo entries it serves. */
  readonly vimTypes: ReadonlySet<string>;
  /** How it reads VIMs of its kind (registered and inline). */
  readonly vims: VimReader;
  /** Its infra-driver for a VIM, from the lcm dependencies. */
  connect(deps: LcmDeps, vim: VimConnection): Promise<D>;
  instantiate: PlanOperation<D>;
  scale: PlanOperation<D>;
  heal: PlanOperation<D>;
  terminate: PlanOperation<D>;
  changePackage: PlanOperation<D>;
  /** The way back from the FAILED_TEMP occurrence `op` (its journal and the state before it). */
  rollback(deps: LcmDeps, instance: VnfInstance, op: LcmOpOcc, source: string): Promise<Plan<D>>;
  /** The INSTANTIATED instance as it is at its VIM now (vnf-describe); writes nothing. Absent: its VIMs cannot be described. */
  describe?(deps: LcmDeps, instance: VnfInstance, signal: AbortSignal): Promise<VnfLiveState>;
  /** The INSTANTIATED instance's VNFCs and VDU replicas now (vnf-sync); writes nothing. Absent: its VIMs cannot be synced. */
  liveScale?(deps: LcmDeps, instance: VnfInstance, signal: AbortSignal): Promise<LiveScale>;
  /** vnf-update's work at the VIM. Absent: records only, and the VIM may change. */
  modify?: ModifyWork<D>;
  /** change-ext-conn. Absent: refused, with `extConnRefusal` as the reason and hint. */
  changeExtConn?: ExtConnWork<D>;
  /** Why this planner's VNFs do not change external connectivity, and what to do instead. */
  readonly extConnRefusal?: { reason: string; hint: string };
  /** vnf-adopt: takes over a VNF another VNF manager (Tacker) instantiated on a VIM of this kind. Absent: its VIMs cannot be adopted from. */
  adopt?: PlanAdoption<D>;
}
