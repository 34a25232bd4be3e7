/**
 * op-list's and vnf-list's default -o json (each item's simple attributes)
 * written by SQLite a page at a time (jsonListText) is JSON.stringify(items,
 * null, 2) of the items as the view shows them, byte for byte, and the same
 * bytes as the item-by-item writer: over awkward strings (quotes, backslashes,
 * every control character, DEL, U+2028/2029, a lone surrogate, characters
 * beyond the BMP, a NUL), absent and empty names, both booleans, rows whose order
 * keys tie, --limit across a page's end and filters. On PostgreSQL the store
 * writes no page and the item-by-item writer prints the same bytes.
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
import { opListView } from '../../src/cli/output/op-view.js';
import { vnfListView } from '../../src/cli/output/vnf-view.js';
import { applySelector, attributeSelector, LCM_OP_OCC_ATTRIBUTES, VNF_INSTANCE_ATTRIBUTES } from '../../src/cli/output/attribute-selector.js';
import { printList, type ListSource, type View } from '../../src/cli/output/printer.js';
import { IO } from '../../src/cli/io.js';
import { instanceRecord, packageRecord } from '../support/store-records.js';
import { startPostgres, type PgServer } from '../support/postgres.js';

const CONTROLS = Array.from({ length: 32 }, (_, n) => String.fromCharCode(n)).join('');
/** Strings as awkward as JSON escaping meets. */
const AWKWARD = [
  '',
  'web',
  'a "quoted" \\ back/slash',
  `controls ${CONTROLS} and DEL \u007f`,
  'line\u2028para\u2029end',
  'lone \ud800 surrogate \udfff',
  'emoji 😀 and 𝄞',
  'ß-日本語-café\u00a0',
  '</script>',
];
const STATES = ['STARTING', 'PROCESSING', 'COMPLETED', 'FAILED_TEMP', 'FAILED', 'ROLLING_BACK', 'ROLLED_BACK'] as const;
const OPERATIONS = ['INSTANTIATE', 'SCALE', 'HEAL', 'TERMINATE'] as const;
/** Times that tie often, so pages break between rows of the same time. */
const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n % 7, 0)).toISOString();
/** More operations than a page holds (1000). */
const OPS = 2105;

/** PostgreSQL's text keeps no NUL. */
const NO_NUL = AWKWARD.map((s) => s.replaceAll('\0', ''));

async function seed(store: Store, instances = AWKWARD.length * 2, strings = AWKWARD): Promise<string[]> {
  await store.packages.insert(packageRecord());
  const ids: string[] = [];
  for (let n = 0; n < instances; n++) {
    const s = strings[n % strings.length]!;
    const id = n % 5 ? randomUUID() : `inst-${n}-${s}`;
    const i = instanceRecord({
      id,
      ...(n % 4 === 1 ? {} : { vnfInstanceName: s }),
      vnfInstanceDescription: strings[(n + 3) % strings.length]!,
      vnfProductName: s || 'cnf',
      vnfSoftwareVersion: strings[(n + 5) % strings.length]!,
      createdAt: at(n),
      updatedAt: at(n + 1),
    });
    await store.instances.insert(i);
    ids.push(id);
  }
  return ids;
}

async function seedOps(store: Store, ids: string[]): Promise<void> {
  for (let n = 0; n < OPS; n++) {
    const op = {
      id: n % 11 ? randomUUID() : `op-${n}-${AWKWARD[n % AWKWARD.length]}`,
      vnfInstanceId: ids[n % ids.length]!,
      operation: OPERATIONS[n % OPERATIONS.length]!,
      operationState: STATES[n % STATES.length]!,
      stateEnteredTime: at(n + 2),
      startTime: at(n),
      operationParams: {},
      journal: [],
      isAutomaticInvocation: n % 3 === 0,
    } as unknown as LcmOpOcc;
    await store.opOccs.insert(op, {} as never);
  }
}

function capture() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  const io = new IO({ stdin: new PassThrough(), stdout, stderr }, { NO_COLOR: '1' });
  return { io, out: () => out };
}

/** The list printed with the store's pages (`json`) and without: both, and how many pages the store wrote. */
async function printed<T>(view: View<T>, attributes: ReturnType<typeof attributeSelector>, source: ListSource<T>, limit?: number) {
  const opts = { output: 'json' as const, attributes, ...(limit === undefined ? {} : { limit }) };
  const items = capture();
  await printList(items.io, opts, view, { read: source.read });
  let pages = 0;
  const sql = capture();
  await printList(sql.io, opts, view, {
    read: source.read,
    json: async (how) => {
      const text = await source.json!(how);
      return (
        text &&
        (function* () {
          for (const page of text) {
            pages++;
            yield page;
          }
        })()
      );
    },
  });
  return { items: items.out(), sql: sql.out(), pages };
}

const OP_FORMS: { filter: OpOccFilter; limit?: number }[] = [
  { filter: {} },
  { filter: {}, limit: 3 },
  { filter: {}, limit: 1000 },
  { filter: {}, limit: 1001 },
  { filter: {}, limit: 2000 },
  { filter: { state: 'FAILED_TEMP' } },
  { filter: { operation: 'SCALE', since: at(2), until: at(5) } },
  { filter: { state: 'FAILED', operation: 'HEAL' } },
];

/** A list's forms (filters and limits), its view and its store's reads. */
interface Compared<T, F> {
  forms: { filter: F; limit?: number }[];
  attributes: ReturnType<typeof attributeSelector>;
  view: View<T>;
  read(filter: F, how: Parameters<ListSource<T>['read']>[0]): Iterable<T> | AsyncIterable<T>;
  json(filter: F, how: { limit?: number }): Iterable<string> | undefined;
  list(filter: F): Promise<T[]>;
}

/** Each form on the store's pages, the item-by-item writer and JSON.stringify of the whole records as the view shows them; the pages written. */
async function compare<T, F>(c: Compared<T, F>): Promise<number> {
  let pages = 0;
  for (const { filter, limit } of c.forms) {
    const source: ListSource<T> = { read: (how) => c.read(filter, how), json: (how) => c.json(filter, how) };
    const out = await printed(c.view, c.attributes, source, limit);
    const records = (await c.list(filter)).slice(0, limit);
    const expected =
      JSON.stringify(
        records.map((r) => applySelector(c.attributes, c.view.toData(r))),
        null,
        2,
      ) + '\n';
    expect({ filter, limit, out: out.sql }).toEqual({ filter, limit, out: expected });
    expect({ filter, limit, out: out.items }).toEqual({ filter, limit, out: expected });
    pages += out.pages;
  }
  return pages;
}

const compareOps = (store: Store): Promise<number> =>
  compare<LcmOpOcc, OpOccFilter>({
    forms: OP_FORMS,
    attributes: attributeSelector({}, LCM_OP_OCC_ATTRIBUTES, 'json'),
    view: opListView(),
    read: (filter, how) => store.opOccs.read(filter, how),
    json: (filter, how) => store.opOccs.jsonText(filter, how),
    list: async (filter) => await store.opOccs.list(filter),
  });

const VNF_FORMS: { filter: VnfInstanceFilter; limit?: number }[] = [
  { filter: {} },
  { filter: {}, limit: 4 },
  { filter: { state: 'NOT_INSTANTIATED' } },
  { filter: { name: 'w*' } },
  { filter: { name: 'nothing-of-this-name' } },
];

const compareInstances = async (store: Store): Promise<number> =>
  await compare<VnfInstance, VnfInstanceFilter>({
    forms: VNF_FORMS,
    attributes: attributeSelector({}, VNF_INSTANCE_ATTRIBUTES, 'json'),
    view: vnfListView({ vims: await store.vims.names(), packages: await store.packages.names() }),
    read: (filter, how) => store.instances.read(filter, how),
    json: (filter, how) => store.instances.jsonText(filter, how),
    list: async (filter) => await store.instances.list(filter),
  });

const home = () => join(mkdtempSync(join(tmpdir(), 'vnfm-json-text-')), 'home');

describe('default -o json written by SQLite', () => {
  it('op-list: JSON.stringify’s bytes, in pages that break between rows of the same start time', async () => {
    const store = openStore(home());
    try {
      await seedOps(store, await seed(store));
      // The whole list is 3 pages, the limits 1, 1, 2, 2; one filter matches nothing.
      expect(await compareOps(store)).toBeGreaterThanOrEqual(3 + 1 + 1 + 2 + 2 + 1 + 1);
      expect([...store.opOccs.jsonText({}, {})!].map((page) => page.split('\n  {\n').length)).toEqual([1000, 1000, OPS - 2000]);
    } finally {
      await store.close();
    }
  });

  it('vnf-list: JSON.stringify’s bytes over awkward names, descriptions and versions, across a page’s end', async () => {
    const store = openStore(home());
    try {
      await seed(store, 1003);
      expect(await compareInstances(store)).toBeGreaterThanOrEqual(2 + 1 + 2);
    } finally {
      await store.close();
    }
  });

  it('writes no page for no rows: the list is []', async () => {
    const store = openStore(home());
    try {
      expect([...store.opOccs.jsonText({}, {})!]).toEqual([]);
      expect([...store.instances.jsonText({}, {})!]).toEqual([]);
      const out = await printed(opListView(), attributeSelector({}, LCM_OP_OCC_ATTRIBUTES, 'json'), {
        read: (how) => store.opOccs.read({}, how),
        json: (how) => store.opOccs.jsonText({}, how),
      });
      expect(out).toEqual({ items: '[]\n', sql: '[]\n', pages: 0 });
    } finally {
      await store.close();
    }
  });
});

describe('default -o json on PostgreSQL', () => {
  let server: PgServer;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('is written item by item, JSON.stringify’s bytes', async () => {
    const db = await server.createDatabase();
    const store = await connectStore(home(), { databaseUrl: server.url(db) });
    try {
      await seed(store, NO_NUL.length * 2, NO_NUL);
      expect(store.instances.jsonText({}, {})).toBeUndefined();
      expect(store.opOccs.jsonText({}, {})).toBeUndefined();
      expect(await compareInstances(store)).toBe(0);
    } finally {
      await store.close();
    }
  });
});
