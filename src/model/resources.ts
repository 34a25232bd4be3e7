/**
 * What an operation touches at the VIM, as the occurrence's journal and the
 * instance record it: resource references, journal steps and VNFCs.
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
