/**
 * The store on a temp database: migrations and file modes (SQLite), and the
 * repositories, once on SQLite and once on PostgreSQL.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { VnfPackage } from '../../src/model/package.js';
import { ConflictError, NotFoundError } from '../../src/errors.js';
import { migrations } from '../../src/store/migrations/index.js';
import { openStore } from '../../src/store/index.js';
import { collect } from '../../src/store/db.js';
import { openDatabase, SqliteStoreDb } from '../../src/store/database.js';
import type { LcmOpOcc, VnfInstance } from '../../src/model/lcm.js';
import { STORE_BACKENDS, useStoreBackend } from '../support/store-backends.js';
import { packageRecord } from '../support/store-records.js';

const home = () => join(mkdtempSync(join(tmpdir(), 'vnfm-store-')), 'home');

const pkg = (over: Partial<VnfPackage> = {}): VnfPackage => packageRecord({ userDefinedData: { k: 'v' }, ...over });

describe('store', () => {
  it('makes VNFM_HOME 0700 and the database 0600, in WAL mode with foreign keys and every migration applied', async () => {
    const h = home();
    const store = openStore(h);
    try {
      expect(statSync(h).mode & 0o777).toBe(0o700);
      expect(statSync(join(h, 'vnfm.db')).mode & 0o777).toBe(0o600);
      // The local store is SQLite: better-sqlite3's handle under the store's interface.
      const sqlite = (store.db as SqliteStoreDb).sqlite;
      expect(sqlite.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(sqlite.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(sqlite.pragma('user_version', { simple: true })).toBe(Math.max(...migrations.map((m) => m.version)));
    } finally {
      await store.close();
    }
  });

  it('applies only the migrations it has not applied, and refuses a store from a newer vnfm', () => {
    const h = home();
    openDatabase(h, { migrations: migrations.slice(0, 1) }).close();
    const db = openDatabase(h);
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.length);
    db.close();
    const newer = [...migrations, { version: 999, name: 'future', sql: 'CREATE TABLE future (x)' }];
    openDatabase(h, { migrations: newer }).close();
    expect(() => openDatabase(h)).toThrow(/written by a newer vnfm/);
  });
});

describe.each(STORE_BACKENDS)('store repositories on %s', (name) => {
  const backend = useStoreBackend(name);

  it('packages: found by id, vnfdId or name; vnfdId and name unique; in-use packages are not deleted', async () => {
    const store = await backend.open();
    try {
      await store.packages.insert(pkg({ name: 'basic' }));
      expect((await store.packages.get('p1')).userDefinedData).toEqual({ k: 'v' });
      expect((await store.packages.get('vnfd-1')).id).toBe('p1');
      expect((await store.packages.get('basic')).id).toBe('p1');
      await expect(store.packages.get('nope')).rejects.toThrow(NotFoundError);
      await expect(store.packages.insert(pkg({ id: 'p2' }))).rejects.toThrow(ConflictError);
      await expect(store.packages.insert(pkg({ id: 'p3', vnfdId: 'vnfd-3', name: 'basic' }))).rejects.toThrow(ConflictError);
      await store.packages.setStates('p1', { usageState: 'IN_USE' }, '2026-01-02T00:00:00.000Z');
      await expect(store.packages.delete('p1')).rejects.toThrow(/in use/);
      await store.packages.setStates('p1', { usageState: 'NOT_IN_USE', operationalState: 'DISABLED' }, '2026-01-03T00:00:00.000Z');
      expect(await store.packages.get('p1')).toMatchObject({ operationalState: 'DISABLED', updatedAt: '2026-01-03T00:00:00.000Z' });
      await store.packages.delete('p1');
      expect(await store.packages.list()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('VIMs: at most one default, enforced by the schema itself', async () => {
    const store = await backend.open();
    try {
      const insert = store.db.prepare(
        "INSERT INTO vims (id, name, type, is_default, auth_url, auth_method, verify_tls, status, created_at, updated_at) VALUES (?, ?, 'kubernetes', 1, 'https://h', 'bearer-token', 1, 'PENDING', 'now', 'now')",
      );
      await insert.run('a', 'a');
      await expect(insert.run('b', 'b')).rejects.toThrow(/UNIQUE/);
      expect((await store.vims.findDefault())?.id).toBe('a');
      // A read-modify-write does not overwrite what another client wrote since it read (compare-and-set on updatedAt).
      const read = await store.vims.get('a');
      await store.vims.update({ ...read, description: 'by another client', updatedAt: 'later' }, undefined, { readAt: read.updatedAt });
      await expect(store.vims.update({ ...read, description: 'stale', updatedAt: 'latest' }, undefined, { readAt: read.updatedAt })).rejects.toThrow(
        /vim "a" was changed by another command at later, after this one read it: nothing was written/,
      );
      expect((await store.vims.get('a')).description).toBe('by another client');
    } finally {
      await store.close();
    }
  });

  const NOW = '2026-01-01T00:00:00.000Z';
  const instance = (over: Partial<VnfInstance> = {}): VnfInstance =>
    ({
      id: 'inst-1',
      vnfInstanceName: 'web-1',
      vnfInstanceDescription: '',
      vnfdId: 'vnfd-1',
      vnfPkgId: 'p1',
      vnfProvider: 'ACME',
      vnfProductName: 'cnf',
      vnfSoftwareVersion: '1.0',
      vnfdVersion: '1.0',
      instantiationState: 'NOT_INSTANTIATED',
      createdAt: NOW,
      updatedAt: NOW,
      ...over,
    }) as VnfInstance;
  const op = (over: Partial<LcmOpOcc> = {}): LcmOpOcc => ({
    id: 'op-1',
    vnfInstanceId: 'inst-1',
    operation: 'INSTANTIATE',
    operationState: 'STARTING',
    stateEnteredTime: NOW,
    startTime: NOW,
    operationParams: { flavourId: 'simple' } as LcmOpOcc['operationParams'],
    journal: [],
    isAutomaticInvocation: false,
    ...over,
  });
  const prior = { vnfPkgId: 'p1', vnfdId: 'vnfd-1', instantiationState: 'NOT_INSTANTIATED' } as never;

  it('instances: the package follows its instances; filters by state, VIM (registered or inline), name glob; ids by prefix', async () => {
    const store = await backend.open();
    try {
      await store.packages.insert(pkg());
      await store.db
        .prepare(
          "INSERT INTO vims (id, name, type, auth_url, auth_method, verify_tls, status, created_at, updated_at) VALUES ('vim-a', 'a', 'kubernetes', 'https://h', 'bearer-token', 1, 'PENDING', 'now', 'now')",
        )
        .run();
      await store.instances.insert(instance({ vimId: 'vim-a' }));
      await store.instances.insert(
        instance({
          id: 'inst-2',
          vnfInstanceName: 'web-2',
          createdAt: '2026-01-02T00:00:00.000Z',
          vimConnectionInfo: { v: { vimId: 'inline-1', vimType: 'kubernetes' } } as never,
        }),
      );
      await store.instances.insert(
        instance({
          id: 'other-3',
          vnfInstanceName: 'db',
          createdAt: '2026-01-03T00:00:00.000Z',
          instantiationState: 'INSTANTIATED',
          instantiatedVnfInfo: { flavourId: 'simple', vnfState: 'STARTED', vnfcInfo: [{ id: 'c1' }, { id: 'c2' }], metadata: {} } as never,
        }),
      );
      expect((await store.packages.get('p1')).usageState).toBe('IN_USE');
      expect((await store.instances.list()).map((i) => i.id)).toEqual(['inst-1', 'inst-2', 'other-3']);
      expect((await store.instances.list({ state: 'INSTANTIATED' })).map((i) => i.id)).toEqual(['other-3']);
      expect((await store.instances.list({ vimId: 'vim-a' })).map((i) => i.id)).toEqual(['inst-1']);
      expect((await store.instances.list({ vimId: 'inline-1' })).map((i) => i.id)).toEqual(['inst-2']);
      expect((await store.instances.list({ name: 'web-*' })).map((i) => i.id)).toEqual(['inst-1', 'inst-2']);
      expect((await store.instances.list({ name: 'web-[2-9]' })).map((i) => i.id)).toEqual(['inst-2']);
      expect((await store.instances.list({ name: 'w?b-1' })).map((i) => i.id)).toEqual(['inst-1']);
      expect(await store.instances.list({ name: 'WEB-*' })).toEqual([]);
      expect(await store.instances.list({ name: 'web.1*' })).toEqual([]);
      // Pages and the table's summary rows (the VNFC count counted by the database) read the same on both.
      expect((await collect(store.instances.read({}, { summary: true }))).map((i) => [i.id, (i as { vnfcCount?: number | null }).vnfcCount ?? null])).toEqual([
        ['inst-1', null],
        ['inst-2', null],
        ['other-3', 2],
      ]);
      expect((await collect(store.instances.read({ name: 'web-*' }, { limit: 1 }))).map((i) => i.id)).toEqual(['inst-1']);
      expect((await store.instances.get('web-2')).vimConnectionInfo).toEqual({ v: { vimId: 'inline-1', vimType: 'kubernetes' } });
      expect((await store.instances.get('other-3')).id).toBe('other-3');
      await expect(store.instances.get('inst-%')).rejects.toThrow(NotFoundError);
      expect((await store.instances.names()).get('inst-2')).toBe('web-2');
      expect(await store.instances.countByPackage('p1')).toBe(3);
      await store.instances.update({ ...(await store.instances.get('inst-1')), metadata: { owner: 'ops' }, updatedAt: '2026-01-05T00:00:00.000Z' });
      expect(await store.instances.get('inst-1')).toMatchObject({ metadata: { owner: 'ops' }, updatedAt: '2026-01-05T00:00:00.000Z' });
      await expect(store.instances.delete('other-3', NOW)).rejects.toThrow(ConflictError);
      for (const id of ['inst-1', 'inst-2']) await store.instances.delete(id, NOW);
      await store.instances.update({ ...(await store.instances.get('other-3')), instantiationState: 'NOT_INSTANTIATED' });
      await store.instances.delete('other-3', NOW);
      expect((await store.packages.get('p1')).usageState).toBe('NOT_IN_USE');
    } finally {
      await store.close();
    }
  });

  it('lists read in keyset pages: more rows than a page, in order, none twice', async () => {
    const store = await backend.open();
    try {
      await store.packages.insert(pkg());
      const ins = store.db.prepare(
        "INSERT INTO vnf_instances (id, name, vnfd_id, vnf_pkg_id, instantiation_state, created_at, updated_at) VALUES (?, ?, 'vnfd-1', 'p1', 'NOT_INSTANTIATED', ?, ?)",
      );
      const opIns = store.db.prepare(
        "INSERT INTO lcm_op_occs (id, vnf_instance_id, operation, operation_state, state_entered_time, start_time) VALUES (?, 'i-0000', 'SCALE', 'COMPLETED', ?, ?)",
      );
      await store.db
        .transaction(async () => {
          // Two rows per timestamp: the second key (id, rowid) orders within one.
          for (let i = 0; i < 1203; i++)
            await ins.run(
              `i-${String(i).padStart(4, '0')}`,
              `n${i}`,
              `2026-01-01T00:${String(Math.floor(i / 2) % 60).padStart(2, '0')}:${String(Math.floor(i / 120)).padStart(2, '0')}.000Z`,
              NOW,
            );
          for (let i = 0; i < 1203; i++)
            await opIns.run(
              `o-${String(i).padStart(4, '0')}`,
              NOW,
              `2026-01-01T00:00:${String(Math.floor(i / 2) % 60).padStart(2, '0')}.${String(Math.floor(i / 120)).padStart(3, '0')}Z`,
            );
        })
        .immediate();
      const ids = (await collect(store.instances.read())).map((i) => i.id);
      expect(ids).toHaveLength(1203);
      expect(new Set(ids).size).toBe(1203);
      expect(ids).toEqual((await store.instances.list()).map((i) => i.id));
      const ops = (await collect(store.opOccs.read())).map((o) => o.id);
      expect(ops).toHaveLength(1203);
      expect(new Set(ops).size).toBe(1203);
      expect(ops).toEqual((await store.opOccs.list()).map((o) => o.id));
    } finally {
      await store.close();
    }
  });

  it('operation occurrences: journal appended step by step, listed in start order, states and locks', async () => {
    const store = await backend.open();
    try {
      await store.packages.insert(pkg());
      await store.instances.insert(instance());
      await store.opOccs.insert(op(), prior);
      await store.opOccs.insert(op({ id: 'op-2', operationState: 'COMPLETED' }), prior);
      await store.opOccs.appendJournal('op-1', { kind: 'a', name: 'first "step"' } as never);
      await store.opOccs.appendJournal('op-1', { kind: 'b', z: 1, a: [1, 2] } as never);
      expect(await store.opOccs.journal('op-1')).toEqual([
        { kind: 'a', name: 'first "step"' },
        { kind: 'b', z: 1, a: [1, 2] },
      ]);
      // The keys keep the order they were written in.
      expect(JSON.stringify((await store.opOccs.journal('op-1'))[1])).toBe('{"kind":"b","z":1,"a":[1,2]}');
      // Steps at their places by one statement (the engine's batch), written in any order, read in theirs.
      await store.opOccs.insertJournalSteps('op-1', [
        { seq: 3, step: { kind: 'd', text: 'a "quoted" \\ é' } as never },
        { seq: 2, step: { kind: 'c' } as never },
      ]);
      await store.opOccs.insertJournalSteps('op-1', [{ seq: 4, step: { kind: 'e' } as never }]);
      await store.opOccs.insertJournalSteps('op-2', [{ seq: 0, step: { kind: 'first of op-2' } as never }]);
      expect((await store.opOccs.journal('op-1')).map((s) => (s as unknown as { kind: string }).kind)).toEqual(['a', 'b', 'c', 'd', 'e']);
      expect((await store.opOccs.journal('op-1'))[3]).toEqual({ kind: 'd', text: 'a "quoted" \\ é' });
      expect(await store.opOccs.journal('op-2')).toEqual([{ kind: 'first of op-2' }]);
      // A place already taken is refused, the statement's other steps with it.
      await expect(
        store.opOccs.insertJournalSteps('op-1', [
          { seq: 5, step: { kind: 'f' } as never },
          { seq: 4, step: { kind: 'again' } as never },
        ]),
      ).rejects.toThrow(/UNIQUE|duplicate key/i);
      expect(await store.opOccs.journal('op-1')).toHaveLength(5);
      expect((await store.opOccs.list()).map((o) => o.id)).toEqual(['op-1', 'op-2']);
      expect((await store.opOccs.list({ state: 'COMPLETED' })).map((o) => o.id)).toEqual(['op-2']);
      expect((await store.opOccs.unfinished('inst-1')).map((o) => o.id)).toEqual(['op-1']);
      expect(await store.opOccs.priorState('op-1')).toEqual(prior);
      const failed = await store.opOccs.setState('op-1', 'FAILED_TEMP', '2026-01-01T00:01:00.000Z', { error: { status: 500, title: 't', detail: 'd' }, pid: null });
      expect(failed).toMatchObject({ operationState: 'FAILED_TEMP', error: { status: 500, title: 't', detail: 'd' } });
      expect(failed.pid).toBeUndefined();
      expect((await store.opOccs.get('op-1')).isAutomaticInvocation).toBe(false);
      await expect(store.opOccs.setState('nope', 'FAILED', NOW)).rejects.toThrow(NotFoundError);

      const lock = { vnfInstanceId: 'inst-1', opId: 'op-1', pid: 42, acquiredAt: NOW, hostName: 'h1', hostId: 'id1', startTime: '99' };
      await store.opOccs.exclusive(() => store.opOccs.takeLock(lock));
      const held = (await store.opOccs.lock('inst-1'))!;
      expect(held).toMatchObject(lock);
      // A lease: a heartbeat now, running out a lease timeout (60 s by default) later.
      expect(Date.parse(held.leaseExpiresAt!) - Date.parse(held.heartbeatAt!)).toBe(60_000);
      await expect(store.opOccs.exclusive(() => store.opOccs.takeLock({ ...lock, opId: 'op-2' }))).rejects.toThrow(/UNIQUE|constraint/i);
      expect(await store.opOccs.lockedInstances()).toEqual(['inst-1']);
      await store.opOccs.releaseLock('inst-1', 'op-1');
      expect(await store.opOccs.lock('inst-1')).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('transactions: a throw rolls back the whole of it, a nested one only its own part', async () => {
    const store = await backend.open();
    try {
      await store.packages.insert(pkg());
      await expect(
        store.opOccs.exclusive(async () => {
          await store.packages.setStates('p1', { operationalState: 'DISABLED' }, '2026-02-01T00:00:00.000Z');
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect((await store.packages.get('p1')).operationalState).toBe('ENABLED');
      await store.opOccs.exclusive(async () => {
        await store.packages.setStates('p1', { operationalState: 'DISABLED' }, '2026-02-01T00:00:00.000Z');
        // vnf-instance update's own transaction, nested: a savepoint.
        await expect(store.instances.update(instance({ id: 'missing' }))).rejects.toThrow(NotFoundError);
      });
      expect((await store.packages.get('p1')).operationalState).toBe('DISABLED');
    } finally {
      await store.close();
    }
  });

  it('secrets: found in every JSON column and rewritten in place; store locks by holder; host keys replaced', async () => {
    const store = await backend.open();
    try {
      await store.packages.insert(pkg());
      await store.instances.insert(instance({ metadata: { pw: { sealed: 'tok-1', keyId: 'k1' } } }));
      await store.opOccs.insert(op({ operationParams: { additionalParams: { pw: { sealed: 'tok-2', keyId: 'k1' } } } as never }), prior);
      const found = (await store.secrets.listSecrets()).map((s) => [s.token, s.keyId]).sort();
      expect(found).toEqual([
        ['tok-1', 'k1'],
        ['tok-2', 'k1'],
      ]);
      const changed = await store.secrets.rewriteSecrets((s) => ({ token: s.token + '-new', keyId: 'k2' }), 'k2');
      expect(changed).toBe(2);
      expect((await store.instances.get('inst-1')).metadata).toEqual({ pw: { sealed: 'tok-1-new', keyId: 'k2' } });
      expect(await store.secrets.activeKeyId()).toBe('k2');

      const holder = { pid: 7, hostName: 'h', startTime: '1' };
      await store.secrets.acquireLock('rotation-test', holder, NOW, () => true);
      expect(await store.secrets.lockHolder('rotation-test')).toMatchObject({ pid: 7, acquiredAt: NOW });
      await expect(store.secrets.acquireLock('rotation-test', { pid: 8 }, NOW, () => true)).rejects.toThrow(ConflictError);
      // Released only by the holder it names (pid, host and start time), not by pid alone.
      await store.secrets.releaseLock('rotation-test', { pid: 7 });
      expect(await store.secrets.lockHolder('rotation-test')).toMatchObject({ pid: 7, hostName: 'h', acquiredAt: NOW });
      await store.secrets.releaseLock('rotation-test', holder);
      expect(await store.secrets.lockHolder('rotation-test')).toBeUndefined();

      await store.hostKeys.pin({ serverId: 's1', address: '10.0.0.1', keyType: 'ssh-ed25519', fingerprint: 'SHA256:a', pinnedAt: NOW });
      await store.hostKeys.pin({ serverId: 's1', address: '10.0.0.2', keyType: 'ssh-ed25519', fingerprint: 'SHA256:b', pinnedAt: NOW });
      expect(await store.hostKeys.list()).toEqual([{ serverId: 's1', address: '10.0.0.2', keyType: 'ssh-ed25519', fingerprint: 'SHA256:b', pinnedAt: NOW }]);
      await store.hostKeys.forget(['s1']);
      expect(await store.hostKeys.get('s1')).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
