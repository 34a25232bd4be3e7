/**
 * SOL013 attribute selectors on vnf-list and op-list (-o json and -o yaml):
 * by default the complex attributes are left out, as Tacker's list APIs do;
 * --all-fields, --fields, --exclude-fields and --exclude-default choose
 * otherwise, with Tacker's combination rules. On SQLite and on PostgreSQL.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import yaml from 'js-yaml';
import type { LcmOpOcc, VnfInstance } from '../../src/lcm/index.js';
import type { Store } from '../../src/store/index.js';
import { collect } from '../../src/store/db.js';
import { UsageError } from '../../src/errors.js';
import { IO } from '../../src/cli/io.js';
import { printList, printResource, type OutputFormat } from '../../src/cli/output/printer.js';
import { vnfInstanceView, vnfListView } from '../../src/cli/output/vnf-view.js';
import { opListView, opOccView } from '../../src/cli/output/op-view.js';
import { applySelector, attributeSelector, keepsAttribute, LCM_OP_OCC_ATTRIBUTES, VNF_INSTANCE_ATTRIBUTES, type SelectorFlags } from '../../src/cli/output/attribute-selector.js';
import { main } from '../../src/cli/main.js';
import { shortTime } from '../../src/cli/output/names.js';
import { STORE_BACKENDS, tempHome, useStoreBackend } from '../support/store-backends.js';
import { instanceRecord, packageRecord } from '../support/store-records.js';

const NOW = '2026-01-01T00:00:00.000Z';

const web: VnfInstance = {
  id: 'inst-1',
  vnfInstanceName: 'web',
  vnfInstanceDescription: 'a "quoted" \\ description\twith a tab\nand a line, é and \u0001',
  vnfdId: 'vnfd-1',
  vnfPkgId: 'p1',
  vnfProvider: 'ACME',
  vnfProductName: 'cnf',
  vnfSoftwareVersion: '1.0',
  vnfdVersion: '1.0',
  instantiationState: 'INSTANTIATED',
  vimConnectionInfo: { vim1: { vimId: 'inline', vimType: 'kubernetes', accessInfo: { bearer_token: { sealed: 'gAAAA', keyId: 'k1' } } } },
  instantiatedVnfInfo: {
    flavourId: 'simple',
    vnfState: 'STARTED',
    scaleStatus: [{ aspectId: 'vdu1_aspect', scaleLevel: 1 }],
    vnfcInfo: [{ id: 'c1', vduId: 'VDU1' }],
    metadata: { namespace: 'default' },
  },
  metadata: { owner: 'ops', tier: { level: 2 } },
  extensions: { note: 'x' },
  vnfConfigurableProperties: { isAutoscaleEnabled: false },
  createdAt: '2026-01-01T00:00:01.000Z',
  updatedAt: NOW,
} as unknown as VnfInstance;

/** No name, no VIM, nothing instantiated. */
const idle = instanceRecord({ id: 'inst-2', createdAt: '2026-01-01T00:00:02.000Z', updatedAt: NOW });

const failed: LcmOpOcc = {
  id: 'op-1',
  vnfInstanceId: 'inst-1',
  operation: 'INSTANTIATE',
  operationState: 'FAILED_TEMP',
  stateEnteredTime: NOW,
  startTime: '2026-01-01T00:00:03.000Z',
  operationParams: { flavourId: 'simple' } as LcmOpOcc['operationParams'],
  error: { status: 422, title: 'Readiness timeout', detail: 'Deployment/vdu1 not ready' },
  resourceChanges: { affectedVnfcs: [{ id: 'c1', vduId: 'VDU1', changeType: 'ADDED' }] },
  journal: [{ step: 'apply', state: 'done' }] as never,
  isAutomaticInvocation: true,
} as unknown as LcmOpOcc;

/** The simple attributes of the stored instances, written out: what the default -o json of vnf-list prints. */
const webSimple = {
  id: 'inst-1',
  vnfInstanceName: 'web',
  vnfInstanceDescription: 'a "quoted" \\ description\twith a tab\nand a line, é and \u0001',
  vnfdId: 'vnfd-1',
  vnfPkgId: 'p1',
  vnfProvider: 'ACME',
  vnfProductName: 'cnf',
  vnfSoftwareVersion: '1.0',
  vnfdVersion: '1.0',
  instantiationState: 'INSTANTIATED',
  createdAt: '2026-01-01T00:00:01.000Z',
  updatedAt: NOW,
};
const idleSimple = {
  id: 'inst-2',
  vnfInstanceDescription: '',
  vnfdId: 'vnfd-1',
  vnfPkgId: 'p1',
  vnfProvider: 'ACME',
  vnfProductName: 'cnf',
  vnfSoftwareVersion: '1.0',
  vnfdVersion: '1.0',
  instantiationState: 'NOT_INSTANTIATED',
  createdAt: '2026-01-01T00:00:02.000Z',
  updatedAt: NOW,
};
const failedSimple = {
  id: 'op-1',
  operationState: 'FAILED_TEMP',
  stateEnteredTime: NOW,
  startTime: '2026-01-01T00:00:03.000Z',
  vnfInstanceId: 'inst-1',
  operation: 'INSTANTIATE',
  isAutomaticInvocation: true,
  isCancelPending: false,
};

function capture() {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  const io = new IO({ stdin: new PassThrough(), stdout, stderr: new PassThrough() }, { NO_COLOR: '1' });
  return { io, out: () => out };
}

describe('attributeSelector: the options and their combinations', () => {
  it.each<[SelectorFlags, RegExp]>([
    [{ allFields: true, fields: 'metadata' }, /--all-fields and --fields cannot be used together/],
    [{ allFields: true, excludeFields: 'metadata' }, /--all-fields and --exclude-fields cannot be used together/],
    [{ allFields: true, excludeDefault: true }, /--all-fields and --exclude-default cannot be used together/],
    [{ fields: 'metadata', excludeFields: 'extensions' }, /--fields and --exclude-fields cannot be used together/],
    [{ excludeFields: 'metadata', excludeDefault: true }, /--exclude-fields and --exclude-default cannot be used together/],
    [{ fields: 'metadata,,extensions' }, /--fields "metadata,,extensions": "" is not an attribute name/],
    [{ excludeFields: 'instantiatedVnfInfo/' }, /--exclude-fields .* is not an attribute name/],
  ])('%j is a usage error (exit 2) naming the options', (flags, message) => {
    let error: unknown;
    try {
      attributeSelector(flags, VNF_INSTANCE_ATTRIBUTES, 'json');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(2);
    expect((error as UsageError).message).toMatch(message);
    expect((error as UsageError).hint).toBeTruthy();
  });

  it('applies to -o json and -o yaml only; a table is told to use -c', () => {
    expect(() => attributeSelector({ fields: 'metadata' }, VNF_INSTANCE_ATTRIBUTES, 'table')).toThrow(/--fields chooses the attributes of -o json and -o yaml, not of -o table/);
    expect(() => attributeSelector({ allFields: true }, LCM_OP_OCC_ATTRIBUTES, 'name')).toThrow(UsageError);
    expect(attributeSelector({}, VNF_INSTANCE_ATTRIBUTES, 'table')).toMatchObject({ explicit: false, simpleOnly: true });
    expect(attributeSelector({ fields: 'metadata', excludeDefault: true }, VNF_INSTANCE_ATTRIBUTES, 'yaml')).toMatchObject({ explicit: true, simpleOnly: false });
  });

  const data = vnfInstanceView.toData(web);
  const select = (flags: SelectorFlags) => applySelector(attributeSelector(flags, VNF_INSTANCE_ATTRIBUTES, 'json'), data);

  it('by default leaves out exactly the complex attributes, and keeps the rest in their order', () => {
    expect(Object.keys(data)).toEqual(expect.arrayContaining(['vimConnectionInfo', 'instantiatedVnfInfo', 'metadata', 'extensions', 'vnfConfigurableProperties']));
    expect(select({})).toEqual(webSimple);
    expect(Object.keys(select({}))).toEqual(Object.keys(webSimple));
    expect(select({ excludeDefault: true })).toEqual(select({}));
  });

  it('--all-fields keeps everything; --exclude-fields leaves out what it names, nested too, never a mandatory attribute', () => {
    expect(select({ allFields: true })).toBe(data);
    const { metadata: _m, ...withoutMetadata } = data;
    expect(select({ excludeFields: 'metadata' })).toEqual(withoutMetadata);
    const { vnfcInfo: _v, ...infoWithoutVnfcs } = web.instantiatedVnfInfo as unknown as Record<string, unknown>;
    expect(select({ excludeFields: 'instantiatedVnfInfo/vnfcInfo,metadata/tier' })).toEqual({ ...data, instantiatedVnfInfo: infoWithoutVnfcs, metadata: { owner: 'ops' } });
    expect(select({ excludeFields: 'id,vnfdId,instantiatedVnfInfo/vnfState' })).toEqual(data);
    // The instance it read is not changed.
    expect((web.instantiatedVnfInfo as unknown as { vnfcInfo: unknown[] }).vnfcInfo).toHaveLength(1);
  });

  it('--fields keeps the mandatory attributes and those it names; a nested path keeps that part of its parent', () => {
    const mandatory = {
      id: 'inst-1',
      vnfdId: 'vnfd-1',
      vnfPkgId: 'p1',
      vnfProvider: 'ACME',
      vnfProductName: 'cnf',
      vnfSoftwareVersion: '1.0',
      vnfdVersion: '1.0',
      instantiationState: 'INSTANTIATED',
    };
    expect(select({ fields: 'metadata' })).toEqual({ ...mandatory, metadata: { owner: 'ops', tier: { level: 2 } } });
    expect(select({ fields: 'instantiatedVnfInfo/vnfState,instantiatedVnfInfo/scaleStatus,metadata/tier/level' })).toEqual({
      ...mandatory,
      instantiatedVnfInfo: { vnfState: 'STARTED', scaleStatus: [{ aspectId: 'vdu1_aspect', scaleLevel: 1 }] },
      metadata: { tier: { level: 2 } },
    });
    // With --exclude-default: every simple attribute, and the complex ones named.
    const withState = select({ fields: 'instantiatedVnfInfo/vnfState,extensions', excludeDefault: true });
    expect(withState).toEqual({ ...webSimple, instantiatedVnfInfo: { vnfState: 'STARTED' }, extensions: { note: 'x' } });
    expect(Object.keys(withState)).toEqual(['id', ...Object.keys(webSimple).slice(1, -2), 'instantiatedVnfInfo', 'extensions', 'createdAt', 'updatedAt']);
    // A name that is not there adds nothing.
    expect(select({ fields: 'nothing/here' })).toEqual(mandatory);
  });

  it('names the complex attributes a list must read', () => {
    const on = (flags: SelectorFlags) => (name: string) => keepsAttribute(attributeSelector(flags, VNF_INSTANCE_ATTRIBUTES, 'json'), name);
    expect(['vimConnectionInfo', 'instantiatedVnfInfo', 'metadata'].filter(on({}))).toEqual([]);
    expect(['vimConnectionInfo', 'instantiatedVnfInfo', 'metadata'].filter(on({ fields: 'instantiatedVnfInfo/vnfState', excludeDefault: true }))).toEqual(['instantiatedVnfInfo']);
    expect(['vimConnectionInfo', 'instantiatedVnfInfo', 'metadata'].filter(on({ excludeFields: 'metadata' }))).toEqual(['vimConnectionInfo', 'instantiatedVnfInfo']);
    expect(['vimConnectionInfo', 'instantiatedVnfInfo', 'metadata'].filter(on({ excludeFields: 'metadata/owner' }))).toEqual([
      'vimConnectionInfo',
      'instantiatedVnfInfo',
      'metadata',
    ]);
  });
});

describe.each(STORE_BACKENDS)('vnf-list and op-list -o json/yaml on %s', (backend) => {
  const handle = useStoreBackend(backend);

  async function seeded(): Promise<Store> {
    const store = await handle.open();
    await store.packages.insert(packageRecord());
    await store.instances.insert(web);
    await store.instances.insert(idle);
    await store.opOccs.insert(failed, { vnfPkgId: 'p1', vnfdId: 'vnfd-1', instantiationState: 'NOT_INSTANTIATED' } as never);
    return store;
  }

  async function listed(
    store: Store,
    list: 'vnf' | 'op',
    output: OutputFormat,
    flags: SelectorFlags,
    more: { sort?: string; column?: string[]; limit?: number } = {},
  ): Promise<string> {
    const cap = capture();
    const rules = list === 'vnf' ? VNF_INSTANCE_ATTRIBUTES : LCM_OP_OCC_ATTRIBUTES;
    const opts = { output, ...more, attributes: attributeSelector(flags, rules, output) };
    if (list === 'vnf') await printList(cap.io, opts, vnfListView(), { read: (how) => store.instances.read({}, how) });
    else await printList(cap.io, opts, opListView(), { read: (how) => store.opOccs.read({}, how) });
    return cap.out();
  }

  it('by default prints the simple attributes alone, as JSON.stringify prints them, and reads no complex one', async () => {
    const store = await seeded();
    try {
      const json = await listed(store, 'vnf', 'json', {});
      expect(json).toBe(JSON.stringify([webSimple, idleSimple], null, 2) + '\n');
      expect(await listed(store, 'vnf', 'yaml', {})).toBe(yaml.dump([webSimple, idleSimple], { noRefs: true, lineWidth: -1 }));
      // Sorted (read whole, then selected): the same attributes.
      expect(JSON.parse(await listed(store, 'vnf', 'json', {}, { sort: 'createdAt:desc' }))).toEqual([idleSimple, webSimple]);
      expect(await listed(store, 'op', 'json', {})).toBe(JSON.stringify([failedSimple], null, 2) + '\n');
      expect(yaml.load(await listed(store, 'op', 'yaml', {}))).toEqual([failedSimple]);
      // What the store hands a list that prints no complex attribute.
      const [read] = await collect(store.instances.read({}, { summary: false, attributes: () => false }));
      expect(read!.instantiatedVnfInfo).toBeUndefined();
      expect(read!.vimConnectionInfo).toBeUndefined();
      const [op] = await collect(store.opOccs.read({}, { summary: false, attributes: () => false }));
      expect(op!.journal).toBeUndefined();
      expect(op!.error).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('--all-fields prints each item as vnf-show and op-show print it, secrets masked', async () => {
    const store = await seeded();
    try {
      const all = JSON.parse(await listed(store, 'vnf', 'json', { allFields: true })) as { id: string }[];
      expect(all.map((i) => i.id)).toEqual(['inst-1', 'inst-2']);
      for (const item of all) {
        const shown = capture();
        await printResource(shown.io, { output: 'json' }, vnfInstanceView, await store.instances.get(item.id));
        expect(item).toEqual(JSON.parse(shown.out()));
      }
      expect(JSON.stringify(all)).toContain('"bearer_token":"***"');
      expect(JSON.stringify(all)).not.toContain('gAAAA');
      const [op] = JSON.parse(await listed(store, 'op', 'json', { allFields: true })) as unknown[];
      const shown = capture();
      await printResource(shown.io, { output: 'json' }, opOccView, await store.opOccs.get('op-1'));
      expect(op).toEqual(JSON.parse(shown.out()));
      expect(yaml.load(await listed(store, 'vnf', 'yaml', { allFields: true }))).toEqual(all);
    } finally {
      await store.close();
    }
  });

  it('--fields selects nested attributes; --exclude-fields leaves some out; secrets stay masked', async () => {
    const store = await seeded();
    try {
      const states = JSON.parse(await listed(store, 'vnf', 'json', { fields: 'instantiatedVnfInfo/vnfState', excludeDefault: true }));
      expect(states).toEqual([{ ...webSimple, instantiatedVnfInfo: { vnfState: 'STARTED' } }, idleSimple]);
      expect(yaml.load(await listed(store, 'vnf', 'yaml', { fields: 'instantiatedVnfInfo/vnfState', excludeDefault: true }))).toEqual(states);
      const vims = JSON.parse(await listed(store, 'vnf', 'json', { fields: 'vimConnectionInfo/vim1/accessInfo' }));
      expect(vims[0].vimConnectionInfo).toEqual({ vim1: { accessInfo: { bearer_token: '***' } } });
      const errors = JSON.parse(await listed(store, 'op', 'json', { fields: 'error', excludeDefault: true }));
      expect(errors).toEqual([{ ...failedSimple, error: failed.error }]);
      const noJournal = JSON.parse(await listed(store, 'op', 'json', { excludeFields: 'journal,resourceChanges/affectedVnfcs' }));
      expect(noJournal).toEqual([{ ...failedSimple, operationParams: { flavourId: 'simple' }, error: failed.error, resourceChanges: {} }]);
      // -c without a selector picks from all the attributes, as before.
      expect(JSON.parse(await listed(store, 'vnf', 'json', {}, { column: ['id', 'metadata'], limit: 1 }))).toEqual([
        { id: 'inst-1', metadata: { owner: 'ops', tier: { level: 2 } } },
      ]);
    } finally {
      await store.close();
    }
  });
});

describe('through the CLI', () => {
  const run = async (argv: string[]) => {
    const home = tempHome();
    const out = capture();
    let err = '';
    const stderr = new PassThrough();
    stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await main(argv, { env: { VNFM_HOME: home }, cwd: home, streams: { stdin: new PassThrough(), stdout: out.io.streams.stdout, stderr } });
    return { code, stdout: out.out(), stderr: err };
  };

  it.each([
    [['vnf-list', '-o', 'json', '--all-fields', '--fields', 'metadata'], '--all-fields and --fields cannot be used together'],
    [['op-list', '-o', 'yaml', '--fields', 'error', '--exclude-fields', 'journal'], '--fields and --exclude-fields cannot be used together'],
    [['vnf-list', '-o', 'json', '--exclude-fields', 'metadata', '--exclude-default'], '--exclude-fields and --exclude-default cannot be used together'],
    [['op-list', '--all-fields'], '--all-fields chooses the attributes of -o json and -o yaml, not of -o table'],
  ])('vnfm %j exits 2 and says which options and the fix', async (argv, message) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr).toMatch(/hint: /);
    expect(r.stdout).toBe('');
  });

  it('an empty store lists [] with any selection', async () => {
    for (const argv of [
      ['vnf-list', '-o', 'json'],
      ['vnf-list', '-o', 'json', '--all-fields'],
      ['op-list', '-o', 'json', '--fields', 'error'],
    ]) {
      const r = await run(argv);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('[]\n');
    }
  });
});

describe('shortTime', () => {
  it.each([
    ['2026-01-02T03:04:05.678Z', '2026-01-02 03:04:05'],
    ['2026-01-02T03:04:05Z', '2026-01-02 03:04:05'],
    ['2026-01-02T03:04:05.1Z', '2026-01-02 03:04:05'],
    ['2026-01-02T03:04:05.678+01:00', '2026-01-02 03:04:05.678+01:00'],
    ['', ''],
  ])('%s reads %s in a table', (iso, shown) => {
    expect(shortTime(iso)).toBe(shown);
  });
});
