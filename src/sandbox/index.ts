/**
 * The sandbox: an in-process Kubernetes API emulator for tests and demos.
 * It imports nothing from infra/ or vim/, so it can check their behaviour
 * instead of sharing their assumptions.
 */
export { startSandbox, SANDBOX_KUBERNETES_VERSION, type Sandbox, type SandboxOptions } from './server.js';
export {
  writeSandboxConfigs,
  renderVimConfig,
  renderKubeconfig,
  SANDBOX_CONTEXT,
  type SandboxConfigPaths,
  type SandboxEndpoint,
} from './configs.js';
export { generateSandboxCerts, type SandboxCerts, type CertOptions } from './certs.js';
