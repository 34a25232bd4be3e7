/**
 * An operation's lease on a shared store while another client holds the
 * store's write lock longer than the lease lasts: the heartbeat runs on the
 * main event loop and renews only its own lock row (no write lock), so the
 * lease never runs out and the operation ends as it would otherwise. With the
 * store behind a main thread blocked on each statement, the heartbeat could
 * not run during such a wait, and a second client took the lease for gone.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStore } from '../../src/store/index.js';
import type { LcmOpOcc } from '../../src/model/lcm.js';
import { startPostgres, type PgServer } from '../support/postgres.js';
import { instanceRecord, packageRecord } from '../support/store-records.js';
import { tempHome } from '../support/store-backends.js';

/** The store's write lock (store/postgres/database.ts). */
const WRITE_LOCK = 'SELECT pg_advisory_xact_lock(1986946669, 1)';
const LEASE_MS = 1_200;

describe('a lease on the shared store while another client holds the write lock', () => {
  let server: PgServer;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('the heartbeat keeps the lease past its timeout, and the operation records its end once the lock is free', async () => {
    const url = server.url(await server.createDatabase());
    const store = await connectStore(tempHome(), { databaseUrl: url, leaseTimeoutMs: LEASE_MS });
    const observer = await connectStore(tempHome(), { databaseUrl: url, leaseTimeoutMs: LEASE_MS });
    const blocker = new pg.Client({ connectionString: url.replace(/sslmode=[^&]*/, 'sslmode=disable') });
    try {
      await store.packages.insert(packageRecord({ id: 'p1' }));
      await store.instances.insert(instanceRecord({ id: 'i1', vnfPkgId: 'p1' }));
      const now = new Date().toISOString();
      const op: LcmOpOcc = {
        id: 'op1',
        vnfInstanceId: 'i1',
        operation: 'INSTANTIATE',
        operationState: 'PROCESSING',
        stateEnteredTime: now,
        startTime: now,
        operationParams: {},
        journal: [],
        isAutomaticInvocation: false,
      };
      const lock = { vnfInstanceId: 'i1', opId: 'op1', pid: process.pid, acquiredAt: now, hostId: 'this-host', startTime: '1' };
      await store.opOccs.exclusive(async () => {
        await store.opOccs.insert(op, {} as never);
        await store.opOccs.takeLock(lock);
      });
      const first = (await observer.opOccs.lock('i1'))!.leaseExpiresAt!;

      // Another client takes the write lock and keeps it for three lease timeouts.
      await blocker.connect();
      await blocker.query('BEGIN');
      await blocker.query(WRITE_LOCK);
      const held = Date.now();
      const seen: string[] = [];
      while (Date.now() - held < 3 * LEASE_MS) {
        await new Promise((r) => setTimeout(r, LEASE_MS / 4));
        const l = await observer.opOccs.lock('i1');
        seen.push(l!.leaseExpiresAt!);
        // Read by another client, the lease is never found run out.
        expect(Date.parse(l!.leaseExpiresAt!)).toBeGreaterThan(Date.now());
      }
      expect(seen.at(-1)! > first).toBe(true);

      // The operation's end waits for the write lock, and is recorded once it is free: the lease is still its own.
      const ending = store.opOccs.exclusive(async () => {
        const done = await store.opOccs.setState('op1', 'COMPLETED', new Date().toISOString(), { pid: null });
        await store.opOccs.releaseLock('i1', 'op1');
        return done;
      });
      await new Promise((r) => setTimeout(r, 200));
      await blocker.query('COMMIT');
      expect((await ending).operationState).toBe('COMPLETED');
      expect(await observer.opOccs.lock('i1')).toBeUndefined();
    } finally {
      await blocker.end().catch(() => undefined);
      await store.close();
      await observer.close();
    }
  }, 60_000);
});
