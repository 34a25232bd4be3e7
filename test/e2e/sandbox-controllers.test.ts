/**
 * What only the sandbox has: its fault switches, its bounded watch history
 * and bookmark timing, pod grace periods, the readiness delay option — and
 * the workload commands of the real kubectl 1.32 against it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, writeSandboxConfigs, type Sandbox } from '@vnfm/kube-sandbox';

const KUBECTL = '/usr/bin/kubectl';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: any;
}

function call(sb: Sandbox, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Reply> {
  const url = new URL(path, sb.url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = { Authorization: `Bearer ${sb.token}`, Accept: 'application/json' };
  if (payload) {
    headers['Content-Type'] = contentType;
    headers['Content-Length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ method, hostname: url.hostname, port: url.port, path: url.pathname + url.search, ca: sb.caPem, headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** Streams a watch; resolves when `until` holds, or when the server ends the stream. */
function watch(sb: Sandbox, path: string, until: (events: any[]) => boolean = () => false): Promise<{ events: any[]; ended: 'until' | 'end' | 'error' }> {
  const url = new URL(path, sb.url);
  return new Promise((resolve) => {
    const events: any[] = [];
    let buf = '';
    const req = httpsRequest({ hostname: url.hostname, port: url.port, path: url.pathname + url.search, ca: sb.caPem, headers: { Authorization: `Bearer ${sb.token}` } }, (res) => {
      res.on('data', (d: Buffer) => {
        buf += d.toString();
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          events.push(JSON.parse(buf.slice(0, nl)));
          buf = buf.slice(nl + 1);
          if (until(events)) {
            req.destroy();
            resolve({ events, ended: 'until' });
          }
        }
      });
      res.on('end', () => resolve({ events, ended: 'end' }));
      res.on('error', () => resolve({ events, ended: 'error' }));
    });
    req.on('error', () => resolve({ events, ended: 'error' }));
    req.end();
  });
}

const ready = (o: any): boolean => (o?.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');

function deployment(name: string, replicas: number): any {
  return {
    metadata: { name, labels: { app: name } },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } } },
  };
}

describe('sandbox faults and controllers', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ controllers: { readyDelayMs: 20 }, watch: { historyLimit: 50, bookmarkIntervalMs: 50 } });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('keeps a Deployment unavailable while it is under neverReady, and lets it go when lifted', async () => {
    const lift = sb.faults.neverReady({ kind: 'Deployment', name: 'stuck' });
    await call(sb, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('stuck', 1));
    const running = await watch(sb, '/api/v1/namespaces/default/pods?watch=1&labelSelector=app%3Dstuck', (ev) => ev.some((e) => e.object.status?.phase === 'Running'));
    expect(ready(running.events.at(-1)!.object)).toBe(false);
    const d = await call(sb, 'GET', '/apis/apps/v1/namespaces/default/deployments/stuck');
    expect(d.json.status.availableReplicas ?? 0).toBe(0);
    lift();
    const done = await watch(
      sb,
      '/apis/apps/v1/namespaces/default/deployments?watch=1&fieldSelector=metadata.name%3Dstuck',
      (ev) => ev.at(-1).object.status?.availableReplicas === 1,
    );
    expect(done.ended).toBe('until');
  });

  it('fails pods under failPods; their ReplicaSet replaces them once lifted', async () => {
    const lift = sb.faults.failPods({ labelSelector: 'app=flaky' });
    await call(sb, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('flaky', 1));
    const failed = await watch(sb, '/api/v1/namespaces/default/pods?watch=1&labelSelector=app%3Dflaky', (ev) => ev.some((e) => e.object.status?.phase === 'Failed'));
    expect(failed.ended).toBe('until');
    lift();
    const healed = await watch(
      sb,
      '/apis/apps/v1/namespaces/default/deployments?watch=1&fieldSelector=metadata.name%3Dflaky',
      (ev) => ev.at(-1).object.status?.readyReplicas === 1,
    );
    expect(healed.ended).toBe('until');
  });

  it('answers 429 with Retry-After, 500 and resets for as many requests as told', async () => {
    sb.faults.failRequests({ status: 429, count: 2, path: '/api/v1/namespaces/default/configmaps', retryAfterSeconds: 3 });
    const first = await call(sb, 'GET', '/api/v1/namespaces/default/configmaps');
    expect(first.status).toBe(429);
    expect(first.headers['retry-after']).toBe('3');
    expect(first.json).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429, details: { retryAfterSeconds: 3 } });
    expect((await call(sb, 'GET', '/api/v1/namespaces/default/configmaps')).status).toBe(429);
    expect((await call(sb, 'GET', '/api/v1/namespaces/default/configmaps')).status).toBe(200);

    const lift = sb.faults.failRequests({ status: 500, method: 'POST' });
    const refused = await call(sb, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'x' } });
    expect(refused.json).toMatchObject({ reason: 'InternalError', code: 500 });
    lift();
    sb.faults.failRequests({ status: 'reset', count: 1 });
    await expect(call(sb, 'GET', '/version')).rejects.toThrow();
    expect((await call(sb, 'GET', '/version')).status).toBe(200);
  });

  it('drops open watches, gracefully or abruptly', async () => {
    const open = watch(sb, '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0');
    await call(sb, 'GET', '/version');
    while ((await Promise.resolve(sb.faults.dropWatches())) === 0) await call(sb, 'GET', '/version');
    expect((await open).ended).toBe('end');
    const abrupt = watch(sb, '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0');
    while (sb.faults.dropWatches({ abrupt: true }) === 0) await call(sb, 'GET', '/version');
    expect((await abrupt).ended).not.toBe('until');
  });

  it('expires watch resumes older than its bounded history', async () => {
    const from = (await call(sb, 'GET', '/api/v1/namespaces/default/configmaps')).json.metadata.resourceVersion;
    for (let i = 0; i < 60; i++) await call(sb, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `h${i}` } });
    const { events } = await watch(sb, `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${from}`);
    expect(events).toEqual([{ type: 'ERROR', object: expect.objectContaining({ code: 410, reason: 'Expired' }) }]);
  });

  it('sends bookmarks when allowed, and marks the end of the initial events', async () => {
    const { events } = await watch(
      sb,
      '/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan',
      (ev) => ev.filter((e) => e.type === 'BOOKMARK').length >= 2,
    );
    const bookmarks = events.filter((e) => e.type === 'BOOKMARK');
    expect(bookmarks[0].object).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } } });
    expect(bookmarks[1].object.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(events.findIndex((e) => e.type === 'BOOKMARK')).toBeGreaterThan(0);
  });

  it('keeps a gracefully deleted pod Terminating for a while; gracePeriodSeconds=0 removes it at once', async () => {
    await call(sb, 'POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'graceful' }, spec: { containers: [{ name: 'm', image: 'busybox:1.36' }] } });
    await watch(sb, '/api/v1/namespaces/default/pods?watch=1&fieldSelector=metadata.name%3Dgraceful', (ev) => ready(ev.at(-1).object));
    const del = await call(sb, 'DELETE', '/api/v1/namespaces/default/pods/graceful');
    expect(del.json.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect(del.json.metadata.deletionGracePeriodSeconds).toBe(30);
    const gone = await watch(sb, `/api/v1/namespaces/default/pods?watch=1&fieldSelector=metadata.name%3Dgraceful&resourceVersion=${del.json.metadata.resourceVersion}`, (ev) =>
      ev.some((e) => e.type === 'DELETED'),
    );
    expect(gone.ended).toBe('until');

    await call(sb, 'POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'forced' }, spec: { containers: [{ name: 'm', image: 'busybox:1.36' }] } });
    await watch(sb, '/api/v1/namespaces/default/pods?watch=1&fieldSelector=metadata.name%3Dforced', (ev) => ready(ev.at(-1).object));
    await call(sb, 'DELETE', '/api/v1/namespaces/default/pods/forced?gracePeriodSeconds=0');
    expect((await call(sb, 'GET', '/api/v1/namespaces/default/pods/forced')).status).toBe(404);
  });

  it('deletes the workloads of a deleted namespace, then the namespace', async () => {
    await call(sb, 'POST', '/api/v1/namespaces', { metadata: { name: 'doomed' } });
    await call(sb, 'POST', '/apis/apps/v1/namespaces/doomed/deployments', deployment('w', 2));
    await watch(sb, '/apis/apps/v1/namespaces/doomed/deployments?watch=1', (ev) => ev.at(-1).object.status?.readyReplicas === 2);
    const sa = await call(sb, 'GET', '/api/v1/namespaces/doomed/serviceaccounts/default');
    expect(sa.status).toBe(200);
    const del = await call(sb, 'DELETE', '/api/v1/namespaces/doomed');
    const gone = await watch(sb, `/api/v1/namespaces?watch=1&fieldSelector=metadata.name%3Ddoomed&resourceVersion=${del.json.metadata.resourceVersion}`, (ev) =>
      ev.some((e) => e.type === 'DELETED'),
    );
    expect(gone.ended).toBe('until');
    expect((await call(sb, 'GET', '/api/v1/pods?labelSelector=app%3Dw')).json.items).toEqual([]);
  });
});

describe('kubectl 1.32 workload commands against the sandbox', () => {
  let sb: Sandbox;
  let kubeconfig: string;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vnfm-sandbox-kubectl-'));
    sb = await startSandbox({ controllers: { readyDelayMs: 20 } });
    kubeconfig = join(dir, 'kubeconfig');
    writeSandboxConfigs(sb, { kubeconfigPath: kubeconfig });
  });
  afterAll(async () => {
    await sb?.close();
  });

  function kubectl(args: string[], input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(KUBECTL, args, { env: { PATH: process.env['PATH'], HOME: dir, KUBECONFIG: kubeconfig }, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(input ?? '');
    });
  }

  const manifest = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: "nginx:1.27"}]}
`;

  it('applies server-side, waits for the rollout, scales and deletes in the foreground', async () => {
    const applied = await kubectl(['apply', '--server-side', '-f', '-'], manifest);
    expect(applied.stderr).toBe('');
    expect(applied.stdout).toBe('deployment.apps/web serverside-applied\n');
    const rollout = await kubectl(['rollout', 'status', 'deployment/web', '--timeout=30s']);
    expect(rollout.code).toBe(0);
    expect(rollout.stdout).toContain('deployment "web" successfully rolled out');
    const scaled = await kubectl(['scale', 'deployment/web', '--replicas=3']);
    expect(scaled.stdout).toBe('deployment.apps/web scaled\n');
    expect((await kubectl(['rollout', 'status', 'deployment/web', '--timeout=30s'])).code).toBe(0);
    const conflict = await kubectl(['apply', '--server-side', '-f', '-'], manifest);
    expect(conflict.code).not.toBe(0);
    expect(conflict.stderr).toContain('conflict');
    expect((await kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], manifest)).code).toBe(0);
    const deleted = await kubectl(['delete', 'deployment/web', '--cascade=foreground', '--timeout=30s']);
    expect(deleted.stdout).toBe('deployment.apps "web" deleted\n');
    expect((await kubectl(['get', 'pods', '-o', 'name'])).stdout).toBe('');
  });

  it('streams changes with get -w', async () => {
    const child = spawn(KUBECTL, ['get', 'configmaps', '-w', '--output-watch-events'], { env: { PATH: process.env['PATH'], HOME: dir, KUBECONFIG: kubeconfig } });
    let out = '';
    const seen = new Promise<void>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (/DELETED\s+watched/.test(out)) resolve();
      });
    });
    // The first line is the header of the initial list: the watch is open after it.
    while (!out.includes('EVENT')) await new Promise<void>((r) => child.stdout.once('data', () => r()));
    await kubectl(['create', 'configmap', 'watched']);
    await kubectl(['delete', 'configmap', 'watched']);
    await seen;
    child.kill();
    expect(out).toMatch(/ADDED\s+watched/);
  });
});
