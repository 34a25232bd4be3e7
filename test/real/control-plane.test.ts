/**
 * The real API server tier's own harness (test/support/real-apiserver.ts and
 * stand-in-kubelet.ts): the real controllers drive workloads to ready
 * through the stand-in kubelet, DaemonSet Pods land one per Node, and
 * graceful deletions finish.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kubeJson, kubeRequest, until, type KubeEndpoint } from '../support/kube-http.js';
import type {} from '../support/real-apiserver-setup.js';
import { holdPods } from '../support/stand-in-kubelet.js';

const real = inject('realCluster');
if (!real) throw new Error('test/real runs only in the real-apiserver project, whose global setup starts the control plane');
const endpoint: KubeEndpoint = real;
const ns = `harness-${randomBytes(3).toString('hex')}`;

const api = (method: string, path: string, body?: unknown, contentType?: string): Promise<any> => kubeJson(endpoint, method, path, body, contentType);

const podSpec = { containers: [{ name: 'main', image: 'nginx:1.27' }] };

beforeAll(async () => {
  await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await until('default ServiceAccount', async () => ((await kubeRequest(endpoint, 'GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`)).status === 200 ? true : undefined));
});

afterAll(async () => {
  await kubeRequest(endpoint, 'DELETE', `/api/v1/namespaces/${ns}`);
});

describe('real control plane with the stand-in kubelet', () => {
  it('answers as the published server version, with Ready nodes', async () => {
    expect(real.gitVersion).toBe('v1.25.0-alpha.2');
    const nodes = await api('GET', '/api/v1/nodes');
    const names = nodes.items.map((n: any) => n.metadata.name);
    expect(names).toEqual(expect.arrayContaining(real.nodes));
    for (const n of nodes.items) {
      expect(n.status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
      expect(n.spec.taints ?? []).toEqual([]);
    }
  });

  it('brings a Deployment to Available with Running, Ready Pods that have IPs', async () => {
    await api('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: podSpec } },
    });
    const d = await until('Deployment web Available', async () => {
      const d = await api('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`);
      const available = (d.status?.conditions ?? []).some((c: any) => c.type === 'Available' && c.status === 'True');
      return available && d.status.readyReplicas === 2 ? d : undefined;
    });
    expect(d.status.availableReplicas).toBe(2);
    const pods = await api('GET', `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`);
    expect(pods.items).toHaveLength(2);
    for (const p of pods.items) {
      expect(p.status.phase).toBe('Running');
      expect(p.status.podIP).toMatch(/^10\.244\./);
      expect(real.nodes).toContain(p.spec.nodeName);
      expect(p.status.containerStatuses[0]).toMatchObject({ name: 'main', ready: true });
    }
  });

  it('runs one DaemonSet Pod on each Node', async () => {
    await api('POST', `/apis/apps/v1/namespaces/${ns}/daemonsets`, {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent' },
      spec: { selector: { matchLabels: { app: 'agent' } }, template: { metadata: { labels: { app: 'agent' } }, spec: podSpec } },
    });
    const ds = await until('DaemonSet agent ready on every node', async () => {
      const ds = await api('GET', `/apis/apps/v1/namespaces/${ns}/daemonsets/agent`);
      return ds.status?.numberReady === real.nodes.length && ds.status.desiredNumberScheduled === real.nodes.length ? ds : undefined;
    });
    expect(ds.status.numberAvailable).toBe(real.nodes.length);
    const pods = await api('GET', `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dagent`);
    expect(pods.items.map((p: any) => p.spec.nodeName).sort()).toEqual([...real.nodes].sort());
  });

  it('finishes the graceful deletion of a Pod, as a kubelet would', async () => {
    const pods = await api('GET', `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`);
    const victim = pods.items[0];
    const deleted = await api('DELETE', `/api/v1/namespaces/${ns}/pods/${victim.metadata.name}`);
    expect(Date.parse(deleted.metadata.deletionTimestamp)).not.toBeNaN();
    await until('Pod gone', async () => ((await kubeRequest(endpoint, 'GET', `/api/v1/namespaces/${ns}/pods/${victim.metadata.name}`)).status === 404 ? true : undefined));
    // The ReplicaSet replaces it.
    await until('Deployment back to 2 ready', async () => {
      const d = await api('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`);
      return d.status.readyReplicas === 2 && d.status.replicas === 2 ? true : undefined;
    });
  });

  it('holds the Pods of a held Deployment back (bound, not started) until the hold is lifted', async () => {
    const lift = await holdPods(endpoint, { kind: 'Deployment', name: 'held', namespace: ns });
    await api('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'held' },
      spec: { replicas: 1, selector: { matchLabels: { app: 'held' } }, template: { metadata: { labels: { app: 'held' } }, spec: podSpec } },
    });
    const pod = await until('held Pod bound', async () => {
      const pods = await api('GET', `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dheld`);
      return pods.items[0]?.spec.nodeName ? pods.items[0] : undefined;
    });
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await api('GET', `/api/v1/namespaces/${ns}/pods/${pod.metadata.name}`)).status.phase).toBe('Pending');
    await lift();
    await until('held Deployment ready once lifted', async () => {
      const d = await api('GET', `/apis/apps/v1/namespaces/${ns}/deployments/held`);
      return d.status?.readyReplicas === 1 ? true : undefined;
    });
  });

  it('waits with a Pod whose claim is not Bound, and runs it once a PersistentVolume binds the claim', async () => {
    await api('POST', `/api/v1/namespaces/${ns}/persistentvolumeclaims`, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', volumeName: `harness-pv-${ns}`, resources: { requests: { storage: '1Gi' } } },
    });
    await api('POST', `/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'with-claim' },
      spec: { ...podSpec, volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] },
    });
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await api('GET', `/api/v1/namespaces/${ns}/pods/with-claim`)).spec.nodeName).toBeUndefined();
    const pv = `harness-pv-${ns}`;
    await api('POST', '/api/v1/persistentvolumes', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: pv },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: '', persistentVolumeReclaimPolicy: 'Delete', hostPath: { path: `/tmp/${pv}` } },
    });
    try {
      await until(
        'Pod with a claim Running',
        async () => {
          const p = await api('GET', `/api/v1/namespaces/${ns}/pods/with-claim`);
          return p.status.phase === 'Running' ? true : undefined;
        },
        60_000,
      );
    } finally {
      await kubeRequest(endpoint, 'DELETE', `/api/v1/persistentvolumes/${pv}`);
    }
  });
});
