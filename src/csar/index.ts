/**
 * VNF packages (ETSI SOL004 CSARs): reading them safely, validating them,
 * building them, and keeping onboarded ones under VNFM_HOME (their zips,
 * read in place).
 */
export type { Finding, PackageFiles, Severity } from '../model/package-files.js';
export type { VnfPackage, PackageSummary, OperationalState, UsageState, OnboardingState } from '../model/package.js';
export { openPackage, type PackageLimits } from './open-package.js';
export { PackageError } from './package-error.js';
export { buildCsar } from './build.js';
export { validatePackage, type PackageValidation } from './validate.js';
export {
  onboardPackage,
  listPackages,
  getPackage,
  setOperationalState,
  deletePackage,
  downloadPackage,
  readVnfdFiles,
  ensurePackageContent,
  type PackageDeps,
} from './packages.js';
export { openStoredZip, packageZip, releaseWorkDirs, unpackedWorkDir } from './stored-package.js';
