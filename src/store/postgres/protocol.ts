/**
 * What the store's PostgreSQL worker thread (worker.ts) and the synchronous
 * facade on the main thread (database.ts) say to each other: one request at
 * a time, its answer read with receiveMessageOnPort once the worker has
 * written the request's number to the shared flag (sync-call.ts).
 */

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

export type Params = unknown[];

export type Request =
  | { kind: 'connect' }
  /** One statement; `retry`: it may run again on a new connection when the old one turns out to be gone. */
  | { kind: 'query'; sql: string; params: Params; retry: boolean }
  /** Statements run in order, as one request (BEGIN and the write lock; a whole autocommit write). */
  | { kind: 'batch'; steps: { sql: string; params: Params }[]; retry: boolean; rollbackOnError: boolean; resultStep?: number }
  /** Several statements in one string, no parameters (migrations). */
  | { kind: 'exec'; sql: string }
  /** The main thread stopped waiting: cancel what runs and drop the connection (posted without waiting for an answer). */
  | { kind: 'abandon' }
  | { kind: 'end' };

export interface PgFailure {
  message: string;
  code?: string;
  constraint?: string;
  detail?: string;
  /** The connection is gone (refused, reset, the server shut down). */
  connection: boolean;
  /** TLS failed: the certificate, its name or the handshake. */
  tls: boolean;
}

export type Response = { ok: true; rows: Record<string, unknown>[]; fields: string[]; rowCount: number } | { ok: false; error: PgFailure };
