/**
 * Golden files of every view in every output format: the real command layer
 * over a real store seeded with VIMs, packages, instances and occurrences.
 * uuids are random and normalised (to 0000000N-0000-4000-8000-000000000000,
 * N the record's place in the seed, so tables keep their widths); times are
 * fixed in the seed. Run with UPDATE_GOLDEN=1 to write the files again,
 * then read the diff before committing it.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { VnfPackage } from '../../src/csar/index.js';
import type { LcmOpOcc, VnfInstance } from '../../src/lcm/index.js';
import { openStore } from '../../src/store/index.js';
import type { Vim } from '../../src/vim/index.js';

const GOLDEN = resolve(import.meta.dirname, '../fixtures/golden');
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';

const T0 = '2026-03-01T10:00:00.000Z';
const T1 = '2026-03-01T10:05:00.000Z';
const T2 = '2026-03-02T08:30:00.000Z';

let home = '';
const ids = {
  edge: randomUUID(),
  core: randomUUID(),
  basic: randomUUID(),
  heat: randomUUID(),
  web: randomUUID(),
  db: randomUUID(),
  inline: randomUUID(),
  opInst: randomUUID(),
  opScale: randomUUID(),
  opDb: randomUUID(),
};

function vim(id: string, name: string, type: 'kubernetes' | 'openstack', isDefault: boolean, status: Vim['status']): Vim {
  return {
    id,
    name,
    description: `${type} lab`,
    isDefault,
    spec:
      type === 'kubernetes'
        ? { type, authUrl: 'https://10.0.0.1:6443', projectName: 'default', auth: { method: 'bearer-token' }, verifyTls: true }
        : {
            type,
            authUrl: 'http://10.0.0.2/identity/v3',
            projectName: 'nfv',
            projectDomainName: 'Default',
            auth: { method: 'password', username: 'nfv_user', userDomainName: 'Default' } as Vim['spec']['auth'],
            verifyTls: true,
          },
    secretNames: type === 'kubernetes' ? ['bearerToken'] : ['password'],
    status,
    createdAt: T0,
    updatedAt: T0,
  };
}

function pkg(id: string, name: string | undefined, vnfdId: string, product: string, provider: string, usage: VnfPackage['usageState'], created: string): VnfPackage {
  return {
    id,
    ...(name ? { name } : {}),
    vnfdId,
    vnfProvider: provider,
    vnfProductName: product,
    vnfSoftwareVersion: '1.0',
    vnfdVersion: '1.0',
    onboardingState: 'ONBOARDED',
    operationalState: 'ENABLED',
    usageState: usage,
    userDefinedData: {},
    checksum: { algorithm: 'SHA-256', hash: 'ab'.repeat(32) },
    sizeBytes: 4096,
    summary: { flavours: [], artifacts: [], kubernetesDefinitions: [] } as unknown as VnfPackage['summary'],
    createdAt: created,
    updatedAt: created,
  };
}

function instance(id: string, name: string, p: VnfPackage, more: Partial<VnfInstance>, created: string): VnfInstance {
  return {
    id,
    vnfInstanceName: name,
    vnfInstanceDescription: '',
    vnfdId: p.vnfdId,
    vnfPkgId: p.id,
    vnfProvider: p.vnfProvider,
    vnfProductName: p.vnfProductName,
    vnfSoftwareVersion: p.vnfSoftwareVersion,
    vnfdVersion: p.vnfdVersion,
    instantiationState: 'NOT_INSTANTIATED',
    createdAt: created,
    updatedAt: created,
    ...more,
  };
}

function op(id: string, vnf: string, operation: LcmOpOcc['operation'], state: LcmOpOcc['operationState'], start: string, more: Partial<LcmOpOcc> = {}): LcmOpOcc {
  return {
    id,
    vnfInstanceId: vnf,
    operation,
    operationState: state,
    stateEnteredTime: start,
    startTime: start,
    operationParams: { flavourId: 'simple' } as LcmOpOcc['operationParams'],
    journal: [],
    isAutomaticInvocation: false,
    ...more,
  };
}

beforeAll(async () => {
  home = join(mkdtempSync(join(tmpdir(), 'vnfm-golden-')), 'home');
  const store = openStore(home);
  try {
    await store.vims.insert(vim(ids.edge, 'edge-1', 'kubernetes', true, 'REACHABLE'), undefined);
    await store.vims.insert(vim(ids.core, 'core', 'openstack', false, 'UNREACHABLE'), undefined);
    const basic = pkg(ids.basic, 'basic-cnf', 'b1bb0ce7-ebca-4fa7-95ed-4840d70a1177', 'Sample CNF', 'Company', 'IN_USE', T0);
    const heat = pkg(ids.heat, undefined, 'a0f1c2d3-0000-4000-8000-0000000000aa', 'Heat VNF', 'Other', 'NOT_IN_USE', T1);
    await store.packages.insert(basic);
    await store.packages.insert(heat);
    await store.instances.insert(
      instance(
        ids.web,
        'web',
        basic,
        {
          instantiationState: 'INSTANTIATED',
          vimId: ids.edge,
          instantiatedVnfInfo: {
            flavourId: 'simple',
            instantiationLevelId: 'instantiation_level_1',
            vnfState: 'STARTED',
            scaleStatus: [{ aspectId: 'vdu1_aspect', scaleLevel: 1 }],
            maxScaleLevels: [{ aspectId: 'vdu1_aspect', scaleLevel: 2 }],
            vnfcResourceInfo: [
              {
                id: 'vdu1-5d8f7-abcde',
                vduId: 'VDU1',
                computeResource: { resourceId: 'vdu1-5d8f7-abcde', vimLevelResourceType: 'Deployment' },
                metadata: { owner: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'vdu1', namespace: 'default' } },
              },
            ],
            vnfcInfo: [{ id: 'VDU1-vdu1-5d8f7-abcde', vduId: 'VDU1', vnfcResourceInfoId: 'vdu1-5d8f7-abcde', vnfcState: 'STARTED' }],
            resources: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'vdu1', namespace: 'default' }],
            metadata: { namespace: 'default', 'lcm-kubernetes-def-files': ['Files/kubernetes/deployment.yaml'], vduReplicas: { VDU1: 1 } },
          },
        },
        T0,
      ),
    );
    await store.instances.insert(instance(ids.db, 'db', basic, {}, T1));
    await store.instances.insert(
      instance(ids.inline, 'edge-cache', basic, { vimConnectionInfo: { vim1: { vimId: 'lab-inline', vimType: 'kubernetes' } } as VnfInstance['vimConnectionInfo'] }, T2),
    );
    const prior = { vnfPkgId: basic.id, vnfdId: basic.vnfdId, instantiationState: 'NOT_INSTANTIATED' as const };
    await store.opOccs.insert(op(ids.opInst, ids.web, 'INSTANTIATE', 'COMPLETED', T0, { stateEnteredTime: T1 }), prior);
    await store.opOccs.insert(
      op(ids.opScale, ids.web, 'SCALE', 'FAILED_TEMP', T2, {
        operationParams: { type: 'SCALE_OUT', aspectId: 'vdu1_aspect' } as LcmOpOcc['operationParams'],
        error: { status: 422, title: 'Readiness timeout', detail: 'Deployment/vdu1 not ready after 300s' },
      }),
      prior,
    );
    await store.opOccs.insert(op(ids.opDb, ids.db, 'INSTANTIATE', 'ROLLED_BACK', T1), prior);
  } finally {
    await store.close();
  }
});

function stream() {
  const s = new PassThrough();
  let text = '';
  s.on('data', (d: Buffer) => (text += d.toString()));
  return { s, text: () => text };
}

async function run(argv: string[]) {
  const [stdin, stdout, stderr] = [stream(), stream(), stream()];
  const code = await main(argv, { env: { VNFM_HOME: home }, cwd: home, streams: { stdin: stdin.s, stdout: stdout.s, stderr: stderr.s } });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** The seeded uuids are random: each becomes 0000000N-0000-4000-8000-000000000000 (N its place in the seed), and its 8-character start 0000000N. */
function normalise(text: string): string {
  const seeded: string[] = Object.values(ids);
  const mapped = (uuid: string) => `${String(seeded.indexOf(uuid) + 1).padStart(8, '0')}-0000-4000-8000-000000000000`;
  let out = text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (u) => (seeded.includes(u) ? mapped(u) : u));
  for (const u of seeded) out = out.replace(new RegExp(`\\b${u.slice(0, 8)}\\b`, 'g'), () => mapped(u).slice(0, 8));
  return out;
}

function golden(name: string, actual: string): void {
  const file = join(GOLDEN, name);
  if (UPDATE || !existsSync(file)) {
    if (!UPDATE) throw new Error(`${file} is missing: run with UPDATE_GOLDEN=1 to write it`);
    mkdirSync(GOLDEN, { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  expect(actual, `${name} differs from its golden file (UPDATE_GOLDEN=1 to accept)`).toBe(readFileSync(file, 'utf8'));
}

const FORMATS = ['table', 'wide', 'json', 'yaml', 'value', 'name'];
const VIEWS: [string, string[]][] = [
  ['vim-list', ['vim-list']],
  ['vim-show', ['vim-show', 'edge-1']],
  ['vnfpkg-list', ['vnfpkg-list']],
  ['vnfpkg-show', ['vnfpkg-show', 'basic-cnf']],
  ['vnf-list', ['vnf-list']],
  ['vnf-show', ['vnf-show', 'web']],
  ['op-list', ['op-list']],
];

describe('golden output of every view', () => {
  for (const [name, argv] of VIEWS) {
    it.each(FORMATS)(`${name} -o %s`, async (format) => {
      const r = await run([...argv, '-o', format]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      golden(`${name}.${format}.txt`, normalise(r.stdout));
    });
  }

  // The lists' whole items (SOL013 --all-fields): what -o json and -o yaml printed before they left out the complex attributes.
  it.each([
    ['vnf-list', 'json'],
    ['vnf-list', 'yaml'],
    ['op-list', 'json'],
    ['op-list', 'yaml'],
  ])('%s --all-fields -o %s', async (list, format) => {
    const r = await run([list, '--all-fields', '-o', format]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    golden(`${list}-all-fields.${format}.txt`, normalise(r.stdout));
  });

  it('op-show in every format', async () => {
    for (const format of FORMATS) {
      const r = await run(['op-show', ids.opScale, '-o', format]);
      expect(r.code).toBe(0);
      golden(`op-show.${format}.txt`, normalise(r.stdout));
    }
  });
});

describe('output for scripts', () => {
  const lines = (s: string) => s.trimEnd().split('\n');

  it('-q prints what -o name prints; --no-headers drops the header line only', async () => {
    const q = await run(['vnf-list', '-q']);
    expect(q.stdout).toBe((await run(['vnf-list', '-o', 'name'])).stdout);
    expect(lines(q.stdout)).toEqual([ids.web, ids.db, ids.inline]);
    const table = await run(['vnf-list']);
    const bare = await run(['vnf-list', '--no-headers']);
    expect(lines(bare.stdout)).toEqual(lines(table.stdout).slice(1));
    expect(bare.stdout).not.toMatch(/^ID/);
    expect((await run(['sample-list', '-q'])).stdout).toMatch(/^basic-cnf$/m);
  });

  it('-o value prints the chosen columns, whole ids, one record a line', async () => {
    expect((await run(['vnf-list', '-o', 'value', '-c', 'id', '-c', 'name'])).stdout).toBe(`${ids.web} web\n${ids.db} db\n${ids.inline} edge-cache\n`);
    expect((await run(['vnf-show', 'web', '-o', 'value', '-c', 'instantiationState'])).stdout).toBe('INSTANTIATED\n');
    expect((await run(['vnf-list', '-o', 'value', '-c', 'name', '-c', 'vnfProvider', '--limit', '1'])).stdout).toBe('web Company\n');
    expect((await run(['vnf-list', '-c', 'name', '-c', 'vnfdVersion', '--limit', '1'])).stdout).toBe('NAME   VNFDVERSION\nweb    1.0\n');
    const unknown = await run(['vnf-list', '-c', 'colour']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown column "colour"\nhint: choose from: id, vnfInstanceName, .*vnfProvider/);
    expect((await run(['op-show', ids.opScale, '-o', 'value', '-c', 'operationState'])).stdout).toBe('FAILED_TEMP\n');
  });

  it('-o jsonpath= reads one field, ranges and filters, on lists and shows', async () => {
    const jp = async (argv: string[], template: string) => (await run([...argv, '-o', `jsonpath=${template}`])).stdout;
    expect(await jp(['vnf-list'], '{.items[*].vnfInstanceName}')).toBe('web db edge-cache\n');
    expect(await jp(['vnf-list'], '{range .items[?(@.instantiationState=="INSTANTIATED")]}{.id}{"\\n"}{end}')).toBe(`${ids.web}\n`);
    expect(await jp(['vnf-list'], '{.items[0:2].vnfInstanceName}')).toBe('web db\n');
    expect(await jp(['vnf-list'], '{.items[-1:].vnfInstanceName}')).toBe('edge-cache\n');
    expect(await jp(['vnf-show', 'web'], '{.instantiatedVnfInfo.vnfcInfo[0].id}')).toBe('VDU1-vdu1-5d8f7-abcde\n');
    expect(await jp(['vim-show', 'edge-1'], 'type={.type} default={.is_default}')).toBe('type=kubernetes default=true\n');
    expect(await jp(['op-list'], '{.items[?(@.error.status>=400)].operation}')).toBe('SCALE\n');
    const bad = await run(['vnf-list', '-o', 'jsonpath={range .items[*]}{.id}']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/jsonpath: \{range\} without \{end\}/);
    expect((await run(['vnf-list', '-o', 'xml'])).code).toBe(2);
  });

  it('an instance, a VIM and a package are found by the 8-character id the tables print', async () => {
    expect((await run(['vnf-show', ids.web.slice(0, 8), '-q'])).stdout).toBe(`${ids.web}\n`);
    expect((await run(['vim-show', ids.core.slice(0, 8), '-q'])).stdout).toBe(`${ids.core}\n`);
    expect((await run(['vnfpkg-show', ids.heat.slice(0, 8), '-q'])).stdout).toBe(`${ids.heat}\n`);
    expect((await run(['vnf-show', ids.web.slice(0, 7)])).code).toBe(3);
  });
});

describe('filters and order', () => {
  const names = async (argv: string[]) => (await run([...argv, '-o', 'jsonpath={.items[*].vnfInstanceName}'])).stdout.trim();
  const q = async (argv: string[]) => (await run([...argv, '-q'])).stdout.trim().split('\n').filter(Boolean);

  it.each([
    [['--state', 'INSTANTIATED'], 'web'],
    [['--state', 'NOT_INSTANTIATED'], 'db edge-cache'],
    [['--vim', 'edge-1'], 'web'],
    [['--vim', ids.edge], 'web'],
    [['--vim', 'lab-inline'], 'edge-cache'],
    [['--package', 'basic-cnf'], 'web db edge-cache'],
    [['--package', ids.heat], ''],
    [['--name', 'edge*'], 'edge-cache'],
    [['--name', 'db'], 'db'],
    [['--sort', 'createdAt:desc', '--limit', '2'], 'edge-cache db'],
    [['--sort', 'vnfInstanceName'], 'db edge-cache web'],
    [['--filter', '(eq,vnfInstanceName,web)'], 'web'],
    [['--filter', '(neq,vnfInstanceName,web);(cont,vnfInstanceName,e)'], 'edge-cache'],
    [['--filter', '(in,vnfInstanceName,db,web)'], 'web db'],
    [['--filter', '(nin,vnfInstanceName,db,web)'], 'edge-cache'],
    [['--filter', '(eq,instantiatedVnfInfo/flavourId,simple)'], 'web'],
    [['--filter', '(eq,vimConnectionInfo/vim1/vimId,lab-inline)'], 'edge-cache'],
    [['--filter', "(gte,createdAt,'2026-03-01T10:05:00.000Z')"], 'db edge-cache'],
    [['--filter', '(eq,instantiatedVnfInfo/scaleStatus/scaleLevel,1)'], 'web'],
  ])('vnf-list %j: %s', async (flags, expected) => {
    expect(await names(['vnf-list', ...flags])).toBe(expected);
  });

  it('an empty filtered table says nothing matched, not how to create the first one', async () => {
    for (const argv of [
      ['vnf-list', '--name', 'nope'],
      ['vnf-list', '--filter', '(eq,id,x)'],
      ['op-list', '--operation', 'HEAL'],
      ['vim-list', '--limit', '1', '--filter', '(eq,name,x)'],
    ]) {
      const r = await run(argv);
      expect(r).toMatchObject({ code: 0, stdout: '', stderr: 'Nothing matches the filters given.\n' });
    }
    expect((await run(['vnf-list', '--name', 'nope', '-o', 'json'])).stdout).toBe('[]\n');
  });

  it('op-list narrows by operation, state, instance and time', async () => {
    expect(await q(['op-list', '--operation', 'SCALE'])).toEqual([ids.opScale]);
    expect(await q(['op-list', '--state', 'ROLLED_BACK'])).toEqual([ids.opDb]);
    expect(await q(['op-list', '--vnf', 'web'])).toEqual([ids.opInst, ids.opScale]);
    expect(await q(['op-list', '--since', '2026-03-01T10:05:00Z'])).toEqual([ids.opDb, ids.opScale]);
    expect(await q(['op-list', '--until', '2026-03-01 10:05'])).toEqual([ids.opInst]);
    expect(await q(['op-list', '--since', '1h'])).toEqual([]);
    expect(await q(['op-list', '--sort', 'startTime:desc', '--limit', '1'])).toEqual([ids.opScale]);
    const bad = await run(['op-list', '--since', 'yesterday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--since "yesterday" is neither a time nor a duration/);
  });

  it('vnfpkg-list and vim-list narrow by their own fields', async () => {
    expect(await q(['vnfpkg-list', '--state', 'NOT_IN_USE'])).toEqual([ids.heat]);
    expect(await q(['vnfpkg-list', '--state', 'ENABLED'])).toEqual([ids.basic, ids.heat]);
    expect(await q(['vnfpkg-list', '--vnfd-id', 'b1bb0ce7-ebca-4fa7-95ed-4840d70a1177'])).toEqual([ids.basic]);
    expect(await q(['vnfpkg-list', '--provider', 'Other'])).toEqual([ids.heat]);
    expect(await q(['vim-list', '--type', 'openstack'])).toEqual([ids.core]);
    expect(await q(['vim-list', '--filter', '(eq,is_default,true)'])).toEqual([ids.edge]);
  });

  it('filters run in SQL in the store', async () => {
    const store = openStore(home);
    try {
      expect((await store.instances.list({ state: 'INSTANTIATED' })).map((i) => i.id)).toEqual([ids.web]);
      expect((await store.instances.list({ vimId: 'lab-inline' })).map((i) => i.id)).toEqual([ids.inline]);
      expect((await store.instances.list({ name: 'e*' })).map((i) => i.id)).toEqual([ids.inline]);
      expect((await store.opOccs.list({ operation: 'SCALE', since: T1 })).map((o) => o.id)).toEqual([ids.opScale]);
      expect((await store.packages.list({ usageState: 'IN_USE' })).map((p) => p.id)).toEqual([ids.basic]);
      expect((await store.vims.list({ type: 'kubernetes' })).map((v) => v.id)).toEqual([ids.edge]);
      const plan = async (sql: string) => JSON.stringify(await store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all('x'));
      expect(await plan('SELECT * FROM vnf_instances WHERE instantiation_state = ? ORDER BY created_at, id')).toContain('vnf_instances_state');
      expect(await plan('SELECT * FROM vnf_instances WHERE name = ?')).toContain('vnf_instances_name');
      expect(await plan('SELECT * FROM lcm_op_occs WHERE start_time >= ? ORDER BY start_time, rowid')).toContain('lcm_op_occs_start');
    } finally {
      await store.close();
    }
  });

  it.each([
    [['vnf-list', '--filter', '(like,vnfInstanceName,web)'], /unknown operator "like"/],
    [['vnf-list', '--filter', '(eq,vnfInstanceName,a,b)'], /"eq" takes one value/],
    [['vnf-list', '--filter', '(eq,vnfInstanceName,web)(eq,id,x)'], /expected ";"/],
    [['vnf-list', '--filter', 'vnfInstanceName=web'], /expected "\(OP,ATTRIBUTE/],
    [['vnf-list', '--sort', 'colour'], /--sort: unknown key "colour"/],
    [['vnf-list', '--sort', 'name:up'], /not KEY, KEY:asc or KEY:desc/],
    [['vnf-list', '--limit', '0'], /whole number/],
    [['vnf-list', '--state', 'RUNNING'], /Allowed choices/],
  ])('%j exits 2 naming the problem', async (argv, message) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });
});
