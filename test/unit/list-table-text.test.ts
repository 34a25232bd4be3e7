/**
 * op-list's and vnf-list's tables written by SQLite (TableText) are the printer's own table,
 * byte for byte, in every form a table has (table, wide, --no-headers,
 * --limit, filters, with and without colour), over awkward rows: absent and
 * empty names, long and multi-byte names, every state and operation, errors
 * with and without a title. Rows SQLite cannot write as JavaScript would (a
 * character beyond the BMP, an id that is not a uuid, a time not in the
 * stored form, an error without a string title) send the table back to the
 * printer; on PostgreSQL the printer always prints it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LcmOpOcc, VnfInstance } from '../../src/lcm/index.js';
import { connectStore, openStore, type Store } from '../../src/store/index.js';
import type { OpOccFilter } from '../../src/store/lcm-op-occ-repository.js';
import type { VnfInstanceFilter } from '../../src/store/vnf-instance-repository.js';
import type { Vim } from '../../src/model/vim.js';
import type { TableRead } from '../../src/store/table-text.js';
import { opListView } from '../../src/cli/output/op-view.js';
import { vnfListView } from '../../src/cli/output/vnf-view.js';
import { printList, type ListOptions, type OutputOptions } from '../../src/cli/output/printer.js';
import { IO } from '../../src/cli/io.js';
import { instanceRecord, packageRecord } from '../support/store-records.js';
import { startPostgres, type PgServer } from '../support/postgres.js';

const STATES = ['STARTING', 'PROCESSING', 'COMPLETED', 'FAILED_TEMP', 'FAILED', 'ROLLING_BACK', 'ROLLED_BACK'] as const;
const OPERATIONS = ['INSTANTIATE', 'SCALE', 'HEAL', 'TERMINATE', 'CHANGE_VNFPKG', 'MODIFY_INFO', 'CHANGE_EXT_CONN'] as const;
/** Names as awkward as a table meets: absent, empty, long, multi-byte (within the BMP), ending in white space JavaScript trims. */
const NAMES: (string | undefined)[] = [undefined, '', 'web', 'x'.repeat(70), 'ß-日本語-café', 'tail\u00a0', 'sp  ace ', 'tab\tname'];
const ERRORS: (LcmOpOcc['error'] | undefined)[] = [
  undefined,
  { status: 500, title: 'Driver failed', detail: 'd' },
  { status: 500, title: '', detail: 'an empty title: the wide line ends trimmed' },
  { status: 409, title: 'ends in white space \u3000 ', detail: 'd' },
  { status: 422, title: 'ünïcode — “quoted” \\ back', detail: 'd' },
] as never;

const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n % 50, (n * 37) % 1000)).toISOString();

function instance(id: string, name: string | undefined): VnfInstance {
  return instanceRecord({ id, ...(name === undefined ? {} : { vnfInstanceName: name }), createdAt: at(0), updatedAt: at(0) });
}

function op(id: string, vnfInstanceId: string, n: number, more: Partial<LcmOpOcc> = {}): LcmOpOcc {
  const error = ERRORS[n % ERRORS.length];
  return {
    id,
    vnfInstanceId,
    operation: OPERATIONS[n % OPERATIONS.length]!,
    operationState: STATES[n % STATES.length]!,
    stateEnteredTime: at(n + 3),
    startTime: at(n),
    operationParams: {} as LcmOpOcc['operationParams'],
    journal: [],
    isAutomaticInvocation: false,
    ...(error ? { error } : {}),
    ...more,
  } as LcmOpOcc;
}

/** Instances of every awkward name, and operations of each in every state; `extra` adds the rows of one case. */
async function seed(store: Store, extra: (store: Store, instanceIds: string[]) => Promise<void> = async () => {}): Promise<void> {
  await store.packages.insert(packageRecord());
  const ids = NAMES.map(() => randomUUID());
  for (const [n, id] of ids.entries()) await store.instances.insert(instance(id, NAMES[n]));
  const prior = { vnfPkgId: 'p1', vnfdId: 'vnfd-1', instantiationState: 'NOT_INSTANTIATED' } as never;
  // Upper-case uuids are uuids too (shortened).
  for (let n = 0; n < 60; n++) await store.opOccs.insert(op(n % 9 ? randomUUID() : randomUUID().toUpperCase(), ids[n % ids.length]!, n), prior);
  await extra(store, ids);
}

function capture(colour: boolean) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  if (colour) Object.assign(stdout, { isTTY: true });
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const io = new IO({ stdin: new PassThrough(), stdout, stderr }, colour ? {} : { NO_COLOR: '1' });
  return { io, out: () => out, err: () => err };
}

const FORMS: { flags: Partial<OutputOptions & ListOptions>; filter: OpOccFilter }[] = [
  { flags: {}, filter: {} },
  { flags: { output: 'wide' }, filter: {} },
  { flags: { headers: false }, filter: {} },
  { flags: { output: 'wide', headers: false }, filter: {} },
  { flags: { limit: 3 }, filter: {} },
  { flags: { output: 'wide', limit: 7 }, filter: {} },
  { flags: {}, filter: { state: 'FAILED_TEMP' } },
  { flags: { output: 'wide' }, filter: { operation: 'SCALE', since: at(10), until: at(40) } },
  { flags: {}, filter: { state: 'FAILED', operation: 'INSTANTIATE' } },
];

/** Each form printed by SQLite's table and by the printer's own: how many SQLite wrote, and how many had rows. */
async function compare(store: Store): Promise<{ written: number; tables: number }> {
  let written = 0;
  let tables = 0;
  for (const { flags, filter } of FORMS) {
    for (const colour of [false, true]) {
      const opts = { output: 'table' as const, ...flags, narrowed: Object.keys(filter).length > 0 };
      const plain = capture(colour);
      await printList(plain.io, opts, opListView(), { read: (how) => store.opOccs.read(filter, how) });
      const sql = capture(colour);
      const table = (how: TableRead) => {
        const text = store.opOccs.tableText(filter, how);
        if (text) written++;
        return text;
      };
      await printList(sql.io, opts, opListView(), { read: (how) => store.opOccs.read(filter, how), table });
      expect({ flags, filter, colour, out: sql.out(), err: sql.err() }).toEqual({ flags, filter, colour, out: plain.out(), err: plain.err() });
      if (plain.out() !== '') tables++;
    }
  }
  return { written, tables };
}

const sqlite = async (extra?: (store: Store, ids: string[]) => Promise<void>) => {
  const store = openStore(join(mkdtempSync(join(tmpdir(), 'vnfm-table-text-')), 'home'));
  await seed(store, extra);
  return store;
};

/**
 * A name the repositories refuse to write (control characters), as an older
 * version or another writer of a shared store may leave it.
 */
async function rename(store: Store, table: 'vnf_instances' | 'vnf_packages', id: string, name: string): Promise<void> {
  await store.db.prepare(`UPDATE ${table} SET name = ? WHERE id = ?`).run(name, id);
}

/** A new instance, then given `name` as rename gives it. */
async function renamed(store: Store, name: string): Promise<void> {
  const id = randomUUID();
  await store.instances.insert(instance(id, 'hostile'));
  await rename(store, 'vnf_instances', id, name);
}

/** Rows SQLite does not write: each sends the whole table back to the printer. */
const ODD: [string, (store: Store, ids: string[]) => Promise<void>][] = [
  [
    'a name beyond the BMP',
    async (store) => {
      const id = randomUUID();
      await store.instances.insert(instance(id, 'emoji-😀'));
      await store.opOccs.insert(op(randomUUID(), id, 4), {} as never);
    },
  ],
  ['an operation id that is not a uuid', async (store, ids) => await store.opOccs.insert(op('op-not-a-uuid', ids[2]!, 5), {} as never)],
  ['an operation id of a uuid’s shape, its dashes elsewhere', async (store, ids) => await store.opOccs.insert(op('abcdef01-2345-6789-abcd-ef0123456-78', ids[2]!, 5), {} as never)],
  ['an operation id of a uuid’s shape, not hex', async (store, ids) => await store.opOccs.insert(op('abcdef01-2345-6789-abcd-ef012345678g', ids[2]!, 5), {} as never)],
  [
    'a nameless instance whose id is not a uuid',
    async (store) => {
      await store.instances.insert(instance('inline-instance', undefined));
      await store.opOccs.insert(op(randomUUID(), 'inline-instance', 6), {} as never);
    },
  ],
  ['a start time not in the stored form', async (store, ids) => await store.opOccs.insert(op(randomUUID(), ids[2]!, 7, { startTime: '2026-01-01T00:00:09Z' }), {} as never)],
  ['an error without a title', async (store, ids) => await store.opOccs.insert(op(randomUUID(), ids[2]!, 8, { error: { status: 500, detail: 'no title' } as never }), {} as never)],
  [
    'a name holding an escape sequence (ASCII), which the printer shows escaped',
    async (store) => {
      const id = randomUUID();
      await store.instances.insert(instance(id, 'hostile'));
      await rename(store, 'vnf_instances', id, 'web\x1b]0;title\x07\x1b[2J');
      await store.opOccs.insert(op(randomUUID(), id, 4), {} as never);
    },
  ],
  [
    'a name holding a right-to-left override',
    async (store) => {
      const id = randomUUID();
      await store.instances.insert(instance(id, 'hostile'));
      await rename(store, 'vnf_instances', id, 'web\u202etxt.exe');
      await store.opOccs.insert(op(randomUUID(), id, 4), {} as never);
    },
  ],
  [
    'an error title holding a C1 control',
    async (store, ids) => await store.opOccs.insert(op(randomUUID(), ids[2]!, 9, { error: { status: 500, title: 'csi \u009b2J', detail: 'd' } as never }), {} as never),
  ],
  [
    'an error title beyond the BMP',
    async (store, ids) => await store.opOccs.insert(op(randomUUID(), ids[2]!, 9, { error: { status: 500, title: 'rocket 🚀', detail: 'd' } as never }), {} as never),
  ],
];

describe('op-list table written by SQLite', () => {
  it('is the printer’s table, byte for byte, in every form, over awkward names, states and errors', async () => {
    const store = await sqlite();
    try {
      // Every table of the clean store is SQLite's; one filter matches nothing.
      const { written, tables } = await compare(store);
      expect(tables).toBeGreaterThanOrEqual(FORMS.length * 2 - 2);
      expect(written).toBe(tables);
    } finally {
      await store.close();
    }
  });

  it.each(ODD)('is the printer’s own with %s', async (_, extra) => {
    const store = await sqlite(extra);
    try {
      await compare(store);
      const { wide } = { wide: _.startsWith('an error') };
      expect(store.opOccs.tableText({}, { wide } as TableRead)).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('says nothing for no rows: the printer says the list is empty', async () => {
    const store = openStore(join(mkdtempSync(join(tmpdir(), 'vnfm-table-text-')), 'home'));
    try {
      expect(store.opOccs.tableText({}, { wide: false })).toBeUndefined();
      await compare(store);
    } finally {
      await store.close();
    }
  });
});

describe('op-list table on PostgreSQL', () => {
  let server: PgServer;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('is the printer’s own, the same bytes as on SQLite', async () => {
    const db = await server.createDatabase();
    const store = await connectStore(join(mkdtempSync(join(tmpdir(), 'vnfm-table-text-')), 'home'), { databaseUrl: server.url(db) });
    try {
      await seed(store);
      expect(store.opOccs.tableText({}, { wide: false })).toBeUndefined();
      expect(await compare(store)).toMatchObject({ written: 0 });
    } finally {
      await store.close();
    }
  });
});

const VIM_ID = randomUUID();
const vimRecord = (id: string, name: string): Vim => ({
  id,
  name,
  description: '',
  isDefault: false,
  status: 'PENDING',
  createdAt: at(0),
  updatedAt: at(0),
  spec: { type: 'kubernetes', authUrl: 'https://127.0.0.1:6443', auth: { method: 'bearer-token' }, verifyTls: true },
  secretNames: [],
});

/** Instances of every awkward name and state, on a VIM (its id a uuid or not) or none, of a named package or not. */
async function seedInstances(store: Store, extra: (store: Store) => Promise<void> = async () => {}): Promise<void> {
  await store.packages.insert(packageRecord());
  await store.packages.insert(packageRecord({ id: 'p2', vnfdId: 'vnfd-2', name: 'pkg-名前' } as never));
  await store.vims.insert(vimRecord(VIM_ID, 'edge-ß'), undefined);
  await store.vims.insert(vimRecord('vim-label', 'a VIM whose id is no uuid'), undefined);
  const vims = [undefined, VIM_ID, 'vim-label'];
  for (let n = 0; n < 40; n++) {
    const i = instance(randomUUID(), NAMES[n % NAMES.length]) as unknown as Record<string, unknown>;
    const vimId = vims[n % vims.length];
    Object.assign(i, {
      vnfPkgId: n % 3 ? 'p1' : 'p2',
      vnfProductName: n % 4 ? 'cnf' : 'a product name longer than the others',
      createdAt: at(n),
      ...(vimId === undefined ? {} : { vimId }),
      ...(n % 2
        ? {
            instantiationState: 'INSTANTIATED',
            instantiatedVnfInfo: { flavourId: 'simple', vnfState: 'STARTED', vnfcInfo: Array.from({ length: n % 13 }, (_, k) => ({ id: `c${k}` })) },
          }
        : {}),
    });
    await store.instances.insert(i as unknown as VnfInstance);
  }
  await extra(store);
}

const VNF_FORMS: { flags: Partial<OutputOptions & ListOptions>; filter: VnfInstanceFilter }[] = [
  { flags: {}, filter: {} },
  { flags: { output: 'wide' }, filter: {} },
  { flags: { headers: false }, filter: {} },
  { flags: { output: 'wide', headers: false, limit: 9 }, filter: {} },
  { flags: { limit: 4 }, filter: {} },
  { flags: {}, filter: { state: 'NOT_INSTANTIATED' } },
  { flags: { output: 'wide' }, filter: { vimId: VIM_ID } },
  { flags: {}, filter: { vnfPkgId: 'p2', name: 'w*' } },
  { flags: {}, filter: { name: 'nothing-of-this-name' } },
];

async function compareInstances(store: Store): Promise<{ written: number; tables: number }> {
  let written = 0;
  let tables = 0;
  const book = { vims: await store.vims.names(), packages: await store.packages.names() };
  for (const { flags, filter } of VNF_FORMS) {
    for (const colour of [false, true]) {
      const opts = { output: 'table' as const, ...flags, narrowed: Object.keys(filter).length > 0 };
      const plain = capture(colour);
      await printList(plain.io, opts, vnfListView(book), { read: (how) => store.instances.read(filter, how) });
      const sql = capture(colour);
      const table = (how: TableRead) => {
        const text = store.instances.tableText(filter, how);
        if (text) written++;
        return text;
      };
      await printList(sql.io, opts, vnfListView(book), { read: (how) => store.instances.read(filter, how), table });
      expect({ flags, filter, colour, out: sql.out(), err: sql.err() }).toEqual({ flags, filter, colour, out: plain.out(), err: plain.err() });
      if (plain.out() !== '') tables++;
    }
  }
  return { written, tables };
}

const ODD_INSTANCES: [string, (store: Store) => Promise<void>][] = [
  ['a name beyond the BMP', async (store) => await store.instances.insert(instance(randomUUID(), 'emoji-😀'))],
  ['an id that is not a uuid', async (store) => await store.instances.insert(instance('inst-not-a-uuid', 'x'))],
  ['a name holding an escape sequence (ASCII), which the printer shows escaped', (store) => renamed(store, 'web\x1b]52;c;aGk=\x07\rok')],
  ['a name holding a right-to-left override', (store) => renamed(store, 'web\u202etxt.exe')],
  [
    'a package named with a C1 control',
    async (store) => {
      await store.packages.insert(packageRecord({ id: 'p3', vnfdId: 'vnfd-3', name: 'pkg-3' } as never));
      await rename(store, 'vnf_packages', 'p3', 'pkg\u009b2J');
      await store.instances.insert({ ...instance(randomUUID(), 'of-p3'), vnfPkgId: 'p3' });
    },
  ],
  [
    'a VIM given inline',
    async (store) =>
      await store.instances.insert({
        ...instance(randomUUID(), 'inline'),
        vimConnectionInfo: { vim1: { vimId: 'inline-vim', vimType: 'kubernetes' } },
      } as unknown as VnfInstance),
  ],
];

describe('vnf-list table written by SQLite', () => {
  const sqliteInstances = async (extra?: (store: Store) => Promise<void>) => {
    const store = openStore(join(mkdtempSync(join(tmpdir(), 'vnfm-table-text-')), 'home'));
    await seedInstances(store, extra);
    return store;
  };

  it('is the printer’s table, byte for byte, in every form, over awkward names, VIMs, packages and VNFC counts', async () => {
    const store = await sqliteInstances();
    try {
      const { written, tables } = await compareInstances(store);
      expect(tables).toBeGreaterThanOrEqual(VNF_FORMS.length * 2 - 2);
      expect(written).toBe(tables);
    } finally {
      await store.close();
    }
  });

  it.each(ODD_INSTANCES)('is the printer’s own with %s', async (what, extra) => {
    const store = await sqliteInstances(extra);
    try {
      await compareInstances(store);
      expect(store.instances.tableText({}, { wide: what.includes('VIM') })).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});

describe('vnf-list table on PostgreSQL', () => {
  let server: PgServer;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('is the printer’s own, the same bytes as on SQLite', async () => {
    const db = await server.createDatabase();
    const store = await connectStore(join(mkdtempSync(join(tmpdir(), 'vnfm-table-text-')), 'home'), { databaseUrl: server.url(db) });
    try {
      await seedInstances(store);
      expect(store.instances.tableText({}, { wide: false })).toBeUndefined();
      expect(await compareInstances(store)).toMatchObject({ written: 0 });
    } finally {
      await store.close();
    }
  });
});
