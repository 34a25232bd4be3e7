/**
 * CustomResourceDefinitions and custom resources, as vnfm relies on them
 * for CNFs made of any kind (Cluster API first): a CRD becomes Established
 * and appears in discovery for every served version; its kind gets CRUD,
 * selectors, watch, /status and /scale (autoscaling/v1 Scale from the
 * CRD's paths), generation, structural-schema defaults, pruning and 422
 * validation, merge patches and server-side apply (no strategic merge);
 * deleting the CRD deletes its objects and stops serving the kind.
 *
 * Each run uses its own API group, so it can run against a shared cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGGREGATED_DISCOVERY_V2, atLeast, connect, hasCondition, JSON_NOT_FOUND_FOR_UNKNOWN_GROUPS, type Cluster } from './cluster.js';

let c: Cluster;
let group: string;
let widgets: string;
let gadgets: string;
/** A resourceVersion from before this file's CRDs existed. */
let beforeCrds: string;
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const MERGE = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const APPLY = 'application/apply-patch+yaml';
const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

const widgetSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'string', enum: ['small', 'large'] },
        replicas: { type: 'integer', minimum: 0, maximum: 10, default: 1 },
        color: { type: 'string', pattern: '^[a-z]+$', default: 'blue' },
        selector: { type: 'object', additionalProperties: { type: 'string' } },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
    status: {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        selector: { type: 'string' },
        phase: { type: 'string' },
      },
    },
  },
};

function widgetCrd(): any {
  const subresources = { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        { name: 'v1beta1', served: true, storage: false, schema: { openAPIV3Schema: widgetSchema }, subresources },
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: widgetSchema },
          subresources,
          additionalPrinterColumns: [{ name: 'Phase', type: 'string', jsonPath: '.status.phase' }],
        },
      ],
    },
  };
}

function gadgetCrd(): any {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `gadgets.${group}` },
    spec: {
      group,
      scope: 'Cluster',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
}

function widget(name: string, spec: Record<string, unknown> = { size: 'small' }, labels?: Record<string, string>): any {
  return { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name, ...(labels ? { labels } : {}) }, spec };
}

async function establish(crd: any): Promise<any> {
  const r = await c.request('POST', CRDS, { body: crd });
  expect(r.status, r.text).toBe(201);
  return c.waitFor(CRDS, crd.metadata.name, (o) => hasCondition(o, 'Established'));
}

beforeAll(async () => {
  c = await connect('conf-crd');
  group = `${c.namespace}.conformance.vnfm.io`;
  widgets = `/apis/${group}/v1/namespaces/${c.namespace}/widgets`;
  gadgets = `/apis/${group}/v1/gadgets`;
  beforeCrds = (await c.request('GET', `/api/v1/namespaces/${c.namespace}/configmaps`)).json.metadata.resourceVersion;
});
afterAll(async () => {
  if (c) {
    await c.request('DELETE', `${CRDS}/widgets.${group}`);
    await c.request('DELETE', `${CRDS}/gadgets.${group}`);
  }
  await c?.close();
});

describe('CustomResourceDefinition', () => {
  it('answers 404 for a custom resource before its CRD exists (plain text before Kubernetes 1.38)', async () => {
    const r = await c.request('POST', widgets, { body: widget('early') });
    expect(r.status).toBe(404);
    if (atLeast(c.version, ...JSON_NOT_FOUND_FOR_UNKNOWN_GROUPS)) {
      expect(r.json).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
    } else {
      expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(r.text).toBe('404 page not found\n');
    }
  });

  it('refuses a CRD whose name is not plural.group, or without a storage version', async () => {
    const badName = widgetCrd();
    badName.metadata.name = `things.${group}`;
    const r = await c.request('POST', CRDS, { body: badName });
    expect(r.status).toBe(422);
    expect(r.json.message).toContain('metadata.name');
    const noStorage = widgetCrd();
    for (const v of noStorage.spec.versions) v.storage = false;
    const r2 = await c.request('POST', CRDS, { body: noStorage });
    expect(r2.status).toBe(422);
    expect(r2.json.message).toContain('must have exactly one version marked as storage version');
  });

  it('becomes Established with its names accepted and its storage version recorded', async () => {
    const crd = await establish(widgetCrd());
    expect(hasCondition(crd, 'NamesAccepted')).toBe(true);
    expect(crd.status.acceptedNames).toMatchObject({ plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' });
    expect(crd.status.storedVersions).toEqual(['v1']);
    expect(crd.spec.conversion).toEqual({ strategy: 'None' });
    await establish(gadgetCrd());
  });

  it('appears in discovery for every served version, the GA version preferred', async () => {
    const groups = await c.request('GET', '/apis');
    const entry = groups.json.groups.find((g: any) => g.name === group);
    expect(entry.versions.map((v: any) => v.version)).toEqual(['v1', 'v1beta1']);
    expect(entry.preferredVersion).toEqual({ groupVersion: `${group}/v1`, version: 'v1' });
    expect((await c.request('GET', `/apis/${group}`)).json.preferredVersion.version).toBe('v1');
    const list = await c.request('GET', `/apis/${group}/v1`);
    const byName = new Map(list.json.resources.map((r: any) => [r.name, r]));
    expect(byName.get('widgets')).toMatchObject({ kind: 'Widget', namespaced: true, singularName: 'widget' });
    expect((byName.get('widgets') as any).verbs).toEqual(expect.arrayContaining(['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']));
    expect(byName.get('widgets/status')).toMatchObject({ kind: 'Widget' });
    expect(byName.get('widgets/scale')).toMatchObject({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
    expect(byName.get('gadgets')).toMatchObject({ kind: 'Gadget', namespaced: false });
    expect((await c.request('GET', `/apis/${group}/v1beta1`)).json.resources.map((r: any) => r.name)).toContain('widgets');

    const aggregated = await c.request('GET', '/apis', { accept: AGGREGATED });
    if (!atLeast(c.version, ...AGGREGATED_DISCOVERY_V2)) {
      // No apidiscovery.k8s.io/v2 yet: the Accept header's fallback, the plain group list.
      expect(aggregated.json.kind).toBe('APIGroupList');
      expect(aggregated.json.groups.map((g: any) => g.name)).toContain(group);
      return;
    }
    expect(aggregated.headers['content-type']).toMatch(/^application\/json;g=apidiscovery\.k8s\.io;v=v2;as=APIGroupDiscoveryList/);
    const item = aggregated.json.items.find((i: any) => i.metadata.name === group);
    expect(item.versions.map((v: any) => v.version)).toEqual(['v1', 'v1beta1']);
    const res = item.versions[0].resources.find((r: any) => r.resource === 'widgets');
    expect(res.scope).toBe('Namespaced');
    expect(res.subresources.map((s: any) => s.subresource).sort()).toEqual(['scale', 'status']);
  });
});

describe('custom resources', () => {
  it('creates, reads, replaces, lists by label and deletes', async () => {
    const created = await c.request('POST', widgets, { body: widget('crud', { size: 'small' }, { tier: 'a' }) });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({ apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'crud', namespace: c.namespace, generation: 1 } });
    await c.request('POST', widgets, { body: widget('other', { size: 'large' }, { tier: 'b' }) });
    const got = await c.request('GET', `${widgets}/crud`);
    expect(got.json.spec.size).toBe('small');
    const replaced = await c.request('PUT', `${widgets}/crud`, { body: { ...got.json, spec: { ...got.json.spec, size: 'large' } } });
    expect(replaced.status).toBe(200);
    expect(replaced.json.metadata.generation).toBe(2);
    const list = await c.request('GET', `${widgets}?labelSelector=tier%3Da`);
    expect(list.json.kind).toBe('WidgetList');
    expect(list.json.items.map((i: any) => i.metadata.name)).toEqual(['crud']);
    const stale = await c.request('PUT', `${widgets}/crud`, { body: got.json });
    expect(stale.status).toBe(409);
    expect((await c.request('DELETE', `${widgets}/crud`)).status).toBe(200);
    expect((await c.request('GET', `${widgets}/crud`)).status).toBe(404);
  });

  it('serves one object through every served version, only apiVersion differing', async () => {
    await c.request('POST', widgets, { body: widget('versions', { size: 'small', replicas: 2 }) });
    const v1 = await c.request('GET', `${widgets}/versions`);
    const beta = await c.request('GET', `/apis/${group}/v1beta1/namespaces/${c.namespace}/widgets/versions`);
    expect(beta.json.apiVersion).toBe(`${group}/v1beta1`);
    expect(beta.json.spec).toEqual(v1.json.spec);
    expect(beta.json.metadata.uid).toBe(v1.json.metadata.uid);
  });

  it('fills defaults and prunes unknown fields, keeping those under x-kubernetes-preserve-unknown-fields', async () => {
    const r = await c.request('POST', widgets, { body: widget('defaults', { size: 'small', unknown: 1, extra: { anything: { goes: true } } }) });
    expect(r.status, r.text).toBe(201);
    expect(r.json.spec).toEqual({ size: 'small', replicas: 1, color: 'blue', extra: { anything: { goes: true } } });
    expect(r.json.metadata.name).toBe('defaults');
  });

  it('answers 422 Invalid with the field and the rule broken', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ size: 'small', replicas: 'three' }, 'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"'],
      [{ replicas: 1 }, 'spec.size: Required value'],
      [{ size: 'huge' }, 'spec.size: Unsupported value: "huge": supported values: "small", "large"'],
      [{ size: 'small', replicas: 11 }, 'spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10'],
      [{ size: 'small', replicas: -1 }, 'spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0'],
      [{ size: 'small', color: 'Blue!' }, `spec.color: Invalid value: "Blue!": spec.color in body should match '^[a-z]+$'`],
    ];
    for (const [spec, message] of cases) {
      const r = await c.request('POST', widgets, { body: widget('invalid', spec) });
      expect(r.status, JSON.stringify(spec)).toBe(422);
      expect(r.json.reason).toBe('Invalid');
      expect(r.json.message).toContain(`Widget.${group} "invalid" is invalid: `);
      expect(r.json.message).toContain(message);
      expect(r.json.details).toMatchObject({ name: 'invalid', group, kind: 'Widget' });
    }
  });

  it('keeps status out of create and main-resource updates; /status writes only status', async () => {
    const created = await c.request('POST', widgets, { body: { ...widget('status'), status: { phase: 'Forged' } } });
    expect(created.json.status).toBeUndefined();
    const st = await c.request('PUT', `${widgets}/status/status`, { body: { ...created.json, spec: { size: 'large' }, status: { phase: 'Ready', replicas: 1 } } });
    expect(st.status, st.text).toBe(200);
    expect(st.json.status).toEqual({ phase: 'Ready', replicas: 1 });
    expect(st.json.spec.size).toBe('small');
    expect(st.json.metadata.generation).toBe(1);
    const main = await c.request('PATCH', `${widgets}/status`, { body: { spec: { size: 'large' }, status: { phase: 'Changed' } }, contentType: MERGE });
    expect(main.json.status.phase).toBe('Ready');
    expect(main.json.metadata.generation).toBe(2);
    const patched = await c.request('PATCH', `${widgets}/status/status`, { body: { status: { phase: 'Done' } }, contentType: MERGE });
    expect(patched.json.status).toEqual({ phase: 'Done', replicas: 1 });
  });

  it('serves /scale as autoscaling/v1 Scale from the CRD paths', async () => {
    await c.request('POST', widgets, { body: widget('scaled', { size: 'small', replicas: 2 }) });
    await c.request('PATCH', `${widgets}/scaled/status`, { body: { status: { replicas: 2, selector: 'app=scaled' } }, contentType: MERGE });
    const scale = await c.request('GET', `${widgets}/scaled/scale`);
    expect(scale.json).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name: 'scaled', namespace: c.namespace },
      spec: { replicas: 2 },
      status: { replicas: 2, selector: 'app=scaled' },
    });
    const patched = await c.request('PATCH', `${widgets}/scaled/scale`, { body: { spec: { replicas: 3 } }, contentType: MERGE });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json.spec.replicas).toBe(3);
    const put = await c.request('PUT', `${widgets}/scaled/scale`, { body: { ...patched.json, spec: { replicas: 4 } } });
    expect(put.json.spec.replicas).toBe(4);
    const obj = await c.request('GET', `${widgets}/scaled`);
    expect(obj.json.spec.replicas).toBe(4);
    expect(obj.json.metadata.generation).toBe(3);
    const tooMany = await c.request('PATCH', `${widgets}/scaled/scale`, { body: { spec: { replicas: 11 } }, contentType: MERGE });
    expect(tooMany.status).toBe(422);
  });

  it('accepts merge patches and server-side apply, refuses strategic merge patches (415)', async () => {
    await c.request('POST', widgets, { body: widget('patched') });
    const smp = await c.request('PATCH', `${widgets}/patched`, { body: { spec: { color: 'red' } }, contentType: STRATEGIC });
    expect(smp.status).toBe(415);
    const merge = await c.request('PATCH', `${widgets}/patched`, { body: { spec: { color: 'red' } }, contentType: MERGE });
    expect(merge.json.spec.color).toBe('red');
    const applied = await c.request('PATCH', `${widgets}/applied?fieldManager=vnfm`, {
      body: JSON.stringify(widget('applied', { size: 'large', replicas: 2 })),
      contentType: APPLY,
    });
    expect(applied.status, applied.text).toBe(201);
    expect(applied.json.spec).toMatchObject({ size: 'large', replicas: 2, color: 'blue' });
    const again = await c.request('PATCH', `${widgets}/applied?fieldManager=vnfm`, { body: JSON.stringify(widget('applied', { size: 'large', replicas: 5 })), contentType: APPLY });
    expect(again.status).toBe(200);
    expect(again.json.spec.replicas).toBe(5);
    expect(again.json.metadata.managedFields.some((m: any) => m.manager === 'vnfm' && m.operation === 'Apply')).toBe(true);
  });

  it('streams changes to watchers, with label selectors', async () => {
    const first = await c.request('POST', widgets, { body: widget('watched', { size: 'small' }, { watch: 'me' }) });
    const seen = c.watch(widgets, { labelSelector: 'watch=me', resourceVersion: first.json.metadata.resourceVersion }, (e) => e.type === 'DELETED');
    await c.request('POST', widgets, { body: widget('unwatched', { size: 'small' }) });
    await c.request('PATCH', `${widgets}/watched`, { body: { spec: { size: 'large' } }, contentType: MERGE });
    await c.request('DELETE', `${widgets}/watched`);
    const events = await seen;
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['MODIFIED', 'watched'],
      ['DELETED', 'watched'],
    ]);
    expect(events[0]!.object).toMatchObject({ apiVersion: `${group}/v1`, kind: 'Widget', spec: { size: 'large' } });
  });

  it('answers a watch from a resourceVersion older than the kind with an ERROR event carrying 410 Expired', async () => {
    // A kind's watch history starts when its CRD is served: a version from
    // before is too old on any server, however young (built-in kinds of a
    // server that came up on an empty etcd may still replay from version 1).
    for (const from of ['1', beforeCrds]) {
      const events = await c.watch(widgets, { resourceVersion: from }, (e) => e.type === 'ERROR');
      expect(events.map((e) => e.type)).toEqual(['ERROR']);
      expect(events[0]!.object).toMatchObject({ kind: 'Status', status: 'Failure', code: 410, reason: 'Expired' });
      expect(events[0]!.object.message).toMatch(new RegExp(`^too old resource version: ${from} \\(\\d+\\)$`));
    }
  });

  it("keeps a kind's watch history across deletions of its objects: a watch resumes from before them", async () => {
    const from = (await c.request('POST', widgets, { body: widget('gone-1', { size: 'small' }) })).json.metadata.resourceVersion;
    await c.request('POST', widgets, { body: widget('gone-2', { size: 'small' }) });
    await c.request('DELETE', `${widgets}/gone-1`);
    await c.request('DELETE', `${widgets}/gone-2`);
    const events = await c.watch(widgets, { resourceVersion: from }, (e) => e.type === 'ERROR' || (e.type === 'DELETED' && e.object.metadata.name === 'gone-2'));
    expect(events.map((e) => [e.type, e.object.metadata?.name])).toEqual([
      ['ADDED', 'gone-2'],
      ['DELETED', 'gone-1'],
      ['DELETED', 'gone-2'],
    ]);
  });

  it('serves cluster-scoped custom resources without a namespace', async () => {
    const r = await c.request('POST', gadgets, { body: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'g1' }, anything: { at: 'all' } } });
    expect(r.status, r.text).toBe(201);
    expect(r.json.metadata.namespace).toBeUndefined();
    expect(r.json.anything).toEqual({ at: 'all' });
    expect((await c.request('GET', `/apis/${group}/v1/namespaces/${c.namespace}/gadgets/g1`)).status).toBe(404);
  });
});

describe('deleting a CRD', () => {
  it('deletes its custom resources, then stops serving the kind', async () => {
    const name = `gadgets.${group}`;
    await c.request('POST', gadgets, { body: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'g2' } } });
    expect((await c.request('GET', gadgets)).json.items.length).toBe(2);
    const deleted = await c.request('DELETE', `${CRDS}/${name}`);
    expect(deleted.status).toBe(200);
    await c.waitForGone(CRDS, name);
    // The real API server stops serving the kind a moment after the CRD is gone (its handler follows the CRD informer).
    let served = await c.request('GET', gadgets);
    for (const until = Date.now() + 10_000; served.status !== 404 && Date.now() < until; served = await c.request('GET', gadgets)) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(served.status).toBe(404);
    const list = await c.request('GET', `/apis/${group}/v1`);
    expect(list.json.resources.map((r: any) => r.name)).not.toContain('gadgets');
    // A CRD of the same name starts empty.
    await establish(gadgetCrd());
    expect((await c.request('GET', gadgets)).json.items).toEqual([]);
  });
});
