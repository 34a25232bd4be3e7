/**
 * What the controllers of a cluster do that vnfm's readiness waits,
 * scale and heal rely on: Deployments roll out to Available, ReplicaSets
 * replace deleted pods, StatefulSets create ordinal pods in order,
 * DaemonSets run one pod per schedulable node, Jobs complete, Services get
 * a cluster IP and endpoints, PVCs bind to the volumes they name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, deployment, hasCondition, type Cluster } from './cluster.js';

let c: Cluster;
let ns: string;
const TIMEOUT = 120_000;

beforeAll(async () => {
  c = await connect('conf-workloads');
  ns = c.namespace;
});
afterAll(async () => {
  await c?.close();
});

const pods = () => `/api/v1/namespaces/${ns}/pods`;
const podsOf = async (selector: string): Promise<any[]> => (await c.request('GET', `${pods()}?labelSelector=${encodeURIComponent(selector)}`)).json.items;
const small = (image = 'busybox:1.36'): any => ({ containers: [{ name: 'main', image, command: ['sleep', '3600'] }] });

describe('workload controllers', () => {
  it('rolls a Deployment out to Available, and through a template change', { timeout: TIMEOUT }, async () => {
    const base = `/apis/apps/v1/namespaces/${ns}/deployments`;
    await c.request('POST', base, { body: deployment('web', 2) });
    const done = (o: any): boolean =>
      o.status?.observedGeneration >= o.metadata.generation &&
      o.status?.updatedReplicas === 2 &&
      o.status?.availableReplicas === 2 &&
      o.status?.replicas === 2 &&
      hasCondition(o, 'Available');
    const ready = await c.waitFor(base, 'web', done, TIMEOUT);
    expect(ready.status.readyReplicas).toBe(2);
    const running = await podsOf('app=web');
    expect(running.every((p) => p.status.phase === 'Running' && p.status.podIP && p.spec.nodeName)).toBe(true);
    expect(running[0].metadata.ownerReferences[0]).toMatchObject({ kind: 'ReplicaSet', controller: true });
    expect(running[0].metadata.labels['pod-template-hash']).toEqual(expect.any(String));

    await c.request('PATCH', `${base}/web`, {
      body: { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:1.28' }] } } } },
      contentType: 'application/strategic-merge-patch+json',
    });
    const rolled = await c.waitFor(
      base,
      'web',
      (o) => done(o) && o.metadata.generation === 2 && hasCondition(o, 'Progressing') && o.status.conditions.some((x: any) => x.reason === 'NewReplicaSetAvailable'),
      TIMEOUT,
    );
    expect(rolled.status.updatedReplicas).toBe(2);
    const rs = (await c.request('GET', `/apis/apps/v1/namespaces/${ns}/replicasets?labelSelector=app%3Dweb`)).json.items;
    expect(rs.map((r: any) => r.spec.replicas).sort()).toEqual([0, 2]);
  });

  it('has a ReplicaSet replace a deleted pod', { timeout: TIMEOUT }, async () => {
    const base = `/apis/apps/v1/namespaces/${ns}/replicasets`;
    await c.request('POST', base, {
      body: {
        metadata: { name: 'keeper' },
        spec: { replicas: 2, selector: { matchLabels: { app: 'keeper' } }, template: { metadata: { labels: { app: 'keeper' } }, spec: small() } },
      },
    });
    await c.waitFor(base, 'keeper', (o) => o.status?.readyReplicas === 2, TIMEOUT);
    const [victim] = await podsOf('app=keeper');
    await c.request('DELETE', `${pods()}/${victim.metadata.name}`);
    const events = await c.watch(
      pods(),
      { labelSelector: 'app=keeper' },
      (_e, all) => {
        const ready = new Set(
          all.filter((e) => e.type !== 'DELETED' && e.object.status?.conditions?.some((x: any) => x.type === 'Ready' && x.status === 'True')).map((e) => e.object.metadata.name),
        );
        ready.delete(victim.metadata.name);
        return ready.size === 2;
      },
      TIMEOUT,
    );
    expect(events.length).toBeGreaterThan(0);
    await c.waitFor(base, 'keeper', (o) => o.status?.readyReplicas === 2 && o.status?.replicas === 2, TIMEOUT);
  });

  it('creates StatefulSet pods with ordinal names, in order', { timeout: TIMEOUT }, async () => {
    const base = `/apis/apps/v1/namespaces/${ns}/statefulsets`;
    const from = (await c.request('GET', pods())).json.metadata.resourceVersion;
    await c.request('POST', base, {
      body: {
        metadata: { name: 'db' },
        spec: { replicas: 3, serviceName: 'db', selector: { matchLabels: { app: 'db' } }, template: { metadata: { labels: { app: 'db' } }, spec: small() } },
      },
    });
    await c.waitFor(base, 'db', (o) => o.status?.readyReplicas === 3 && o.status?.currentRevision === o.status?.updateRevision, TIMEOUT);
    const names = (await podsOf('app=db')).map((p) => p.metadata.name).sort();
    expect(names).toEqual(['db-0', 'db-1', 'db-2']);
    const events = await c.watch(pods(), { resourceVersion: from, labelSelector: 'app=db' }, (_e, all) => all.filter((e) => e.type === 'ADDED').length === 3, TIMEOUT);
    expect(events.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata.name)).toEqual(['db-0', 'db-1', 'db-2']);
  });

  it('runs one DaemonSet pod on each schedulable node', { timeout: TIMEOUT }, async () => {
    const base = `/apis/apps/v1/namespaces/${ns}/daemonsets`;
    await c.request('POST', base, {
      body: { metadata: { name: 'agent' }, spec: { selector: { matchLabels: { app: 'agent' } }, template: { metadata: { labels: { app: 'agent' } }, spec: small() } } },
    });
    const ds = await c.waitFor(
      base,
      'agent',
      (o) => o.status?.desiredNumberScheduled > 0 && o.status?.numberReady === o.status?.desiredNumberScheduled && o.status?.observedGeneration === o.metadata.generation,
      TIMEOUT,
    );
    const running = await podsOf('app=agent');
    expect(running).toHaveLength(ds.status.desiredNumberScheduled);
    expect(new Set(running.map((p) => p.spec.nodeName)).size).toBe(running.length);
    if (c.sandbox) expect(ds.status.desiredNumberScheduled).toBe(2);
  });

  it('completes a Job', { timeout: TIMEOUT }, async () => {
    const base = `/apis/batch/v1/namespaces/${ns}/jobs`;
    await c.request('POST', base, {
      body: {
        metadata: { name: 'once' },
        spec: { completions: 2, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36', command: ['true'] }] } } },
      },
    });
    const job = await c.waitFor(base, 'once', (o) => hasCondition(o, 'Complete'), TIMEOUT);
    expect(job.status.succeeded).toBe(2);
    expect(job.status.completionTime).toEqual(expect.any(String));
  });

  it('gives a Service a cluster IP and endpoints of its ready pods', { timeout: TIMEOUT }, async () => {
    const svc = await c.request('POST', `/api/v1/namespaces/${ns}/services`, {
      body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 80 }] } },
    });
    expect(svc.status).toBe(201);
    expect(svc.json.spec.clusterIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(svc.json.spec.ports[0]).toMatchObject({ port: 80, targetPort: 80, protocol: 'TCP' });
    const ep = await c.waitFor(`/api/v1/namespaces/${ns}/endpoints`, 'web', (o) => (o.subsets?.[0]?.addresses ?? []).length === 2, TIMEOUT);
    expect(ep.subsets[0].ports[0].port).toBe(80);
    const slices = await c.request('GET', `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=${encodeURIComponent('kubernetes.io/service-name=web')}`);
    expect(slices.json.items.length).toBeGreaterThan(0);
  });

  it('binds a PersistentVolumeClaim to the PersistentVolume it names, and runs the Pod that mounts it', { timeout: TIMEOUT }, async () => {
    // No provisioner is assumed (a bare control plane has none): the test
    // brings its own volume, named by the claim so no other claim takes it.
    const volume = `conf-${ns}`;
    const created = await c.request('POST', '/api/v1/persistentvolumes', {
      body: {
        metadata: { name: volume },
        spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: '', persistentVolumeReclaimPolicy: 'Retain', hostPath: { path: `/tmp/${volume}` } },
      },
    });
    expect(created.status, created.text).toBe(201);
    try {
      const base = `/api/v1/namespaces/${ns}/persistentvolumeclaims`;
      await c.request('POST', base, {
        body: { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', volumeName: volume, resources: { requests: { storage: '1Gi' } } } },
      });
      await c.request('POST', pods(), {
        body: { metadata: { name: 'data-user' }, spec: { ...small(), volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] } },
      });
      const pvc = await c.waitFor(base, 'data', (o) => o.status?.phase === 'Bound', TIMEOUT);
      expect(pvc.spec.volumeName).toBe(volume);
      const pv = await c.waitFor('/api/v1/persistentvolumes', volume, (o) => o.status?.phase === 'Bound', TIMEOUT);
      expect(pv.spec.claimRef).toMatchObject({ kind: 'PersistentVolumeClaim', name: 'data', namespace: ns, uid: pvc.metadata.uid });
      await c.waitFor(pods(), 'data-user', (o) => o.status?.phase === 'Running', TIMEOUT);
    } finally {
      await c.request('DELETE', `${pods()}/data-user?gracePeriodSeconds=0`);
      await c.request('DELETE', `/api/v1/persistentvolumes/${volume}`);
    }
  });
});
