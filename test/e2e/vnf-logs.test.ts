/**
 * vnf-logs with the real program against the sandbox, whose pods' logs are
 * served as a kubelet serves them through the API server, and in the real
 * API server tier against the real kube-apiserver, which proxies the
 * request to the stand-in kubelet of the pod's node: every pod of the
 * instance (each line prefixed with its pod), one VDU's, one VNFC's, with
 * --tail and -c; -f follows until Ctrl-C, which ends it with exit 130; an
 * instance with nothing at a VIM is refused (exit 4).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { BIN, newHome, okWith, vnfm } from '../support/cli.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');

let cluster: E2eCluster;
let home: string;
let vnfcs: { id: string; vduId: string; vnfcResourceInfoId: string }[];

const run = (args: string[]) => vnfm(args, { home });
const ok = okWith(run);

beforeAll(async () => {
  cluster = await e2eCluster('e2e-vnf-logs', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-logs-'));
  const vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, cluster.namespace);
  const body = JSON.parse(readFileSync(join(SAMPLE, 'requests/instantiate.json'), 'utf8')) as { additionalParams: Record<string, unknown> };
  body.additionalParams['namespace'] = cluster.namespace;
  writeFileSync(join(dir, 'instantiate.json'), JSON.stringify(body));
  home = newHome();
  await ok(['vim-register', '--config-file', vimConfig, 'sandbox']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf']);
  await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'web']);
  await ok(['vnf-instantiate', 'web', join(dir, 'instantiate.json')]);
  const shown = JSON.parse((await ok(['vnf-show', 'web', '-o', 'json'])).stdout) as { instantiatedVnfInfo: { vnfcInfo: typeof vnfcs } };
  vnfcs = shown.instantiatedVnfInfo.vnfcInfo;
}, 120_000);

afterAll(async () => {
  await cluster?.close();
});

describe('vnf-logs', () => {
  it("prints every pod's log, each line with its pod; one VDU's or one VNFC's without; --tail; a bad container named", async () => {
    expect(vnfcs.length).toBe(2);
    const all = await ok(['vnf-logs', 'web']);
    for (const v of vnfcs) expect(all.stdout).toMatch(new RegExp(`^\\[pod/${v.vnfcResourceInfoId}\\] \\S+: started on `, 'm'));
    const vdu1 = vnfcs.find((v) => v.vduId === 'VDU1')!;
    const one = await ok(['vnf-logs', 'web', '--vdu', 'VDU1']);
    expect(one.stdout.split('\n').filter(Boolean)).toEqual([expect.stringMatching(/^\S+: started on \S+ \(the .+ runs no container/), expect.stringMatching(/^\S+: ready$/)]);
    expect((await ok(['vnf-logs', 'web', '--vnfc', vdu1.id, '--tail', '1'])).stdout).toMatch(/^\S+: ready\n$/);
    const bad = await run(['vnf-logs', 'web', '--vnfc', vdu1.id, '-c', 'no-such-container']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/cannot read the log of pod \S+ in namespace \S+: HTTP 400: container no-such-container is not valid/);
    const unknown = await run(['vnf-logs', 'web', '--vdu', 'VDU9']);
    expect(unknown.code).toBe(3);
  });

  it('-f follows until Ctrl-C, which ends it with exit 130', async () => {
    const vdu1 = vnfcs.find((v) => v.vduId === 'VDU1')!;
    const child = spawn(process.execPath, [BIN, 'vnf-logs', 'web', '--vnfc', vdu1.id, '-f'], {
      env: { PATH: process.env['PATH'], HOME: home.replace(/\/home$/, ''), VNFM_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const followed = new Promise<void>((resolveFollowed) => {
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (/: alive \(1\)\n/.test(stdout)) resolveFollowed();
      });
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    await followed;
    child.kill('SIGINT');
    expect(await exited, stderr).toBe(130);
    expect(stdout).toMatch(/^\S+: started on /);
    expect(stderr).toContain('stopped following the logs');
  });

  it('an instance with nothing at a VIM has no logs (exit 4)', async () => {
    await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'idle']);
    const r = await run(['vnf-logs', 'idle']);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/nothing of it runs at a VIM for vnf-logs to read/);
  });
});
