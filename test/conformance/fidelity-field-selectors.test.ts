/**
 * Field selectors as a real API server serves them: the fields each kind
 * supports (metadata.name and metadata.namespace for all; pods, events,
 * secrets, namespaces, nodes, jobs have their own), the 400 for a field a
 * kind does not support (in both of the API server's wordings), and the
 * selector syntax errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Cluster } from './cluster.js';

let c: Cluster;
let ns: string;

beforeAll(async () => {
  c = await connect('conf-fid-fields');
  ns = c.namespace;
  const pod = (name: string, extra: Record<string, unknown>): object => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'main', image: 'nginx:1.27' }], ...extra },
  });
  for (const body of [pod('always', {}), pod('never', { restartPolicy: 'Never', schedulerName: 'other-scheduler' })]) {
    const r = await c.request('POST', `/api/v1/namespaces/${ns}/pods`, { body });
    if (r.status !== 201) throw new Error(r.text);
  }
  for (const [name, type] of [
    ['opaque', 'Opaque'],
    ['tls', 'kubernetes.io/tls'],
  ] as const) {
    const data = type === 'Opaque' ? { a: 'MQ==' } : { 'tls.crt': 'MQ==', 'tls.key': 'MQ==' };
    const r = await c.request('POST', `/api/v1/namespaces/${ns}/secrets`, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, type, data } });
    if (r.status !== 201) throw new Error(r.text);
  }
  const event = await c.request('POST', `/api/v1/namespaces/${ns}/events`, {
    body: {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'always.1' },
      involvedObject: { kind: 'Pod', namespace: ns, name: 'always', apiVersion: 'v1' },
      reason: 'Tested',
      message: 'a test event',
      type: 'Warning',
      source: { component: 'conformance' },
    },
  });
  if (event.status !== 201) throw new Error(event.text);
});
afterAll(async () => {
  await c?.close();
});

async function names(path: string, selector: string): Promise<string[]> {
  const r = await c.request('GET', `${path}?fieldSelector=${encodeURIComponent(selector)}`);
  expect(r.status, r.text).toBe(200);
  return r.json.items.map((i: any) => i.metadata.name).sort();
}

describe('supported fields', () => {
  it('selects pods by spec fields, status.phase and metadata', async () => {
    const pods = `/api/v1/namespaces/${ns}/pods`;
    expect(await names(pods, 'spec.restartPolicy=Never')).toEqual(['never']);
    expect(await names(pods, 'spec.restartPolicy!=Never')).toEqual(['always']);
    expect(await names(pods, 'spec.schedulerName=default-scheduler')).toEqual(['always']);
    expect(await names(pods, 'spec.serviceAccountName=default')).toEqual(['always', 'never']);
    expect(await names(pods, 'status.phase!=Succeeded,status.phase!=Failed')).toEqual(['always', 'never']);
    expect(await names(pods, 'status.phase=Succeeded')).toEqual([]);
    expect(await names(pods, 'status.nominatedNodeName=')).toEqual(['always', 'never']);
    expect(await names(pods, `metadata.namespace=${ns},metadata.name==never`)).toEqual(['never']);
    // The other scheduler never binds its pod: no node name.
    expect(await names(pods, 'spec.nodeName=,spec.schedulerName=other-scheduler')).toEqual(['never']);
    expect(await names(pods, 'status.podIP=203.0.113.1')).toEqual([]);
  });

  it('selects secrets by type', async () => {
    expect(await names(`/api/v1/namespaces/${ns}/secrets`, 'type=kubernetes.io/tls')).toEqual(['tls']);
    expect(await names(`/api/v1/namespaces/${ns}/secrets`, 'type=Opaque,metadata.name=opaque')).toEqual(['opaque']);
  });

  it('selects events by the object they are about, reason, source and type', async () => {
    const events = `/api/v1/namespaces/${ns}/events`;
    // The test's own event (on the real tier the kubelet posts its own about the same pod).
    expect(await names(events, 'involvedObject.kind=Pod,involvedObject.name=always,source=conformance')).toEqual(['always.1']);
    expect(await names(events, 'involvedObject.kind=Pod,involvedObject.name=always')).toContain('always.1');
    expect(await names(events, 'reason=Tested,type=Warning,source=conformance')).toEqual(['always.1']);
    expect(await names(events, `involvedObject.namespace=${ns},involvedObject.name=never`)).toEqual([]);
  });

  it('selects namespaces by status.phase and name', async () => {
    expect(await names('/api/v1/namespaces', `status.phase=Active,metadata.name=${ns}`)).toEqual([ns]);
  });

  it('accepts the fields of nodes and jobs', async () => {
    expect((await c.request('GET', '/api/v1/nodes?fieldSelector=spec.unschedulable%3Dfalse')).status).toBe(200);
    expect((await c.request('GET', `/apis/batch/v1/namespaces/${ns}/jobs?fieldSelector=status.successful%3D1`)).status).toBe(200);
  });

  it('filters a watch with a field selector', async () => {
    const events = await c.watch(`/api/v1/namespaces/${ns}/pods`, { fieldSelector: 'spec.restartPolicy=Never' }, (e) => e.type === 'ADDED', 10_000);
    expect(events.map((e) => e.object.metadata.name)).toEqual(['never']);
  });
});

describe('unsupported fields', () => {
  const generic = (f: string): string => `"${f}" is not a known field selector: only "metadata.name", "metadata.namespace"`;
  const own = (f: string): string => `field label not supported: ${f}`;
  const cases: [string, string, string][] = [
    ['pods', 'spec.foo', own('spec.foo')],
    ['pods', 'status.hostIP', own('status.hostIP')],
    ['pods', 'metadata.uid', own('metadata.uid')],
    ['configmaps', 'status.phase', generic('status.phase')],
    ['services', 'spec.clusterIP', generic('spec.clusterIP')],
    ['secrets', 'data', own('data')],
    ['events', 'message', own('message')],
    ['serviceaccounts', 'zz.top', generic('zz.top')],
    ['persistentvolumeclaims', 'zz.top', generic('zz.top')],
  ];
  it.each(cases)('answers 400 for %s by %s', async (resource, field, message) => {
    const r = await c.request('GET', `/api/v1/namespaces/${ns}/${resource}?fieldSelector=${encodeURIComponent(`${field}=x`)}`);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400, message });
  });

  it('words the 400 as each kind does: cluster-scoped kinds with their own fields, Jobs, apps kinds', async () => {
    const msg = async (path: string): Promise<string> => {
      const r = await c.request('GET', `${path}?fieldSelector=${encodeURIComponent('metadata.namespace=x')}`);
      return r.status === 400 ? r.json.message : `status ${r.status}`;
    };
    expect(await msg('/api/v1/namespaces')).toBe(own('metadata.namespace'));
    expect(await msg('/api/v1/nodes')).toBe(own('metadata.namespace'));
    expect(await msg('/api/v1/persistentvolumes')).toBe('status 200');
    const job = await c.request('GET', `/apis/batch/v1/namespaces/${ns}/jobs?fieldSelector=zz.top%3Dx`);
    expect(job.json.message).toBe('field label "zz.top" not supported for Job');
    const deploy = await c.request('GET', `/apis/apps/v1/namespaces/${ns}/deployments?fieldSelector=status.replicas%3D1`);
    expect(deploy.json.message).toBe(generic('status.replicas'));
  });

  it('answers 400 to a term without an operator', async () => {
    for (const selector of ['metadata.name', 'status.phase>1']) {
      const r = await c.request('GET', `/api/v1/namespaces/${ns}/pods?fieldSelector=${encodeURIComponent(selector)}`);
      expect(r.status).toBe(400);
      expect(r.json.message).toBe(`invalid selector: '${selector}'; can't understand '${selector}'`);
    }
  });
});
