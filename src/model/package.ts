/** A VNF package as the store keeps it once onboarded (SOL005 VnfPkgInfo, Tacker's names). */

export type OnboardingState = 'CREATED' | 'UPLOADING' | 'PROCESSING' | 'ONBOARDED' | 'ERROR';
export type OperationalState = 'ENABLED' | 'DISABLED';
export type UsageState = 'IN_USE' | 'NOT_IN_USE';

/** What `vnfpkg-show` prints about the VNFD, kept so showing a package reads no file. */
export interface PackageSummary {
  flavours: {
    id: string;
    description?: string;
    vdus: { id: string; name: string; min: number; max: number }[];
    aspects: { id: string; maxScaleLevel: number; vdus: string[] }[];
    instantiationLevels: { id: string; vduInstances: Record<string, number> }[];
    defaultLevel?: string;
    hooks: Record<string, string>;
  }[];
  /** Files/… members: Kubernetes definitions, images, scripts. */
  artifacts: string[];
  kubernetesDefinitions: string[];
}

export interface VnfPackage {
  id: string;
  /** Optional operator-chosen name, unique, for finding the package. */
  name?: string;
  vnfdId: string;
  vnfProvider: string;
  vnfProductName: string;
  vnfSoftwareVersion: string;
  vnfdVersion: string;
  onboardingState: OnboardingState;
  operationalState: OperationalState;
  usageState: UsageState;
  userDefinedData: Record<string, string>;
  checksum: { algorithm: 'SHA-256'; hash: string };
  sizeBytes: number;
  summary: PackageSummary;
  createdAt: string;
  updatedAt: string;
}

/** The fields by which an instance names its package (SOL003 VnfInstance), from the package. */
export function packageIdentity(pkg: Pick<VnfPackage, 'id' | 'vnfdId' | 'vnfProvider' | 'vnfProductName' | 'vnfSoftwareVersion' | 'vnfdVersion'>) {
  return {
    vnfdId: pkg.vnfdId,
    vnfPkgId: pkg.id,
    vnfProvider: pkg.vnfProvider,
    vnfProductName: pkg.vnfProductName,
    vnfSoftwareVersion: pkg.vnfSoftwareVersion,
    vnfdVersion: pkg.vnfdVersion,
  };
}
