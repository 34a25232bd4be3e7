/**
 * Hostile names through the real command layer (in-process main(), argv in,
 * exit code and stderr out): every path that sets a name applies the same
 * rules (model/names.ts) and the same uniqueness, and refuses with the same
 * exit codes — a name that breaks the rules exit 2 naming it, one another
 * record holds exit 4 — nothing changed either way.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { hasUnprintable, nameProblem } from '../../src/model/names.js';
import { SHELL_HOSTILE_NAMES, UNPRINTABLE_NAMES } from '../support/hostile-names.js';

const tmp = mkdtempSync(join(tmpdir(), 'vnfm-hostile-names-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf/package');
const KUBE = 'auth_url: https://127.0.0.1:6443\ntype: kubernetes\nproject_name: default\nbearer_token: t\n';
const home = join(tmp, 'home');

async function run(argv: string[]) {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (d: Buffer) => (stdout += d.toString()));
  err.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await main(argv, { env: { VNFM_HOME: home, HOME: tmp }, cwd: tmp, streams: { stdin: new PassThrough(), stdout: out, stderr: err } });
  return { code, stdout, stderr };
}

async function ok(argv: string[]): Promise<string> {
  const r = await run(argv);
  expect(r.code, `vnfm ${argv.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

function file(name: string, content: string): string {
  const path = join(tmp, name);
  writeFileSync(path, content);
  return path;
}

/** What the store holds, to show a refusal changed nothing. */
async function snapshot(): Promise<string> {
  return [await ok(['vim-list', '-o', 'json']), await ok(['vnfpkg-list', '-o', 'json']), await ok(['vnf-list', '-o', 'json']), await ok(['op-list', '-o', 'json'])].join('\n');
}

/** Lone surrogates, over-long and blank-edged names: broken text rather than characters. */
const BROKEN_NAMES = ['zz\ud800', '\udc00zz', ' lead', 'trail ', '', 'v'.repeat(256)];

/** Names no instance or package may take (letters, digits, ".", "_", "-"; at most 128; a letter or digit first), and no VIM (printable). */
const INSTANCE_REFUSED = [...SHELL_HOSTILE_NAMES, ...UNPRINTABLE_NAMES, ...BROKEN_NAMES, '-web', '.web', 'w'.repeat(129)];
const VIM_REFUSED = [...UNPRINTABLE_NAMES, ...BROKEN_NAMES];

interface Refusal {
  name: string;
  argv: () => string[];
  code: 2 | 4;
  says: RegExp;
}

const cases: Refusal[] = [
  ...INSTANCE_REFUSED.map((n): Refusal => ({
    name: `vnf-create --name ${JSON.stringify(n)}`,
    argv: () => ['vnf-create', '--package', 'basic-cnf', `--name=${n}`],
    code: 2,
    says: /is not a usable instance name/,
  })),
  ...INSTANCE_REFUSED.map((n): Refusal => ({
    name: `vnf-update {"vnfInstanceName": ${JSON.stringify(n)}}`,
    argv: () => ['vnf-update', 'web', file('rename.json', JSON.stringify({ vnfInstanceName: n }))],
    code: 2,
    says: /rename\.json: vnfInstanceName: .* is not a usable instance name/s,
  })),
  ...INSTANCE_REFUSED.map((n): Refusal => ({
    name: `vnfpkg-onboard --name ${JSON.stringify(n)}`,
    argv: () => ['vnfpkg-onboard', SAMPLE, `--name=${n}`],
    code: 2,
    says: /is not a usable package name/,
  })),
  ...VIM_REFUSED.map((n): Refusal => ({
    name: `vim-register ${JSON.stringify(n)}`,
    argv: () => ['vim-register', '--no-check', '--config-file', file('k8s.yaml', KUBE), '--', n],
    code: 2,
    says: /is not a usable VIM name/,
  })),
  ...VIM_REFUSED.map((n): Refusal => ({
    name: `vim-update --name ${JSON.stringify(n)}`,
    argv: () => ['vim-update', 'edge', `--name=${n}`],
    code: 2,
    says: /is not a usable VIM name/,
  })),
  // Names taken: by another instance, by its id, by another package or VIM.
  {
    name: 'vnf-create --name of an existing instance',
    argv: () => ['vnf-create', '--package', 'basic-cnf', '--name', 'web'],
    code: 4,
    says: /a VNF instance named "web" already exists/,
  },
  {
    name: 'vnf-update to the name of another instance',
    argv: () => ['vnf-update', 'web', file('taken.json', '{"vnfInstanceName": "db"}')],
    code: 4,
    says: /a VNF instance named "db" already exists/,
  },
  {
    name: 'vnf-update to the id of another instance',
    argv: () => ['vnf-update', 'web', file('id.json', JSON.stringify({ vnfInstanceName: dbId }))],
    code: 4,
    says: /is the id of another VNF instance/,
  },
  {
    name: 'vnfpkg-onboard --name of an existing package',
    argv: () => ['vnfpkg-onboard', SAMPLE, '--name', 'basic-cnf'],
    code: 4,
    says: /a package named "basic-cnf" already exists/,
  },
  { name: 'vim-update --name of another VIM', argv: () => ['vim-update', 'edge', '--name', 'core'], code: 4, says: /vim "core" already exists/ },
];

let dbId = '';

beforeAll(async () => {
  await ok(['vim-register', '--no-check', '--config-file', file('k8s.yaml', KUBE), 'edge']);
  await ok(['vim-register', '--no-check', '--config-file', file('k8s.yaml', KUBE), 'core']);
  await ok(['vnfpkg-onboard', SAMPLE, '--name', 'basic-cnf']);
  await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'web']);
  dbId = (JSON.parse(await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'db', '-o', 'json'])) as { id: string }).id;
}, 60_000);

describe('hostile names through the command line', () => {
  it(`${cases.length} cases: each refused with its exit code and a message naming the problem, nothing changed`, async () => {
    const before = await snapshot();
    const tally = { 2: 0, 4: 0 };
    for (const c of cases) {
      const r = await run(c.argv());
      expect(r.code, `${c.name}: ${r.stderr}`).toBe(c.code);
      expect(r.stderr, c.name).toMatch(c.says);
      tally[c.code]++;
    }
    expect(await snapshot()).toBe(before);
    // The figures of the corpus: every case refused, none crashed.
    expect(tally).toEqual({ 2: cases.length - 5, 4: 5 });
  }, 300_000);

  it('keeps what the rules allow: an instance renamed within them, a VIM named in any printable text', async () => {
    await ok(['vnf-update', 'web', file('ok.json', '{"vnfInstanceName": "web.2_b-c"}')]);
    expect(JSON.parse(await ok(['vnf-show', 'web.2_b-c', '-o', 'json']))).toMatchObject({ vnfInstanceName: 'web.2_b-c' });
    await ok(['vnf-update', 'web.2_b-c', file('back.json', '{"vnfInstanceName": "web"}')]);
    for (const name of SHELL_HOSTILE_NAMES.filter((n) => n.trim() === n)) {
      await ok(['vim-update', 'edge', `--name=${name}`]);
      expect(JSON.parse(await ok(['vim-show', '-o', 'json', '--', name]))).toMatchObject({ name });
      await ok(['vim-update', '--name=edge', '--', name]);
    }
  }, 120_000);
});

describe('the name rules', () => {
  it.each([
    ['instance', 'web-1.a_b', true],
    ['instance', 'w'.repeat(128), true],
    ['package', '1st', true],
    ['vim', 'edge site 1 (Tōkyō) $x', true],
    ['vim', 'v'.repeat(255), true],
    ['instance', 'web 1', false],
    ['instance', '_web', false],
    ['package', 'pkg/1', false],
    ['vim', 'edge\u0085', false],
    ['vim', 'edge\u202e', false],
    ['vim', 'edge\u2069', false],
    ['vim', 'edge\u200f', false],
    ['vim', 'edge\u2029', false],
    ['vim', '\u00a0edge', false],
  ] as const)('%s %j: %s', (kind, name, usable) => {
    expect(nameProblem(kind, name) === undefined).toBe(usable);
  });

  it('no unprintable name is usable for anything', () => {
    for (const name of [...UNPRINTABLE_NAMES, ...BROKEN_NAMES.slice(0, 2)]) {
      expect(hasUnprintable(name), JSON.stringify(name)).toBe(true);
      for (const kind of ['vim', 'package', 'instance'] as const) expect(nameProblem(kind, name), `${kind} ${JSON.stringify(name)}`).toBeDefined();
    }
  });
});
