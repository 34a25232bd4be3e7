/**
 * Tacker's command-line forms, in-process: the combinations they refuse are
 * refused with exit 2 before vnfm opens its store (VNFM_HOME is not even
 * created), so nothing is recorded. The forms at work are in
 * test/e2e/tacker-cli-forms.test.ts.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'vnfm-tacker-forms-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

async function run(argv: string[]) {
  const home = join(mkdtempSync(join(tmpdir(), 'vnfm-cli-')), 'home');
  let stdout = '';
  let stderr = '';
  const out = new PassThrough();
  const err = new PassThrough();
  out.on('data', (d: Buffer) => (stdout += d.toString()));
  err.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await main(argv, { env: { VNFM_HOME: home }, cwd: dir, streams: { stdin: new PassThrough(), stdout: out, stderr: err } });
  return { code, stdout, stderr, storeOpened: existsSync(home) };
}

const req = file('req.json', '{"flavourId": "simple"}');

describe("Tacker's command-line forms: what they refuse, before anything is opened", () => {
  it.each([
    [
      ['vnf-instantiate', 'web', req, '--request-file', req],
      /^error: the request file is given twice: ".*req\.json" and --request-file ".*req\.json"\nhint: give it once: vnfm vnf-instantiate VNF FILE \(or --request-file FILE\)\n/,
    ],
    [['vnf-instantiate', 'web'], /^error: the request file is missing\nhint: vnfm vnf-instantiate VNF FILE \(or --request-file FILE\)\n/],
    [['vnf-change-package', 'web', req, '--request-file', req], /^error: the request file is given twice: .*\nhint: give it once: vnfm vnf-change-package VNF FILE/],
    [['vnf-change-package', 'web'], /^error: the request file is missing\nhint: vnfm vnf-change-package VNF FILE/],
    [['vnf-create', 'a-vnfd-id', '--vnfd-id', 'a-vnfd-id'], /^error: the vnfdId is given twice: a-vnfd-id and --vnfd-id a-vnfd-id\n/],
    [['vnf-create', 'a-vnfd-id', '--package', 'basic-cnf'], /^error: both a vnfdId \(a-vnfd-id\) and --package basic-cnf are given\n/],
    [['vnf-create', 'a-vnfd-id', '--I', req, '--instantiate-file', req], /^error: the instantiate request is given twice: --I and --instantiate-file\n/],
    [
      ['vnf-heal', '--vnfc-instance', 'VDU1-a', 'web'],
      /^error: name the VNF instance to heal\nhint: --vnfc-instance took every word after it: give the VNF first .* or end the list with "--"/,
    ],
    [['vim-update', 'vim-k8s', '--is-default', 'maybe'], /^error: --is-default "maybe" is not true or false\nhint: vnfm vim-update VIM --is-default true\|false/],
    [['vim-update', '--is-default', 'false'], /^error: name the VIM to update\n/],
    [
      ['vnf-scale', 'web', '--type', 'SCALE_OUT', '--aspect-id', 'a', '--additional-param-file', file('bare.json', '{"all": true}')],
      /^error: .*bare\.json: all: is not a field of the request \(it takes additionalParams, type, aspectId, numberOfSteps, vimConnectionInfo\)\nhint: put the parameters under additionalParams: \{"additionalParams": \{"all": \.\.\.\}\}\n/,
    ],
    [['vnf-heal', 'web', '--additional-param-file', file('list.yaml', '- all\n')], /^error: .*list\.yaml: is not a JSON object\n/],
    [['vnf-heal', 'web', '--additional-param-file', file('params.json', '{"additionalParams": [true]}')], /^error: .*params\.json: additionalParams: must be an object\n/],
  ])('%j', async (argv, says) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(says);
    expect(r.stdout).toBe('');
    expect(r.storeOpened).toBe(false);
  });

  it('the new forms are in the help', async () => {
    expect((await run(['vnf-instantiate', '--help'])).stdout).toMatch(/Usage: vnfm vnf-instantiate \[options\] <vnf> \[file\]/);
    expect((await run(['vnf-change-package', '--help'])).stdout).toMatch(/Usage: vnfm vnf-change-package \[options\] <vnf> \[file\]/);
    expect((await run(['vnf-create', '--help'])).stdout).toMatch(/Usage: vnfm vnf-create \[options\] \[vnfd-id\][\s\S]*--instantiate-file <file>/);
    expect((await run(['vnf-heal', '--help'])).stdout).toMatch(/Usage: vnfm vnf-heal \[options\] <vnf>[\s\S]*--vnfc-instance <id\.\.\.>[\s\S]*--additional-param-file <file>/);
    expect((await run(['vnf-scale', '--help'])).stdout).toMatch(/--additional-param-file <file>/);
    expect((await run(['vnf-terminate', '--help'])).stdout).toMatch(/--delete\s+then delete the instance/);
    expect((await run(['vim-update', '--help'])).stdout).toMatch(/--is-default \[true\|false\]/);
  });
});
