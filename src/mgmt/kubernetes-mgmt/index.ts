/**
 * The `kubernetes-mgmt` built-in driver (Tacker's kubeadm sample driver,
 * `Scripts/kubernetes_mgmt.py`, and seed 004's registry connections): a
 * Kubernetes cluster on the VNF's VMs. instantiate_end installs the first
 * master with the package's install script, joins the other masters and the
 * workers, configures their private registry connections and registers the
 * cluster as a Kubernetes VIM; scale and heal drain, delete and join nodes;
 * terminate removes the VIM. Everything it runs on a node is idempotent, so
 * a retry finishes what a failed attempt left.
 */
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { ConflictError, ValidationError, VnfmError } from '../../errors.js';
import type { HealVnfRequest, LcmRequest, VnfInstance } from '../../model/lcm.js';
import type { BuiltinDriver, ManagementServices } from '../builtin.js';
import { OWNER_EXTRA } from '../capi-credentials.js';
import type { HookContext, HookOutcome, PrepareInput } from '../index.js';
import { vnfcsOf } from '../../model/vnfcs.js';
import { newNodes, nodesByCp, scaleInVictims, type Node } from '../nodes.js';
import { additionalParams, isObject } from '../request.js';
import { sealedStrings } from '../sealed.js';
import { forEachNode } from '../ssh/parallel.js';
import type { SshSession } from '../ssh/types.js';
import {
  adminCredentials,
  API_PORT,
  drainAndDelete,
  joinFacts,
  nodeNameOf,
  prepareNode,
  removeEtcdMember,
  resetNode,
  runScript,
  type ClusterNode,
  type JoinFacts,
  type NodeRole,
} from './cluster.js';
import { openClusterParams, packageFile, PARAM, parseClusterParams, sealClusterParams, secretsOf, type ClusterParams, type Obj } from './params.js';
import { configureRegistryConnections, parseRegistryConnections, type RegistryConnection } from './registry-connections.js';

const NAME = 'kubernetes-mgmt';
const FIELD = `additionalParams.${PARAM}`;
/** The admin service account manifest the package carries; the driver's own when it has none. */
export const ADMIN_MANIFEST_PATH = 'Files/kubernetes/admin-token.yaml';
const ADMIN_MANIFEST = `apiVersion: v1
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
interface State {
  params: ClusterParams;
  registries: RegistryConnection[];
  script: string;
  adminManifest: string;
  /** Sealed form, recorded again. */
  sealed: Obj;
  /** Never to appear in logs. */
  secrets: string[];
}


function recordOf(instance: VnfInstance | undefined): KubernetesMgmtRecord | undefined {
  return (instance?.instantiatedVnfInfo?.metadata.mgmt?.[NAME] as KubernetesMgmtRecord | undefined) ?? undefined;
}

const byAge = (a: Node, b: Node): number => (a.createdAt ?? '').localeCompare(b.createdAt ?? '') || a.serverId.localeCompare(b.serverId);

function toClusterNode(role: NodeRole, n: Node, nicCp: string, known: readonly ClusterNode[]): ClusterNode {
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
function clusterNodes(instance: VnfInstance | undefined, params: ClusterParams, record?: KubernetesMgmtRecord): { masters: ClusterNode[]; workers: ClusterNode[] } {
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

function hostPort(host: string): string {
  return `${host.includes(':') ? `[${host}]` : host}:${API_PORT}`;
}

/** The API endpoint: the cluster_cp_name address (of the first master when it has one), else the first master's. */
function clusterEndpoint(instance: VnfInstance | undefined, params: ClusterParams, first: ClusterNode): string {
  const cp = params.master.clusterCpName;
  if (!cp) return hostPort(first.address);
  const nodes = nodesByCp(instance, cp);
  const own = nodes.find((n) => n.serverId === first.serverId) ?? nodes[0];
  if (!own) {
    throw new VnfmError(`no server has an address on connection point "${cp}" (${FIELD}.master_node.cluster_cp_name)`, {
      hint: 'name the connection point of the cluster\'s virtual IP or of the masters',
    });
  }
  return hostPort(own.address);
}

function renderKubeconfig(name: string, endpoint: string, caPem: string, token: string): string {
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

export function createKubernetesMgmtDriver(services: ManagementServices): BuiltinDriver {
  const concurrency = services.sshConcurrency ?? 10;

  async function prepare(input: PrepareInput): Promise<LcmRequest> {
    const ap = additionalParams(input.request);
    const value = ap[PARAM];
    if (value === undefined) {
      if (input.operation !== 'INSTANTIATE') return input.request;
      throw new ValidationError(input.source, FIELD, 'is required: the VNFD runs the kubernetes-mgmt driver, which installs the cluster from it', {
        hint: 'see csar-samples/kubeadm-cluster-vnf/requests/instantiate.json',
      });
    }
    const params = parseClusterParams(input.source, value, input.packageDir);
    parseRegistryConnections(input.source, `${FIELD}.private_registry_connection_info`, params.registryConnections, input.packageDir);
    const sealed = await sealClusterParams(value as Obj, services.seal);
    return { ...input.request, additionalParams: { ...ap, [PARAM]: sealed } } as LcmRequest;
  }

  /** The parameters for this hook: the request's (instantiate, or a heal that gives them again), else the recorded ones. */
  async function load(ctx: HookContext, record: KubernetesMgmtRecord | undefined): Promise<State> {
    const fromRequest = additionalParams(ctx.request)[PARAM];
    const sealed = isObject(fromRequest) ? fromRequest : record?.params;
    if (!sealed) {
      throw new VnfmError(`vnf instance ${ctx.vnfInstanceId} has no recorded ${PARAM}`, {
        hint: 'was it instantiated by a vnfm with the kubernetes-mgmt driver? Heal the whole cluster with the parameters in the request',
      });
    }
    const plain = await openClusterParams(sealed, services.open);
    const source = `vnf instance ${ctx.vnfInstanceId}`;
    const params = parseClusterParams(source, plain, ctx.packageDir);
    const registries = parseRegistryConnections(source, `${FIELD}.private_registry_connection_info`, params.registryConnections, ctx.packageDir);
    const script = readFileSync(packageFile(source, `${FIELD}.script_path`, params.scriptPath, ctx.packageDir), 'utf8');
    let adminManifest = ADMIN_MANIFEST;
    try {
      adminManifest = readFileSync(packageFile(source, ADMIN_MANIFEST_PATH, ADMIN_MANIFEST_PATH, ctx.packageDir), 'utf8');
    } catch {
      // The package carries no manifest of its own: the driver's is the same.
    }
    const secrets = [...secretsOf(params), ...sealedStrings(sealed, plain)];
    return { params, registries, script, adminManifest, sealed: await sealClusterParams(sealed, services.seal), secrets };
  }

  async function connect(ctx: HookContext, state: State, node: ClusterNode, extraSecrets: readonly string[] = []): Promise<SshSession> {
    if (!services.ssh || !services.hostKeys) throw new VnfmError('the kubernetes-mgmt driver cannot reach nodes: this vnfm has no SSH client wired in');
    const group = node.role === 'master' ? state.params.master : state.params.worker;
    return services.ssh(
      {
        host: node.sshAddress,
        username: group.username,
        ...(group.password ? { password: group.password } : {}),
        ...(group.privateKey ? { privateKey: group.privateKey } : {}),
        serverId: node.serverId,
        label: `${node.vduId} ${node.nodeName} (${node.sshAddress})`,
      },
      {
        hostKeys: services.hostKeys,
        acceptHostKeys: ctx.acceptHostKeys,
        ...(services.sshRetry ? { retry: services.sshRetry } : {}),
        signal: ctx.signal,
        log: ctx.log,
        report: ctx.report,
        secrets: [...state.secrets, ...extraSecrets],
      },
    );
  }

  async function onNode<T>(ctx: HookContext, state: State, node: ClusterNode, fn: (s: SshSession) => Promise<T>, extraSecrets: readonly string[] = []): Promise<T> {
    const session = await connect(ctx, state, node, extraSecrets);
    try {
      return await fn(session);
    } finally {
      session.close();
    }
  }

  function commonParams(state: State, endpoint: string): Record<string, string | undefined> {
    const { master, proxy } = state.params;
    return {
      CONTROL_PLANE_ENDPOINT: endpoint,
      POD_CIDR: master.podCidr,
      SERVICE_CIDR: master.clusterCidr,
      HTTP_PROXY: proxy?.httpProxy,
      HTTPS_PROXY: proxy?.httpsProxy,
      NO_PROXY: proxy?.noProxy,
      K8S_NODE_CIDR: proxy?.k8sNodeCidr,
    };
  }

  const nodeParams = (node: ClusterNode) => ({ NODE_NAME: node.nodeName, ADVERTISE_ADDRESS: node.address });

  async function configureRegistries(ctx: HookContext, state: State, session: SshSession): Promise<void> {
    if (state.registries.length === 0) return;
    const r = await configureRegistryConnections(session, state.registries, { packageDir: ctx.packageDir, signal: ctx.signal, report: ctx.report });
    ctx.report(
      `${session.target.label}: registry connections ${r.changed.length ? `configured (${r.changed.length} file${r.changed.length === 1 ? '' : 's'} changed${r.restarted.length ? `, ${r.restarted.join(' and ')} restarted` : ''})` : 'already in place'}`,
    );
  }

  async function joinNode(ctx: HookContext, state: State, node: ClusterNode, endpoint: string, facts: JoinFacts): Promise<void> {
    await onNode(
      ctx,
      state,
      node,
      async (s) => {
        ctx.report(`${s.target.label}: joining the cluster as a ${node.role === 'master' ? 'control-plane node' : 'worker'}`);
        await prepareNode(s, state.script);
        await runScript(s, 'join', {
          ...commonParams(state, endpoint),
          ...nodeParams(node),
          JOIN_TOKEN: facts.token,
          CA_CERT_HASH: facts.caCertHash,
          ...(node.role === 'master' ? { CONTROL_PLANE: 'true', CERTIFICATE_KEY: facts.certificateKey } : {}),
        });
        await configureRegistries(ctx, state, s);
      },
      [facts.token, facts.certificateKey],
    );
  }

  /** Joins masters one at a time (etcd grows by one member at a time), then workers in parallel. */
  async function joinAll(ctx: HookContext, state: State, first: SshSession, endpoint: string, masters: ClusterNode[], workers: ClusterNode[]): Promise<void> {
    if (masters.length === 0 && workers.length === 0) return;
    const facts = await joinFacts(first, commonParams(state, endpoint));
    for (const m of masters) await joinNode(ctx, state, m, endpoint, facts);
    await forEachNode(workers, concurrency, (w) => `${w.vduId} ${w.nodeName} (${w.sshAddress})`, (w) => joinNode(ctx, state, w, endpoint, facts));
  }

  /** kubeadm init on the first master, joins, registry connections, the admin token; returns the VIM's credentials. */
  async function installCluster(ctx: HookContext, state: State, masters: ClusterNode[], workers: ClusterNode[], endpoint: string): Promise<{ token: string; caPem: string }> {
    const [first, ...others] = masters as [ClusterNode, ...ClusterNode[]];
    return onNode(ctx, state, first, async (s) => {
      ctx.report(`${s.target.label}: installing the first master (kubeadm init, endpoint ${endpoint})`);
      await prepareNode(s, state.script, state.adminManifest);
      await runScript(s, 'init', { ...commonParams(state, endpoint), ...nodeParams(first) });
      await configureRegistries(ctx, state, s);
      await joinAll(ctx, state, s, endpoint, others, workers);
      ctx.report(`${s.target.label}: creating the admin service account token`);
      return adminCredentials(s, commonParams(state, endpoint));
    });
  }

  async function registerVim(ctx: HookContext, name: string, endpoint: string, creds: { token: string; caPem: string }, prior?: KubernetesMgmtRecord): Promise<string | undefined> {
    const registry = services.vims;
    if (!registry) {
      ctx.report(`the cluster is installed; this vnfm has no VIM store, so it is not registered as VIM ${name}`);
      return undefined;
    }
    const kubeconfig = renderKubeconfig(name, endpoint, creds.caPem, creds.token);
    const origin = `the admin service account of the kubeadm cluster of vnf instance ${ctx.vnfInstanceId}`;
    const extra = { [OWNER_EXTRA]: ctx.vnfInstanceId };
    const existing = (prior?.vimId ? registry.find(prior.vimId) : undefined) ?? registry.find(name);
    if (existing && (existing.id === prior?.vimId || existing.name === name)) {
      if (existing.id !== prior?.vimId && existing.spec.extra?.[OWNER_EXTRA] !== ctx.vnfInstanceId) {
        throw new ConflictError(`a VIM named "${name}" is already registered (${existing.id}) and does not belong to vnf instance ${ctx.vnfInstanceId}`, {
          hint: `choose another ${FIELD}.vim_name, or delete that VIM (vnfm vim-delete ${name}), then retry`,
        });
      }
      ctx.report(`updating VIM ${existing.name} with the cluster's new credentials (https://${endpoint})`);
      return (await registry.update(existing.id, { kubeconfig, origin, isDefault: existing.isDefault, extra })).id;
    }
    ctx.report(`registering the cluster (https://${endpoint}) as VIM ${name}`);
    return (await registry.register({ name, description: `Kubernetes cluster of vnf instance ${ctx.vnfInstanceId} (kubeadm)`, isDefault: false, kubeconfig, origin, extra })).id;
  }

  /** Installs the whole cluster on the instance's servers (instantiate, heal of the whole cluster). */
  async function install(ctx: HookContext, prior: KubernetesMgmtRecord | undefined): Promise<HookOutcome> {
    const state = await load(ctx, prior);
    const instance = ctx.result ?? ctx.instance;
    const { masters, workers } = clusterNodes(instance, state.params);
    if (masters.length === 0) {
      throw new VnfmError(`no server of vnf instance ${ctx.vnfInstanceId} has an address on connection point "${state.params.master.sshCpName}" (${FIELD}.master_node.ssh_cp_name)`, {
        hint: 'the masters are the servers of that connection point: check the name against the VNFD',
      });
    }
    const endpoint = clusterEndpoint(instance, state.params, masters[0]!);
    const creds = await installCluster(ctx, state, masters, workers, endpoint);
    const vimName = state.params.vimName ?? prior?.vimName ?? `kubernetes_vim_${ctx.vnfInstanceId}`;
    const vimId = await registerVim(ctx, vimName, endpoint, creds, prior);
    forgetGone(prior, instance);
    const record: KubernetesMgmtRecord = { params: state.sealed, vimName, ...(vimId ? { vimId } : {}), endpoint, masters, workers };
    return { record: { [NAME]: record } };
  }

  /** Forgets the host keys of servers the cluster no longer has. */
  function forgetGone(prior: KubernetesMgmtRecord | undefined, instance: VnfInstance | undefined): void {
    if (!prior || !services.hostKeys) return;
    const present = new Set(vnfcsOf(instance?.instantiatedVnfInfo).map((v) => v.resourceId));
    const gone = [...prior.masters, ...prior.workers].map((n) => n.serverId).filter((id) => !present.has(id));
    if (gone.length) services.hostKeys.forget(gone);
  }

  /** The master to run kubectl on while `leaving` go: the recorded first master unless it leaves. */
  function operatingMaster(record: KubernetesMgmtRecord, masters: ClusterNode[], leaving: ReadonlySet<string>): ClusterNode {
    const m = masters.find((x) => !leaving.has(x.serverId));
    if (!m) {
      throw new VnfmError(`this would remove every master of the cluster (VIM ${record.vimName})`, {
        hint: 'heal the whole cluster instead (vnfm vnf-heal VNF with no --vnfc-instance)',
      });
    }
    return m;
  }

  /** Drains and deletes Nodes (and a master's etcd member) from a remaining master; `reset`: kubeadm reset on the leaving VMs. */
  async function removeNodes(ctx: HookContext, state: State, record: KubernetesMgmtRecord, leaving: ClusterNode[], opts: { force: boolean; reset: boolean }): Promise<void> {
    if (leaving.length === 0) return;
    const { masters } = clusterNodes(ctx.instance, state.params, record);
    const ids = new Set(leaving.map((n) => n.serverId));
    const via = operatingMaster(record, masters, ids);
    await onNode(ctx, state, via, async (s) => {
      for (const node of leaving) {
        ctx.report(`${s.target.label}: draining and deleting node ${node.nodeName}`);
        const had = await drainAndDelete(s, node.nodeName, { force: opts.force });
        if (!had) ctx.report(`node ${node.nodeName} is not in the cluster (any more)`);
        if (node.role === 'master' && (await removeEtcdMember(s, via.nodeName, node.nodeName))) ctx.report(`etcd member ${node.nodeName} removed`);
      }
    });
    if (!opts.reset) return;
    await forEachNode(leaving, concurrency, (n) => n.nodeName, async (node) => {
      try {
        await onNode(ctx, state, node, (s) => resetNode(s));
      } catch (err) {
        // The VM goes anyway: a reset that cannot run is not worth failing the scale-in for.
        ctx.report(`${node.nodeName}: kubeadm reset skipped (${(err as Error).message.split('\n')[0]})`);
      }
    });
  }

  function requireRecord(ctx: HookContext): KubernetesMgmtRecord | undefined {
    const record = recordOf(ctx.instance);
    if (!record) ctx.report(`${ctx.hook}: vnf instance ${ctx.vnfInstanceId} has no kubeadm cluster recorded: nothing to do`);
    return record;
  }

  async function scaleStart(ctx: HookContext): Promise<HookOutcome> {
    const record = requireRecord(ctx);
    if (!record || !ctx.removing) return {};
    const state = await load(ctx, record);
    const { masters, workers } = clusterNodes(ctx.instance, state.params, record);
    const cluster = [...masters, ...workers];
    const victims = [
      ...scaleInVictims(ctx.instance, ctx.removing, state.params.master.sshCpName),
      ...scaleInVictims(ctx.instance, ctx.removing, state.params.worker.sshCpName),
    ];
    const leaving = cluster.filter((n) => victims.some((v) => v.serverId === n.serverId));
    await removeNodes(ctx, state, record, leaving, { force: false, reset: true });
    return {};
  }

  /** Joins the servers the operation added (scale-out, heal of single nodes) and records the cluster as it is now. */
  async function joinNew(ctx: HookContext, record: KubernetesMgmtRecord): Promise<HookOutcome> {
    const state = await load(ctx, record);
    const { masters, workers } = clusterNodes(ctx.result, state.params, record);
    const added = new Set([
      ...newNodes(ctx.instance, ctx.result, state.params.master.sshCpName),
      ...newNodes(ctx.instance, ctx.result, state.params.worker.sshCpName),
    ].map((n) => n.serverId));
    const newMasters = masters.filter((m) => added.has(m.serverId));
    const newWorkers = workers.filter((w) => added.has(w.serverId));
    if (newMasters.length + newWorkers.length > 0) {
      const via = operatingMaster(record, masters, added);
      await onNode(ctx, state, via, (s) => joinAll(ctx, state, s, record.endpoint, newMasters, newWorkers));
    }
    forgetGone(record, ctx.result);
    const ordered = [...masters.filter((m) => !added.has(m.serverId)), ...newMasters];
    const next: KubernetesMgmtRecord = { ...record, params: state.sealed, masters: ordered, workers };
    return { record: { [NAME]: next } };
  }

  function healedVnfcs(ctx: HookContext): string[] | 'all' {
    const req = ctx.request as HealVnfRequest | undefined;
    if (!req?.vnfcInstanceId?.length || additionalParams(req)['all'] === true) return 'all';
    return req.vnfcInstanceId;
  }

  async function healStart(ctx: HookContext): Promise<HookOutcome> {
    const record = requireRecord(ctx);
    if (!record) return {};
    const healed = healedVnfcs(ctx);
    if (healed === 'all') {
      ctx.report('heal of the whole cluster: it is installed again on the new servers at heal_end');
      return {};
    }
    const state = await load(ctx, record);
    const { masters, workers } = clusterNodes(ctx.instance, state.params, record);
    const leaving = [...masters, ...workers].filter((n) => healed.includes(n.vnfcId));
    await removeNodes(ctx, state, record, leaving, { force: true, reset: false });
    return {};
  }

  async function healEnd(ctx: HookContext): Promise<HookOutcome> {
    const record = requireRecord(ctx);
    if (!record) return {};
    if (healedVnfcs(ctx) === 'all') return install(ctx, record);
    return joinNew(ctx, record);
  }

  function checkRemovable(ctx: HookContext): HookOutcome {
    const record = recordOf(ctx.instance);
    const registry = services.vims;
    if (!record?.vimId || !registry?.find(record.vimId)) return {};
    const users = registry.usedBy(record.vimId);
    if (users.length > 0) {
      throw new ConflictError(`VIM "${record.vimName}" (the Kubernetes cluster of this instance) has VNF instances running on it: ${users.join(', ')}`, {
        hint: 'terminate those instances first (nothing was changed), then retry this terminate',
      });
    }
    return {};
  }

  function removeVim(ctx: HookContext): HookOutcome {
    const record = recordOf(ctx.instance);
    if (!record) return {};
    const registry = services.vims;
    if (record.vimId && registry?.find(record.vimId)) {
      registry.remove(record.vimId);
      ctx.report(`VIM ${record.vimName} removed`);
    }
    services.hostKeys?.forget([...record.masters, ...record.workers].map((n) => n.serverId));
    return { record: { [NAME]: null } };
  }

  return {
    name: NAME,
    hooks: ['instantiate_end', 'scale_start', 'scale_end', 'heal_start', 'heal_end', 'terminate_start', 'terminate_end'],
    prepare,
    async runHook(ctx) {
      switch (ctx.hook) {
        case 'instantiate_end':
          return install(ctx, recordOf(ctx.instance));
        case 'scale_start':
          return scaleStart(ctx);
        case 'scale_end': {
          const record = requireRecord(ctx);
          return record ? joinNew(ctx, record) : {};
        }
        case 'heal_start':
          return healStart(ctx);
        case 'heal_end':
          return healEnd(ctx);
        case 'terminate_start':
          return checkRemovable(ctx);
        case 'terminate_end':
          return removeVim(ctx);
        default:
          return {};
      }
    },
  };
}
