/** The main job: `vnfm demo` runs the basic CNF through its whole life on an in-process sandbox. */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, newHome, vnfm } from '../support/cli.js';

/** vnfm on a pseudo-terminal (`script`) of `cols` columns; what its stdout and stderr wrote, as the terminal got it. */
function onPty(args: string[], home: string, cols: number): Promise<{ code: number | null; raw: string }> {
  return new Promise((resolvePromise, reject) => {
    const cmd = `stty cols ${cols} rows 40; exec ${[process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ')}`;
    const child = spawn('script', ['-qec', cmd, '/dev/null'], {
      env: { PATH: process.env['PATH'], HOME: home.replace(/\/home$/, ''), VNFM_HOME: home, TERM: 'xterm', NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let raw = '';
    child.stdout.on('data', (d: Buffer) => (raw += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, raw }));
  });
}

describe('vnfm demo', () => {
  it('onboards, creates, instantiates, scales out, heals, scales in, changes package, terminates and deletes', async () => {
    const home = newHome();
    const r = await vnfm(['demo', '-o', 'json'], { home });
    expect(r.code, r.stderr).toBe(0);
    const steps = JSON.parse(r.stdout) as { step: string; result: string }[];
    expect(steps.map((s) => s.step.replace(/ \(.*\)$/, ''))).toEqual([
      'onboard the packages',
      'create the VNF instance',
      'instantiate',
      'scale out vdu1_aspect',
      'heal one VNFC',
      'scale in vdu1_aspect',
      'change to package v2',
      'terminate',
      'delete the VNF instance',
    ]);
    expect(steps.map((s) => s.result)).toEqual([
      expect.stringMatching(/^vnfdIds /),
      expect.stringMatching(/NOT_INSTANTIATED/),
      'INSTANTIATE COMPLETED, 2 VNFCs',
      'SCALE COMPLETED, 3 VNFCs',
      'HEAL COMPLETED, 3 VNFCs',
      'SCALE COMPLETED, 2 VNFCs',
      'CHANGE_VNFPKG COMPLETED, 2 VNFCs',
      'TERMINATE COMPLETED',
      expect.stringMatching(/deleted$/),
    ]);
    // The demo works in a temporary VNFM_HOME: the user's own store is untouched.
    expect((await vnfm(['vnf-list', '-o', 'json'], { home })).stdout.trim()).toBe('[]');
    expect((await vnfm(['vim-list', '-o', 'json'], { home })).stdout.trim()).toBe('[]');
  });
});

describe('vnfm demo on a terminal', () => {
  it('its summary table fits the terminal: ids shortened, a long result cut', async () => {
    const home = newHome();
    const r = await onPty(['demo'], home, 80);
    expect(r.code, r.raw).toBe(0);
    const lines = r.raw.split(/\r?\n/).map((l) => l.replace(/\r/g, ''));
    const table = lines.slice(lines.findIndex((l) => /^STEP +RESULT +SECONDS$/.test(l.trimEnd())));
    const rows = table.filter((l) => l.trim() !== '');
    expect(rows.length, r.raw).toBe(10);
    for (const row of rows) expect(row.length, row).toBeLessThanOrEqual(80);
    expect(rows.find((l) => l.startsWith('create the VNF instance'))).toMatch(/ instance [0-9a-f]{8} \(NOT_/);
    expect(rows.find((l) => l.startsWith('delete the VNF instance'))).toMatch(/ instance [0-9a-f]{8} deleted +\d+\.\d$/);
    expect(rows.find((l) => l.startsWith('onboard the packages'))).toMatch(/vnfdIds [0-9a-f]{8} \(v1\), /);
  }, 120_000);
});

describe('vnfm demo --vim', () => {
  it("runs in the user's VNFM_HOME on the VIM given and leaves no instance and none of the packages it onboarded behind", async () => {
    const { startSandbox, writeSandboxConfigs } = await import('../../src/sandbox/index.js');
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
    try {
      const dir = mkdtempSync(join(tmpdir(), 'vnfm-demo-vim-'));
      writeSandboxConfigs(sandbox, { vimConfigPath: join(dir, 'vim-config.yaml'), kubeconfigPath: join(dir, 'kubeconfig') });
      const home = newHome();
      expect((await vnfm(['vim-register', '--config-file', join(dir, 'vim-config.yaml'), 'lab'], { home })).code).toBe(0);
      const r = await vnfm(['demo', '--vim', 'lab', '-o', 'json'], { home });
      expect(r.code, r.stderr).toBe(0);
      const steps = JSON.parse(r.stdout) as { step: string; result: string }[];
      expect(steps.at(-1)).toMatchObject({ step: 'delete the packages it onboarded', result: expect.stringMatching(/^packages \S+, \S+ deleted$/) });
      expect((await vnfm(['vnf-list', '-o', 'json'], { home })).stdout.trim()).toBe('[]');
      expect((await vnfm(['vnfpkg-list', '-o', 'json'], { home })).stdout.trim()).toBe('[]');
      expect(JSON.parse((await vnfm(['vim-list', '-o', 'json'], { home })).stdout)).toHaveLength(1);
    } finally {
      await sandbox.close();
    }
  }, 180_000);
});
