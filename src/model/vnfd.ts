/**
 * The VNFD as vnfm uses it: the TOSCA Simple Profile 1.2 service templates of
 * a package, read with the ETSI NFV SOL001 types into what the lifecycle
 * needs — the VNF's identity, its deployment flavours, their VDUs, scaling
 * aspects, instantiation levels and Vnflcm hooks. Names follow SOL001
 * (aspect, delta, level, VDU); the TOSCA node template names (`VDU1`) are the
 * keys, as Tacker uses them.
 */

/** The management-driver hooks vnfm runs around an operation (`interfaces.Vnflcm.<hook>`). */
export const LCM_HOOKS = [
  'instantiate_start',
  'instantiate_end',
  'scale_start',
  'scale_end',
  'heal_start',
  'heal_end',
  'terminate_start',
  'terminate_end',
  'change_current_package_start',
  'change_current_package_end',
  'modify_information_start',
  'modify_information_end',
  'change_external_connectivity_start',
  'change_external_connectivity_end',
] as const;
export type LcmHook = (typeof LCM_HOOKS)[number];

/** One `interfaces.Vnflcm` hook and the artifact its `implementation` names. */
export interface HookImplementation {
  /** The artifact name written in `implementation` (or its `primary`). */
  implementation: string;
  /** The artifact's file as a package path, when it resolved to a member. */
  artifactFile?: string;
  /** The artifact's TOSCA type, e.g. `tosca.artifacts.Implementation.Python`. */
  artifactType?: string;
}

/** An import of a definitions file, and what it resolved to. */
export interface VnfdImport {
  /** The file that holds the `imports:` entry. */
  from: string;
  /** The reference as written. */
  ref: string;
  /** The package member it resolved to. */
  resolved?: string;
  /** Set when it names an ETSI SOL001 type file that vnfm supplies itself. */
  builtin?: boolean;
}

/** `vdu_profile`: how many VNFC instances of a VDU a flavour permits. */
export interface VduProfile {
  minNumberOfInstances: number;
  maxNumberOfInstances: number;
}

/** `sw_image_data` with the `sw_image` artifact's file, for VM VDUs and block storage. */
export interface SwImage {
  name: string;
  version?: string;
  checksum?: { algorithm: string; hash: string };
  containerFormat?: string;
  diskFormat?: string;
  minDisk?: string;
  minRam?: string;
  size?: string;
  /** The `sw_image` artifact's file as a package path, when the package carries the image. */
  file?: string;
  /** The artifact's file when it is a URL (`https://…`): an image outside the package, neither checked nor uploaded by vnfm. */
  url?: string;
  /** Where the node's sw_image_data is written, for messages: the definitions file, and the line of its checksum hash (else of sw_image_data). */
  source?: { file: string; line?: number };
}

/** The `virtual_compute` capability of a VM VDU. */
export interface VirtualCompute {
  /** `requested_additional_capabilities.*.requested_additional_capability_name`: the Nova flavor Tacker uses. */
  flavorName?: string;
  numVirtualCpu?: number;
  virtualMemSize?: string;
  localStorageSizes: string[];
}

/** A `tosca.nodes.nfv.Vdu.Compute` node template. */
export interface Vdu {
  /** The node template name (`VDU1`): what policies target and requests name. */
  nodeName: string;
  /** `properties.name`: for a CNF, the Kubernetes workload's metadata.name. */
  name: string;
  type: string;
  description?: string;
  vduProfile: VduProfile;
  swImage?: SwImage;
  virtualCompute?: VirtualCompute;
  /** Node names from `requirements` (virtual_storage may repeat). */
  requirements: { virtualStorage: string[]; other: Array<{ name: string; target: string }> };
  isComputeNode: true;
}

/** A `tosca.nodes.nfv.Vdu.Virtual*Storage` node template. */
export interface VirtualStorage {
  nodeName: string;
  type: string;
  swImage?: SwImage;
  /** `virtual_block_storage_data.size_of_storage` and the like, as written. */
  sizeOfStorage?: string;
  isComputeNode: false;
}

/** A connection point (`tosca.nodes.nfv.VduCp`, `VnfExtCp`). */
export interface ConnectionPoint {
  nodeName: string;
  type: string;
  /** The VDU node this CP binds to (`virtual_binding`). */
  vdu?: string;
  /** The internal virtual link node (`virtual_link`), absent for an external CP. */
  virtualLink?: string;
  order?: number;
  layerProtocols: string[];
  /** `vnic_type` (normal, direct, macvtap…): the port's binding:vnic_type. */
  vnicType?: string;
}

/** A `tosca.nodes.nfv.VnfVirtualLink` node template. */
export interface VirtualLink {
  nodeName: string;
  type: string;
  description?: string;
  layerProtocols: string[];
  /** `vl_profile.virtual_link_protocol_data[].l3_protocol_data`, where given. */
  l3: Array<{ ipVersion?: string; cidr?: string; name?: string }>;
  /** `vl_profile.max_bitrate_requirements` (bits per second), where given as numbers. */
  maxBitrate?: { root?: number; leaf?: number };
}

/** A scaling aspect from `tosca.policies.nfv.ScalingAspects`, with the VDU deltas that realise it. */
export interface ScalingAspect {
  id: string;
  name: string;
  description?: string;
  maxScaleLevel: number;
  stepDeltas: string[];
  /** From VduScalingAspectDeltas: VDU node → delta id → number_of_instances added per step. */
  vduDeltas: Record<string, Record<string, number>>;
}

export interface InstantiationLevel {
  id: string;
  description?: string;
  /** aspect id → scale level at this instantiation level. */
  scaleInfo: Record<string, { scaleLevel: number }>;
  /** From VduInstantiationLevels: VDU node → number_of_instances. */
  vduInstances: Record<string, number>;
}

export interface AffinityRule {
  policyName: string;
  kind: 'affinity' | 'anti-affinity';
  scope?: string;
  /** VDU, virtual link or placement group names, as written. */
  targets: string[];
}

/** A deployment flavour: one `substitution_mappings` (usually one `Definitions/*df*.yaml`). */
export interface Flavour {
  id: string;
  description?: string;
  /** The definitions file the flavour's topology lives in. */
  file: string;
  vdus: Record<string, Vdu>;
  storages: Record<string, VirtualStorage>;
  cps: Record<string, ConnectionPoint>;
  virtualLinks: Record<string, VirtualLink>;
  aspects: Record<string, ScalingAspect>;
  /** From VduInitialDelta: VDU node → number_of_instances. */
  initialDeltas: Record<string, number>;
  instantiationLevels: Record<string, InstantiationLevel>;
  defaultLevel?: string;
  affinityRules: AffinityRule[];
  /** `tosca.groups.nfv.PlacementGroup` name → members. */
  placementGroups: Record<string, string[]>;
  hooks: Partial<Record<LcmHook, HookImplementation>>;
  /**
   * The flavour_id values the VNF node type allows (valid_values or equal),
   * set only when this flavour's id is not among them: a SOL001 slip that
   * Tacker onboards and instantiates all the same, and so does vnfm, warning.
   */
  typeAllowsOnly?: string[];
}

/** The whole descriptor. */
export interface Vnfd {
  /** `descriptor_id`: the vnfdId requests and the store use. */
  id: string;
  provider: string;
  productName: string;
  softwareVersion: string;
  descriptorVersion: string;
  vnfmInfo: string[];
  /** The package-defined node type of the VNF (derived from tosca.nodes.nfv.VNF). */
  vnfNodeType: string;
  flavours: Record<string, Flavour>;
  /** The Entry-Definitions file. */
  topFile: string;
  imports: VnfdImport[];
  /** Every definitions file read, top file first. */
  files: string[];
}
