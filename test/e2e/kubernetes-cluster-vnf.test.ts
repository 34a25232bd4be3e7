/**
 * The kubeadm-cluster-vnf sample through the real program, on a real
 * Keystone and Heat whose servers are simulated VMs (test/support/nodes.ts:
 * a real sshd in its own namespaces, booted by test/support/heat-nodes.ts at
 * the stand-in ports' addresses). On the nodes, kubeadm, kubectl and kubelet
 * are stand-ins (test/support/node-bin/): `kubeadm init` runs vnfm's API
 * emulator as the cluster's API server; the package's install script runs
 * unchanged. One instance is walked through instantiate, scale out, scale in,
 * heal of one worker, heal of the whole cluster, a CNF on the registered VIM
 * (which holds the terminate back) and terminate; each step is checked from outside: the
 * cluster's Node objects over HTTPS with the registered VIM's endpoint, the
 * nodes' files, the restarts the systemctl stand-in saw, vnfm's VIM list.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, vnfm, type RunResult, okStdoutWith } from '../support/cli.js';
import { useOpenStack, type OpenStackServers, openStackVimConfig } from '../support/heat.js';
import { heatEnvironmentFor, watchStackNodes, type StackNodes } from '../support/heat-nodes.js';
import { createNodeNetwork, type NodeNetwork, type TestNode } from '../support/nodes.js';

const SAMPLE = resolve('csar-samples/kubeadm-cluster-vnf');
const VNFD_ID = '4322f82e-42ea-4545-aec9-aa93b8c3eb0b';
const VIM_NAME = 'kubernetes_vim';
const LONG = 300_000;

let os: OpenStackServers;
let net: NodeNetwork;
let watcher: StackNodes | undefined;
let home: string;
let work: string;
let env: string;
let vnf: string;
let masterAddress: string;
let registry: string;

const run = (args: string[]): Promise<RunResult> => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okStdoutWith((args) => run(args));

interface Shown {
  instantiatedVnfInfo?: {
    vnfcInfo: Array<{ id: string; vduId: string; vnfcResourceInfoId: string }>;
    vnfcResourceInfo: Array<{ id: string; vduId: string; metadata: { addresses: Record<string, string[]>; creationTime?: string } }>;
  };
}
const show = async (): Promise<Shown> => JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])) as Shown;
const addressesOf = (s: Shown, vdu: string, cp: string): string[] =>
  s.instantiatedVnfInfo!.vnfcResourceInfo.filter((r) => r.vduId === vdu).map((r) => r.metadata.addresses[cp]![0]!);
const nodeName = (role: string, address: string) => `${role}-${address.replace(/\./g, '-')}`;

/** The node at an address (the watcher's current nodes). */
function nodeAt(address: string): TestNode {
  const n = [...watcher!.nodes().values()].find((x) => x.addresses.includes(address));
  if (!n) throw new Error(`no simulated node at ${address}`);
  return n;
}

/**
 * The cluster's Node objects, asked over HTTPS at the endpoint vnfm
 * registered, with the API server's CA and token (read from the first
 * master's disk, as an administrator would take admin.conf).
 */
async function clusterNodes(): Promise<Array<{ name: string; uid: string; controlPlane: boolean }>> {
  const master = nodeAt(masterAddress);
  const text = master.file('/etc/kubernetes/admin.conf');
  // A master without it was booted anew (its server replaced, or taken for gone): say what the watcher saw.
  if (text === undefined) throw new Error(`no /etc/kubernetes/admin.conf on the master ${masterAddress}; the stack's servers: ${watcher!.events().join('; ')}`);
  const conf = JSON.parse(text) as { clusters: [{ cluster: Record<string, string> }]; users: [{ user: { token: string } }] };
  const server = new URL(conf.clusters[0].cluster['server']!);
  const ca = Buffer.from(conf.clusters[0].cluster['certificate-authority-data']!, 'base64').toString();
  const body = await new Promise<string>((resolveBody, reject) => {
    const req = request({ host: server.hostname, port: server.port, path: '/api/v1/nodes', ca, headers: { authorization: `Bearer ${conf.users[0].user.token}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => (res.statusCode === 200 ? resolveBody(text) : reject(new Error(`GET /api/v1/nodes: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end();
  });
  const list = JSON.parse(body) as { items: Array<{ metadata: { name: string; uid: string; labels?: Record<string, string> } }> };
  return list.items
    .map((n) => ({ name: n.metadata.name, uid: n.metadata.uid, controlPlane: 'node-role.kubernetes.io/control-plane' in (n.metadata.labels ?? {}) }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

const hostsToml = (n: TestNode) => n.file(`/etc/containerd/certs.d/${registry}/hosts.toml`);

beforeAll(async () => {
  [os, net] = await Promise.all([useOpenStack(), createNodeNetwork()]);
  home = newHome();
  work = dirname(home);
  masterAddress = `${net.prefix}0.10`;
  registry = `${net.prefix}0.250:5000`;
  const vimConfig = join(work, 'vim.yaml');
  await writeFile(vimConfig, openStackVimConfig(os.keystone));
  await ok(['vim-register', '--config-file', vimConfig, '--is-default', 'os1']);
  await ok(['vnfpkg-build', join(SAMPLE, 'package'), '-o', join(work, 'k8s.zip')]);
  await ok(['vnfpkg-onboard', join(work, 'k8s.zip')]);
  // The sample request, with the test network and an HTTP registry on the node network.
  const body = JSON.parse((await readFile(join(SAMPLE, 'requests/instantiate.json'), 'utf8')).replace('REPLACE-WITH-EXTERNAL-NETWORK-ID', 'net-public-1'));
  body.additionalParams.k8s_cluster_installation_param.private_registry_connection_info = [{ connection_type: 0, server: registry }];
  await writeFile(join(work, 'instantiate.json'), JSON.stringify(body));
  await mkdir(join(work, 'env'), { recursive: true });
  env = await heatEnvironmentFor(net, join(work, 'env'), { masterNode_CP1: masterAddress, workerNode_CP2: net.prefix });
  vnf = (JSON.parse(await ok(['vnf-create', '--package', VNFD_ID, '--name', 'k8s', '-o', 'json'])) as { id: string }).id;
  watcher = watchStackNodes(net, { heat: os, stackName: `vnf-${vnf}`, node: () => ({ kubeadm: true, containerd: true }) });
}, LONG);

afterAll(async () => {
  await watcher?.close();
  await net?.close();
  await os?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the kubeadm-cluster-vnf sample', () => {
  it('instantiate, scale out, scale in, heal a worker, heal all, a CNF on its VIM, terminate', async () => {
    // Instantiate: one master, two workers; the cluster registered as a VIM.
    const inst = await run(['vnf-instantiate', vnf, '--request-file', join(work, 'instantiate.json'), '--heat-environment', env, '-o', 'json']);
    expect(inst.code, inst.stderr).toBe(0);
    expect(JSON.parse(inst.stdout).operationState).toBe('COMPLETED');
    let shown = await show();
    const workers0 = addressesOf(shown, 'workerNode', 'workerNode_CP2');
    expect(addressesOf(shown, 'masterNode', 'masterNode_CP1')).toEqual([masterAddress]);
    expect(workers0).toHaveLength(2);
    expect(await clusterNodes()).toEqual(
      [
        { name: nodeName('master', masterAddress), uid: expect.any(String), controlPlane: true },
        ...workers0.map((a) => ({ name: nodeName('worker', a), uid: expect.any(String), controlPlane: false })),
      ].sort((a, b) => a.name.localeCompare(b.name)),
    );
    const vim = JSON.parse(await ok(['vim-show', VIM_NAME, '-o', 'json'])) as { id: string; type?: string; authUrl?: string; auth_url?: string };
    expect(JSON.stringify(vim)).toContain(`https://${masterAddress}:6443`);
    // The registry connection on every node; the proxy credentials nowhere in vnfm's database or logs.
    for (const a of [masterAddress, ...workers0]) expect(hostsToml(nodeAt(a)), a).toContain(`http://${registry}`);
    const stored = readdirSync(home, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => readFileSync(join(e.parentPath, e.name)).toString('latin1'));
    expect(stored.some((t) => t.includes('password1'))).toBe(false);

    // Scale out: a third worker joins; only it gets the registry files, nothing on the others restarts.
    const before = new Map([masterAddress, ...workers0].map((a) => [a, { toml: hostsToml(nodeAt(a)), restarts: nodeAt(a).restarts().length }]));
    await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'worker_instance']);
    shown = await show();
    const workers1 = addressesOf(shown, 'workerNode', 'workerNode_CP2');
    const added = workers1.filter((a) => !workers0.includes(a));
    expect(added).toHaveLength(1);
    expect((await clusterNodes()).map((n) => n.name)).toContain(nodeName('worker', added[0]!));
    expect((await clusterNodes()).filter((n) => !n.controlPlane)).toHaveLength(3);
    expect(hostsToml(nodeAt(added[0]!))).toContain(`http://${registry}`);
    expect(nodeAt(added[0]!).restarts()).toContain('containerd');
    for (const [a, b] of before) {
      expect(hostsToml(nodeAt(a)), a).toBe(b.toml);
      expect(nodeAt(a).restarts().length, a).toBe(b.restarts);
    }

    // Scale in: the newest worker is drained and deleted from the cluster.
    await ok(['vnf-scale', vnf, '--type', 'SCALE_IN', '--aspect-id', 'worker_instance']);
    shown = await show();
    expect(addressesOf(shown, 'workerNode', 'workerNode_CP2').sort()).toEqual([...workers0].sort());
    const afterIn = await clusterNodes();
    expect(afterIn.map((n) => n.name)).not.toContain(nodeName('worker', added[0]!));
    expect(afterIn).toHaveLength(3);

    // Heal one worker: its server is replaced (same address, a new VM) and joins again as a new Node.
    const target = shown.instantiatedVnfInfo!.vnfcResourceInfo.find((r) => r.vduId === 'workerNode')!;
    const targetAddress = target.metadata.addresses['workerNode_CP2']![0]!;
    const vnfcId = shown.instantiatedVnfInfo!.vnfcInfo.find((c) => c.vnfcResourceInfoId === target.id)!.id;
    const uidBefore = afterIn.find((n) => n.name === nodeName('worker', targetAddress))!.uid;
    await ok(['vnf-heal', vnf, '--vnfc-instance', vnfcId]);
    const afterHeal = await clusterNodes();
    expect(afterHeal.map((n) => n.name)).toEqual(afterIn.map((n) => n.name));
    const healed = afterHeal.find((n) => n.name === nodeName('worker', targetAddress))!;
    expect(healed.uid).not.toBe(uidBefore);
    expect(JSON.parse(nodeAt(targetAddress).file('/etc/kubernetes/kubelet.conf')!).clusters[0].cluster.server).toMatch(/^https:\/\//);
    expect(hostsToml(nodeAt(targetAddress))).toContain(`http://${registry}`);

    // Heal the whole cluster: a new stack, the cluster installed again, the same VIM with the new credentials.
    const vimBefore = JSON.parse(await ok(['vim-show', VIM_NAME, '-o', 'json'])) as { id: string };
    const serversBefore = (await show()).instantiatedVnfInfo!.vnfcResourceInfo.map((r) => r.id);
    await ok(['vnf-heal', vnf, '--request-file', join(SAMPLE, 'requests/heal-all.json')]);
    shown = await show();
    const workers2 = addressesOf(shown, 'workerNode', 'workerNode_CP2');
    expect(shown.instantiatedVnfInfo!.vnfcResourceInfo.filter((r) => serversBefore.includes(r.id))).toEqual([]);
    const afterHealAll = await clusterNodes();
    expect(afterHealAll.map((n) => n.name)).toEqual([nodeName('master', masterAddress), ...workers2.map((a) => nodeName('worker', a))].sort());
    expect(afterHealAll.some((n) => afterIn.some((o) => o.uid === n.uid))).toBe(false);
    expect((JSON.parse(await ok(['vim-show', VIM_NAME, '-o', 'json'])) as { id: string }).id).toBe(vimBefore.id);

    // The VIM is usable: a CNF runs on the cluster, and while it does the cluster VNF cannot be terminated.
    await ok(['vnfpkg-build', resolve('csar-samples/basic-cnf/package'), '-o', join(work, 'cnf.zip')]);
    await ok(['vnfpkg-onboard', join(work, 'cnf.zip')]);
    const cnfBody = JSON.parse(await readFile(resolve('csar-samples/basic-cnf/requests/instantiate.json'), 'utf8'));
    cnfBody.vimConnectionInfo = { vim1: { vimId: VIM_NAME, vimType: 'kubernetes' } };
    await writeFile(join(work, 'cnf.json'), JSON.stringify(cnfBody));
    const cnf = (JSON.parse(await ok(['vnf-create', '--package', '1191aa45-a57a-4232-8201-6a7a66d41e38', '--name', 'web', '-o', 'json'])) as { id: string }).id;
    await ok(['vnf-instantiate', cnf, '--request-file', join(work, 'cnf.json')]);
    const refused = await run(['vnf-terminate', vnf, '--yes']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/VNF instances running on it: web/);
    const op = /occurrence (\S+) is FAILED_TEMP/.exec(refused.stderr)![1]!;
    expect((await clusterNodes()).length).toBe(3);
    await ok(['vnf-terminate', cnf, '--yes']);

    // Terminate, retried: the VIM goes with the cluster.
    await ok(['op-retry', op]);
    const vims = JSON.parse(await ok(['vim-list', '-o', 'json'])) as Array<{ name: string }>;
    expect(vims.map((v) => v.name)).toEqual(['os1']);
  }, 900_000);
});
