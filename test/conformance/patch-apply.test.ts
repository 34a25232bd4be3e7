/**
 * Patches as vnfm sends them: JSON merge, JSON patch, strategic merge for
 * built-in kinds, and server-side apply with field ownership, conflicts
 * and force (change-package applies with the field manager `vnfm`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, deployment, type Cluster } from './cluster.js';

let c: Cluster;
let deployments: string;
let configmaps: string;
const MERGE = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const APPLY = 'application/apply-patch+yaml';

beforeAll(async () => {
  c = await connect('conf-patch');
  deployments = `/apis/apps/v1/namespaces/${c.namespace}/deployments`;
  configmaps = `/api/v1/namespaces/${c.namespace}/configmaps`;
});
afterAll(async () => {
  await c?.close();
});

describe('patch', () => {
  it('merges a JSON merge patch; null removes a key', async () => {
    await c.request('POST', configmaps, { body: { metadata: { name: 'm' }, data: { a: '1', b: '2' } } });
    const r = await c.request('PATCH', `${configmaps}/m`, { body: { data: { a: null, c: '3' } }, contentType: MERGE });
    expect(r.status).toBe(200);
    expect(r.json.data).toEqual({ b: '2', c: '3' });
  });

  it('applies a JSON patch, and refuses one whose test fails', async () => {
    await c.request('POST', configmaps, { body: { metadata: { name: 'j' }, data: { a: '1' } } });
    const ok = await c.request('PATCH', `${configmaps}/j`, {
      body: [
        { op: 'test', path: '/data/a', value: '1' },
        { op: 'add', path: '/data/b', value: '2' },
        { op: 'remove', path: '/data/a' },
      ],
      contentType: JSON_PATCH,
    });
    expect(ok.json.data).toEqual({ b: '2' });
    const bad = await c.request('PATCH', `${configmaps}/j`, { body: [{ op: 'test', path: '/data/b', value: 'x' }], contentType: JSON_PATCH });
    expect(bad.status).toBe(422);
  });

  it('merges containers, ports and env by their keys in a strategic merge patch, patched items first', async () => {
    const d = deployment('smp', 0);
    d.spec.template.spec.containers[0].env = [{ name: 'A', value: '1' }];
    await c.request('POST', deployments, { body: d });
    const r = await c.request('PATCH', `${deployments}/smp`, {
      contentType: STRATEGIC,
      body: {
        spec: {
          template: {
            spec: {
              containers: [
                { name: 'main', env: [{ name: 'B', value: '2' }], ports: [{ containerPort: 8080 }] },
                { name: 'side', image: 'busybox:1.36' },
              ],
            },
          },
        },
      },
    });
    expect(r.status).toBe(200);
    const containers = r.json.spec.template.spec.containers;
    expect(containers.map((x: any) => x.name)).toEqual(['main', 'side']);
    expect(containers[0].image).toBe('nginx:1.27');
    // Without $setElementOrder the patch's items keep the patch's order and
    // come before the items only the server had, unless the live order
    // puts a server-only item before an item both have.
    expect(containers[0].env.map((e: any) => e.name)).toEqual(['B', 'A']);
    expect(containers[0].ports.map((p: any) => p.containerPort)).toEqual([8080, 80]);
    const del = await c.request('PATCH', `${deployments}/smp`, {
      contentType: STRATEGIC,
      body: { spec: { template: { spec: { containers: [{ name: 'side', $patch: 'delete' }] } } } },
    });
    expect(del.json.spec.template.spec.containers.map((x: any) => x.name)).toEqual(['main']);
  });
});

describe('server-side apply', () => {
  const applied = (replicas: number, labels: Record<string, string> = {}): any => {
    const d = deployment('ssa', replicas);
    d.metadata.labels = { app: 'ssa', ...labels };
    return d;
  };

  it('requires a field manager (422 Invalid PatchOptions)', async () => {
    const r = await c.request('PATCH', `${deployments}/ssa`, { body: applied(0), contentType: APPLY });
    expect(r.status).toBe(422);
    expect(r.json).toMatchObject({
      reason: 'Invalid',
      message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      details: { group: 'meta.k8s.io', kind: 'PatchOptions', causes: [{ reason: 'FieldValueRequired', field: 'fieldManager' }] },
    });
  });

  it('creates on first apply and records the manager', async () => {
    const r = await c.request('PATCH', `${deployments}/ssa?fieldManager=vnfm`, { body: applied(0, { owner: 'vnfm' }), contentType: APPLY });
    expect(r.status).toBe(201);
    expect(r.json.metadata.managedFields).toEqual(expect.arrayContaining([expect.objectContaining({ manager: 'vnfm', operation: 'Apply' })]));
  });

  it('updates on re-apply and removes fields the manager no longer applies', async () => {
    const r = await c.request('PATCH', `${deployments}/ssa?fieldManager=vnfm`, { body: applied(1), contentType: APPLY });
    expect(r.status).toBe(200);
    expect(r.json.spec.replicas).toBe(1);
    expect(r.json.metadata.labels.owner).toBeUndefined();
  });

  it('answers 409 when another manager owns a field the apply changes, and force takes it over', async () => {
    const scaled = await c.request('PATCH', `${deployments}/ssa/scale?fieldManager=someone-else`, { body: { spec: { replicas: 2 } }, contentType: MERGE });
    expect(scaled.status).toBe(200);
    const conflict = await c.request('PATCH', `${deployments}/ssa?fieldManager=vnfm`, { body: applied(1), contentType: APPLY });
    expect(conflict.status).toBe(409);
    expect(conflict.json.reason).toBe('Conflict');
    expect(conflict.json.details.causes).toEqual([expect.objectContaining({ reason: 'FieldManagerConflict', field: '.spec.replicas' })]);
    expect(conflict.json.message).toContain('someone-else');

    const same = await c.request('PATCH', `${deployments}/ssa?fieldManager=vnfm`, { body: applied(2), contentType: APPLY });
    expect(same.status).toBe(200);

    const forced = await c.request('PATCH', `${deployments}/ssa?fieldManager=vnfm&force=true`, { body: applied(1), contentType: APPLY });
    expect(forced.status).toBe(200);
    expect(forced.json.spec.replicas).toBe(1);
    const others = forced.json.metadata.managedFields.filter((m: any) => m.manager === 'someone-else');
    expect(JSON.stringify(others)).not.toContain('f:replicas');
  });
});
