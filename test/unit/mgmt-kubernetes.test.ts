/**
 * The kubernetes-mgmt driver against scripted nodes: what it runs where
 * (init on the first master, join everywhere else, drain/delete on a master,
 * etcd member removal), what it registers as a VIM, what it records, and the
 * parameter checks before an operation starts. The real script, stand-ins
 * and SSH run in test/e2e/kubernetes-cluster-vnf.test.ts.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, ValidationError, VnfmError } from '../../src/errors.js';
import type { LcmRequest, VimConnection, VnfInstance } from '../../src/lcm/index.js';
import { createManagementDriver, type HookContext, type ManagementServices, type WorkloadVimRegistry } from '../../src/mgmt/index.js';
import type { ExecOptions, ExecResult, HostKeyStore, SshSession, SshTarget } from '../../src/mgmt/ssh/types.js';
import type { Vim } from '../../src/vim/index.js';
import type { HookImplementation, LcmHook } from '../../src/vnfd/index.js';

const IMPL: HookImplementation = { implementation: 'mgmt-drivers-kubernetes', artifactFile: 'Scripts/kubernetes_mgmt.py' };
const HOOKS: LcmHook[] = ['instantiate_end', 'scale_start', 'scale_end', 'heal_start', 'heal_end', 'terminate_start', 'terminate_end'];
const TOKEN = 'abcdef.0123456789abcdef';
const HASH = `sha256:${'a'.repeat(64)}`;
const CERT_KEY = 'b'.repeat(64);
const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

/** A node the driver talks to: answers what the script and kubectl would. */
class FakeNode {
  commands: string[] = [];
  files = new Map<string, string>();
  nodes = new Set<string>();
  members: { id: string; name: string }[] = [];
  /** The next `join` of the script fails (as kubeadm join would, half-way). */
  failJoin = false;
  constructor(readonly address: string) {}
}

class FakeCluster {
  byAddress = new Map<string, FakeNode>();
  connects: SshTarget[] = [];
  secrets: string[][] = [];
  unreachable = new Set<string>();
  node(address: string): FakeNode {
    let n = this.byAddress.get(address);
    if (!n) this.byAddress.set(address, (n = new FakeNode(address)));
    return n;
  }
  connector = async (target: SshTarget, opts: { secrets?: readonly string[] }): Promise<SshSession> => {
    this.connects.push(target);
    this.secrets.push([...(opts.secrets ?? [])]);
    if (this.unreachable.has(target.host)) throw new VnfmError(`${target.label}: connection refused`);
    const node = this.node(target.host);
    const cluster = this;
    return {
      target,
      async exec(command: string, o: ExecOptions = {}): Promise<ExecResult> {
        node.commands.push(command);
        let m = /^bash \S+ (\S+) (\S+)$/.exec(command);
        if (m) {
          const mode = m[1]!;
          const params = node.files.get(m[2]!) ?? '';
          node.commands[node.commands.length - 1] = `script ${mode} ${params.replace(/\n/g, ' ').trim()}`;
          if (mode === 'join' && node.failJoin) {
            node.failJoin = false;
            throw new VnfmError(`${target.label}: \`bash /var/lib/vnfm-k8s/install_k8s_cluster.sh join\` exited 1; its last output:\nkubeadm join failed`);
          }
          if (mode === 'join-facts') node.files.set('/var/lib/vnfm-k8s/join-facts.env', `TOKEN='${TOKEN}'\nCA_CERT_HASH='${HASH}'\nCERTIFICATE_KEY='${CERT_KEY}'\n`);
          if (mode === 'admin-token') node.files.set('/var/lib/vnfm-k8s/admin-token', 'admin-sa-token\n');
          if (mode === 'init') node.files.set('/etc/kubernetes/pki/ca.crt', CA);
          return { code: 0, stdout: '', stderr: '' };
        }
        m = /kubectl .* get node '?([^' ]+)'? -o name$/.exec(command);
        if (m) {
          const known = [...cluster.byAddress.values()].some((n) => n.nodes.has(m![1]!));
          return known || !o.allowFailure
            ? { code: 0, stdout: `node/${m[1]}`, stderr: '' }
            : { code: 1, stdout: '', stderr: `Error from server (NotFound): nodes "${m[1]}" not found` };
        }
        if (/member list$/.test(command))
          return { code: 0, stdout: node.members.map((x) => `${x.id}, started, ${x.name}, https://x:2380, https://x:2379, false`).join('\n'), stderr: '' };
        return { code: 0, stdout: '', stderr: '' };
      },
      async upload() {},
      async writeFile(path: string, content: string | Buffer) {
        node.files.set(path, content.toString());
      },
      async readFile(path: string) {
        return node.files.get(path);
      },
      close() {},
    };
  };
}

class FakeVims implements WorkloadVimRegistry {
  vims: Vim[] = [];
  kubeconfigs = new Map<string, string>();
  users = new Map<string, string[]>();
  calls: string[] = [];
  async find(ref: string) {
    return this.vims.find((v) => v.id === ref || v.name === ref);
  }
  async register(input: Parameters<WorkloadVimRegistry['register']>[0]) {
    this.calls.push(`register ${input.name}`);
    const vim = {
      id: `id-${input.name}`,
      name: input.name,
      description: input.description,
      isDefault: input.isDefault,
      secretNames: [],
      status: 'REACHABLE',
      createdAt: '',
      updatedAt: '',
      spec: { type: 'kubernetes', authUrl: '', auth: { method: 'bearer-token' }, verifyTls: true, extra: input.extra },
    } as unknown as Vim;
    this.vims.push(vim);
    this.kubeconfigs.set(vim.id, input.kubeconfig);
    return vim;
  }
  async update(id: string, input: Parameters<WorkloadVimRegistry['update']>[1]) {
    this.calls.push(`update ${id}`);
    this.kubeconfigs.set(id, input.kubeconfig);
    return (await this.find(id))!;
  }
  async usedBy(id: string) {
    return this.users.get(id) ?? [];
  }
  async remove(id: string) {
    this.calls.push(`remove ${id}`);
    this.vims = this.vims.filter((v) => v.id !== id);
  }
}

class FakeHostKeys implements HostKeyStore {
  forgotten: string[] = [];
  async get() {
    return undefined;
  }
  async pin() {}
  async forget(ids: readonly string[]) {
    this.forgotten.push(...ids);
  }
}

function packageDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-k8s-pkg-'));
  mkdirSync(join(dir, 'Scripts'));
  mkdirSync(join(dir, 'Files', 'registries'), { recursive: true });
  writeFileSync(join(dir, 'Scripts', 'install_k8s_cluster.sh'), '#!/bin/bash\necho install\n');
  writeFileSync(join(dir, 'Files', 'registries', 'ca.crt'), CA);
  return dir;
}

interface Server {
  vdu: 'masterNode' | 'workerNode';
  id: string;
  address: string;
  created: string;
}

function instance(servers: Server[], mgmt?: Record<string, unknown>): VnfInstance {
  return {
    id: 'inst-1',
    vnfInstanceDescription: '',
    vnfdId: 'd',
    vnfPkgId: 'p',
    vnfProvider: '',
    vnfProductName: '',
    vnfSoftwareVersion: '',
    vnfdVersion: '',
    instantiationState: 'INSTANTIATED',
    createdAt: '',
    updatedAt: '',
    instantiatedVnfInfo: {
      flavourId: 'simple',
      vnfState: 'STARTED',
      scaleStatus: [],
      maxScaleLevels: [],
      resources: [],
      vnfcResourceInfo: servers.map((s) => ({
        id: s.id,
        vduId: s.vdu,
        computeResource: { resourceId: s.id, vimLevelResourceType: 'OS::Nova::Server' },
        metadata: { creationTime: s.created, addresses: { [s.vdu === 'masterNode' ? 'masterNode_CP1' : 'workerNode_CP2']: [s.address] } },
      })),
      vnfcInfo: servers.map((s) => ({ id: `${s.vdu}-${s.id}`, vduId: s.vdu, vnfcResourceInfoId: s.id, vnfcState: 'STARTED' as const })),
      metadata: { namespace: '', 'lcm-kubernetes-def-files': [], vduReplicas: {}, ...(mgmt ? { mgmt } : {}) },
    },
  };
}

const M1: Server = { vdu: 'masterNode', id: 'srv-m1', address: '10.0.0.10', created: '2026-01-01T00:00:00Z' };
const M2: Server = { vdu: 'masterNode', id: 'srv-m2', address: '10.0.0.11', created: '2026-01-01T00:00:01Z' };
const W1: Server = { vdu: 'workerNode', id: 'srv-w1', address: '10.0.0.20', created: '2026-01-01T00:00:00Z' };
const W2: Server = { vdu: 'workerNode', id: 'srv-w2', address: '10.0.0.21', created: '2026-01-01T00:00:01Z' };
const W3: Server = { vdu: 'workerNode', id: 'srv-w3', address: '10.0.0.22', created: '2026-01-01T00:01:00Z' };

function installParams(extra: Record<string, unknown> = {}) {
  return {
    script_path: 'Scripts/install_k8s_cluster.sh',
    master_node: {
      aspect_id: 'master_instance',
      ssh_cp_name: 'masterNode_CP1',
      nic_cp_name: 'masterNode_CP1',
      username: 'ubuntu',
      password: 'm-secret',
      pod_cidr: '192.168.3.0/24',
      cluster_cidr: '10.199.187.0/24',
      cluster_cp_name: 'masterNode_CP1',
    },
    worker_node: { aspect_id: 'worker_instance', ssh_cp_name: 'workerNode_CP2', nic_cp_name: 'workerNode_CP2', username: 'ubuntu', password: 'w-secret' },
    proxy: { http_proxy: 'http://user1:proxy-pass@proxy:3128', no_proxy: '10.0.0.0/8' },
    private_registry_connection_info: [{ connection_type: 1, server: 'registry.example.com', username: 'u', password: 'reg-secret', certificate_path: 'Files/registries/ca.crt' }],
    ...extra,
  };
}

describe('kubernetes-mgmt driver', () => {
  let dir: string;
  let cluster: FakeCluster;
  let vims: FakeVims;
  let hostKeys: FakeHostKeys;
  let services: ManagementServices;
  const reports: string[] = [];

  beforeEach(() => {
    dir = packageDir();
    cluster = new FakeCluster();
    vims = new FakeVims();
    hostKeys = new FakeHostKeys();
    reports.length = 0;
    services = {
      secrets: async () => {
        throw new Error('not used');
      },
      vims,
      seal: async (plain) => ({ sealed: Buffer.from(plain).toString('base64').split('').reverse().join(''), keyId: 'k1' }),
      open: async (v) => Buffer.from(v.sealed.split('').reverse().join(''), 'base64').toString(),
      ssh: cluster.connector as ManagementServices['ssh'],
      hostKeys,
      sshConcurrency: 4,
    };
  });

  const driver = () => createManagementDriver(services);

  async function prepare(request: unknown, operation: 'INSTANTIATE' | 'SCALE' | 'HEAL' = 'INSTANTIATE'): Promise<LcmRequest> {
    return driver().prepare!({
      operation,
      hooks: ['instantiate_start', 'instantiate_end'],
      implementations: Object.fromEntries(HOOKS.map((h) => [h, IMPL])),
      request: request as LcmRequest,
      source: 'req.json',
      packageDir: dir,
      allowPackageScripts: async () => false,
    });
  }

  function ctx(hook: LcmHook, fields: Partial<HookContext>): HookContext {
    return {
      hook,
      vnfInstanceId: 'inst-1',
      operation: 'x',
      request: {},
      implementation: IMPL,
      packageDir: dir,
      signal: new AbortController().signal,
      report: (m) => reports.push(m),
      vim: {} as VimConnection,
      instance: instance([]),
      log: () => undefined,
      acceptHostKeys: [],
      allowPackageScripts: false,
      ...fields,
    };
  }

  async function instantiate(servers: Server[]) {
    // Registry connections are configured by their own module (its tests, and the e2e test): none here.
    const request = await prepare({ flavourId: 'simple', additionalParams: { k8s_cluster_installation_param: installParams({ private_registry_connection_info: undefined }) } });
    const out = await driver().runHook(ctx('instantiate_end', { request, instance: instance([]), result: instance(servers) }));
    return { request, record: (out as { record: Record<string, unknown> }).record['kubernetes-mgmt'] as Record<string, unknown> };
  }

  describe('prepare', () => {
    it('seals passwords, proxy credentials and registry passwords in the recorded request', async () => {
      const recorded = await prepare({ flavourId: 'simple', additionalParams: { k8s_cluster_installation_param: installParams() } });
      const text = JSON.stringify(recorded);
      for (const secret of ['m-secret', 'w-secret', 'proxy-pass', 'reg-secret']) expect(text).not.toContain(secret);
      const p = ((recorded as { additionalParams?: unknown }).additionalParams as Record<string, Record<string, Record<string, unknown>>>)['k8s_cluster_installation_param']!;
      expect(p['master_node']!['password']).toMatchObject({ keyId: 'k1' });
      expect(p['master_node']!['ssh_cp_name']).toBe('masterNode_CP1');
    });

    it.each([
      [{ master_node: undefined }, 'k8s_cluster_installation_param.master_node'],
      [{ script_path: 'Scripts/missing.sh' }, 'k8s_cluster_installation_param.script_path'],
      [{ script_path: '../etc/passwd' }, 'k8s_cluster_installation_param.script_path'],
      [{ worker_node: { ssh_cp_name: 'w', nic_cp_name: 'w', username: 'u' } }, 'k8s_cluster_installation_param.worker_node.password'],
      [{ master_node: { ...installParams().master_node, pod_cidr: '192.168.3.0' } }, 'k8s_cluster_installation_param.master_node.pod_cidr'],
      [{ proxy: { http_proxy: 'proxy:3128' } }, 'k8s_cluster_installation_param.proxy.http_proxy'],
      [{ private_registry_connection_info: [{ connection_type: 2, server: 'r:5000' }] }, 'private_registry_connection_info[0].connection_type'],
    ])('refuses %j naming %s', async (change, field) => {
      const err = await prepare({ flavourId: 'simple', additionalParams: { k8s_cluster_installation_param: installParams(change) } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as Error).message).toContain(field);
    });

    it('requires the parameters at instantiate, not at scale', async () => {
      await expect(prepare({ flavourId: 'simple' })).rejects.toThrow(/k8s_cluster_installation_param: is required/);
      await expect(prepare({ type: 'SCALE_OUT', aspectId: 'worker_instance' }, 'SCALE')).resolves.toMatchObject({ aspectId: 'worker_instance' });
    });
  });

  it('instantiate_end: kubeadm init on the first master, joins the others, registers the cluster as a VIM', async () => {
    const { record } = await instantiate([W2, M2, W1, M1]);
    const m1 = cluster.node(M1.address);
    const scripts = m1.commands.filter((c) => c.startsWith('script '));
    expect(scripts[0]).toMatch(/^script init .*NODE_NAME='master-10-0-0-10'.*ADVERTISE_ADDRESS='10\.0\.0\.10'/);
    expect(scripts[0]).toContain("CONTROL_PLANE_ENDPOINT='10.0.0.10:6443'");
    expect(scripts[0]).toContain("POD_CIDR='192.168.3.0/24'");
    expect(scripts[0]).toContain("SERVICE_CIDR='10.199.187.0/24'");
    expect(scripts.map((s) => s.split(' ')[1])).toEqual(['init', 'join-facts', 'admin-token']);
    // The other master joins the control plane with the certificate key; workers without.
    const m2 = cluster.node(M2.address).commands.find((c) => c.startsWith('script join'))!;
    expect(m2).toContain("CONTROL_PLANE='true'");
    expect(m2).toContain(`CERTIFICATE_KEY='${CERT_KEY}'`);
    for (const w of [W1, W2]) {
      const join = cluster.node(w.address).commands.find((c) => c.startsWith('script join'))!;
      expect(join).toContain(`JOIN_TOKEN='${TOKEN}'`);
      expect(join).toContain(`CA_CERT_HASH='${HASH}'`);
      expect(join).not.toContain('CERTIFICATE_KEY');
      expect(join).toContain(`NODE_NAME='worker-${w.address.replace(/\./g, '-')}'`);
    }
    // The join token is a secret of every joining session; the passwords of every session.
    const workerSession = cluster.connects.findIndex((t) => t.host === W1.address);
    expect(cluster.secrets[workerSession]).toEqual(expect.arrayContaining([TOKEN, CERT_KEY, 'w-secret', 'm-secret', 'proxy-pass']));
    expect(cluster.connects.find((t) => t.host === W1.address)).toMatchObject({ username: 'ubuntu', password: 'w-secret', serverId: W1.id });
    // The VIM: the default name would be kubernetes_vim_<id>; none was given here.
    expect(vims.calls).toEqual(['register kubernetes_vim_inst-1']);
    const kc = yaml.load(vims.kubeconfigs.get('id-kubernetes_vim_inst-1')!) as { clusters: { cluster: Record<string, string> }[]; users: { user: { token: string } }[] };
    expect(kc.clusters[0]!.cluster['server']).toBe('https://10.0.0.10:6443');
    expect(Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data']!, 'base64').toString()).toBe(CA);
    expect(kc.users[0]!.user.token).toBe('admin-sa-token');
    expect(vims.vims[0]!.spec.extra).toEqual({ 'vnfm-vnf-instance-id': 'inst-1' });
    expect(record).toMatchObject({ vimId: 'id-kubernetes_vim_inst-1', endpoint: '10.0.0.10:6443' });
    expect((record['masters'] as { nodeName: string }[]).map((m) => m.nodeName)).toEqual(['master-10-0-0-10', 'master-10-0-0-11']);
    expect((record['workers'] as { nodeName: string }[]).map((m) => m.nodeName)).toEqual(['worker-10-0-0-20', 'worker-10-0-0-21']);
    expect(JSON.stringify(record)).not.toContain('m-secret');
  });

  it('a worker failing half-way fails the hook naming it, after the other nodes finished; the retry runs the join again', async () => {
    cluster.node(W2.address).failJoin = true;
    const err = await instantiate([M1, W1, W2]).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/1 of 2 nodes failed:\n- workerNode worker-10-0-0-21 \(10\.0\.0\.21\): [\s\S]*kubeadm join failed/);
    expect(cluster.node(W1.address).commands.some((c) => c.startsWith('script join'))).toBe(true);
    expect(vims.calls).toEqual([]);
    await instantiate([M1, W1, W2]);
    expect(cluster.node(W2.address).commands.filter((c) => c.startsWith('script join'))).toHaveLength(2);
    expect(vims.calls).toEqual(['register kubernetes_vim_inst-1']);
  });

  it('instantiate_end again (retry) updates the VIM it registered instead of failing on the name', async () => {
    await instantiate([M1, W1]);
    await instantiate([M1, W1]);
    expect(vims.calls).toEqual(['register kubernetes_vim_inst-1', 'update id-kubernetes_vim_inst-1']);
  });

  it('instantiate_end refuses a VIM name another instance owns', async () => {
    await vims.register({ name: 'kubernetes_vim_inst-1', description: '', isDefault: false, kubeconfig: '', origin: '', extra: {} });
    await expect(instantiate([M1, W1])).rejects.toBeInstanceOf(ConflictError);
  });

  it('scale: drains and deletes the newest worker on the first master, resets it; scale_end joins only the new one', async () => {
    const { record } = await instantiate([M1, W1, W2]);
    const before = instance([M1, W1, W2, W3], { 'kubernetes-mgmt': record });
    cluster.node(M1.address).nodes.add('worker-10-0-0-22');
    cluster.node(M1.address).commands = [];
    await driver().runHook(ctx('scale_start', { instance: before, removing: { workerNode: 1 }, request: { type: 'SCALE_IN', aspectId: 'worker_instance' } }));
    const onMaster = cluster.node(M1.address).commands;
    expect(
      onMaster.some((c) => /kubectl --kubeconfig \/etc\/kubernetes\/admin.conf drain 'worker-10-0-0-22' --ignore-daemonsets --delete-emptydir-data --timeout=300s$/.test(c)),
    ).toBe(true);
    expect(onMaster.some((c) => c.endsWith("delete node 'worker-10-0-0-22' --ignore-not-found"))).toBe(true);
    expect(cluster.node(W3.address).commands).toContain('kubeadm reset -f');
    expect(cluster.node(W2.address).commands.filter((c) => c.includes('reset'))).toEqual([]);

    // Scale out: W3 is new; W1 and W2 are not touched again.
    const w1Before = cluster.node(W1.address).commands.length;
    const out = await driver().runHook(ctx('scale_end', { instance: instance([M1, W1, W2], { 'kubernetes-mgmt': record }), result: instance([M1, W1, W2, W3]), request: {} }));
    expect(cluster.node(W1.address).commands.length).toBe(w1Before);
    expect(cluster.node(W3.address).commands.some((c) => c.startsWith('script join'))).toBe(true);
    const next = (out as { record: Record<string, { workers: { serverId: string }[] }> }).record['kubernetes-mgmt']!;
    expect(next.workers.map((w) => w.serverId)).toEqual([W1.id, W2.id, W3.id]);
  });

  it('scale_start: a worker that cannot be reached is not reset, the scale-in goes on', async () => {
    const { record } = await instantiate([M1, W1, W2]);
    cluster.unreachable.add(W2.address);
    await driver().runHook(ctx('scale_start', { instance: instance([M1, W1, W2], { 'kubernetes-mgmt': record }), removing: { workerNode: 1 } }));
    expect(reports.some((r) => /worker-10-0-0-21: kubeadm reset skipped/.test(r))).toBe(true);
  });

  it('heal of one master: node deleted and its etcd member removed through the first master; the replacement joins the control plane', async () => {
    const { record } = await instantiate([M1, M2, W1]);
    const m1 = cluster.node(M1.address);
    m1.nodes.add('master-10-0-0-11');
    m1.members = [
      { id: '8e9e05c52164694d', name: 'master-10-0-0-10' },
      { id: '91bc3c398fb3c146', name: 'master-10-0-0-11' },
    ];
    const healed = instance([M1, M2, W1], { 'kubernetes-mgmt': record });
    const request = { vnfcInstanceId: [`masterNode-${M2.id}`] };
    await driver().runHook(ctx('heal_start', { instance: healed, request }));
    expect(m1.commands.some((c) => c.includes('-n kube-system exec etcd-master-10-0-0-10 -- etcdctl') && c.endsWith('member remove 91bc3c398fb3c146'))).toBe(true);
    expect(m1.commands.some((c) => c.includes("drain 'master-10-0-0-11'") && c.includes('--force'))).toBe(true);

    const M2b: Server = { ...M2, id: 'srv-m2b', address: '10.0.0.12' };
    await driver().runHook(ctx('heal_end', { instance: healed, result: instance([M1, M2b, W1]), request }));
    expect(cluster.node(M2b.address).commands.find((c) => c.startsWith('script join'))).toContain("CONTROL_PLANE='true'");
    expect(hostKeys.forgotten).toContain(M2.id);
  });

  it('heal of the only master is refused before anything changes', async () => {
    const { record } = await instantiate([M1, W1]);
    const count = cluster.node(M1.address).commands.length;
    await expect(
      driver().runHook(ctx('heal_start', { instance: instance([M1, W1], { 'kubernetes-mgmt': record }), request: { vnfcInstanceId: [`masterNode-${M1.id}`] } })),
    ).rejects.toThrow(/every master/);
    expect(cluster.node(M1.address).commands.length).toBe(count);
  });

  it('heal of the whole cluster installs it again on the new servers and updates the VIM', async () => {
    const { record } = await instantiate([M1, W1]);
    const M1b: Server = { ...M1, id: 'srv-m1b', address: '10.0.0.30' };
    const W1b: Server = { ...W1, id: 'srv-w1b', address: '10.0.0.31' };
    const before = instance([M1, W1], { 'kubernetes-mgmt': record });
    await driver().runHook(ctx('heal_start', { instance: before, request: { additionalParams: { all: true } } }));
    await driver().runHook(ctx('heal_end', { instance: before, result: instance([M1b, W1b]), request: { additionalParams: { all: true } } }));
    expect(cluster.node(M1b.address).commands.some((c) => c.startsWith('script init'))).toBe(true);
    expect(cluster.node(W1b.address).commands.some((c) => c.startsWith('script join'))).toBe(true);
    expect(vims.calls).toEqual(['register kubernetes_vim_inst-1', 'update id-kubernetes_vim_inst-1']);
    const kc = yaml.load(vims.kubeconfigs.get('id-kubernetes_vim_inst-1')!) as { clusters: { cluster: Record<string, string> }[] };
    expect(kc.clusters[0]!.cluster['server']).toBe('https://10.0.0.30:6443');
  });

  it('terminate: refused while CNFs run on the VIM; then removes it and forgets the host keys', async () => {
    const { record } = await instantiate([M1, W1]);
    const inst = instance([M1, W1], { 'kubernetes-mgmt': record });
    vims.users.set('id-kubernetes_vim_inst-1', ['web']);
    await expect(driver().runHook(ctx('terminate_start', { instance: inst }))).rejects.toThrow(/VNF instances running on it: web/);
    vims.users.clear();
    await driver().runHook(ctx('terminate_start', { instance: inst }));
    const out = await driver().runHook(ctx('terminate_end', { instance: inst }));
    expect(vims.vims).toEqual([]);
    expect(hostKeys.forgotten).toEqual(expect.arrayContaining([M1.id, W1.id]));
    expect(out).toEqual({ record: { 'kubernetes-mgmt': null } });
  });
});
