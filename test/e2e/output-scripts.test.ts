/**
 * A script's view of the real program: ids, fields and filtered lists
 * without jq, tables plain in a pipe, and files written only where --file
 * says (over an existing one only with --force).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, newHome, vnfm } from '../support/cli.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf/package');
let home = '';
let work = '';
const run = (args: string[]) => vnfm(args, { home });

beforeAll(async () => {
  home = newHome();
  work = mkdtempSync(join(tmpdir(), 'vnfm-scripts-'));
  expect((await run(['vnfpkg-build', SAMPLE, '-f', join(work, 'cnf.zip')])).code).toBe(0);
  expect((await run(['vnfpkg-onboard', join(work, 'cnf.zip'), '--name', 'basic-cnf'])).code).toBe(0);
  for (const name of ['web-1', 'web-2', 'db']) expect((await run(['vnf-create', '--package', 'basic-cnf', '--name', name])).code).toBe(0);
}, 60_000);

describe('vnfm for scripts', () => {
  it('gives ids, values and one field without jq', async () => {
    const ids = (await run(['vnf-list', '-q'])).stdout.trim().split('\n');
    expect(ids).toHaveLength(3);
    expect(ids.every((id) => /^[0-9a-f-]{36}$/.test(id))).toBe(true);
    expect((await run(['vnf-list', '--name', 'web-*', '-o', 'value', '-c', 'name'])).stdout).toBe('web-1\nweb-2\n');
    expect((await run(['vnf-show', 'db', '-o', 'jsonpath={.instantiationState}'])).stdout).toBe('NOT_INSTANTIATED\n');
    expect((await run(['vnf-show', ids[0]!.slice(0, 8), '-o', 'name'])).stdout).toBe(`${ids[0]}\n`);
    const filtered = await run([
      'vnf-list',
      '--filter',
      '(cont,vnfInstanceName,web);(neq,vnfInstanceName,web-2)',
      '-o',
      'jsonpath={range .items[*]}{.vnfInstanceName}{"\\n"}{end}',
    ]);
    expect(filtered.stdout).toBe('web-1\n');
    expect((await run(['vnfpkg-list', '--state', 'IN_USE', '-o', 'value', '-c', 'name'])).stdout).toBe('basic-cnf\n');
  });

  it('pipes a plain table that fits 80 columns, and works in a shell pipeline', async () => {
    const table = await run(['vnf-list']);
    expect(table.stdout).not.toContain('\u001b[');
    expect(Math.max(...table.stdout.split('\n').map((l) => l.length))).toBeLessThanOrEqual(80);
    expect(table.stdout.split('\n')[1]).toMatch(/^[0-9a-f]{8}   web-1\s+NOT_INSTANTIATED\s+basic-cnf$/);
    const names = execFileSync(
      '/bin/sh',
      ['-c', `"${process.execPath}" "${BIN}" vnf-list -q | while read id; do "${process.execPath}" "${BIN}" vnf-show "$id" -o value -c vnfInstanceName; done`],
      {
        env: { PATH: process.env['PATH'], VNFM_HOME: home },
      },
    ).toString();
    expect(names).toBe('web-1\nweb-2\ndb\n');
  }, 30_000);

  it('writes a file only where --file says, and over one only with --force', async () => {
    const zip = join(work, 'back.zip');
    expect((await run(['vnfpkg-download', 'basic-cnf', '--file', zip])).code).toBe(0);
    const again = await run(['vnfpkg-download', 'basic-cnf', '--file', zip]);
    expect(again.code).toBe(4);
    expect((await run(['vnfpkg-download', 'basic-cnf', '--file', zip, '--force', '-q'])).stdout.trim()).toMatch(/^[0-9a-f-]{36}$/);
    expect(readFileSync(zip).equals(readFileSync(join(work, 'cnf.zip')))).toBe(true);
    const legacy = await run(['vnfpkg-build', SAMPLE, '-o', join(work, 'legacy.zip')]);
    expect(legacy.code).toBe(0);
    expect(legacy.stderr).toMatch(/warning: -o FILE is deprecated/);
  });
});
