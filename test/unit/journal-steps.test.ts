/**
 * An operation's journal, a row a step (migration 14): appended in order,
 * read back whole by op-show's JSON and by the engine, gone with its
 * operation; and a store that kept each journal as one JSON array (schema
 * 13) upgrades with every step where it was.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LcmOpOcc } from '../../src/lcm/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import type { RawJson } from '../../src/store/lazy-json.js';
import { SqliteStoreDb } from '../../src/store/database.js';
import { collect } from '../../src/store/db.js';
import { instanceRecord, packageRecord } from '../support/store-records.js';

const home = () => join(mkdtempSync(join(tmpdir(), 'vnfm-journal-')), 'home');
const step = (n: number, detail = `step ${n}`) => ({ action: 'create', resource: { kind: 'ConfigMap', name: `c${n}` }, state: n % 2 ? 'done' : 'intended', detail }) as never;

async function seeded(h: string): Promise<Store> {
  const store = openStore(h);
  await store.packages.insert(packageRecord({ id: 'p1' }));
  await store.instances.insert(instanceRecord({ id: 'i1', vnfPkgId: 'p1' }));
  for (const [id, startTime] of [
    ['o1', '2026-01-01T00:00:01.000Z'],
    ['o2', '2026-01-01T00:00:02.000Z'],
  ] as const) {
    const op = { id, vnfInstanceId: 'i1', operation: 'INSTANTIATE', operationState: 'PROCESSING', stateEnteredTime: startTime, startTime };
    await store.opOccs.insert({ ...op, operationParams: {}, journal: [], isAutomaticInvocation: false } as unknown as LcmOpOcc, {} as never);
  }
  return store;
}

describe('journal steps (migration 14)', () => {
  it('steps appended to two operations in turn read back in the order each was written, in every view of the operation', async () => {
    const store = await seeded(home());
    try {
      const want: Record<string, unknown[]> = { o1: [], o2: [] };
      for (let n = 0; n < 120; n++) {
        const id = n % 3 ? 'o1' : 'o2';
        const s = step(n, n === 7 ? 'quote " backslash \\ newline \n é ☃ 😀' : `step ${n}`);
        await store.opOccs.appendJournal(id, s);
        want[id]!.push(s);
      }
      expect(await store.opOccs.journal('o1')).toEqual(want['o1']);
      expect(await store.opOccs.journal('o2')).toEqual(want['o2']);
      expect((await store.opOccs.get('o1')).journal).toEqual(want['o1']);
      // op-list --all-fields -o json: the journal as pretty JSON text of the same steps
      const raw = (await collect(store.opOccs.read({}, { rawJson: true }))).map((o) => JSON.parse((o as unknown as { journal: RawJson }).journal.text) as unknown);
      expect(raw).toEqual([want['o1'], want['o2']]);
      // a list that does not show the journal does not read it
      expect((await collect(store.opOccs.read({}, { attributes: (a) => a !== 'journal' }))).map((o) => Object.keys(o).includes('journal'))).toEqual([false, false]);
      // the steps go with their operation
      await store.db.prepare("DELETE FROM lcm_op_occs WHERE id = 'o2'").run();
      expect(await store.db.prepare("SELECT count(*) AS n FROM lcm_op_occ_journal_steps WHERE op_id = 'o2'").get()).toEqual({ n: 0 });
      expect(await store.opOccs.journal('o1')).toHaveLength(80);
    } finally {
      await store.close();
    }
  });

  it('a store that kept each journal as one JSON array upgrades with every step in its place; a journal that is not an array has none', async () => {
    const h = home();
    let store = await seeded(h);
    const steps = [step(1), step(2, 'a "quoted" \\ é'), step(3)];
    const db = (store.db as SqliteStoreDb).sqlite;
    // The store as migration 13 left it: the journal a column of the operation's details.
    db.exec(`
      DROP TABLE lcm_op_occ_journal_steps;
      ALTER TABLE lcm_op_occ_details ADD COLUMN journal TEXT NOT NULL DEFAULT '[]';
      PRAGMA user_version = 13;
    `);
    db.prepare("UPDATE lcm_op_occ_details SET journal = ? WHERE id = 'o1'").run(JSON.stringify(steps));
    db.prepare('UPDATE lcm_op_occ_details SET journal = \'{"not": "an array"}\' WHERE id = \'o2\'').run();
    await store.close();
    store = openStore(h);
    try {
      expect((await store.info()).schemaVersion).toBeGreaterThanOrEqual(14);
      expect(await store.opOccs.journal('o1')).toEqual(steps);
      expect(await store.opOccs.journal('o2')).toEqual([]);
      expect(((await store.db.prepare('PRAGMA table_info(lcm_op_occ_details)').all()) as { name: string }[]).map((c) => c.name)).not.toContain('journal');
      // the next step lands after the migrated ones
      await store.opOccs.appendJournal('o1', step(4));
      expect(await store.opOccs.journal('o1')).toEqual([...steps, step(4)]);
    } finally {
      await store.close();
    }
  });
});
