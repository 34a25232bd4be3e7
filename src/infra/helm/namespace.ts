/**
 * The release's namespace, read and created through the Kubernetes API with
 * the VIM's access: Helm can only create one (`--create-namespace`, with no
 * label of vnfm's) and cannot tell whether one exists. The Kubernetes client
 * is loaded when first needed, from the Kubernetes driver's own modules.
 */
import type { KubeAccess } from '../kubernetes/kube-api.js';
import type { HelmNamespaceState } from './contract.js';

/** The label a namespace vnfm created carries (as the manifest path's vnfm_create_namespace). */
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'vnfm' } as const;

export interface NamespaceAccess {
  state(name: string, signal?: AbortSignal): Promise<HelmNamespaceState>;
  /** Creates the namespace, labelled managed-by vnfm; false when it exists already. */
  create(name: string, signal?: AbortSignal): Promise<boolean>;
}

export function namespaceAccess(access: KubeAccess): NamespaceAccess {
  const client = async () => {
    const [{ createKubeTransport }, { KubeClient }] = await Promise.all([import('../kubernetes/kube-wire.js'), import('../kubernetes/client.js')]);
    return new KubeClient(createKubeTransport(access), access.server);
  };
  const path = (name: string) => `/api/v1/namespaces/${encodeURIComponent(name)}`;
  return {
    async state(name, signal) {
      const c = await client();
      try {
        const got = await c.call({ method: 'GET', path: path(name) }, { what: `read namespace ${name}`, ...(signal ? { signal } : {}), accept: [403, 404] });
        if (got.status === 404) return 'missing';
        // A namespace the VIM's user may not read is left to Helm's writes to find out.
        if (got.status === 403) return 'unknown';
        return (got.body as { metadata?: { deletionTimestamp?: string } }).metadata?.deletionTimestamp ? 'terminating' : 'active';
      } finally {
        c.close();
      }
    },
    async create(name, signal) {
      const c = await client();
      try {
        const made = await c.call(
          { method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { ...MANAGED_BY } } } },
          { what: `create namespace ${name}`, ...(signal ? { signal } : {}), accept: [409] },
        );
        return made.status < 300;
      } finally {
        c.close();
      }
    },
  };
}
