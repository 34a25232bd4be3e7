/**
 * The real program runs the kuryr-cnf sample, a CNF with a DaemonSet VDU
 * (one pod per node, no scaling) beside a scalable Deployment, against a
 * Kubernetes API over HTTPS (the sandbox, and in the real API server tier a
 * real kube-apiserver whose DaemonSet controller pins a pod to each node):
 * instantiate, VNFCs per node, scale the controller out and in, heal one
 * DaemonSet pod and everything, terminate; and an instantiate whose
 * DaemonSet never gets ready, rolled back to nothing.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { newHome, vnfm, okWith } from '../support/cli.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/kuryr-cnf');
const REQ = (name: string) => join(SAMPLE, 'requests', name);
/** The sample deploys into kube-system, as CNI plugins do; its ClusterRoleBinding names that namespace. */
const NS = 'kube-system';
const INSTANCE_LABEL = 'vnfm/vnf-instance-id';

let cluster: E2eCluster;
let home: string;
/** Names of the cluster's Nodes: a DaemonSet runs one pod on each. */
let nodes: string[];

interface VnfcInfo {
  id: string;
  vduId: string;
  vnfcResourceInfoId: string;
}

const json = <T = Record<string, unknown>>(out: string) => JSON.parse(out) as T;

const ok = okWith((args) => vnfm(args, { home }));

async function get(path: string): Promise<any> {
  const r = await cluster.request('GET', path);
  if (r.status !== 200) throw new Error(`GET ${path}: HTTP ${r.status}: ${r.text}`);
  return r.json;
}

/** The instance's objects, by its label, as `Kind/name`, across the kinds the sample has. */
async function objectsOf(instanceId: string): Promise<string[]> {
  const selector = `labelSelector=${encodeURIComponent(`${INSTANCE_LABEL}=${instanceId}`)}`;
  const paths = [
    `/api/v1/namespaces/${NS}/serviceaccounts`,
    `/api/v1/namespaces/${NS}/configmaps`,
    `/api/v1/namespaces/${NS}/secrets`,
    `/apis/apps/v1/namespaces/${NS}/deployments`,
    `/apis/apps/v1/namespaces/${NS}/daemonsets`,
    '/apis/rbac.authorization.k8s.io/v1/clusterroles',
    '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
  ];
  const names: string[] = [];
  for (const path of paths) {
    const list = await get(`${path}?${selector}`);
    names.push(...list.items.map((i: any) => `${String(list.kind).replace(/List$/, '')}/${i.metadata.name}`));
  }
  return names.sort();
}

const vnfcsOf = async (vnf: string): Promise<VnfcInfo[]> =>
  json<{ instantiatedVnfInfo: { vnfcInfo: VnfcInfo[] } }>((await ok(['vnf-show', vnf, '-o', 'json'])).stdout).instantiatedVnfInfo.vnfcInfo;

/** The node each live pod of the DaemonSet runs on. */
async function cniPodNodes(): Promise<Record<string, string>> {
  const pods = await get(`/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent('name=kuryr-cni')}`);
  return Object.fromEntries(pods.items.filter((p: any) => !p.metadata.deletionTimestamp).map((p: any) => [p.metadata.name, p.spec.nodeName]));
}

beforeAll(async () => {
  cluster = await e2eCluster('e2e-kuryr', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  nodes = (await get('/api/v1/nodes')).items.map((n: any) => n.metadata.name).sort();
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-kuryr-e2e-'));
  const vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, NS);
  home = newHome();
  await ok(['vim-register', '--config-file', vimConfig, 'cluster']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'kuryr-cnf']);
});

afterAll(async () => {
  await cluster?.close();
});

describe('the kuryr CNF (a DaemonSet VDU) through its life', () => {
  it('instantiates one CNI pod per node, scales the controller, heals a CNI pod and all, terminates', async () => {
    expect(nodes.length).toBeGreaterThanOrEqual(2);
    const vnf = json<{ id: string }>((await ok(['vnf-create', '--package', 'kuryr-cnf', '--name', 'kuryr', '-o', 'json'])).stdout).id;
    const inst = await ok(['vnf-instantiate', 'kuryr', '--request-file', REQ('instantiate.json'), '-o', 'json']);
    expect(json(inst.stdout)).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED' });
    expect(inst.stderr).toContain(`DaemonSet/kuryr-cni (${NS}): ready`);
    expect(await objectsOf(vnf)).toEqual([
      'ClusterRole/kuryr-controller',
      'ClusterRoleBinding/kuryr-controller',
      'ConfigMap/kuryr-config',
      'DaemonSet/kuryr-cni',
      'Deployment/kuryr-controller',
      'Secret/kuryr-certificates',
      'ServiceAccount/kuryr-controller',
    ]);
    const ds = await get(`/apis/apps/v1/namespaces/${NS}/daemonsets/kuryr-cni`);
    expect(ds.status).toMatchObject({ desiredNumberScheduled: nodes.length, numberReady: nodes.length });

    // One VNFC per node for the DaemonSet, one for the controller.
    const vnfcs = await vnfcsOf(vnf);
    const cni = vnfcs.filter((v) => v.vduId === 'kuryr-cni');
    expect(cni).toHaveLength(nodes.length);
    expect(vnfcs.filter((v) => v.vduId === 'kuryr-controller')).toHaveLength(1);
    const placed = await cniPodNodes();
    expect(Object.values(placed).sort()).toEqual(nodes);
    expect(cni.map((v) => v.vnfcResourceInfoId).sort()).toEqual(Object.keys(placed).sort());

    // The controller scales out to a standby and back; the DaemonSet stays one per node.
    const out = json<{ resourceChanges: { affectedVnfcs: { vduId: string; changeType: string }[] } }>(
      (await ok(['vnf-scale', 'kuryr', '--type', 'SCALE_OUT', '--aspect-id', 'controller_aspect', '-o', 'json'])).stdout,
    );
    expect(out.resourceChanges.affectedVnfcs).toEqual([expect.objectContaining({ vduId: 'kuryr-controller', changeType: 'ADDED' })]);
    expect((await vnfcsOf(vnf)).filter((v) => v.vduId === 'kuryr-controller')).toHaveLength(2);
    const beyond = await vnfm(['vnf-scale', 'kuryr', '--type', 'SCALE_OUT', '--aspect-id', 'controller_aspect'], { home });
    expect(beyond.code).toBe(2);
    await ok(['vnf-scale', 'kuryr', '--type', 'SCALE_IN', '--aspect-id', 'controller_aspect']);
    expect((await vnfcsOf(vnf)).filter((v) => v.vduId === 'kuryr-controller')).toHaveLength(1);

    // Healing one CNI pod: the DaemonSet controller replaces it on the same node.
    const victim = cni[0]!;
    const victimNode = placed[victim.vnfcResourceInfoId]!;
    const healed = json<{ resourceChanges: { affectedVnfcs: { id: string; changeType: string }[] } }>(
      (await ok(['vnf-heal', 'kuryr', '--vnfc-instance', victim.id, '-o', 'json'])).stdout,
    );
    expect(healed.resourceChanges.affectedVnfcs).toContainEqual(expect.objectContaining({ id: victim.id, changeType: 'REMOVED' }));
    expect(healed.resourceChanges.affectedVnfcs).toContainEqual(expect.objectContaining({ changeType: 'ADDED' }));
    const after = await cniPodNodes();
    expect(Object.keys(after)).not.toContain(victim.vnfcResourceInfoId);
    expect(Object.values(after).sort()).toEqual(nodes);
    expect(Object.values(after)).toContain(victimNode);
    const cniAfter = (await vnfcsOf(vnf)).filter((v) => v.vduId === 'kuryr-cni');
    expect(cniAfter.map((v) => v.vnfcResourceInfoId).sort()).toEqual(Object.keys(after).sort());

    // A heal is done when the replacement pod runs, whatever the DaemonSet's
    // status (not yet updated by its controller) still says: held back from
    // ready, it times out; once free, op-retry completes it.
    const lift = await cluster.neverReady({ kind: 'DaemonSet', name: 'kuryr-cni', namespace: NS });
    let stuck: { code: number | null; stdout: string; stderr: string };
    try {
      stuck = await vnfm(['vnf-heal', 'kuryr', '--vnfc-instance', cniAfter[0]!.id, '--timeout', '10s', '-o', 'json'], { home });
    } finally {
      await lift();
    }
    expect(stuck.code, stuck.stderr).toBe(124);
    expect(stuck.stderr).toMatch(/HEAL of vnf instance \S+ timed out after 10s/);
    expect(stuck.stderr).toContain(`DaemonSet/kuryr-cni (${NS}): waiting for pods:`);
    const retried = await ok(['op-retry', json<{ id: string }>(stuck.stdout).id, '-o', 'json']);
    expect(json(retried.stdout)).toMatchObject({ operation: 'HEAL', operationState: 'COMPLETED' });
    const afterRetry = await cniPodNodes();
    expect(Object.keys(afterRetry)).not.toContain(cniAfter[0]!.vnfcResourceInfoId);
    expect(Object.values(afterRetry).sort()).toEqual(nodes);

    // Healing everything replaces every pod.
    const before = Object.keys(afterRetry);
    await ok(['vnf-heal', 'kuryr', '--request-file', REQ('heal.json')]);
    const replaced = await cniPodNodes();
    expect(Object.keys(replaced).filter((p) => before.includes(p))).toEqual([]);
    expect(Object.values(replaced).sort()).toEqual(nodes);

    await ok(['vnf-terminate', 'kuryr', '--yes', '--graceful-termination-timeout', '0']);
    expect(await objectsOf(vnf)).toEqual([]);
    await ok(['vnf-delete', 'kuryr', '--yes']);
  });

  it('rolls back an instantiate whose DaemonSet never gets ready, leaving nothing', async () => {
    const vnf = json<{ id: string }>((await ok(['vnf-create', '--package', 'kuryr-cnf', '--name', 'kuryr-stuck', '-o', 'json'])).stdout).id;
    const lift = await cluster.neverReady({ kind: 'DaemonSet', name: 'kuryr-cni', namespace: NS });
    let op: { id: string; operationState: string };
    try {
      const r = await vnfm(['vnf-instantiate', 'kuryr-stuck', '--request-file', REQ('instantiate.json'), '--timeout', '10s', '-o', 'json'], { home });
      expect(r.code).toBe(124);
      expect(r.stderr).toMatch(new RegExp(`timed out after 10s while waiting for DaemonSet kuryr-cni in namespace ${NS}`));
      op = json(r.stdout);
      expect(op.operationState).toBe('FAILED_TEMP');
    } finally {
      await lift();
    }
    expect(await objectsOf(vnf)).not.toEqual([]);
    const rolled = await ok(['op-rollback', op.id, '-o', 'json']);
    expect(json(rolled.stdout)).toMatchObject({ operationState: 'ROLLED_BACK' });
    expect(await objectsOf(vnf)).toEqual([]);
    expect(await cniPodNodes()).toEqual({});
    await ok(['vnf-delete', 'kuryr-stuck', '--yes']);
  });
});
