/**
 * The driver's wire to one API server: HTTPS requests and line-delimited
 * streams, authenticated from the VIM's settings in memory (the CA and client
 * keys never touch the disk). It does not load @kubernetes/client-node (a
 * large module, about half a second to load on a busy machine): the TLS
 * options and the Authorization header are those client-node's KubeConfig
 * would give for the same settings (kube-api.ts, makeKubeConfig).
 */
import * as http from 'node:http';
import * as https from 'node:https';
import * as tls from 'node:tls';
import type { KubeAccess } from './kube-api.js';

/** One HTTP exchange with the API server, as the driver's client sees it. */
export interface KubeHttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** An absolute API path, e.g. `/apis/apps/v1/namespaces/ns/deployments`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** Sent as JSON (a server-side apply body is JSON too: JSON is YAML). */
  body?: unknown;
  /** Defaults to application/json when there is a body. */
  contentType?: string;
  signal?: AbortSignal;
  /**
   * The connection is cut (ETIMEDOUT) when nothing arrives for this long:
   * a server that stopped answering is then retried instead of waited on
   * forever. Defaults: 60 s for a request, for a stream 30 s beyond the
   * `timeoutSeconds` it asked the server for (or 10 minutes).
   */
  idleTimeoutMs?: number;
  /**
   * A stream's lines as sent, neither trimmed nor the blank ones dropped,
   * each also handed on as its bytes (which need not be UTF-8): a
   * container's log.
   */
  rawLines?: boolean;
}

export interface KubeHttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON answer, or the raw text when it was not JSON. */
  body: unknown;
}

/**
 * The raw wire to one API server: requests and line-delimited streams
 * (watches). Authentication and TLS come from the VIM's settings, in memory. Transport failures reject with the
 * socket's error (its `code` says which); HTTP errors resolve with their
 * status, so the caller decides what is worth a retry.
 */
export interface KubeTransport {
  request(req: KubeHttpRequest): Promise<KubeHttpResponse>;
  /**
   * Opens a streaming GET and hands each complete line to `onLine` (with
   * `rawLines`, also its bytes, without the newline). Resolves when the
   * server ends the stream; a non-2xx answer resolves as a response without
   * streaming, so the caller can read its Status.
   */
  stream(req: KubeHttpRequest, onLine: (line: string, bytes?: Buffer) => void): Promise<KubeHttpResponse | undefined>;
  /** Closes idle keep-alive connections. */
  close(): void;
}

interface WireOptions {
  headers: Record<string, string>;
  /** Requests: at most REQUEST_SOCKETS connections, kept open between requests. */
  agent: http.Agent;
  /** Watch streams: each holds its connection for as long as it lasts, so they never queue behind requests. */
  streams: http.Agent;
  auth?: string;
  url: URL;
  secure: boolean;
}

/**
 * Connections for requests to one API server. Each new connection costs a
 * TLS handshake on both ends, and more than a few in flight do not make a
 * server answer sooner: the driver's 16 parallel writes share these.
 */
const REQUEST_SOCKETS = 6;

/**
 * The driver's seam to the API server. Plain HTTPS rather than client-node's
 * typed API classes: those turn objects into generated models (dropping
 * fields they do not know), hide Retry-After, and cannot reach `/scale` of
 * an arbitrary kind; a driver for "any kind the cluster serves" needs the
 * objects exactly as served.
 */
export function createKubeTransport(access: KubeAccess): KubeTransport {
  let wire: Promise<WireOptions> | undefined;
  const wireOptions = (): Promise<WireOptions> =>
    (wire ??= (async () => {
      const url = new URL(access.server);
      const secure = url.protocol === 'https:';
      const pem = (text: string | undefined) => (text ? Buffer.from(text, 'utf8') : undefined);
      const ca = pem(access.caCert);
      const cert = pem(access.clientCert);
      const key = access.clientCert ? pem(access.clientKey) : undefined;
      // One TLS context (the CA parsed, the client key loaded) for every connection, not one per connection.
      const agentOpts = { keepAlive: true, ca, cert, key, rejectUnauthorized: access.verifyTls, ...(secure ? { secureContext: tls.createSecureContext({ ca, cert, key }) } : {}) };
      const make = (maxSockets: number) => (secure ? new https.Agent({ ...agentOpts, maxSockets }) : new http.Agent({ keepAlive: true, maxSockets }));
      const agent = make(REQUEST_SOCKETS);
      const streams = make(Infinity);
      const headers: Record<string, string> = access.bearerToken ? { Authorization: `Bearer ${access.bearerToken}` } : {};
      const auth = access.username ? `${access.username}:${access.password ?? ''}` : undefined;
      return { headers, agent, streams, auth, url, secure };
    })());

  const open = async (req: KubeHttpRequest, accept: string, idleTimeoutMs: number, streaming = false) => {
    const w = await wireOptions();
    const path = w.url.pathname.replace(/\/$/, '') + req.path + queryString(req.query);
    const body = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body), 'utf8');
    const headers: Record<string, string> = { ...w.headers, Accept: accept };
    if (body) {
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = String(body.length);
    }
    const options = {
      method: req.method,
      hostname: w.url.hostname,
      port: w.url.port || (w.secure ? 443 : 80),
      path,
      headers,
      agent: streaming ? w.streams : w.agent,
      auth: w.auth,
      signal: req.signal,
    };
    return new Promise<http.IncomingMessage>((resolve, reject) => {
      const r = (w.secure ? https : http).request(options, resolve);
      r.setTimeout(idleTimeoutMs, () => r.destroy(Object.assign(new Error(`no data from ${access.server} for ${idleTimeoutMs / 1000}s`), { code: 'ETIMEDOUT' })));
      r.on('error', reject);
      r.end(body);
    });
  };

  const readAll = (res: http.IncomingMessage): Promise<KubeHttpResponse> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // Not JSON (a proxy's HTML error page, say): keep the text for the message.
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });

  return {
    async request(req) {
      return readAll(await open(req, 'application/json', req.idleTimeoutMs ?? 60_000));
    },
    async stream(req, onLine) {
      const serverTimeout = Number(req.query?.timeoutSeconds ?? 570);
      const res = await open(req, 'application/json', req.idleTimeoutMs ?? (serverTimeout + 30) * 1000, true);
      if ((res.statusCode ?? 0) >= 300) return readAll(res);
      if (req.rawLines) return rawLineStream(res, onLine);
      return new Promise<undefined>((resolve, reject) => {
        let pending = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          pending += chunk;
          let nl: number;
          while ((nl = pending.indexOf('\n')) >= 0) {
            const line = pending.slice(0, nl).trim();
            pending = pending.slice(nl + 1);
            if (line) onLine(line);
          }
        });
        res.on('error', reject);
        res.on('aborted', () => reject(Object.assign(new Error('the watch connection was cut'), { code: 'ECONNRESET' })));
        res.on('end', () => {
          if (pending.trim()) onLine(pending.trim());
          resolve(undefined);
        });
      });
    },
    close() {
      void wire?.then((w) => {
        w.agent.destroy();
        w.streams.destroy();
      });
    },
  };
}

/** A stream's lines as bytes, split at each newline only (a line may end in a CR, or not be UTF-8); the last one also when no newline ends it. */
function rawLineStream(res: http.IncomingMessage, onLine: (line: string, bytes: Buffer) => void): Promise<undefined> {
  return new Promise<undefined>((resolve, reject) => {
    let pending: Buffer = Buffer.alloc(0);
    const hand = (bytes: Buffer) => onLine(bytes.toString('utf8'), bytes);
    res.on('data', (chunk: Buffer) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      let from = 0;
      for (let nl = pending.indexOf(0x0a); nl >= 0; nl = pending.indexOf(0x0a, from)) {
        hand(pending.subarray(from, nl));
        from = nl + 1;
      }
      // The rest is copied: the chunk it came from is not kept alive by it.
      pending = Buffer.from(pending.subarray(from));
    });
    res.on('error', reject);
    res.on('aborted', () => reject(Object.assign(new Error('the watch connection was cut'), { code: 'ECONNRESET' })));
    res.on('end', () => {
      if (pending.length) hand(pending);
      resolve(undefined);
    });
  });
}

function queryString(query: KubeHttpRequest['query']): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.append(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}
