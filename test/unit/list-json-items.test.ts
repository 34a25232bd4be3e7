/**
 * The items vnf-list -o json and op-list -o json read as kept (migration 13's
 * tables, kept by triggers), whole or narrowed, are, row for row and in the
 * same order, the text the repositories build from each row as they read it
 * (ListRead.simpleJson, the PostgreSQL store's way): after the migration fills them from rows written before it, and
 * after every kind of write since — inserts, updates of what an item shows
 * and of what it does not, renames, a change of start time, deletes and the
 * deletes of a cascade.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { LcmOpOcc } from '../../src/lcm/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { SqliteStoreDb } from '../../src/store/database.js';
import { collect } from '../../src/store/db.js';
import type { RawJson } from '../../src/store/lazy-json.js';
import { instanceRecord, packageRecord } from '../support/store-records.js';

const NAMES = ['', 'web', 'a "quoted" \\ name', 'tab\there\u2028', 'emoji 😀', 'lone \ud800', 'ß-日本語'];
const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n % 5, 0)).toISOString();
const PKG = 'p1';

async function seed(store: Store, count: number): Promise<{ instances: string[]; ops: string[] }> {
  await store.packages.insert(packageRecord({ id: PKG }));
  sqlite(store)
    .prepare(
      "INSERT INTO vims (id, name, type, is_default, auth_url, auth_method, verify_tls, status, created_at, updated_at) VALUES (?, ?, 'kubernetes', 0, 'https://h', 'bearer-token', 1, 'PENDING', 'now', 'now')",
    )
    .run('vim-a', 'a');
  const instances: string[] = [];
  const ops: string[] = [];
  for (let n = 0; n < count; n++) {
    const id = n % 3 ? randomUUID() : `inst-${n}-${NAMES[n % NAMES.length]}`;
    const name = NAMES[n % NAMES.length]!;
    await store.instances.insert(
      instanceRecord({
        id,
        ...(n % 4 === 1 ? {} : { vnfInstanceName: name }),
        vnfInstanceDescription: NAMES[(n + 2) % NAMES.length]!,
        vnfSoftwareVersion: NAMES[(n + 3) % NAMES.length]!,
        ...(n % 2 ? { vimId: 'vim-a' } : {}),
        createdAt: at(n),
        updatedAt: at(n + 1),
      }),
    );
    instances.push(id);
    for (let k = 0; k < 2; k++) {
      const op = {
        id: `${id}-op-${k}`,
        vnfInstanceId: id,
        operation: k ? 'SCALE' : 'INSTANTIATE',
        operationState: 'PROCESSING',
        stateEnteredTime: at(n + k),
        startTime: at(n + k),
        operationParams: {},
        journal: [],
        isAutomaticInvocation: (n + k) % 3 === 0,
      } as unknown as LcmOpOcc;
      await store.opOccs.insert(op, {} as never);
      ops.push(op.id);
    }
  }
  return { instances, ops };
}

const text = (pages: Iterable<string> | undefined) => [...pages!].join(',\n');

/** Items read one by one with each built from its row (ListRead.simpleJson), at the list's indent and joined as the kept pages join them. */
const built = async (items: AsyncIterable<unknown>) => (await collect(items)).map((item) => '  ' + (item as RawJson).text.replaceAll('\n', '\n  ')).join(',\n');

/** Each list as kept (whole, and narrowed by a condition that keeps every row: the kept table joined to the rows), beside the same list built row by row; and the kept rows counted. */
async function lists(store: Store) {
  const db = sqlite(store);
  const count = (table: string) => (db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number) ?? 0;
  return {
    instances: {
      kept: text(store.instances.jsonText({}, {})),
      narrowed: text(store.instances.jsonText({ vnfPkgId: PKG }, {})),
      built: await built(store.instances.read({}, { simpleJson: true })),
    },
    ops: { kept: text(store.opOccs.jsonText({}, {})), narrowed: text(store.opOccs.jsonText({ since: '0' }, {})), built: await built(store.opOccs.read({}, { simpleJson: true })) },
    rows: { instances: count('vnf_instances'), instanceItems: count('vnf_instance_json_items'), ops: count('lcm_op_occs'), opItems: count('lcm_op_occ_json_items') },
  };
}

async function expectSame(store: Store): ReturnType<typeof lists> {
  const l = await lists(store);
  expect(l.instances.kept).toBe(l.instances.built);
  expect(l.instances.narrowed).toBe(l.instances.built);
  expect(l.ops.kept).toBe(l.ops.built);
  expect(l.ops.narrowed).toBe(l.ops.built);
  expect(l.rows.instanceItems).toBe(l.rows.instances);
  expect(l.rows.opItems).toBe(l.rows.ops);
  return l;
}

/** The store's own SQLite connection, for writes no repository makes (as an older version or SQL alone would). */
const sqlite = (store: Store): Database.Database => (store.db as SqliteStoreDb).sqlite;

const home = () => join(mkdtempSync(join(tmpdir(), 'vnfm-json-items-')), 'home');

describe('list items kept by triggers (migration 13)', () => {
  it('are filled from the rows a store held before the migration', async () => {
    const h = home();
    let store = openStore(h);
    await seed(store, 40);
    const before = await expectSame(store);
    // The store as migration 12 left it: no kept items, no triggers, the journals in their details (migration 14 moves them again).
    const db = sqlite(store);
    db.exec(`
      DROP TRIGGER vnf_instance_json_items_insert; DROP TRIGGER vnf_instance_json_items_update; DROP TRIGGER vnf_instance_json_items_delete;
      DROP TRIGGER lcm_op_occ_json_items_insert; DROP TRIGGER lcm_op_occ_json_items_update; DROP TRIGGER lcm_op_occ_json_items_delete;
      DROP TABLE vnf_instance_json_items; DROP TABLE lcm_op_occ_json_items;
      DROP TABLE lcm_op_occ_journal_steps; ALTER TABLE lcm_op_occ_details ADD COLUMN journal TEXT NOT NULL DEFAULT '[]';
      PRAGMA user_version = 12;
    `);
    await store.close();
    store = openStore(h);
    try {
      const after = await expectSame(store);
      expect(after.instances.kept).toBe(before.instances.kept);
      expect(after.ops.kept).toBe(before.ops.kept);
      expect(after.rows).toMatchObject({ instances: 40, ops: 80 });
      expect(JSON.parse(after.instances.kept ? `[${after.instances.kept}]` : '[]')).toHaveLength(40);
    } finally {
      await store.close();
    }
  });

  it('follow every write: updates, renames, state changes, a new start time, deletes and cascades', async () => {
    const store = openStore(home());
    try {
      const { instances, ops } = await seed(store, 30);
      await expectSame(store);
      // Updates of what an item shows: a rename (to none and to an awkward one), a state, the updated time.
      for (const [n, id] of instances.slice(0, 10).entries()) {
        const i = await store.instances.get(id);
        const { vnfInstanceName: _name, ...unnamed } = i;
        await store.instances.update({
          ...(n % 2 ? unnamed : { ...i, vnfInstanceName: `renamed "${n}" 😀` }),
          instantiationState: 'INSTANTIATED',
          updatedAt: at(n + 30),
        } as typeof i);
      }
      // Operations: state changes (what an item shows), an error and a pid alone (what it does not).
      for (const [n, id] of ops.slice(0, 20).entries()) await store.opOccs.setState(id, n % 2 ? 'COMPLETED' : 'FAILED_TEMP', at(n + 40));
      await store.opOccs.setState(ops[20]!, 'FAILED_TEMP', at(50), { error: { status: 500, title: 'boom', detail: 'x' } as never, pid: 4242 });
      // Single columns written by SQL alone, as any later write path may write them.
      const db = sqlite(store);
      db.prepare('UPDATE vnf_instances SET name = ? WHERE id = ?').run('by SQL', instances[2]);
      db.prepare("UPDATE lcm_op_occs SET operation_state = 'ROLLED_BACK' WHERE id = ?").run(ops[3]);
      db.prepare('UPDATE lcm_op_occs SET is_automatic_invocation = 1 - is_automatic_invocation WHERE id = ?').run(ops[4]);
      // A start time moved (the item moves in the list's order with it).
      db.prepare('UPDATE lcm_op_occs SET start_time = ? WHERE id = ?').run('2020-01-01T00:00:00.000Z', ops[25]);
      const moved = await expectSame(store);
      expect((JSON.parse(`[${moved.ops.kept}]`) as { id: string }[])[0]!.id).toBe((await store.opOccs.get(ops[25]!)).id);
      const listed = JSON.parse(`[${moved.instances.kept}]`) as { id: string; vnfInstanceName?: string; instantiationState: string }[];
      expect(listed.find((i) => i.id === instances[0])).toMatchObject({ vnfInstanceName: 'renamed "0" 😀', instantiationState: 'INSTANTIATED' });
      expect(listed.find((i) => i.id === instances[1])).not.toHaveProperty('vnfInstanceName');
      // Deletes: an instance (its operations go by cascade), and an operation alone.
      const gone = instances.slice(20, 25);
      for (const id of gone) await store.instances.delete(id, at(60));
      db.prepare('DELETE FROM lcm_op_occs WHERE id = ?').run(ops[0]);
      const after = await expectSame(store);
      expect(after.rows).toMatchObject({ instances: 25, ops: 60 - 10 - 1 });
      expect(gone.some((id) => after.instances.kept.includes(JSON.stringify(id)) || after.ops.kept.includes(JSON.stringify(id)))).toBe(false);
    } finally {
      await store.close();
    }
  });
});
