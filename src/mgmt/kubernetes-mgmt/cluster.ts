/**
 * What the kubernetes-mgmt driver does on the VMs, over SSH: the package's
 * install script in its modes (init, join, join-facts, admin-token, reset)
 * with its parameters in a root-only file, and kubectl on a master for
 * drain, delete and etcd membership. Secrets (join token, certificate key,
 * the admin token) travel in files readable by root only, never on a
 * command line or in a command's output.
 */
import { VnfmError } from '../../errors.js';
import { shellQuote } from '../ssh/quote.js';
import type { SshSession } from '../ssh/types.js';

/** Where the driver keeps the script and its parameters on each node. */
export const REMOTE_DIR = '/var/lib/vnfm-k8s';
export const REMOTE_SCRIPT = `${REMOTE_DIR}/install_k8s_cluster.sh`;
export const REMOTE_PARAMS = `${REMOTE_DIR}/params.env`;
export const REMOTE_ADMIN_MANIFEST = `${REMOTE_DIR}/admin-token.yaml`;
/** Written by `join-facts` (TOKEN, CA_CERT_HASH, CERTIFICATE_KEY) and `admin-token` (the token), mode 0600. */
export const REMOTE_JOIN_FACTS = `${REMOTE_DIR}/join-facts.env`;
export const REMOTE_ADMIN_TOKEN = `${REMOTE_DIR}/admin-token`;
export const ADMIN_CONF = '/etc/kubernetes/admin.conf';
export const CLUSTER_CA = '/etc/kubernetes/pki/ca.crt';
export const API_PORT = 6443;

const KUBECTL = `kubectl --kubeconfig ${ADMIN_CONF}`;
/** kubeadm init/join pull images and start the control plane: allow them time. */
const SCRIPT_TIMEOUT_MS = 1_800_000;
const DRAIN_TIMEOUT_S = 300;

export type NodeRole = 'master' | 'worker';

/** A VM of the cluster, as the driver knows it. */
export interface ClusterNode {
  role: NodeRole;
  vnfcId: string;
  vduId: string;
  serverId: string;
  /** The address the driver connects to (ssh_cp_name). */
  sshAddress: string;
  /** The address Kubernetes uses (nic_cp_name). */
  address: string;
  /** The Node object's name (`kubeadm --node-name`). */
  nodeName: string;
}

/** What another node needs to join the cluster. */
export interface JoinFacts {
  token: string;
  caCertHash: string;
  certificateKey: string;
}

/** The Kubernetes node name the driver gives a VM: its role and address (`worker-10-0-0-7`). */
export function nodeNameOf(role: NodeRole, address: string): string {
  return `${role}-${address.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
}

/** `KEY='value'` lines, sourced by the script. */
export function renderParams(params: Record<string, string | undefined>): string {
  return Object.entries(params)
    .filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '')
    .map(([k, v]) => `${k}=${shellQuote(v)}\n`)
    .join('');
}

/** Parses `KEY=value` lines (values optionally single-quoted). */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (!m) continue;
    let v = m[2]!;
    if (v.startsWith("'") && v.endsWith("'") && v.length >= 2) v = v.slice(1, -1).replace(/'\\''/g, "'");
    out[m[1]!] = v;
  }
  return out;
}

/** Puts the install script (and, on the first master, the admin-token manifest) on the node. */
export async function prepareNode(session: SshSession, script: string, adminManifest?: string): Promise<void> {
  await session.writeFile(REMOTE_SCRIPT, script, { sudo: true, mode: 0o700 });
  if (adminManifest !== undefined) await session.writeFile(REMOTE_ADMIN_MANIFEST, adminManifest, { sudo: true, mode: 0o600 });
}

/** Runs the install script in `mode` with `params` (written to a root-only file first). */
export async function runScript(session: SshSession, mode: string, params: Record<string, string | undefined>, timeoutMs = SCRIPT_TIMEOUT_MS): Promise<void> {
  await session.writeFile(REMOTE_PARAMS, renderParams(params), { sudo: true, mode: 0o600 });
  try {
    await session.exec(`bash ${REMOTE_SCRIPT} ${mode} ${REMOTE_PARAMS}`, { sudo: true, timeoutMs });
  } finally {
    await session.exec(`rm -f ${REMOTE_PARAMS}`, { sudo: true, allowFailure: true }).catch(() => undefined);
  }
}

/** Asks the first master for a join token, the CA hash and a certificate key for control-plane joins. */
export async function joinFacts(session: SshSession, common: Record<string, string | undefined>): Promise<JoinFacts> {
  await runScript(session, 'join-facts', common);
  const text = await session.readFile(REMOTE_JOIN_FACTS, { sudo: true });
  await session.exec(`rm -f ${REMOTE_JOIN_FACTS}`, { sudo: true, allowFailure: true });
  const env = parseEnvFile(text ?? '');
  const facts = { token: env['TOKEN'] ?? '', caCertHash: env['CA_CERT_HASH'] ?? '', certificateKey: env['CERTIFICATE_KEY'] ?? '' };
  if (!/^[a-z0-9]{6}\.[a-z0-9]{16}$/.test(facts.token) || !/^sha256:[0-9a-f]{64}$/.test(facts.caCertHash) || !/^[0-9a-f]{64}$/.test(facts.certificateKey)) {
    throw new VnfmError(`${session.target.label}: the install script's join-facts mode did not leave a token, CA hash and certificate key in ${REMOTE_JOIN_FACTS}`, {
      hint: 'see the operation log (vnfm op-log) for the kubeadm output on that master',
    });
  }
  return facts;
}

/** Creates the admin service account's token on the first master; returns it with the cluster CA. */
export async function adminCredentials(session: SshSession, common: Record<string, string | undefined>): Promise<{ token: string; caPem: string }> {
  await runScript(session, 'admin-token', { ...common, ADMIN_TOKEN_MANIFEST: REMOTE_ADMIN_MANIFEST });
  const token = (await session.readFile(REMOTE_ADMIN_TOKEN, { sudo: true }))?.trim();
  await session.exec(`rm -f ${REMOTE_ADMIN_TOKEN}`, { sudo: true, allowFailure: true });
  const caPem = await session.readFile(CLUSTER_CA, { sudo: true });
  if (!token) throw new VnfmError(`${session.target.label}: the admin service account has no token (${REMOTE_ADMIN_TOKEN} empty)`, { hint: 'see the operation log (vnfm op-log)' });
  if (!caPem || !caPem.includes('BEGIN CERTIFICATE')) throw new VnfmError(`${session.target.label}: ${CLUSTER_CA} is missing or not a certificate`);
  return { token, caPem };
}

/** Whether the cluster has a Node of that name (asked on a master). */
export async function hasNode(master: SshSession, nodeName: string): Promise<boolean> {
  const r = await master.exec(`${KUBECTL} get node ${shellQuote(nodeName)} -o name`, { sudo: true, allowFailure: true });
  if (r.code === 0) return true;
  if (/not ?found/i.test(r.stderr + r.stdout)) return false;
  throw new VnfmError(`${master.target.label}: kubectl get node ${nodeName} failed (exit ${r.code}): ${(r.stderr || r.stdout).trim()}`);
}

/**
 * Drains and deletes a Node (on a master). `force`: the VM may already be
 * broken (heal), so pods that cannot be evicted do not stop the removal.
 */
export async function drainAndDelete(master: SshSession, nodeName: string, opts: { force?: boolean } = {}): Promise<boolean> {
  if (!(await hasNode(master, nodeName))) return false;
  const n = shellQuote(nodeName);
  await master.exec(`${KUBECTL} drain ${n} --ignore-daemonsets --delete-emptydir-data --timeout=${DRAIN_TIMEOUT_S}s${opts.force ? ' --force' : ''}`, {
    sudo: true,
    timeoutMs: (DRAIN_TIMEOUT_S + 60) * 1000,
    allowFailure: opts.force === true,
  });
  await master.exec(`${KUBECTL} delete node ${n} --ignore-not-found`, { sudo: true });
  return true;
}

const ETCDCTL =
  'etcdctl --endpoints=https://127.0.0.1:2379 --cacert=/etc/kubernetes/pki/etcd/ca.crt --cert=/etc/kubernetes/pki/etcd/server.crt --key=/etc/kubernetes/pki/etcd/server.key';

/** etcd `member list` lines: `id, started, name, peer URLs, client URLs, learner`. */
export function parseMemberList(text: string): { id: string; name: string }[] {
  return text
    .split('\n')
    .map((l) => l.split(',').map((f) => f.trim()))
    .filter((f) => f.length >= 3 && /^[0-9a-f]+$/.test(f[0]!))
    .map((f) => ({ id: f[0]!, name: f[2]! }));
}

/** Removes a master's etcd member, through the etcd pod of the master `via`. */
export async function removeEtcdMember(master: SshSession, via: string, nodeName: string): Promise<boolean> {
  const exec = `${KUBECTL} -n kube-system exec etcd-${via} -- ${ETCDCTL}`;
  const list = await master.exec(`${exec} member list`, { sudo: true });
  const member = parseMemberList(list.stdout).find((m) => m.name === nodeName);
  if (!member) return false;
  await master.exec(`${exec} member remove ${member.id}`, { sudo: true });
  return true;
}

/** `kubeadm reset -f` on a node leaving the cluster; best effort (the VM is about to go). */
export async function resetNode(session: SshSession): Promise<void> {
  await session.exec('kubeadm reset -f', { sudo: true, allowFailure: true, timeoutMs: 300_000 });
}
