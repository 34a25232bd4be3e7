/**
 * Keystone v3, over the shared OpenStack HTTP seam (openstack-http.ts). It issues
 * tokens (password or application credential), reads the service catalog,
 * and checks an OpenStack VIM before it is registered.
 *
 * The VIM's CA certificate is handed to TLS in memory; it is never written
 * to a file.
 */
import { VimCheckError } from '../../errors.js';
import { headerValue, KEYSTONE_LABEL, parseJson, sendHttp, type HttpAnswer } from './openstack-http.js';

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

const DEFAULT_DOMAIN = 'Default';

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
export function findEndpoint(token: KeystoneToken, serviceType: string, opts: { interface?: 'public' | 'internal' | 'admin'; region?: string } = {}): string | undefined {
  const wanted = opts.interface ?? 'public';
  for (const entry of token.catalog) {
    if (entry.type !== serviceType) continue;
    const endpoint = entry.endpoints.find((e) => e.interface === wanted && (opts.region === undefined || e.region === opts.region));
    if (endpoint) return endpoint.url;
  }
  return undefined;
}

/**
 * Checks an OpenStack VIM before it is stored: the credentials get a
 * project-scoped token and the catalog has a Heat endpoint.
 */
export async function checkOpenStackVim(creds: KeystoneCredentials, opts: KeystoneRequestOptions = {}): Promise<OpenStackVimCheck> {
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
                  region: typeof e.region_id === 'string' ? e.region_id : typeof e.region === 'string' ? e.region : undefined,
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
    return auth.id ? `application credential "${auth.id}"` : `application credential "${auth.name}" of user "${auth.username}" (domain "${auth.userDomainName ?? DEFAULT_DOMAIN}")`;
  }
  return auth.userId ? `user id "${auth.userId}"` : `user "${auth.username}" (domain "${auth.userDomainName ?? DEFAULT_DOMAIN}")`;
}

function describeProject(auth: KeystonePasswordAuth): string {
  return auth.projectId ? `project id "${auth.projectId}"` : `project "${auth.projectName}" (domain "${auth.projectDomainName ?? DEFAULT_DOMAIN}")`;
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

function send(creds: KeystoneCredentials, method: 'GET' | 'POST', url: string, body: unknown, opts: KeystoneRequestOptions): Promise<HttpAnswer> {
  return sendHttp(creds, KEYSTONE_LABEL, {
    method,
    url,
    body,
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
  });
}
