/**
 * The master key leaves vnfm's process environment as soon as the command
 * context exists, so no process vnfm starts can inherit it; the keyring
 * still reads it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createContext } from '../../src/cli/context.js';
import { IO } from '../../src/cli/io.js';
import { generateFernetKey, keyIdOf } from '../../src/crypto/index.js';

const io = () => new IO({ stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() }, {});
const saved = { key: process.env['VNFM_MASTER_KEY'], home: process.env['VNFM_HOME'] };

afterEach(() => {
  for (const [name, value] of [
    ['VNFM_MASTER_KEY', saved.key],
    ['VNFM_HOME', saved.home],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('VNFM_MASTER_KEY', () => {
  it('is gone from process.env once the context exists, and the keyring still has it', async () => {
    const key = generateFernetKey();
    process.env['VNFM_MASTER_KEY'] = key;
    process.env['VNFM_HOME'] = join(mkdtempSync(join(tmpdir(), 'vnfm-keyenv-')), 'home');
    const ctx = createContext(io(), process.env, process.cwd());
    try {
      expect(process.env['VNFM_MASTER_KEY']).toBeUndefined();
      const child = spawnSync('/usr/bin/env', [], { encoding: 'utf8' });
      expect(child.stdout).toContain('VNFM_HOME=');
      expect(child.stdout).not.toContain(key);
      const keyring = await ctx.keyring();
      expect(keyring.source).toBe('env');
      expect(keyring.primaryKeyId).toBe(keyIdOf(key));
      expect(process.env['VNFM_MASTER_KEY']).toBeUndefined();
    } finally {
      await ctx.close();
    }
  });
});
