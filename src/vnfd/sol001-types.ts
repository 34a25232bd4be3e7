/**
 * The part of the ETSI NFV SOL001 type system vnfm reasons about, built in so
 * that a package importing `etsi_nfv_sol001_common_types.yaml` /
 * `etsi_nfv_sol001_vnfd_types.yaml` (or their forge.etsi.org URLs) without
 * shipping them still resolves: vnfm works offline and only needs the
 * derived_from chains, not the full property schemas.
 *
 * Names and parents as published in ETSI GS NFV-SOL 001 v2.6.1 (the version
 * Tacker's samples ship); the v3.x releases keep every name used here.
 */

/** The file names the ETSI type definitions go by, in any SOL001 version. */
export const SOL001_TYPE_FILES = ['etsi_nfv_sol001_common_types.yaml', 'etsi_nfv_sol001_vnfd_types.yaml'] as const;

export const SOL001_VERSION = '2.6.1';

/** type name → the type it is derived from (TOSCA normative roots map to nothing). */
export const SOL001_DERIVED_FROM: Readonly<Record<string, string | undefined>> = {
  // TOSCA Simple Profile 1.2 normative roots.
  'tosca.nodes.Root': undefined,
  'tosca.policies.Root': undefined,
  'tosca.policies.Placement': 'tosca.policies.Root',
  'tosca.policies.Scaling': 'tosca.policies.Root',
  'tosca.groups.Root': undefined,
  'tosca.datatypes.Root': undefined,
  'tosca.interfaces.Root': undefined,
  'tosca.artifacts.Root': undefined,
  'tosca.artifacts.Implementation': 'tosca.artifacts.Root',
  'tosca.artifacts.Implementation.Bash': 'tosca.artifacts.Implementation',
  'tosca.artifacts.Implementation.Python': 'tosca.artifacts.Implementation',
  'tosca.artifacts.Deployment': 'tosca.artifacts.Root',
  'tosca.artifacts.Deployment.Image': 'tosca.artifacts.Deployment',
  // The other TOSCA Simple Profile 1.2 normative node, group and policy types, which
  // Tacker's TOSCA parser knows without an import.
  'tosca.nodes.Compute': 'tosca.nodes.Root',
  'tosca.nodes.SoftwareComponent': 'tosca.nodes.Root',
  'tosca.nodes.WebServer': 'tosca.nodes.SoftwareComponent',
  'tosca.nodes.WebApplication': 'tosca.nodes.Root',
  'tosca.nodes.DBMS': 'tosca.nodes.SoftwareComponent',
  'tosca.nodes.Database': 'tosca.nodes.Root',
  'tosca.nodes.Storage.ObjectStorage': 'tosca.nodes.Root',
  'tosca.nodes.Storage.BlockStorage': 'tosca.nodes.Root',
  'tosca.nodes.Container.Runtime': 'tosca.nodes.SoftwareComponent',
  'tosca.nodes.Container.Application': 'tosca.nodes.Root',
  'tosca.nodes.LoadBalancer': 'tosca.nodes.Root',
  'tosca.nodes.network.Network': 'tosca.nodes.Root',
  'tosca.nodes.network.Port': 'tosca.nodes.Root',
  'tosca.policies.Update': 'tosca.policies.Root',
  'tosca.policies.Performance': 'tosca.policies.Root',
  'tosca.policies.Monitoring': 'tosca.policies.Root',

  // SOL001 node types.
  'tosca.nodes.nfv.VNF': 'tosca.nodes.Root',
  'tosca.nodes.nfv.Cp': 'tosca.nodes.Root',
  'tosca.nodes.nfv.VnfExtCp': 'tosca.nodes.nfv.Cp',
  'tosca.nodes.nfv.VduCp': 'tosca.nodes.nfv.Cp',
  'tosca.nodes.nfv.Vdu.Compute': 'tosca.nodes.Root',
  'tosca.nodes.nfv.Vdu.VirtualBlockStorage': 'tosca.nodes.Root',
  'tosca.nodes.nfv.Vdu.VirtualObjectStorage': 'tosca.nodes.Root',
  'tosca.nodes.nfv.Vdu.VirtualFileStorage': 'tosca.nodes.Root',
  'tosca.nodes.nfv.VnfVirtualLink': 'tosca.nodes.Root',
  'tosca.nodes.nfv.VipCp': 'tosca.nodes.Root',

  // SOL001 policy types.
  'tosca.policies.nfv.InstantiationLevels': 'tosca.policies.Root',
  'tosca.policies.nfv.VduInstantiationLevels': 'tosca.policies.Root',
  'tosca.policies.nfv.VirtualLinkInstantiationLevels': 'tosca.policies.Root',
  'tosca.policies.nfv.ScalingAspects': 'tosca.policies.Root',
  'tosca.policies.nfv.VduScalingAspectDeltas': 'tosca.policies.Root',
  'tosca.policies.nfv.VirtualLinkBitrateScalingAspectDeltas': 'tosca.policies.Root',
  'tosca.policies.nfv.VduInitialDelta': 'tosca.policies.Root',
  'tosca.policies.nfv.VirtualLinkBitrateInitialDelta': 'tosca.policies.Root',
  'tosca.policies.nfv.AffinityRule': 'tosca.policies.Placement',
  'tosca.policies.nfv.AntiAffinityRule': 'tosca.policies.Placement',
  'tosca.policies.nfv.SecurityGroupRule': 'tosca.policies.Root',
  'tosca.policies.nfv.SupportedVnfInterface': 'tosca.policies.Root',
  'tosca.policies.nfv.VnfIndicator': 'tosca.policies.Root',
  'tosca.policies.nfv.VnfPackageChange': 'tosca.policies.Root',

  // SOL001 group, interface and artifact types.
  'tosca.groups.nfv.PlacementGroup': 'tosca.groups.Root',
  'tosca.interfaces.nfv.Vnflcm': 'tosca.interfaces.Root',
  'tosca.artifacts.nfv.SwImage': 'tosca.artifacts.Deployment.Image',

  // SOL001 data types vnfm reads.
  'tosca.datatypes.nfv.VduProfile': 'tosca.datatypes.Root',
  'tosca.datatypes.nfv.SwImageData': 'tosca.datatypes.Root',
  'tosca.datatypes.nfv.ChecksumData': 'tosca.datatypes.Root',
  'tosca.datatypes.nfv.VduLevel': 'tosca.datatypes.Root',
  'tosca.datatypes.nfv.ScalingAspect': 'tosca.datatypes.Root',
  'tosca.datatypes.nfv.ScaleInfo': 'tosca.datatypes.Root',
  'tosca.datatypes.nfv.InstantiationLevel': 'tosca.datatypes.Root',
  'tosca.datatypes.nfv.VlProfile': 'tosca.datatypes.Root',
  'tosca.datatypes.nfv.ConnectivityType': 'tosca.datatypes.Root',
  'tosca.datatypes.nfv.VirtualLinkProtocolData': 'tosca.datatypes.Root',
  'tosca.datatypes.nfv.L3ProtocolData': 'tosca.datatypes.Root',
  'tosca.datatypes.nfv.VnfLcmOperationsConfiguration': 'tosca.datatypes.Root',
  'tosca.datatypes.nfv.VnfOperationAdditionalParameters': 'tosca.datatypes.Root',
};

/** The VNF node properties SOL001 marks required, which vnfm needs to identify the package. */
export const VNF_REQUIRED_PROPERTIES = ['descriptor_id', 'descriptor_version', 'provider', 'product_name', 'software_version', 'vnfm_info'] as const;

export const NODE_VNF = 'tosca.nodes.nfv.VNF';
export const NODE_VDU_COMPUTE = 'tosca.nodes.nfv.Vdu.Compute';
export const NODE_VDU_STORAGE = ['tosca.nodes.nfv.Vdu.VirtualBlockStorage', 'tosca.nodes.nfv.Vdu.VirtualObjectStorage', 'tosca.nodes.nfv.Vdu.VirtualFileStorage'] as const;
export const NODE_CP = 'tosca.nodes.nfv.Cp';
export const NODE_VIRTUAL_LINK = 'tosca.nodes.nfv.VnfVirtualLink';
export const POLICY = {
  scalingAspects: 'tosca.policies.nfv.ScalingAspects',
  vduInitialDelta: 'tosca.policies.nfv.VduInitialDelta',
  vduScalingAspectDeltas: 'tosca.policies.nfv.VduScalingAspectDeltas',
  instantiationLevels: 'tosca.policies.nfv.InstantiationLevels',
  vduInstantiationLevels: 'tosca.policies.nfv.VduInstantiationLevels',
  affinity: 'tosca.policies.nfv.AffinityRule',
  antiAffinity: 'tosca.policies.nfv.AntiAffinityRule',
} as const;
export const GROUP_PLACEMENT = 'tosca.groups.nfv.PlacementGroup';

/** True for a reference to an ETSI SOL001 type file by bare name, relative path or forge.etsi.org URL. */
export function isSol001TypeFile(ref: string): boolean {
  const base = ref.split(/[/\\]/).pop() ?? ref;
  return (SOL001_TYPE_FILES as readonly string[]).includes(base);
}

/**
 * A type table: the built-in SOL001 chains overlaid with the types a package
 * defines. `isA` walks derived_from with a bound, so a cycle in a package's
 * types ends the walk rather than the process.
 */
export class TypeTable {
  private readonly derived = new Map<string, string | undefined>(Object.entries(SOL001_DERIVED_FROM));

  define(name: string, derivedFrom: string | undefined): void {
    this.derived.set(name, derivedFrom);
  }

  has(name: string): boolean {
    return this.derived.has(name);
  }

  parentOf(name: string): string | undefined {
    return this.derived.get(name);
  }

  /** Whether `name` is `base` or derives from it. */
  isA(name: string | undefined, base: string): boolean {
    let current = name;
    for (let hops = 0; current !== undefined && hops < 64; hops++) {
      if (current === base) return true;
      current = this.derived.get(current);
    }
    return false;
  }

  isAnyOf(name: string | undefined, bases: readonly string[]): boolean {
    return bases.some((b) => this.isA(name, b));
  }
}
