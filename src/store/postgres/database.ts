/**
 * The store on PostgreSQL, behind the same async interface as SQLite
 * (../db.ts): node-postgres's own pool on the main event loop (the one
 * module that imports node-postgres). While a statement waits for the
 * server, everything else of the process runs: a lease's heartbeat, a
 * watch, a signal's handler, an operation's timer.
 *
 * Writes are serialised as SQLite serialises them: an `immediate`
 * transaction, and a write outside any transaction, first takes one
 * transaction-scoped advisory lock (the store's write lock). Reads never
 * take it and never wait (MVCC). A transaction keeps one pooled connection
 * for the async function it runs (its async context, ../db.ts); statements
 * from elsewhere meanwhile run on other connections. Migrations run under a
 * session advisory lock: the first client applies them, the others wait and
 * find them done.
 *
 * A connection found gone (the server restarted, the network dropped) is
 * dropped from the pool and the next statement opens another; the
 * statement that found it gone runs again only when nothing of it can have
 * reached the server (a write whose BEGIN failed) or it only reads. Inside a
 * transaction nothing runs again: the server rolled the transaction back, and
 * its statements fail with it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';
import { ConflictError, StoreUnreachableError, VnfmError } from '../../errors.js';
import type { RunResult, Statement, StoreDb, Transaction } from '../db.js';
import { POSTGRES } from '../dialect.js';
import type { Migration } from '../migrations/index.js';
import { parseDatabaseUrl, redact, type DatabaseTarget } from './connection.js';
import { bindValues, numberPlaceholders, type Numbered } from './placeholders.js';
import { isConnectionFailure, isTlsFailure, openPool } from './pool.js';
import { StatementWaits } from './waits.js';

/** Advisory lock keys: 'vnfm' as a 32-bit number, then which lock. */
const WRITE_LOCK = 'pg_advisory_xact_lock(1986946669, 1)';
const MIGRATION_LOCK = 1986946669;
/** A write transaction's start, in one round trip (no parameters: the simple protocol takes both statements at once). */
const BEGIN_LOCKED = `BEGIN; SELECT ${WRITE_LOCK}`;
const BEGIN_SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ';

/** The transaction an async context runs in: its connection, whether it holds the write lock, its savepoints. */
interface TxScope {
  client: pg.PoolClient;
  locked: boolean;
  depth: number;
  /** Set once the transaction has ended: code it started that runs on (a timer) no longer belongs to it. */
  ended: boolean;
}

/** The connections whose error event is listened to and whose statements can be given up (interruptWaits). */
const watched = new WeakSet<pg.PoolClient>();

export class PostgresDb implements StoreDb {
  readonly dialect = POSTGRES;
  readonly target: DatabaseTarget;
  #pool: pg.Pool | undefined;
  readonly #scope = new AsyncLocalStorage<TxScope>();
  readonly #numbered = new Map<string, Numbered>();
  #closed = false;
  readonly #waits: StatementWaits;

  constructor(url: string) {
    this.target = parseDatabaseUrl(url);
    this.#waits = new StatementWaits(this.target.display);
  }

  /** The URL as it may be shown (password masked). */
  get display(): string {
    return this.target.display;
  }

  /**
   * Opens the pool: the first connection tells which TLS setting works
   * (sslmode=prefer/allow try the other when the first fails), and the pool
   * connects with that one from then on.
   */
  async connect(): Promise<void> {
    const config = this.target.config;
    const first = config.ssl !== false && config.sslFallback !== 'tls';
    try {
      this.#pool = await openPool(config, first);
    } catch (err) {
      if (!config.sslFallback) throw this.errorOf(err);
      try {
        this.#pool = await openPool(config, !first);
      } catch (again) {
        throw this.errorOf(again);
      }
    }
  }

  #poolOf(): pg.Pool {
    if (this.#closed || !this.#pool) throw new VnfmError('internal: the store was used after it was closed');
    return this.#pool;
  }

  /** The caller's transaction, if it runs in one that is still open. */
  #current(): TxScope | undefined {
    const scope = this.#scope.getStore();
    return scope && !scope.ended ? scope : undefined;
  }

  /** A pooled connection. */
  async #client(): Promise<pg.PoolClient> {
    let c: pg.PoolClient;
    try {
      c = await this.#poolOf().connect();
    } catch (err) {
      throw this.errorOf(err);
    }
    // A connection that breaks while in use fails its statement; its error event must not end the process.
    if (!watched.has(c)) {
      watched.add(c);
      c.on('error', () => undefined);
      const query = c.query.bind(c) as (q: unknown, values?: unknown) => Promise<pg.QueryResult>;
      (c as { query: unknown }).query = (q: unknown, values?: unknown) => this.#waits.answer(c, query(q, values));
    }
    return c;
  }

  /** See StatementWaits.interrupt. */
  interruptWaits(reason: Error): void {
    this.#waits.interrupt(reason);
  }

  /**
   * Runs `steps` on one pooled connection outside any transaction. When the
   * first step finds the connection gone, nothing reached the server: all
   * runs again on a new one.
   */
  async #onConnection<T>(steps: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const client = await this.#client();
      let broken: unknown;
      try {
        return await steps(client);
      } catch (err) {
        if (isConnectionFailure(err)) broken = err;
        if (broken && attempt === 0 && (err as { vnfmFirstStep?: boolean }).vnfmFirstStep) continue;
        throw this.errorOf(err);
      } finally {
        // A connection that failed is dropped, not handed out again.
        client.release(broken ? (broken as Error) : undefined);
      }
    }
  }

  #number(sql: string): Numbered {
    let hit = this.#numbered.get(sql);
    if (!hit) {
      hit = numberPlaceholders(sql);
      this.#numbered.set(sql, hit);
    }
    return hit;
  }

  /** Runs one statement: in the caller's transaction, or on its own (a write then takes the write lock in a transaction of its own). */
  async execute(sql: string, args: unknown[], write: boolean, lock = write): Promise<pg.QueryResult> {
    const t = this.#number(sql);
    const params = bindValues(t, args);
    const scope = this.#current();
    if (scope) {
      try {
        if (lock && !scope.locked) {
          await scope.client.query(`SELECT ${WRITE_LOCK}`);
          scope.locked = true;
        }
        return await scope.client.query({ text: t.text, values: params });
      } catch (err) {
        throw this.errorOf(err);
      }
    }
    if (!lock) {
      return this.#onConnection((c) => firstStep(c.query({ text: t.text, values: params })));
    }
    return this.#onConnection(async (c) => {
      try {
        // A BEGIN whose lock wait failed leaves the transaction open (aborted): rolled back before the connection goes back.
        await firstStep(c.query(BEGIN_LOCKED));
        const res = await c.query({ text: t.text, values: params });
        await c.query('COMMIT');
        return res;
      } catch (err) {
        if (!isConnectionFailure(err)) await c.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
  }

  prepare(sql: string): Statement {
    let pluck = false;
    const rows = async (args: unknown[]): Promise<unknown[]> => {
      const res = await this.execute(sql, args, false);
      if (!pluck) return res.rows;
      const first = res.fields[0]?.name;
      return first === undefined ? [] : res.rows.map((r: Record<string, unknown>) => r[first]);
    };
    return {
      get: async (...args) => (await rows(args))[0],
      all: (...args) => rows(args),
      run: async (...args): Promise<RunResult> => ({ changes: (await this.execute(sql, args, true)).rowCount ?? 0 }),
      pluck(toggle = true) {
        pluck = toggle;
        return this;
      },
    };
  }

  async runUnlocked(sql: string, ...params: unknown[]): Promise<RunResult> {
    return { changes: (await this.execute(sql, params, true, false)).rowCount ?? 0 };
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  transaction<F extends (...args: any[]) => any>(fn: F): Transaction<F> {
    type Out = Promise<Awaited<ReturnType<F>>>;
    const run =
      (mode: 'deferred' | 'immediate') =>
      async (...args: Parameters<F>): Out => {
        const outer = this.#current();
        if (outer) return this.#savepoint(outer, mode, () => fn(...args) as Out);
        const client = await this.#begin(mode === 'immediate' ? BEGIN_LOCKED : BEGIN_SNAPSHOT);
        const scope: TxScope = { client, locked: mode === 'immediate', depth: 0, ended: false };
        let broken: unknown;
        try {
          const out = (await this.#scope.run(scope, () => fn(...args))) as Awaited<ReturnType<F>>;
          try {
            await client.query('COMMIT');
          } catch (err) {
            if (isConnectionFailure(err)) broken = err;
            throw this.errorOf(err);
          }
          return out;
        } catch (err) {
          if (!broken) {
            try {
              await client.query('ROLLBACK');
            } catch (gone) {
              // The connection is gone: the server has rolled back already.
              broken = gone;
            }
          }
          throw err;
        } finally {
          scope.ended = true;
          client.release(broken ? (broken as Error) : undefined);
        }
      };
    const t = run('deferred') as Transaction<F>;
    t.deferred = run('deferred');
    t.immediate = run('immediate');
    t.exclusive = run('immediate');
    return t;
  }

  /** A connection of its own with a transaction begun on it; a connection found gone at BEGIN is replaced once. */
  async #begin(begin: string): Promise<pg.PoolClient> {
    for (let attempt = 0; ; attempt++) {
      const c = await this.#client();
      try {
        await c.query(begin);
        return c;
      } catch (err) {
        const broken = isConnectionFailure(err);
        if (!broken) await c.query('ROLLBACK').catch(() => undefined);
        c.release(broken ? (err as Error) : undefined);
        if (broken && attempt === 0) continue;
        throw this.errorOf(err);
      }
    }
  }

  async #savepoint<T>(scope: TxScope, mode: 'deferred' | 'immediate', fn: () => Promise<T>): Promise<T> {
    try {
      if (mode === 'immediate' && !scope.locked) {
        await scope.client.query(`SELECT ${WRITE_LOCK}`);
        scope.locked = true;
      }
    } catch (err) {
      throw this.errorOf(err);
    }
    const name = `vnfm_sp${++scope.depth}`;
    try {
      await scope.client.query(`SAVEPOINT ${name}`).catch((err: unknown) => {
        throw this.errorOf(err);
      });
      try {
        const out = await fn();
        await scope.client.query(`RELEASE SAVEPOINT ${name}`).catch((err: unknown) => {
          throw this.errorOf(err);
        });
        return out;
      } catch (err) {
        await scope.client.query(`ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`).catch(() => {
          // The outer transaction fails as a whole.
        });
        throw err;
      }
    } finally {
      scope.depth--;
    }
  }

  async exec(sql: string): Promise<void> {
    const scope = this.#current();
    try {
      if (scope) await scope.client.query(sql);
      else await this.#onConnection((c) => firstStep(c.query(sql)));
    } catch (err) {
      throw this.errorOf(err);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool?.end().catch(() => undefined);
  }

  /**
   * Applies pending migrations, once across every client: under a session
   * advisory lock, each in its own transaction, recorded in vnfm_schema. A
   * schema newer than this vnfm knows is refused before anything is read.
   */
  async migrate(all: Migration[]): Promise<void> {
    const latest = all.reduce((max, m) => Math.max(max, m.version), 0);
    const refuseNewer = (v: number | undefined) => {
      if (v !== undefined && v > latest) {
        throw new VnfmError(`the shared store ${this.display} has schema version ${v}, and this vnfm knows only up to ${latest}: another client has upgraded it`, {
          hint: 'upgrade vnfm here to the version the other clients run (vnfm --version); this vnfm changed nothing',
        });
      }
    };
    const client = await this.#client();
    let broken: unknown;
    try {
      const q = async (sql: string, params: unknown[] = []) => {
        try {
          return (await client.query({ text: sql, values: params })).rows as Record<string, unknown>[];
        } catch (err) {
          if (isConnectionFailure(err)) broken = err;
          throw this.errorOf(err);
        }
      };
      const version = async (): Promise<number | undefined> => {
        const exists = (await q("SELECT to_regclass('vnfm_schema') IS NOT NULL AS e"))[0]?.['e'] === true;
        return exists ? (((await q('SELECT max(version) AS v FROM vnfm_schema'))[0]?.['v'] as number | null) ?? 0) : undefined;
      };
      const before = await version();
      refuseNewer(before);
      if (before === latest) return;
      // The lock is waited for as long as another client's migrations take (lock_timeout would cut the wait short).
      await q('SET lock_timeout = 0');
      await q(`SELECT pg_advisory_lock(${MIGRATION_LOCK}, 2)`);
      await q(`SET lock_timeout = ${Math.max(1, Math.floor(this.target.config.lockTimeoutMs))}`);
      try {
        await q('CREATE TABLE IF NOT EXISTS vnfm_schema (version INTEGER NOT NULL)');
        let current = (await version()) ?? 0;
        if ((await q('SELECT count(*) AS n FROM vnfm_schema'))[0]?.['n'] === 0) await q('INSERT INTO vnfm_schema (version) VALUES (0)');
        refuseNewer(current);
        for (const m of [...all].sort((a, b) => a.version - b.version)) {
          if (m.version <= current) continue;
          await q('BEGIN');
          try {
            await client.query(m.postgres ?? m.sql);
            await q('UPDATE vnfm_schema SET version = $1', [m.version]);
            await q('COMMIT');
          } catch (err) {
            if (isConnectionFailure(err)) broken = err;
            await client.query('ROLLBACK').catch(() => undefined);
            throw new VnfmError(`migration ${m.version} (${m.name}) failed on the shared store ${this.display}: ${(err as Error).message}`, { cause: err });
          }
          current = m.version;
        }
      } finally {
        if (!broken) await q(`SELECT pg_advisory_unlock(${MIGRATION_LOCK}, 2)`);
      }
    } finally {
      client.release(broken ? (broken as Error) : undefined);
    }
  }

  /** The schema version recorded in the database. */
  async schemaVersion(): Promise<number> {
    return ((await this.prepare('SELECT max(version) AS v FROM vnfm_schema').get()) as { v: number | null } | undefined)?.v ?? 0;
  }

  /** The server's version string (store-info). */
  async serverVersion(): Promise<string> {
    return String(((await this.prepare('SHOW server_version').get()) as { server_version?: string } | undefined)?.server_version ?? '');
  }

  /** An error of node-postgres (or of the connection) as vnfm reports it; the password never shows. */
  errorOf(err: unknown): Error {
    if (err instanceof VnfmError || (err as { vnfmMapped?: boolean })?.vnfmMapped) return err as Error;
    const e = err as { message?: string; code?: string; constraint?: string; detail?: string };
    const clean = (s: string) => redact(s, this.target.secrets);
    const message = clean(e?.message ?? String(err));
    const where = `the database ${this.display}`;
    const mapped = (() => {
      if (isTlsFailure(err)) {
        return new StoreUnreachableError(`cannot connect to ${where}: TLS: ${message}`, {
          hint: `sslmode=${this.target.sslMode}: give the CA that signed the server's certificate as sslrootcert=/path/ca.pem in the URL${this.target.sslMode === 'verify-full' ? ', and check that the certificate names the host of the URL' : ''}`,
        });
      }
      if (isConnectionFailure(err)) {
        return new StoreUnreachableError(`cannot reach ${where}: ${message}`, {
          hint: 'check that PostgreSQL runs there and accepts connections from this machine (VNFM_DATABASE_URL); nothing was changed',
        });
      }
      if (e?.code === '28P01' || e?.code === '28000') {
        return new StoreUnreachableError(`${where} refused the login: ${message}`, { hint: 'check the user and password in VNFM_DATABASE_URL (or PGPASSWORD)' });
      }
      if (e?.code === '3D000') return new StoreUnreachableError(`${where}: ${message}`, { hint: 'create the database first (createdb), or name another in the URL' });
      if (e?.code === '55P03') {
        return new ConflictError(`the shared store is busy: another client held its write lock too long (${message})`, { hint: 'run the command again' });
      }
      if (e?.code === '23505') return new Error(clean(`UNIQUE constraint failed (${e.constraint ?? 'unique'}): ${e.detail ?? message}`));
      if (e?.code === '23503') return new Error(clean(`FOREIGN KEY constraint failed (${e.constraint ?? 'foreign key'}): ${e.detail ?? message}`));
      return new Error(e?.code ? `${message} (SQLSTATE ${e.code})` : message);
    })();
    (mapped as { vnfmMapped?: boolean }).vnfmMapped = true;
    return mapped;
  }
}

/** Marks a failure of a statement that was the first on its connection: nothing of the request reached the server. */
async function firstStep<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err && typeof err === 'object') (err as { vnfmFirstStep?: boolean }).vnfmFirstStep = true;
    throw err;
  }
}

/** Opens the shared store and applies pending migrations. */
export async function openPostgres(url: string, migrations: Migration[]): Promise<PostgresDb> {
  const db = new PostgresDb(url);
  await db.connect();
  try {
    await db.migrate(migrations);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}
