/**
 * What the Kubernetes driver asks of the API server, counted at the server
 * (the sandbox's request hook): many objects of one kind in one namespace
 * are awaited on one shared watch, not one each; nothing is read back that a
 * create's answer or the shared watch already holds; listing the VNFCs of
 * many VDUs lists each kind once; removing reads each kind once.
 */
import { setMaxListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriverContext, DriverEvent, JournalStep } from '../../src/infra/driver.js';
import { createKubernetesDriver, type KubeObject, type KubernetesDriver } from '../../src/infra/kubernetes/index.js';
import { startSandbox, type Sandbox } from '@vnfm/kube-sandbox';
import { kubeRequest } from '../support/kube-http.js';

interface Seen {
  method: string;
  /** LIST, WATCH, GET (one object), POST, DELETE …; `discovery` for /api and /apis documents. */
  verb: string;
  /** `<resource>` or `<resource>/<name>`, without group, version and namespace. */
  target: string;
  query: URLSearchParams;
}

let sandbox: Sandbox;
let driver: KubernetesDriver;
let seen: Seen[] = [];

/** What a request is, as the API server sees it. */
function classify(method: string, url: string): Seen {
  const u = new URL(url, 'https://sandbox.invalid');
  const parts = u.pathname.split('/').filter(Boolean);
  let rest: string[] = [];
  if (parts[0] === 'api' && parts.length > 2) rest = parts.slice(2);
  else if (parts[0] === 'apis' && parts.length > 3) rest = parts.slice(3);
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  if (rest.length === 0) return { method, verb: 'discovery', target: '', query: u.searchParams };
  const watch = ['1', 'true'].includes(u.searchParams.get('watch') ?? '');
  const verb = method === 'GET' ? (watch ? 'WATCH' : rest.length === 1 ? 'LIST' : 'GET') : method;
  return { method, verb, target: rest.join('/'), query: u.searchParams };
}

const count = (verb: string, resource: string) => seen.filter((s) => s.verb === verb && s.target.split('/')[0] === resource).length;

beforeAll(async () => {
  sandbox = await startSandbox({ onRequest: (method, url) => void seen.push(classify(method, url)) });
  driver = createKubernetesDriver({ server: sandbox.url, verifyTls: true, caCert: sandbox.caPem, bearerToken: sandbox.token });
});

afterAll(async () => {
  driver?.close();
  await sandbox?.close();
});

function context(): DriverContext & { events: DriverEvent[]; steps: JournalStep[] } {
  const steps: JournalStep[] = [];
  const events: DriverEvent[] = [];
  // Each request in flight listens on the signal, as the CLI's does (it lifts the limit too).
  const signal = AbortSignal.timeout(50_000);
  setMaxListeners(0, signal);
  return { steps, events, journal: { record: (s) => void steps.push(s), steps: () => steps }, report: (e) => void events.push(e), signal };
}

const N = 12;

function objects(): KubeObject[] {
  const list: KubeObject[] = [];
  for (let i = 1; i <= N; i++) {
    const labels = { app: `web${i}` };
    list.push({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: `web${i}` },
      spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'registry.local/web:1' }] } } },
    });
    list.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `config${i}` }, data: { N: String(i) } });
    list.push({ apiVersion: 'v1', kind: 'Service', metadata: { name: `web${i}` }, spec: { selector: labels, ports: [{ port: 80 }] } });
  }
  return list;
}

describe(`${N} Deployments, ${N} ConfigMaps and ${N} Services in one namespace`, () => {
  it('are created, awaited and listed with one watch and one list per kind, and removed without a read each', async () => {
    const ns = 'requests-1';
    expect((await kubeRequest({ server: sandbox.url, token: sandbox.token, caPem: sandbox.caPem }, 'POST', '/api/v1/namespaces', { metadata: { name: ns } })).status).toBe(201);

    const versionNow = async () =>
      BigInt((await kubeRequest({ server: sandbox.url, token: sandbox.token, caPem: sandbox.caPem }, 'GET', `/api/v1/namespaces/${ns}/configmaps`)).json.metadata.resourceVersion);
    const before = await versionNow();
    seen = [];
    const ctx = context();
    const refs = await driver.deploy(ctx, { instanceId: 'inst-req', namespace: ns, objects: objects(), replicas: {} });
    expect(refs).toHaveLength(3 * N);
    // Behaviour first: every object created, every Deployment ready, every Service's endpoints ready.
    for (let i = 1; i <= N; i++) {
      const about = (kind: string, name: string) => ctx.events.filter((e) => e.resource?.kind === kind && e.resource.name === name).map((e) => e.message);
      expect(about('Deployment', `web${i}`)).toEqual(expect.arrayContaining(['created', 'ready']));
      expect(about('ConfigMap', `config${i}`)).toContain('created');
      expect(about('Service', `web${i}`)).toEqual(expect.arrayContaining(['created', 'endpoints ready']));
    }
    expect(count('POST', 'deployments') + count('POST', 'configmaps') + count('POST', 'services')).toBe(3 * N);
    // One watch for all the Deployments, from their creates' versions: no list, no read-back.
    expect(count('WATCH', 'deployments')).toBe(1);
    expect(count('LIST', 'deployments')).toBe(0);
    expect(count('GET', 'deployments')).toBe(0);
    // A ConfigMap and a Service are ready as their creates answer them: not watched at all.
    expect(count('WATCH', 'configmaps') + count('LIST', 'configmaps') + count('GET', 'configmaps')).toBe(0);
    // The Services' pods and endpoints: one list (and at most one watch) of each for the namespace, not one per Service.
    expect(count('LIST', 'pods')).toBe(1);
    expect(count('LIST', 'endpoints')).toBe(1);
    expect(count('WATCH', 'endpoints')).toBeLessThanOrEqual(1);
    expect(count('GET', 'endpoints')).toBe(0);

    seen = [];
    const vnfcs = await driver.listVnfcs(
      context(),
      Array.from({ length: N }, (_, k) => ({ vduId: `VDU${k + 1}`, resource: { apiVersion: 'apps/v1', kind: 'Deployment', name: `web${k + 1}`, namespace: ns } })),
    );
    expect(vnfcs).toHaveLength(N);
    expect(new Set(vnfcs.map((v) => v.vduId)).size).toBe(N);
    expect(vnfcs.every((v) => v.resourceId.startsWith(`${v.vduId.replace('VDU', 'web')}-`))).toBe(true);
    expect({ deployments: count('LIST', 'deployments'), replicasets: count('LIST', 'replicasets'), pods: count('LIST', 'pods') }).toEqual({
      deployments: 1,
      replicasets: 1,
      pods: 1,
    });
    expect(seen.filter((s) => s.verb === 'GET')).toEqual([]);
    // A kind the deploy's watches followed is listed no older than the latest version they saw of it (which the API server
    // answers from its watch cache of that kind): a version this deploy's objects made, not beyond the server's. ReplicaSets
    // were not watched: no version of theirs is known, and they are read as they are.
    const now = await versionNow();
    const asked = (kind: string) => seen.filter((s) => s.verb === 'LIST' && s.target === kind).map((s) => s.query.get('resourceVersion'));
    for (const kind of ['deployments', 'pods']) {
      const [rv] = asked(kind);
      expect(rv, kind).toMatch(/^[1-9]\d*$/);
      expect(BigInt(rv!), kind).toBeGreaterThan(before);
      expect(BigInt(rv!), kind).toBeLessThanOrEqual(now);
    }
    expect(asked('replicasets')).toEqual([null]);

    seen = [];
    const removal = context();
    await driver.remove(removal, { instanceId: 'inst-req', resources: refs, gracePeriodSeconds: 0 });
    for (const ref of refs) {
      expect(removal.events.filter((e) => e.resource?.kind === ref.kind && e.resource.name === ref.name).at(-1)).toMatchObject({ message: 'deleted', done: true });
    }
    expect(count('DELETE', 'deployments') + count('DELETE', 'configmaps') + count('DELETE', 'services')).toBe(3 * N);
    // What exists is read once per kind (a list), and the deletions are awaited on that kind's one watch.
    expect(seen.filter((s) => s.verb === 'GET')).toEqual([]);
    for (const kind of ['deployments', 'configmaps', 'services']) {
      expect(count('LIST', kind), kind).toBe(1);
      expect(count('WATCH', kind), kind).toBeLessThanOrEqual(1);
    }
    const left = await kubeRequest({ server: sandbox.url, token: sandbox.token, caPem: sandbox.caPem }, 'GET', `/apis/apps/v1/namespaces/${ns}/deployments`);
    expect(left.json.items).toEqual([]);
  });
});
