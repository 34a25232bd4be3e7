/**
 * The Kubernetes API sandbox (the @vnfm/kube-sandbox package) as the
 * `sandbox` and `demo` commands use it: loaded at first use (the bundle keeps
 * it in a chunk of its own), and its errors made vnfm's. The package knows
 * nothing of vnfm; what it throws for its user to act on (a state directory
 * or a config file it cannot use) is a SandboxError, here a failure (exit 1)
 * with the same message and hint.
 */
import type { Sandbox, SandboxConfigPaths, SandboxEndpoint, SandboxOptions } from '@vnfm/kube-sandbox';
import { VnfmError } from '../errors.js';

export type { Sandbox };

export interface SandboxServer {
  startSandbox(options: SandboxOptions): Promise<Sandbox>;
  writeSandboxConfigs(sandbox: SandboxEndpoint, paths: SandboxConfigPaths): void;
}

/** The sandbox package, loaded now, with its errors turned into vnfm's. */
export async function loadSandbox(): Promise<SandboxServer> {
  const sandbox = await import('@vnfm/kube-sandbox');
  const asVnfm = (err: unknown): unknown => (err instanceof sandbox.SandboxError ? new VnfmError(err.message, { hint: err.hint, cause: err }) : err);
  return {
    startSandbox: (options) =>
      sandbox.startSandbox(options).catch((err: unknown) => {
        throw asVnfm(err);
      }),
    writeSandboxConfigs: (endpoint, paths) => {
      try {
        sandbox.writeSandboxConfigs(endpoint, paths);
      } catch (err) {
        throw asVnfm(err);
      }
    },
  };
}
