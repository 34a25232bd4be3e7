/**
 * Tacker v2's container update (its functional test
 * test_cnf_container_update, packages test_cnf_container_update_before and
 * _after, request bodies of paramgen's test_cnf_update_create /
 * test_cnf_update_instantiate / test_cnf_update_modify) in its shape, with
 * packages of our own: twelve definition files (ConfigMaps, Secrets, two
 * Deployments, a ReplicaSet, a DaemonSet, four bare Pods) on eight VDUs, the
 * VNF's modify_information_start/end naming Scripts/container_update_mgmt_v2.py.
 *
 * Tacker runs that script, which needs Tacker's own modules; vnfm knows it by
 * its name and updates the containers itself, so no consent is asked and the
 * stub in these packages (which fails when run) never runs. The assertions
 * are Tacker's: eight VNFCs before and after, the Pods of the Deployment,
 * ReplicaSet and DaemonSet VDUs whose images changed are new ones, every
 * other Pod keeps its name (the bare Pods carrying their new images), the
 * ConfigMap and Secret of configmap_secret_paths hold the new package's data,
 * and the instance has the new vnfdId and name.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, vnfm } from '../support/cli.js';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';

const SHAPES = resolve(import.meta.dirname, '../fixtures/tacker-shapes');
const BEFORE = '7c2d4e61-3a90-4b1f-8e55-c00000000001';
const AFTER = '7c2d4e61-3a90-4b1f-8e55-c00000000002';
const IMAGES = 'registry.example.test/cu';

interface VnfcResource {
  id: string;
  vduId: string;
  computeResource: { resourceId: string; vimLevelResourceType: string };
}
interface Shown {
  vnfdId: string;
  vnfInstanceName?: string;
  vnfInstanceDescription?: string;
  metadata?: Record<string, unknown>;
  instantiatedVnfInfo: { vnfcResourceInfo: VnfcResource[] };
}

let cluster: E2eCluster;
let dir: string;
const home = newHome();
const run = (args: string[]) => vnfm(args, { home });
async function ok(args: string[]) {
  const r = await run(args);
  if (r.code !== 0) throw new Error(`vnfm ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r;
}
function writeRequest(name: string, body: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(body, null, 2));
  return path;
}
const show = async (vnf: string) => JSON.parse((await ok(['vnf-show', vnf, '-o', 'json'])).stdout) as Shown;

/** The Pods' names and first container images in the namespace. */
async function pods(): Promise<Map<string, string>> {
  const r = await cluster.request('GET', `/api/v1/namespaces/${cluster.namespace}/pods`);
  expect(r.status).toBe(200);
  const items = (r.json as { items: { metadata: { name: string; deletionTimestamp?: string }; spec: { containers: { image: string }[] } }[] }).items;
  return new Map(items.filter((p) => !p.metadata.deletionTimestamp).map((p) => [p.metadata.name, p.spec.containers[0]!.image]));
}

async function data(kind: 'configmaps' | 'secrets', name: string): Promise<Record<string, string>> {
  const r = await cluster.request('GET', `/api/v1/namespaces/${cluster.namespace}/${kind}/${name}`);
  expect(r.status).toBe(200);
  return (r.json as { data: Record<string, string> }).data;
}

beforeAll(async () => {
  cluster = await e2eCluster('e2e-tacker-cu', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  dir = mkdtempSync(join(tmpdir(), 'vnfm-cu-'));
  // The VIM's project_name is the namespace: Tacker's instantiate body names none.
  const vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, cluster.namespace);
  await ok(['vim-register', '--config-file', vimConfig, 'k8s-vim']);
  await ok(['vnfpkg-onboard', join(SHAPES, 'v2-cnf-container-update-before'), '--name', 'cu-before']);
  await ok(['vnfpkg-onboard', join(SHAPES, 'v2-cnf-container-update-after'), '--name', 'cu-after']);
});

afterAll(async () => {
  await cluster?.close();
});

describe("Tacker v2's container update with Tacker's request bodies", () => {
  it('creates and instantiates twelve files on eight VDUs, updates them to the new package, then terminates', async () => {
    // paramgen.test_cnf_update_create: the CLI form of its body.
    await ok(['vnf-create', BEFORE, '--name', 'container_update_multi_kinds', '--description', 'container update multi kinds']);
    // paramgen.test_cnf_update_instantiate, only the VIM's id changed.
    const instantiate = writeRequest('cnf_update_instantiate.json', {
      flavourId: 'simple',
      vimConnectionInfo: { vim1: { vimId: 'k8s-vim', vimType: 'ETSINFV.KUBERNETES.V_1' } },
      additionalParams: {
        'lcm-kubernetes-def-files': [
          'Files/kubernetes/configmap_1.yaml',
          'Files/kubernetes/deployment.yaml',
          'Files/kubernetes/pod_env.yaml',
          'Files/kubernetes/pod_volume.yaml',
          'Files/kubernetes/replicaset.yaml',
          'Files/kubernetes/secret_1.yaml',
          'Files/kubernetes/configmap_3.yaml',
          'Files/kubernetes/pod_env_2.yaml',
          'Files/kubernetes/pod_volume_2.yaml',
          'Files/kubernetes/daemonset.yaml',
          'Files/kubernetes/deployment_2.yaml',
          'Files/kubernetes/secret_3.yaml',
        ],
      },
    });
    await ok(['vnf-instantiate', 'container_update_multi_kinds', instantiate]);
    const before = await show('container_update_multi_kinds');
    // Tacker's eight VNFCs are on its one-node cluster: the DaemonSet has a Pod on every node.
    const ds = await cluster.request('GET', `/apis/apps/v1/namespaces/${cluster.namespace}/daemonsets/cu-vdu5`);
    const nodes = (ds.json as { status: { desiredNumberScheduled: number } }).status.desiredNumberScheduled;
    expect(nodes).toBeGreaterThan(0);
    expect(before.instantiatedVnfInfo.vnfcResourceInfo).toHaveLength(7 + nodes);
    const podsBefore = await pods();
    expect(podsBefore.get('cu-env')).toBe(`${IMAGES}/probe:1.0`);
    expect((await data('configmaps', 'cu-config'))['settings.conf']).toMatch(/mode=first/);

    // paramgen.test_cnf_update_modify, as its functional test sends it: no --allow-package-scripts.
    const modify = writeRequest('cnf_update_modify.json', {
      vnfdId: AFTER,
      vnfInstanceName: 'modify_vnf_after',
      metadata: { configmap_secret_paths: ['Files/kubernetes/configmap_2.yaml', 'Files/kubernetes/secret_2.yaml'] },
    });
    const r = await run(['vnf-update', 'container_update_multi_kinds', modify, '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ operation: 'MODIFY_INFO', operationState: 'COMPLETED' });
    // Nothing asked, and Tacker's script (a stub here that fails when run) did not run.
    expect(r.stderr).not.toMatch(/allow-package-scripts|consent|container_update_mgmt_v2\.py.*(exit|fail)/i);
    expect(r.stderr).not.toMatch(/No module named|Traceback/);
    expect(r.stderr).toMatch(/Tacker's container update driver \(Scripts\/container_update_mgmt_v2\.py\): vnfm updates the containers itself/);

    const after = await show('modify_vnf_after');
    expect(after.vnfdId).toBe(AFTER);
    expect(after.vnfInstanceName).toBe('modify_vnf_after');
    expect(after.vnfInstanceDescription).toBe('container update multi kinds');
    expect(after.instantiatedVnfInfo.vnfcResourceInfo).toHaveLength(7 + nodes);

    // Tacker's check: a VDU of a Deployment, ReplicaSet or DaemonSet whose image changed (VDU1, VDU2, VDU5)
    // has new Pods; every other VDU keeps its Pods.
    const byVdu = (s: Shown) => {
      const out = new Map<string, string[]>();
      for (const v of s.instantiatedVnfInfo.vnfcResourceInfo) out.set(v.vduId, [...(out.get(v.vduId) ?? []), v.computeResource.resourceId].sort());
      return out;
    };
    const was = byVdu(before);
    const now = byVdu(after);
    expect([...now.keys()].sort()).toEqual(['VDU1', 'VDU2', 'VDU3', 'VDU4', 'VDU5', 'VDU6', 'VDU7', 'VDU8']);
    for (const v of after.instantiatedVnfInfo.vnfcResourceInfo) {
      if (['VDU1', 'VDU2', 'VDU5'].includes(v.vduId)) expect(['Deployment', 'ReplicaSet', 'DaemonSet']).toContain(v.computeResource.vimLevelResourceType);
    }
    for (const [vdu, names] of now) {
      if (['VDU1', 'VDU2', 'VDU5'].includes(vdu)) {
        for (const name of names) expect(was.get(vdu), vdu).not.toContain(name);
      } else {
        expect(names, vdu).toEqual(was.get(vdu));
      }
    }
    const podsAfter = await pods();
    const image = (vdu: string) => {
      const images = new Set(now.get(vdu)!.map((name) => podsAfter.get(name)));
      expect(images.size, vdu).toBe(1);
      return [...images][0];
    };
    expect(image('VDU1')).toBe(`${IMAGES}/front:2.0`);
    expect(image('VDU2')).toBe(`${IMAGES}/worker:2.0`);
    expect(image('VDU5')).toBe(`${IMAGES}/agent:2.0`);
    // The bare Pods keep their names and carry the new images.
    expect(now.get('VDU3')).toEqual(['cu-env']);
    expect(image('VDU3')).toBe(`${IMAGES}/probe:2.0`);
    expect(image('VDU4')).toBe(`${IMAGES}/reader:2.0`);
    // Unchanged images stay.
    expect(image('VDU6')).toBe(`${IMAGES}/front:1.0`);
    expect(image('VDU7')).toBe(`${IMAGES}/probe:1.0`);
    expect(image('VDU8')).toBe(`${IMAGES}/reader:1.0`);

    // configmap_2 and secret_2 replaced cu-config and cu-secret; the third pair stays.
    expect((await data('configmaps', 'cu-config'))['settings.conf']).toMatch(/mode=second/);
    expect((await data('configmaps', 'cu-config-3'))['settings.conf']).toMatch(/mode=third/);
    expect(Buffer.from((await data('secrets', 'cu-secret'))['password']!, 'base64').toString()).toBe('second-pass!');
    expect(Buffer.from((await data('secrets', 'cu-secret-3'))['password']!, 'base64').toString()).toBe('third-pass');

    // paramgen.terminate_vnf_min, then the instance is deleted.
    await ok(['vnf-terminate', 'modify_vnf_after', '--yes']);
    expect([...(await pods()).keys()].filter((n) => n.startsWith('cu-'))).toEqual([]);
    await ok(['vnf-delete', 'modify_vnf_after', '--yes']);
  });
});
