import type { Finding, VnfPackage } from '../../csar/index.js';
import type { View } from './printer.js';
import { shortId, shortTime } from './names.js';

/** SOL005 VnfPkgInfo field names, as Tacker prints them. */
export const packageView: View<VnfPackage> = {
  empty: 'No VNF packages onboarded. Onboard one with: vnfm vnfpkg-onboard PACKAGE.zip',
  columns: [
    { header: 'ID', key: 'id', cell: (p) => shortId(p.id), full: (p) => p.id },
    { header: 'NAME', key: 'name', cell: (p) => p.name ?? '' },
    { header: 'PRODUCT', key: 'vnfProductName', cell: (p) => p.vnfProductName },
    { header: 'VERSION', key: 'vnfSoftwareVersion', cell: (p) => p.vnfSoftwareVersion },
    { header: 'STATE', key: 'operationalState', cell: (p) => p.operationalState },
    { header: 'USAGE', key: 'usageState', cell: (p) => p.usageState },
    { header: 'VNFD ID', key: 'vnfdId', cell: (p) => p.vnfdId, wide: true },
    { header: 'PROVIDER', key: 'vnfProvider', cell: (p) => p.vnfProvider, wide: true },
    { header: 'ONBOARDING', key: 'onboardingState', cell: (p) => p.onboardingState, wide: true },
    { header: 'CREATED', key: 'createdAt', cell: (p) => shortTime(p.createdAt), full: (p) => p.createdAt, wide: true },
  ],
  toData: (p) => ({
    id: p.id,
    ...(p.name ? { name: p.name } : {}),
    vnfdId: p.vnfdId,
    vnfProvider: p.vnfProvider,
    vnfProductName: p.vnfProductName,
    vnfSoftwareVersion: p.vnfSoftwareVersion,
    vnfdVersion: p.vnfdVersion,
    checksum: p.checksum,
    packageSize: p.sizeBytes,
    onboardingState: p.onboardingState,
    operationalState: p.operationalState,
    usageState: p.usageState,
    userDefinedData: p.userDefinedData,
    flavours: p.summary.flavours,
    artifacts: p.summary.artifacts,
    kubernetesDefinitions: p.summary.kubernetesDefinitions,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  }),
};

export const findingView: View<Finding> = {
  empty: 'No findings.',
  columns: [
    { header: 'SEVERITY', key: 'severity', cell: (f) => f.severity },
    { header: 'CODE', key: 'code', cell: (f) => f.code },
    { header: 'FILE', key: 'file', cell: (f) => (f.file ? f.file + (f.line ? `:${f.line}` : '') : '') },
    { header: 'MESSAGE', key: 'message', cell: (f) => f.message + (f.hint ? ` (hint: ${f.hint})` : '') },
  ],
  toData: (f) => ({ ...f }),
};
