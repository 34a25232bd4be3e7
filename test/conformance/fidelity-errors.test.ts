/**
 * The failures a client reads word for word: a malformed JSON body (Go's
 * decoder's words, per handler), a delete whose preconditions no longer
 * hold, a workload without a usable selector (every cause, in order),
 * `/scale` of a missing object or of a kind without it, and the core
 * kinds discovery lists besides the stored ones (bindings,
 * componentstatuses).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, deployment, type Cluster } from './cluster.js';

let c: Cluster;
let ns: string;

beforeAll(async () => {
  c = await connect('conf-fid-err');
  ns = c.namespace;
  const created = await c.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one' }, data: { a: '1' } } });
  expect(created.status, created.text).toBe(201);
});
afterAll(async () => {
  await c?.close();
});

const failure = (r: { status: number; json: any }): unknown => ({ status: r.status, reason: r.json?.reason, message: r.json?.message });

describe('a malformed JSON body', () => {
  const unrecognized = (why: string, quoted: string): string =>
    `the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: ${why} (${quoted})`;

  it.each([
    ['truncated', '{"apiVersion":"v1","kind":"ConfigMap"', unrecognized('unexpected end of JSON input', '{"apiVersion":"v1","kind":"Con ...')],
    ['a value missing', '{"data":{"a":}}', unrecognized("invalid character '}' looking for beginning of value", '{"data":{"a":}}')],
    ['a key without colon', '{"a" 1}', unrecognized("invalid character '1' after object key", '{"a" 1}')],
    ['a list without comma', '{"a":[1 2]}', unrecognized("invalid character '2' after array element", '{"a":[1 2]}')],
    ['a bad literal', '{"a":tru}', unrecognized("invalid character '}' in literal true (expecting 'e')", '{"a":tru}')],
    ['a bad escape', '{"a":"\\q"}', unrecognized("invalid character 'q' in string escape code", '{"a":"\\q"}')],
    ['a bad number', '{"a":-x}', unrecognized("invalid character 'x' in numeric literal", '{"a":-x}')],
    ['something after it', '{"kind":"ConfigMap"} x', unrecognized("invalid character 'x' after top-level value", '{"kind":"ConfigMap"} x')],
    ['empty', '', unrecognized('unexpected end of JSON input', '<empty>')],
    [
      'a list',
      '[1,2]',
      unrecognized(
        'json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }',
        '5b312c325d',
      ),
    ],
  ])('refuses a create with a body %s as the decoder words it', async (_what, body, message) => {
    const r = await c.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body });
    expect(failure(r)).toEqual({ status: 400, reason: 'BadRequest', message });
  });

  it('refuses an update and each kind of patch with the words of its own handler', async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps/one`;
    const update = await c.request('PUT', path, { body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"one"' });
    expect(failure(update)).toEqual({
      status: 400,
      reason: 'BadRequest',
      message:
        'the object provided is unrecognized (must be of type ConfigMap): couldn\'t get version/kind; json parse error: unexpected end of JSON input ({"apiVersion":"v1","kind":"Con ...)',
    });
    const merge = await c.request('PATCH', path, { body: '{"data":{"b":"2"}', contentType: 'application/merge-patch+json' });
    expect(failure(merge)).toEqual({ status: 400, reason: 'BadRequest', message: 'Invalid JSON Patch' });
    const strategic = await c.request('PATCH', path, { body: '{"data":{"b":2,}}', contentType: 'application/strategic-merge-patch+json' });
    expect(failure(strategic)).toEqual({ status: 400, reason: 'BadRequest', message: "invalid character '}' looking for beginning of object key string" });
    const notAMap = await c.request('PATCH', path, { body: '[1]', contentType: 'application/strategic-merge-patch+json' });
    expect(failure(notAMap)).toEqual({ status: 400, reason: 'BadRequest', message: 'json: cannot unmarshal array into Go value of type map[string]interface {}' });
    const json = await c.request('PATCH', path, { body: '[{"op":"add"', contentType: 'application/json-patch+json' });
    expect(failure(json)).toEqual({ status: 400, reason: 'BadRequest', message: 'unexpected end of JSON input' });
  });
});

describe('delete preconditions', () => {
  it("refuses a delete whose uid or resourceVersion is not the object's, naming the object by its kind", async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps/one`;
    const live = (await c.request('GET', path)).json;
    const staleUid = '6a3f3bc4-0000-4000-8000-000000000000';
    const byUid = await c.request('DELETE', path, { body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: staleUid } } });
    expect(failure(byUid)).toEqual({
      status: 409,
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on ConfigMap "one": the UID in the precondition (${staleUid}) does not match the UID in record (${live.metadata.uid}). The object might have been deleted and then recreated`,
    });
    const byVersion = await c.request('DELETE', path, { body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: '1' } } });
    expect(failure(byVersion)).toEqual({
      status: 409,
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on ConfigMap "one": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${live.metadata.resourceVersion}). The object might have been modified`,
    });
    expect((await c.request('GET', path)).status).toBe(200);
  });
});

describe('workload selectors', () => {
  const causes = (r: { json: any }): string[] => (r.json?.details?.causes ?? []).map((x: any) => `${x.field}|${x.reason}|${x.message}`);
  const workload = (kind: string, name: string, selector: object | undefined): object => {
    const d = deployment(name, 1);
    const spec = { ...d.spec, selector };
    if (kind === 'DaemonSet') delete spec.replicas;
    if (kind === 'StatefulSet') spec.serviceName = name;
    return { ...d, kind, spec };
  };
  const post = (kind: string, body: object) => c.request('POST', `/apis/apps/v1/namespaces/${ns}/${kind.toLowerCase()}s?dryRun=All`, { body });
  const EMPTY = 'Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}';

  it.each([
    ['Deployment', ['spec.selector|FieldValueRequired|Required value']],
    ['ReplicaSet', ['spec.selector|FieldValueRequired|Required value']],
    ['StatefulSet', ['spec.selector|FieldValueRequired|Required value']],
    ['DaemonSet', []],
  ])('reports a %s without selector, and its template labels that select nothing', async (kind, first) => {
    const r = await post(kind, workload(kind, 'nosel', undefined));
    expect(r.status).toBe(422);
    expect(causes(r)).toEqual([
      ...first,
      'spec.template.metadata.labels|FieldValueInvalid|Invalid value: map[string]string{"app":"nosel"}: `selector` does not match template `labels`',
    ]);
  });

  it.each([
    ['Deployment', 'deployment'],
    ['ReplicaSet', 'deployment'],
    ['StatefulSet', 'statefulset'],
    ['DaemonSet', 'daemonset'],
  ])('reports a %s with an empty selector, which selects every label', async (kind, word) => {
    const r = await post(kind, workload(kind, 'emptysel', {}));
    expect(r.status).toBe(422);
    expect(causes(r)).toEqual([`spec.selector|FieldValueInvalid|${EMPTY}: empty selector is invalid for ${word}`]);
  });
});

describe('/scale', () => {
  it('names a missing object as each scale handler does', async () => {
    const get = (path: string) => c.request('GET', path);
    expect((await get(`/apis/apps/v1/namespaces/${ns}/deployments/missing/scale`)).json.message).toBe('deployments/scale.apps "missing" not found');
    expect((await get(`/apis/apps/v1/namespaces/${ns}/replicasets/missing/scale`)).json.message).toBe('replicasets/scale.apps "missing" not found');
    expect((await get(`/api/v1/namespaces/${ns}/replicationcontrollers/missing/scale`)).json.message).toBe('replicationcontrollers/scale.autoscaling "missing" not found');
    expect((await get(`/apis/apps/v1/namespaces/${ns}/statefulsets/missing/scale`)).json.message).toBe('statefulsets.apps "missing" not found');
    const patched = await c.request('PATCH', `/apis/apps/v1/namespaces/${ns}/deployments/missing/scale`, {
      body: { spec: { replicas: 1 } },
      contentType: 'application/merge-patch+json',
    });
    expect(failure(patched)).toEqual({ status: 404, reason: 'NotFound', message: 'deployments.apps "missing" not found' });
  });

  it('has no handler for a built-in kind without it', async () => {
    const r = await c.request('GET', `/api/v1/namespaces/${ns}/configmaps/one/scale`);
    expect(failure(r)).toEqual({ status: 404, reason: 'NotFound', message: 'the server could not find the requested resource' });
  });
});

describe('bindings and componentstatuses', () => {
  it('lists both in core discovery, as the API server does', async () => {
    const core = await c.request('GET', '/api/v1');
    const entry = (name: string) => {
      const r = core.json.resources.find((x: any) => x.name === name);
      return r && { kind: r.kind, namespaced: r.namespaced, verbs: [...r.verbs].sort(), shortNames: r.shortNames };
    };
    expect(entry('bindings')).toEqual({ kind: 'Binding', namespaced: true, verbs: ['create'], shortNames: undefined });
    expect(entry('componentstatuses')).toEqual({ kind: 'ComponentStatus', namespaced: false, verbs: ['get', 'list'], shortNames: ['cs'] });
  });

  it('lists the control plane components, and binds a pod through bindings', async () => {
    const statuses = await c.request('GET', '/api/v1/componentstatuses');
    expect(statuses.status).toBe(200);
    expect(statuses.json.kind).toBe('ComponentStatusList');
    expect(statuses.json.items.map((i: any) => i.metadata.name).sort()).toEqual(['controller-manager', 'etcd-0', 'scheduler']);
    const base = `/api/v1/namespaces/${ns}`;
    const created = await c.request('POST', `${base}/pods`, {
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'bind-old' },
        spec: { schedulerName: 'conformance-scheduler', containers: [{ name: 'main', image: 'nginx:1.27' }] },
      },
    });
    expect(created.status, created.text).toBe(201);
    const bound = await c.request('POST', `${base}/bindings`, {
      body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'bind-old' }, target: { apiVersion: 'v1', kind: 'Node', name: 'conformance-node-a' } },
    });
    expect(bound.status, bound.text).toBe(201);
    expect((await c.request('GET', `${base}/pods/bind-old`)).json.spec.nodeName).toBe('conformance-node-a');
    await c.request('DELETE', `${base}/pods/bind-old?gracePeriodSeconds=0`);
  });
});
