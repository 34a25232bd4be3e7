/**
 * The store on PostgreSQL, behind the same synchronous interface as SQLite
 * (../db.ts), so that the repositories and every caller stay as they are.
 *
 * node-postgres is asynchronous; vnfm's store is not. A worker thread
 * (worker.ts) holds the connection; each statement is posted to it and the
 * main thread blocks (Atomics.wait) until the answer is there. vnfm is a
 * short-lived command-line process doing one thing at a time, so blocking
 * the main thread for a round trip costs nothing a user could see, and keeps
 * one code path for both backends. It is not a design for a server.
 *
 * Writes are serialised as SQLite serialises them: an `immediate`
 * transaction, and a write outside any transaction, first takes one
 * transaction-scoped advisory lock (the store's write lock). Reads never
 * take it and never wait (MVCC). Migrations run under a session advisory
 * lock: the first client applies them, the others wait and find them done.
 */
import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as sea from 'node:sea';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { ConflictError, InterruptedError, StoreUnreachableError, TerminatedError, TimeoutError, VnfmError } from '../../errors.js';
import type { RunResult, Statement, StoreDb, Transaction } from '../db.js';
import type { Migration } from '../migrations/index.js';
import { parseDatabaseUrl, redact, type DatabaseTarget } from './connection.js';
import { bindValues, toPostgres, type Translated } from './dialect.js';
import type { Params, PgFailure, Request, Response } from './protocol.js';
import { FLAG_SLOTS, SyncCaller, type Interruption } from './sync-call.js';

/** The worker bundled for bin/vnfm and the single executable (scripts/bundle.mjs), as a file under build/chunks/ and an asset. */
export const WORKER_CHUNK = 'pg-worker.cjs';

/** Advisory lock keys: 'vnfm' as a 32-bit number, then which lock. */
const WRITE_LOCK = 'pg_advisory_xact_lock(1986946669, 1)';
const MIGRATION_LOCK = 1986946669;
/** A write transaction's start, in one round trip (no parameters: the simple protocol takes both statements at once). */
const BEGIN_LOCKED = `BEGIN; SELECT ${WRITE_LOCK}`;

/** How long the main thread waits for one answer beyond the connection's own timeouts, before it gives up on the worker. */
const ANSWER_TIMEOUT_MS = 300_000;

type Ok = Extract<Response, { ok: true }>;

export class PostgresDb implements StoreDb {
  readonly target: DatabaseTarget;
  readonly #worker: Worker;
  readonly #port: MessagePort;
  readonly #caller: SyncCaller<Request, Response>;
  #depth = 0;
  #locked = false;
  #closed = false;
  #deadlineError: (() => Error) | undefined;
  /** newListener comes before the listener is added: the event it names counts as handled. */
  readonly #onNewListener = (event: string | symbol) => {
    if (event === 'SIGINT' || event === 'SIGTERM') this.#tellHandled(event);
  };
  readonly #onRemoveListener = (event: string | symbol) => {
    if (event === 'SIGINT' || event === 'SIGTERM') this.#tellHandled();
  };

  constructor(url: string) {
    this.target = parseDatabaseUrl(url);
    const signal = new SharedArrayBuffer(4 * FLAG_SLOTS);
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    this.#caller = new SyncCaller(port1, signal);
    this.#worker = new Worker(workerSource(), { eval: true, workerData: { signal, port: port2, config: this.target.config }, transferList: [port2] });
    // A command that ends without closing the store still exits.
    this.#worker.unref();
    this.#port.unref();
    // Which signals the main thread handles, kept current for the worker (sync-call.ts).
    this.#tellHandled();
    process.on('newListener', this.#onNewListener);
    process.on('removeListener', this.#onRemoveListener);
    this.call({ kind: 'connect' }, this.target.config.connectTimeoutMs * 2 + 30_000);
  }

  #tellHandled(adding?: 'SIGINT' | 'SIGTERM'): void {
    this.#caller.handles({
      SIGINT: adding === 'SIGINT' || process.listenerCount('SIGINT') > 0,
      SIGTERM: adding === 'SIGTERM' || process.listenerCount('SIGTERM') > 0,
    });
  }

  /**
   * Waits for the database stop at `at` (epoch ms) with the error `error`
   * makes, as the operation's own timer would stop it if the main thread
   * were not blocked on an answer; undefined lifts it.
   */
  setDeadline(at: number | undefined, error?: () => Error): void {
    this.#caller.setDeadline(at);
    this.#deadlineError = error;
  }

  /** The URL as it may be shown (password masked). */
  get display(): string {
    return this.target.display;
  }

  private call(req: Request, timeoutMs = ANSWER_TIMEOUT_MS): Ok {
    if (this.#closed) throw new VnfmError('internal: the store was used after it was closed');
    const got = this.#caller.call(req, timeoutMs);
    if (got && 'interrupted' in got) {
      this.#caller.post({ kind: 'abandon' });
      throw this.interruptedError(got.interrupted, got.waitedMs);
    }
    if (!got) {
      throw new StoreUnreachableError(`the database ${this.display} did not answer within ${Math.round(timeoutMs / 1000)} s`, {
        hint: 'check the network to the database server; connect_timeout in the URL bounds a connection attempt',
      });
    }
    const res = got.answer;
    if (!res.ok) throw this.errorOf(res.error);
    return res;
  }

  /** A wait for the database ended by a signal or the deadline: the error the signal's handler or the timer would have raised. */
  private interruptedError(why: Interruption, waitedMs: number): Error {
    const waited = `while waiting ${(waitedMs / 1000).toFixed(1)} s for the database ${this.display}`;
    const hint =
      "another client may hold the shared store's write lock (vnfm store-info shows the locks); what this command could not record is left to its lease: " +
      'an operation it ran becomes FAILED_TEMP once its holder is found gone, or when the lease runs out (VNFM_LEASE_TIMEOUT)';
    if ('deadline' in why) {
      const base = this.#deadlineError?.();
      return new TimeoutError(`${base?.message ?? 'timed out'} ${waited}`, { hint, ...(base ? { cause: base } : {}) });
    }
    if (why.signal === 'SIGTERM') return new TerminatedError(`terminated (SIGTERM) ${waited}`, { hint });
    return new InterruptedError(`interrupted ${waited}`, { hint });
  }

  private errorOf(f: PgFailure): Error {
    const clean = (s: string) => redact(s, this.target.secrets);
    const message = clean(f.message);
    const where = `the database ${this.display}`;
    if (f.tls) {
      return new StoreUnreachableError(`cannot connect to ${where}: TLS: ${message}`, {
        hint: `sslmode=${this.target.sslMode}: give the CA that signed the server's certificate as sslrootcert=/path/ca.pem in the URL${this.target.sslMode === 'verify-full' ? ', and check that the certificate names the host of the URL' : ''}`,
      });
    }
    if (f.connection) {
      return new StoreUnreachableError(`cannot reach ${where}: ${message}`, {
        hint: 'check that PostgreSQL runs there and accepts connections from this machine (VNFM_DATABASE_URL); nothing was changed',
      });
    }
    if (f.code === '28P01' || f.code === '28000') {
      return new StoreUnreachableError(`${where} refused the login: ${message}`, { hint: 'check the user and password in VNFM_DATABASE_URL (or PGPASSWORD)' });
    }
    if (f.code === '3D000') return new StoreUnreachableError(`${where}: ${message}`, { hint: 'create the database first (createdb), or name another in the URL' });
    if (f.code === '55P03') {
      return new ConflictError(`the shared store is busy: another client held its write lock too long (${message})`, { hint: 'run the command again' });
    }
    if (f.code === '23505') return new Error(clean(`UNIQUE constraint failed (${f.constraint ?? 'unique'}): ${f.detail ?? message}`));
    if (f.code === '23503') return new Error(clean(`FOREIGN KEY constraint failed (${f.constraint ?? 'foreign key'}): ${f.detail ?? message}`));
    return new Error(f.code ? `${message} (SQLSTATE ${f.code})` : message);
  }

  /** A statement as it is, outside the dialect translation (migrations, locks). */
  raw(sql: string, params: Params = []): Ok {
    return this.call({ kind: 'query', sql, params, retry: this.#depth === 0 });
  }

  /** Runs a translated statement; a write outside a transaction takes the write lock in one of its own. */
  execute(t: Translated, args: unknown[]): Ok {
    const params = bindValues(t, args);
    if (this.#depth === 0) {
      if (!t.writes) return this.call({ kind: 'query', sql: t.text, params, retry: true });
      return this.call({
        kind: 'batch',
        steps: [
          { sql: BEGIN_LOCKED, params: [] },
          { sql: t.text, params },
          { sql: 'COMMIT', params: [] },
        ],
        retry: true,
        rollbackOnError: true,
        resultStep: 1,
      });
    }
    if (t.writes && !this.#locked) {
      this.raw(`SELECT ${WRITE_LOCK}`);
      this.#locked = true;
    }
    return this.call({ kind: 'query', sql: t.text, params, retry: false });
  }

  prepare(sql: string): Statement {
    return new PgStatement(this, toPostgres(sql));
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  transaction<F extends (...args: any[]) => any>(fn: F): Transaction<F> {
    const run =
      (mode: 'deferred' | 'immediate') =>
      (...args: unknown[]): ReturnType<F> => {
        if (this.#depth > 0) return this.savepoint(mode, () => fn(...args) as ReturnType<F>);
        this.call({
          kind: 'batch',
          steps: mode === 'immediate' ? [{ sql: BEGIN_LOCKED, params: [] }] : [{ sql: 'BEGIN ISOLATION LEVEL REPEATABLE READ', params: [] }],
          retry: true,
          rollbackOnError: true,
        });
        this.#depth = 1;
        this.#locked = mode === 'immediate';
        try {
          const out = fn(...args) as ReturnType<F>;
          this.raw('COMMIT');
          return out;
        } catch (err) {
          try {
            this.raw('ROLLBACK');
          } catch {
            // The connection is gone: the server has rolled back already.
          }
          throw err;
        } finally {
          this.#depth = 0;
          this.#locked = false;
        }
      };
    const t = run('deferred') as Transaction<F>;
    t.deferred = run('deferred');
    t.immediate = run('immediate');
    t.exclusive = run('immediate');
    return t;
  }

  private savepoint<T>(mode: 'deferred' | 'immediate', fn: () => T): T {
    if (mode === 'immediate' && !this.#locked) {
      this.raw(`SELECT ${WRITE_LOCK}`);
      this.#locked = true;
    }
    const name = `vnfm_sp${this.#depth}`;
    this.raw(`SAVEPOINT ${name}`);
    this.#depth++;
    try {
      const out = fn();
      this.raw(`RELEASE SAVEPOINT ${name}`);
      return out;
    } catch (err) {
      try {
        this.raw(`ROLLBACK TO SAVEPOINT ${name}`);
        this.raw(`RELEASE SAVEPOINT ${name}`);
      } catch {
        // The outer transaction fails as a whole.
      }
      throw err;
    } finally {
      this.#depth--;
    }
  }

  exec(sql: string): void {
    this.call({ kind: 'exec', sql });
  }

  close(): void {
    if (this.#closed) return;
    try {
      this.call({ kind: 'end' }, 10_000);
    } catch {
      // Closing a connection that is gone: nothing to do.
    }
    this.#closed = true;
    process.removeListener('newListener', this.#onNewListener);
    process.removeListener('removeListener', this.#onRemoveListener);
    this.#port.close();
    void this.#worker.terminate();
  }

  /**
   * Applies pending migrations, once across every client: under a session
   * advisory lock, each in its own transaction, recorded in vnfm_schema. A
   * schema newer than this vnfm knows is refused before anything is read.
   */
  migrate(all: Migration[]): void {
    const latest = all.reduce((max, m) => Math.max(max, m.version), 0);
    const version = (): number | undefined => {
      const exists = this.raw("SELECT to_regclass('vnfm_schema') IS NOT NULL AS e").rows[0]?.['e'] === true;
      return exists ? ((this.raw('SELECT max(version) AS v FROM vnfm_schema').rows[0]?.['v'] as number | null) ?? 0) : undefined;
    };
    const refuseNewer = (v: number | undefined) => {
      if (v !== undefined && v > latest) {
        throw new VnfmError(`the shared store ${this.display} has schema version ${v}, and this vnfm knows only up to ${latest}: another client has upgraded it`, {
          hint: 'upgrade vnfm here to the version the other clients run (vnfm --version); this vnfm changed nothing',
        });
      }
    };
    const before = version();
    refuseNewer(before);
    if (before === latest) return;
    // The lock is waited for as long as another client's migrations take (lock_timeout would cut the wait short).
    this.call({
      kind: 'batch',
      steps: [
        { sql: 'SET lock_timeout = 0', params: [] },
        { sql: `SELECT pg_advisory_lock(${MIGRATION_LOCK}, 2)`, params: [] },
        { sql: `SET lock_timeout = ${this.target.config.lockTimeoutMs}`, params: [] },
      ],
      retry: true,
      rollbackOnError: false,
    });
    try {
      this.raw('CREATE TABLE IF NOT EXISTS vnfm_schema (version INTEGER NOT NULL)');
      let current = version() ?? 0;
      if (this.raw('SELECT count(*) AS n FROM vnfm_schema').rows[0]?.['n'] === 0) this.raw('INSERT INTO vnfm_schema (version) VALUES (0)');
      refuseNewer(current);
      for (const m of [...all].sort((a, b) => a.version - b.version)) {
        if (m.version <= current) continue;
        this.raw('BEGIN');
        try {
          this.exec(m.postgres ?? m.sql);
          this.raw('UPDATE vnfm_schema SET version = $1', [m.version]);
          this.raw('COMMIT');
        } catch (err) {
          this.raw('ROLLBACK');
          throw new VnfmError(`migration ${m.version} (${m.name}) failed on the shared store ${this.display}: ${(err as Error).message}`, { cause: err });
        }
        current = m.version;
      }
    } finally {
      this.raw(`SELECT pg_advisory_unlock(${MIGRATION_LOCK}, 2)`);
    }
  }

  /** The schema version recorded in the database. */
  schemaVersion(): number {
    return (this.raw('SELECT max(version) AS v FROM vnfm_schema').rows[0]?.['v'] as number | null) ?? 0;
  }

  /** The server's version string (store-info). */
  serverVersion(): string {
    return String(this.raw('SHOW server_version').rows[0]?.['server_version'] ?? '');
  }
}

class PgStatement implements Statement {
  #pluck = false;
  constructor(
    private readonly db: PostgresDb,
    private readonly t: Translated,
  ) {}

  pluck(toggle = true): this {
    this.#pluck = toggle;
    return this;
  }

  private rows(args: unknown[]): unknown[] {
    const res = this.db.execute(this.t, args);
    if (!this.#pluck) return res.rows;
    const first = res.fields[0];
    return first === undefined ? [] : res.rows.map((r) => r[first]);
  }

  get(...args: unknown[]): unknown {
    return this.rows(args)[0];
  }

  all(...args: unknown[]): unknown[] {
    return this.rows(args);
  }

  run(...args: unknown[]): RunResult {
    return { changes: this.db.execute(this.t, args).rowCount };
  }
}

/** Opens the shared store and applies pending migrations. */
export function openPostgres(url: string, migrations: Migration[]): PostgresDb {
  const db = new PostgresDb(url);
  try {
    db.migrate(migrations);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

let source: string | undefined;

/**
 * The worker's code: from the single executable's assets, from
 * build/chunks/ beside the bundle, or, in the source tree (tests), bundled
 * from worker.ts on the spot with esbuild (a development dependency).
 */
function workerSource(): string {
  if (source) return source;
  if (sea.isSea()) return (source = sea.getAsset(`chunks/${WORKER_CHUNK}`, 'utf8'));
  const here = dirname(fileURLToPath(import.meta.url));
  // Beside this code when it is itself a chunk (build/chunks/room-postgres.cjs), under chunks/ beside the main bundle otherwise.
  const chunk = [join(here, WORKER_CHUNK), join(here, 'chunks', WORKER_CHUNK)].find((f) => existsSync(f));
  if (chunk) return (source = readFileSync(chunk, 'utf8'));
  const require = createRequire(import.meta.url);
  const esbuild = require('esbuild') as typeof import('esbuild');
  const out = esbuild.buildSync({ entryPoints: [join(here, 'worker.ts')], bundle: true, platform: 'node', format: 'cjs', write: false, logLevel: 'silent' });
  return (source = out.outputFiles[0]!.text);
}
