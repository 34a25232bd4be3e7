/**
 * The data model every room shares, at the bottom of the layers: VNF
 * instances, LCM operation occurrences and their requests (SOL002/SOL003,
 * Tacker's names), VNFCs, resource references and journal steps, VIMs,
 * onboarded packages, a package's members and findings. Types and pure
 * functions over them only: nothing here imports anything else of vnfm's.
 */
export type * from './lcm.js';
export type * from './resources.js';
export type * from './readiness.js';
export type * from './vim.js';
export type * from './package.js';
export type { PackageFiles, Finding, Severity } from './package-files.js';
export { hasErrors } from './package-files.js';
export { vnfcRecords, vnfcsOf } from './vnfcs.js';
export { clustersOf } from './clusters.js';
export type * from './vnfd.js';
export { LCM_HOOKS } from './vnfd.js';
