/**
 * Reading Secrets on a cluster: once, or waiting — by watching — until a
 * Secret exists and holds a key. The management drivers use it to collect
 * what a controller writes after the infra-driver is done (Cluster API's
 * `<cluster>-kubeconfig`).
 */
import { NotFoundError } from '../../errors.js';
import { defaultRetryPolicy, KubeClient, type RetryPolicy } from './client.js';
import type { ApiResource } from './discovery.js';
import type { KubeObject } from './driver-contract.js';
import type { KubeAccess } from './kube-api.js';
import { createKubeTransport, type KubeTransport } from './kube-wire.js';
import { watchUntil } from './watch.js';

const SECRETS: ApiResource = {
  group: '',
  version: 'v1',
  apiVersion: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
  verbs: ['get', 'list', 'watch'],
  subresources: new Set(),
};

/** One key of one Secret. */
export interface SecretKeyRef {
  namespace: string;
  name: string;
  key: string;
}

export interface WaitForSecretOptions {
  /** Aborted on Ctrl-C or --timeout: the wait throws the abort reason. */
  signal: AbortSignal;
  /** How long the server keeps each watch stream open (default 300 s). */
  watchTimeoutSeconds?: number;
}

export interface SecretReader {
  /** The decoded value, or undefined when the Secret or the key does not exist. */
  read(ref: SecretKeyRef, signal?: AbortSignal): Promise<string | undefined>;
  /** Resolves with the decoded value once the Secret has the key. */
  waitFor(ref: SecretKeyRef, opts: WaitForSecretOptions): Promise<string>;
  close(): void;
}

export interface SecretReaderOptions {
  transport?: KubeTransport;
  retry?: Partial<RetryPolicy>;
}

function valueOf(secret: KubeObject | undefined, key: string): string | undefined {
  const data = secret?.['data'] as Record<string, unknown> | undefined;
  const encoded = data?.[key];
  if (typeof encoded === 'string') return Buffer.from(encoded, 'base64').toString('utf8');
  // stringData is write-only on a real server; an emulator may echo it.
  const plain = (secret?.['stringData'] as Record<string, unknown> | undefined)?.[key];
  return typeof plain === 'string' ? plain : undefined;
}

const encode = encodeURIComponent;

export function createSecretReader(access: KubeAccess, opts: SecretReaderOptions = {}): SecretReader {
  const client = new KubeClient(opts.transport ?? createKubeTransport(access), access.server, { ...defaultRetryPolicy, ...opts.retry });
  return {
    async read(ref, signal) {
      const res = await client.call(
        { method: 'GET', path: `/api/v1/namespaces/${encode(ref.namespace)}/secrets/${encode(ref.name)}` },
        { what: `read Secret ${ref.name} in namespace ${ref.namespace}`, accept: [404], ...(signal ? { signal } : {}) },
      );
      return res.status === 404 ? undefined : valueOf(res.body as KubeObject, ref.key);
    },
    waitFor(ref, wait) {
      return watchUntil(
        client,
        { res: SECRETS, namespace: ref.namespace, name: ref.name },
        { signal: wait.signal, ...(wait.watchTimeoutSeconds ? { timeoutSeconds: wait.watchTimeoutSeconds } : {}) },
        (objects) => valueOf(objects.get(`${ref.namespace}/${ref.name}`), ref.key),
      );
    },
    close: () => client.close(),
  };
}

/** The not-found error for a Secret that should be there, with the way to look for it. */
export function missingSecretError(ref: SecretKeyRef, server: string): NotFoundError {
  return new NotFoundError(`the Secret ${ref.name} (key ${ref.key}) does not exist in namespace ${ref.namespace} at ${server}`, {
    hint: `check that the cluster is provisioned: kubectl get cluster,secret -n ${ref.namespace}`,
  });
}
