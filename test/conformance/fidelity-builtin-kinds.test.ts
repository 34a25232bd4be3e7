/**
 * The built-in kinds beyond the workload ones, as a real API server serves
 * them: in discovery (group, preferred version, scope, verbs), through CRUD
 * with the defaults and checks a client notices, and the review kinds
 * (TokenReview, the access reviews) answered at create.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Cluster } from './cluster.js';

let c: Cluster;
let ns: string;

beforeAll(async () => {
  c = await connect('conf-fid-kinds');
  ns = c.namespace;
});
afterAll(async () => {
  await c?.close();
});

/** The preferred version of `group` ('' for core) as the server's discovery states it. */
async function preferred(group: string): Promise<string> {
  if (!group) return 'v1';
  const r = await c.request('GET', `/apis/${group}`);
  expect(r.status, `group ${group}`).toBe(200);
  return r.json.preferredVersion.version;
}

async function resourceEntry(group: string, plural: string): Promise<{ base: string; entry: any }> {
  const version = await preferred(group);
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const list = await c.request('GET', base);
  expect(list.status).toBe(200);
  return { base, entry: list.json.resources.find((r: any) => r.name === plural) };
}

const CRUD_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

describe('discovery of the other built-in kinds', () => {
  const cases: [string, string, string, boolean, string[]][] = [
    ['', 'replicationcontrollers', 'ReplicationController', true, CRUD_VERBS],
    ['', 'podtemplates', 'PodTemplate', true, CRUD_VERBS],
    ['networking.k8s.io', 'ingressclasses', 'IngressClass', false, CRUD_VERBS],
    ['node.k8s.io', 'runtimeclasses', 'RuntimeClass', false, CRUD_VERBS],
    ['storage.k8s.io', 'csidrivers', 'CSIDriver', false, CRUD_VERBS],
    ['storage.k8s.io', 'csinodes', 'CSINode', false, CRUD_VERBS],
    ['storage.k8s.io', 'volumeattachments', 'VolumeAttachment', false, CRUD_VERBS],
    ['certificates.k8s.io', 'certificatesigningrequests', 'CertificateSigningRequest', false, CRUD_VERBS],
    ['authentication.k8s.io', 'tokenreviews', 'TokenReview', false, ['create']],
    ['authorization.k8s.io', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview', false, ['create']],
    ['authorization.k8s.io', 'localsubjectaccessreviews', 'LocalSubjectAccessReview', true, ['create']],
    ['authorization.k8s.io', 'subjectaccessreviews', 'SubjectAccessReview', false, ['create']],
    ['authorization.k8s.io', 'selfsubjectrulesreviews', 'SelfSubjectRulesReview', false, ['create']],
    ['admissionregistration.k8s.io', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false, CRUD_VERBS],
    ['admissionregistration.k8s.io', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false, CRUD_VERBS],
    ['flowcontrol.apiserver.k8s.io', 'flowschemas', 'FlowSchema', false, CRUD_VERBS],
    ['flowcontrol.apiserver.k8s.io', 'prioritylevelconfigurations', 'PriorityLevelConfiguration', false, CRUD_VERBS],
    ['events.k8s.io', 'events', 'Event', true, CRUD_VERBS],
    ['apiregistration.k8s.io', 'apiservices', 'APIService', false, CRUD_VERBS],
  ];
  it.each(cases)('serves %s %s', async (group, plural, kind, namespaced, verbs) => {
    const { entry } = await resourceEntry(group, plural);
    expect(entry, `${plural} in discovery`).toBeDefined();
    expect(entry).toMatchObject({ kind, namespaced });
    expect([...entry.verbs].sort()).toEqual(verbs);
  });

  it('lists the subresources the real server lists for them', async () => {
    const core = await c.request('GET', '/api/v1');
    const names = core.json.resources.map((r: any) => r.name);
    expect(names).toEqual(expect.arrayContaining(['replicationcontrollers/scale', 'replicationcontrollers/status']));
    const certs = await resourceEntry('certificates.k8s.io', 'certificatesigningrequests/approval');
    expect(certs.entry).toMatchObject({ kind: 'CertificateSigningRequest' });
    const rc = core.json.resources.find((r: any) => r.name === 'replicationcontrollers');
    expect(rc).toMatchObject({ shortNames: ['rc'], categories: ['all'] });
    const vwc = await resourceEntry('admissionregistration.k8s.io', 'validatingwebhookconfigurations');
    expect(vwc.entry.categories).toEqual(['api-extensions']);
  });
});

describe('CRUD with defaults and checks', () => {
  it('defaults a ReplicationController from its template and serves its /scale', async () => {
    const base = `/api/v1/namespaces/${ns}/replicationcontrollers`;
    const created = await c.request('POST', base, {
      body: {
        apiVersion: 'v1',
        kind: 'ReplicationController',
        metadata: { name: 'rc' },
        spec: { replicas: 0, template: { metadata: { labels: { app: 'rc' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } } },
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json.spec).toMatchObject({ replicas: 0, selector: { app: 'rc' } });
    expect(created.json.metadata.labels).toEqual({ app: 'rc' });
    expect(created.json.metadata.generation).toBe(1);
    expect(created.json.spec.template.spec).toMatchObject({ restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' });
    const scale = await c.request('GET', `${base}/rc/scale`);
    expect(scale.status).toBe(200);
    expect(scale.json).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', status: { selector: 'app=rc' } });
    const selected = await c.request('GET', `${base}?fieldSelector=status.replicas%3D0`);
    expect(selected.json.items.map((i: any) => i.metadata.name)).toEqual(['rc']);
    const bad = await c.request('POST', base, {
      body: {
        apiVersion: 'v1',
        kind: 'ReplicationController',
        metadata: { name: 'rc-bad' },
        spec: { selector: { app: 'other' }, template: { metadata: { labels: { app: 'rc' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } } },
      },
    });
    expect(bad.status).toBe(422);
    expect(bad.json.details.causes).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'spec.template.metadata.labels' })]));
    expect((await c.request('DELETE', `${base}/rc`)).status).toBe(200);
  });

  it('stores a PodTemplate with pod spec defaults', async () => {
    const r = await c.request('POST', `/api/v1/namespaces/${ns}/podtemplates`, {
      body: { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'tpl' }, template: { spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } } },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json.template.spec).toMatchObject({ restartPolicy: 'Always', terminationGracePeriodSeconds: 30 });
  });

  it('creates cluster-scoped IngressClass, RuntimeClass, CSIDriver, CSINode and VolumeAttachment', async () => {
    const suffix = ns;
    const ic = await c.request('POST', '/apis/networking.k8s.io/v1/ingressclasses', {
      body: { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: `ic-${suffix}` }, spec: { controller: 'example.com/ingress' } },
    });
    expect(ic.status, ic.text).toBe(201);
    const rt = await c.request('POST', '/apis/node.k8s.io/v1/runtimeclasses', {
      body: { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: `rt-${suffix}` }, handler: 'runc' },
    });
    expect(rt.status, rt.text).toBe(201);
    const noHandler = await c.request('POST', '/apis/node.k8s.io/v1/runtimeclasses', {
      body: { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: `rt2-${suffix}` } },
    });
    expect(noHandler.status).toBe(422);
    expect(noHandler.json.message).toMatch(
      new RegExp(`^RuntimeClass\\.node\\.k8s\\.io "rt2-${suffix}" is invalid: handler: Invalid value: "": a lowercase RFC 1123 label must consist of`),
    );
    const driver = await c.request('POST', '/apis/storage.k8s.io/v1/csidrivers', {
      body: { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: `csi.${suffix}.example.com` }, spec: {} },
    });
    expect(driver.status, driver.text).toBe(201);
    expect(driver.json.spec).toMatchObject({
      attachRequired: true,
      podInfoOnMount: false,
      volumeLifecycleModes: ['Persistent'],
      storageCapacity: false,
      fsGroupPolicy: 'ReadWriteOnceWithFSType',
      requiresRepublish: false,
    });
    const node = await c.request('POST', '/apis/storage.k8s.io/v1/csinodes', {
      body: { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: `node-${suffix}` }, spec: { drivers: [] } },
    });
    expect(node.status, node.text).toBe(201);
    const va = await c.request('POST', '/apis/storage.k8s.io/v1/volumeattachments', {
      body: {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'VolumeAttachment',
        metadata: { name: `va-${suffix}` },
        spec: { attacher: `csi.${suffix}.example.com`, nodeName: `node-${suffix}`, source: { persistentVolumeName: 'pv-1' } },
      },
    });
    expect(va.status, va.text).toBe(201);
    const attached = await c.request('PATCH', `/apis/storage.k8s.io/v1/volumeattachments/va-${suffix}/status`, {
      body: { status: { attached: true } },
      contentType: 'application/merge-patch+json',
    });
    expect(attached.status, attached.text).toBe(200);
    expect(attached.json.status.attached).toBe(true);
    for (const path of [
      `/apis/networking.k8s.io/v1/ingressclasses/ic-${suffix}`,
      `/apis/node.k8s.io/v1/runtimeclasses/rt-${suffix}`,
      `/apis/storage.k8s.io/v1/volumeattachments/va-${suffix}`,
      `/apis/storage.k8s.io/v1/csidrivers/csi.${suffix}.example.com`,
      `/apis/storage.k8s.io/v1/csinodes/node-${suffix}`,
    ]) {
      expect((await c.request('DELETE', path)).status, path).toBe(200);
    }
  });

  it('records the requesting user on a CertificateSigningRequest, and approves it through /approval', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vnfm-csr-'));
    try {
      execFileSync('openssl', ['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'csr.pem'), '-subj', '/CN=conformance'], {
        stdio: 'ignore',
      });
      const request = readFileSync(join(dir, 'csr.pem')).toString('base64');
      const name = `csr-${ns}`;
      const created = await c.request('POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
        body: {
          apiVersion: 'certificates.k8s.io/v1',
          kind: 'CertificateSigningRequest',
          metadata: { name },
          spec: { request, signerName: 'example.com/conformance', usages: ['client auth'] },
        },
      });
      expect(created.status, created.text).toBe(201);
      expect(created.json.spec.groups).toEqual(expect.arrayContaining(['system:masters', 'system:authenticated']));
      expect(typeof created.json.spec.username).toBe('string');
      const bySigner = await c.request(
        'GET',
        `/apis/certificates.k8s.io/v1/certificatesigningrequests?fieldSelector=${encodeURIComponent(`spec.signerName=example.com/conformance,metadata.name=${name}`)}`,
      );
      expect(bySigner.json.items.map((i: any) => i.metadata.name)).toEqual([name]);
      const approved = await c.request('PUT', `/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}/approval`, {
        body: { ...created.json, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Conformance', message: 'approved by the conformance suite' }] } },
      });
      expect(approved.status, approved.text).toBe(200);
      expect(approved.json.status.conditions[0]).toMatchObject({ type: 'Approved', status: 'True', reason: 'Conformance' });
      const garbage = await c.request('POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
        body: {
          apiVersion: 'certificates.k8s.io/v1',
          kind: 'CertificateSigningRequest',
          metadata: { name: `${name}-bad` },
          spec: { request: Buffer.from('not a csr').toString('base64'), signerName: 'example.com/conformance', usages: ['client auth'] },
        },
      });
      expect(garbage.status).toBe(422);
      expect(garbage.json.details.causes[0].field).toBe('spec.request');
      expect((await c.request('DELETE', `/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}`)).status).toBe(200);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('defaults webhook configurations (that match nothing here)', async () => {
    const name = `vwc-${ns}`;
    const r = await c.request('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      body: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name },
        webhooks: [
          {
            name: 'check.example.com',
            clientConfig: { service: { namespace: ns, name: 'hook' } },
            rules: [{ apiGroups: ['example.invalid'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['nothings'] }],
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
        ],
      },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json.webhooks[0]).toMatchObject({
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
      clientConfig: { service: { port: 443 } },
    });
    expect(r.json.webhooks[0].rules[0].scope).toBe('*');
    const noSideEffects = await c.request('POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
      body: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: `${name}-m` },
        webhooks: [{ name: 'm.example.com', clientConfig: { url: 'https://127.0.0.1:1/' }, admissionReviewVersions: ['v1'] }],
      },
    });
    expect(noSideEffects.status).toBe(422);
    expect(noSideEffects.json.details.causes).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'webhooks[0].sideEffects' })]));
    expect((await c.request('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`)).status).toBe(200);
  });

  it('stores flowcontrol objects in the preferred version', async () => {
    const version = await preferred('flowcontrol.apiserver.k8s.io');
    const base = `/apis/flowcontrol.apiserver.k8s.io/${version}`;
    const pl = await c.request('POST', `${base}/prioritylevelconfigurations`, {
      body: {
        apiVersion: `flowcontrol.apiserver.k8s.io/${version}`,
        kind: 'PriorityLevelConfiguration',
        metadata: { name: `pl-${ns}` },
        spec: { type: 'Limited', limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Queue', queuing: {} } } },
      },
    });
    expect(pl.status, pl.text).toBe(201);
    expect(pl.json.spec.limited.limitResponse.queuing).toEqual({ queues: 64, handSize: 8, queueLengthLimit: 50 });
    const fs = await c.request('POST', `${base}/flowschemas`, {
      body: {
        apiVersion: `flowcontrol.apiserver.k8s.io/${version}`,
        kind: 'FlowSchema',
        metadata: { name: `fs-${ns}` },
        spec: {
          priorityLevelConfiguration: { name: `pl-${ns}` },
          rules: [{ subjects: [{ kind: 'Group', group: { name: 'conformance-nobody' } }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/conformance'] }] }],
        },
      },
    });
    expect(fs.status, fs.text).toBe(201);
    expect(fs.json.spec.matchingPrecedence).toBe(1000);
    expect((await c.request('DELETE', `${base}/flowschemas/fs-${ns}`)).status).toBe(200);
    expect((await c.request('DELETE', `${base}/prioritylevelconfigurations/pl-${ns}`)).status).toBe(200);
  });

  it('creates an events.k8s.io Event and selects it by what it regards', async () => {
    const base = `/apis/events.k8s.io/v1/namespaces/${ns}/events`;
    const r = await c.request('POST', base, {
      body: {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: 'ev1' },
        eventTime: '2026-01-01T00:00:00.000000Z',
        reportingController: 'example.com/conformance',
        reportingInstance: 'conformance-1',
        action: 'Testing',
        reason: 'Tested',
        type: 'Normal',
        note: 'an event',
        regarding: { kind: 'Pod', namespace: ns, name: 'p1', apiVersion: 'v1' },
      },
    });
    expect(r.status, r.text).toBe(201);
    const sel = await c.request('GET', `${base}?fieldSelector=${encodeURIComponent('regarding.name=p1,reportingController=example.com/conformance')}`);
    expect(sel.json.items.map((i: any) => i.metadata.name)).toEqual(['ev1']);
    const missing = await c.request('POST', base, { body: { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'ev2' }, type: 'Normal' } });
    expect(missing.status).toBe(422);
    // Validated as the core Event it is stored as.
    expect(missing.json.message).toBe('Event "ev2" is invalid: [involvedObject.namespace: Invalid value: "": does not match event.namespace, eventTime: Required value]');
  });

  it('lists the local APIServices, Available', async () => {
    const r = await c.request('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.apps');
    expect(r.status, r.text).toBe(200);
    expect(r.json.spec).toMatchObject({ group: 'apps', version: 'v1' });
    expect(r.json.spec.service).toBeUndefined();
    expect(r.json.status.conditions).toEqual([expect.objectContaining({ type: 'Available', status: 'True', reason: 'Local', message: 'Local APIServices are always available' })]);
    const core = await c.request('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.');
    expect(core.status).toBe(200);
    expect(core.json.spec).toMatchObject({ version: 'v1' });
  });
});

describe('reviews', () => {
  const token = (): string => c.kc.getCurrentUser()!.token!;

  it('authenticates the client token in a TokenReview, and says why another fails', async () => {
    const ok = await c.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: token() } },
    });
    expect(ok.status).toBe(201);
    expect(ok.json).toMatchObject({
      kind: 'TokenReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: { token: token() },
      status: { authenticated: true },
    });
    expect(ok.json.status.user.groups).toEqual(expect.arrayContaining(['system:masters', 'system:authenticated']));
    const bad = await c.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'not-a-token' } },
    });
    expect(bad.status).toBe(201);
    expect(bad.json.status).toEqual({ user: {}, error: 'invalid bearer token' });
    // Answered, never stored.
    expect((await c.request('GET', '/apis/authentication.k8s.io/v1/tokenreviews')).status).toBe(405);
  });

  it('answers access reviews: the client may do anything, an unknown user nothing', async () => {
    const self = await c.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'delete', resource: 'pods', namespace: ns } } },
    });
    expect(self.status).toBe(201);
    expect(self.json.status).toEqual({ allowed: true });
    const other = await c.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: 'conformance-nobody', resourceAttributes: { verb: 'get', resource: 'pods', namespace: ns } },
      },
    });
    expect(other.status).toBe(201);
    expect(other.json.status).toEqual({ allowed: false });
    const masters = await c.request('POST', `/apis/authorization.k8s.io/v1/namespaces/${ns}/localsubjectaccessreviews`, {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'LocalSubjectAccessReview',
        spec: { user: 'x', groups: ['system:masters'], resourceAttributes: { verb: 'get', resource: 'pods', namespace: ns } },
      },
    });
    expect(masters.status).toBe(201);
    expect(masters.json.status.allowed).toBe(true);
    const elsewhere = await c.request('POST', `/apis/authorization.k8s.io/v1/namespaces/${ns}/localsubjectaccessreviews`, {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'LocalSubjectAccessReview',
        spec: { user: 'x', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'elsewhere' } },
      },
    });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.json.message).toBe('.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "elsewhere": must match metadata.namespace');
  });

  it('lists the rules of the client in a SelfSubjectRulesReview', async () => {
    const r = await c.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: ns } },
    });
    expect(r.status).toBe(201);
    expect(r.json.status.incomplete).toBe(false);
    expect(r.json.status.resourceRules).toEqual(expect.arrayContaining([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]));
    expect(r.json.status.nonResourceRules).toEqual(expect.arrayContaining([{ verbs: ['*'], nonResourceURLs: ['*'] }]));
  });
});
