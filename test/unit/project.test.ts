import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../../src/cli/version.js';
import { readVimConfigFile } from '../../src/vim/vim-config.js';

const root = resolve(import.meta.dirname, '../..');

describe('what ships', () => {
  it("the version vnfm reports is package.json's", () => {
    expect(VERSION).toBe(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
  });

  it.each([
    ['vim-config-kubernetes.yaml', 'kubernetes'],
    ['vim-config-openstack.yaml', 'openstack'],
  ])('templates/%s is a valid vim-config', (file, type) => {
    const cfg = readVimConfigFile(join(root, 'templates', file));
    expect(cfg.spec.type).toBe(type);
    expect(cfg.warnings.filter((w) => w.includes('unknown field'))).toEqual([]);
  });
});
