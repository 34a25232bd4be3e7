/**
 * Migration 12 moved the large JSON columns of instances and operations to
 * side tables keyed by id. On each backend: a store written at schema 11
 * with data upgrades and reads back as a store written now (lists, summaries,
 * shows, journals, prior states, locks, cascades), and store-export /
 * store-import carry the side tables, from a new export and from one made
 * before the migration.
 */
import { createReadStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { LcmOpOcc, PriorState, VnfInstance } from '../../src/model/lcm.js';
import { openDatabase } from '../../src/store/database.js';
import { RawJson, type Store } from '../../src/store/index.js';
import { collect } from '../../src/store/db.js';
import { migrations } from '../../src/store/migrations/index.js';
import { openPostgres } from '../../src/store/postgres/database.js';
import { exportStore, importStore, linesOf, type PackageContentIo } from '../../src/store/transfer.js';
import { STORE_BACKENDS, tempHome, useStoreBackend } from '../support/store-backends.js';
import { packageRecord } from '../support/store-records.js';

const T0 = '2026-01-01T00:00:00.000Z';
/** vnfm's ids are UUIDs (store-import refuses others): the package, the two instances and the two operations. */
const PKG = '00000000-0000-4000-8000-000000000001';
const I1 = '00000000-0000-4000-8000-0000000000a1';
const I2 = '00000000-0000-4000-8000-0000000000a2';
const O1 = '00000000-0000-4000-8000-0000000000b1';
const O2 = '00000000-0000-4000-8000-0000000000b2';
const T1 = '2026-01-01T00:01:00.000Z';

const instance = (id: string, over: Partial<VnfInstance> = {}): VnfInstance =>
  ({
    id,
    vnfInstanceName: `vnf-${id}`,
    vnfInstanceDescription: 'edge web',
    vnfdId: 'vnfd-1',
    vnfPkgId: PKG,
    vnfProvider: 'ACME',
    vnfProductName: 'cnf',
    vnfSoftwareVersion: '1.0',
    vnfdVersion: '1.0',
    instantiationState: 'INSTANTIATED',
    instantiatedVnfInfo: {
      flavourId: 'simple',
      vnfState: 'STARTED',
      vnfcInfo: [
        { id: 'c1', vduId: 'VDU1', vnfcState: 'STARTED' },
        { id: 'c2', vduId: 'VDU1', vnfcState: 'STARTED' },
      ],
      metadata: { namespace: 'default', note: 'line one\nline "two"' },
    },
    metadata: { owner: 'ops' },
    extensions: { tier: 'gold' },
    vnfConfigurableProperties: { autoScalable: false },
    createdAt: T0,
    updatedAt: T1,
    ...over,
  }) as VnfInstance;

const op = (id: string, vnfInstanceId: string, over: Partial<LcmOpOcc> = {}): LcmOpOcc =>
  ({
    id,
    vnfInstanceId,
    operation: 'SCALE',
    operationState: 'COMPLETED',
    stateEnteredTime: T1,
    startTime: T0,
    operationParams: { type: 'SCALE_OUT', aspectId: 'web', numberOfSteps: 1 },
    resourceChanges: { affectedVnfcs: [{ id: 'c2', changeType: 'ADDED' }] },
    // several steps, in an order that is not their text's (migration 14 gives each a row and keeps the order)
    journal: [
      { step: 'apply Deployment web', state: 'intended' },
      { step: 'apply Deployment web', state: 'done', detail: 'a "quoted" \\ é' },
      { step: 'apply ConfigMap app', state: 'done' },
    ],
    isAutomaticInvocation: false,
    ...over,
  }) as LcmOpOcc;

const prior = (i: VnfInstance): PriorState => ({ instance: i }) as unknown as PriorState;

/** What a client reads of instances and operations: the same from a migrated store as from one written now. */
async function readBack(store: Store) {
  const ops = await store.opOccs.list();
  return {
    instances: JSON.stringify(await store.instances.list()),
    summaries: JSON.stringify(await collect(store.instances.read({}, { summary: true }))),
    shown: JSON.stringify(await store.instances.get(`vnf-${I1}`)),
    ops: JSON.stringify(ops),
    opSummaries: JSON.stringify(await collect(store.opOccs.read({}, { summary: true }))),
    journals: await Promise.all(ops.map((o) => store.opOccs.journal(o.id))),
    priors: await Promise.all(ops.map((o) => store.opOccs.priorState(o.id))),
  };
}

const OLD = migrations.filter((m) => m.version <= 11);

/** The rows a schema-11 store held for the instance and its operations (the large JSON in the main rows). */
function oldRows(i: VnfInstance, ops: LcmOpOcc[]): string[] {
  const q = (v: unknown) => (v === undefined || v === null ? 'NULL' : `'${(typeof v === 'string' ? v : JSON.stringify(v)).replace(/'/g, "''")}'`);
  return [
    `INSERT INTO vnf_instances (id, name, description, vnfd_id, vnf_pkg_id, vnf_provider, vnf_product_name, vnf_software_version, vnfd_version,
       instantiation_state, vim_id, vim_connection_info, instantiated_vnf_info, metadata, extensions, vnf_configurable_properties, created_at, updated_at)
     VALUES (${[i.id, i.vnfInstanceName, i.vnfInstanceDescription, i.vnfdId, i.vnfPkgId, i.vnfProvider, i.vnfProductName, i.vnfSoftwareVersion, i.vnfdVersion]
       .map(q)
       .join(', ')}, ${q(i.instantiationState)}, NULL, NULL, ${q(i.instantiatedVnfInfo)}, ${q(i.metadata)}, ${q(i.extensions)}, ${q(i.vnfConfigurableProperties)},
       ${q(i.createdAt)}, ${q(i.updatedAt)})`,
    ...ops.map(
      (o) => `INSERT INTO lcm_op_occs (id, vnf_instance_id, operation, operation_state, state_entered_time, start_time, operation_params, error,
         resource_changes, journal, prior_state, is_automatic_invocation, pid)
       VALUES (${[o.id, o.vnfInstanceId, o.operation, o.operationState, o.stateEnteredTime, o.startTime].map(q).join(', ')}, ${q(o.operationParams)}, NULL,
         ${q(o.resourceChanges)}, ${q(o.journal)}, ${q(prior(i))}, 0, NULL)`,
    ),
  ];
}

describe.each(STORE_BACKENDS)('side tables of instances and operations on %s', (name) => {
  const backend = useStoreBackend(name);
  const i1 = instance(I1);
  const i2 = instance(I2, { instantiationState: 'NOT_INSTANTIATED', instantiatedVnfInfo: undefined, metadata: undefined, createdAt: T1 });
  const ops = [op(O1, I1, { operation: 'INSTANTIATE', startTime: T0 }), op(O2, I1, { startTime: T1 })];

  /** A store written now, with the records. */
  async function current(): Promise<Store> {
    const store = await backend.open();
    await store.packages.insert(packageRecord({ id: PKG }));
    await store.instances.insert(i1);
    await store.instances.insert(i2);
    for (const o of ops) await store.opOccs.insert(o, prior(i1));
    return store;
  }

  /** A store written at schema 11 with the same records, then opened (and so migrated) by this vnfm. */
  async function migrated(): Promise<Store> {
    const home = tempHome();
    const statements = [...oldRows(i1, ops), ...oldRows(i2, [])];
    const lock = `INSERT INTO vnf_locks (vnf_instance_id, op_id, pid, acquired_at) VALUES ('${I1}', '${O2}', 1, 't')`;
    let url: string | undefined;
    const withPackage = async (exec: (sql: string) => unknown, insertPackage: () => unknown) => {
      await insertPackage();
      for (const s of [...statements, lock]) await exec(s);
    };
    if (name === 'sqlite') {
      const db = openDatabase(home, { migrations: OLD });
      await withPackage(
        (sql) => db.exec(sql),
        () => db.exec(pkgInsert()),
      );
      db.close();
    } else {
      const server = backend.server()!;
      url = server.url(await server.createDatabase());
      const db = await openPostgres(url, OLD);
      await withPackage(
        (sql) => db.exec(sql),
        () => db.exec(pkgInsert()),
      );
      await db.close();
    }
    return backend.reopen(home, url);
  }

  it('a store written at schema 11 upgrades, and reads back as one written now; its locks and cascades hold', async () => {
    const now = await current();
    const old = await migrated();
    try {
      expect((await old.info()).schemaVersion).toBe(Math.max(...migrations.map((m) => m.version)));
      expect(await readBack(old)).toEqual(await readBack(now));
      expect(await old.opOccs.lockedInstances()).toEqual([I1]);
      // What -o json reads: each JSON column as RawJson text (pretty-printed on SQLite, as stored on PostgreSQL) of the same value.
      const raw = (o: object) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v instanceof RawJson ? JSON.parse(v.text) : v]));
      expect((await collect(old.instances.read({}, { rawJson: true }))).map(raw)).toEqual(JSON.parse((await readBack(now)).instances));
      expect((await collect(old.opOccs.read({}, { rawJson: true }))).map(raw)).toEqual(JSON.parse((await readBack(now)).ops));
      const text = ((await collect(old.instances.read({}, { rawJson: true })))[0] as unknown as { instantiatedVnfInfo: RawJson }).instantiatedVnfInfo.text;
      expect(text).toBe(name === 'sqlite' ? JSON.stringify(i1.instantiatedVnfInfo, null, 2) : JSON.stringify(i1.instantiatedVnfInfo));
      expect((await old.instances.get(I1)).instantiatedVnfInfo?.vnfcInfo).toHaveLength(2);
      expect(((await collect(old.instances.read({}, { summary: true }))) as (VnfInstance & { vnfcCount: number | null })[]).map((i) => i.vnfcCount)).toEqual([2, null]);
      // The side rows went with the main ones; a journal step still lands.
      await old.opOccs.appendJournal(O2, { step: 'checked', state: 'done' } as never);
      expect(await old.opOccs.journal(O2)).toEqual([...ops[1]!.journal, { step: 'checked', state: 'done' }]);
      await old.opOccs.setState(O2, 'FAILED_TEMP', T1, { resourceChanges: { affectedVnfcs: [] } });
      expect((await old.opOccs.get(O2)).resourceChanges).toEqual({ affectedVnfcs: [] });
      await old.opOccs.releaseLock(I1, O2);
      await old.instances.update({ ...(await old.instances.get(I1)), instantiationState: 'NOT_INSTANTIATED', instantiatedVnfInfo: undefined } as VnfInstance);
      expect(((await collect(old.instances.read({ state: 'NOT_INSTANTIATED' }, { summary: true }))) as unknown as { vnfcCount: number | null }[]).map((i) => i.vnfcCount)).toEqual([
        null,
        null,
      ]);
      await old.instances.delete(I1, T1);
      for (const table of ['vnf_instance_details', 'lcm_op_occ_details', 'lcm_op_occ_prior_states']) {
        expect(await old.db.prepare(`SELECT id FROM ${table} ORDER BY id`).pluck().all()).toEqual(table === 'vnf_instance_details' ? [I2] : []);
      }
    } finally {
      await old.close();
      await now.close();
    }
  });

  const noContents: PackageContentIo = {
    read: async () => undefined,
    stage: () => Promise.reject(new Error('no package contents in this test')),
  };

  async function exportText(store: Store): Promise<string> {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (d: Buffer) => chunks.push(d));
    await exportStore(store, out, { withPackageContents: false, now: new Date(T0), contents: noContents });
    return Buffer.concat(chunks).toString('utf8');
  }

  async function imported(text: string): Promise<Store> {
    const file = join(tempHome() + '-export.json');
    writeFileSync(file, text);
    const target = await backend.open();
    await importStore(target, linesOf(createReadStream(file, { encoding: 'utf8' })), { merge: false, source: file, contents: noContents, checkSealed: () => undefined });
    return target;
  }

  it('store-export and store-import carry the side tables, and an export from before migration 12 lands in them', async () => {
    const store = await current();
    const text = await exportText(store);
    const doc = JSON.parse(text) as { source: { schemaVersion: number }; tables: Record<string, Record<string, unknown>[]> };
    expect(doc.tables['vnf_instance_details']).toHaveLength(2);
    expect(doc.tables['lcm_op_occ_details']).toHaveLength(2);
    expect(doc.tables['lcm_op_occ_prior_states']).toHaveLength(2);
    const target = await imported(text);

    // The same document as a schema-11 store wrote it: the large JSON in the main rows, no side tables.
    const byId = (table: string) => new Map(doc.tables[table]!.map((r) => [r['id'], r]));
    const details = byId('vnf_instance_details');
    const opDetails = byId('lcm_op_occ_details');
    const priors = byId('lcm_op_occ_prior_states');
    const strip = ({ id: _id, ...rest }: Record<string, unknown>) => rest;
    const oldTables: Record<string, Record<string, unknown>[]> = {};
    for (const [table, rows] of Object.entries(doc.tables)) {
      if (table === 'vnf_instance_details' || table === 'lcm_op_occ_details' || table === 'lcm_op_occ_prior_states') continue;
      oldTables[table] = rows.map((r) => {
        if (table === 'vnf_instances') {
          const { vnfc_count: _n, ...rest } = r;
          return { ...rest, ...strip(details.get(r['id'])!) };
        }
        if (table === 'lcm_op_occs') return { ...r, ...strip(opDetails.get(r['id'])!), prior_state: priors.get(r['id'])?.['prior_state'] ?? null };
        return r;
      });
    }
    const header = text.slice(0, text.indexOf('\n"tables":{')).replace(/"schemaVersion":\d+/, '"schemaVersion":11');
    const tableText = Object.entries(oldTables)
      .map(([table, rows], n) => `${n ? ',' : ''}\n${JSON.stringify(table)}:[${rows.map((r, k) => `${k ? ',' : ''}\n${JSON.stringify(r)}`).join('')}\n]`)
      .join('');
    const oldText = `${header}\n"tables":{${tableText}\n},\n"packageContents":[\n]\n}\n`;
    expect(oldText).not.toContain('vnf_instance_details');
    const fromOld = await imported(oldText);
    try {
      expect(await readBack(target)).toEqual(await readBack(store));
      expect(await readBack(fromOld)).toEqual(await readBack(store));
      for (const table of ['vnf_instances', 'vnf_instance_details', 'lcm_op_occs', 'lcm_op_occ_details', 'lcm_op_occ_prior_states']) {
        const rows = async (s: Store) => ((await s.db.prepare(`SELECT * FROM ${table} ORDER BY id`).all()) as Record<string, unknown>[]).map(({ rowid: _r, ...r }) => r);
        expect(await rows(fromOld)).toEqual(await rows(store));
      }
    } finally {
      await fromOld.close();
      await target.close();
      await store.close();
    }
  });
});

/** The package the records use, as a schema-11 row. */
function pkgInsert(): string {
  const p = packageRecord({ id: PKG });
  return `INSERT INTO vnf_packages (id, vnfd_id, onboarding_state, operational_state, usage_state, checksum_algorithm, checksum_hash, size_bytes, created_at, updated_at)
    VALUES ('${p.id}', '${p.vnfdId}', 'ONBOARDED', 'ENABLED', 'IN_USE', 'SHA-256', '${p.checksum.hash}', 10, '${T0}', '${T0}')`;
}
