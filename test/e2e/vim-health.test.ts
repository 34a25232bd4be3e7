/**
 * VIM health now, not at registration: `vim-check` and `vim-list --check`
 * ask every VIM at once and record what it said; an operation on an
 * instance whose VIM does not answer is refused (exit 6) before anything is
 * recorded.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, writeSandboxConfigs, type Sandbox } from '@vnfm/kube-sandbox';
import { newHome, vnfm } from '../support/cli.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');

let up: Sandbox;
let down: Sandbox | undefined;
let upConfig: string;
let downConfig: string;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-vim-health-'));
  up = await startSandbox({ host: '127.0.0.1', port: 0 });
  down = await startSandbox({ host: '127.0.0.1', port: 0 });
  upConfig = join(dir, 'up.yaml');
  downConfig = join(dir, 'down.yaml');
  writeSandboxConfigs(up, { vimConfigPath: upConfig, kubeconfigPath: join(dir, 'up.kubeconfig') });
  writeSandboxConfigs(down, { vimConfigPath: downConfig, kubeconfigPath: join(dir, 'down.kubeconfig') });
});

afterAll(async () => {
  await up?.close();
  await down?.close();
});

type Health = { name: string; status: string; previous_status: string; detail: string };

describe('VIM health', () => {
  it('vim-check asks every VIM now and records its status; scale, heal, change package and terminate on a VIM that does not answer exit 6 with nothing recorded', async () => {
    const home = newHome();
    const run = (args: string[]) => vnfm(args, { home, cwd: process.cwd() });
    const ok = async (args: string[]) => {
      const r = await run(args);
      expect(r.code, `vnfm ${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r;
    };
    // vim-b is the default VIM, where the instance runs; vim-a was registered without a check.
    await ok(['vim-register', '--config-file', downConfig, '--is-default', 'vim-b']);
    await ok(['vim-register', '--no-check', '--config-file', upConfig, 'vim-a']);

    const first = await ok(['vim-check', '-o', 'json']);
    const healths = JSON.parse(first.stdout) as Health[];
    expect(healths.map((h) => [h.name, h.status, h.previous_status])).toEqual([
      ['vim-b', 'REACHABLE', 'REACHABLE'],
      ['vim-a', 'REACHABLE', 'PENDING'],
    ]);
    expect(healths[1]!.detail).toMatch(/^Kubernetes v1\.\d+/);
    expect(first.stderr).toMatch(/vim "vim-a": PENDING -> REACHABLE/);

    await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf']);
    await ok(['vnfpkg-onboard', join(SAMPLE, 'package-v2'), '--name', 'basic-cnf-v2']);
    await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'web']);
    await ok(['vnf-instantiate', 'web', '--request-file', join(SAMPLE, 'requests/instantiate.json')]);
    const vnfc = (JSON.parse((await ok(['vnf-show', 'web', '-o', 'json'])).stdout) as { instantiatedVnfInfo: { vnfcInfo: { id: string }[] } }).instantiatedVnfInfo.vnfcInfo[0]!.id;

    await down!.close();
    down = undefined;

    // Every VIM is asked; the one that answers is still recorded, the exit code says one did not.
    const table = await run(['vim-check']);
    expect(table.code).toBe(6);
    expect(table.stdout).toMatch(/^NAME\s+TYPE\s+STATUS\s+ANSWER$/m);
    expect(table.stdout).toMatch(/^vim-b\s+kubernetes\s+UNREACHABLE\s+.*ECONNREFUSED/m);
    expect(table.stdout).toMatch(/^vim-a\s+kubernetes\s+REACHABLE\s+Kubernetes v1\./m);
    expect(table.stderr).toMatch(/vim "vim-b": REACHABLE -> UNREACHABLE/);
    expect(table.stderr).toMatch(/error: 1 of 2 VIM\(s\) did not answer: "vim-b" \(/);
    const listed = JSON.parse((await ok(['vim-list', '-o', 'json'])).stdout) as { name: string; status: string }[];
    expect(listed.map((v) => [v.name, v.status])).toEqual([
      ['vim-b', 'UNREACHABLE'],
      ['vim-a', 'REACHABLE'],
    ]);

    // One VIM by name: only it is asked.
    const one = await ok(['vim-check', 'vim-a', '-o', 'json']);
    expect((JSON.parse(one.stdout) as Health[]).map((h) => h.name)).toEqual(['vim-a']);
    // An unknown name checks nothing.
    const unknown = await run(['vim-check', 'vim-a', 'nowhere']);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toMatch(/vim "nowhere" not found/);
    expect(unknown.stdout).toBe('');

    // vim-list --check: the list as checked, and the same exit code.
    const checkedList = await run(['vim-list', '--check', '-o', 'json']);
    expect(checkedList.code).toBe(6);
    expect((JSON.parse(checkedList.stdout) as { status: string }[]).map((v) => v.status)).toEqual(['UNREACHABLE', 'REACHABLE']);

    const opsBefore = JSON.parse((await ok(['op-list', '-o', 'json'])).stdout) as unknown[];
    expect(opsBefore).toHaveLength(1);
    for (const args of [
      ['vnf-scale', 'web', '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect'],
      ['vnf-heal', 'web', '--vnfc-instance', vnfc],
      ['vnf-change-package', 'web', join(SAMPLE, 'requests/change-package.json')],
      ['vnf-terminate', 'web', '--yes'],
    ]) {
      const r = await run(args);
      expect(r.code, `${args[0]}: ${r.stderr}`).toBe(6);
      expect(r.stderr).toMatch(/ECONNREFUSED/);
      expect(JSON.parse((await ok(['op-list', '-o', 'json'])).stdout)).toHaveLength(1);
    }
    const vnf = JSON.parse((await ok(['vnf-show', 'web', '-o', 'json'])).stdout) as { instantiationState: string; vnfPkgId: string };
    expect(vnf.instantiationState).toBe('INSTANTIATED');
  }, 120_000);
});
