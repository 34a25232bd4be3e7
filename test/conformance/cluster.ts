/**
 * The cluster the conformance suite runs against: a fresh in-process
 * sandbox by default, or the cluster of the kubeconfig named by
 * VNFM_CONFORMANCE_KUBECONFIG (its current context). Either way the tests
 * work in a throw-away namespace and reach the API through a kubeconfig,
 * with raw HTTPS requests, so that what they check is the wire behaviour.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { inject } from 'vitest';
import type {} from '../support/real-apiserver-setup.js';
import { startSandbox, writeSandboxConfigs, type Sandbox } from '@vnfm/kube-sandbox';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: any;
  text: string;
}

export interface RequestOpts {
  body?: unknown;
  contentType?: string;
  accept?: string;
}

export interface WatchEvent {
  type: string;
  object: any;
}

export interface Cluster {
  kc: k8s.KubeConfig;
  /** The throw-away namespace of this test file. */
  namespace: string;
  /** Set when the suite runs against an in-process sandbox. */
  sandbox?: Sandbox;
  /** The server's `/version`, for behaviour that changed between Kubernetes releases. */
  version: ServerVersion;
  request(method: string, path: string, opts?: RequestOpts): Promise<Reply>;
  /**
   * Watches `collectionPath` (with `query`) until `until` returns true for
   * an event; resolves with the events seen. Rejects after `timeoutMs`.
   */
  watch(collectionPath: string, query: Record<string, string>, until: (e: WatchEvent, all: WatchEvent[]) => boolean, timeoutMs?: number): Promise<WatchEvent[]>;
  /** Watches one object until `ready(object)` holds (or, with `gone`, until it is deleted). */
  waitFor(collectionPath: string, name: string, ready: (obj: any) => boolean, timeoutMs?: number): Promise<any>;
  waitForGone(collectionPath: string, name: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface ServerVersion {
  gitVersion: string;
  major: number;
  /** `minor` as a number (`"25+"` → 25). */
  minor: number;
}

/**
 * Since when `/apis` serves aggregated discovery as apidiscovery.k8s.io/v2
 * (beta v2beta1 from 1.27, GA v2 in 1.30); an older server answers the
 * Accept header's fallback, the APIGroupList.
 */
export const AGGREGATED_DISCOVERY_V2: [number, number] = [1, 30];

/**
 * Since when a path in an API group nobody serves is answered with a JSON
 * Status 404 (kubernetes/kubernetes#138219); before, the server's catch-all
 * answers plain text `404 page not found`.
 */
export const JSON_NOT_FOUND_FOR_UNKNOWN_GROUPS: [number, number] = [1, 38];

/** Whether the server is Kubernetes `major.minor` or later. */
export function atLeast(v: ServerVersion, major: number, minor: number): boolean {
  return v.major > major || (v.major === major && v.minor >= minor);
}

/**
 * Runs against a real cluster when this names a kubeconfig: the one of
 * VNFM_CONFORMANCE_KUBECONFIG, or in the real-apiserver test project the
 * control plane its global setup started.
 */
export const REAL_CLUSTER_KUBECONFIG = process.env['VNFM_CONFORMANCE_KUBECONFIG'] ?? inject('realCluster')?.kubeconfigPath;

/**
 * Raw HTTPS requests to the current cluster of `kc`, with its credentials:
 * what the conformance tests and the fidelity report send.
 */
export function requester(kc: k8s.KubeConfig): (method: string, path: string, opts?: RequestOpts) => Promise<Reply> {
  const server = new URL(kc.getCurrentCluster()!.server);
  return async (method, path, opts = {}) => {
    const payload = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    const headers: Record<string, string> = { Accept: opts.accept ?? 'application/json' };
    if (payload !== undefined) {
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    const reqOpts: RequestOptions = { method, hostname: server.hostname, port: server.port || 443, path, headers };
    await kc.applyToHTTPSOptions(reqOpts);
    return new Promise((resolve, reject) => {
      const req = httpsRequest(reqOpts, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => {
          let json: any;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json, text });
        });
      });
      req.on('error', reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  };
}

export async function connect(prefix: string): Promise<Cluster> {
  let sandbox: Sandbox | undefined;
  let dir: string | undefined;
  const kc = new k8s.KubeConfig();
  if (REAL_CLUSTER_KUBECONFIG) {
    kc.loadFromFile(REAL_CLUSTER_KUBECONFIG);
  } else {
    dir = mkdtempSync(join(tmpdir(), 'vnfm-conformance-'));
    sandbox = await startSandbox({ controllers: { readyDelayMs: 30 } });
    const path = join(dir, 'kubeconfig');
    writeSandboxConfigs(sandbox, { kubeconfigPath: path });
    kc.loadFromFile(path);
  }
  const server = new URL(kc.getCurrentCluster()!.server);

  async function options(method: string, path: string, headers: Record<string, string>): Promise<RequestOptions> {
    const opts: RequestOptions = { method, hostname: server.hostname, port: server.port || 443, path, headers };
    await kc.applyToHTTPSOptions(opts);
    return opts;
  }

  const request = requester(kc);

  async function watch(collectionPath: string, query: Record<string, string>, until: (e: WatchEvent, all: WatchEvent[]) => boolean, timeoutMs = 20_000): Promise<WatchEvent[]> {
    const qs = new URLSearchParams({ ...query, watch: '1' }).toString();
    const reqOpts = await options('GET', `${collectionPath}?${qs}`, { Accept: 'application/json' });
    return new Promise((resolve, reject) => {
      const events: WatchEvent[] = [];
      let buffer = '';
      let done = false;
      const finish = (err?: Error): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        req.destroy();
        if (err) reject(err);
        else resolve(events);
      };
      const timer = setTimeout(
        () => finish(new Error(`watch of ${collectionPath} ${qs} timed out; events: ${JSON.stringify(events.map((e) => [e.type, e.object?.metadata?.name, e.object?.status]))}`)),
        timeoutMs,
      );
      const req = httpsRequest(reqOpts, (res) => {
        res.on('data', (d: Buffer) => {
          buffer += d.toString();
          let nl: number;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl).trim();
            buffer = buffer.slice(nl + 1);
            if (!line) continue;
            const event = JSON.parse(line) as WatchEvent;
            events.push(event);
            if (until(event, events)) finish();
          }
        });
        res.on('end', () => finish());
      });
      req.on('error', (err) => finish(done ? undefined : err));
      req.end();
    });
  }

  async function waitFor(collectionPath: string, name: string, ready: (obj: any) => boolean, timeoutMs = 20_000): Promise<any> {
    const events = await watch(collectionPath, { fieldSelector: `metadata.name=${name}` }, (e) => e.type !== 'DELETED' && e.type !== 'ERROR' && ready(e.object), timeoutMs);
    return events[events.length - 1]!.object;
  }

  async function waitForGone(collectionPath: string, name: string, timeoutMs = 20_000): Promise<void> {
    const current = await request('GET', `${collectionPath}/${name}`);
    if (current.status === 404) return;
    await watch(collectionPath, { fieldSelector: `metadata.name=${name}`, resourceVersion: current.json.metadata.resourceVersion }, (e) => e.type === 'DELETED', timeoutMs);
  }

  const v = await request('GET', '/version');
  if (v.status !== 200) throw new Error(`GET /version: HTTP ${v.status}: ${v.text}`);
  const version: ServerVersion = { gitVersion: String(v.json.gitVersion), major: parseInt(v.json.major, 10), minor: parseInt(v.json.minor, 10) };

  const namespace = `${prefix}-${randomBytes(3).toString('hex')}`;
  const created = await request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } });
  if (created.status !== 201) throw new Error(`could not create namespace ${namespace}: ${created.text}`);
  // A real server refuses Pods until the service account controller made the namespace's `default` ServiceAccount.
  for (let waited = 0; (await request('GET', `/api/v1/namespaces/${namespace}/serviceaccounts/default`)).status !== 200; waited += 100) {
    if (waited > 20_000) throw new Error(`namespace ${namespace} got no default ServiceAccount in 20 s`);
    await new Promise((r) => setTimeout(r, 100));
  }

  return {
    kc,
    namespace,
    ...(sandbox ? { sandbox } : {}),
    version,
    request,
    watch,
    waitFor,
    waitForGone,
    async close() {
      await request('DELETE', `/api/v1/namespaces/${namespace}`);
      await sandbox?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Reads `path`, changes the object with `change` and writes it back with
 * PUT to `path` + `putSuffix` (e.g. `/status`), reading again after a 409
 * Conflict, as any client must where controllers write the same object:
 * on a real cluster they do at any moment.
 */
export async function readModifyWrite(c: Cluster, path: string, change: (obj: any) => any, putSuffix = ''): Promise<Reply> {
  for (let attempt = 1; ; attempt++) {
    const current = await c.request('GET', path);
    if (current.status !== 200) throw new Error(`GET ${path}: HTTP ${current.status}: ${current.text}`);
    const written = await c.request('PUT', `${path}${putSuffix}`, { body: change(current.json) });
    if (written.status !== 409 || attempt === 10) return written;
  }
}

/** A small Deployment manifest. */
export function deployment(name: string, replicas = 2, image = 'nginx:1.27'): any {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image, ports: [{ containerPort: 80 }] }] } },
    },
  };
}

/** A condition of `type` with status True, in `obj.status.conditions`. */
export function hasCondition(obj: any, type: string): boolean {
  return (obj?.status?.conditions ?? []).some((c: any) => c.type === type && c.status === 'True');
}
