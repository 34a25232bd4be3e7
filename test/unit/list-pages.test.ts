/**
 * vnf-list and op-list read what they print: a table reads summary rows, -o
 * json streams whole rows in pages with the stored JSON re-indented. What is
 * printed is what JSON.stringify(items, null, 2) of the whole rows prints.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { LcmOpOcc, VnfInstance } from '../../src/lcm/index.js';
import { openStore, readingRawJson } from '../../src/store/index.js';
import { collect } from '../../src/store/db.js';
import { reindentJson, writeJsonList } from '../../src/cli/output/json-list.js';
import { vnfListView } from '../../src/cli/output/vnf-view.js';
import { opListView } from '../../src/cli/output/op-view.js';
import { printList } from '../../src/cli/output/printer.js';
import { IO } from '../../src/cli/io.js';
import { packageRecord } from '../support/store-records.js';

const NOW = '2026-01-01T00:00:00.000Z';
const pkg = packageRecord();

const instanceOf = (n: number): VnfInstance =>
  ({
    id: `inst-${String(n).padStart(5, '0')}`,
    vnfInstanceName: `web-${n}`,
    vnfInstanceDescription: 'a "quoted" \\ description',
    vnfdId: 'vnfd-1',
    vnfPkgId: 'p1',
    vnfProvider: 'ACME',
    vnfProductName: 'cnf',
    vnfSoftwareVersion: '1.0',
    vnfdVersion: '1.0',
    instantiationState: n % 3 ? 'INSTANTIATED' : 'NOT_INSTANTIATED',
    ...(n % 3
      ? {
          instantiatedVnfInfo: {
            flavourId: 'simple',
            vnfState: 'STARTED',
            vnfcInfo: Array.from({ length: n % 5 }, (_, k) => ({ id: `c${k}`, vduId: 'VDU1' })),
            metadata: { namespace: 'default', note: 'tab\there, "quote", {brace} [bracket], colon: comma,', empty: {}, list: [] },
          },
        }
      : {}),
    // an inline VIM's sealed token, masked in every format
    ...(n === 7 ? { vimConnectionInfo: { vim1: { vimId: 'inline', vimType: 'kubernetes', accessInfo: { bearer_token: { sealed: 'gAAAA', keyId: 'k1' } } } } } : {}),
    metadata: n % 2 ? { owner: 'ops', n } : {},
    // created in groups of 7 at the same time, so pages split rows of one time
    createdAt: `2026-01-01T00:00:${String(Math.floor(n / 7) % 60).padStart(2, '0')}.${String(Math.floor(n / 420)).padStart(3, '0')}Z`,
    updatedAt: NOW,
  }) as unknown as VnfInstance;

async function seeded(count: number) {
  const store = openStore(join(mkdtempSync(join(tmpdir(), 'vnfm-pages-')), 'home'));
  await store.packages.insert(pkg);
  const instances = Array.from({ length: count }, (_, n) => instanceOf(n));
  await store.db.transaction(async () => {
    for (const i of instances) {
      await store.instances.insert(i);
      const op: LcmOpOcc = {
        id: `op-${i.id}`,
        vnfInstanceId: i.id,
        operation: 'INSTANTIATE',
        operationState: 'COMPLETED',
        stateEnteredTime: NOW,
        startTime: i.createdAt,
        operationParams: { flavourId: 'simple' } as LcmOpOcc['operationParams'],
        journal: [{ step: 'apply', state: 'done' }] as never,
        isAutomaticInvocation: false,
      };
      await store.opOccs.insert(op, { vnfPkgId: 'p1', vnfdId: 'vnfd-1', instantiationState: 'NOT_INSTANTIATED' } as never);
    }
  })();
  return { store, instances };
}

function capture() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const io = new IO({ stdin: new PassThrough(), stdout, stderr }, { NO_COLOR: '1' });
  return { io, out: () => out, err: () => err };
}

const byAge = (a: VnfInstance, b: VnfInstance) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1);

describe('lists read in pages', () => {
  it('every row once, oldest first, across pages of rows created at the same time; --limit reaches the SQL', async () => {
    const { store, instances } = await seeded(1203);
    try {
      const expected = [...instances].sort(byAge).map((i) => i.id);
      expect((await collect(store.instances.read())).map((i) => i.id)).toEqual(expected);
      expect((await collect(store.instances.read({}, { limit: 501 }))).map((i) => i.id)).toEqual(expected.slice(0, 501));
      expect((await collect(store.instances.read({ state: 'INSTANTIATED' }))).map((i) => i.id)).toEqual(expected.filter((id) => Number(id.slice(5)) % 3 !== 0));
      const ops = await collect(store.opOccs.read());
      expect(ops).toHaveLength(1203);
      expect(new Set(ops.map((o) => o.id)).size).toBe(1203);
      expect(ops.map((o) => o.startTime)).toEqual([...ops.map((o) => o.startTime)].sort());
      expect((await collect(store.opOccs.read({}, { limit: 3, summary: true }))).map((o) => o.id)).toEqual(ops.slice(0, 3).map((o) => o.id));
    } finally {
      await store.close();
    }
  });

  it('a summary row has what the table shows: the VNFC count without the instance info', async () => {
    const { store } = await seeded(10);
    try {
      const rows = await collect(store.instances.read({}, { summary: true }));
      const [one, four] = ['inst-00001', 'inst-00004'].map((id) => rows.find((r) => r.id === id));
      expect(one).toMatchObject({ id: 'inst-00001', vnfInstanceName: 'web-1', instantiationState: 'INSTANTIATED', vnfPkgId: 'p1', vnfcCount: 1 });
      expect(one!.instantiatedVnfInfo).toBeUndefined();
      expect(four).toMatchObject({ id: 'inst-00004', vnfcCount: 4 });
      const [notInstantiated] = await collect(store.instances.read({ state: 'NOT_INSTANTIATED' }, { summary: true }));
      expect((notInstantiated as unknown as { vnfcCount: unknown }).vnfcCount).toBeNull();
      const [op] = await collect(store.opOccs.read({}, { summary: true }));
      expect(op).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED' });
      expect(op!.journal).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('tables from summary rows are the tables of whole rows, in every format a table has', async () => {
    const { store } = await seeded(40);
    try {
      const book = { vims: new Map<string, string>(), packages: await store.packages.names() };
      for (const output of ['table', 'wide', 'value', 'name'] as const) {
        const whole = capture();
        await printList(whole.io, { output }, vnfListView(book), await store.instances.list());
        const summary = capture();
        await printList(summary.io, { output }, vnfListView(book), { read: (how) => store.instances.read({}, how) });
        expect(summary.out()).toBe(whole.out());
        expect(summary.out()).not.toBe('');
        // A summary row names its instance (read in the same query), as the book names it for a whole row.
        const ops = capture();
        await printList(ops.io, { output }, opListView(), { read: (how) => store.opOccs.read({}, how) });
        const opsWhole = capture();
        await printList(opsWhole.io, { output }, opListView({ instances: await store.instances.names() }), await store.opOccs.list());
        expect(ops.out()).toBe(opsWhole.out());
      }
    } finally {
      await store.close();
    }
  });

  it('-o json streamed is JSON.stringify(items, null, 2) of the whole rows, secrets masked; -c and an empty list too', async () => {
    const { store } = await seeded(1100);
    try {
      const whole = capture();
      await printList(whole.io, { output: 'json', sort: 'createdAt' }, vnfListView(), await store.instances.list());
      const streamed = capture();
      await printList(streamed.io, { output: 'json' }, vnfListView(), { read: (how) => store.instances.read({}, how) });
      expect(streamed.out()).toBe(whole.out());
      expect(streamed.out()).toContain('"bearer_token": "***"');
      expect(streamed.out()).not.toContain('gAAAA');
      const picked = capture();
      await printList(picked.io, { output: 'json', column: ['id', 'vnfInstanceName'], limit: 2 }, vnfListView(), { read: (how) => store.instances.read({}, how) });
      expect(JSON.parse(picked.out())).toEqual(
        JSON.parse(whole.out())
          .slice(0, 2)
          .map((i: Record<string, unknown>) => ({ id: i['id'], vnfInstanceName: i['vnfInstanceName'] })),
      );
      const ops = capture();
      await printList(ops.io, { output: 'json' }, opListView(), { read: (how) => store.opOccs.read({}, how) });
      const opsWhole = capture();
      await printList(opsWhole.io, { output: 'json', filter: '(neq,id,none)' }, opListView(), await store.opOccs.list());
      expect(ops.out()).toBe(opsWhole.out());
      const empty = capture();
      await printList(empty.io, { output: 'json' }, vnfListView(), { read: (how) => store.instances.read({ name: 'nothing' }, how) });
      expect(empty.out()).toBe('[]\n');
    } finally {
      await store.close();
    }
  });

  it('waits for a full stream to drain', async () => {
    const chunks: string[] = [];
    let drains = 0;
    const out = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString());
        setImmediate(done);
      },
    });
    out.on('drain', () => drains++);
    const items = Array.from({ length: 3000 }, (_, n) => ({ n, text: 'x'.repeat(500) }));
    await writeJsonList(out, (i) => readingRawJson(() => i), items);
    expect(chunks.join('')).toBe(JSON.stringify(items, null, 2) + '\n');
    expect(drains).toBeGreaterThan(0);
  });
});

describe('reindentJson', () => {
  it.each([
    ['{"a":[],"b":{},"c":"x\\"y\\\\","d":[1,2.5,{"e":null,"f":true}],"g":"{[,:]}"}'],
    ['[]'],
    ['{}'],
    ['"a \\u0001 string"'],
    ['[[[]],[{}],"\\\\"]'],
    [JSON.stringify({ unicode: 'é 日本 😀 \u2028', control: '\u001b[0m', neg: -1e-7, big: 1e21 })],
  ])('%s prints as JSON.stringify(value, null, 2)', (text) => {
    expect(reindentJson(text, '')).toBe(JSON.stringify(JSON.parse(text), null, 2));
    expect(reindentJson(text, '    ')).toBe(JSON.stringify(JSON.parse(text), null, 2).replace(/\n/g, '\n    '));
  });
});
