/**
 * Client configuration for a running sandbox: a Tacker `vim-config.yaml`
 * (what `vim-register --config-file` reads) and a kubeconfig (what kubectl
 * and `vim-register --kubeconfig` read). Both carry the bearer token, so
 * they are written readable by their owner only.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import yaml from 'js-yaml';
import { SandboxError } from './errors.js';
import type { Sandbox } from './server.js';

/** The context, cluster and user name in the kubeconfig. */
export const SANDBOX_CONTEXT = 'vnfm-sandbox';

/** What of a sandbox the configs need: where it is and how to trust and authenticate to it. */
export type SandboxEndpoint = Pick<Sandbox, 'url' | 'caPem' | 'token'>;

export interface SandboxConfigPaths {
  /** Where to write the vim-config.yaml; not written when absent. */
  vimConfigPath?: string;
  /** Where to write the kubeconfig; not written when absent. */
  kubeconfigPath?: string;
  /** The default namespace (`project_name`, the context's namespace); default `default`. */
  namespace?: string;
}

/** The text of a Tacker vim-config.yaml for the sandbox. */
export function renderVimConfig(sandbox: SandboxEndpoint, namespace = 'default'): string {
  // js-yaml writes a multi-line string as a literal block scalar (`ssl_ca_cert: |`).
  return yaml.dump(
    {
      auth_url: sandbox.url,
      bearer_token: sandbox.token,
      ssl_ca_cert: sandbox.caPem,
      project_name: namespace,
      type: 'kubernetes',
    },
    { lineWidth: -1 },
  );
}

/** The text of a kubeconfig whose current context is the sandbox. */
export function renderKubeconfig(sandbox: SandboxEndpoint, namespace = 'default'): string {
  return yaml.dump(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: SANDBOX_CONTEXT,
          cluster: { server: sandbox.url, 'certificate-authority-data': Buffer.from(sandbox.caPem, 'utf8').toString('base64') },
        },
      ],
      users: [{ name: SANDBOX_CONTEXT, user: { token: sandbox.token } }],
      contexts: [{ name: SANDBOX_CONTEXT, context: { cluster: SANDBOX_CONTEXT, user: SANDBOX_CONTEXT, namespace } }],
      'current-context': SANDBOX_CONTEXT,
      preferences: {},
    },
    { lineWidth: -1 },
  );
}

function writePrivate(path: string, text: string, what: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text, { mode: 0o600 });
    // The mode above applies only to a new file; an existing one keeps its own.
    chmodSync(path, 0o600);
  } catch (err) {
    throw new SandboxError(`cannot write the sandbox ${what} to ${path}: ${(err as Error).message}`, {
      hint: 'choose a path in a directory you can write to',
      cause: err,
    });
  }
}

/**
 * Writes the vim-config.yaml and/or kubeconfig for `sandbox` (mode 0600,
 * parent directories created), synchronously: the files exist when it
 * returns. Returns the paths written.
 */
export function writeSandboxConfigs(sandbox: SandboxEndpoint, paths: SandboxConfigPaths): { vimConfigPath?: string; kubeconfigPath?: string } {
  const written: { vimConfigPath?: string; kubeconfigPath?: string } = {};
  if (paths.vimConfigPath) {
    writePrivate(paths.vimConfigPath, renderVimConfig(sandbox, paths.namespace), 'vim-config');
    written.vimConfigPath = paths.vimConfigPath;
  }
  if (paths.kubeconfigPath) {
    writePrivate(paths.kubeconfigPath, renderKubeconfig(sandbox, paths.namespace), 'kubeconfig');
    written.kubeconfigPath = paths.kubeconfigPath;
  }
  return written;
}
