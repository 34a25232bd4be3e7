/**
 * What a real API server answers that clients read closely: Table layouts
 * with wide columns and `includeObject`, `remainingItemCount` and
 * `continue` as it counts them, the conditions the namespace controller
 * sets while it empties a namespace, and server-side apply of a custom
 * resource with fields its schema does not declare (a 500, where a create
 * prunes them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, deployment, type Cluster } from './cluster.js';

let c: Cluster;
let ns: string;

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

beforeAll(async () => {
  c = await connect('conf-fid-api');
  ns = c.namespace;
});
afterAll(async () => {
  await c?.close();
});

describe('Tables', () => {
  it('lays pod columns out as kubectl get -o wide shows them, with the object when asked', async () => {
    const created = await c.request('POST', `/api/v1/namespaces/${ns}/pods`, {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'table' }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } },
    });
    expect(created.status).toBe(201);
    const r = await c.request('GET', `/api/v1/namespaces/${ns}/pods?includeObject=Object`, { accept: TABLE });
    expect(r.status).toBe(200);
    expect(r.json.columnDefinitions.map((d: any) => [d.name, d.priority, d.type])).toEqual([
      ['Name', 0, 'string'],
      ['Ready', 0, 'string'],
      ['Status', 0, 'string'],
      ['Restarts', 0, 'string'],
      ['Age', 0, 'string'],
      ['IP', 1, 'string'],
      ['Node', 1, 'string'],
      ['Nominated Node', 1, 'string'],
      ['Readiness Gates', 1, 'string'],
    ]);
    const row = r.json.rows.find((x: any) => x.cells[0] === 'table');
    expect(row.cells).toHaveLength(9);
    expect(row.cells[1]).toMatch(/^[01]\/1$/);
    expect(row.cells[3]).toBe('0');
    expect(row.cells[7]).toBe('<none>');
    expect(row.cells[8]).toBe('<none>');
    expect(row.object).toMatchObject({ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'table' }, spec: { containers: [{ name: 'main' }] } });
    const none = await c.request('GET', `/api/v1/namespaces/${ns}/pods/table?includeObject=None`, { accept: TABLE });
    expect(none.json.rows[0].object).toBeNull();
    const meta = await c.request('GET', `/api/v1/namespaces/${ns}/pods/table`, { accept: TABLE });
    expect(meta.json.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'table' } });
    expect(meta.json.rows[0].object.spec).toBeUndefined();
    await c.request('DELETE', `/api/v1/namespaces/${ns}/pods/table?gracePeriodSeconds=0`);
  });

  it('puts the wide columns of workloads after Age', async () => {
    const created = await c.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: deployment('wide', 0) });
    expect(created.status).toBe(201);
    const r = await c.request('GET', `/apis/apps/v1/namespaces/${ns}/deployments`, { accept: TABLE });
    expect(r.json.columnDefinitions.map((d: any) => (d.priority ? `${d.name}*` : d.name))).toEqual([
      'Name',
      'Ready',
      'Up-to-date',
      'Available',
      'Age',
      'Containers*',
      'Images*',
      'Selector*',
    ]);
    const row = r.json.rows.find((x: any) => x.cells[0] === 'wide');
    expect(row.cells.slice(5)).toEqual(['main', 'nginx:1.27', 'app=wide']);
    for (const [path, names] of [
      [`/apis/apps/v1/namespaces/${ns}/replicasets`, ['Name', 'Desired', 'Current', 'Ready', 'Age', 'Containers*', 'Images*', 'Selector*']],
      [`/apis/apps/v1/namespaces/${ns}/statefulsets`, ['Name', 'Ready', 'Age', 'Containers*', 'Images*']],
      [`/apis/batch/v1/namespaces/${ns}/cronjobs`, ['Name', 'Schedule', 'Suspend', 'Active', 'Last Schedule', 'Age', 'Containers*', 'Images*', 'Selector*']],
      [`/api/v1/namespaces/${ns}/replicationcontrollers`, ['Name', 'Desired', 'Current', 'Ready', 'Age', 'Containers*', 'Images*', 'Selector*']],
      ['/api/v1/nodes', ['Name', 'Status', 'Roles', 'Age', 'Version', 'Internal-IP*', 'External-IP*', 'OS-Image*', 'Kernel-Version*', 'Container-Runtime*']],
      [`/api/v1/namespaces/${ns}/services`, ['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age', 'Selector*']],
    ] as const) {
      const t = await c.request('GET', path, { accept: TABLE });
      expect(
        t.json.columnDefinitions.map((d: any) => (d.priority ? `${d.name}*` : d.name)),
        path,
      ).toEqual(names);
    }
  });
});

describe('ServiceAccount admission', () => {
  it('mounts the service account token volume into every container of a new pod, unless it opts out', async () => {
    const base = `/api/v1/namespaces/${ns}/pods`;
    const mounted = await c.request('POST', base, {
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'sa-mounted' },
        spec: { initContainers: [{ name: 'init', image: 'busybox:1.36' }], containers: [{ name: 'main', image: 'nginx:1.27' }] },
      },
    });
    expect(mounted.status, mounted.text).toBe(201);
    const volume = mounted.json.spec.volumes.find((v: any) => v.name.startsWith('kube-api-access-'));
    expect(volume.name).toMatch(/^kube-api-access-[a-z0-9]{5}$/);
    expect(volume.projected.defaultMode).toBe(420);
    expect(volume.projected.sources.map((x: any) => Object.keys(x)[0])).toEqual(['serviceAccountToken', 'configMap', 'downwardAPI']);
    for (const c0 of [...mounted.json.spec.initContainers, ...mounted.json.spec.containers]) {
      expect(c0.volumeMounts).toEqual([{ name: volume.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
    }
    const optedOut = await c.request('POST', base, {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'sa-none' }, spec: { automountServiceAccountToken: false, containers: [{ name: 'main', image: 'nginx:1.27' }] } },
    });
    expect(optedOut.status).toBe(201);
    expect(optedOut.json.spec.volumes).toBeUndefined();
    expect(optedOut.json.spec.containers[0].volumeMounts).toBeUndefined();
    for (const name of ['sa-mounted', 'sa-none']) await c.request('DELETE', `${base}/${name}?gracePeriodSeconds=0`);
  });

  it("refuses a pod whose ServiceAccount does not exist, and follows the ServiceAccount's own opt-out", async () => {
    const base = `/api/v1/namespaces/${ns}/pods`;
    const ghost = await c.request('POST', base, {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'ghost-' }, spec: { serviceAccountName: 'ghost', containers: [{ name: 'main', image: 'nginx:1.27' }] } },
    });
    expect(ghost.status).toBe(403);
    expect(ghost.json).toMatchObject({
      reason: 'Forbidden',
      message: `pods "ghost-" is forbidden: error looking up service account ${ns}/ghost: serviceaccount "ghost" not found`,
      details: { name: 'ghost-', kind: 'pods' },
    });
    const sa = await c.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'quiet' }, automountServiceAccountToken: false },
    });
    expect(sa.status).toBe(201);
    const quiet = await c.request('POST', base, {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'sa-quiet' }, spec: { serviceAccountName: 'quiet', containers: [{ name: 'main', image: 'nginx:1.27' }] } },
    });
    expect(quiet.status, quiet.text).toBe(201);
    expect(quiet.json.spec.volumes).toBeUndefined();
    await c.request('DELETE', `${base}/sa-quiet?gracePeriodSeconds=0`);
  });
});

describe('pods/binding', () => {
  it('binds a pod to a node once, as a scheduler does', async () => {
    const core = await c.request('GET', '/api/v1');
    expect(core.json.resources.find((r: any) => r.name === 'pods/binding')).toMatchObject({ kind: 'Binding', namespaced: true, verbs: ['create'] });
    const base = `/api/v1/namespaces/${ns}/pods`;
    // A scheduler nobody runs here: the pod waits for this test to bind it.
    const created = await c.request('POST', base, {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bind-me' }, spec: { schedulerName: 'conformance-scheduler', containers: [{ name: 'main', image: 'nginx:1.27' }] } },
    });
    expect(created.status, created.text).toBe(201);
    const binding = (node: string): object => ({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'bind-me' }, target: { apiVersion: 'v1', kind: 'Node', name: node } });
    const bound = await c.request('POST', `${base}/bind-me/binding`, { body: binding('conformance-node-a') });
    expect(bound.status, bound.text).toBe(201);
    expect(bound.json).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    const pod = await c.request('GET', `${base}/bind-me`);
    expect(pod.json.spec.nodeName).toBe('conformance-node-a');
    expect(pod.json.status.conditions).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'PodScheduled', status: 'True' })]));
    const again = await c.request('POST', `${base}/bind-me/binding`, { body: binding('conformance-node-b') });
    expect(again.status).toBe(409);
    expect(again.json.message).toBe('Operation cannot be fulfilled on pods/binding "bind-me": pod bind-me is already assigned to node "conformance-node-a"');
    const missing = await c.request('POST', `${base}/nobody/binding`, { body: { ...binding('conformance-node-a'), metadata: { name: 'nobody' } } });
    expect(missing.status).toBe(404);
    expect(missing.json.message).toBe('pods "nobody" not found');
    await c.request('DELETE', `${base}/bind-me?gracePeriodSeconds=0`);
  });
});

describe('OpenAPI v2', () => {
  it('serves the definitions of the built-in kinds in JSON', async () => {
    const r = await c.request('GET', '/openapi/v2');
    expect(r.status).toBe(200);
    expect(r.json.swagger).toBe('2.0');
    const deployment = r.json.definitions['io.k8s.api.apps.v1.Deployment'];
    expect(deployment['x-kubernetes-group-version-kind']).toEqual([{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
    expect(Object.keys(deployment.properties)).toEqual(expect.arrayContaining(['apiVersion', 'kind', 'metadata', 'spec', 'status']));
    expect(r.json.definitions['io.k8s.api.core.v1.ConfigMap']['x-kubernetes-group-version-kind']).toEqual([{ group: '', kind: 'ConfigMap', version: 'v1' }]);
  });
});

describe('pagination', () => {
  it('counts the remaining items of an unfiltered list, not of a filtered one', async () => {
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    for (const i of [1, 2, 3, 4]) {
      expect((await c.request('POST', base, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `page-${i}`, labels: { page: 'yes' } } } })).status).toBe(201);
    }
    // kube-root-ca.crt is there too: five in all.
    const first = await c.request('GET', `${base}?limit=2`);
    expect(first.json.items.map((i: any) => i.metadata.name)).toEqual(['kube-root-ca.crt', 'page-1']);
    expect(first.json.metadata.remainingItemCount).toBe(3);
    const token = JSON.parse(Buffer.from(first.json.metadata.continue, 'base64').toString('utf8'));
    expect(token).toMatchObject({ v: 'meta.k8s.io/v1', start: 'page-1\u0000' });
    const second = await c.request('GET', `${base}?limit=2&continue=${encodeURIComponent(first.json.metadata.continue)}`);
    expect(second.json.items.map((i: any) => i.metadata.name)).toEqual(['page-2', 'page-3']);
    expect(second.json.metadata.remainingItemCount).toBe(1);
    const last = await c.request('GET', `${base}?limit=2&continue=${encodeURIComponent(second.json.metadata.continue)}`);
    expect(last.json.items.map((i: any) => i.metadata.name)).toEqual(['page-4']);
    expect(last.json.metadata.continue).toBeUndefined();
    expect(last.json.metadata.remainingItemCount).toBeUndefined();

    const filtered = await c.request('GET', `${base}?limit=2&labelSelector=page`);
    expect(filtered.json.items.map((i: any) => i.metadata.name)).toEqual(['page-1', 'page-2']);
    expect(filtered.json.metadata.continue).toEqual(expect.any(String));
    expect(filtered.json.metadata.remainingItemCount).toBeUndefined();

    const table = await c.request('GET', `${base}?limit=2`, { accept: TABLE });
    expect(table.json.metadata).toMatchObject({ remainingItemCount: 3, continue: expect.any(String) });
  });
});

describe('namespace deletion', () => {
  it('reports what keeps a terminating namespace in its conditions, as the namespace controller does', async () => {
    const name = `${ns}-held`;
    expect((await c.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } })).status).toBe(201);
    const held = await c.request('POST', `/api/v1/namespaces/${name}/configmaps`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', finalizers: ['example.com/hold'] } },
    });
    expect(held.status).toBe(201);
    expect((await c.request('DELETE', `/api/v1/namespaces/${name}`)).status).toBe(200);
    const terminating = await c.waitFor('/api/v1/namespaces', name, (o) => (o.status?.conditions ?? []).some((x: any) => x.type === 'NamespaceFinalizersRemaining'));
    const byType = Object.fromEntries(terminating.status.conditions.map((x: any) => [x.type, x]));
    expect(byType['NamespaceDeletionDiscoveryFailure']).toMatchObject({ status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' });
    expect(byType['NamespaceDeletionGroupVersionParsingFailure']).toMatchObject({
      status: 'False',
      reason: 'ParsedGroupVersions',
      message: 'All legacy kube types successfully parsed',
    });
    expect(byType['NamespaceDeletionContentFailure']).toMatchObject({
      status: 'False',
      reason: 'ContentDeleted',
      message: 'All content successfully deleted, may be waiting on finalization',
    });
    expect(byType['NamespaceContentRemaining']).toMatchObject({
      status: 'True',
      reason: 'SomeResourcesRemain',
      message: 'Some resources are remaining: configmaps. has 1 resource instances',
    });
    expect(byType['NamespaceFinalizersRemaining']).toMatchObject({
      status: 'True',
      reason: 'SomeFinalizersRemain',
      message: 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
    });
    expect(terminating.status.phase).toBe('Terminating');
    const released = await c.request('PATCH', `/api/v1/namespaces/${name}/configmaps/held`, {
      body: { metadata: { finalizers: null } },
      contentType: 'application/merge-patch+json',
    });
    expect(released.status).toBe(200);
    await c.waitForGone('/api/v1/namespaces', name, 30_000);
  });
});

describe('server-side apply of a custom resource', () => {
  it('answers 500 for fields the schema does not declare, where a create prunes them', async () => {
    const group = `${ns}.example.com`;
    const crdName = `gadgets.${group}`;
    const crd = await c.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: crdName },
        spec: {
          group,
          names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
          scope: 'Namespaced',
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } },
            },
          ],
        },
      },
    });
    expect(crd.status, crd.text).toBe(201);
    try {
      await c.waitFor('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crdName, (o) =>
        (o.status?.conditions ?? []).some((x: any) => x.type === 'Established' && x.status === 'True'),
      );
      const base = `/apis/${group}/v1/namespaces/${ns}/gadgets`;
      // Discovery may lag the Established condition by a moment.
      let created: any;
      for (let i = 0; i < 50; i++) {
        created = await c.request('POST', base, { body: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'pruned' }, spec: { size: 1, color: 'red' } } });
        if (created.status !== 404) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(created.status, created.text).toBe(201);
      expect(created.json.spec).toEqual({ size: 1 });
      const applied = await c.request('PATCH', `${base}/applied?fieldManager=conformance`, {
        body: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'applied' }, spec: { size: 1, color: 'red' } },
        contentType: 'application/apply-patch+yaml',
      });
      expect(applied.status).toBe(500);
      expect(applied.json).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `failed to create typed patch object (/applied; ${group}/v1, Kind=Gadget): .spec.color: field not declared in schema`,
        code: 500,
      });
      expect((await c.request('GET', `${base}/applied`)).status).toBe(404);

      // kubectl explain finds the kind's schema in the group version's OpenAPI v3 document.
      const index = await c.request('GET', '/openapi/v3');
      const entry = index.json.paths[`apis/${group}/v1`];
      expect(entry?.serverRelativeURL, JSON.stringify(Object.keys(index.json.paths))).toEqual(expect.any(String));
      const doc = await c.request('GET', entry.serverRelativeURL);
      expect(doc.status).toBe(200);
      const schemas = Object.values(doc.json.components.schemas) as any[];
      const gadget = schemas.find((x) => (x['x-kubernetes-group-version-kind'] ?? []).some((g: any) => g.kind === 'Gadget' && g.group === group && g.version === 'v1'));
      expect(gadget?.properties?.spec?.properties?.size).toMatchObject({ type: 'integer' });
      expect(Object.keys(gadget.properties)).toEqual(expect.arrayContaining(['apiVersion', 'kind', 'metadata', 'spec']));
      const declared = await c.request('PATCH', `${base}/applied?fieldManager=conformance`, {
        body: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'applied' }, spec: { size: 2 } },
        contentType: 'application/apply-patch+yaml',
      });
      expect(declared.status).toBe(201);
    } finally {
      await c.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`);
    }
  });
});
