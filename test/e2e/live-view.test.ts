/**
 * The live view of a long operation on a real pseudo-terminal (`script`):
 * the basic CNF with an instantiate_end hook whose package script prints a
 * dozen lines. What the terminal shows is rebuilt from the bytes vnfm wrote
 * (cursor-up and erase sequences applied), and checked: one frame, redrawn
 * in place, with the operation's total time, each step with its own time,
 * and the last lines the script printed. With -o json on a terminal there is
 * no live view; without a terminal the plain lines are as they were.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, writeSandboxConfigs, type Sandbox } from '../../src/sandbox/index.js';
import { BIN, newHome, vnfm } from '../support/cli.js';

const BASIC = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');

const TALK_SH = `#!/bin/bash
cat > /dev/null
for i in $(seq 1 12); do
  echo "configuring part $i of 12"
  sleep 0.05
done
`;

let sandbox: Sandbox;
let home: string;
let work: string;

function buildPackage(dir: string): string {
  const pkg = join(dir, 'talking-cnf');
  cpSync(join(BASIC, 'package'), pkg, { recursive: true });
  mkdirSync(join(pkg, 'Scripts'));
  writeFileSync(join(pkg, 'Scripts/talk.sh'), TALK_SH);
  const hash = createHash('sha256').update(TALK_SH).digest('hex');
  appendFileSync(join(pkg, 'TOSCA-Metadata/TOSCA.meta'), `\nName: Scripts/talk.sh\nContent-Type: text/x-shellscript\nAlgorithm: SHA-256\nHash: ${hash}\n`);
  const df = join(
    pkg,
    'Definitions',
    readdirSync(join(pkg, 'Definitions')).find((f) => f.includes('_df_'))!,
  );
  const text = readFileSync(df, 'utf8').replace(
    /    VNF:\n      type: vnfm.samples.BasicCnf\n/,
    [
      '    VNF:',
      '      type: vnfm.samples.BasicCnf',
      '      interfaces:',
      '        Vnflcm:',
      '          instantiate_end: {implementation: talk}',
      '      artifacts:',
      '        talk:',
      '          description: Prints what it configures',
      '          type: tosca.artifacts.Implementation.Bash',
      '          file: ../Scripts/talk.sh',
      '',
    ].join('\n'),
  );
  expect(text).toContain('implementation: talk');
  writeFileSync(df, text);
  return pkg;
}

async function ok(args: string[]) {
  const r = await vnfm(args, { home });
  if (r.code !== 0) throw new Error(`vnfm ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r;
}

/** Runs vnfm on a pseudo-terminal of 100 columns and 40 rows; everything it wrote, as the terminal got it. */
function onPty(args: string[]): Promise<{ code: number | null; raw: string }> {
  return new Promise((resolvePromise, reject) => {
    const cmd = `stty cols 100 rows 40; exec ${[process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ')}`;
    const child = spawn('script', ['-qec', cmd, '/dev/null'], {
      env: { PATH: process.env['PATH'], HOME: work, VNFM_HOME: home, TERM: 'xterm', NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let raw = '';
    child.stdout.on('data', (d: Buffer) => (raw += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, raw }));
  });
}

/**
 * The screen the bytes leave: lines written at a cursor that moves down on
 * "\n", to column 0 on "\r", up N lines on ESC[NF; ESC[J erases from the
 * cursor to the end. Other sequences (colours) are dropped.
 */
function screen(raw: string): string[] {
  const lines: string[] = [''];
  let row = 0;
  let col = 0;
  const re = /\x1b\[(\d*)([A-Za-z])|\r|\n|[^\x1b\r\n]+/g;
  for (const m of raw.matchAll(re)) {
    const tok = m[0];
    if (m[2] !== undefined) {
      const n = Number(m[1] || 1);
      if (m[2] === 'F') {
        row = Math.max(0, row - n);
        col = 0;
      } else if (m[2] === 'J') {
        lines[row] = lines[row]!.slice(0, col);
        lines.length = row + 1;
      }
    } else if (tok === '\r') col = 0;
    else if (tok === '\n') {
      row += 1;
      col = 0;
      while (lines.length <= row) lines.push('');
    } else {
      const line = lines[row]!.padEnd(col);
      lines[row] = line.slice(0, col) + tok + line.slice(col + tok.length);
      col += tok.length;
    }
  }
  return lines.map((l) => l.trimEnd());
}

beforeAll(async () => {
  sandbox = await startSandbox({ host: '127.0.0.1', port: 0, controllers: { readyDelayMs: 300, terminationDelayMs: 20 } });
  work = mkdtempSync(join(tmpdir(), 'vnfm-live-view-'));
  chmodSync(work, 0o1777);
  const vimConfig = join(work, 'vim-config.yaml');
  writeSandboxConfigs(sandbox, { vimConfigPath: vimConfig, kubeconfigPath: join(work, 'kubeconfig') });
  home = newHome();
  await ok(['vim-register', '--config-file', vimConfig, '--is-default', 'sandbox']);
  await ok(['vnfpkg-onboard', buildPackage(work), '--name', 'talking-cnf']);
}, 60_000);

afterAll(async () => {
  await sandbox?.close();
});

/** The sample's request, into a namespace of its own (created): each test's instance has its own objects. */
function request(namespace: string): string {
  const body = JSON.parse(readFileSync(join(BASIC, 'requests/instantiate.json'), 'utf8')) as { additionalParams: Record<string, unknown> };
  body.additionalParams['namespace'] = namespace;
  body.additionalParams['vnfm_create_namespace'] = true;
  const file = join(work, `${namespace}.json`);
  writeFileSync(file, JSON.stringify(body));
  return file;
}
const STEP_TIME = /  \d+(\.\d)?s$/;

describe('live view', () => {
  it('on a terminal: one frame redrawn in place, total and per-step times, the tail of the script', async () => {
    await ok(['vnf-create', '--package', 'talking-cnf', '--name', 'web']);
    const r = await onPty(['vnf-instantiate', 'web', request('live'), '--allow-package-scripts']);
    expect(r.code, r.raw).toBe(0);
    const shown = screen(r.raw);
    const header = /^INSTANTIATE [A-Z_]+ \(occurrence /;
    const at = shown.findIndex((l) => header.test(l));
    expect(at, shown.join('\n')).toBeGreaterThanOrEqual(0);
    // Redrawn in place: one header on the screen, though many frames were written.
    expect(shown.filter((l) => header.test(l))).toHaveLength(1);
    expect(r.raw.split(/INSTANTIATE [A-Z_]+ \(occurrence /).length - 1).toBeGreaterThan(3);
    expect(shown[at]).toMatch(/^INSTANTIATE COMPLETED \(occurrence [0-9a-f-]{36}\)  \d+(\.\d)?s$/);
    const frame = shown.slice(
      at + 1,
      shown.findIndex((l, i) => i > at && l.startsWith('INSTANTIATE of vnf instance')),
    );
    for (const step of ['Deployment/vdu1 (live)', 'Deployment/vdu2 (live)', 'hook instantiate_start', 'hook instantiate_end']) {
      const line = frame.find((l) => l.startsWith(`  ✓ ${step}  `));
      expect(line, `${step} in\n${frame.join('\n')}`).toBeDefined();
      expect(line).toMatch(STEP_TIME);
    }
    expect(frame.some((l) => l.startsWith('  … '))).toBe(false);
    // A finished hook says its time, not that it runs; the final frame is written once.
    const hooks = frame.filter((l) => /^  \S hook instantiate_/.test(l));
    expect(hooks).toHaveLength(2);
    for (const l of hooks) {
      expect(l).toMatch(STEP_TIME);
      expect(l).not.toMatch(/running/);
    }
    expect(r.raw.split('INSTANTIATE COMPLETED (occurrence ').length - 1).toBe(1);
    // The last lines of what the script printed, under its hook.
    const tail = frame.slice(frame.indexOf('  output of hook instantiate_end:') + 1);
    expect(frame).toContain('  output of hook instantiate_end:');
    expect(tail).toHaveLength(5);
    expect(tail.every((l) => l.startsWith('  │ '))).toBe(true);
    expect(tail.join('\n')).toMatch(/│ Scripts\/talk\.sh: configuring part 12 of 12/);
    // Earlier lines were on the screen while the script ran, then scrolled out of the tail.
    expect(r.raw).toMatch(/│ Scripts\/talk\.sh: configuring part 1 of 12/);
    expect(shown.join('\n')).not.toMatch(/configuring part 1 of 12/);
    // The result follows the frame.
    expect(shown.join('\n')).toMatch(/INSTANTIATE of vnf instance [0-9a-f-]{36} COMPLETED/);
    await ok(['vnf-terminate', 'web', '--yes']);
  }, 120_000);

  it('-o json on a terminal: the result alone, no live view', async () => {
    await ok(['vnf-create', '--package', 'talking-cnf', '--name', 'quiet']);
    const r = await onPty(['vnf-instantiate', 'quiet', request('quiet'), '--allow-package-scripts', '-o', 'json']);
    expect(r.code, r.raw).toBe(0);
    expect(r.raw).not.toContain('\x1b[');
    expect(r.raw).not.toMatch(/✓|│|output of hook/);
    expect(r.raw).toMatch(/"operationState": "COMPLETED"/);
    await ok(['vnf-terminate', 'quiet', '--yes']);
  }, 120_000);

  it('without a terminal: the plain timestamped lines, no frames, no script output', async () => {
    await ok(['vnf-create', '--package', 'talking-cnf', '--name', 'plain']);
    const r = await ok(['vnf-instantiate', 'plain', request('plain'), '--allow-package-scripts']);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.filter((l) => /^\d{4}-\d\d-\d\dT/.test(l)).length).toBeGreaterThan(5);
    expect(r.stderr).toMatch(/^\S+Z hook instantiate_end$/m);
    expect(r.stderr).toMatch(/^\S+Z Deployment\/vdu1 \(plain\): /m);
    expect(r.stderr).not.toContain('\x1b[');
    expect(r.stderr).not.toMatch(/configuring part|│/);
    await ok(['vnf-terminate', 'plain', '--yes']);
  }, 120_000);
});
