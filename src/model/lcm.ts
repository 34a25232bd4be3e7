/**
 * VNF instances, LCM operation occurrences and the request bodies that start
 * operations, in SOL003 / Tacker v2 shapes and names.
 */
import type { ReadinessOverrides } from './readiness.js';
import type { JournalStep, ResourceRef } from './resources.js';
import type { VimSecrets, VimSpec } from './vim.js';

export type InstantiationState = 'NOT_INSTANTIATED' | 'INSTANTIATED';

export interface ScaleInfo {
  aspectId: string;
  scaleLevel: number;
}

/** Tacker's vnfcResourceInfo: the VIM-level resource (a pod) of one VNFC. */
export interface VnfcResourceInfo {
  /** The pod name. */
  id: string;
  vduId: string;
  computeResource: { vimConnectionId?: string; resourceId: string; vimLevelResourceType: string };
  metadata: Record<string, unknown>;
}

/** Tacker's vnfcInfo: id `<vduId>-<podName>`, what heal requests name. */
export interface VnfcInfo {
  id: string;
  vduId: string;
  vnfcResourceInfoId: string;
  vnfcState: 'STARTED' | 'STOPPED';
  /** Set by vnf-update's vnfcInfoModifications (JSON merge patch). */
  vnfcConfigurableProperties?: Record<string, unknown>;
}

export interface InstantiatedVnfInfo {
  flavourId: string;
  instantiationLevelId?: string;
  vnfState: 'STARTED' | 'STOPPED';
  scaleStatus: ScaleInfo[];
  maxScaleLevels: ScaleInfo[];
  vnfcResourceInfo: VnfcResourceInfo[];
  vnfcInfo: VnfcInfo[];
  /** Everything created at the VIM, in creation order (removed in reverse). */
  resources: ResourceRef[];
  metadata: {
    namespace: string;
    'lcm-kubernetes-def-files': string[];
    /** Replicas of each VDU now (VDU node name → count). */
    vduReplicas: Record<string, number>;
    /** What management drivers keep with the instance, by driver name (the VIMs capi-credentials registered). */
    mgmt?: Record<string, unknown>;
    /** The request's additionalParams.vnfm_readiness, for the operations that follow. */
    vnfm_readiness?: ReadinessOverrides;
    /** A Helm deployment (planners/helm.ts) of one release, under Tacker v2's names: the release (in `namespace`) and its revision now. */
    release_name?: string;
    revision?: number;
    /** The chart in the package (helm_chart_path, v1 helmchartfile_path). */
    helm_chart_path?: string;
    /** Values given on install (helm_parameters, v1 helmparameter). */
    helm_parameters?: Record<string, unknown>;
    /** v2: the request's helm_value_names. */
    helm_value_names?: Record<string, { replica?: string }>;
    /** v1: the request's helm_replica_values (aspect → value path). */
    helm_replica_values?: Record<string, string>;
    /** VDU → the chart value of its replicas, from either. */
    helm_replica_paths?: Record<string, string>;
    /**
     * A Helm deployment of several releases (Tacker v1's using_helm_install_param of several entries), in install order;
     * release_name, revision, helm_chart_path and helm_parameters are then absent (each release has its own).
     */
    helm_releases?: HelmReleaseRecord[];
    /** v1: the request's vdu_mapping (VDU → its workload and release). */
    vdu_mapping?: Record<string, VduMappingEntry>;
    /** An instance vnf-adopt took over: the Tacker API it came from, and when (writes before then are the instance's own). */
    vnfm_adopted?: AdoptedFrom;
  };
}

/** Where an adopted instance came from. */
export interface AdoptedFrom {
  /** Tacker's API the description was in. */
  tacker: 'v1' | 'v2';
  /** The time of the adoption (ISO 8601). */
  at: string;
}

/** One release of a Helm deployment of several, as the instance records it. */
export interface HelmReleaseRecord {
  release_name: string;
  /** Its revision now. */
  revision: number;
  /** The chart in the package (helmchartfile_path). */
  helm_chart_path: string;
  /** Values given on install (helmparameter). */
  helm_parameters: Record<string, unknown>;
  /** The VDUs whose workloads it holds: its replica values are set in it, its VNFCs are its pods. */
  vdus: string[];
}

/** An entry of Tacker v1's vdu_mapping: the workload whose pods are a VDU's VNFCs, and the Helm release holding it. */
export interface VduMappingEntry {
  name: string;
  kind: string;
  helmreleasename?: string;
}

/** SOL003 VnfInstance as vnfm keeps it. */
export interface VnfInstance {
  id: string;
  vnfInstanceName?: string;
  vnfInstanceDescription: string;
  vnfdId: string;
  vnfPkgId: string;
  vnfProvider: string;
  vnfProductName: string;
  vnfSoftwareVersion: string;
  vnfdVersion: string;
  instantiationState: InstantiationState;
  /** The registered VIM the instance runs on. */
  vimId?: string;
  /** For an inline VIM: the request's vimConnectionInfo, its credentials (accessInfo, ssl_ca_cert) sealed with the master key. */
  vimConnectionInfo?: Record<string, VimConnectionInfo>;
  instantiatedVnfInfo?: InstantiatedVnfInfo;
  /** SOL003 VnfInstance.metadata, set by vnf-update (JSON merge patch). */
  metadata?: Record<string, unknown>;
  /** SOL003 VnfInstance.extensions, set by vnf-update (JSON merge patch). */
  extensions?: Record<string, unknown>;
  /** SOL003 VnfInstance.vnfConfigurableProperties, set by vnf-update (JSON merge patch). */
  vnfConfigurableProperties?: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export type LcmOperation = 'INSTANTIATE' | 'SCALE' | 'HEAL' | 'TERMINATE' | 'CHANGE_VNFPKG';
export type LcmOperationState = 'STARTING' | 'PROCESSING' | 'COMPLETED' | 'FAILED_TEMP' | 'FAILED' | 'ROLLING_BACK' | 'ROLLED_BACK';

/** RFC 7807 problem details, as SOL013 uses them for an occurrence's error. */
export interface ProblemDetails {
  status: number;
  title: string;
  detail: string;
}

export interface AffectedVnfc {
  /** The vnfcInfo id `<vduId>-<podName>`. */
  id: string;
  vduId: string;
  changeType: 'ADDED' | 'REMOVED' | 'MODIFIED';
  computeResource: { resourceId: string; vimLevelResourceType: string };
}

export interface ResourceChanges {
  affectedVnfcs: AffectedVnfc[];
}

/** SOL003 VnfLcmOpOcc, with vnfm's journal of driver steps. */
export interface LcmOpOcc {
  id: string;
  vnfInstanceId: string;
  operation: LcmOperation;
  operationState: LcmOperationState;
  stateEnteredTime: string;
  startTime: string;
  operationParams: LcmRequest;
  error?: ProblemDetails;
  resourceChanges?: ResourceChanges;
  journal: JournalStep[];
  isAutomaticInvocation: boolean;
  /** The vnfm process running it, while it runs. */
  pid?: number;
}

/** The instance as it was before an operation, kept on the occurrence for rollback. */
export type PriorState = Pick<VnfInstance, 'vnfPkgId' | 'vnfdId' | 'instantiationState' | 'instantiatedVnfInfo'>;

/** One entry of Tacker v2's vimConnectionInfo map. */
export interface VimConnectionInfo {
  /** A registered VIM's id or name; for an inline VIM, any label. */
  vimId?: string;
  /** `kubernetes`, `ETSINFV.KUBERNETES.V_1`, `openstack`, `ETSINFV.OPENSTACK_KEYSTONE.V_3`. */
  vimType?: string;
  /** Inline VIM: `endpoint`, and `ssl_ca_cert` (PEM, or `None` to skip verification). */
  interfaceInfo?: Record<string, unknown>;
  /** Inline VIM credentials: `bearer_token`, `username` + `password`, or `client_cert` + `client_key`; kept sealed with the instance. */
  accessInfo?: Record<string, unknown>;
  extra?: Record<string, unknown>;
}

export interface InstantiateVnfRequest {
  flavourId: string;
  instantiationLevelId?: string;
  vimConnectionInfo?: Record<string, VimConnectionInfo>;
  extVirtualLinks?: unknown[];
  extManagedVirtualLinks?: unknown[];
  localizationLanguage?: string;
  additionalParams?: {
    'lcm-kubernetes-def-files'?: string[];
    namespace?: string;
    [key: string]: unknown;
  };
  extensions?: Record<string, unknown>;
}

export interface ScaleVnfRequest {
  type: 'SCALE_OUT' | 'SCALE_IN';
  aspectId: string;
  numberOfSteps?: number;
  additionalParams?: Record<string, unknown>;
  vimConnectionInfo?: Record<string, VimConnectionInfo>;
}

export interface HealVnfRequest {
  /** vnfcInfo ids; all VNFCs when absent or empty. */
  vnfcInstanceId?: string[];
  cause?: string;
  additionalParams?: Record<string, unknown>;
  vimConnectionInfo?: Record<string, VimConnectionInfo>;
}

export interface TerminateVnfRequest {
  terminationType: 'FORCEFUL' | 'GRACEFUL';
  gracefulTerminationTimeout?: number;
  additionalParams?: Record<string, unknown>;
  vimConnectionInfo?: Record<string, VimConnectionInfo>;
}

export interface ChangeCurrentVnfPkgRequest {
  vnfdId: string;
  extVirtualLinks?: unknown[];
  extManagedVirtualLinks?: unknown[];
  vimConnectionInfo?: Record<string, VimConnectionInfo>;
  additionalParams?: {
    'lcm-kubernetes-def-files'?: string[];
    namespace?: string;
    upgrade_type?: string;
    vdu_params?: unknown[];
    [key: string]: unknown;
  };
  extensions?: Record<string, unknown>;
}

/** SOL003 VnfInfoModificationRequest (Tacker `vnflcm update`); vnfPkgId is Tacker v1's form of vnfdId. */
export interface VnfInfoModificationRequest {
  vnfInstanceName?: string;
  vnfInstanceDescription?: string;
  vnfdId?: string;
  vnfPkgId?: string;
  vnfConfigurableProperties?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
  vimConnectionInfo?: Record<string, VimConnectionInfo | null>;
  vnfcInfoModifications?: { id: string; vnfcConfigurableProperties: Record<string, unknown> }[];
}

export type LcmRequest = VnfInfoModificationRequest | InstantiateVnfRequest | ScaleVnfRequest | HealVnfRequest | TerminateVnfRequest | ChangeCurrentVnfPkgRequest;

/**
 * The VIM an operation runs on, secrets opened: a registered VIM, or an
 * inline one from the request (then `inline` and no `id` in the store).
 */
export interface VimConnection {
  id?: string;
  name: string;
  inline: boolean;
  spec: VimSpec;
  secrets: VimSecrets;
}

export type { JournalStep, ResourceRef };
