/**
 * One exit code per failure class, on every command that can hit it
 * (README, "Exit codes"): the real program, table by table. Ctrl-C at a
 * question (130) is in prompt.test.ts, a VIM that does not answer (6) in
 * vim-health.test.ts.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, writeSandboxConfigs, type Sandbox } from '@vnfm/kube-sandbox';
import { openStore } from '../../src/store/index.js';
import { newHome, vnfm, type RunResult, okWith } from '../support/cli.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SAMPLE = join(ROOT, 'csar-samples/basic-cnf');
const REQ = (name: string) => join(SAMPLE, 'requests', name);
const GHOST = '00000000-0000-4000-8000-00000000dead';

let sandbox: Sandbox;
let home: string;
let dir: string;
let vimConfig: string;
let vimUpdate: string;
let ids: { running: string; idle: string; locked: string; completedOp: string; pkg: string };

const run = (args: string[], env?: Record<string, string>): Promise<RunResult> => vnfm(args, { home, cwd: ROOT, ...(env ? { env } : {}) });
const ok = okWith((args) => run(args));
const idOf = (r: RunResult) => (JSON.parse(r.stdout) as { id: string }).id;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vnfm-exit-codes-'));
  home = newHome();
  sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
  vimConfig = join(dir, 'vim-config.yaml');
  writeSandboxConfigs(sandbox, { vimConfigPath: vimConfig, kubeconfigPath: join(dir, 'kubeconfig') });
  vimUpdate = join(dir, 'update-vim.json');
  writeFileSync(vimUpdate, JSON.stringify({ vimConnectionInfo: { vim1: { vimId: 'vim-sandbox', vimType: 'kubernetes' } } }));
  await ok(['vim-register', '--config-file', vimConfig, 'vim-sandbox']);
  const pkg = idOf(await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf', '-o', 'json']));
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package-v2'), '--name', 'basic-cnf-v2']);
  const running = idOf(await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'running', '-o', 'json']));
  const completedOp = idOf(await ok(['vnf-instantiate', 'running', '--request-file', REQ('instantiate.json'), '-o', 'json']));
  const idle = idOf(await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'idle', '-o', 'json']));
  const locked = idOf(await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'locked', '-o', 'json']));
  // What a vnfm on another host leaves while it runs an operation: a PROCESSING occurrence under its lock.
  const store = openStore(home);
  try {
    const since = '2026-03-01T10:00:00.000Z';
    const opId = 'f00dfeed-0000-4000-8000-000000000002';
    const inst = await store.instances.get(locked);
    await store.opOccs.insert(
      {
        id: opId,
        vnfInstanceId: locked,
        operation: 'INSTANTIATE',
        operationState: 'PROCESSING',
        stateEnteredTime: since,
        startTime: since,
        operationParams: {},
        journal: [],
        isAutomaticInvocation: false,
        pid: 4242,
      },
      { vnfPkgId: inst.vnfPkgId, vnfdId: inst.vnfdId, instantiationState: 'NOT_INSTANTIATED' },
    );
    await store.opOccs.takeLock({ vnfInstanceId: locked, opId, pid: 4242, acquiredAt: since, hostName: 'far-away', hostId: 'another-machine', bootId: 'b', startTime: '1' });
  } finally {
    await store.close();
  }
  ids = { running, idle, locked, completedOp, pkg };
}, 120_000);

afterAll(async () => {
  await sandbox?.close();
});

type Case = [what: string, args: () => string[]];

async function expectCode(code: number, cases: Case[], stderr?: RegExp): Promise<void> {
  const wrong: string[] = [];
  for (const [what, args] of cases) {
    const r = await run(args());
    if (r.code !== code || (stderr && !stderr.test(r.stderr)) || /unexpected failure/.test(r.stderr)) {
      wrong.push(`${what} (vnfm ${args().join(' ')}): exit ${r.code}: ${r.stderr.trim()}`);
    }
  }
  expect(wrong).toEqual([]);
}

describe('exit codes, command by command', () => {
  it('2: an unknown flag, on every command', async () => {
    const help = (await ok(['--help'])).stdout;
    const commands = [...help.slice(help.indexOf('Commands:')).matchAll(/^ {2}([a-z][a-z-]+)/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
    expect(commands.length).toBeGreaterThan(35);
    await expectCode(
      2,
      commands.map((c): Case => [c, () => [c, '--no-such-flag']]),
      /unknown option '--no-such-flag'|required option/,
    );
  }, 120_000);

  it('3: a VIM, package, instance or occurrence that does not exist', async () => {
    await expectCode(
      3,
      [
        ['vim-show', () => ['vim-show', 'nowhere']],
        ['vim-check', () => ['vim-check', 'nowhere']],
        ['vim-update', () => ['vim-update', 'nowhere', '--description', 'x']],
        ['vim-delete', () => ['vim-delete', '--yes', 'nowhere']],
        ['vnfpkg-show', () => ['vnfpkg-show', 'nowhere']],
        ['vnfpkg-update', () => ['vnfpkg-update', 'nowhere', '--operational-state', 'DISABLED']],
        ['vnfpkg-delete', () => ['vnfpkg-delete', '--yes', 'nowhere']],
        ['vnfpkg-download', () => ['vnfpkg-download', 'nowhere', '-o', join(dir, 'p.zip')]],
        ['vnfpkg-vnfd', () => ['vnfpkg-vnfd', 'nowhere']],
        ['vnf-create', () => ['vnf-create', GHOST]],
        ['vnf-show', () => ['vnf-show', 'nowhere']],
        ['vnf-instantiate', () => ['vnf-instantiate', 'nowhere', '--request-file', REQ('instantiate.json')]],
        ['vnf-scale', () => ['vnf-scale', 'nowhere', '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']],
        ['vnf-heal', () => ['vnf-heal', 'nowhere']],
        ['vnf-change-package', () => ['vnf-change-package', 'nowhere', REQ('change-package.json')]],
        ['vnf-terminate', () => ['vnf-terminate', '--yes', 'nowhere']],
        ['vnf-delete', () => ['vnf-delete', '--yes', 'nowhere']],
        ['vnf-kubeconfig', () => ['vnf-kubeconfig', 'nowhere']],
        ['vnf-logs', () => ['vnf-logs', 'nowhere']],
        ['op-show', () => ['op-show', GHOST]],
        ['op-log', () => ['op-log', GHOST]],
        ['op-retry', () => ['op-retry', GHOST]],
        ['op-rollback', () => ['op-rollback', GHOST]],
        ['op-fail', () => ['op-fail', GHOST]],
      ],
      /not found|no .* (is|was) found|does not exist|unknown/i,
    );
  });

  it('4: a state conflict — a name taken, a package in use, instantiate twice, an operation on a NOT_INSTANTIATED instance, an occurrence not FAILED_TEMP, a locked instance', async () => {
    await expectCode(4, [
      ['vim-register, a name taken', () => ['vim-register', '--no-check', '--config-file', vimConfig, 'vim-sandbox']],
      ['vim-delete, a VIM in use', () => ['vim-delete', '--yes', 'vim-sandbox']],
      ['vnfpkg-onboard, a vnfdId taken', () => ['vnfpkg-onboard', join(SAMPLE, 'package')]],
      ['vnfpkg-delete, a package in use', () => ['vnfpkg-delete', '--yes', ids.pkg]],
      ['vnf-instantiate, twice', () => ['vnf-instantiate', 'running', '--request-file', REQ('instantiate.json')]],
      ['vnf-delete, an INSTANTIATED instance', () => ['vnf-delete', '--yes', 'running']],
      ['vnf-scale, NOT_INSTANTIATED', () => ['vnf-scale', 'idle', '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']],
      ['vnf-heal, NOT_INSTANTIATED', () => ['vnf-heal', 'idle']],
      ['vnf-change-package, NOT_INSTANTIATED', () => ['vnf-change-package', 'idle', REQ('change-package.json')]],
      ['vnf-terminate, NOT_INSTANTIATED', () => ['vnf-terminate', '--yes', 'idle']],
      ['vnf-change-ext-conn, NOT_INSTANTIATED', () => ['vnf-change-ext-conn', 'idle', REQ('heal.json')]],
      ['vnf-update of vimConnectionInfo, NOT_INSTANTIATED', () => ['vnf-update', 'idle', vimUpdate]],
      ['op-retry, a COMPLETED occurrence', () => ['op-retry', ids.completedOp]],
      ['op-rollback, a COMPLETED occurrence', () => ['op-rollback', ids.completedOp]],
      ['op-fail, a COMPLETED occurrence', () => ['op-fail', ids.completedOp]],
      ['vnf-instantiate, a locked instance', () => ['vnf-instantiate', 'locked', '--request-file', REQ('instantiate.json')]],
      ['vnf-delete, a locked instance', () => ['vnf-delete', '--yes', 'locked']],
    ]);
  });

  it('5: a master key that is malformed, on every command that opens a secret', async () => {
    const bad = { VNFM_MASTER_KEY: 'not-a-key' };
    const cases: [string, string[]][] = [
      ['vim-register', ['vim-register', '--no-check', '--config-file', vimConfig, 'another']],
      ['vim-check', ['vim-check', 'vim-sandbox']],
      ['vnf-scale', ['vnf-scale', 'running', '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']],
      ['vnf-heal', ['vnf-heal', 'running']],
      ['vnf-terminate', ['vnf-terminate', '--yes', 'running']],
      ['vnf-instantiate', ['vnf-instantiate', 'idle', '--request-file', REQ('instantiate.json')]],
      ['vnf-kubeconfig', ['vnf-kubeconfig', 'running']],
      ['vnf-list', ['vnf-list']],
    ];
    const wrong: string[] = [];
    for (const [what, args] of cases) {
      const r = await run(args, bad);
      if (r.code !== 5) wrong.push(`${what}: exit ${r.code}: ${r.stderr.trim()}`);
    }
    expect(wrong).toEqual([]);
    // Nothing was recorded by the refused scale.
    expect((JSON.parse((await ok(['op-list', '--vnf', 'running', '-o', 'json'])).stdout) as unknown[]).length).toBe(1);
  }, 120_000);

  it('2: a request file that is not valid, nothing recorded', async () => {
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"flavourId": ');
    await expectCode(2, [
      ['vnf-instantiate', () => ['vnf-instantiate', 'idle', '--request-file', broken]],
      ['vnf-change-package', () => ['vnf-change-package', 'running', broken]],
      ['vnf-update', () => ['vnf-update', 'running', broken]],
      ['vnf-scale, a bad --type', () => ['vnf-scale', 'running', '--type', 'SIDEWAYS', '--aspect-id', 'vdu1_aspect']],
    ]);
    expect((JSON.parse((await ok(['op-list', '--vnf', 'idle', '-o', 'json'])).stdout) as unknown[]).length).toBe(0);
  });
});
