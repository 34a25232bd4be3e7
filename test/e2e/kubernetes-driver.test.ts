/**
 * The Kubernetes infra-driver against the in-process sandbox over HTTPS
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
import { createKubernetesDriver, INSTANCE_LABEL, KubeApiError, type KubeAccess, type KubeObject, type KubernetesDriver } from '../../src/infra/kubernetes/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

const SAMPLE = join(import.meta.dirname, '../../csar-samples/basic-cnf');

let sandbox: Sandbox;
let access: KubeAccess;
let driver: KubernetesDriver;

beforeAll(async () => {
  sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
  access = { server: sandbox.url, verifyTls: true, caCert: sandbox.caPem, bearerToken: sandbox.token };
  driver = createKubernetesDriver(access, { retry: { backoffMs: 5, maxBackoffMs: 20 } });
});

afterAll(async () => {
  driver?.close();
  await sandbox?.close();
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

/** The sandbox as a plain client sees it (not through the driver). */
function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const url = new URL(path, sandbox.url);
  const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method,
        ca: sandbox.caPem,
        headers: { Authorization: `Bearer ${sandbox.token}`, Accept: 'application/json', ...(data ? { 'Content-Type': 'application/json' } : {}) },
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
    await expect(run).rejects.toThrow(/does not serve example.com\/v1 \(needed for kind Widget\)/);
    const run2 = driver.deploy(context(), { instanceId: 'inst-u', namespace: 'unknown-1', objects: [{ apiVersion: 'v1', kind: 'Gadget', metadata: { name: 'g' } }], replicas: {} });
    await expect(run2).rejects.toThrow(/does not serve kind Gadget in v1/);
    expect((await api('GET', nsPath('unknown-1', 'configmaps', 'before'))).status).toBe(404);
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

export { loadManifests, SAMPLE, type ResourceRef };
