/**
 * What start-up loads. `--version`, `vim-list` and `vnf-list` need the store
 * and a printer: they must not read any chunk (the Kubernetes client, YAML,
 * the sandbox, the drivers), and the main bundle must not carry the rooms
 * that scripts/bundle.mjs puts in chunks. Speed itself is measured by
 * bench/startup.mjs, not here.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';

const root = resolve(import.meta.dirname, '../..');
const work = mkdtempSync(join(tmpdir(), 'vnfm-startup-'));
// Records every file under build/chunks/ the program reads, written out at exit.
const preload = join(work, 'record-chunks.cjs');
writeFileSync(
  preload,
  `const fs = require('node:fs');
const read = fs.readFileSync;
const seen = [];
fs.readFileSync = function (file, ...rest) {
  if (typeof file === 'string' && file.includes('/chunks/')) seen.push(file.split('/').pop());
  return read.call(this, file, ...rest);
};
process.on('exit', () => fs.writeFileSync(process.env.CHUNK_RECORD, JSON.stringify(seen)));
`,
);

function chunksRead(args: string[], home: string): { code: number | null; chunks: string[]; stdout: string } {
  const record = join(work, `record-${Math.random().toString(36).slice(2)}.json`);
  const r = spawnSync(process.execPath, ['--require', preload, BIN, ...args], {
    env: { PATH: process.env['PATH'], HOME: work, VNFM_HOME: home, CHUNK_RECORD: record, NO_COLOR: '1' },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, chunks: JSON.parse(readFileSync(record, 'utf8')) as string[] };
}

describe('start-up', () => {
  const home = join(work, 'home');

  it.each([[['--version']], [['vim-list']], [['vnf-list']], [['vnf-list', '-o', 'json']], [['op-list']]])('vnfm %j reads no chunk', (args) => {
    const r = chunksRead(args, home);
    expect(r.code).toBe(0);
    expect(r.chunks).toEqual([]);
  });

  it('sandbox --help reads no chunk; validating a package reads the YAML chunk (so the recorder sees chunks)', () => {
    const r = chunksRead(['sandbox', '--help'], home);
    expect(r.code).toBe(0);
    expect(r.chunks).toEqual([]);
    const v = chunksRead(['vnfpkg-validate', join(root, 'csar-samples', 'basic-cnf', 'package')], home);
    expect(v.code).toBe(0);
    expect(v.chunks).toContain('js-yaml.cjs');
  });

  it('the sandbox, the infrastructure drivers and the management drivers are chunks, not in the main bundle', () => {
    const chunks = readdirSync(join(root, 'build', 'chunks'));
    expect(chunks).toEqual(expect.arrayContaining(['room-sandbox.cjs', 'room-kubernetes.cjs', 'room-openstack.cjs']));
    const main = readFileSync(join(root, 'build', 'vnfm.cjs'), 'utf8');
    // esbuild marks each module it bundles with a `// <source path>` line.
    const modules = [...main.matchAll(/^\/\/ (src\/\S+)$/gm)].map((m) => m[1]);
    expect(modules.length).toBeGreaterThan(50);
    expect(modules.filter((m) => m.startsWith('src/sandbox/'))).toEqual([]);
    expect(modules.filter((m) => m === 'src/infra/kubernetes/driver.ts' || m === 'src/infra/openstack/heat.ts')).toEqual([]);
  });
});
