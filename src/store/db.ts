/**
 * What the repositories ask of a database, asynchronously: statements
 * prepared from SQL text whose answers are promises, and transactions over
 * async functions. SQLite (database.ts) runs each statement at once on its
 * one connection; PostgreSQL (postgres/database.ts) sends it on a pooled
 * connection of node-postgres on the main event loop. The repositories are
 * one piece of code for both; where the two speak SQL differently, they ask
 * the dialect (dialect.ts) for the text.
 *
 * A transaction is carried by the async context of the function it runs
 * (AsyncLocalStorage): a statement run from inside it, however deep in the
 * calls, is part of it; one run from elsewhere meanwhile (a timer's
 * heartbeat, another task) is not: on SQLite it waits for the transaction to
 * end, on PostgreSQL it runs on another connection.
 */
import type { Dialect } from './dialect.js';

export interface RunResult {
  changes: number;
}

/** A prepared statement: positional values (`?`) or one object of named ones (`@name`). */
export interface Statement {
  get(...params: unknown[]): Promise<unknown>;
  all(...params: unknown[]): Promise<unknown[]>;
  run(...params: unknown[]): Promise<RunResult>;
  /** Rows as their first column's value. */
  pluck(toggle?: boolean): this;
}

/**
 * An async function run in a transaction: as a plain call or `deferred()`,
 * reads first (a snapshot); `immediate()` takes the store's write lock first,
 * so a check and the write it guards are atomic across processes and
 * machines. Nested, it is a savepoint of the outer transaction.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export interface Transaction<F extends (...args: any[]) => any> {
  (...args: Parameters<F>): Promise<Awaited<ReturnType<F>>>;
  deferred(...args: Parameters<F>): Promise<Awaited<ReturnType<F>>>;
  immediate(...args: Parameters<F>): Promise<Awaited<ReturnType<F>>>;
  exclusive(...args: Parameters<F>): Promise<Awaited<ReturnType<F>>>;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

export interface StoreDb {
  /** How this database's SQL differs from the other's. */
  readonly dialect: Dialect;
  prepare(sql: string): Statement;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  transaction<F extends (...args: any[]) => any>(fn: F): Transaction<F>;
  /**
   * A write that does not wait for the store's write lock (PostgreSQL): for a
   * statement that only touches a row this client owns (a lease's heartbeat),
   * so another client's long write transaction cannot stall it. On SQLite,
   * whose one lock is the database's, the same as prepare(sql).run.
   */
  runUnlocked(sql: string, ...params: unknown[]): Promise<RunResult>;
  /** Runs statements without parameters (migrations). */
  exec(sql: string): Promise<unknown>;
  close(): Promise<void>;
}

/** Every item of an async iterable, in an array (Array.fromAsync, which Node 20 lacks). */
export async function collect<T>(items: Iterable<T> | AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
