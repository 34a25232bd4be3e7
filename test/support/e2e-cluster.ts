/**
 * The Kubernetes cluster an end-to-end test runs vnfm against: a fresh
 * in-process sandbox in the `sandbox` test project, or, in the
 * `real-apiserver` project, the real control plane its global setup started
 * (test/support/real-apiserver-setup.ts), shared by the test files of the
 * run, each in a namespace of its own.
 *
 * The same test body runs on both; what only one of them can do is asked
 * through this interface (holding a workload back from ready works on both;
 * the sandbox's other faults are on `sandbox`).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { inject } from 'vitest';
import { renderVimConfig, startSandbox, type ObjectMatch, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { kubeRequest, type KubeEndpoint, type KubeReply } from './kube-http.js';
import type {} from './real-apiserver-setup.js';
import { holdPods } from './stand-in-kubelet.js';

export interface E2eCluster extends KubeEndpoint {
  /** `sandbox` or `real`: for messages, never for branching on behaviour a test asserts. */
  readonly flavour: 'sandbox' | 'real';
  /** The namespace this test file deploys into: `default` on its own sandbox, a fresh one on the shared real cluster. */
  readonly namespace: string;
  /** Set on the sandbox only: its other faults and controls. */
  readonly sandbox?: Sandbox;
  /** Sends one request to the API (bearer token, CA verified). */
  request(method: string, path: string, body?: unknown, contentType?: string): Promise<KubeReply>;
  /** Writes a Tacker vim-config.yaml for the cluster (mode 0600), whose project_name is `namespace`. */
  writeVimConfig(path: string, namespace?: string): void;
  /**
   * Holds the matching workload (`kind` and `name`; namespace default
   * `this.namespace`) back from becoming ready; resolves with a function
   * that lifts the hold.
   */
  neverReady(match: { kind: string; name: string; namespace?: string }): Promise<() => Promise<void>>;
  /** Stops the sandbox, or deletes this file's namespace on the real cluster. */
  close(): Promise<void>;
}

/** Whether this test file runs in the real API server tier. */
export function onRealCluster(): boolean {
  return inject('realCluster') !== undefined;
}

function writePrivate(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { mode: 0o600 });
}

/**
 * The cluster of this test file. `sandboxOptions` configure the sandbox
 * when there is one; `namespacePrefix` names the namespace made on a real
 * cluster.
 */
export async function e2eCluster(namespacePrefix: string, sandboxOptions: SandboxOptions = {}): Promise<E2eCluster> {
  const real = inject('realCluster');
  if (!real) {
    const sandbox = await startSandbox({ host: '127.0.0.1', port: 0, ...sandboxOptions });
    const endpoint: KubeEndpoint = { server: sandbox.url, token: sandbox.token, caPem: sandbox.caPem };
    return {
      ...endpoint,
      flavour: 'sandbox',
      namespace: 'default',
      sandbox,
      request: (method, path, body, contentType) => kubeRequest(endpoint, method, path, body, contentType),
      writeVimConfig: (path, namespace = 'default') => writePrivate(path, renderVimConfig(sandbox, namespace)),
      async neverReady(match) {
        const m: ObjectMatch = { kind: match.kind, name: match.name, namespace: match.namespace ?? 'default' };
        const lift = sandbox.faults.neverReady(m);
        return async () => lift();
      },
      close: () => sandbox.close(),
    };
  }
  const endpoint: KubeEndpoint = { server: real.server, token: real.token, caPem: real.caPem };
  const namespace = `${namespacePrefix}-${randomBytes(3).toString('hex')}`;
  const created = await kubeRequest(endpoint, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  if (created.status !== 201) throw new Error(`could not create namespace ${namespace}: HTTP ${created.status}: ${created.text}`);
  // Pods are refused until the service account controller made the namespace's `default` ServiceAccount.
  for (let waited = 0; (await kubeRequest(endpoint, 'GET', `/api/v1/namespaces/${namespace}/serviceaccounts/default`)).status !== 200; waited += 100) {
    if (waited > 20_000) throw new Error(`namespace ${namespace} got no default ServiceAccount in 20 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    ...endpoint,
    flavour: 'real',
    namespace,
    request: (method, path, body, contentType) => kubeRequest(endpoint, method, path, body, contentType),
    writeVimConfig: (path, ns = namespace) => writePrivate(path, renderVimConfig({ url: real.server, caPem: real.caPem, token: real.token }, ns)),
    // Running with a failing readiness probe, as the sandbox's neverReady: the stand-in kubelet posts the Warning a kubelet posts.
    neverReady: (match) => holdPods(endpoint, { kind: match.kind, name: match.name, namespace: match.namespace ?? namespace, as: 'unready' }),
    async close() {
      await kubeRequest(endpoint, 'DELETE', `/api/v1/namespaces/${namespace}`);
    },
  };
}
