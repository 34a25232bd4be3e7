/**
 * What Tacker's sample CNFs use of storage and autoscaling, as a cluster
 * answers it: a claim binds to the smallest Available PersistentVolume of
 * its class that fits (also one created after the claim), a class with the
 * `kubernetes.io/no-provisioner` provisioner provisions nothing; a
 * HorizontalPodAutoscaler is served as autoscaling/v2 and autoscaling/v1,
 * one object converted between them (v1 `targetCPUUtilizationPercentage` ↔
 * v2's CPU Utilization metric, other metrics in an annotation), with v2's
 * defaults; an access review takes no metadata (a LocalSubjectAccessReview
 * its namespace only), so a deployer must send it without labels.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Cluster } from './cluster.js';

let c: Cluster;
let ns: string;
const TIMEOUT = 120_000;

beforeAll(async () => {
  c = await connect('conf-storage-hpa');
  ns = c.namespace;
});
afterAll(async () => {
  await c?.close();
});

const pv = (name: string, cls: string, size: string, labels: Record<string, string> = {}): any => ({
  metadata: { name, labels },
  spec: { capacity: { storage: size }, accessModes: ['ReadWriteOnce'], storageClassName: cls, persistentVolumeReclaimPolicy: 'Retain', hostPath: { path: `/tmp/${name}` } },
});
const pvc = (name: string, cls: string, size: string): any => ({
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], storageClassName: cls, resources: { requests: { storage: size } } },
});

describe('claims and volumes of a class', () => {
  it('binds a claim to the smallest Available volume of its class that fits, and a waiting claim to a volume made after it', { timeout: TIMEOUT }, async () => {
    const cls = `conf-local-${ns}`;
    const volumes = [`${ns}-big`, `${ns}-fit`, `${ns}-small`, `${ns}-late`];
    const sc = await c.request('POST', '/apis/storage.k8s.io/v1/storageclasses', {
      body: { metadata: { name: cls }, provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: 'Immediate', reclaimPolicy: 'Retain' },
    });
    expect(sc.status, sc.text).toBe(201);
    const claims = `/api/v1/namespaces/${ns}/persistentvolumeclaims`;
    try {
      for (const [name, size] of [
        [volumes[0]!, '5Gi'],
        [volumes[1]!, '2Gi'],
        [volumes[2]!, '512Mi'],
      ] as const) {
        const made = await c.request('POST', '/api/v1/persistentvolumes', { body: pv(name, cls, size) });
        expect(made.status, made.text).toBe(201);
      }
      expect((await c.request('POST', claims, { body: pvc('data', cls, '1Gi') })).status).toBe(201);
      const bound = await c.waitFor(claims, 'data', (o) => o.status?.phase === 'Bound', TIMEOUT);
      expect(bound.spec.volumeName).toBe(volumes[1]);
      expect(bound.status.capacity).toEqual({ storage: '2Gi' });
      const volume = await c.waitFor('/api/v1/persistentvolumes', volumes[1]!, (o) => o.status?.phase === 'Bound', TIMEOUT);
      expect(volume.spec.claimRef).toMatchObject({ name: 'data', namespace: ns, uid: bound.metadata.uid });

      // No volume of the class is big enough: the claim waits (the class provisions nothing) until one is made.
      expect((await c.request('POST', claims, { body: pvc('later', cls, '8Gi') })).status).toBe(201);
      expect((await c.request('GET', `${claims}/later`)).json.status.phase).toBe('Pending');
      expect((await c.request('POST', '/api/v1/persistentvolumes', { body: pv(volumes[3]!, cls, '10Gi') })).status).toBe(201);
      const late = await c.waitFor(claims, 'later', (o) => o.status?.phase === 'Bound', TIMEOUT);
      expect(late.spec.volumeName).toBe(volumes[3]);
      // The others stay free.
      for (const free of [volumes[0]!, volumes[2]!]) expect((await c.request('GET', `/api/v1/persistentvolumes/${free}`)).json.status.phase).toBe('Available');
    } finally {
      await c.request('DELETE', `${claims}/data`);
      await c.request('DELETE', `${claims}/later`);
      for (const v of volumes) await c.request('DELETE', `/api/v1/persistentvolumes/${v}`);
      await c.request('DELETE', `/apis/storage.k8s.io/v1/storageclasses/${cls}`);
    }
  });
});

describe('HorizontalPodAutoscaler in autoscaling/v1 and v2', () => {
  const v1 = () => `/apis/autoscaling/v1/namespaces/${ns}/horizontalpodautoscalers`;
  const v2 = () => `/apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers`;
  const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };

  it('discovery serves both versions, v2 preferred', async () => {
    const group = (await c.request('GET', '/apis/autoscaling')).json;
    const versions = group.versions.map((v: { version: string }) => v.version);
    expect(versions).toEqual(expect.arrayContaining(['v1', 'v2']));
    expect(group.preferredVersion.version).toBe('v2');
    for (const v of ['v1', 'v2']) {
      const list = (await c.request('GET', `/apis/autoscaling/${v}`)).json;
      expect(list.resources.find((r: { name: string }) => r.name === 'horizontalpodautoscalers')).toMatchObject({ kind: 'HorizontalPodAutoscaler', namespaced: true });
    }
  });

  it('a v1 targetCPUUtilizationPercentage is v2’s CPU Utilization metric, and back', async () => {
    const made = await c.request('POST', v1(), {
      body: {
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'from-v1' },
        spec: { scaleTargetRef: target, maxReplicas: 3, targetCPUUtilizationPercentage: 50 },
      },
    });
    expect(made.status, made.text).toBe(201);
    expect(made.json).toMatchObject({ apiVersion: 'autoscaling/v1', spec: { minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 50 } });
    const asV2 = (await c.request('GET', `${v2()}/from-v1`)).json;
    expect(asV2.apiVersion).toBe('autoscaling/v2');
    expect(asV2.spec).toMatchObject({
      minReplicas: 1,
      maxReplicas: 3,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
    });
    expect(asV2.spec.targetCPUUtilizationPercentage).toBeUndefined();

    const fromV2 = await c.request('POST', v2(), {
      body: {
        metadata: { name: 'from-v2' },
        spec: {
          scaleTargetRef: target,
          minReplicas: 2,
          maxReplicas: 4,
          metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }],
        },
      },
    });
    expect(fromV2.status, fromV2.text).toBe(201);
    const asV1 = (await c.request('GET', `${v1()}/from-v2`)).json;
    expect(asV1).toMatchObject({ apiVersion: 'autoscaling/v1', spec: { minReplicas: 2, maxReplicas: 4, targetCPUUtilizationPercentage: 70 } });
    expect(asV1.spec.metrics).toBeUndefined();
    expect(asV1.metadata.annotations?.['autoscaling.alpha.kubernetes.io/metrics']).toBeUndefined();
    // Both are one list, in either version.
    const names = (await c.request('GET', v1())).json.items.map((i: { metadata: { name: string } }) => i.metadata.name);
    expect(names).toEqual(expect.arrayContaining(['from-v1', 'from-v2']));
  });

  it('without a metric, v2 defaults to 80% CPU utilization, which v1 reads as its target', async () => {
    expect((await c.request('POST', v1(), { body: { metadata: { name: 'bare-v1' }, spec: { scaleTargetRef: target, maxReplicas: 2 } } })).status).toBe(201);
    expect((await c.request('POST', v2(), { body: { metadata: { name: 'bare-v2' }, spec: { scaleTargetRef: target, maxReplicas: 2 } } })).status).toBe(201);
    for (const name of ['bare-v1', 'bare-v2']) {
      expect((await c.request('GET', `${v2()}/${name}`)).json.spec.metrics).toEqual([
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
      ]);
      expect((await c.request('GET', `${v1()}/${name}`)).json.spec.targetCPUUtilizationPercentage).toBe(80);
    }
  });

  it('a metric v1 cannot say travels in its annotation, and survives a v1 update', async () => {
    const memory = { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } };
    const made = await c.request('POST', v2(), { body: { metadata: { name: 'memory' }, spec: { scaleTargetRef: target, maxReplicas: 5, metrics: [memory] } } });
    expect(made.status, made.text).toBe(201);
    const asV1 = (await c.request('GET', `${v1()}/memory`)).json;
    expect(asV1.spec.targetCPUUtilizationPercentage).toBeUndefined();
    const annotation = asV1.metadata.annotations?.['autoscaling.alpha.kubernetes.io/metrics'];
    expect(typeof annotation).toBe('string');
    expect(JSON.parse(annotation)).toEqual([expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'memory' }) })]);
    // Read-modify-write through v1: the memory metric is still there in v2, next to the CPU target v1 added.
    asV1.spec.maxReplicas = 6;
    asV1.spec.targetCPUUtilizationPercentage = 60;
    const put = await c.request('PUT', `${v1()}/memory`, { body: asV1 });
    expect(put.status, put.text).toBe(200);
    const after = (await c.request('GET', `${v2()}/memory`)).json;
    expect(after.spec.maxReplicas).toBe(6);
    expect(after.metadata.annotations?.['autoscaling.alpha.kubernetes.io/metrics']).toBeUndefined();
    expect(after.spec.metrics).toEqual(
      expect.arrayContaining([
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
        { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } },
      ]),
    );
    expect(after.spec.metrics).toHaveLength(2);
  });

  it('is deleted through either version', async () => {
    expect((await c.request('DELETE', `${v1()}/from-v2`)).status).toBe(200);
    expect((await c.request('GET', `${v2()}/from-v2`)).status).toBe(404);
  });
});

describe('access reviews take no metadata', () => {
  const access = { user: 'someone', resourceAttributes: { verb: 'get', resource: 'pods' } };

  it('a SubjectAccessReview with a label is refused naming metadata; without one it is answered', async () => {
    const labelled = await c.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: { labels: { owner: 'x' } }, spec: access },
    });
    expect(labelled.status).toBe(422);
    expect(labelled.json.details.causes).toEqual([expect.objectContaining({ reason: 'FieldValueInvalid', field: 'metadata' })]);
    expect(labelled.json.message).toMatch(/metadata: Invalid value: .*must be empty$/);
    const plain = await c.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: access },
    });
    expect(plain.status, plain.text).toBe(201);
    expect(typeof plain.json.status.allowed).toBe('boolean');
  });

  it('a LocalSubjectAccessReview may carry its namespace, nothing else', async () => {
    const path = `/apis/authorization.k8s.io/v1/namespaces/${ns}/localsubjectaccessreviews`;
    const spec = { ...access, resourceAttributes: { ...access.resourceAttributes, namespace: ns } };
    const named = await c.request('POST', path, {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: ns, name: 'x' }, spec },
    });
    expect(named.status).toBe(422);
    expect(named.json.message).toMatch(/metadata: Invalid value: .*must be empty except for namespace$/);
    const plain = await c.request('POST', path, { body: { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: ns }, spec } });
    expect(plain.status, plain.text).toBe(201);
  });
});
