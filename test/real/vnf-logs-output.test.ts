/**
 * vnf-logs with what a container really may print, through the real API
 * server and the stand-in kubelet (which has the pod print it): terminal
 * escapes (OSC 52 setting the clipboard, a screen clear), a carriage return
 * that would hide what went before, C1 controls, a right-to-left override,
 * a CRLF line and bytes that are not UTF-8. Piped, vnf-logs writes the
 * container's bytes as they are, as kubectl logs does; on a terminal every
 * control is shown escaped and none reaches the terminal.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { BIN, newHome, okWith, onTerminal, vnfm } from '../support/cli.js';
import { printInPods } from '../support/stand-in-kubelet.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');

/** What the container prints: each line a way to fool a terminal, and bytes that are not UTF-8. */
const PRINTED = Buffer.concat([
  Buffer.from('plain café ☕ line\n'),
  Buffer.from('\x1b]52;c;cHduZWQ=\x07clipboard set\n'),
  Buffer.from('\x1b[2J\x1b[Hscreen cleared\n'),
  Buffer.from('all good\rPWNED overwrite\n'),
  Buffer.from('crlf line\r\n'),
  Buffer.from('c1 \u009b31m csi\n'),
  Buffer.from('bidi \u202egnp.exe\n'),
  Buffer.from('tab\there\n'),
  Buffer.from([0x6e, 0x6f, 0x74, 0x20, 0xff, 0xfe, 0x20, 0xc3, 0x28, 0x20, 0x75, 0x74, 0x66, 0x38, 0x0a]),
]);

let cluster: E2eCluster;
let home: string;
let vdu1: string;
let undo: () => Promise<void>;

const run = (args: string[]) => vnfm(args, { home });
const ok = okWith(run);

/** Runs vnfm with stdout a pipe, keeping its bytes. */
function rawStdout(args: string[]): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env['PATH'], HOME: home.replace(/\/home$/, ''), VNFM_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout: Buffer.concat(out), stderr }));
  });
}

beforeAll(async () => {
  cluster = await e2eCluster('real-vnf-logs');
  undo = await printInPods(cluster, { kind: 'Deployment', name: 'vdu1', namespace: cluster.namespace, container: 'web', outputBase64: PRINTED.toString('base64') });
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-logs-output-'));
  const vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, cluster.namespace);
  const body = JSON.parse(readFileSync(join(SAMPLE, 'requests/instantiate.json'), 'utf8')) as { additionalParams: Record<string, unknown> };
  body.additionalParams['namespace'] = cluster.namespace;
  writeFileSync(join(dir, 'instantiate.json'), JSON.stringify(body));
  home = newHome();
  await ok(['vim-register', '--config-file', vimConfig, 'real']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf']);
  await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'web']);
  await ok(['vnf-instantiate', 'web', join(dir, 'instantiate.json')]);
  const shown = JSON.parse((await ok(['vnf-show', 'web', '-o', 'json'])).stdout) as { instantiatedVnfInfo: { vnfcInfo: { id: string; vduId: string }[] } };
  vdu1 = shown.instantiatedVnfInfo.vnfcInfo.find((v) => v.vduId === 'VDU1')!.id;
}, 120_000);

afterAll(async () => {
  await undo?.();
  await cluster?.close();
});

describe("vnf-logs with a container's hostile output", () => {
  it('piped, writes the bytes the container printed, exactly', async () => {
    const r = await rawStdout(['vnf-logs', 'web', '--vnfc', vdu1]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.toString('latin1').split('\n');
    expect(lines[0]).toMatch(/^web: started on /);
    expect(lines[1]).toBe('web: ready');
    const after = r.stdout.subarray(Buffer.byteLength(`${lines[0]}\n${lines[1]}\n`, 'latin1'));
    expect(after.toString('hex')).toBe(PRINTED.toString('hex'));
  });

  it('on a terminal, shows every control escaped and lets none through', async () => {
    const { code, screen } = await onTerminal(['vnf-logs', 'web', '--vnfc', vdu1], home, '');
    expect(code, screen).toBe(0);
    for (const shown of [
      'plain café ☕ line',
      '\\x1b]52;c;cHduZWQ=\\x07clipboard set',
      '\\x1b[2J\\x1b[Hscreen cleared',
      'all good\\rPWNED overwrite',
      'crlf line\\r',
      'c1 \\x9b31m csi',
      'bidi \\u202egnp.exe',
      'tab\there',
      'not \ufffd\ufffd \ufffd( utf8',
    ])
      expect(screen).toContain(shown);
    // The terminal's own line ends (CR LF for each newline) are all the controls it got, besides the tab.
    expect(screen.replace(/\r\n/g, '\n')).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]/);
  });
});
