/**
 * A minimal Kubernetes API client over raw HTTPS (CA verified, bearer
 * token) for test infrastructure that must not share code with the product's
 * own client: requests with JSON bodies, and watches that hand each event to
 * a callback.
 */
import { request as httpsRequest, type RequestOptions } from 'node:https';

/** Where a cluster's API is and how to authenticate to it. */
export interface KubeEndpoint {
  /** `https://127.0.0.1:PORT` */
  server: string;
  /** A bearer token the API server accepts. */
  token: string;
  /** PEM of the CA that signed the API server's serving certificate. */
  caPem: string;
}

export interface KubeReply {
  status: number;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  json: any;
  text: string;
}

export interface KubeWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: any;
}

/** A running watch; `done` settles when the server ends the stream or `stop()` is called. */
export interface KubeWatch {
  stop(): void;
  done: Promise<void>;
}

function requestOptions(endpoint: KubeEndpoint, method: string, path: string, headers: Record<string, string>): RequestOptions {
  const url = new URL(endpoint.server);
  return {
    method,
    hostname: url.hostname,
    port: url.port || 443,
    path,
    ca: endpoint.caPem,
    headers: { Authorization: `Bearer ${endpoint.token}`, Accept: 'application/json', ...headers },
  };
}

/**
 * Sends one request. `body` is sent as JSON unless it is a string;
 * `contentType` defaults to `application/json` (use
 * `application/merge-patch+json` etc. for PATCH).
 */
export function kubeRequest(endpoint: KubeEndpoint, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<KubeReply> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string> = payload === undefined ? {} : { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(payload)) };
  return new Promise((resolve, reject) => {
    const req = httpsRequest(requestOptions(endpoint, method, path, headers), (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, json, text });
      });
      res.on('error', reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/**
 * Watches `collectionPath` (query in `query`, `watch=1` added) and calls
 * `onEvent` for each event in order. The stream is not resumed: the caller
 * decides what to do when `done` settles (list again, or watch again from the
 * last resourceVersion).
 */
export function kubeWatch(endpoint: KubeEndpoint, collectionPath: string, query: Record<string, string>, onEvent: (e: KubeWatchEvent) => void): KubeWatch {
  const qs = new URLSearchParams({ ...query, watch: '1', allowWatchBookmarks: 'true' }).toString();
  let stop: () => void = () => {};
  const done = new Promise<void>((resolve, reject) => {
    let buffer = '';
    let stopped = false;
    const req = httpsRequest(requestOptions(endpoint, 'GET', `${collectionPath}?${qs}`, {}), (res) => {
      if (res.statusCode !== 200) {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => reject(new Error(`watch ${collectionPath}: HTTP ${res.statusCode}: ${text}`)));
        return;
      }
      res.on('data', (d: Buffer) => {
        buffer += d.toString();
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (line) onEvent(JSON.parse(line) as KubeWatchEvent);
        }
      });
      res.on('end', () => resolve());
      res.on('error', (err) => (stopped ? resolve() : reject(err)));
    });
    req.on('error', (err) => (stopped ? resolve() : reject(err)));
    req.end();
    stop = () => {
      stopped = true;
      req.destroy();
      resolve();
    };
  });
  return { stop: () => stop(), done };
}

/** A request whose answer must succeed: its JSON, or an error naming the request and the server's answer. */
export async function kubeJson(endpoint: KubeEndpoint, method: string, path: string, body?: unknown, contentType?: string): Promise<any> {
  const r = await kubeRequest(endpoint, method, path, body, contentType);
  if (r.status >= 300) throw new Error(`${method} ${path}: HTTP ${r.status}: ${r.text}`);
  return r.json;
}

/** Probes every `everyMs` until the probe gives a value, or fails naming `what` after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
