/**
 * node-postgres's pool for the shared store: its settings from the URL
 * (connection.ts), and which of its failures mean the connection is gone or
 * TLS failed. The one module that imports node-postgres's pool.
 */
import type { ConnectionOptions } from 'node:tls';
import pg from 'pg';
import type { PgClientConfig } from './connection.js';
import { findPassword } from './pgpass.js';

/** 64-bit integers (count(*), bigint columns) as numbers: the store's counts and sizes fit. */
const types = {
  getTypeParser: (oid: number, format?: string) => (oid === 20 ? (v: string) => Number(v) : (pg.types.getTypeParser as (o: number, f?: string) => unknown)(oid, format)),
};

function poolConfig(config: PgClientConfig, tls: boolean): pg.PoolConfig {
  const ssl = config.ssl;
  let sslOptions: ConnectionOptions | false = false;
  if (tls && ssl) {
    sslOptions = {
      rejectUnauthorized: ssl.rejectUnauthorized,
      ...(ssl.ca ? { ca: ssl.ca } : {}),
      ...(ssl.cert ? { cert: ssl.cert } : {}),
      ...(ssl.key ? { key: ssl.key } : {}),
      ...(ssl.servername ? { servername: ssl.servername } : {}),
      // verify-ca: the chain is checked, the name is not (libpq's meaning).
      ...(ssl.verifyHost ? {} : { checkServerIdentity: () => undefined }),
    };
  } else if (tls && !ssl) {
    sslOptions = { rejectUnauthorized: false };
  }
  // The wait for a lock (the store's write lock) set at each connection's start, in the same round trip.
  const lockTimeout = `-c lock_timeout=${Math.max(1, Math.floor(config.lockTimeoutMs))}`;
  return {
    ...(config.host !== undefined ? { host: config.host } : {}),
    ...(config.port !== undefined ? { port: config.port } : {}),
    ...(config.user !== undefined ? { user: config.user } : {}),
    // Without one in the URL: PGPASSWORD or the password file, read here (node-postgres warns on every use of its own reader).
    password: config.password ?? (async () => findPassword(config, process.env)),
    ...(config.database !== undefined ? { database: config.database } : {}),
    options: config.options !== undefined ? `${config.options} ${lockTimeout}` : lockTimeout,
    ssl: sslOptions as pg.PoolConfig['ssl'],
    connectionTimeoutMillis: config.connectTimeoutMs,
    application_name: config.applicationName,
    keepAlive: true,
    types: types as pg.PoolConfig['types'],
    // A command's connections are closed when it ends (close()); an idle one is not kept open meanwhile beyond this.
    idleTimeoutMillis: 10_000,
    // An idle connection never keeps a finished command alive.
    allowExitOnIdle: true,
  };
}

/** A pool whose first connection is open (so that a bad URL, password or certificate is found at once). */
export async function openPool(config: PgClientConfig, tls: boolean): Promise<pg.Pool> {
  const pool = new pg.Pool(poolConfig(config, tls));
  // An idle connection that breaks is dropped by the pool; the next statement opens another.
  pool.on('error', () => undefined);
  try {
    const c = await pool.connect();
    c.release();
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  return pool;
}

export function isConnectionFailure(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  if (typeof e?.code === 'string' && (/^E[A-Z]+$/.test(e.code) || e.code.startsWith('08') || ['57P01', '57P02', '57P03'].includes(e.code))) return true;
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable|server does not support SSL|The server does not support SSL/i.test(
    e?.message ?? '',
  );
}

export function isTlsFailure(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return /CERT|SELF_SIGNED|ERR_TLS|ERR_SSL|UNABLE_TO_VERIFY|HOSTNAME/.test(e?.code ?? '') || /certificate|self.signed|does not support SSL|SSL/i.test(e?.message ?? '');
}
