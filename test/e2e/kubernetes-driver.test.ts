/**
 * The Kubernetes infra-driver against a Kubernetes API over HTTPS (the
 * in-process sandbox, and in the real API server tier a real kube-apiserver
 * with its controllers)
 * (CA verified, bearer token): deploy in dependency order with labels and
 * ownership checks, readiness by watching, VNFCs, scale, heal, change of
 * package and removal, using the basic CNF sample's manifests.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError } from '../../src/errors.js';
import type { DriverContext, DriverEvent, JournalStep, ResourceRef } from '../../src/infra/driver.js';
import { createKubernetesDriver, INSTANCE_LABEL, KubeApiError, sourceKey, type KubeAccess, type KubeObject, type KubernetesDriver } from '../../src/infra/kubernetes/index.js';
import { createKubeTransport, type KubeHttpRequest, type KubeHttpResponse, type KubeTransport } from '../../src/infra/kubernetes/kube-api.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { e2eCluster, onRealCluster, type E2eCluster } from '../support/e2e-cluster.js';

const SAMPLE = join(import.meta.dirname, '../../csar-samples/basic-cnf');

let cluster: E2eCluster;
let access: KubeAccess;
let driver: KubernetesDriver;

beforeAll(async () => {
  cluster = await e2eCluster('e2e-driver');
  access = { server: cluster.server, verifyTls: true, caCert: cluster.caPem, bearerToken: cluster.token };
  driver = createKubernetesDriver(access, { retry: { backoffMs: 5, maxBackoffMs: 20 } });
});

afterAll(async () => {
  driver?.close();
  await cluster?.close();
});

interface TestContext extends DriverContext {
  steps: JournalStep[];
  events: DriverEvent[];
}

/** A driver context recording its journal and events; the signal only guards against a hung test. */
function context(signal: AbortSignal = AbortSignal.timeout(30_000)): TestContext {
  const steps: JournalStep[] = [];
  const events: DriverEvent[] = [];
  return {
    steps,
    events,
    journal: { record: (s) => void steps.push(s), steps: () => steps },
    report: (e) => void events.push(e),
    signal,
  };
}

function loadManifests(dir: string): KubeObject[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) => yaml.loadAll(readFileSync(join(dir, f), 'utf8')) as KubeObject[]);
}

/** The cluster as a plain client sees it (not through the driver). */
function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const url = new URL(path, cluster.server);
  const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method,
        ca: cluster.caPem,
        headers: { Authorization: `Bearer ${cluster.token}`, Accept: 'application/json', ...(data ? { 'Content-Type': 'application/json' } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const nsPath = (ns: string, plural: string, name = '') => `/api/v1/namespaces/${ns}/${plural}${name ? `/${name}` : ''}`;

async function createNamespace(name: string): Promise<void> {
  const res = await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  expect(res.status).toBe(201);
}

const configMap = (name: string, data: Record<string, string> = { k: 'v' }): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

describe('deploy and remove plain objects', () => {
  it('creates in dependency order, labels every object, journals each create, and removes in reverse', async () => {
    const ctx = context();
    const objects: KubeObject[] = [
      configMap('settings'),
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, stringData: { password: 'x' } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'plain-1' } },
      { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'leader' }, spec: { holderIdentity: 'a' } },
    ];
    const refs = await driver.deploy(ctx, { instanceId: 'inst-plain', namespace: 'plain-1', objects, replicas: {} });

    expect(refs.map((r) => `${r.kind}/${r.name}`)).toEqual(['Namespace/plain-1', 'ConfigMap/settings', 'Secret/creds', 'Lease/leader']);
    expect(refs[0]!.namespace).toBeUndefined();
    expect(refs.slice(1).every((r) => r.namespace === 'plain-1')).toBe(true);
    const cm = await api('GET', nsPath('plain-1', 'configmaps', 'settings'));
    expect(cm.body.metadata.labels[INSTANCE_LABEL]).toBe('inst-plain');
    const ns = await api('GET', '/api/v1/namespaces/plain-1');
    expect(ns.body.metadata.labels[INSTANCE_LABEL]).toBe('inst-plain');
    // Each create is journalled as intended before and done after.
    for (const ref of refs) {
      const mine = ctx.steps.filter((s) => s.resource.name === ref.name && s.resource.kind === ref.kind).map((s) => `${s.action}:${s.state}`);
      expect(mine).toEqual(['create:intended', 'create:done']);
    }
    expect(ctx.events.filter((e) => e.done).map((e) => e.resource?.kind)).toContain('Namespace');

    const rm = context();
    await driver.remove(rm, { instanceId: 'inst-plain', resources: refs });
    expect((await api('GET', nsPath('plain-1', 'configmaps', 'settings'))).status).toBe(404);
    expect((await api('GET', '/api/v1/namespaces/plain-1')).status).toBe(404);
    const deletions = rm.steps.filter((s) => s.state === 'intended').map((s) => s.resource.kind);
    expect(deletions.at(-1)).toBe('Namespace');
    expect(deletions.indexOf('Lease')).toBeLessThan(deletions.indexOf('ConfigMap'));

    // Removing again: everything is already gone, which counts as deleted.
    const again = context();
    await driver.remove(again, { instanceId: 'inst-plain', resources: refs });
    expect(again.steps.map((s) => s.detail)).toEqual(refs.map(() => 'already gone'));
  });

  it('updates its own objects when run again (retry) instead of failing', async () => {
    await createNamespace('retry-1');
    const first = await driver.deploy(context(), { instanceId: 'inst-retry', namespace: 'retry-1', objects: [configMap('c', { v: '1' })], replicas: {} });
    const ctx = context();
    const second = await driver.deploy(ctx, { instanceId: 'inst-retry', namespace: 'retry-1', objects: [configMap('c', { v: '2' })], replicas: {} });
    expect(second).toEqual(first);
    expect(ctx.steps.at(-1)).toMatchObject({ action: 'create', state: 'done', detail: expect.stringMatching(/updated/) });
    expect((await api('GET', nsPath('retry-1', 'configmaps', 'c'))).body.data).toEqual({ v: '2' });
  });

  it('refuses an object of the same name that is not labelled as its own, and adopts nothing', async () => {
    await createNamespace('conflict-1');
    expect((await api('POST', nsPath('conflict-1', 'configmaps'), configMap('taken'))).status).toBe(201);
    const ctx = context();
    const run = driver.deploy(ctx, { instanceId: 'inst-c', namespace: 'conflict-1', objects: [configMap('free'), configMap('taken')], replicas: {} });
    await expect(run).rejects.toThrow(ConflictError);
    await expect(run).rejects.toThrow(/ConfigMap taken in namespace conflict-1 already exists and belongs to someone else/);
    const taken = await api('GET', nsPath('conflict-1', 'configmaps', 'taken'));
    expect(taken.body.metadata.labels?.[INSTANCE_LABEL]).toBeUndefined();

    // Another instance's object is a conflict too.
    const other = driver.deploy(context(), { instanceId: 'inst-d', namespace: 'conflict-1', objects: [configMap('free')], replicas: {} });
    await expect(other).rejects.toThrow(/labelled for VNF instance inst-c/);

    // Removal leaves what is not ours in place.
    const rm = context();
    await driver.remove(rm, { instanceId: 'inst-c', resources: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'taken', namespace: 'conflict-1' }] });
    expect((await api('GET', nsPath('conflict-1', 'configmaps', 'taken'))).status).toBe(200);
    expect(rm.steps[0]!.detail).toMatch(/left in place/);
  });

  it('names an unknown kind and apiVersion before creating anything', async () => {
    await createNamespace('unknown-1');
    const objects: KubeObject[] = [configMap('before'), { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }];
    const run = driver.deploy(context(), { instanceId: 'inst-u', namespace: 'unknown-1', objects, replicas: {} });
    await expect(run).rejects.toThrow(NotFoundError);
    await expect(run).rejects.toThrow(
      /no CustomResourceDefinition provides Widget \(example.com\/v1\), needed by w: the cluster at .* does not serve it and the package does not define it/,
    );
    const run2 = driver.deploy(context(), { instanceId: 'inst-u', namespace: 'unknown-1', objects: [{ apiVersion: 'v1', kind: 'Gadget', metadata: { name: 'g' } }], replicas: {} });
    await expect(run2).rejects.toThrow(/does not serve kind Gadget in v1/);
    expect((await api('GET', nsPath('unknown-1', 'configmaps', 'before'))).status).toBe(404);
  });

  it('names the file of a review the API server refuses (a review has no name to go by)', async () => {
    await createNamespace('review-1');
    // No user and no group: the API server refuses the SubjectAccessReview (422).
    const review: KubeObject = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      metadata: {} as KubeObject['metadata'],
      spec: { resourceAttributes: { verb: 'get', resource: 'pods' } },
    };
    const sources = { [sourceKey(review)]: 'Files/kubernetes/subject-access-review.yaml', [sourceKey(configMap('beside'))]: 'Files/kubernetes/cm.yaml' };
    const run = driver.deploy(context(), { instanceId: 'inst-r', namespace: 'review-1', objects: [configMap('beside'), review], replicas: {}, sources });
    await expect(run).rejects.toMatchObject({ status: 422, message: expect.stringMatching(/SubjectAccessReview.*Files\/kubernetes\/subject-access-review\.yaml/s) });
    await expect(run).rejects.toMatchObject({ hint: expect.stringMatching(/^fix the SubjectAccessReview in Files\/kubernetes\/subject-access-review\.yaml/) });
  });

  it('fails fast with the API server message on a rejected credential', async () => {
    const bad = createKubernetesDriver({ ...access, bearerToken: 'wrong' });
    try {
      const run = bad.deploy(context(), { instanceId: 'x', namespace: 'default', objects: [configMap('c')], replicas: {} });
      await expect(run).rejects.toThrow(KubeApiError);
      await expect(run).rejects.toMatchObject({ status: 401, hint: expect.stringMatching(/credentials/) });
    } finally {
      bad.close();
    }
  });

  it('verifies TLS: a CA that did not sign the server certificate is refused', async () => {
    const other = await startSandbox({ host: '127.0.0.1', port: 0 });
    const wrongCa = createKubernetesDriver({ ...access, caCert: other.caPem }, { retry: { retries: 0 } });
    try {
      await expect(wrongCa.deploy(context(), { instanceId: 'x', namespace: 'default', objects: [configMap('c')], replicas: {} })).rejects.toThrow(
        /cannot discover the kinds of v1: no answer from .* \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT)\)/,
      );
    } finally {
      wrongCa.close();
      await other.close();
    }
  });

  it('stops when the context is aborted', async () => {
    const ctrl = new AbortController();
    ctrl.abort(new Error('stopped by the test'));
    await expect(driver.deploy(context(ctrl.signal), { instanceId: 'x', namespace: 'default', objects: [configMap('c')], replicas: {} })).rejects.toThrow('stopped by the test');
  });
});

/** What a fault plan answers for one request: pass it on to the server, answer this, or fail the socket. */
type Fault = 'pass' | KubeHttpResponse | Error;

/** The real transport, with faults injected by `plan` (request, how many requests matched before). */
function faultyTransport(plan: (req: KubeHttpRequest) => Fault): KubeTransport {
  const real = createKubeTransport(access);
  return {
    async request(req) {
      const fault = plan(req);
      if (fault === 'pass') return real.request(req);
      if (fault instanceof Error) throw fault;
      return fault;
    },
    stream: (req, onLine) => real.stream(req, onLine),
    close: () => real.close(),
  };
}

const statusAnswer = (code: number, reason: string, headers: Record<string, string> = {}): KubeHttpResponse => ({
  status: code,
  headers,
  body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: `injected ${reason}`, reason, code },
});

describe('transient API failures', () => {
  function faultyDriver(plan: (req: KubeHttpRequest) => Fault) {
    const sleeps: number[] = [];
    const d = createKubernetesDriver(access, {
      transport: faultyTransport(plan),
      retry: { sleep: async (ms) => void sleeps.push(ms), backoffMs: 100, maxBackoffMs: 1000 },
    });
    return { d, sleeps };
  }

  it('retries 500, 503, a reset connection and 429 (waiting what Retry-After says), then succeeds', async () => {
    await createNamespace('faults-1');
    const answers: Fault[] = [
      statusAnswer(500, 'InternalError'),
      statusAnswer(503, 'ServiceUnavailable'),
      Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      statusAnswer(429, 'TooManyRequests', { 'retry-after': '2' }),
    ];
    const { d, sleeps } = faultyDriver((req) => (req.method === 'POST' ? (answers.shift() ?? 'pass') : 'pass'));
    try {
      const refs = await d.deploy(context(), { instanceId: 'inst-f', namespace: 'faults-1', objects: [configMap('flaky')], replicas: {} });
      expect(refs).toHaveLength(1);
      expect(sleeps).toEqual([100, 200, 400, 2000]);
      expect((await api('GET', nsPath('faults-1', 'configmaps', 'flaky'))).body.metadata.labels[INSTANCE_LABEL]).toBe('inst-f');
    } finally {
      d.close();
    }
  });

  it('gives up after a bounded number of attempts with the server message', async () => {
    const { d, sleeps } = faultyDriver((req) => (req.method === 'POST' ? statusAnswer(500, 'InternalError') : 'pass'));
    try {
      const run = d.deploy(context(), { instanceId: 'inst-f', namespace: 'faults-1', objects: [configMap('never')], replicas: {} });
      await expect(run).rejects.toThrow(
        /cannot create ConfigMap never in namespace faults-1: the API server answered 500 InternalError \(after 6 attempts\): injected InternalError/,
      );
      expect(sleeps).toEqual([100, 200, 400, 800, 1000]);
    } finally {
      d.close();
    }
  });

  it('fails at once on an error that waiting cannot fix (422 Invalid), with the API server message', async () => {
    const { d, sleeps } = faultyDriver(() => 'pass');
    try {
      const run = d.deploy(context(), { instanceId: 'inst-f', namespace: 'faults-1', objects: [configMap('Not_A_Name')], replicas: {} });
      await expect(run).rejects.toMatchObject({ status: 422, reason: 'Invalid', message: expect.stringMatching(/ConfigMap "Not_A_Name" is invalid/) });
      expect(sleeps).toEqual([]);
    } finally {
      d.close();
    }
  });
});

const deploymentTargets = (ns: string) => [
  { vduId: 'VDU1', resource: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'vdu1', namespace: ns } },
  { vduId: 'VDU2', resource: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'vdu2', namespace: ns } },
];

async function podNames(ns: string, selector: string): Promise<string[]> {
  const list = await api('GET', `${nsPath(ns, 'pods')}?labelSelector=${encodeURIComponent(selector)}`);
  return (list.body.items as KubeObject[])
    .filter((p) => !p.metadata.deletionTimestamp)
    .map((p) => p.metadata.name)
    .sort();
}

/**
 * A watch of one kind in a namespace from now on (after a list): `started`
 * once it is open, `stop()` ends it and gives every event it saw.
 */
function watchEvents(ns: string, plural: string): { started: Promise<void>; stop: () => Promise<{ type: string; object: KubeObject }[]> } {
  const base = plural === 'pods' ? nsPath(ns, 'pods') : `/apis/apps/v1/namespaces/${ns}/${plural}`;
  const events: { type: string; object: KubeObject }[] = [];
  let req: ReturnType<typeof httpsRequest> | undefined;
  let ended!: () => void;
  const done = new Promise<void>((resolve) => (ended = resolve));
  const started = (async () => {
    const rv = (await api('GET', base)).body.metadata.resourceVersion as string;
    await new Promise<void>((resolve, reject) => {
      req = httpsRequest(
        new URL(`${base}?watch=1&resourceVersion=${rv}`, cluster.server),
        { ca: cluster.caPem, headers: { Authorization: `Bearer ${cluster.token}`, Accept: 'application/json' } },
        (res) => {
          let buf = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            buf += d;
            for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
              const line = buf.slice(0, i).trim();
              buf = buf.slice(i + 1);
              if (line) events.push(JSON.parse(line));
            }
          });
          res.on('close', ended);
          resolve();
        },
      );
      req.on('error', (err) => (events.length === 0 ? reject(err) : ended()));
      req.end();
    });
  })();
  return {
    started,
    stop: async () => {
      // The last events reach the watch a moment after the last answer: wait until the deletions seen settle.
      let seen = -1;
      while (seen !== events.length) {
        seen = events.length;
        await new Promise((r) => setTimeout(r, 300));
      }
      req?.destroy();
      await Promise.race([done, new Promise((r) => setTimeout(r, 1000))]);
      return events;
    },
  };
}

describe('the basic CNF through its life', () => {
  const ns = 'cnf-1';
  const instanceId = 'inst-cnf';
  const vdu1Pods = () => podNames(ns, 'app.kubernetes.io/component=vdu1');

  it('deploys, lists VNFCs, scales out and in, heals a VNFC, changes package and removes everything', async () => {
    await createNamespace(ns);
    const objects = [...loadManifests(join(SAMPLE, 'package/Files/kubernetes')), configMap('only-in-v1')];

    // Instantiate with the level's replica counts.
    const ctx = context();
    const refs = await driver.deploy(ctx, { instanceId, namespace: ns, objects, replicas: { 'Deployment/vdu1': 2, 'Deployment/vdu2': 1 } });
    expect(refs.map((r) => `${r.kind}/${r.name}`)).toEqual(['ConfigMap/basic-cnf-content', 'ConfigMap/only-in-v1', 'Service/basic-cnf-web', 'Deployment/vdu1', 'Deployment/vdu2']);
    const vdu1 = (await api('GET', `/apis/apps/v1/namespaces/${ns}/deployments/vdu1`)).body;
    expect(vdu1.spec.replicas).toBe(2);
    expect(vdu1.status.readyReplicas).toBe(2);
    expect(vdu1.spec.template.metadata.labels[INSTANCE_LABEL]).toBe(instanceId);
    const pods = (await api('GET', `${nsPath(ns, 'pods')}?labelSelector=${encodeURIComponent(`${INSTANCE_LABEL}=${instanceId}`)}`)).body.items as KubeObject[];
    expect(pods).toHaveLength(3);
    const readyEvents = ctx.events.filter((e) => e.done && e.resource?.kind === 'Deployment').map((e) => e.resource!.name);
    expect(new Set(readyEvents)).toEqual(new Set(['vdu1', 'vdu2']));

    // VNFCs: one per pod, Tacker's ids.
    let vnfcs = await driver.listVnfcs(context(), deploymentTargets(ns));
    expect(vnfcs.filter((v) => v.vduId === 'VDU1')).toHaveLength(2);
    expect(vnfcs.filter((v) => v.vduId === 'VDU2')).toHaveLength(1);
    for (const v of vnfcs) {
      expect(v.id).toBe(`${v.vduId}-${v.resourceId}`);
      expect(v).toMatchObject({ vimLevelResourceType: 'Deployment', state: 'STARTED', metadata: { phase: 'Running' } });
    }
    expect(
      vnfcs
        .filter((v) => v.vduId === 'VDU1')
        .map((v) => v.resourceId)
        .sort(),
    ).toEqual(await vdu1Pods());

    // Scale out to 3, then in to 1: the surplus pods are gone when scale returns.
    const vdu1Ref = deploymentTargets(ns)[0]!.resource;
    const out = context();
    await driver.scale(out, { resource: vdu1Ref, replicas: 3 });
    expect(out.steps.map((s) => `${s.action}:${s.state}:${s.detail}`)).toEqual(['scale:intended:replicas=3', 'scale:done:replicas=3']);
    expect(await vdu1Pods()).toHaveLength(3);
    await driver.scale(context(), { resource: vdu1Ref, replicas: 1 });
    const all = (await api('GET', `${nsPath(ns, 'pods')}?labelSelector=${encodeURIComponent('app.kubernetes.io/component=vdu1')}`)).body.items;
    expect(all).toHaveLength(1);
    vnfcs = await driver.listVnfcs(context(), deploymentTargets(ns));
    const [only] = vnfcs.filter((v) => v.vduId === 'VDU1');
    expect(vnfcs.filter((v) => v.vduId === 'VDU1')).toHaveLength(1);

    // Heal that VNFC: a new pod with a new name replaces it.
    const heal = context();
    await driver.heal(heal, { instanceId, vnfcs: [only!], barePods: {} });
    const after = await vdu1Pods();
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(only!.resourceId);
    expect(heal.steps.map((s) => `${s.action}:${s.state}:${s.resource.name}`)).toEqual([`delete:intended:${only!.resourceId}`, `delete:done:${only!.resourceId}`]);

    // Change to the v2 package: applied with server-side apply, what v2 lacks is deleted.
    const v2 = loadManifests(join(SAMPLE, 'package-v2/Files/new_kubernetes'));
    const change = context();
    const v2Refs = await driver.changePackage(change, { instanceId, namespace: ns, objects: v2, current: refs, replicas: { 'Deployment/vdu1': 1, 'Deployment/vdu2': 1 } });
    expect(v2Refs.map((r) => r.name)).toEqual(['basic-cnf-content', 'basic-cnf-web', 'vdu1', 'vdu2']);
    expect((await api('GET', nsPath(ns, 'configmaps', 'only-in-v1'))).status).toBe(404);
    expect((await api('GET', nsPath(ns, 'configmaps', 'basic-cnf-content'))).body.data['index.html']).toMatch(/version 2.0/);
    const vdu1v2 = (await api('GET', `/apis/apps/v1/namespaces/${ns}/deployments/vdu1`)).body;
    expect(vdu1v2.spec.template.spec.containers[0].image).toBe('docker.io/library/nginx:1.27-alpine');
    expect(vdu1v2.status.updatedReplicas).toBe(1);
    expect(vdu1v2.status.readyReplicas).toBe(1);
    expect(change.steps.filter((s) => s.action === 'apply' && s.state === 'done')).toHaveLength(4);
    expect(change.steps.filter((s) => s.action === 'delete' && s.state === 'done').map((s) => s.resource.name)).toEqual(['only-in-v1']);

    // Terminate: reverse order, everything gone, pods included.
    const rm = context();
    await driver.remove(rm, { instanceId, resources: v2Refs, gracePeriodSeconds: 0 });
    expect(rm.steps.filter((s) => s.state === 'intended').map((s) => s.resource.name)).toEqual(['vdu2', 'vdu1', 'basic-cnf-web', 'basic-cnf-content']);
    for (const r of v2Refs) {
      const path = r.kind === 'Deployment' ? `/apis/apps/v1/namespaces/${ns}/deployments/${r.name}` : nsPath(ns, r.kind === 'Service' ? 'services' : 'configmaps', r.name);
      expect((await api('GET', path)).status).toBe(404);
    }
    expect(await podNames(ns, `${INSTANCE_LABEL}=${instanceId}`)).toEqual([]);
  });
});

const deployment = (name: string, replicas = 1): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'registry.local/app:1' }] } },
  },
});

describe('other workload kinds', () => {
  it('waits for a StatefulSet, a DaemonSet, a Job and a bare Pod, and recreates a healed bare Pod from its spec', async () => {
    const ns = 'kinds-1';
    await createNamespace(ns);
    const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'solo' }, spec: { containers: [{ name: 'main', image: 'registry.local/app:1' }] } };
    const objects: KubeObject[] = [
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'db' },
        spec: {
          replicas: 2,
          serviceName: 'db',
          selector: { matchLabels: { app: 'db' } },
          template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'registry.local/db:1' }] } },
        },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'agent' },
        spec: {
          selector: { matchLabels: { app: 'agent' } },
          template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'a', image: 'registry.local/agent:1' }] } },
        },
      },
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'init' },
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'i', image: 'registry.local/init:1' }] } } },
      },
      pod,
    ];
    const refs = await driver.deploy(context(), { instanceId: 'inst-k', namespace: ns, objects, replicas: { 'StatefulSet/db': 3 } });
    const sts = (await api('GET', `/apis/apps/v1/namespaces/${ns}/statefulsets/db`)).body;
    expect(sts.status.readyReplicas).toBe(3);
    const job = (await api('GET', `/apis/batch/v1/namespaces/${ns}/jobs/init`)).body;
    expect(job.status.conditions.some((c: { type: string; status: string }) => c.type === 'Complete' && c.status === 'True')).toBe(true);

    const vnfcs = await driver.listVnfcs(context(), [
      { vduId: 'DB', resource: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', namespace: ns } },
      { vduId: 'SOLO', resource: { apiVersion: 'v1', kind: 'Pod', name: 'solo', namespace: ns } },
    ]);
    expect(
      vnfcs
        .filter((v) => v.vduId === 'DB')
        .map((v) => v.resourceId)
        .sort(),
    ).toEqual(['db-0', 'db-1', 'db-2']);
    const solo = vnfcs.find((v) => v.vduId === 'SOLO')!;
    expect(solo).toMatchObject({ id: 'SOLO-solo', resourceId: 'solo', vimLevelResourceType: 'Pod' });

    const before = (await api('GET', nsPath(ns, 'pods', 'solo'))).body.metadata.uid;
    const heal = context();
    await driver.heal(heal, { instanceId: 'inst-k', vnfcs: [solo], barePods: { [`${ns}/solo`]: { ...pod, metadata: { ...pod.metadata, namespace: ns } } } });
    const after = (await api('GET', nsPath(ns, 'pods', 'solo'))).body;
    expect(after.metadata.uid).not.toBe(before);
    expect(after.metadata.labels[INSTANCE_LABEL]).toBe('inst-k');
    expect(heal.steps.map((s) => `${s.action}:${s.state}`)).toEqual(['delete:intended', 'delete:done', 'create:intended', 'create:done']);

    // A StatefulSet pod healed comes back under the same name, as a new pod.
    const db1 = vnfcs.find((v) => v.resourceId === 'db-1')!;
    const oldUid = (await api('GET', nsPath(ns, 'pods', 'db-1'))).body.metadata.uid;
    await driver.heal(context(), { instanceId: 'inst-k', vnfcs: [db1], barePods: {} });
    expect((await api('GET', nsPath(ns, 'pods', 'db-1'))).body.metadata.uid).not.toBe(oldUid);

    await driver.remove(context(), { instanceId: 'inst-k', resources: refs });
    expect(await podNames(ns, `${INSTANCE_LABEL}=inst-k`)).toEqual([]);
  });
});

describe('failures during deploy', () => {
  it('completes on retry after a failure part-way, updating what the first attempt created', async () => {
    const ns = 'partial-1';
    await createNamespace(ns);
    const objects = [configMap('conf'), deployment('front'), deployment('back')];
    const broken = createKubernetesDriver(access, {
      transport: faultyTransport((req) =>
        req.method === 'POST' && req.path.endsWith('/deployments') && (req.body as KubeObject).metadata.name === 'back' ? statusAnswer(403, 'Forbidden') : 'pass',
      ),
    });
    try {
      await expect(broken.deploy(context(), { instanceId: 'inst-p', namespace: ns, objects, replicas: {} })).rejects.toMatchObject({ status: 403 });
    } finally {
      broken.close();
    }
    expect((await api('GET', `/apis/apps/v1/namespaces/${ns}/deployments/back`)).status).toBe(404);

    const retry = context();
    await driver.deploy(retry, { instanceId: 'inst-p', namespace: ns, objects, replicas: {} });
    const done = retry.steps.filter((s) => s.state === 'done');
    expect(done.find((s) => s.resource.name === 'conf')!.detail).toMatch(/updated/);
    expect(done.find((s) => s.resource.name === 'back')!.detail).toBeUndefined();
    expect((await api('GET', `/apis/apps/v1/namespaces/${ns}/deployments/back`)).body.status.readyReplicas).toBe(1);
  });

  it('keeps waiting across dropped watches and a watch whose resourceVersion expired (410)', async () => {
    const ns = 'watch-1';
    await createNamespace(ns);
    let watches = 0;
    const real = createKubeTransport(access);
    const transport: KubeTransport = {
      request: (req) => real.request(req),
      async stream(req, onLine) {
        watches++;
        if (watches === 1) throw Object.assign(new Error('connection reset by peer'), { code: 'ECONNRESET' });
        if (watches === 2) {
          onLine(
            JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: 'too old resource version' } }),
          );
          return undefined;
        }
        if (watches === 3) return undefined;
        return real.stream(req, onLine);
      },
      close: () => real.close(),
    };
    const sleeps: number[] = [];
    const d = createKubernetesDriver(access, { transport, retry: { sleep: async (ms) => void sleeps.push(ms) } });
    try {
      await d.deploy(context(), { instanceId: 'inst-w', namespace: ns, objects: [deployment('web', 2)], replicas: {} });
    } finally {
      d.close();
    }
    expect(watches).toBeGreaterThanOrEqual(4);
    expect((await api('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`)).body.status.readyReplicas).toBe(2);
  });

  it('stops waiting when the signal aborts and says why', async () => {
    const ns = 'abort-1';
    await createNamespace(ns);
    const ctrl = new AbortController();
    const ctx = context(ctrl.signal);
    const origReport = ctx.report;
    ctx.report = (e) => {
      origReport(e);
      if (e.message === 'created') ctrl.abort(new Error('timed out after 1s'));
    };
    await expect(driver.deploy(ctx, { instanceId: 'inst-a', namespace: ns, objects: [deployment('slow', 1)], replicas: {} })).rejects.toThrow('timed out after 1s');
  });
});

describe('terminate', () => {
  /**
   * The real transport, telling `log` of each DELETE as it is sent and as it
   * is answered (the server has acted on it); `fail` may answer one in the
   * server's stead (given how many DELETEs came before it). The deletes of
   * what a workload owns (its ReplicaSets and pods) are told apart, as
   * `dependent …`, and are not counted.
   */
  function deleteLog(
    log: string[],
    fail?: (n: number) => KubeHttpResponse | undefined,
    policies: Record<string, unknown> = {},
    dependentPolicies: Record<string, unknown> = {},
  ): KubeTransport {
    const real = createKubeTransport(access);
    let n = 0;
    return {
      async request(req) {
        if (req.method !== 'DELETE') return real.request(req);
        const what = req.path.split('/').slice(-2).join('/');
        if (/^(replicasets|pods)\//.test(what)) {
          log.push(`dependent ${what}`);
          dependentPolicies[what] = (req.body as { propagationPolicy?: unknown } | undefined)?.propagationPolicy;
          const answer = await real.request(req);
          log.push(`dependent answered ${what}`);
          return answer;
        }
        const failed = fail?.(n++);
        if (failed) return failed;
        log.push(`send ${what}`);
        policies[what] = (req.body as { propagationPolicy?: unknown } | undefined)?.propagationPolicy;
        const answer = await real.request(req);
        log.push(`answered ${what}`);
        return answer;
      },
      stream: (req, onLine) => real.stream(req, onLine),
      close: () => real.close(),
    };
  }

  /** A context that also tells `log` when the driver reports an object deleted. */
  function logged(log: string[]): TestContext {
    const ctx = context();
    const report = ctx.report;
    ctx.report = (e) => {
      report(e);
      if (e.message === 'deleted' && e.resource) log.push(`deleted ${e.resource.kind}/${e.resource.name}`);
    };
    return ctx;
  }

  const cnf = (): KubeObject[] => [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'runner' } },
    configMap('conf'),
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, stringData: { password: 'x' } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } },
    deployment('web'),
  ];

  it('sends every delete, in reverse creation order, before it awaits any object gone; objects ranked last are gone first', async () => {
    const ns = 'term-order-1';
    await createNamespace(ns);
    const objects = [...cnf(), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'leader' }, spec: { holderIdentity: 'a' } }];
    const refs = await driver.deploy(context(), { instanceId: 'inst-to', namespace: ns, objects, replicas: {} });
    const log: string[] = [];
    const policies: Record<string, unknown> = {};
    const d = createKubernetesDriver(access, { transport: deleteLog(log, undefined, policies) });
    const ctx = logged(log);
    try {
      await d.remove(ctx, { instanceId: 'inst-to', resources: refs });
    } finally {
      d.close();
    }
    const sent = log.filter((l) => l.startsWith('send ')).map((l) => l.slice('send '.length));
    // The Lease (ranked with custom resources, last created) first, then the reverse of creation: workloads, Services, config, accounts.
    expect(sent).toEqual(['leases/leader', 'deployments/web', 'services/web', 'secrets/creds', 'configmaps/conf', 'serviceaccounts/runner']);
    // Foreground for what owns something of the CNF (the Deployment its pods; custom resources their children);
    // Background for the other built-in kinds, which own nothing and so are gone at once, without a finalizer for the garbage collector to remove.
    expect(policies).toEqual({
      'leases/leader': 'Background',
      'deployments/web': 'Foreground',
      'services/web': 'Background',
      'secrets/creds': 'Background',
      'configmaps/conf': 'Background',
      'serviceaccounts/runner': 'Background',
    });
    // The Lease is gone before anything else is deleted; then every other delete is answered before any object is awaited gone.
    expect(log.indexOf('deleted Lease/leader')).toBeLessThan(log.indexOf('send deployments/web'));
    const lastAnswer = log.findLastIndex((l) => l.startsWith('answered '));
    const firstGone = log.findIndex((l) => l.startsWith('deleted ') && l !== 'deleted Lease/leader');
    expect(firstGone).toBeGreaterThan(lastAnswer);
    // Each object journalled as intended, then done; all gone, the Deployment's pod too.
    for (const ref of refs) {
      expect(ctx.steps.filter((s) => s.resource.kind === ref.kind && s.resource.name === ref.name).map((s) => `${s.action}:${s.state}`)).toEqual([
        'delete:intended',
        'delete:done',
      ]);
    }
    expect((await api('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`)).status).toBe(404);
    expect((await api('GET', nsPath(ns, 'serviceaccounts', 'runner'))).status).toBe(404);
    expect(await podNames(ns, 'app=web')).toEqual([]);
  });

  it("deletes a workload's ReplicaSets and pods right after it, and every owner outlives what it owns", async () => {
    const ns = 'term-owners-1';
    await createNamespace(ns);
    const objects: KubeObject[] = [
      ...cnf(),
      deployment('api', 2),
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'db' },
        spec: {
          replicas: 2,
          serviceName: 'db',
          selector: { matchLabels: { app: 'db' } },
          template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'registry.local/db:1' }] } },
        },
      },
    ];
    const refs = await driver.deploy(context(), { instanceId: 'inst-ow', namespace: ns, objects, replicas: {} });
    // What owns what, before terminate: uid -> its controller's uid.
    const owned = new Map<string, { kind: string; name: string; owner?: string }>();
    for (const [path, kind] of [
      [`/apis/apps/v1/namespaces/${ns}/deployments`, 'Deployment'],
      [`/apis/apps/v1/namespaces/${ns}/replicasets`, 'ReplicaSet'],
      [`/apis/apps/v1/namespaces/${ns}/statefulsets`, 'StatefulSet'],
      [nsPath(ns, 'pods'), 'Pod'],
    ] as const) {
      for (const o of (await api('GET', path)).body.items as KubeObject[]) {
        const controller = (o.metadata.ownerReferences as { uid: string; controller?: boolean }[] | undefined)?.find((r) => r.controller);
        owned.set(o.metadata.uid as string, { kind, name: o.metadata.name, ...(controller ? { owner: controller.uid } : {}) });
      }
    }
    expect([...owned.values()].filter((o) => o.kind === 'Pod')).toHaveLength(5);
    // Every deletion as the server orders them (the resourceVersion it was deleted at), and any pod made meanwhile.
    const watches = ['deployments', 'replicasets', 'statefulsets', 'pods'].map((plural) => watchEvents(ns, plural));
    await Promise.all(watches.map((w) => w.started));
    const log: string[] = [];
    const policies: Record<string, unknown> = {};
    const d = createKubernetesDriver(access, { transport: deleteLog(log, undefined, {}, policies) });
    try {
      await d.remove(logged(log), { instanceId: 'inst-ow', resources: refs });
    } finally {
      d.close();
    }
    const events = (await Promise.all(watches.map((w) => w.stop()))).flat();
    expect(events.filter((e) => e.type === 'ADDED')).toEqual([]);
    const deletedAt = new Map(events.filter((e) => e.type === 'DELETED').map((e) => [e.object.metadata.uid as string, BigInt(e.object.metadata.resourceVersion as string)]));
    for (const [uid, o] of owned) {
      expect(deletedAt.has(uid), `${o.kind} ${o.name} deleted`).toBe(true);
      // The rule: an owner is gone only after what it owns.
      if (o.owner) expect(deletedAt.get(uid)!, `${o.kind} ${o.name} gone before its owner`).toBeLessThan(deletedAt.get(o.owner)!);
    }
    // vnfm deletes the dependents itself, each right after its owner was marked deleted (no controller makes them again then):
    // the ReplicaSets in the foreground (they outlive their pods too), the pods as the garbage collector would. Those the
    // garbage collector marked first are left to it: the sandbox's acts at once, a real one a level at a time, through its queues.
    const dependents = log.filter((l) => l.startsWith('dependent ') && !l.startsWith('dependent answered')).map((l) => l.slice('dependent '.length));
    if (onRealCluster()) expect(dependents.some((p) => p.startsWith('pods/'))).toBe(true);
    const byName = new Map([...owned.values()].map((o) => [`${o.kind}/${o.name}`, o]));
    for (const what of dependents) {
      const [plural, name] = what.split('/') as [string, string];
      const o = byName.get(`${plural === 'pods' ? 'Pod' : 'ReplicaSet'}/${name}`)!;
      expect(o, what).toBeDefined();
      expect(policies[what]).toBe(plural === 'pods' ? 'Background' : 'Foreground');
      const owner = owned.get(o.owner!)!;
      const ownerAnswered =
        owner.kind === 'ReplicaSet' ? `dependent answered replicasets/${owner.name}` : `answered ${owner.kind === 'Deployment' ? 'deployments' : 'statefulsets'}/${owner.name}`;
      // (A ReplicaSet the garbage collector marked before vnfm looked was not deleted by vnfm: it was marked before its pods were.)
      if (owner.kind !== 'ReplicaSet' || log.includes(ownerAnswered))
        expect(log.indexOf(`dependent ${what}`), `${what} deleted after its owner`).toBeGreaterThan(log.indexOf(ownerAnswered));
    }
    expect(await podNames(ns, 'app=web')).toEqual([]);
  });

  it('resumes after failing between two deletes: what was sent is awaited, not deleted again, and the rest is deleted', async () => {
    const ns = 'term-resume-1';
    await createNamespace(ns);
    const refs = await driver.deploy(context(), { instanceId: 'inst-tr', namespace: ns, objects: cnf(), replicas: {} });
    // The first attempt (sending one delete at a time) stops at its third delete, the Secret's, as a crash would: nothing after it is sent, nothing is awaited.
    const first: string[] = [];
    const broken = createKubernetesDriver(access, { concurrency: 1, transport: deleteLog(first, (n) => (n === 2 ? statusAnswer(403, 'Forbidden') : undefined)) });
    const attempt = logged(first);
    try {
      await expect(broken.remove(attempt, { instanceId: 'inst-tr', resources: refs })).rejects.toMatchObject({ status: 403 });
    } finally {
      broken.close();
    }
    expect(first.filter((l) => l.startsWith('send '))).toEqual(['send deployments/web', 'send services/web']);
    expect(first.filter((l) => l.startsWith('deleted '))).toEqual([]);
    expect(attempt.steps.filter((s) => s.state === 'intended').map((s) => s.resource.kind)).toEqual(['Deployment', 'Service', 'Secret']);
    expect((await api('GET', nsPath(ns, 'secrets', 'creds'))).status).toBe(200);

    // The retry (the planner runs remove again with the same resources) deletes what is left and awaits all of it.
    const again: string[] = [];
    const d = createKubernetesDriver(access, { transport: deleteLog(again) });
    const retry = logged(again);
    try {
      await d.remove(retry, { instanceId: 'inst-tr', resources: refs });
    } finally {
      d.close();
    }
    expect(again.filter((l) => l.startsWith('send '))).toEqual(['send secrets/creds', 'send configmaps/conf', 'send serviceaccounts/runner']);
    for (const ref of refs) expect(retry.steps.filter((s) => s.resource.kind === ref.kind && s.resource.name === ref.name).at(-1)?.state).toBe('done');
    expect(retry.steps.find((s) => s.resource.kind === 'Service')?.detail).toBe('already gone');
    for (const path of [`/apis/apps/v1/namespaces/${ns}/deployments/web`, nsPath(ns, 'services', 'web'), nsPath(ns, 'secrets', 'creds'), nsPath(ns, 'configmaps', 'conf')]) {
      expect((await api('GET', path)).status, path).toBe(404);
    }
    expect(await podNames(ns, 'app=web')).toEqual([]);
  });
});

// The sandbox's own fault switches: a real cluster has none (holding a
// workload back from ready is tested on both, in vnf-lifecycle.test.ts).
if (!onRealCluster())
  describe('the sandbox fault switches', () => {
    function recordingDriver() {
      const sleeps: number[] = [];
      const d = createKubernetesDriver(access, { retry: { sleep: async (ms) => void sleeps.push(ms), backoffMs: 100 } });
      return { d, sleeps };
    }

    it('rides out 500s, a reset connection and a 429 in the middle of a deploy', async () => {
      const ns = 'sbfault-1';
      await createNamespace(ns);
      const lift = [
        cluster.sandbox!.faults.failRequests({ status: 500, count: 2, method: 'POST', path: `/apis/apps/v1/namespaces/${ns}/deployments` }),
        cluster.sandbox!.faults.failRequests({ status: 'reset', count: 1, method: 'POST', path: `/api/v1/namespaces/${ns}/services` }),
        cluster.sandbox!.faults.failRequests({ status: 429, count: 1, retryAfterSeconds: 3, method: 'GET', path: `/apis/apps/v1/namespaces/${ns}/replicasets` }),
      ];
      const { d, sleeps } = recordingDriver();
      try {
        const refs = await d.deploy(context(), { instanceId: 'inst-sf', namespace: ns, objects: loadManifests(join(SAMPLE, 'package/Files/kubernetes')), replicas: {} });
        expect(refs).toHaveLength(4);
        expect(sleeps).toContain(100);
        expect(sleeps.filter((ms) => ms === 200).length + sleeps.filter((ms) => ms === 100).length).toBeGreaterThanOrEqual(3);
        // The ReplicaSet list only happens when VNFCs are listed.
        const vnfcs = await d.listVnfcs(context(), deploymentTargets(ns));
        expect(vnfcs).toHaveLength(2);
        expect(sleeps).toContain(3000);
        await d.remove(context(), { instanceId: 'inst-sf', resources: refs, gracePeriodSeconds: 0 });
      } finally {
        lift.forEach((f) => f());
        d.close();
      }
    });

    it('reports what a never-ready workload waits for, and resumes after its watch is cut', async () => {
      const ns = 'sbfault-2';
      await createNamespace(ns);
      const lift = cluster.sandbox!.faults.neverReady({ kind: 'Deployment', namespace: ns, name: 'stuck' });
      let dropped = -1;
      const ctx = context();
      const report = ctx.report;
      ctx.report = (e) => {
        report(e);
        if (dropped < 0 && e.resource?.name === 'stuck' && /waiting for 0\/2 replicas ready/.test(e.message)) {
          dropped = cluster.sandbox!.faults.dropWatches({ abrupt: true });
          lift();
        }
      };
      await driver.deploy(ctx, { instanceId: 'inst-nr', namespace: ns, objects: [deployment('stuck', 2)], replicas: {} });
      expect(dropped).toBeGreaterThanOrEqual(1);
      expect(ctx.events.filter((e) => e.resource?.name === 'stuck').at(-1)).toMatchObject({ message: 'ready', done: true });
    });

    it('stops at the signal when a workload never becomes ready', async () => {
      const ns = 'sbfault-3';
      await createNamespace(ns);
      const lift = cluster.sandbox!.faults.neverReady({ kind: 'Deployment', namespace: ns, name: 'never' });
      const ctrl = new AbortController();
      const ctx = context(ctrl.signal);
      const report = ctx.report;
      ctx.report = (e) => {
        report(e);
        if (/waiting for 0\/1 replicas ready/.test(e.message)) ctrl.abort(new Error('--timeout reached'));
      };
      try {
        await expect(driver.deploy(ctx, { instanceId: 'inst-nv', namespace: ns, objects: [deployment('never')], replicas: {} })).rejects.toThrow('--timeout reached');
      } finally {
        lift();
      }
    });

    it('fails, naming the pod, when a bare Pod fails', async () => {
      const ns = 'sbfault-4';
      await createNamespace(ns);
      const lift = cluster.sandbox!.faults.failPods({ namespace: ns, name: 'doomed' });
      const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'doomed' }, spec: { containers: [{ name: 'main', image: 'registry.local/app:1' }] } };
      try {
        await expect(driver.deploy(context(), { instanceId: 'inst-fp', namespace: ns, objects: [pod], replicas: {} })).rejects.toThrow(
          /Pod doomed in namespace sbfault-4 will not become ready: the pod failed/,
        );
      } finally {
        lift();
      }
    });
  });
