/**
 * What the repositories ask of a database: the part of better-sqlite3's API
 * they use. SQLite (database.ts) is better-sqlite3 itself; PostgreSQL
 * (postgres/database.ts) is a synchronous facade with the same shape, so the
 * repositories are one piece of code for both.
 */

export interface RunResult {
  changes: number;
}

/** A prepared statement: positional values (`?`) or one object of named ones (`@name`). */
export interface Statement {
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): RunResult;
  /** Rows as their first column's value. */
  pluck(toggle?: boolean): this;
}

/**
 * A function run in a transaction: as a plain call or `deferred()`, reads
 * first (a snapshot); `immediate()` takes the store's write lock first, so a
 * check and the write it guards are atomic across processes and machines.
 * Nested, it is a savepoint of the outer transaction.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export interface Transaction<F extends (...args: any[]) => any> {
  (...args: any[]): ReturnType<F>;
  deferred(...args: any[]): ReturnType<F>;
  immediate(...args: any[]): ReturnType<F>;
  exclusive(...args: any[]): ReturnType<F>;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

export interface StoreDb {
  prepare(sql: string): Statement;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  transaction<F extends (...args: any[]) => any>(fn: F): Transaction<F>;
  /** Runs statements without parameters (migrations). */
  exec(sql: string): unknown;
  close(): unknown;
}
