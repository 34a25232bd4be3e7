/**
 * V8's code cache of the chunks (scripts/chunk-loader.ts): a command that
 * loads a chunk leaves its compiled code in VNFM_HOME/cache, the next one
 * uses it as it is, a damaged cache is replaced, and a cache directory
 * others may write is neither read nor written.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';

const root = resolve(import.meta.dirname, '../..');
const work = mkdtempSync(join(tmpdir(), 'vnfm-chunk-cache-'));
const sample = join(root, 'csar-samples', 'basic-cnf', 'package');

/** Validates a package: a command that loads the YAML chunk. */
function validate(home: string): { code: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, 'vnfpkg-validate', sample], {
    env: { PATH: process.env['PATH'], HOME: work, VNFM_HOME: home, NO_COLOR: '1' },
    encoding: 'utf8',
  });
  return { code: r.status, stderr: r.stderr };
}

const yamlCaches = (home: string) => readdirSync(join(home, 'cache')).filter((f) => /^chunk-js-yaml-v\d+\.\d+\.\d+-[\w]+-[0-9a-f]{24}\.v8$/.test(f));

describe('the chunks keep their code cache', () => {
  it('is written by the first command that loads the chunk, used as it is by the next, and replaced when damaged', () => {
    const home = join(work, 'home');
    mkdirSync(home, { mode: 0o700 });
    expect(validate(home).code).toBe(0);
    const [name] = yamlCaches(home);
    expect(name).toBeDefined();
    const file = join(home, 'cache', name!);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const written = readFileSync(file);
    expect(written.length).toBeGreaterThan(1000);

    const before = statSync(file);
    expect(validate(home).code).toBe(0);
    const after = statSync(file);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);

    writeFileSync(file, Buffer.alloc(written.length, 7));
    expect(validate(home).code).toBe(0);
    expect(yamlCaches(home)).toEqual([name]);
    expect(readFileSync(file).equals(Buffer.alloc(written.length, 7))).toBe(false);
  });

  it('neither reads nor writes a cache directory others may write', () => {
    const home = join(work, 'open-home');
    mkdirSync(join(home, 'cache'), { recursive: true, mode: 0o700 });
    chmodSync(home, 0o700);
    expect(validate(home).code).toBe(0);
    const [name] = yamlCaches(home);
    const file = join(home, 'cache', name!);
    const damaged = Buffer.alloc(64, 7);
    writeFileSync(file, damaged);
    chmodSync(join(home, 'cache'), 0o777);
    const r = validate(home);
    expect(r.code).toBe(0);
    expect(readFileSync(file).equals(damaged)).toBe(true);
  });

  it('is not made without a home: a command in a missing VNFM_HOME creates nothing for its chunks', () => {
    const home = join(work, 'missing-home');
    const r = validate(home);
    expect(r.code).toBe(0);
    expect(() => readdirSync(home)).toThrow();
  });
});
