/**
 * Deletion as vnfm's terminate relies on it: finalizers hold an object
 * (with a deletionTimestamp) until they are removed; owner references make
 * dependents go with their owner, in the background or — blocking the
 * owner — in the foreground; Orphan leaves them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Cluster } from './cluster.js';

let c: Cluster;
let cms: string;

beforeAll(async () => {
  c = await connect('conf-delete');
  cms = `/api/v1/namespaces/${c.namespace}/configmaps`;
});
afterAll(async () => {
  await c?.close();
});

async function create(name: string, extra: Record<string, unknown> = {}): Promise<any> {
  const r = await c.request('POST', cms, { body: { metadata: { name, ...extra } } });
  expect(r.status).toBe(201);
  return r.json;
}

function ownedBy(owner: any, block: boolean): Record<string, unknown> {
  return { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata.name, uid: owner.metadata.uid, blockOwnerDeletion: block }] };
}

describe('deletion', () => {
  it('keeps an object with a finalizer, marked for deletion, until the finalizer is removed', async () => {
    await create('fin', { finalizers: ['example.com/hold'] });
    const del = await c.request('DELETE', `${cms}/fin`);
    expect(del.status).toBe(200);
    const held = await c.request('GET', `${cms}/fin`);
    expect(held.json.metadata.deletionTimestamp).toEqual(expect.any(String));
    const release = await c.request('PATCH', `${cms}/fin`, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
    expect(release.status).toBe(200);
    await c.waitForGone(cms, 'fin');
  });

  it('deletes dependents in the background once their owner is gone', async () => {
    const owner = await create('bg-owner');
    await create('bg-dep', ownedBy(owner, false));
    const del = await c.request('DELETE', `${cms}/bg-owner`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' } });
    expect(del.status).toBe(200);
    expect((await c.request('GET', `${cms}/bg-owner`)).status).toBe(404);
    await c.waitForGone(cms, 'bg-dep');
  });

  it('keeps a foreground-deleted owner until its blocking dependents are gone', async () => {
    const owner = await create('fg-owner');
    await create('fg-dep', { ...ownedBy(owner, true), finalizers: ['example.com/hold'] });
    const del = await c.request('DELETE', `${cms}/fg-owner?propagationPolicy=Foreground`);
    expect(del.status).toBe(200);
    expect(del.json.metadata.finalizers).toContain('foregroundDeletion');
    const dep = await c.waitFor(cms, 'fg-dep', (o) => Boolean(o.metadata.deletionTimestamp));
    expect(dep.metadata.deletionTimestamp).toEqual(expect.any(String));
    const stillThere = await c.request('GET', `${cms}/fg-owner`);
    expect(stillThere.status).toBe(200);
    expect(stillThere.json.metadata.deletionTimestamp).toEqual(expect.any(String));
    await c.request('PATCH', `${cms}/fg-dep`, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
    await c.waitForGone(cms, 'fg-dep');
    await c.waitForGone(cms, 'fg-owner');
  });

  it('orphans dependents with propagationPolicy Orphan', async () => {
    const owner = await create('or-owner');
    await create('or-dep', ownedBy(owner, true));
    await c.request('DELETE', `${cms}/or-owner`, { body: { propagationPolicy: 'Orphan' } });
    await c.waitForGone(cms, 'or-owner');
    const dep = await c.waitFor(cms, 'or-dep', (o) => !(o.metadata.ownerReferences ?? []).length);
    expect(dep.metadata.deletionTimestamp).toBeUndefined();
  });

  it('deletes a Deployment in the foreground with its ReplicaSets and pods', async () => {
    const deployments = `/apis/apps/v1/namespaces/${c.namespace}/deployments`;
    const d = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'fg-web' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'fg-web' } },
        template: { metadata: { labels: { app: 'fg-web' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } },
      },
    };
    await c.request('POST', deployments, { body: d });
    await c.waitFor(deployments, 'fg-web', (o) => o.status?.readyReplicas === 1);
    await c.request('DELETE', `${deployments}/fg-web`, { body: { propagationPolicy: 'Foreground' } });
    await c.waitForGone(deployments, 'fg-web', 60_000);
    const pods = await c.request('GET', `/api/v1/namespaces/${c.namespace}/pods?labelSelector=app%3Dfg-web`);
    expect(pods.json.items).toEqual([]);
    const rs = await c.request('GET', `/apis/apps/v1/namespaces/${c.namespace}/replicasets?labelSelector=app%3Dfg-web`);
    expect(rs.json.items).toEqual([]);
  });
});
