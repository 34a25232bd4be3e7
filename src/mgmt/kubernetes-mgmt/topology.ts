/**
 * What the kubernetes-mgmt driver keeps and derives: its record on the
 * instance, the cluster's masters and workers from the instance's VNFCs
 * (the first master first), the control-plane endpoint, and the admin
 * kubeconfig of the VIM it registers.
 */
import yaml from 'js-yaml';
import { VnfmError } from '../../errors.js';
import type { VnfInstance } from '../../model/lcm.js';
import { nodesByCp, type Node } from '../nodes.js';
import { additionalParams } from '../request.js';
import { API_PORT, nodeNameOf, type ClusterNode, type NodeRole } from './cluster.js';
import { PARAM, type ClusterParams, type Obj } from './params.js';
import { type RegistryConnection } from './registry-connections.js';

export const NAME = 'kubernetes-mgmt';
export const FIELD = `additionalParams.${PARAM}`;
/** The admin service account manifest the package carries; the driver's own when it has none. */
export const ADMIN_MANIFEST_PATH = 'Files/kubernetes/admin-token.yaml';
export const ADMIN_MANIFEST = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: vnfm-admin
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: vnfm-admin
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
  - kind: ServiceAccount
    name: vnfm-admin
    namespace: kube-system
---
apiVersion: v1
kind: Secret
metadata:
  name: vnfm-admin-token
  namespace: kube-system
  annotations:
    kubernetes.io/service-account.name: vnfm-admin
type: kubernetes.io/service-account-token
`;

/** What the driver keeps on the instance (`metadata.mgmt["kubernetes-mgmt"]`). */
export interface KubernetesMgmtRecord {
  /** `k8s_cluster_installation_param` as given at instantiate, its secrets sealed. */
  params: Obj;
  vimName: string;
  /** Absent when vnfm has no VIM store to register into. */
  vimId?: string;
  /** `host:6443`, the cluster's API endpoint. */
  endpoint: string;
  /** The first is the master the driver runs kubectl on. */
  masters: ClusterNode[];
  workers: ClusterNode[];
}

/** The parameters of one hook, opened. */
export interface State {
  params: ClusterParams;
  registries: RegistryConnection[];
  script: string;
  adminManifest: string;
  /** Sealed form, recorded again. */
  sealed: Obj;
  /** Never to appear in logs. */
  secrets: string[];
}

export function recordOf(instance: VnfInstance | undefined): KubernetesMgmtRecord | undefined {
  return (instance?.instantiatedVnfInfo?.metadata.mgmt?.[NAME] as KubernetesMgmtRecord | undefined) ?? undefined;
}

export const byAge = (a: Node, b: Node): number => (a.createdAt ?? '').localeCompare(b.createdAt ?? '') || a.serverId.localeCompare(b.serverId);

export function toClusterNode(role: NodeRole, n: Node, nicCp: string, known: readonly ClusterNode[]): ClusterNode {
  const prior = known.find((k) => k.serverId === n.serverId);
  if (prior) return prior;
  const address = n.addresses[nicCp]?.[0];
  if (!address) {
    throw new VnfmError(`server ${n.serverId} (${n.vduId}) has no address on connection point "${nicCp}" (${FIELD}.${role}_node.nic_cp_name)`, {
      hint: `its connection points: ${Object.keys(n.addresses).join(', ') || 'none'}`,
    });
  }
  return { role, vnfcId: n.vnfcId, vduId: n.vduId, serverId: n.serverId, sshAddress: n.address, address, nodeName: nodeNameOf(role, address) };
}

/** The masters (oldest first, the recorded first master kept first) and workers of an instance. */
export function clusterNodes(instance: VnfInstance | undefined, params: ClusterParams, record?: KubernetesMgmtRecord): { masters: ClusterNode[]; workers: ClusterNode[] } {
  const known = [...(record?.masters ?? []), ...(record?.workers ?? [])];
  const masterNodes = nodesByCp(instance, params.master.sshCpName).sort(byAge);
  const masterIds = new Set(masterNodes.map((n) => n.serverId));
  const masters = masterNodes.map((n) => toClusterNode('master', n, params.master.nicCpName, known));
  const first = record?.masters[0]?.serverId;
  const i = masters.findIndex((m) => m.serverId === first);
  if (i > 0) masters.unshift(...masters.splice(i, 1));
  const workers = nodesByCp(instance, params.worker.sshCpName)
    .filter((n) => !masterIds.has(n.serverId))
    .sort(byAge)
    .map((n) => toClusterNode('worker', n, params.worker.nicCpName, known));
  return { masters, workers };
}

export function hostPort(host: string): string {
  return `${host.includes(':') ? `[${host}]` : host}:${API_PORT}`;
}

/** The API endpoint: the cluster_cp_name address (of the first master when it has one), else the first master's. */
export function clusterEndpoint(instance: VnfInstance | undefined, params: ClusterParams, first: ClusterNode): string {
  const cp = params.master.clusterCpName;
  if (!cp) return hostPort(first.address);
  const nodes = nodesByCp(instance, cp);
  const own = nodes.find((n) => n.serverId === first.serverId) ?? nodes[0];
  if (!own) {
    throw new VnfmError(`no server has an address on connection point "${cp}" (${FIELD}.master_node.cluster_cp_name)`, {
      hint: "name the connection point of the cluster's virtual IP or of the masters",
    });
  }
  return hostPort(own.address);
}

export function renderKubeconfig(name: string, endpoint: string, caPem: string, token: string): string {
  return yaml.dump(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name, cluster: { server: `https://${endpoint}`, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
      users: [{ name: 'vnfm-admin', user: { token } }],
      contexts: [{ name: `vnfm-admin@${name}`, context: { cluster: name, user: 'vnfm-admin' } }],
      'current-context': `vnfm-admin@${name}`,
    },
    { lineWidth: -1 },
  );
}
