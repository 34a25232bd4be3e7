/**
 * The store's backends for tests that run once on each: SQLite in a temp
 * VNFM_HOME, and PostgreSQL on a private cluster (test/support/postgres.ts),
 * a fresh database per store. Use inside `describe.each(STORE_BACKENDS)`,
 * calling `useStoreBackend(name)` at the top of the block.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { connectStore, type OpenStoreOptions, type Store } from '../../src/store/index.js';
import { startPostgres, type PgServer } from './postgres.js';

export const STORE_BACKENDS = ['sqlite', 'postgres'] as const;
export type StoreBackend = (typeof STORE_BACKENDS)[number];

export interface BackendHandle {
  /** A new, empty store on this backend, with its own VNFM_HOME. */
  open(opts?: OpenStoreOptions): Promise<Store>;
  /** Opens another client on the same database as `store` (PostgreSQL), or on the same file (SQLite). */
  reopen(home: string, url: string | undefined, opts?: OpenStoreOptions): Promise<Store>;
  server(): PgServer | undefined;
}

export const tempHome = (): string => join(mkdtempSync(join(tmpdir(), 'vnfm-store-')), 'home');

export function useStoreBackend(backend: StoreBackend): BackendHandle {
  let server: PgServer | undefined;
  beforeAll(async () => {
    if (backend === 'postgres') server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });
  return {
    async open(opts = {}) {
      const home = tempHome();
      if (!server) return connectStore(home, opts);
      return connectStore(home, { ...opts, databaseUrl: server.url(await server.createDatabase()) });
    },
    reopen(home, url, opts = {}) {
      return connectStore(home, { ...opts, databaseUrl: url });
    },
    server: () => server,
  };
}
