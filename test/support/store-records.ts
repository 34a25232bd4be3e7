/** Records the store tests insert, with the fields a repository requires. */
import type { VnfInstance } from '../../src/lcm/index.js';
import type { VnfPackage } from '../../src/model/package.js';

/** An onboarded package record (id p1, vnfdId vnfd-1), created and updated at 2026-01-01T00:00:00Z. */
export function packageRecord(over: Partial<VnfPackage> = {}): VnfPackage {
  const at = '2026-01-01T00:00:00.000Z';
  return {
    id: 'p1',
    vnfdId: 'vnfd-1',
    vnfProvider: 'ACME',
    vnfProductName: 'cnf',
    vnfSoftwareVersion: '1.0',
    vnfdVersion: '1.0',
    onboardingState: 'ONBOARDED',
    operationalState: 'ENABLED',
    usageState: 'NOT_IN_USE',
    userDefinedData: {},
    checksum: { algorithm: 'SHA-256', hash: 'ab'.repeat(32) },
    sizeBytes: 10,
    summary: { flavours: [], artifacts: [], kubernetesDefinitions: [] },
    createdAt: at,
    updatedAt: at,
    ...over,
  };
}

/** A NOT_INSTANTIATED instance record of package p1 (vnfdId vnfd-1), without a name unless given, created and updated at 2026-01-01T00:00:00Z. */
export function instanceRecord(over: Partial<VnfInstance> = {}): VnfInstance {
  const at = '2026-01-01T00:00:00.000Z';
  return {
    id: 'inst-1',
    vnfInstanceDescription: '',
    vnfdId: 'vnfd-1',
    vnfPkgId: 'p1',
    vnfProvider: 'ACME',
    vnfProductName: 'cnf',
    vnfSoftwareVersion: '1.0',
    vnfdVersion: '1.0',
    instantiationState: 'NOT_INSTANTIATED',
    createdAt: at,
    updatedAt: at,
    ...over,
  } as VnfInstance;
}
