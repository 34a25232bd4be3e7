/**
 * `VNFM_DATABASE_URL` (`postgres://user:password@host:port/database?sslmode=…`)
 * read into node-postgres settings, and what may be shown of it: the URL
 * with its password masked. The password never reaches a message.
 *
 * TLS follows libpq's `sslmode`: disable, allow, prefer, require, verify-ca,
 * verify-full. vnfm's default is verify-full (the server's certificate is
 * checked against the CAs and must name the host), except on a Unix socket
 * (`host=/run/postgresql`), where there is no TLS. `sslrootcert` names the
 * CA file (default, or `system`: the CAs Node trusts); `sslcert`/`sslkey`
 * a client certificate.
 */
import { readFileSync } from 'node:fs';
import { UsageError } from '../../errors.js';

/** How to reach the server: node-postgres client settings, without the URL (so it is never echoed). */
export interface PgClientConfig {
  host?: string;
  port?: number;
  user?: string;
  password?: string;
  database?: string;
  ssl?: false | { rejectUnauthorized: boolean; ca?: string; cert?: string; key?: string; servername?: string; verifyHost: boolean };
  /** sslmode=prefer/allow: try the other way when the first fails for want of (or because of) TLS. */
  sslFallback?: 'plain' | 'tls';
  connectTimeoutMs: number;
  applicationName: string;
  options?: string;
  /** Server-side wait for a lock (the store's write lock above all) before the statement fails. */
  lockTimeoutMs: number;
}

export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

const KNOWN_PARAMS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'connect_timeout', 'application_name', 'options', 'host', 'port', 'user', 'password', 'dbname'];

export interface DatabaseTarget {
  config: PgClientConfig;
  /** The URL as it may be shown: password replaced by ***. */
  display: string;
  sslMode: SslMode;
  /** Every form of the password that could appear in a message, longest first. */
  secrets: string[];
}

/** Seconds a connection attempt may take when the URL does not say (libpq: connect_timeout). */
const CONNECT_TIMEOUT_S = 10;
/** How long a write waits for another client's write transaction, as SQLite's busy timeout. */
export const LOCK_TIMEOUT_MS = 15_000;

/** `url` with its password replaced by `***` (best effort for a URL that does not parse). */
export function maskDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    if (u.searchParams.has('password')) u.searchParams.set('password', '***');
    return u.toString().replace('%2A%2A%2A', '***');
  } catch {
    return url.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@').replace(/([?&]password=)[^&]*/i, '$1***');
  }
}

/** Replaces each of `secrets` in `text` by `***`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join('***');
  return out;
}

export function isDatabaseUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

export function parseDatabaseUrl(url: string, opts: { applicationName?: string } = {}): DatabaseTarget {
  const shown = maskDatabaseUrl(url);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(`the database URL ${shown} is not a URL`, { hint: 'write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=verify-full' });
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
    throw new UsageError(`the database URL ${shown} is not a postgres:// URL`, {
      hint: 'vnfm keeps a shared store on PostgreSQL only; unset VNFM_DATABASE_URL for the local SQLite store',
    });
  }
  const q = u.searchParams;
  for (const k of q.keys()) {
    if (!KNOWN_PARAMS.includes(k))
      throw new UsageError(`the database URL ${shown} has the parameter "${k}", which vnfm does not know`, { hint: `vnfm reads ${KNOWN_PARAMS.join(', ')}` });
  }
  const dec = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  const password = q.get('password') ?? (u.password ? dec(u.password) : undefined);
  const host = q.get('host') ?? (u.hostname ? dec(u.hostname).replace(/^\[(.*)\]$/, '$1') : undefined);
  const portText = q.get('port') ?? u.port;
  const port = portText ? Number(portText) : undefined;
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) {
    throw new UsageError(`the database URL ${shown} has the port "${portText}"`, { hint: 'give a port from 1 to 65535 (PostgreSQL listens on 5432)' });
  }
  const socket = host?.startsWith('/') ?? false;
  const modeText = q.get('sslmode') ?? (socket ? 'disable' : 'verify-full');
  if (!(SSL_MODES as readonly string[]).includes(modeText)) {
    throw new UsageError(`the database URL ${shown} has sslmode=${modeText}`, { hint: `use one of ${SSL_MODES.join(', ')} (vnfm's default: verify-full)` });
  }
  const sslMode = modeText as SslMode;
  const readPem = (param: string): string | undefined => {
    const path = q.get(param);
    if (!path || (param === 'sslrootcert' && path === 'system')) return undefined;
    try {
      return readFileSync(path, 'utf8');
    } catch (cause) {
      throw new UsageError(`cannot read ${param}=${path} of the database URL ${shown}: ${(cause as Error).message}`, { hint: `give ${param} the path of a PEM file`, cause });
    }
  };
  const ca = readPem('sslrootcert');
  const cert = readPem('sslcert');
  const key = readPem('sslkey');
  const verify = sslMode === 'verify-ca' || sslMode === 'verify-full';
  const timeoutText = q.get('connect_timeout');
  const timeout = timeoutText ? Number(timeoutText) : CONNECT_TIMEOUT_S;
  if (!Number.isFinite(timeout) || timeout <= 0) {
    throw new UsageError(`the database URL ${shown} has connect_timeout=${timeoutText}`, { hint: 'give it in seconds, more than 0' });
  }
  const database = q.get('dbname') ?? (u.pathname.length > 1 ? dec(u.pathname.slice(1)) : undefined);
  const user = q.get('user') ?? (u.username ? dec(u.username) : undefined);
  const options = q.get('options') ?? undefined;
  const config: PgClientConfig = {
    ...(host !== undefined && host !== '' ? { host } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(user !== undefined ? { user } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(database !== undefined ? { database } : {}),
    ...(options !== undefined ? { options } : {}),
    ssl:
      sslMode === 'disable'
        ? false
        : { rejectUnauthorized: verify, verifyHost: sslMode === 'verify-full', ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) },
    ...(sslMode === 'prefer' ? { sslFallback: 'plain' as const } : sslMode === 'allow' ? { sslFallback: 'tls' as const } : {}),
    connectTimeoutMs: timeout * 1000,
    applicationName: q.get('application_name') ?? opts.applicationName ?? 'vnfm',
    lockTimeoutMs: LOCK_TIMEOUT_MS,
  };
  const secrets = password ? [...new Set([password, encodeURIComponent(password), u.password])].filter(Boolean).sort((a, b) => b.length - a.length) : [];
  return { config, display: shown, sslMode, secrets };
}
