/**
 * The contract every planner keeps: one per VIM type, each turning a
 * checked request into a Plan for its infra-driver (see index.ts for the
 * registry and how a planner is added).
 */
import type { LcmDeps, OperationOptions, Plan } from '../engine.js';
import type { LcmOpOcc, VimConnection, VnfInstance } from '../../model/lcm.js';
import type { VimReader } from '../vim-connection.js';
import type { LiveScale, VnfLiveState } from '../../model/live.js';

/**
 * Plans one operation on `instance` from its request `body` (normalised),
 * checking it against the package, the VIM and the instance's state before
 * anything changes. `retry` is set when an occurrence is planned again from
 * its recorded request.
 */
export type PlanOperation<D = unknown> = (deps: LcmDeps, instance: VnfInstance, body: unknown, source: string, retry: boolean, opts: OperationOptions) => Promise<Plan<D>>;

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
}
