/** `-o` is the output format; the file a command writes is --file/-f, and writing over one needs --force. */
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf/package');
let dir = '';
let home = '';

async function run(argv: string[]) {
  const streams = [new PassThrough(), new PassThrough(), new PassThrough()] as const;
  const texts = ['', '', ''];
  streams.forEach((s, i) => s.on('data', (d: Buffer) => (texts[i] += d.toString())));
  const code = await main(argv, { env: { VNFM_HOME: home }, cwd: dir, streams: { stdin: streams[0], stdout: streams[1], stderr: streams[2] } });
  return { code, stdout: texts[1]!, stderr: texts[2]! };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vnfm-files-'));
  home = join(dir, 'home');
});

describe('vnfpkg-build', () => {
  it('writes --file, refuses an existing file without --force and leaves it as it was', async () => {
    const zip = join(dir, 'cnf.zip');
    const built = await run(['vnfpkg-build', SAMPLE, '-f', zip]);
    expect(built).toMatchObject({ code: 0, stdout: '' });
    const bytes = readFileSync(zip);
    writeFileSync(zip, 'not a zip');
    const again = await run(['vnfpkg-build', SAMPLE, '--file', zip]);
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(/cnf\.zip already exists\nhint: choose another --file, or pass --force to overwrite it/);
    expect(readFileSync(zip, 'utf8')).toBe('not a zip');
    const forced = await run(['vnfpkg-build', SAMPLE, '-f', zip, '--force', '-o', 'json']);
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stdout)).toEqual({ file: zip, members: expect.any(Number), bytes: bytes.length });
    expect(readFileSync(zip).equals(bytes)).toBe(true);
  });

  it('keeps -o FILE working with a deprecation warning; -o FORMAT is the format', async () => {
    const zip = join(dir, 'legacy.zip');
    const r = await run(['vnfpkg-build', SAMPLE, '-o', zip]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/warning: -o FILE is deprecated .*use --file .*legacy\.zip/);
    expect(existsSync(zip)).toBe(true);
    const name = await run(['vnfpkg-build', SAMPLE, '-f', join(dir, 'named.zip'), '-o', 'name']);
    expect(name.stdout).toBe(`${join(dir, 'named.zip')}\n`);
    expect(name.stderr).not.toMatch(/deprecated/);
    expect((await run(['vnfpkg-build', SAMPLE, '-o', join(dir, 'a.zip'), '-f', join(dir, 'b.zip')])).code).toBe(2);
    const none = await run(['vnfpkg-build', SAMPLE]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/needs the zip to write\nhint: .*--file PACKAGE\.zip/);
  });
});

describe('vnfpkg-download', () => {
  it('writes --file, needs --force over an existing one, prints the package with -o', async () => {
    const zip = join(dir, 'onboard.zip');
    expect((await run(['vnfpkg-build', SAMPLE, '-f', zip])).code).toBe(0);
    expect((await run(['vnfpkg-onboard', zip, '--name', 'cnf'])).code).toBe(0);
    const back = join(dir, 'back.zip');
    expect((await run(['vnfpkg-download', 'cnf', '-f', back])).code).toBe(0);
    expect(readFileSync(back).equals(readFileSync(zip))).toBe(true);
    const mtime = statSync(back).mtimeMs;
    const again = await run(['vnfpkg-download', 'cnf', '-f', back]);
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(/already exists\nhint: choose another --file, or pass --force/);
    expect(statSync(back).mtimeMs).toBe(mtime);
    const hash = await run(['vnfpkg-download', 'cnf', '-f', back, '--force', '-o', 'jsonpath={.checksum.hash}']);
    expect(hash.code).toBe(0);
    expect(hash.stdout.trim()).toMatch(/^[0-9a-f]{64}$/);
    const legacy = await run(['vnfpkg-download', 'cnf', '-o', join(dir, 'old.zip')]);
    expect(legacy.code).toBe(0);
    expect(legacy.stderr).toMatch(/-o FILE is deprecated/);
    expect(existsSync(join(dir, 'old.zip'))).toBe(true);
  });
});

describe('vnf-kubeconfig', () => {
  it('refuses an existing --file before asking anything, and warns about -o FILE', async () => {
    const existing = join(dir, 'workload.kubeconfig');
    writeFileSync(existing, 'kept');
    const refused = await run(['vnf-kubeconfig', 'workload-1', '-f', existing]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/workload\.kubeconfig already exists\nhint: .*--force/);
    expect(readFileSync(existing, 'utf8')).toBe('kept');
    const legacy = await run(['vnf-kubeconfig', 'workload-1', '-o', join(dir, 'new.kubeconfig')]);
    expect(legacy.stderr).toMatch(/-o FILE is deprecated/);
    expect(legacy.code).toBe(3);
    expect(existsSync(join(dir, 'new.kubeconfig'))).toBe(false);
  });
});

describe('sample-export', () => {
  it('writes into a directory that is not empty only with --force', async () => {
    const out = join(dir, 'sample');
    expect((await run(['sample-export', 'basic-cnf', out])).code).toBe(0);
    writeFileSync(join(out, 'README.md'), 'changed');
    const refused = await run(['sample-export', 'basic-cnf', out]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/is not empty\nhint: .*--force/);
    expect(readFileSync(join(out, 'README.md'), 'utf8')).toBe('changed');
    expect((await run(['sample-export', 'basic-cnf', out, '--force'])).code).toBe(0);
    expect(readFileSync(join(out, 'README.md'), 'utf8')).toMatch(/basic/i);
  });
});
