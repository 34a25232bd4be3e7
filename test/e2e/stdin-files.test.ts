/**
 * Files from the standard input, as `kubectl apply -f -`: `-` (and
 * `/dev/stdin`, a pipe) for --config-file, --request-file, the positional
 * request file and vnfpkg-validate's zip; a pipe from the shell (a FIFO)
 * and the socket a parent process gives alike; a terminal refused rather
 * than waited on.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { BIN, newHome, okWith, onTerminal, vnfm, type RunResult } from '../support/cli.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');

let cluster: E2eCluster;
let home: string;
let dir: string;
let vimConfig: string;

const run = (args: string[], input?: string) => vnfm(args, { home, ...(input !== undefined ? { input } : {}) });
const ok = okWith((args) => run(args));

/** vnfm with `file` piped in by the shell (`cat FILE | vnfm ...`): its standard input a FIFO. */
function piped(file: string, args: string[]): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const quoted = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ');
    const child = spawn('sh', ['-c', `cat '${file}' | ${quoted}`], {
      cwd: dir,
      env: { PATH: process.env['PATH'], HOME: dir, VNFM_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

function request(name: string): string {
  const body = JSON.parse(readFileSync(join(SAMPLE, 'requests', name), 'utf8')) as { additionalParams?: Record<string, unknown> };
  if (body.additionalParams?.['namespace'] !== undefined) body.additionalParams['namespace'] = cluster.namespace;
  return JSON.stringify(body);
}

beforeAll(async () => {
  cluster = await e2eCluster('e2e-stdin', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  dir = mkdtempSync(join(tmpdir(), 'vnfm-stdin-'));
  vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, cluster.namespace);
  home = newHome();
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf']);
});

afterAll(async () => {
  await cluster?.close();
});

describe('files from the standard input', () => {
  it('vim-register --config-file - (a pipe from the shell) and vim-update --config-file /dev/stdin', async () => {
    const registered = await piped(vimConfig, ['vim-register', '--config-file', '-', 'from-stdin', '-o', 'json']);
    expect(registered.code, registered.stderr).toBe(0);
    expect(JSON.parse(registered.stdout)).toMatchObject({ name: 'from-stdin', type: 'kubernetes' });
    const updated = await run(['vim-update', 'from-stdin', '--config-file', '/dev/stdin'], readFileSync(vimConfig, 'utf8'));
    expect(updated.code, updated.stderr).toBe(0);
    // What is on stdin is read as the file would be: a broken one is named "-" with its line.
    const broken = await run(['vim-register', '--config-file', '-', 'broken'], 'auth_url: [\n');
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/^error: -: is not valid YAML at line/m);
    const vims = JSON.parse((await ok(['vim-list', '-o', 'json'])).stdout) as Array<{ name: string }>;
    expect(vims.map((v) => v.name)).toEqual(['from-stdin']);
  });

  it('the positional request file and --request-file as -', async () => {
    await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'web']);
    const instantiated = await run(['vnf-instantiate', 'web', '-', '-o', 'json'], request('instantiate.json'));
    expect(instantiated.code, instantiated.stderr).toBe(0);
    expect(JSON.parse(instantiated.stdout)).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED' });
    const file = join(dir, 'scale-out.json');
    writeFileSync(file, request('scale-out.json'));
    const scaled = await piped(file, ['vnf-scale', 'web', '--request-file', '-', '-o', 'json']);
    expect(scaled.code, scaled.stderr).toBe(0);
    expect(JSON.parse(scaled.stdout)).toMatchObject({ operation: 'SCALE', operationState: 'COMPLETED' });
    // Nothing on stdin: an empty request, refused as an empty file is.
    const empty = await run(['vnf-scale', 'web', '--request-file', '-']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).not.toMatch(/does not exist/);
    await ok(['vnf-terminate', 'web', '--yes']);
  }, 120_000);

  it('vnfpkg-validate - reads a zip from a pipe', async () => {
    const zip = join(dir, 'basic-cnf.zip');
    execFileSync('zip', ['-qr', zip, '.'], { cwd: join(SAMPLE, 'package') });
    const valid = await piped(zip, ['vnfpkg-validate', '-', '-o', 'json']);
    expect(valid.code, valid.stderr).toBe(0);
    expect(JSON.parse(valid.stdout)).toMatchObject({ origin: '-', valid: true });
    const junk = join(dir, 'junk.zip');
    writeFileSync(junk, 'not a zip at all');
    const refused = await piped(junk, ['vnfpkg-validate', '-']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/- is not a valid package/);
  });

  it('a terminal on stdin is refused, not waited on', async () => {
    const r = await onTerminal(['vim-register', '--config-file', '-', 'tty'], home, '');
    expect(r.code).toBe(2);
    expect(r.screen).toMatch(/the standard input\) is a terminal/);
  });
});
