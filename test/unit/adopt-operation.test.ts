/**
 * The occurrence ADOPT in the store (migration 15): recorded and listed as
 * any other; a store upgraded to it keeps every occurrence where it was
 * (rowids, details, journal, prior state) and op-list's kept items follow
 * the rebuilt table's writes.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LcmOpOcc } from '../../src/lcm/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { SqliteStoreDb } from '../../src/store/database.js';
import { instanceRecord, packageRecord } from '../support/store-records.js';

const home = () => join(mkdtempSync(join(tmpdir(), 'vnfm-adopt-store-')), 'home');

function occurrence(id: string, operation: string, startTime: string): LcmOpOcc {
  return {
    id,
    vnfInstanceId: 'i1',
    operation,
    operationState: 'COMPLETED',
    stateEnteredTime: startTime,
    startTime,
    operationParams: { flavourId: 'simple' },
    journal: [],
    isAutomaticInvocation: false,
  } as unknown as LcmOpOcc;
}

async function seeded(h: string): Promise<Store> {
  const store = openStore(h);
  await store.packages.insert(packageRecord({ id: 'p1' }));
  await store.instances.insert(instanceRecord({ id: 'i1', vnfPkgId: 'p1' }));
  await store.opOccs.insert(occurrence('o1', 'INSTANTIATE', '2026-01-01T00:00:01.000Z'), { vnfPkgId: 'p1', vnfdId: 'd1', instantiationState: 'NOT_INSTANTIATED' });
  await store.opOccs.appendJournal('o1', { action: 'create', resource: { apiVersion: 'v1', kind: 'ConfigMap', name: 'c1' }, state: 'done' });
  return store;
}

/** The store's own SQLite connection, for what no repository reads or writes. */
const sqlite = (store: Store) => (store.db as SqliteStoreDb).sqlite;

const items = (store: Store) =>
  (sqlite(store).prepare('SELECT item FROM lcm_op_occ_json_items ORDER BY start_time, row_id').pluck().all() as string[]).map(
    (t) => (JSON.parse(t) as { id: string; operation: string }).id + ' ' + (JSON.parse(t) as { operation: string }).operation,
  );

describe('the ADOPT occurrence (migration 15)', () => {
  it('is recorded, read and listed like any other', async () => {
    const store = await seeded(home());
    try {
      await store.opOccs.insert(occurrence('o2', 'ADOPT', '2026-01-01T00:00:02.000Z'), { vnfPkgId: 'p1', vnfdId: 'd1', instantiationState: 'NOT_INSTANTIATED' });
      expect((await store.opOccs.get('o2')).operation).toBe('ADOPT');
      expect((await store.opOccs.list({ vnfInstanceId: 'i1' })).map((o) => o.operation)).toEqual(['INSTANTIATE', 'ADOPT']);
      expect(items(store)).toEqual(['o1 INSTANTIATE', 'o2 ADOPT']);
      // The CHECK still refuses what is no operation.
      await expect(store.opOccs.insert(occurrence('o3', 'IMPORT', '2026-01-01T00:00:03.000Z'), {} as never)).rejects.toThrow(/CHECK/);
    } finally {
      await store.close();
    }
  });

  it('a store at schema 14 upgrades with its occurrences, their details and journals in place, and op-list kept items following writes', async () => {
    const h = home();
    let store = await seeded(h);
    const db = sqlite(store);
    const rowid = db.prepare("SELECT rowid FROM lcm_op_occs WHERE id = 'o1'").pluck().get();
    db.exec('PRAGMA user_version = 14');
    await store.close();
    store = openStore(h);
    try {
      expect((await store.info()).schemaVersion).toBeGreaterThanOrEqual(15);
      const again = sqlite(store);
      expect(again.prepare("SELECT rowid FROM lcm_op_occs WHERE id = 'o1'").pluck().get()).toBe(rowid);
      expect(await store.opOccs.get('o1')).toMatchObject({ operation: 'INSTANTIATE', operationParams: { flavourId: 'simple' } });
      expect(await store.opOccs.journal('o1')).toHaveLength(1);
      expect(await store.opOccs.priorState('o1')).toMatchObject({ instantiationState: 'NOT_INSTANTIATED' });
      await store.opOccs.insert(occurrence('o2', 'ADOPT', '2026-01-01T00:00:02.000Z'), { vnfPkgId: 'p1', vnfdId: 'd1', instantiationState: 'NOT_INSTANTIATED' });
      await store.opOccs.setState('o2', 'ROLLED_BACK', '2026-01-01T00:00:03.000Z');
      expect(items(store)).toEqual(['o1 INSTANTIATE', 'o2 ADOPT']);
      expect(again.prepare('SELECT item FROM lcm_op_occ_json_items WHERE item LIKE \'%"o2"%\'').pluck().get()).toContain('"operationState": "ROLLED_BACK"');
      // The occurrences still go with their instance.
      again.prepare("DELETE FROM vnf_instances WHERE id = 'i1'").run();
      expect(items(store)).toEqual([]);
      expect(again.prepare('SELECT count(*) FROM lcm_op_occ_journal_steps').pluck().get()).toBe(0);
    } finally {
      await store.close();
    }
  });
});
