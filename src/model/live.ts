/**
 * What an instance is at its VIM now (vnf-describe) and what vnf-sync reads
 * back from it: live objects or Heat resources as a tree, their readiness,
 * events and drift from what vnfm recorded.
 */
import type { Vnfc } from './resources.js';

/** One event of a live object (Kubernetes core/v1 Event, Heat event), oldest first. */
export interface LiveEvent {
  type: string;
  reason: string;
  message: string;
  count: number;
  time?: string;
}

/** An object (or Heat resource) as it is now, with what it owns. */
export interface LiveNode {
  /** Kubernetes kind (Deployment) or Heat resource type (OS::Nova::Server). */
  kind: string;
  /** The object's name, or the resource's name in its template. */
  name: string;
  namespace?: string;
  /** Heat: the physical resource id. */
  id?: string;
  /** vnfm recorded it (applied it, or it is a Helm release's, or a stack's own resource) rather than found it owned by one. */
  applied: boolean;
  exists: boolean;
  ready: boolean;
  /** "ready", what it waits for, a status reason, or "deleted". */
  reason: string;
  /** A workload's spec.replicas, a scaling group's size. */
  replicas?: number;
  /** How it differs from what vnfm recorded. */
  drift: string[];
  /** The last events of an object not ready. */
  events: LiveEvent[];
  children: LiveNode[];
}

/** A Helm release of an instance, as the instance records it. */
export interface LiveRelease {
  name: string;
  namespace: string;
  revision: number;
  /** The chart in the package. */
  chart: string;
  /** The VDUs whose workloads it holds. */
  vdus: string[];
}

export interface VnfLiveState {
  vnfInstanceId: string;
  vnfInstanceName?: string;
  /** The planner that read it: kubernetes, helm, openstack. */
  vimType: string;
  /** The VIM's name (an inline VIM's key in vimConnectionInfo). */
  vim: string;
  /** A registered VIM's id. */
  vimId?: string;
  /** Kubernetes: the instance's namespace; Heat: the stack's name. */
  namespace?: string;
  stack?: string;
  /** Helm: the releases the instance records, in install order (their objects are in `objects`). */
  releases?: LiveRelease[];
  objects: LiveNode[];
  /** Every difference, one line each, `Kind/name: what` (the drift of every node and of the recorded VDUs). */
  drift: string[];
  /** Every object exists and is ready. */
  ready: boolean;
  /**
   * The instance's last operation when it stopped short (FAILED_TEMP, or
   * FAILED after op-fail). `fromJournal`: the instance records nothing at
   * the VIM (a first instantiate that failed), so the objects shown are
   * those the operation's journal records as created.
   */
  lastOperation?: { id: string; operation: string; operationState: string; error?: string; fromJournal: boolean };
}

/** The live VNFCs and replicas of each VDU, as vnf-sync records them. */
export interface LiveScale {
  vnfcs: Vnfc[];
  /** VDU id → its workload's replicas now (spec.replicas; the VNFC count where there is none). */
  replicas: Record<string, number>;
  /** vimConnectionId to record on vnfcResourceInfo. */
  vimConnectionId?: string;
}
