/**
 * `additionalParams.k8s_cluster_installation_param` of a Kubernetes cluster
 * VNF (Tacker's kubeadm sample driver): checked before the operation starts,
 * recorded with its secrets sealed, opened again by each hook.
 */
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join, normalize } from 'node:path';
import { echo, ValidationError, VnfmError } from '../../errors.js';
import { isObject, type Obj } from '../request.js';
import { openSealed, sealFields, type Open, type Seal } from '../sealed.js';

export type { Obj };

export const PARAM = 'k8s_cluster_installation_param';
const FIELD = `additionalParams.${PARAM}`;

/** How the driver reaches the masters or the workers. */
export interface NodeGroupParams {
  aspectId?: string;
  sshCpName: string;
  nicCpName: string;
  username: string;
  password?: string;
  /** PEM/OpenSSH private key text. */
  privateKey?: string;
  /** Masters only. */
  podCidr?: string;
  clusterCidr?: string;
  clusterCpName?: string;
}

export interface ProxyParams {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
  k8sNodeCidr?: string;
}

/** The parameters with their secrets in clear, in memory only. */
export interface ClusterParams {
  scriptPath: string;
  vimName?: string;
  master: NodeGroupParams;
  worker: NodeGroupParams;
  proxy?: ProxyParams;
  /** `private_registry_connection_info` as given (passwords in clear), for parseRegistryConnections. */
  registryConnections?: unknown;
}

function str(source: string, obj: Obj, key: string, field: string, required: true, hint?: string): string;
function str(source: string, obj: Obj, key: string, field: string, required: false, hint?: string): string | undefined;
function str(source: string, obj: Obj, key: string, field: string, required: boolean, hint?: string): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) {
    if (required) throw new ValidationError(source, `${field}.${key}`, 'is required', hint ? { hint } : {});
    return undefined;
  }
  if (typeof v !== 'string' || v.trim() === '') throw new ValidationError(source, `${field}.${key}`, 'must be a non-empty string', hint ? { hint } : {});
  return v;
}

const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

function cidr(source: string, obj: Obj, key: string, field: string): string | undefined {
  const v = str(source, obj, key, field, false);
  if (v === undefined) return undefined;
  const m = CIDR.exec(v);
  if (!m || m.slice(1, 5).some((o) => Number(o) > 255) || Number(m[5]) > 32) {
    throw new ValidationError(source, `${field}.${key}`, `${echo(v)} is not an IPv4 CIDR`, { hint: 'e.g. "192.168.3.0/24"' });
  }
  return v;
}

/** A package member: relative, inside the package, a regular file. */
export function packageFile(source: string, field: string, path: string, packageDir: string): string {
  const norm = normalize(path).replace(/\\/g, '/');
  if (isAbsolute(path) || norm === '..' || norm.startsWith('../')) {
    throw new ValidationError(source, field, `${echo(path)} must be a path inside the package`, { hint: 'e.g. "Scripts/install_k8s_cluster.sh"' });
  }
  const full = join(packageDir, norm);
  if (!existsSync(full) || !statSync(full).isFile()) {
    throw new ValidationError(source, field, `${echo(path)} is not a file of the package`, { hint: 'name a file the VNF package carries, relative to its root' });
  }
  return full;
}

function nodeGroup(source: string, value: unknown, key: 'master_node' | 'worker_node'): NodeGroupParams {
  const field = `${FIELD}.${key}`;
  if (!isObject(value)) {
    throw new ValidationError(source, field, 'must be an object', {
      hint: '{"ssh_cp_name": "...", "nic_cp_name": "...", "username": "ubuntu", "password": "..."}',
    });
  }
  const password = str(source, value, 'password', field, false);
  const privateKey = str(source, value, 'private_key', field, false);
  if (password === undefined && privateKey === undefined) {
    throw new ValidationError(source, `${field}.password`, 'is required (or private_key)', { hint: 'the SSH password of the user, also used for sudo' });
  }
  if (privateKey !== undefined && !/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(privateKey)) {
    throw new ValidationError(source, `${field}.private_key`, 'is not a PEM or OpenSSH private key', { hint: 'paste the key file\'s text, "\\n" for line breaks' });
  }
  const group: NodeGroupParams = {
    sshCpName: str(source, value, 'ssh_cp_name', field, true, 'the connection point the driver reaches the VMs on by SSH'),
    nicCpName: str(source, value, 'nic_cp_name', field, true, 'the connection point whose address Kubernetes uses'),
    username: str(source, value, 'username', field, true),
  };
  const aspectId = str(source, value, 'aspect_id', field, false);
  if (aspectId) group.aspectId = aspectId;
  if (password !== undefined) group.password = password;
  if (privateKey !== undefined) group.privateKey = privateKey;
  if (key === 'master_node') {
    const podCidr = cidr(source, value, 'pod_cidr', field);
    const clusterCidr = cidr(source, value, 'cluster_cidr', field);
    const clusterCpName = str(source, value, 'cluster_cp_name', field, false);
    if (podCidr) group.podCidr = podCidr;
    if (clusterCidr) group.clusterCidr = clusterCidr;
    if (clusterCpName) group.clusterCpName = clusterCpName;
  }
  return group;
}

function proxyParams(source: string, value: unknown): ProxyParams | undefined {
  if (value === undefined || value === null) return undefined;
  const field = `${FIELD}.proxy`;
  if (!isObject(value)) throw new ValidationError(source, field, 'must be an object {"http_proxy", "https_proxy", "no_proxy", "k8s_node_cidr"}');
  const proxy: ProxyParams = {};
  for (const [key, prop] of [
    ['http_proxy', 'httpProxy'],
    ['https_proxy', 'httpsProxy'],
  ] as const) {
    const v = str(source, value, key, field, false);
    if (v === undefined) continue;
    if (!/^https?:\/\/[^\s/]+/.test(v)) throw new ValidationError(source, `${field}.${key}`, 'must be a URL http(s)://[user:password@]host:port');
    proxy[prop] = v;
  }
  const noProxy = str(source, value, 'no_proxy', field, false);
  if (noProxy) proxy.noProxy = noProxy;
  const nodeCidr = cidr(source, value, 'k8s_node_cidr', field);
  if (nodeCidr) proxy.k8sNodeCidr = nodeCidr;
  return proxy;
}

/**
 * Checks `k8s_cluster_installation_param` (plain, as the operator gave it).
 * `script_path` must be a file of the package. The registry connections are
 * returned as given, for the registry-connections module to check.
 */
export function parseClusterParams(source: string, value: unknown, packageDir: string): ClusterParams {
  if (!isObject(value)) {
    throw new ValidationError(source, FIELD, 'must be an object', { hint: 'see csar-samples/kubeadm-cluster-vnf/requests/instantiate.json' });
  }
  const scriptPath = str(source, value, 'script_path', FIELD, true, '"script_path": "Scripts/install_k8s_cluster.sh"');
  packageFile(source, `${FIELD}.script_path`, scriptPath, packageDir);
  const vimName = str(source, value, 'vim_name', FIELD, false);
  if (vimName !== undefined && vimName.trim() !== vimName) throw new ValidationError(source, `${FIELD}.vim_name`, 'must have no surrounding spaces');
  const params: ClusterParams = {
    scriptPath,
    master: nodeGroup(source, value['master_node'], 'master_node'),
    worker: nodeGroup(source, value['worker_node'], 'worker_node'),
  };
  if (vimName) params.vimName = vimName;
  const proxy = proxyParams(source, value['proxy']);
  if (proxy) params.proxy = proxy;
  if (value['private_registry_connection_info'] !== undefined) params.registryConnections = value['private_registry_connection_info'];
  return params;
}

/** Fields holding secrets, relative to the parameter object (sealFields paths). */
export const SECRET_FIELDS: readonly string[] = [
  'master_node.password',
  'master_node.private_key',
  'worker_node.password',
  'worker_node.private_key',
  // A proxy URL may carry credentials (http://user:password@host:port).
  'proxy.http_proxy',
  'proxy.https_proxy',
  'private_registry_connection_info.*.password',
];

/** The parameter object as recorded on the occurrence and the instance: every secret sealed. */
export function sealClusterParams(raw: Obj, seal: Seal): Promise<Obj> {
  return sealFields(raw, SECRET_FIELDS, seal);
}

/** Opens a recorded parameter object (secrets sealed) back into the plain form. */
export async function openClusterParams(recorded: Obj, open: Open): Promise<Obj> {
  try {
    return await openSealed(recorded, open);
  } catch (err) {
    throw new VnfmError(`the sealed secrets of ${PARAM} cannot be opened with the current keyring`, {
      hint: 'the master key they were sealed with is gone (key rotation?): give the parameters again (heal the whole cluster with them, or instantiate again)',
      cause: err,
    });
  }
}

/** The secrets of plain parameters, never to appear in logs. */
export function secretsOf(params: ClusterParams): string[] {
  const out: string[] = [];
  for (const g of [params.master, params.worker]) {
    if (g.password) out.push(g.password);
    if (g.privateKey) out.push(g.privateKey);
  }
  for (const url of [params.proxy?.httpProxy, params.proxy?.httpsProxy]) {
    const m = url ? /^https?:\/\/([^@/]+)@/.exec(url) : null;
    if (m?.[1])
      out.push(
        m[1],
        ...m[1]
          .split(':')
          .slice(1)
          .filter((p) => p.length >= 3),
      );
  }
  return out;
}
