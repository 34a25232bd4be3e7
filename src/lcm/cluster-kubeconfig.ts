/**
 * The kubeconfig of a workload cluster a VNF instance made with Cluster API
 * (like `clusterctl get kubeconfig`): read from the Secret
 * `<cluster>-kubeconfig` on the instance's VIM, the management cluster.
 */
import { NotFoundError, UsageError } from '../errors.js';
import { clustersOf } from '../model/clusters.js';
import type { LcmDeps } from './engine.js';
import { keepsCredentials, openInlineVim, registeredVim } from './vim-connection.js';

export interface WorkloadKubeconfigOptions {
  /** The Cluster's name; needed when the instance has several. */
  cluster?: string;
  signal?: AbortSignal;
}

export interface WorkloadKubeconfig {
  cluster: string;
  namespace: string;
  kubeconfig: string;
}

export async function getWorkloadKubeconfig(deps: LcmDeps, vnfRef: string, opts: WorkloadKubeconfigOptions = {}): Promise<WorkloadKubeconfig> {
  const instance = await deps.store.instances.get(vnfRef);
  const clusters = clustersOf(instance);
  const names = clusters.map((c) => c.name).join(', ');
  if (instance.instantiationState !== 'INSTANTIATED' || clusters.length === 0) {
    throw new NotFoundError(`vnf instance ${instance.vnfInstanceName ?? instance.id} has no Cluster API Cluster (cluster.x-k8s.io)`, {
      hint: 'vnf-kubeconfig is for instances of a workload-cluster package; see vnfm vnf-show VNF for its resources',
    });
  }
  let cluster = clusters[0]!;
  if (opts.cluster !== undefined) {
    const named = clusters.find((c) => c.name === opts.cluster);
    if (!named) throw new NotFoundError(`vnf instance ${instance.id} has no Cluster named ${opts.cluster}`, { hint: `its Clusters: ${names}` });
    cluster = named;
  } else if (clusters.length > 1) {
    throw new UsageError(`vnf instance ${instance.id} has ${clusters.length} Clusters: ${names}`, { hint: 'choose one with --cluster NAME' });
  }
  const [key, inline] = Object.entries(instance.vimConnectionInfo ?? {})[0] ?? [];
  if (!instance.vimId && !(key && inline && keepsCredentials(inline))) {
    throw new UsageError(`vnf instance ${instance.id} runs on an inline VIM whose credentials it does not keep (it was instantiated by an older vnfm)`, {
      hint: `read the Secret yourself: kubectl get secret ${cluster.name}-kubeconfig -n ${cluster.namespace} -o jsonpath={.data.value} | base64 -d`,
    });
  }
  if (!deps.secretReader) throw new UsageError('reading Secrets is not available here');
  const source = `vnf instance ${instance.id}`;
  const vim = instance.vimId ? await deps.store.vims.get(instance.vimId) : undefined;
  const connection = vim
    ? await registeredVim(
        source,
        'vimId',
        { find: async (r) => await deps.store.vims.find(r), findDefault: async () => undefined, openSecrets: (v) => deps.openVimSecrets(v) },
        vim,
      )
    : await openInlineVim(source, key!, inline!, deps.open);
  const reader = await deps.secretReader(connection);
  const ref = { namespace: cluster.namespace!, name: `${cluster.name}-kubeconfig`, key: 'value' };
  try {
    const kubeconfig = await reader.read(ref, opts.signal);
    if (kubeconfig === undefined) {
      throw new NotFoundError(`the Secret ${ref.namespace}/${ref.name} (key value) is not on VIM ${connection.name} yet`, {
        hint: `the workload cluster is still being provisioned: see kubectl get cluster ${cluster.name} -n ${ref.namespace}`,
      });
    }
    return { cluster: cluster.name, namespace: ref.namespace, kubeconfig };
  } finally {
    reader.close();
  }
}
