/**
 * The sandbox: an in-process Kubernetes API emulator for tests and demos.
 * A package of its own: it imports nothing of vnfm's, so it can check vnfm's
 * drivers instead of sharing their assumptions.
 */
export { SandboxError, type SandboxErrorDetails } from './errors.js';
export { startSandbox, SANDBOX_KUBERNETES_VERSION, type Sandbox, type SandboxOptions } from './server.js';
export type { SandboxFaults, ObjectMatch, RequestFault } from './faults.js';
export type { ControllerOptions } from './controllers/index.js';
export type { WorkloadClusterEndpoint } from './controllers/cluster-api.js';
export { SANDBOX_NODES } from './controllers/index.js';
export type { WatchOptions } from './watch.js';
export { writeSandboxConfigs, renderVimConfig, renderKubeconfig, SANDBOX_CONTEXT, type SandboxConfigPaths, type SandboxEndpoint } from './configs.js';
export {
  generateSandboxCerts,
  generateSandboxCa,
  issueServerCert,
  serverCertRenewalReason,
  SERVER_CERT_RENEW_BEFORE_DAYS,
  type SandboxCerts,
  type SandboxCa,
  type ServerCert,
  type CertOptions,
} from './certs.js';
export { loadSandboxIdentity, SANDBOX_STATE_FILES, type SandboxIdentity, type LoadIdentityOptions, type LoadedIdentity } from './identity.js';
