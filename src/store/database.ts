/**
 * The one module that opens SQLite. Everything vnfm keeps lives in one file
 * under VNFM_HOME, in WAL mode so readers never block the writer and several
 * vnfm processes can work at once.
 */
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AsyncLocalStorage } from 'node:async_hooks';
import Database from 'better-sqlite3';
import { VnfmError } from '../errors.js';
import type { RunResult, Statement, StoreDb, Transaction } from './db.js';
import { SQLITE } from './dialect.js';
import { migrations, type Migration } from './migrations/index.js';
import { loadNativeBinding } from './native-binding.js';

/** What the repositories work on: SQLite here (SqliteStoreDb), or PostgreSQL (postgres/database.ts). */
export type Db = StoreDb;
/** The SQLite database itself. */
export type SqliteDb = Database.Database;

export const DATABASE_FILE = 'vnfm.db';

/** How long a writer waits for another process's transaction before giving up. */
const BUSY_TIMEOUT_MS = 15_000;

/**
 * Creates `home` (0700) if needed and opens `home/vnfm.db` (0600), applying
 * any pending migrations.
 */
export function openDatabase(home: string, opts: { migrations?: Migration[] } = {}): SqliteDb {
  ensurePrivateDir(home);
  const file = join(home, DATABASE_FILE);
  // Create the file ourselves so it is 0600 from its first byte; SQLite gives
  // the -wal and -shm files the mode of the database file.
  closeSync(openSync(file, 'a', 0o600));
  const db = new Database(file, addonOptions(home));
  // One statement list, run at every start of every command. better-sqlite3 builds SQLite with a 16 MiB page cache;
  // a command reads a list of 10 000 once, so such a cache only adds to its RSS. SQLite's own default (2 MiB)
  // holds what other commands read again.
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -2000`);
  migrate(db, opts.migrations ?? migrations);
  return cacheStatements(db);
}

/** Statements a connection keeps prepared; past this, the least recently used is dropped. */
export const STATEMENT_CACHE_SIZE = 256;

/**
 * Prepares each SQL text once per connection: a repository asks for its
 * statement at every call, and compiling it again each time was a tenth of
 * the store's CPU in an operation. Only statements in their first mode (rows
 * as objects) are shared: one a caller switches to pluck, raw or expand
 * leaves the cache and is that caller's alone, and one still being iterated
 * is not handed out again (the caller gets a new one). `exec` (migrations,
 * schema changes) empties the cache, though SQLite would prepare a statement
 * whose tables changed again by itself.
 */
export function cacheStatements(db: SqliteDb): SqliteDb {
  const prepare = db.prepare.bind(db);
  const exec = db.exec.bind(db);
  const cache = new Map<string, Database.Statement>();
  const owned = (sql: string, stmt: Database.Statement) => {
    for (const mode of ['pluck', 'raw', 'expand'] as const) {
      const set = stmt[mode].bind(stmt);
      // better-sqlite3 tells `pluck()` from `pluck(undefined)`: the arguments go on as given.
      stmt[mode] = (...toggle: [boolean?]) => {
        if (toggle[0] !== false && cache.get(sql) === stmt) cache.delete(sql);
        return set(...toggle);
      };
    }
    return stmt;
  };
  const cached = (sql: string): Database.Statement => {
    const hit = cache.get(sql);
    if (hit && !hit.busy) {
      // The most recently used last: the first entry is the one to drop.
      cache.delete(sql);
      cache.set(sql, hit);
      return hit;
    }
    const stmt = prepare(sql);
    if (hit || !stmt.reader) {
      if (!hit) cache.set(sql, stmt);
    } else cache.set(sql, owned(sql, stmt));
    if (cache.size > STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    return stmt;
  };
  return Object.assign(db, {
    prepare: cached as SqliteDb['prepare'],
    exec(sql: string) {
      cache.clear();
      exec(sql);
      return db;
    },
  });
}

/**
 * Hands better-sqlite3 its addon already loaded, so it never searches for one
 * (native-binding.ts). It accepts the module object as well as a path; its
 * type declarations know only the path.
 */
function addonOptions(home: string): Database.Options {
  return { nativeBinding: loadNativeBinding(home) as unknown as string };
}

/** The version of the SQLite library inside better-sqlite3's addon. */
export function sqliteVersion(home: string): string {
  ensurePrivateDir(home);
  const db = new Database(':memory:', addonOptions(home));
  try {
    return db.prepare('select sqlite_version()').pluck().get() as string;
  } finally {
    db.close();
  }
}

export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = statSync(dir);
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
    throw new VnfmError(`${dir} belongs to another user (uid ${st.uid})`, {
      hint: 'set VNFM_HOME to a directory you own',
    });
  }
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/** Applies pending migrations, each in its own immediate transaction. */
export function migrate(db: SqliteDb, all: Migration[]): void {
  const latest = all.reduce((max, m) => Math.max(max, m.version), 0);
  const current = () => db.pragma('user_version', { simple: true }) as number;
  const found = current();
  if (found > latest) {
    throw new VnfmError(`the store was written by a newer vnfm (schema ${found}, this vnfm knows ${latest})`, {
      hint: 'upgrade vnfm, or point VNFM_HOME at another directory',
    });
  }
  // Up to date, as at nearly every start: nothing to read again per migration.
  if (found === latest) return;
  for (const m of [...all].sort((a, b) => a.version - b.version)) {
    if (current() >= m.version) continue;
    // SQLite changes this setting only outside a transaction; the checks below stand for it meanwhile.
    if (m.rebuildsReferencedTables) db.pragma('foreign_keys = OFF');
    try {
      // Re-read the version inside the write lock: another process may have
      // applied this migration while we waited for it.
      db.transaction(() => {
        if (current() >= m.version) return;
        db.exec(m.sql);
        if (m.rebuildsReferencedTables) {
          const broken = db.pragma('foreign_key_check') as { table: string; rowid: number; parent: string }[];
          if (broken.length) {
            const first = broken[0]!;
            throw new VnfmError(
              `schema migration ${m.version} (${m.name}) left ${broken.length} rows whose references are broken (${first.table} row ${first.rowid} -> ${first.parent})`,
              {
                hint: 'the store was not changed; keep a copy of vnfm.db and report this',
              },
            );
          }
        }
        db.pragma(`user_version = ${m.version}`);
      }).immediate();
    } finally {
      if (m.rebuildsReferencedTables) db.pragma('foreign_keys = ON');
    }
  }
}

/** The transaction a piece of async code runs in, on the connection that opened it. */
interface TxScope {
  owner: object;
  /** Savepoints open below the transaction. */
  depth: number;
}

/**
 * The SQLite store behind the async interface (db.ts): each statement runs
 * at once on the one connection and its answer is a settled promise. A
 * transaction runs an async function: statements from its async context are
 * part of it; any other (a heartbeat's timer, another task of the same
 * process) waits until it has ended, so nothing of another task's ever
 * lands in it.
 */
export class SqliteStoreDb implements StoreDb {
  readonly dialect = SQLITE;
  readonly #scope = new AsyncLocalStorage<TxScope>();
  /** The open transaction and the promise that settles when it ends. */
  #open: { scope: TxScope; ended: Promise<void> } | undefined;

  /** Statements that answer with their first column, prepared once each (the connection's cache keeps those that answer rows). */
  readonly #pluckCache = new Map<string, Database.Statement>();

  constructor(readonly sqlite: SqliteDb) {}

  #plucked(sql: string): Database.Statement {
    let stmt = this.#pluckCache.get(sql);
    if (!stmt || stmt.busy) {
      stmt = this.sqlite.prepare(sql).pluck();
      this.#pluckCache.set(sql, stmt);
      if (this.#pluckCache.size > STATEMENT_CACHE_SIZE) this.#pluckCache.delete(this.#pluckCache.keys().next().value!);
    }
    return stmt;
  }

  /** Whether the caller may use the connection now: no transaction is open, or it is the caller's. */
  #mine(): boolean {
    return this.#open === undefined || this.#scope.getStore() === this.#open.scope;
  }

  /** Waits until no other task's transaction is open. */
  async #turn(): Promise<void> {
    while (!this.#mine()) await this.#open!.ended;
  }

  /** `fn` now when the connection is free for the caller, else once it is. */
  run<T>(fn: () => T): Promise<T> {
    if (this.#mine()) {
      try {
        return Promise.resolve(fn());
      } catch (err) {
        return Promise.reject(err as Error);
      }
    }
    return this.#turn().then(fn);
  }

  prepare(sql: string): Statement {
    let pluck = false;
    const stmt = (): Database.Statement => (pluck ? this.#plucked(sql) : this.sqlite.prepare(sql));
    const self: Statement = {
      get: (...params) => this.run(() => stmt().get(...params)),
      all: (...params) => this.run(() => stmt().all(...params)),
      run: (...params) => this.run((): RunResult => ({ changes: stmt().run(...params).changes })),
      pluck(toggle = true) {
        pluck = toggle;
        return this;
      },
    };
    return self;
  }

  runUnlocked(sql: string, ...params: unknown[]): Promise<RunResult> {
    return this.prepare(sql).run(...params);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  transaction<F extends (...args: any[]) => any>(fn: F): Transaction<F> {
    type Out = Promise<Awaited<ReturnType<F>>>;
    const run =
      (begin: string) =>
      async (...args: Parameters<F>): Out => {
        const outer = this.#scope.getStore();
        if (outer && this.#open?.scope === outer) {
          // Nested: a savepoint of the caller's transaction.
          const name = `vnfm_sp${++outer.depth}`;
          this.sqlite.exec(`SAVEPOINT ${name}`);
          try {
            const out = (await fn(...args)) as Awaited<ReturnType<F>>;
            this.sqlite.exec(`RELEASE SAVEPOINT ${name}`);
            return out;
          } catch (err) {
            if (this.sqlite.inTransaction) this.sqlite.exec(`ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`);
            throw err;
          } finally {
            outer.depth--;
          }
        }
        await this.#turn();
        const scope: TxScope = { owner: this, depth: 0 };
        let end!: () => void;
        this.#open = { scope, ended: new Promise<void>((resolve) => (end = resolve)) };
        try {
          this.sqlite.exec(begin);
          try {
            const out = (await this.#scope.run(scope, () => fn(...args))) as Awaited<ReturnType<F>>;
            this.sqlite.exec('COMMIT');
            return out;
          } catch (err) {
            if (this.sqlite.inTransaction) this.sqlite.exec('ROLLBACK');
            throw err;
          }
        } finally {
          this.#open = undefined;
          end();
        }
      };
    const t = run('BEGIN') as Transaction<F>;
    t.deferred = run('BEGIN DEFERRED');
    t.immediate = run('BEGIN IMMEDIATE');
    t.exclusive = run('BEGIN EXCLUSIVE');
    return t;
  }

  exec(sql: string): Promise<unknown> {
    return this.run(() => this.sqlite.exec(sql));
  }

  close(): Promise<void> {
    this.sqlite.close();
    return Promise.resolve();
  }
}

/** The SQLite store under `home`, opened and migrated (openDatabase), behind the async interface. */
export function openSqliteStore(home: string): SqliteStoreDb {
  return new SqliteStoreDb(openDatabase(home));
}
