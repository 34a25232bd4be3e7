/**
 * The one module that imports @kubernetes/client-node. It builds the client
 * configuration in memory from a VIM's settings and secrets: the CA and
 * client keys never touch the disk. It also holds the driver's wire to the
 * API server (createKubeTransport), authenticated through that same
 * configuration.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { VimCheckError } from '../../errors.js';

/** Everything needed to talk to one API server. */
export interface KubeAccess {
  server: string;
  verifyTls: boolean;
  /** PEM; absent means the system's trusted CAs. */
  caCert?: string;
  bearerToken?: string;
  username?: string;
  password?: string;
  clientCert?: string;
  clientKey?: string;
}

export interface KubeCheckResult {
  gitVersion: string;
  namespaces: string[];
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

export function makeKubeConfig(access: KubeAccess): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'vim',
        server: access.server,
        skipTLSVerify: !access.verifyTls,
        ...(access.caCert ? { caData: b64(access.caCert) } : {}),
      },
    ],
    users: [
      {
        name: 'vim',
        ...(access.bearerToken ? { token: access.bearerToken } : {}),
        ...(access.username ? { username: access.username, password: access.password } : {}),
        ...(access.clientCert ? { certData: b64(access.clientCert), keyData: b64(access.clientKey ?? '') } : {}),
      },
    ],
    contexts: [{ name: 'vim', cluster: 'vim', user: 'vim' }],
    currentContext: 'vim',
  });
  return kc;
}

/**
 * Checks that the API server answers with these credentials: its version,
 * then the namespace list (which needs an authenticated, authorised user).
 */
export async function checkKubernetesAccess(access: KubeAccess, opts: { timeoutMs?: number } = {}): Promise<KubeCheckResult> {
  const kc = makeKubeConfig(access);
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const version = await withTimeout(kc.makeApiClient(k8s.VersionApi).getCode(), timeoutMs, access.server).catch((err) => {
    throw explain(err, access, 'read the server version');
  });
  const list = await withTimeout(kc.makeApiClient(k8s.CoreV1Api).listNamespace(), timeoutMs, access.server).catch((err) => {
    throw explain(err, access, 'list namespaces');
  });
  return {
    gitVersion: version.gitVersion,
    namespaces: list.items.map((ns) => ns.metadata?.name ?? '').filter(Boolean),
  };
}

function withTimeout<T>(p: Promise<T>, ms: number, server: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer from ${server} within ${ms / 1000}s`), { code: 'ETIMEDOUT' })), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'EPROTO',
]);

/** The innermost `code` in an error's cause chain (fetch wraps socket errors). */
function errorCode(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) {
    if (typeof e.code === 'string') return e.code;
  }
  return undefined;
}

function explain(err: unknown, access: KubeAccess, what: string): VimCheckError {
  const server = access.server;
  if (err instanceof k8s.ApiException) {
    const credential = access.bearerToken ? 'bearer token' : access.clientCert ? 'client certificate' : 'username and password';
    if (err.code === 401) {
      return new VimCheckError(`the API server at ${server} rejected the ${credential} (401 Unauthorized)`, {
        hint: access.bearerToken
          ? 'check bearer_token: ServiceAccount tokens expire; make a new one with: kubectl create token SA -n NS'
          : 'check the credentials in the config file',
      });
    }
    if (err.code === 403) {
      return new VimCheckError(`the API server at ${server} accepted the ${credential} but does not allow it to ${what} (403 Forbidden)`, {
        hint: 'bind the user or ServiceAccount to a role that can list namespaces and manage workloads',
      });
    }
    return new VimCheckError(`the API server at ${server} answered ${err.code} when asked to ${what}`, { cause: err });
  }
  const code = errorCode(err);
  if (code && TLS_CODES.has(code)) {
    return new VimCheckError(`the TLS certificate of ${server} could not be verified (${code})`, {
      hint: access.caCert
        ? 'ssl_ca_cert is not the CA that signed the API server certificate: use the cluster CA (certificate-authority-data in its kubeconfig)'
        : 'give the cluster CA as ssl_ca_cert, or ssl_ca_cert: None to skip verification',
    });
  }
  if (code === 'ETIMEDOUT') return new VimCheckError(`no answer from ${server}`, { hint: 'check auth_url and that the cluster is reachable from here' });
  return new VimCheckError(`cannot reach ${server}${code ? ` (${code})` : ''}: ${(err as Error).message ?? String(err)}`, {
    hint: 'check auth_url and that the API server is running; skip this check with --no-check',
  });
}

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
}

export interface KubeHttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON answer, or the raw text when it was not JSON. */
  body: unknown;
}

/**
 * The raw wire to one API server: requests and line-delimited streams
 * (watches). Authentication and TLS come from the VIM's settings through
 * client-node's KubeConfig, in memory. Transport failures reject with the
 * socket's error (its `code` says which); HTTP errors resolve with their
 * status, so the caller decides what is worth a retry.
 */
export interface KubeTransport {
  request(req: KubeHttpRequest): Promise<KubeHttpResponse>;
  /**
   * Opens a streaming GET and hands each complete line to `onLine`. Resolves
   * when the server ends the stream; a non-2xx answer resolves as a response
   * without streaming, so the caller can read its Status.
   */
  stream(req: KubeHttpRequest, onLine: (line: string) => void): Promise<KubeHttpResponse | undefined>;
  /** Closes idle keep-alive connections. */
  close(): void;
}

interface WireOptions {
  headers: Record<string, string>;
  agent: http.Agent;
  auth?: string;
  url: URL;
  secure: boolean;
}

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
      const kc = makeKubeConfig(access);
      const opts: https.RequestOptions = { headers: {} };
      await kc.applyToHTTPSOptions(opts);
      const url = new URL(access.server);
      const secure = url.protocol === 'https:';
      const agentOpts = { keepAlive: true, ca: opts.ca, cert: opts.cert, key: opts.key, rejectUnauthorized: opts.rejectUnauthorized ?? true };
      const agent = secure ? new https.Agent(agentOpts) : new http.Agent({ keepAlive: true });
      return { headers: { ...(opts.headers as Record<string, string>) }, agent, auth: opts.auth ?? undefined, url, secure };
    })());

  const open = async (req: KubeHttpRequest, accept: string, idleTimeoutMs: number) => {
    const w = await wireOptions();
    const path = w.url.pathname.replace(/\/$/, '') + req.path + queryString(req.query);
    const body = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body), 'utf8');
    const headers: Record<string, string> = { ...w.headers, Accept: accept };
    if (body) {
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = String(body.length);
    }
    const options = { method: req.method, hostname: w.url.hostname, port: w.url.port || (w.secure ? 443 : 80), path, headers, agent: w.agent, auth: w.auth, signal: req.signal };
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
      const res = await open(req, 'application/json', req.idleTimeoutMs ?? (serverTimeout + 30) * 1000);
      if ((res.statusCode ?? 0) >= 300) return readAll(res);
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
      void wire?.then((w) => w.agent.destroy());
    },
  };
}

function queryString(query: KubeHttpRequest['query']): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.append(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}
