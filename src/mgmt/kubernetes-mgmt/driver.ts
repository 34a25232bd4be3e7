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
import { ConflictError, ValidationError, VnfmError } from '../../errors.js';
import type { HealVnfRequest, LcmRequest, VnfInstance } from '../../model/lcm.js';
import type { BuiltinDriver, ManagementServices } from '../builtin.js';
import { OWNER_EXTRA } from '../capi-credentials.js';
import type { HookContext, HookOutcome, PrepareInput } from '../index.js';
import { vnfcsOf } from '../../model/vnfcs.js';
import { newNodes, scaleInVictims } from '../nodes.js';
import { additionalParams, isObject } from '../request.js';
import { sealedStrings } from '../sealed.js';
import { forEachNode } from '../ssh/parallel.js';
import type { SshSession } from '../ssh/types.js';
import { adminCredentials, drainAndDelete, joinFacts, prepareNode, removeEtcdMember, resetNode, runScript, type ClusterNode, type JoinFacts } from './cluster.js';
import { openClusterParams, packageFile, PARAM, parseClusterParams, sealClusterParams, secretsOf, type Obj } from './params.js';
import { configureRegistryConnections, parseRegistryConnections } from './registry-connections.js';
import { ADMIN_MANIFEST, ADMIN_MANIFEST_PATH, clusterEndpoint, clusterNodes, FIELD, NAME, recordOf, renderKubeconfig, type KubernetesMgmtRecord, type State } from './topology.js';

/** The driver's hooks for one vnfm: the services it was given, the nodes an instance's VNFCs are. */
class KubernetesMgmt {
  private readonly concurrency: number;

  constructor(private readonly services: ManagementServices) {
    this.concurrency = services.sshConcurrency ?? 10;
  }

  async prepare(input: PrepareInput): Promise<LcmRequest> {
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
    const sealed = await sealClusterParams(value as Obj, this.services.seal);
    return { ...input.request, additionalParams: { ...ap, [PARAM]: sealed } } as LcmRequest;
  }

  /** The parameters for this hook: the request's (instantiate, or a heal that gives them again), else the recorded ones. */
  private async load(ctx: HookContext, record: KubernetesMgmtRecord | undefined): Promise<State> {
    const fromRequest = additionalParams(ctx.request)[PARAM];
    const sealed = isObject(fromRequest) ? fromRequest : record?.params;
    if (!sealed) {
      throw new VnfmError(`vnf instance ${ctx.vnfInstanceId} has no recorded ${PARAM}`, {
        hint: 'was it instantiated by a vnfm with the kubernetes-mgmt driver? Heal the whole cluster with the parameters in the request',
      });
    }
    const plain = await openClusterParams(sealed, this.services.open);
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
    return { params, registries, script, adminManifest, sealed: await sealClusterParams(sealed, this.services.seal), secrets };
  }

  private async connect(ctx: HookContext, state: State, node: ClusterNode, extraSecrets: readonly string[] = []): Promise<SshSession> {
    if (!this.services.ssh || !this.services.hostKeys) throw new VnfmError('the kubernetes-mgmt driver cannot reach nodes: this vnfm has no SSH client wired in');
    const group = node.role === 'master' ? state.params.master : state.params.worker;
    return this.services.ssh(
      {
        host: node.sshAddress,
        username: group.username,
        ...(group.password ? { password: group.password } : {}),
        ...(group.privateKey ? { privateKey: group.privateKey } : {}),
        serverId: node.serverId,
        label: `${node.vduId} ${node.nodeName} (${node.sshAddress})`,
      },
      {
        hostKeys: this.services.hostKeys,
        acceptHostKeys: ctx.acceptHostKeys,
        ...(this.services.sshRetry ? { retry: this.services.sshRetry } : {}),
        signal: ctx.signal,
        log: ctx.log,
        report: ctx.report,
        secrets: [...state.secrets, ...extraSecrets],
      },
    );
  }

  private async onNode<T>(ctx: HookContext, state: State, node: ClusterNode, fn: (s: SshSession) => Promise<T>, extraSecrets: readonly string[] = []): Promise<T> {
    const session = await this.connect(ctx, state, node, extraSecrets);
    try {
      return await fn(session);
    } finally {
      session.close();
    }
  }

  private commonParams(state: State, endpoint: string): Record<string, string | undefined> {
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

  private nodeParams(node: ClusterNode): Record<string, string> {
    return { NODE_NAME: node.nodeName, ADVERTISE_ADDRESS: node.address };
  }

  private async configureRegistries(ctx: HookContext, state: State, session: SshSession): Promise<void> {
    if (state.registries.length === 0) return;
    const r = await configureRegistryConnections(session, state.registries, { packageDir: ctx.packageDir, signal: ctx.signal, report: ctx.report });
    ctx.report(
      `${session.target.label}: registry connections ${r.changed.length ? `configured (${r.changed.length} file${r.changed.length === 1 ? '' : 's'} changed${r.restarted.length ? `, ${r.restarted.join(' and ')} restarted` : ''})` : 'already in place'}`,
    );
  }

  private async joinNode(ctx: HookContext, state: State, node: ClusterNode, endpoint: string, facts: JoinFacts): Promise<void> {
    await this.onNode(
      ctx,
      state,
      node,
      async (s) => {
        ctx.report(`${s.target.label}: joining the cluster as a ${node.role === 'master' ? 'control-plane node' : 'worker'}`);
        await prepareNode(s, state.script);
        await runScript(s, 'join', {
          ...this.commonParams(state, endpoint),
          ...this.nodeParams(node),
          JOIN_TOKEN: facts.token,
          CA_CERT_HASH: facts.caCertHash,
          ...(node.role === 'master' ? { CONTROL_PLANE: 'true', CERTIFICATE_KEY: facts.certificateKey } : {}),
        });
        await this.configureRegistries(ctx, state, s);
      },
      [facts.token, facts.certificateKey],
    );
  }

  /** Joins masters one at a time (etcd grows by one member at a time), then workers in parallel. */
  private async joinAll(ctx: HookContext, state: State, first: SshSession, endpoint: string, masters: ClusterNode[], workers: ClusterNode[]): Promise<void> {
    if (masters.length === 0 && workers.length === 0) return;
    const facts = await joinFacts(first, this.commonParams(state, endpoint));
    for (const m of masters) await this.joinNode(ctx, state, m, endpoint, facts);
    await forEachNode(
      workers,
      this.concurrency,
      (w) => `${w.vduId} ${w.nodeName} (${w.sshAddress})`,
      (w) => this.joinNode(ctx, state, w, endpoint, facts),
    );
  }

  /** kubeadm init on the first master, joins, registry connections, the admin token; returns the VIM's credentials. */
  private async installCluster(ctx: HookContext, state: State, masters: ClusterNode[], workers: ClusterNode[], endpoint: string): Promise<{ token: string; caPem: string }> {
    const [first, ...others] = masters as [ClusterNode, ...ClusterNode[]];
    return this.onNode(ctx, state, first, async (s) => {
      ctx.report(`${s.target.label}: installing the first master (kubeadm init, endpoint ${endpoint})`);
      await prepareNode(s, state.script, state.adminManifest);
      await runScript(s, 'init', { ...this.commonParams(state, endpoint), ...this.nodeParams(first) });
      await this.configureRegistries(ctx, state, s);
      await this.joinAll(ctx, state, s, endpoint, others, workers);
      ctx.report(`${s.target.label}: creating the admin service account token`);
      return adminCredentials(s, this.commonParams(state, endpoint));
    });
  }

  private async registerVim(ctx: HookContext, name: string, endpoint: string, creds: { token: string; caPem: string }, prior?: KubernetesMgmtRecord): Promise<string | undefined> {
    const registry = this.services.vims;
    if (!registry) {
      ctx.report(`the cluster is installed; this vnfm has no VIM store, so it is not registered as VIM ${name}`);
      return undefined;
    }
    const kubeconfig = renderKubeconfig(name, endpoint, creds.caPem, creds.token);
    const origin = `the admin service account of the kubeadm cluster of vnf instance ${ctx.vnfInstanceId}`;
    const extra = { [OWNER_EXTRA]: ctx.vnfInstanceId };
    const existing = (prior?.vimId ? await registry.find(prior.vimId) : undefined) ?? (await registry.find(name));
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
  private async install(ctx: HookContext, prior: KubernetesMgmtRecord | undefined): Promise<HookOutcome> {
    const state = await this.load(ctx, prior);
    const instance = ctx.result ?? ctx.instance;
    const { masters, workers } = clusterNodes(instance, state.params);
    if (masters.length === 0) {
      throw new VnfmError(
        `no server of vnf instance ${ctx.vnfInstanceId} has an address on connection point "${state.params.master.sshCpName}" (${FIELD}.master_node.ssh_cp_name)`,
        {
          hint: 'the masters are the servers of that connection point: check the name against the VNFD',
        },
      );
    }
    const endpoint = clusterEndpoint(instance, state.params, masters[0]!);
    const creds = await this.installCluster(ctx, state, masters, workers, endpoint);
    const vimName = state.params.vimName ?? prior?.vimName ?? `kubernetes_vim_${ctx.vnfInstanceId}`;
    const vimId = await this.registerVim(ctx, vimName, endpoint, creds, prior);
    await this.forgetGone(prior, instance);
    const record: KubernetesMgmtRecord = { params: state.sealed, vimName, ...(vimId ? { vimId } : {}), endpoint, masters, workers };
    return { record: { [NAME]: record } };
  }

  /** Forgets the host keys of servers the cluster no longer has. */
  private async forgetGone(prior: KubernetesMgmtRecord | undefined, instance: VnfInstance | undefined): Promise<void> {
    if (!prior || !this.services.hostKeys) return;
    const present = new Set(vnfcsOf(instance?.instantiatedVnfInfo).map((v) => v.resourceId));
    const gone = [...prior.masters, ...prior.workers].map((n) => n.serverId).filter((id) => !present.has(id));
    if (gone.length) await this.services.hostKeys.forget(gone);
  }

  /** The master to run kubectl on while `leaving` go: the recorded first master unless it leaves. */
  private operatingMaster(record: KubernetesMgmtRecord, masters: ClusterNode[], leaving: ReadonlySet<string>): ClusterNode {
    const m = masters.find((x) => !leaving.has(x.serverId));
    if (!m) {
      throw new VnfmError(`this would remove every master of the cluster (VIM ${record.vimName})`, {
        hint: 'heal the whole cluster instead (vnfm vnf-heal VNF with no --vnfc-instance)',
      });
    }
    return m;
  }

  /** Drains and deletes Nodes (and a master's etcd member) from a remaining master; `reset`: kubeadm reset on the leaving VMs. */
  private async removeNodes(ctx: HookContext, state: State, record: KubernetesMgmtRecord, leaving: ClusterNode[], opts: { force: boolean; reset: boolean }): Promise<void> {
    if (leaving.length === 0) return;
    const { masters } = clusterNodes(ctx.instance, state.params, record);
    const ids = new Set(leaving.map((n) => n.serverId));
    const via = this.operatingMaster(record, masters, ids);
    await this.onNode(ctx, state, via, async (s) => {
      for (const node of leaving) {
        ctx.report(`${s.target.label}: draining and deleting node ${node.nodeName}`);
        const had = await drainAndDelete(s, node.nodeName, { force: opts.force });
        if (!had) ctx.report(`node ${node.nodeName} is not in the cluster (any more)`);
        if (node.role === 'master' && (await removeEtcdMember(s, via.nodeName, node.nodeName))) ctx.report(`etcd member ${node.nodeName} removed`);
      }
    });
    if (!opts.reset) return;
    await forEachNode(
      leaving,
      this.concurrency,
      (n) => n.nodeName,
      async (node) => {
        try {
          await this.onNode(ctx, state, node, (s) => resetNode(s));
        } catch (err) {
          // The VM goes anyway: a reset that cannot run is not worth failing the scale-in for.
          ctx.report(`${node.nodeName}: kubeadm reset skipped (${(err as Error).message.split('\n')[0]})`);
        }
      },
    );
  }

  private requireRecord(ctx: HookContext): KubernetesMgmtRecord | undefined {
    const record = recordOf(ctx.instance);
    if (!record) ctx.report(`${ctx.hook}: vnf instance ${ctx.vnfInstanceId} has no kubeadm cluster recorded: nothing to do`);
    return record;
  }

  private async scaleStart(ctx: HookContext): Promise<HookOutcome> {
    const record = this.requireRecord(ctx);
    if (!record || !ctx.removing) return {};
    const state = await this.load(ctx, record);
    const { masters, workers } = clusterNodes(ctx.instance, state.params, record);
    const cluster = [...masters, ...workers];
    const victims = [...scaleInVictims(ctx.instance, ctx.removing, state.params.master.sshCpName), ...scaleInVictims(ctx.instance, ctx.removing, state.params.worker.sshCpName)];
    const leaving = cluster.filter((n) => victims.some((v) => v.serverId === n.serverId));
    await this.removeNodes(ctx, state, record, leaving, { force: false, reset: true });
    return {};
  }

  /** Joins the servers the operation added (scale-out, heal of single nodes) and records the cluster as it is now. */
  private async joinNew(ctx: HookContext, record: KubernetesMgmtRecord): Promise<HookOutcome> {
    const state = await this.load(ctx, record);
    const { masters, workers } = clusterNodes(ctx.result, state.params, record);
    const added = new Set(
      [...newNodes(ctx.instance, ctx.result, state.params.master.sshCpName), ...newNodes(ctx.instance, ctx.result, state.params.worker.sshCpName)].map((n) => n.serverId),
    );
    const newMasters = masters.filter((m) => added.has(m.serverId));
    const newWorkers = workers.filter((w) => added.has(w.serverId));
    if (newMasters.length + newWorkers.length > 0) {
      const via = this.operatingMaster(record, masters, added);
      await this.onNode(ctx, state, via, (s) => this.joinAll(ctx, state, s, record.endpoint, newMasters, newWorkers));
    }
    await this.forgetGone(record, ctx.result);
    const ordered = [...masters.filter((m) => !added.has(m.serverId)), ...newMasters];
    const next: KubernetesMgmtRecord = { ...record, params: state.sealed, masters: ordered, workers };
    return { record: { [NAME]: next } };
  }

  private healedVnfcs(ctx: HookContext): string[] | 'all' {
    const req = ctx.request as HealVnfRequest | undefined;
    if (!req?.vnfcInstanceId?.length || additionalParams(req)['all'] === true) return 'all';
    return req.vnfcInstanceId;
  }

  private async healStart(ctx: HookContext): Promise<HookOutcome> {
    const record = this.requireRecord(ctx);
    if (!record) return {};
    const healed = this.healedVnfcs(ctx);
    if (healed === 'all') {
      ctx.report('heal of the whole cluster: it is installed again on the new servers at heal_end');
      return {};
    }
    const state = await this.load(ctx, record);
    const { masters, workers } = clusterNodes(ctx.instance, state.params, record);
    const leaving = [...masters, ...workers].filter((n) => healed.includes(n.vnfcId));
    await this.removeNodes(ctx, state, record, leaving, { force: true, reset: false });
    return {};
  }

  private async healEnd(ctx: HookContext): Promise<HookOutcome> {
    const record = this.requireRecord(ctx);
    if (!record) return {};
    if (this.healedVnfcs(ctx) === 'all') return this.install(ctx, record);
    return this.joinNew(ctx, record);
  }

  private async checkRemovable(ctx: HookContext): Promise<HookOutcome> {
    const record = recordOf(ctx.instance);
    const registry = this.services.vims;
    if (!record?.vimId || !registry?.find(record.vimId)) return {};
    const users = await registry.usedBy(record.vimId);
    if (users.length > 0) {
      throw new ConflictError(`VIM "${record.vimName}" (the Kubernetes cluster of this instance) has VNF instances running on it: ${users.join(', ')}`, {
        hint: 'terminate those instances first (nothing was changed), then retry this terminate',
      });
    }
    return {};
  }

  private async removeVim(ctx: HookContext): Promise<HookOutcome> {
    const record = recordOf(ctx.instance);
    if (!record) return {};
    const registry = this.services.vims;
    if (record.vimId && (await registry?.find(record.vimId))) {
      await registry!.remove(record.vimId);
      ctx.report(`VIM ${record.vimName} removed`);
    }
    await this.services.hostKeys?.forget([...record.masters, ...record.workers].map((n) => n.serverId));
    return { record: { [NAME]: null } };
  }

  async runHook(ctx: HookContext): Promise<HookOutcome> {
    switch (ctx.hook) {
      case 'instantiate_end':
        return this.install(ctx, recordOf(ctx.instance));
      case 'scale_start':
        return this.scaleStart(ctx);
      case 'scale_end': {
        const record = this.requireRecord(ctx);
        return record ? this.joinNew(ctx, record) : {};
      }
      case 'heal_start':
        return this.healStart(ctx);
      case 'heal_end':
        return this.healEnd(ctx);
      case 'terminate_start':
        return this.checkRemovable(ctx);
      case 'terminate_end':
        return this.removeVim(ctx);
      default:
        return {};
    }
  }
}

export function createKubernetesMgmtDriver(services: ManagementServices): BuiltinDriver {
  const driver = new KubernetesMgmt(services);
  return {
    name: NAME,
    hooks: ['instantiate_end', 'scale_start', 'scale_end', 'heal_start', 'heal_end', 'terminate_start', 'terminate_end'],
    prepare: (input) => driver.prepare(input),
    runHook: (ctx) => driver.runHook(ctx),
  };
}
