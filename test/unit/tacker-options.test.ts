/**
 * Tacker's output options typed to vnfm (`-f json`, `--format`,
 * `--sort-column` with `--sort-descending`): refused as unknown options
 * (exit 2), with a hint naming vnfm's form for the command typed. The
 * command layer in-process, with in-memory streams.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

async function run(argv: string[]) {
  const home = join(mkdtempSync(join(tmpdir(), 'vnfm-tacker-options-')), 'home');
  let stderr = '';
  const err = new PassThrough();
  err.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await main(argv, { env: { VNFM_HOME: home }, cwd: home, streams: { stdin: new PassThrough(), stdout: new PassThrough(), stderr: err } });
  return { code, stderr };
}

describe("Tacker's output options", () => {
  it.each([
    [['vnf-list', '-f', 'json'], "vnfm's form is -o json (Tacker's -f json)"],
    [['vnf-show', 'web', '-f', 'yaml'], "vnfm's form is -o yaml (Tacker's -f yaml)"],
    [['op-list', '-fvalue'], "vnfm's form is -o value (Tacker's -f value)"],
    [['vnfpkg-list', '--format', 'json'], "vnfm's form is -o json (Tacker's -f json)"],
    [['vim-list', '--format=csv'], 'vnfm has no csv format: use -o json, or -o value -c FIELD'],
    [['vnf-list', '-f'], "vnfm's form is -o FORMAT (Tacker's -f FORMAT); its formats are table, wide, json, yaml, value, name, jsonpath=TEMPLATE"],
    [['vnf-list', '--sort-column', 'vnfInstanceName'], "vnfm's form is --sort vnfInstanceName (Tacker's --sort-column KEY"],
    [['op-list', '--sort-column', 'startTime', '--sort-descending'], "vnfm's form is --sort startTime:desc"],
    [['vnf-list', '--sort-descending'], "vnfm's form is --sort KEY:desc"],
    [['op-log', '-f', 'json', 'abc12345'], "-f is Tacker's output format; this command prints no formatted result"],
    [['vnf-show', 'web', '--sort-column', 'id'], 'this command prints no list (the list commands take --sort KEY[:desc])'],
  ])("%j: exit 2 and a hint with vnfm's form", async (argv, hint) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: unknown option '/m);
    const said = r.stderr.split('\n').find((l) => l.startsWith('hint: '));
    expect(said).toContain(hint);
  });

  it('another unknown option gets no hint', async () => {
    const r = await run(['vnf-list', '--no-such-flag']);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(/^hint:/m);
  });
});
