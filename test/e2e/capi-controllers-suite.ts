/**
 * What Cluster API controllers do, as vnfm relies on it, with a minimal set
 * of CAPI CRDs written here (only the fields used), on any target: the
 * sandbox's emulation, or the stand-in controllers on a real kube-apiserver
 * (two implementations held to one behaviour). A Cluster becomes
 * Provisioned, its kubeconfig Secret reaches the workload cluster's own
 * endpoint (TLS verified), a MachineDeployment scales through /scale, a
 * deleted Machine is replaced, a new template rolls the Machines, and
 * deleting the Cluster closes the workload endpoint. The CRDs are deleted at
 * the end.
 */
import { request as httpsRequest } from 'node:https';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeEndpoint } from '../support/kube-http.js';

type Endpoint = KubeEndpoint;

/** A cluster with Cluster API controllers the suite runs on. */
export interface CapiControllersTarget {
  endpoint: KubeEndpoint;
  /** The workload endpoints the controllers serve now. */
  workloadServers(): Array<{ namespace: string; name: string; server: string }>;
  /** What makes `workload` the workload cluster's own endpoint on this target, beyond answering. */
  checkWorkloadEndpoint(workload: Endpoint): Promise<void>;
  stop(): Promise<void>;
}

interface Reply {
  status: number;
  json: any;
}

export function call(to: Endpoint, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Reply> {
  const url = new URL(path, to.server);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method,
        ca: to.caPem,
        // A fresh connection each time: a stopped server must refuse, not hang up a kept-alive socket.
        agent: false,
        headers: { Authorization: `Bearer ${to.token}`, Accept: 'application/json', ...(payload ? { 'Content-Type': contentType } : {}) },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** Lists, then watches `collection` until `done(items)` holds for the current objects; resolves with them. */
export async function waitUntil(to: Endpoint, collection: string, done: (items: Map<string, any>) => boolean, timeoutMs = 15_000): Promise<Map<string, any>> {
  const deadline = Date.now() + timeoutMs;
  const list = await call(to, 'GET', collection);
  const items = new Map<string, any>(list.json.items.map((o: any) => [o.metadata.name, o]));
  if (done(items)) return items;
  const url = new URL(`${collection}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`, to.server);
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`timed out watching ${collection}: ${JSON.stringify([...items.values()].map((o) => [o.metadata.name, o.status]))}`));
    }, timeoutMs);
    const req = httpsRequest(url, { ca: to.caPem, headers: { Authorization: `Bearer ${to.token}` } }, (res) => {
      res.on('data', (d: Buffer) => {
        buffer += d.toString();
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const event = JSON.parse(buffer.slice(0, nl));
          buffer = buffer.slice(nl + 1);
          if (event.type === 'ERROR') {
            // 410 Expired, as any API server may answer: list again and watch from there, as an informer does.
            clearTimeout(timer);
            req.destroy();
            waitUntil(to, collection, done, Math.max(1, deadline - Date.now())).then(resolve, reject);
            return;
          }
          if (event.type === 'DELETED') items.delete(event.object.metadata.name);
          else items.set(event.object.metadata.name, event.object);
          if (done(items)) {
            clearTimeout(timer);
            req.destroy();
            resolve(items);
          }
        }
      });
    });
    req.on('error', () => undefined);
    req.end();
  });
}

const open = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
const scaled = { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } };

function crd(group: string, kind: string, plural: string, subresources: object, spec: object = open): object {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase() },
      versions: [{ name: 'v1beta1', served: true, storage: true, subresources, schema: { openAPIV3Schema: { type: 'object', properties: { spec, status: open } } } }],
    },
  };
}

const replicasSpec = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { replicas: { type: 'integer', minimum: 0 } } };

export const CRDS = [
  crd('cluster.x-k8s.io', 'Cluster', 'clusters', { status: {} }),
  crd('cluster.x-k8s.io', 'MachineDeployment', 'machinedeployments', scaled, replicasSpec),
  crd('cluster.x-k8s.io', 'MachineSet', 'machinesets', scaled, replicasSpec),
  crd('cluster.x-k8s.io', 'Machine', 'machines', { status: {} }),
  crd('controlplane.cluster.x-k8s.io', 'KubeadmControlPlane', 'kubeadmcontrolplanes', scaled, replicasSpec),
  crd('controlplane.cluster.x-k8s.io', 'KamajiControlPlane', 'kamajicontrolplanes', { status: {} }),
  crd('infrastructure.cluster.x-k8s.io', 'DummyCluster', 'dummyclusters', { status: {} }),
  crd('infrastructure.cluster.x-k8s.io', 'DummyMachineTemplate', 'dummymachinetemplates', {}),
];

const NS = 'default';
export const CAPI = `/apis/cluster.x-k8s.io/v1beta1/namespaces/${NS}`;
export const CP = `/apis/controlplane.cluster.x-k8s.io/v1beta1/namespaces/${NS}`;
const INFRA = `/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/${NS}`;

async function create(sb: Endpoint, path: string, body: object): Promise<any> {
  const r = await call(sb, 'POST', path, body);
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json;
}

/** A workload cluster: infrastructure, a control plane (kubeadm with machines, or kamaji without), the Cluster. */
export async function createCluster(sb: Endpoint, name: string, controlPlane: 'kubeadm' | 'kamaji'): Promise<void> {
  await create(sb, `${INFRA}/dummyclusters`, { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'DummyCluster', metadata: { name } });
  await create(sb, `${INFRA}/dummymachinetemplates`, {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
    kind: 'DummyMachineTemplate',
    metadata: { name: `${name}-md` },
    spec: { template: { spec: {} } },
  });
  const cpRef =
    controlPlane === 'kubeadm'
      ? { apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1', kind: 'KubeadmControlPlane', name: `${name}-cp` }
      : { apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1', kind: 'KamajiControlPlane', name: `${name}-cp` };
  if (controlPlane === 'kubeadm') {
    await create(sb, `${CP}/kubeadmcontrolplanes`, {
      ...cpRef,
      metadata: { name: `${name}-cp` },
      spec: {
        replicas: 1,
        version: 'v1.30.0',
        machineTemplate: { infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'DummyMachineTemplate', name: `${name}-md` } },
      },
    });
  } else {
    await create(sb, `${CP}/kamajicontrolplanes`, { ...cpRef, metadata: { name: `${name}-cp` }, spec: { replicas: 2, version: 'v1.30.0' } });
  }
  await create(sb, `${CAPI}/clusters`, {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'Cluster',
    metadata: { name },
    spec: { infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'DummyCluster', name }, controlPlaneRef: cpRef },
  });
}

function machineDeployment(name: string, cluster: string, replicas: number, version: string): object {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'MachineDeployment',
    metadata: { name },
    spec: {
      clusterName: cluster,
      replicas,
      selector: { matchLabels: {} },
      template: {
        spec: {
          clusterName: cluster,
          version,
          bootstrap: { configRef: { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1', kind: 'KubeadmConfigTemplate', name } },
          infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'DummyMachineTemplate', name: `${cluster}-md` },
        },
      },
    },
  };
}

export async function kubeconfigOf(sb: Endpoint, cluster: string): Promise<{ endpoint: Endpoint; secret: any }> {
  const secret = await call(sb, 'GET', `/api/v1/namespaces/${NS}/secrets/${cluster}-kubeconfig`);
  expect(secret.status).toBe(200);
  const config = yaml.load(Buffer.from(secret.json.data.value, 'base64').toString('utf8')) as any;
  const current = config.contexts.find((c: any) => c.name === config['current-context']).context;
  const server = config.clusters.find((c: any) => c.name === current.cluster).cluster;
  const user = config.users.find((u: any) => u.name === current.user).user;
  return { endpoint: { server: server.server, caPem: Buffer.from(server['certificate-authority-data'], 'base64').toString('utf8'), token: user.token }, secret: secret.json };
}

const workerMachines = (items: Map<string, any>, md: string): any[] =>
  [...items.values()].filter((m) => m.metadata.labels?.['cluster.x-k8s.io/deployment-name'] === md && !m.metadata.deletionTimestamp);
const allRunning = (machines: any[], n: number): boolean => machines.length === n && machines.every((m) => m.status?.phase === 'Running');

let target: CapiControllersTarget | undefined;
let sb: Endpoint;

/**
 * Registers the suite's hooks and tests; `start` makes the target in
 * beforeAll. `extraTests` adds tests only that target can run.
 */
export function describeCapiControllers<T extends CapiControllersTarget>(start: () => Promise<T>, extraTests?: (target: () => T) => void): void {
  beforeAll(async () => {
    target = await start();
    sb = target.endpoint;
    for (const c of CRDS) expect((await call(sb, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', c)).status).toBe(201);
    await waitUntil(sb, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', (items) =>
      CRDS.every((c: any) => items.get(c.metadata.name)?.status?.conditions?.some((x: any) => x.type === 'Established' && x.status === 'True')),
    );
  }, 60_000);
  afterAll(async () => {
    if (sb) {
      for (const c of CRDS as any[]) await call(sb, 'DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${c.metadata.name}`);
      await waitUntil(sb, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', (items) => CRDS.every((c: any) => !items.has(c.metadata.name)), 60_000);
    }
    await target?.stop();
  }, 90_000);

  describe('Cluster API controllers', () => {
    let workload: Endpoint;

    it('provisions a Cluster: Pending → Provisioning → Provisioned, ready conditions, control plane machines', async () => {
      const phases = waitUntil(sb, `${CAPI}/clusters`, (items) => items.get('wl')?.status?.phase === 'Provisioned');
      await createCluster(sb, 'wl', 'kubeadm');
      const cluster = (await phases).get('wl');
      expect(cluster.status).toMatchObject({ phase: 'Provisioned', infrastructureReady: true, controlPlaneReady: true, observedGeneration: cluster.metadata.generation });
      for (const type of ['Ready', 'ControlPlaneReady', 'InfrastructureReady', 'ControlPlaneAvailable']) {
        expect(cluster.status.conditions.find((c: any) => c.type === type)?.status, type).toBe('True');
      }
      expect(cluster.metadata.finalizers).toContain('cluster.cluster.x-k8s.io');
      expect(cluster.spec.controlPlaneEndpoint).toMatchObject({ host: '127.0.0.1', port: expect.any(Number) });
      const cp = (await call(sb, 'GET', `${CP}/kubeadmcontrolplanes/wl-cp`)).json;
      expect(cp.status).toMatchObject({ initialized: true, ready: true, replicas: 1, readyReplicas: 1 });
      const machines = (await call(sb, 'GET', `${CAPI}/machines?labelSelector=cluster.x-k8s.io/control-plane-name%3Dwl-cp`)).json.items;
      expect(machines).toHaveLength(1);
      expect(machines[0].metadata.ownerReferences[0]).toMatchObject({ kind: 'KubeadmControlPlane', name: 'wl-cp', controller: true });
      const infra = (await call(sb, 'GET', `${INFRA}/dummyclusters/wl`)).json;
      expect(infra.status.ready).toBe(true);
      expect(infra.metadata.ownerReferences[0]).toMatchObject({ kind: 'Cluster', name: 'wl' });
    });

    it("writes <cluster>-kubeconfig for the workload cluster's own endpoint and credentials", async () => {
      const { endpoint, secret } = await kubeconfigOf(sb, 'wl');
      expect(secret.type).toBe('cluster.x-k8s.io/secret');
      expect(secret.metadata.labels['cluster.x-k8s.io/cluster-name']).toBe('wl');
      expect(endpoint.server).not.toBe(sb.server);
      expect(endpoint.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(endpoint.token).not.toBe(sb.token);
      const namespaces = await call(endpoint, 'GET', '/api/v1/namespaces');
      expect(namespaces.status).toBe(200);
      expect(namespaces.json.items.map((n: any) => n.metadata.name)).toContain('kube-system');
      await target!.checkWorkloadEndpoint(endpoint);
      expect(target!.workloadServers()).toEqual([{ namespace: NS, name: 'wl', server: endpoint.server }]);
      workload = endpoint;
    });

    it('runs a MachineDeployment: MachineSet and Machines with owners and labels, phase Running', async () => {
      await create(sb, `${CAPI}/machinedeployments`, machineDeployment('wl-md', 'wl', 2, 'v1.30.0'));
      const machines = await waitUntil(sb, `${CAPI}/machines`, (items) => allRunning(workerMachines(items, 'wl-md'), 2));
      const md = await waitUntil(sb, `${CAPI}/machinedeployments`, (items) => items.get('wl-md')?.status?.phase === 'Running');
      expect(md.get('wl-md').status).toMatchObject({ replicas: 2, readyReplicas: 2, updatedReplicas: 2, availableReplicas: 2 });
      const sets = (await call(sb, 'GET', `${CAPI}/machinesets`)).json.items;
      expect(sets).toHaveLength(1);
      expect(sets[0].metadata.ownerReferences[0]).toMatchObject({ kind: 'MachineDeployment', name: 'wl-md', controller: true });
      for (const m of workerMachines(machines, 'wl-md')) {
        expect(m.metadata.ownerReferences[0]).toMatchObject({ kind: 'MachineSet', name: sets[0].metadata.name });
        expect(m.metadata.labels['cluster.x-k8s.io/cluster-name']).toBe('wl');
        expect(m.status).toMatchObject({ bootstrapReady: true, infrastructureReady: true, nodeRef: { kind: 'Node', name: m.metadata.name } });
      }
    });

    it('scales the MachineDeployment through /scale, the selector finding its Machines', async () => {
      const r = await call(sb, 'PATCH', `${CAPI}/machinedeployments/wl-md/scale`, { spec: { replicas: 3 } }, 'application/merge-patch+json');
      expect(r.status).toBe(200);
      expect(r.json.spec.replicas).toBe(3);
      await waitUntil(sb, `${CAPI}/machinedeployments`, (items) => items.get('wl-md')?.status?.readyReplicas === 3 && items.get('wl-md')?.status?.phase === 'Running');
      const scale = (await call(sb, 'GET', `${CAPI}/machinedeployments/wl-md/scale`)).json;
      expect(scale).toMatchObject({ kind: 'Scale', spec: { replicas: 3 }, status: { replicas: 3 } });
      const selected = (await call(sb, 'GET', `${CAPI}/machines?labelSelector=${encodeURIComponent(scale.status.selector)}`)).json.items;
      expect(selected).toHaveLength(3);
    });

    it('replaces a deleted Machine with a new one', async () => {
      const before = workerMachines(new Map((await call(sb, 'GET', `${CAPI}/machines`)).json.items.map((m: any) => [m.metadata.name, m])), 'wl-md');
      const victim = before[0].metadata.name;
      expect((await call(sb, 'DELETE', `${CAPI}/machines/${victim}`)).status).toBe(200);
      const after = await waitUntil(sb, `${CAPI}/machines`, (items) => !items.has(victim) && allRunning(workerMachines(items, 'wl-md'), 3));
      const names = workerMachines(after, 'wl-md').map((m) => m.metadata.name);
      expect(names).not.toContain(victim);
      expect(names.filter((n) => !before.some((b: any) => b.metadata.name === n))).toHaveLength(1);
    });

    it('rolls the Machines to a new MachineSet when the template changes', async () => {
      const r = await call(sb, 'PATCH', `${CAPI}/machinedeployments/wl-md`, { spec: { template: { spec: { version: 'v1.31.0' } } } }, 'application/merge-patch+json');
      expect(r.status).toBe(200);
      const machines = await waitUntil(sb, `${CAPI}/machines`, (items) => {
        const workers = workerMachines(items, 'wl-md');
        return (
          allRunning(workers, 3) &&
          workers.every((m) => m.spec.version === 'v1.31.0') &&
          [...items.values()].filter((m) => m.metadata.labels?.['cluster.x-k8s.io/deployment-name'] === 'wl-md').length === 3
        );
      });
      const sets = (await call(sb, 'GET', `${CAPI}/machinesets`)).json.items;
      expect(sets).toHaveLength(1);
      expect(workerMachines(machines, 'wl-md').every((m) => m.metadata.ownerReferences[0].name === sets[0].metadata.name)).toBe(true);
    });

    it('deleting the Cluster deletes what belongs to it and closes its workload endpoint', async () => {
      expect((await call(sb, 'DELETE', `${CAPI}/clusters/wl`)).status).toBe(200);
      await waitUntil(sb, `${CAPI}/clusters`, (items) => !items.has('wl'));
      for (const path of [`${CAPI}/machines`, `${CAPI}/machinesets`, `${CAPI}/machinedeployments`, `${CP}/kubeadmcontrolplanes`, `${INFRA}/dummyclusters`]) {
        expect((await call(sb, 'GET', path)).json.items, path).toEqual([]);
      }
      await waitUntil(sb, `/api/v1/namespaces/${NS}/secrets`, (items) => !items.has('wl-kubeconfig'));
      await expect(call(workload, 'GET', '/version')).rejects.toThrow(/ECONNREFUSED/);
      expect(target!.workloadServers()).toEqual([]);
    });

    it('provisions a Kamaji control plane without Machines; deleting its Cluster closes the workload endpoint', async () => {
      await createCluster(sb, 'kamaji', 'kamaji');
      await waitUntil(sb, `${CAPI}/clusters`, (items) => items.get('kamaji')?.status?.phase === 'Provisioned');
      const cp = (await call(sb, 'GET', `${CP}/kamajicontrolplanes/kamaji-cp`)).json;
      expect(cp.status).toMatchObject({ ready: true, initialized: true, replicas: 2, readyReplicas: 2 });
      expect((await call(sb, 'GET', `${CAPI}/machines`)).json.items).toEqual([]);
      const { endpoint } = await kubeconfigOf(sb, 'kamaji');
      expect((await call(endpoint, 'GET', '/version')).status).toBe(200);
      expect((await call(sb, 'DELETE', `${CAPI}/clusters/kamaji`)).status).toBe(200);
      await waitUntil(sb, `${CAPI}/clusters`, (items) => !items.has('kamaji'));
      await expect(call(endpoint, 'GET', '/version')).rejects.toThrow(/ECONNREFUSED/);
    });

    extraTests?.(() => target as T);
  });
}
