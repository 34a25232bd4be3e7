/**
 * The thread that talks to PostgreSQL (the one module that imports
 * node-postgres). The store's repositories are synchronous; the main thread
 * posts one request, blocks on a shared flag (Atomics.wait) and reads the
 * answer with receiveMessageOnPort. Only this thread runs the event loop
 * node-postgres needs meanwhile. See database.ts.
 *
 * A connection found gone (the server restarted, the network dropped) is
 * opened again for the next request; the request that found it gone runs
 * again only when nothing of it can have reached the server (its first
 * statement failed) or it only reads.
 */
import type { ConnectionOptions } from 'node:tls';
import { workerData, type MessagePort } from 'node:worker_threads';
import pg from 'pg';
import { findPassword } from './pgpass.js';
import type { PgClientConfig, PgFailure, Request, Response } from './protocol.js';
import { answer, signalled, WATCHED_SIGNALS, type Numbered, type WatchedSignal } from './sync-call.js';

const { signal, port, config } = workerData as { signal: SharedArrayBuffer; port: MessagePort; config: PgClientConfig };

/** 64-bit integers (count(*), bigint columns) as numbers: the store's counts and sizes fit. */
const types = {
  getTypeParser: (oid: number, format?: string) => (oid === 20 ? (v: string) => Number(v) : (pg.types.getTypeParser as (o: number, f?: string) => unknown)(oid, format)),
};

let client: pg.Client | undefined;
let broken = false;

function clientConfig(tls: boolean): pg.ClientConfig {
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
  return {
    ...(config.host !== undefined ? { host: config.host } : {}),
    ...(config.port !== undefined ? { port: config.port } : {}),
    ...(config.user !== undefined ? { user: config.user } : {}),
    // Without one in the URL: PGPASSWORD or the password file, read here (node-postgres warns on every use of its own reader).
    password: config.password ?? (async () => findPassword(config, process.env)),
    ...(config.database !== undefined ? { database: config.database } : {}),
    ...(config.options !== undefined ? { options: config.options } : {}),
    ssl: sslOptions as pg.ClientConfig['ssl'],
    connectionTimeoutMillis: config.connectTimeoutMs,
    application_name: config.applicationName,
    keepAlive: true,
    types: types as pg.ClientConfig['types'],
  };
}

async function open(): Promise<void> {
  const first = config.ssl !== false && config.sslFallback !== 'tls';
  try {
    client = await openClient(first);
  } catch (err) {
    if (!config.sslFallback) throw err;
    client = await openClient(!first);
  }
  broken = false;
}

async function openClient(tls: boolean): Promise<pg.Client> {
  const c = new pg.Client(clientConfig(tls));
  c.on('error', () => {
    broken = true;
  });
  try {
    await c.connect();
    await c.query(`SET lock_timeout = ${Math.max(1, Math.floor(config.lockTimeoutMs))}`);
  } catch (err) {
    await c.end().catch(() => undefined);
    throw err;
  }
  return c;
}

async function reopen(): Promise<void> {
  const old = client;
  client = undefined;
  await old?.end().catch(() => undefined);
  await open();
}

function isConnectionFailure(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  if (typeof e?.code === 'string' && (/^E[A-Z]+$/.test(e.code) || e.code.startsWith('08') || ['57P01', '57P02', '57P03'].includes(e.code))) return true;
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable|server does not support SSL|The server does not support SSL/i.test(
    e?.message ?? '',
  );
}

function isTlsFailure(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return /CERT|SELF_SIGNED|ERR_TLS|ERR_SSL|UNABLE_TO_VERIFY|HOSTNAME/.test(e?.code ?? '') || /certificate|self.signed|does not support SSL|SSL/i.test(e?.message ?? '');
}

function failure(err: unknown): PgFailure {
  const e = err as { message?: string; code?: string; constraint?: string; detail?: string };
  return {
    message: e?.message ?? String(err),
    ...(typeof e?.code === 'string' ? { code: e.code } : {}),
    ...(typeof e?.constraint === 'string' ? { constraint: e.constraint } : {}),
    ...(typeof e?.detail === 'string' ? { detail: e.detail } : {}),
    connection: isConnectionFailure(err),
    tls: isTlsFailure(err),
  };
}

/**
 * Runs a statement, on a new connection when the last one broke, unless
 * `mayReopen` is false: a statement inside a transaction (or after the first
 * step of a batch) must fail with the connection that held the transaction,
 * which the server rolled back. Run on a new connection it would commit on
 * its own, without the statements before it (a lock released while the
 * state change that went with it was lost).
 */
async function query(sql: string, params: unknown[], mayReopen = true): Promise<pg.QueryResult> {
  if (!client || broken) {
    if (!mayReopen) throw new Error('Connection terminated: the connection to the database broke inside a transaction, which the server rolled back');
    await reopen();
  }
  return client!.query({ text: sql, values: params });
}

function result(res: pg.QueryResult | pg.QueryResult[]): Response {
  // Several statements in one string (exec) answer with one result each: the last one counts.
  const r = Array.isArray(res) ? res[res.length - 1]! : res;
  return { ok: true, rows: r.rows as Record<string, unknown>[], fields: r.fields.map((f) => f.name), rowCount: r.rowCount ?? 0 };
}

async function handle(req: Request): Promise<Response> {
  switch (req.kind) {
    case 'connect':
      await open();
      return { ok: true, rows: [], fields: [], rowCount: 0 };
    case 'abandon':
      abandon();
      return { ok: true, rows: [], fields: [], rowCount: 0 };
    case 'end':
      await client?.end().catch(() => undefined);
      client = undefined;
      return { ok: true, rows: [], fields: [], rowCount: 0 };
    case 'exec':
      return result(await query(req.sql, []));
    case 'query':
      try {
        return result(await query(req.sql, req.params, req.retry));
      } catch (err) {
        if (!req.retry || !isConnectionFailure(err)) throw err;
        await reopen();
        return result(await query(req.sql, req.params));
      }
    case 'batch': {
      const results: pg.QueryResult[] = [];
      let retried = false;
      for (let i = 0; i < req.steps.length; i++) {
        const step = req.steps[i]!;
        try {
          results[i] = await query(step.sql, step.params, i === 0 && req.retry);
        } catch (err) {
          // Nothing reached the server when the first statement found the connection gone: run it all again.
          if (i === 0 && req.retry && !retried && isConnectionFailure(err)) {
            retried = true;
            await reopen();
            i = -1;
            continue;
          }
          if (req.rollbackOnError && !isConnectionFailure(err)) await client?.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }
      return result(results[req.resultStep ?? req.steps.length - 1]!);
    }
  }
}

/**
 * The main thread gave up waiting (a signal, its deadline): the statement
 * still running is cancelled on the server (a wait for the write lock ends
 * at once, its transaction rolled back) and its connection closed; the next
 * request opens a new one.
 */
function abandon(): void {
  const victim = client;
  client = undefined;
  if (!victim) return;
  const { activeQuery: pending, processID } = victim as unknown as { activeQuery?: unknown; processID: number | null };
  if (pending && processID !== null) {
    const canceller = new pg.Client(clientConfig(false)) as unknown as { cancel(c: pg.Client, q: unknown): void; connection: { on(e: string, f: () => void): void } };
    canceller.connection.on('error', () => undefined);
    canceller.cancel(victim, pending);
  }
  void victim.end().catch(() => undefined);
}

/**
 * SIGINT and SIGTERM, watched here for the main thread, which cannot see
 * them while it blocks on an answer (sync-call.ts). Node's signal watcher of
 * a worker is its internal one (there is no process.on for signals in a
 * worker); where this Node has none, signals reach the main thread only
 * between statements, as before.
 */
function watchSignals(): void {
  let Signal: new () => { onsignal: () => void; start(n: number): number; close(): void; unref(): void };
  const quiet = process.noDeprecation;
  try {
    process.noDeprecation = true;
    Signal = (process as unknown as { binding(name: string): { Signal: typeof Signal } }).binding('signal_wrap').Signal;
  } catch {
    return;
  } finally {
    process.noDeprecation = quiet;
  }
  for (const name of Object.keys(WATCHED_SIGNALS) as WatchedSignal[]) {
    const watcher = new Signal();
    watcher.unref();
    watcher.onsignal = () => {
      if (signalled(signal, name)) return;
      // The main thread does not handle it: the signal does what it does by default, as without this watcher.
      watcher.close();
      process.kill(process.pid, name);
    };
    watcher.start(WATCHED_SIGNALS[name]);
  }
}

watchSignals();

port.on('message', ({ seq, req }: Numbered<Request>) => {
  const done = handle(req).catch((err: unknown): Response => ({ ok: false, error: failure(err) }));
  // Seq 0: posted without waiting for an answer (abandon).
  if (seq !== 0) void done.then((res) => answer(port, signal, seq, res));
});
