/**
 * The contract between the operation engine (`lcm/`) and the infra-drivers.
 * The engine turns a request, the VNFD and the instance into concrete driver
 * inputs; a driver talks to one kind of VIM and reports what it does. Drivers
 * never import the engine.
 */

/** Something the driver made or changed, for the occurrence's journal and resource changes. */
export interface ResourceRef {
  apiVersion: string;
  kind: string;
  name: string;
  /** Absent for cluster-scoped kinds. */
  namespace?: string;
}

/** One step of an operation, recorded before it is taken and again when it is done. */
export interface JournalStep {
  action: 'create' | 'update' | 'apply' | 'scale' | 'delete' | 'wait';
  resource: ResourceRef;
  state: 'intended' | 'done';
  detail?: string;
}

/** Where a driver records its steps; the engine persists each call before returning. */
export interface Journal {
  record(step: JournalStep): void;
  /** Every step of this occurrence so far, including those of earlier attempts (retry). */
  steps(): readonly JournalStep[];
}

/** Progress for the user: which resource waits for what. */
export interface DriverEvent {
  resource?: ResourceRef;
  /** e.g. "created", "waiting for 2/3 replicas ready", "ready", "deleted". */
  message: string;
  /** True once the resource has reached what the step waits for. */
  done?: boolean;
}

export interface DriverContext {
  journal: Journal;
  report(event: DriverEvent): void;
  /** Aborted on Ctrl-C and on --timeout; drivers stop waiting and throw. */
  signal: AbortSignal;
}

/** A VNFC as the instance records it (Tacker's vnfcResourceInfo + vnfcInfo). */
export interface Vnfc {
  /** `<vduId>-<resource name>`, Tacker's vnfcInfo id. */
  id: string;
  vduId: string;
  /** The pod (or Machine, or server) name / id at the VIM. */
  resourceId: string;
  /** The kind of the VIM-level resource: Pod, Machine, OS::Nova::Server. */
  vimLevelResourceType: string;
  /** The workload the VNFC belongs to (Deployment vdu1). */
  owner?: ResourceRef;
  state: 'STARTED' | 'STOPPED';
  /** Driver-specific facts (pod phase, node, addresses). */
  metadata?: Record<string, unknown>;
}
