/**
 * What vnfm relies on from the API's basics: discovery of every group it
 * may be asked to apply, CRUD of built-in kinds (namespaced and
 * cluster-scoped), resourceVersion conflicts, metadata.generation, label
 * and field selectors, the /status and /scale subresources.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGGREGATED_DISCOVERY_V2, atLeast, connect, deployment, readModifyWrite, type Cluster } from './cluster.js';

let c: Cluster;
let ns: string;

beforeAll(async () => {
  c = await connect('conf-basics');
  ns = c.namespace;
});
afterAll(async () => {
  await c?.close();
});

describe('discovery', () => {
  it('lists the core version and the named groups vnfm applies', async () => {
    const core = await c.request('GET', '/api');
    expect(core.json.versions).toContain('v1');
    const groups = await c.request('GET', '/apis');
    const names = groups.json.groups.map((g: any) => g.name);
    for (const g of [
      'apps',
      'batch',
      'rbac.authorization.k8s.io',
      'networking.k8s.io',
      'autoscaling',
      'policy',
      'storage.k8s.io',
      'scheduling.k8s.io',
      'discovery.k8s.io',
      'coordination.k8s.io',
    ]) {
      expect(names).toContain(g);
    }
    const apps = groups.json.groups.find((g: any) => g.name === 'apps');
    expect(apps.preferredVersion).toEqual({ groupVersion: 'apps/v1', version: 'v1' });
  });

  it('describes resources with their scope, verbs and subresources', async () => {
    const apps = await c.request('GET', '/apis/apps/v1');
    const byName = new Map(apps.json.resources.map((r: any) => [r.name, r]));
    expect(byName.get('deployments')).toMatchObject({ kind: 'Deployment', namespaced: true });
    expect((byName.get('deployments') as any).verbs).toEqual(expect.arrayContaining(['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']));
    expect(byName.get('deployments/scale')).toMatchObject({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
    expect(byName.get('deployments/status')).toMatchObject({ kind: 'Deployment' });
    const core = await c.request('GET', '/api/v1');
    const pv = core.json.resources.find((r: any) => r.name === 'persistentvolumes');
    expect(pv).toMatchObject({ kind: 'PersistentVolume', namespaced: false });
    const rbac = await c.request('GET', '/apis/rbac.authorization.k8s.io/v1');
    expect(rbac.json.resources.find((r: any) => r.name === 'clusterroles')).toMatchObject({ namespaced: false });
  });

  it('serves aggregated discovery (from Kubernetes 1.30; before, the fallback APIGroupList)', async () => {
    const r = await c.request('GET', '/apis', { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' });
    if (!atLeast(c.version, ...AGGREGATED_DISCOVERY_V2)) {
      expect(r.json.kind).toBe('APIGroupList');
      expect(r.json.groups.map((g: any) => g.name)).toContain('apps');
      return;
    }
    expect(r.json.kind).toBe('APIGroupDiscoveryList');
    const apps = r.json.items.find((i: any) => i.metadata.name === 'apps');
    const deployments = apps.versions[0].resources.find((x: any) => x.resource === 'deployments');
    expect(deployments.scope).toBe('Namespaced');
    expect(deployments.subresources.map((s: any) => s.subresource).sort()).toEqual(['scale', 'status']);
  });
});

describe('CRUD of built-in kinds', () => {
  it('creates, reads, replaces, lists and deletes a namespaced object', async () => {
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    const created = await c.request('POST', base, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'crud' }, data: { a: '1' } } });
    expect(created.status).toBe(201);
    expect(created.json.metadata).toMatchObject({ name: 'crud', namespace: ns, uid: expect.any(String), resourceVersion: expect.any(String) });
    const got = await c.request('GET', `${base}/crud`);
    expect(got.json.data).toEqual({ a: '1' });
    const replaced = await c.request('PUT', `${base}/crud`, { body: { ...got.json, data: { a: '2' } } });
    expect(replaced.status).toBe(200);
    expect(Number(replaced.json.metadata.resourceVersion)).toBeGreaterThan(Number(got.json.metadata.resourceVersion));
    const list = await c.request('GET', base);
    expect(list.json.kind).toBe('ConfigMapList');
    expect(list.json.items.map((i: any) => i.metadata.name)).toContain('crud');
    const deleted = await c.request('DELETE', `${base}/crud`);
    expect(deleted.status).toBe(200);
    expect((await c.request('GET', `${base}/crud`)).status).toBe(404);
  });

  it('creates a cluster-scoped object without a namespace', async () => {
    const name = `${ns}-reader`;
    const r = await c.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] },
    });
    expect(r.status).toBe(201);
    expect(r.json.metadata.namespace).toBeUndefined();
    expect((await c.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`)).status).toBe(200);
  });

  it('answers 409 AlreadyExists and 404 NotFound with Status objects', async () => {
    const base = `/api/v1/namespaces/${ns}/serviceaccounts`;
    const body = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'dup' } };
    expect((await c.request('POST', base, { body })).status).toBe(201);
    const again = await c.request('POST', base, { body });
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ kind: 'Status', reason: 'AlreadyExists', code: 409, details: { name: 'dup', kind: 'serviceaccounts' } });
    const missing = await c.request('GET', `/apis/apps/v1/namespaces/${ns}/deployments/nope`);
    expect(missing.json).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404, message: 'deployments.apps "nope" not found' });
  });

  it('refuses an update with a stale resourceVersion (409 Conflict)', async () => {
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    const created = await c.request('POST', base, { body: { metadata: { name: 'stale' }, data: { v: '1' } } });
    const first = await c.request('PUT', `${base}/stale`, { body: { ...created.json, data: { v: '2' } } });
    expect(first.status).toBe(200);
    const second = await c.request('PUT', `${base}/stale`, { body: { ...created.json, data: { v: '3' } } });
    expect(second.status).toBe(409);
    expect(second.json).toMatchObject({ reason: 'Conflict', code: 409 });
    expect(second.json.message).toContain('the object has been modified');
  });

  it('bumps metadata.generation on spec changes only', async () => {
    const base = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const created = await c.request('POST', base, { body: deployment('gen', 0) });
    expect(created.json.metadata.generation).toBe(1);
    const labelled = await c.request('PATCH', `${base}/gen`, { body: { metadata: { labels: { extra: 'yes' } } }, contentType: 'application/merge-patch+json' });
    expect(labelled.json.metadata.generation).toBe(1);
    const scaled = await c.request('PATCH', `${base}/gen`, { body: { spec: { replicas: 1 } }, contentType: 'application/merge-patch+json' });
    expect(scaled.json.metadata.generation).toBe(2);
  });
});

describe('selectors', () => {
  beforeAll(async () => {
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    for (const [name, labels] of [
      ['sel-a', { tier: 'web', env: 'prod' }],
      ['sel-b', { tier: 'db', env: 'prod' }],
      ['sel-c', { tier: 'web', env: 'dev' }],
    ] as const) {
      await c.request('POST', base, { body: { metadata: { name, labels } } });
    }
  });
  const names = async (query: string): Promise<string[]> => {
    const r = await c.request('GET', `/api/v1/namespaces/${ns}/configmaps?${query}`);
    expect(r.status).toBe(200);
    return r.json.items
      .map((i: any) => i.metadata.name)
      .filter((n: string) => n.startsWith('sel-'))
      .sort();
  };

  it('filters by equality, inequality, set-based and existence label selectors', async () => {
    expect(await names('labelSelector=tier%3Dweb')).toEqual(['sel-a', 'sel-c']);
    expect(await names('labelSelector=tier%3Dweb,env!%3Ddev')).toEqual(['sel-a']);
    expect(await names(`labelSelector=${encodeURIComponent('env in (prod),tier notin (db)')}`)).toEqual(['sel-a']);
    expect(await names('labelSelector=tier')).toEqual(['sel-a', 'sel-b', 'sel-c']);
    expect(await names(`labelSelector=${encodeURIComponent('!tier')}`)).toEqual([]);
  });

  it('filters by metadata.name', async () => {
    expect(await names('fieldSelector=metadata.name%3Dsel-b')).toEqual(['sel-b']);
  });
});

describe('subresources', () => {
  it('writes status through /status without touching spec, and spec without touching status', async () => {
    const base = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const created = await c.request('POST', base, { body: deployment('sub', 0) });
    const status = await readModifyWrite(
      c,
      `${base}/sub`,
      (current) => ({ ...current, spec: { ...current.spec, replicas: 7 }, status: { ...current.status, observedGeneration: 99 } }),
      '/status',
    );
    expect(status.status).toBe(200);
    expect(status.json.spec.replicas).toBe(0);
    expect(status.json.status.observedGeneration).toBe(99);
    expect(status.json.metadata.generation).toBe(created.json.metadata.generation);
    const main = await readModifyWrite(c, `${base}/sub`, (latest) => ({ ...latest, status: { observedGeneration: 1234 } }));
    expect(main.status).toBe(200);
    expect(main.json.status.observedGeneration).not.toBe(1234);
  });

  it('reads and writes replicas through /scale', async () => {
    const base = `/apis/apps/v1/namespaces/${ns}/deployments`;
    await c.request('POST', base, { body: deployment('scaled', 0) });
    const scale = await c.request('GET', `${base}/scaled/scale`);
    expect(scale.json).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', status: { replicas: 0, selector: 'app=scaled' } });
    // ScaleSpec.replicas is omitempty: zero replicas leave an empty spec.
    expect(scale.json.spec).toEqual({});
    // The deployment controller writes status meanwhile, so the Scale's resourceVersion may have moved on.
    const put = await readModifyWrite(c, `${base}/scaled/scale`, (current) => ({ ...current, spec: { replicas: 0 } }));
    expect(put.status).toBe(200);
    const patched = await c.request('PATCH', `${base}/scaled/scale`, { body: { spec: { replicas: 1 } }, contentType: 'application/merge-patch+json' });
    expect(patched.json.spec.replicas).toBe(1);
    expect((await c.request('GET', `${base}/scaled`)).json.spec.replicas).toBe(1);
    const stale = await c.request('PUT', `${base}/scaled/scale`, { body: { ...scale.json, spec: { replicas: 3 } } });
    expect(stale.status).toBe(409);
  });

  it('refuses a negative replica count through /scale as Invalid', async () => {
    const base = `/apis/apps/v1/namespaces/${ns}/deployments`;
    await c.request('POST', base, { body: deployment('negative', 0) });
    const r = await c.request('PATCH', `${base}/negative/scale`, { body: { spec: { replicas: -1 } }, contentType: 'application/merge-patch+json' });
    expect(r.status).toBe(422);
    expect(r.json).toMatchObject({
      kind: 'Status',
      reason: 'Invalid',
      message: 'Scale.autoscaling "negative" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
      details: { name: 'negative', group: 'autoscaling', kind: 'Scale', causes: [{ reason: 'FieldValueInvalid', field: 'spec.replicas' }] },
    });
    expect((await c.request('GET', `${base}/negative`)).json.spec.replicas).toBe(0);
  });
});
