/**
 * Keystone v3: the one module that speaks Keystone's HTTP API. It issues
 * tokens (password or application credential), reads the service catalog,
 * and checks an OpenStack VIM before it is registered.
 *
 * The VIM's CA certificate is handed to TLS in memory; it is never written
 * to a file.
 */
import { X509Certificate } from 'node:crypto';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { VimCheckError } from '../../errors.js';

/** How to reach and authenticate to a Keystone v3 endpoint. */
export interface KeystoneCredentials {
  /** `http(s)://host:5000/v3`, or without `/v3`, which is then appended (as Tacker does). */
  authUrl: string;
  auth: KeystonePasswordAuth | KeystoneApplicationCredentialAuth;
  /** PEM bundle to verify the server with, instead of the system's CAs. */
  caCert?: string;
  /** `false` only when the operator asked for an insecure connection explicitly. */
  verifyTls: boolean;
  /** Region whose endpoints `checkOpenStackVim` picks. */
  regionName?: string;
}

/**
 * Password auth, scoped to a project. A user or project given by name is
 * looked up in its domain (by name, `Default` when none is given).
 */
export interface KeystonePasswordAuth {
  method: 'password';
  username?: string;
  userId?: string;
  userDomainName?: string;
  password: string;
  projectName?: string;
  projectId?: string;
  projectDomainName?: string;
}

/**
 * An application credential, by id, or by name with its owner. It is bound
 * to the project it was created in, so it takes no scope.
 */
export interface KeystoneApplicationCredentialAuth {
  method: 'application-credential';
  id?: string;
  name?: string;
  username?: string;
  userDomainName?: string;
  secret: string;
}

/** One endpoint of a catalog entry. */
export interface CatalogEndpoint {
  id?: string;
  interface: string;
  region?: string;
  url: string;
}

/** One service of the catalog, e.g. `{ type: 'orchestration', name: 'heat' }`. */
export interface CatalogEntry {
  id?: string;
  type: string;
  name?: string;
  endpoints: CatalogEndpoint[];
}

/** An issued token. Keep it in memory only: it is a credential. */
export interface KeystoneToken {
  token: string;
  expiresAt: Date;
  /** The project the token is scoped to, if any. */
  projectId?: string;
  catalog: CatalogEntry[];
}

export interface KeystoneRequestOptions {
  /** Aborts the request; the signal's reason is thrown as is. */
  signal?: AbortSignal;
  /** Per request; default 30 s. */
  timeoutMs?: number;
}

/** What `checkOpenStackVim` found. */
export interface OpenStackVimCheck {
  projectId: string;
  /** The public Heat endpoint of the token's project (in `regionName` when given). */
  orchestrationEndpoint: string;
  /** Identity API version Keystone reports, e.g. `v3.14`. */
  identityVersion: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** A catalog is a few KiB; anything near this is not Keystone. */
const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
const DEFAULT_DOMAIN = 'Default';

const TLS_HINT =
  'give the CA certificate that signed the Keystone certificate as ssl_ca_cert (PEM), ' +
  'or set cert_verify: False to skip verification (insecure)';

/** Keystone v3 URL from what the operator wrote: trailing slashes dropped, `/v3` appended when missing. */
export function keystoneV3Url(authUrl: string): string {
  let url: URL;
  try {
    url = new URL(authUrl.trim());
  } catch {
    throw new VimCheckError(`auth_url "${authUrl}" is not a URL`, { hint: 'write it as http(s)://host:5000/v3' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new VimCheckError(`auth_url "${authUrl}" is not an http or https URL`, { hint: 'write it as http(s)://host:5000/v3' });
  }
  url.search = '';
  url.hash = '';
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path.endsWith('/v3') ? path : `${path}/v3`;
  return url.toString();
}

/** Issues a token; throws VimCheckError saying what Keystone, the network or TLS refused. */
export async function issueToken(creds: KeystoneCredentials, opts: KeystoneRequestOptions = {}): Promise<KeystoneToken> {
  const base = keystoneV3Url(creds.authUrl);
  const tokensUrl = `${base}/auth/tokens`;
  const res = await send(creds, 'POST', tokensUrl, authBody(creds.auth, true), opts);

  if (res.status === 401 && creds.auth.method === 'password' && hasScope(creds.auth)) {
    // Keystone answers the same 401 for a wrong password and for a project
    // that does not exist or grants the user no role. An unscoped request
    // with the same credentials tells them apart.
    const unscoped = await send(creds, 'POST', tokensUrl, authBody(creds.auth, false), opts);
    if (unscoped.status === 201) {
      throw new VimCheckError(
        `Keystone at ${base} accepted ${describeUser(creds.auth)} but refused the scope: ${describeProject(creds.auth)} does not exist or the user has no role on it (HTTP 401)`,
        { hint: 'check project_name (or project_id) and project_domain_name, and that the user has a role on that project' },
      );
    }
  }
  if (res.status === 401) {
    throw new VimCheckError(`Keystone at ${base} rejected the credentials of ${describeUser(creds.auth)} (HTTP 401)`, {
      hint:
        creds.auth.method === 'password'
          ? 'check username (or user_id), password and user_domain_name'
          : 'check the application credential id (or name, username and user_domain_name) and its secret, and that it has not expired',
    });
  }
  if (res.status !== 201) throw unexpectedAnswer(base, 'POST /auth/tokens', res);

  const token = headerValue(res.headers['x-subject-token']);
  const body = parseJson(res.body) as { token?: RawToken } | undefined;
  if (!token || !body?.token) {
    throw new VimCheckError(`the answer of ${base} to POST /auth/tokens has no token: it does not look like Keystone v3`, {
      hint: 'check auth_url',
    });
  }
  const expiresAt = new Date(body.token.expires_at ?? '');
  return {
    token,
    expiresAt: Number.isNaN(expiresAt.getTime()) ? new Date(Date.now() + 3600_000) : expiresAt,
    projectId: body.token.project?.id,
    catalog: parseCatalog(body.token.catalog),
  };
}

/**
 * The URL of a service's endpoint in the token's catalog: the first of type
 * `serviceType` on `interface` (default `public`), in `region` when given.
 */
export function findEndpoint(
  token: KeystoneToken,
  serviceType: string,
  opts: { interface?: 'public' | 'internal' | 'admin'; region?: string } = {},
): string | undefined {
  const wanted = opts.interface ?? 'public';
  for (const entry of token.catalog) {
    if (entry.type !== serviceType) continue;
    const endpoint = entry.endpoints.find(
      (e) => e.interface === wanted && (opts.region === undefined || e.region === opts.region),
    );
    if (endpoint) return endpoint.url;
  }
  return undefined;
}

/**
 * Checks an OpenStack VIM before it is stored: the credentials get a
 * project-scoped token and the catalog has a Heat endpoint.
 */
export async function checkOpenStackVim(
  creds: KeystoneCredentials,
  opts: KeystoneRequestOptions = {},
): Promise<OpenStackVimCheck> {
  const token = await issueToken(creds, opts);
  const base = keystoneV3Url(creds.authUrl);
  if (!token.projectId) {
    throw new VimCheckError(`Keystone at ${base} issued a token for ${describeUser(creds.auth)} that is not scoped to a project`, {
      hint: 'give project_name (or project_id), or give the user a default project',
    });
  }
  const orchestrationEndpoint = findEndpoint(token, 'orchestration', { region: creds.regionName });
  if (!orchestrationEndpoint) {
    const where = creds.regionName ? ` in region "${creds.regionName}"` : '';
    const regions = [...new Set(token.catalog.flatMap((e) => e.endpoints.map((p) => p.region)).filter(Boolean))];
    throw new VimCheckError(`the catalog has no orchestration (Heat) endpoint${where} (Keystone at ${base})`, {
      hint:
        creds.regionName && regions.length > 0
          ? `the catalog has regions ${regions.map((r) => `"${r}"`).join(', ')}; check region_name`
          : 'vnfm deploys VNFs on OpenStack through Heat: register Heat in this cloud, or use a project that can see it',
    });
  }
  return { projectId: token.projectId, orchestrationEndpoint, identityVersion: await identityVersion(creds, base, opts) };
}

/** `GET /v3` names the exact version; plain `v3` when the answer does not. */
async function identityVersion(creds: KeystoneCredentials, base: string, opts: KeystoneRequestOptions): Promise<string> {
  const res = await send(creds, 'GET', base, undefined, opts);
  if (res.status !== 200) return 'v3';
  const body = parseJson(res.body) as { version?: { id?: unknown } } | undefined;
  return typeof body?.version?.id === 'string' ? body.version.id : 'v3';
}

interface RawToken {
  expires_at?: string;
  project?: { id?: string };
  catalog?: unknown;
}

function parseCatalog(raw: unknown): CatalogEntry[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((entry): CatalogEntry[] => {
    if (!entry || typeof entry !== 'object' || typeof entry.type !== 'string') return [];
    const endpoints = Array.isArray(entry.endpoints) ? entry.endpoints : [];
    return [
      {
        id: typeof entry.id === 'string' ? entry.id : undefined,
        type: entry.type,
        name: typeof entry.name === 'string' ? entry.name : undefined,
        endpoints: endpoints.flatMap((e: Record<string, unknown>): CatalogEndpoint[] =>
          e && typeof e.url === 'string' && typeof e.interface === 'string'
            ? [
                {
                  id: typeof e.id === 'string' ? e.id : undefined,
                  interface: e.interface,
                  // region_id is the current field; region is its deprecated twin.
                  region:
                    typeof e.region_id === 'string' ? e.region_id : typeof e.region === 'string' ? e.region : undefined,
                  url: e.url,
                },
              ]
            : [],
        ),
      },
    ];
  });
}

function hasScope(auth: KeystonePasswordAuth): boolean {
  return Boolean(auth.projectId || auth.projectName);
}

function authBody(auth: KeystoneCredentials['auth'], withScope: boolean): unknown {
  if (auth.method === 'application-credential') {
    if (!auth.id && !(auth.name && auth.username)) {
      throw new VimCheckError('an application credential needs its id, or its name and the username of its owner', {
        hint: 'set application_credential_id, or application_credential_name and username',
      });
    }
    const credential = auth.id
      ? { id: auth.id, secret: auth.secret }
      : {
          name: auth.name,
          secret: auth.secret,
          user: { name: auth.username, domain: { name: auth.userDomainName ?? DEFAULT_DOMAIN } },
        };
    return { auth: { identity: { methods: ['application_credential'], application_credential: credential } } };
  }
  if (!auth.userId && !auth.username) {
    throw new VimCheckError('password auth needs a username or a user id', { hint: 'set username (or user_id)' });
  }
  const user = auth.userId
    ? { id: auth.userId, password: auth.password }
    : { name: auth.username, domain: { name: auth.userDomainName ?? DEFAULT_DOMAIN }, password: auth.password };
  const body: { auth: { identity: unknown; scope?: unknown } } = {
    auth: { identity: { methods: ['password'], password: { user } } },
  };
  if (withScope && auth.projectId) body.auth.scope = { project: { id: auth.projectId } };
  else if (withScope && auth.projectName) {
    body.auth.scope = { project: { name: auth.projectName, domain: { name: auth.projectDomainName ?? DEFAULT_DOMAIN } } };
  }
  return body;
}

function describeUser(auth: KeystoneCredentials['auth']): string {
  if (auth.method === 'application-credential') {
    return auth.id
      ? `application credential "${auth.id}"`
      : `application credential "${auth.name}" of user "${auth.username}" (domain "${auth.userDomainName ?? DEFAULT_DOMAIN}")`;
  }
  return auth.userId ? `user id "${auth.userId}"` : `user "${auth.username}" (domain "${auth.userDomainName ?? DEFAULT_DOMAIN}")`;
}

function describeProject(auth: KeystonePasswordAuth): string {
  return auth.projectId
    ? `project id "${auth.projectId}"`
    : `project "${auth.projectName}" (domain "${auth.projectDomainName ?? DEFAULT_DOMAIN}")`;
}

interface HttpAnswer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

function unexpectedAnswer(base: string, what: string, res: HttpAnswer): VimCheckError {
  const body = parseJson(res.body) as { error?: { message?: unknown } } | undefined;
  const said = typeof body?.error?.message === 'string' ? `: ${body.error.message}` : '';
  if (res.status === 404) {
    return new VimCheckError(`${base} answered HTTP 404 to ${what}: no Keystone v3 API there`, {
      hint: 'check auth_url; it is usually http(s)://host:5000/v3 or http(s)://host/identity/v3',
    });
  }
  return new VimCheckError(`Keystone at ${base} answered HTTP ${res.status} to ${what}${said}`, {
    hint: res.status >= 500 ? 'Keystone failed; its log says why. Retry once it is healthy' : 'check auth_url and the credentials',
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Checked here rather than left to TLS: Node ignores a CA that is not PEM,
 * and the handshake would then fail with a misleading "self-signed" error.
 */
function checkedCa(caCert: string): string {
  const blocks = caCert.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  const valid = blocks.every((block) => {
    try {
      new X509Certificate(block);
      return true;
    } catch {
      return false;
    }
  });
  if (blocks.length === 0 || !valid) {
    throw new VimCheckError('the CA certificate (ssl_ca_cert) is not a valid PEM certificate', {
      hint: 'give the PEM text, -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----',
    });
  }
  return blocks.join('\n');
}

/** Node's codes for a certificate that could not be verified, as opposed to a network failure. */
const CERT_ERROR_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'CERT_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * One request on a fresh connection (Keystone behind uwsgi's plain HTTP
 * socket closes every connection after one answer). Never follows redirects.
 */
function send(
  creds: KeystoneCredentials,
  method: 'GET' | 'POST',
  url: string,
  body: unknown,
  opts: KeystoneRequestOptions,
): Promise<HttpAnswer> {
  const target = new URL(url);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const isHttps = target.protocol === 'https:';
  const options: RequestOptions & { ca?: string; rejectUnauthorized?: boolean } = {
    method,
    agent: false,
    headers: {
      accept: 'application/json',
      ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
    },
  };
  if (isHttps) {
    options.rejectUnauthorized = creds.verifyTls;
    if (creds.caCert && creds.verifyTls) options.ca = checkedCa(creds.caCert);
  }
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const origin = target.origin;

  return new Promise<HttpAnswer>((resolve, reject) => {
    if (opts.signal?.aborted) {
      reject(opts.signal.reason);
      return;
    }
    let settled = false;
    const finish = (err: unknown, answer?: HttpAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (err !== undefined) reject(err);
      else resolve(answer as HttpAnswer);
    };
    const req = (isHttps ? httpsRequest : httpRequest)(target, options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          req.destroy();
          finish(new VimCheckError(`${origin} sent more than ${MAX_RESPONSE_BYTES} bytes: not a Keystone answer`, { hint: 'check auth_url' }));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () =>
        finish(undefined, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', (err) => finish(networkError(origin, err, 'http')));
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish(
        new VimCheckError(`${origin} could not be reached: no answer within ${Math.round(timeoutMs / 1000)} s`, {
          hint: 'check auth_url, and that Keystone runs and this host may connect to it',
        }),
      );
    }, timeoutMs);
    const onAbort = () => {
      req.destroy();
      finish(opts.signal?.reason);
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    // A failure between TCP connect and the end of the TLS handshake is a TLS
    // problem even when it shows as a reset (a plain-HTTP server hangs up).
    let phase: Phase = 'connect';
    req.on('socket', (socket) => {
      socket.once('connect', () => (phase = isHttps ? 'handshake' : 'http'));
      socket.once('secureConnect', () => (phase = 'http'));
    });
    req.on('error', (err) => finish(networkError(origin, err, phase)));
    req.end(payload);
  });
}

type Phase = 'connect' | 'handshake' | 'http';

function networkError(origin: string, err: Error & { code?: string }, phase: Phase): VimCheckError {
  const code = err.code ?? '';
  if (CERT_ERROR_CODES.has(code)) {
    return new VimCheckError(`the certificate of ${origin} could not be verified (${code}: ${err.message})`, {
      hint: code === 'ERR_TLS_CERT_ALTNAME_INVALID' ? `use the host name the certificate was issued for in auth_url, or ${TLS_HINT}` : TLS_HINT,
      cause: err,
    });
  }
  if (phase === 'handshake' || code.startsWith('ERR_SSL_') || /SSL routines|wrong version number/i.test(err.message)) {
    return new VimCheckError(`the TLS handshake with ${origin} failed (${code || err.message})`, {
      hint: 'check the scheme of auth_url: http:// for a plain-HTTP Keystone, https:// for TLS',
      cause: err,
    });
  }
  return new VimCheckError(`${origin} could not be reached (${code || err.message})`, {
    hint: 'check auth_url (host and port), and that Keystone runs and this host may connect to it',
    cause: err,
  });
}
