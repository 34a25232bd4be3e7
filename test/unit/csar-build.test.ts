import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildCsar } from '../../src/csar/build.js';
import { checkCsarStructure } from '../../src/csar/check-structure.js';
import { openPackage } from '../../src/csar/open-package.js';
import { PackageError } from '../../src/csar/package-error.js';

const tmp = mkdtempSync(join(tmpdir(), 'vnfm-csar-build-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Tree = Record<string, string | Buffer>;
const META = [
  'TOSCA-Meta-File-Version: 1.0',
  'CSAR-Version: 1.1',
  'Created-by: Tacker',
  'Entry-Definitions: Definitions/top.yaml',
  'ETSI-Entry-Manifest: manifest.mf',
  '',
  'Name: Scripts/install.sh',
  'Content-Type: application/sh',
  'Algorithm: SHA-256',
  'Hash: stale',
  '',
  'Name: Files/images/disk.img',
  'Content-Type: application/x-iso9066-image',
  '',
].join('\n');
const MANIFEST = [
  'metadata:',
  '  vnf_provider_id: Company',
  '  vnf_product_name: Sample',
  '  vnf_release_date_time: 2024-01-01T00:00:00Z',
  '  vnf_package_version: 1.0',
  '',
  'Source: Definitions/top.yaml',
  'Algorithm: SHA-512',
  '',
  'Source: Files/kubernetes/deployment.yaml',
  '',
].join('\n');

const goodTree = (): Tree => ({
  'TOSCA-Metadata/TOSCA.meta': META,
  'manifest.mf': MANIFEST,
  'Definitions/top.yaml': 'tosca_definitions_version: tosca_simple_yaml_1_2\n'.repeat(50),
  'Definitions/etsi_nfv_sol001_common_types.yaml': 'x: 1\n'.repeat(500),
  'Files/kubernetes/deployment.yaml': 'apiVersion: apps/v1\nkind: Deployment\n',
  'Files/images/disk.img': Buffer.alloc(300_000, 7),
  'Scripts/install.sh': '#!/bin/sh\necho hi\n',
  'Files/ünïcode.txt': 'names in UTF-8',
});

let n = 0;
function writeTree(tree: Tree): string {
  const dir = join(tmp, `t${n++}`);
  for (const [p, c] of Object.entries(tree)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), c);
  }
  if (tree['Scripts/install.sh'] !== undefined) chmodSync(join(dir, 'Scripts/install.sh'), 0o755);
  return dir;
}

describe('buildCsar', () => {
  it('builds a zip that opens, passes every hash check and fills the hashes in', async () => {
    const dir = writeTree(goodTree());
    const out = join(tmp, 'good.csar');
    const result = await buildCsar(dir, out);
    expect(result.entries).toBe(8);
    expect(result.bytes).toBe(readFileSync(out).length);

    const files = await openPackage(out);
    expect(files.list()).toHaveLength(8);
    const { meta, manifest, findings } = await checkCsarStructure(files);
    expect(findings).toEqual([]);
    expect(meta?.entries.map((e) => [e.name, e.algorithm, e.hash?.length])).toEqual([
      ['Scripts/install.sh', 'SHA-256', 64],
      ['Files/images/disk.img', 'SHA-256', 64],
    ]);
    expect(manifest?.artifacts.map((a) => [a.source, a.algorithm, a.hash?.length])).toEqual([
      ['Definitions/top.yaml', 'SHA-512', 128],
      ['Files/kubernetes/deployment.yaml', 'SHA-256', 64],
    ]);
    await files.close();
    // The tree itself is left as it was.
    expect(readFileSync(join(dir, 'TOSCA-Metadata/TOSCA.meta'), 'utf8')).toBe(META);
    expect(readFileSync(join(dir, 'manifest.mf'), 'utf8')).toBe(MANIFEST);
    // Nothing but the zip is left in the output folder.
    expect(readdirSync(tmp).filter((f) => f.startsWith('.'))).toEqual([]);
  });

  it('gives byte-identical zips for the same tree, and honours SOURCE_DATE_EPOCH', async () => {
    const a = join(tmp, 'a.zip');
    const b = join(tmp, 'b.zip');
    await buildCsar(writeTree(goodTree()), a);
    await buildCsar(writeTree(goodTree()), b);
    expect(readFileSync(a).equals(readFileSync(b))).toBe(true);

    const c = join(tmp, 'c.zip');
    const d = join(tmp, 'd.zip');
    await buildCsar(writeTree(goodTree()), c, { sourceDateEpoch: 1_700_000_000 });
    await buildCsar(writeTree(goodTree()), d, { sourceDateEpoch: 1_700_000_000 });
    expect(readFileSync(c).equals(readFileSync(d))).toBe(true);
    expect(readFileSync(c).equals(readFileSync(a))).toBe(false);
    expect(execFileSync('unzip', ['-Z', '-T', c], { encoding: 'utf8' })).toMatch(/20231114\.2213/);
  });

  it('writes a zip unzip accepts, storing images and large members and keeping the executable bit', async () => {
    const out = join(tmp, 'unzip.zip');
    await buildCsar(writeTree(goodTree()), out, { storeAbove: 100_000 });
    expect(execFileSync('unzip', ['-t', out], { encoding: 'utf8' })).toMatch(/No errors detected/);
    const listing = execFileSync('unzip', ['-Zv', out], { encoding: 'utf8' });
    const methodOf = (name: string) =>
      new RegExp(`Central directory entry #\\d+:\\s+-+\\s+${name.replace(/[.]/g, '\\.')}[\\s\\S]*?compression method:\\s+(\\w+)`).exec(listing)?.[1];
    expect(methodOf('Files/images/disk.img')).toBe('none');
    expect(methodOf('Definitions/top.yaml')).toBe('deflated');
    const short = execFileSync('unzip', ['-Z', out], { encoding: 'utf8' });
    expect(short).toMatch(/-rwxr-xr-x.*Scripts\/install\.sh/);
    expect(short).toMatch(/-rw-r--r--.*Definitions\/top\.yaml/);
    const extracted = join(tmp, 'extracted');
    execFileSync('unzip', ['-q', out, '-d', extracted]);
    expect(readFileSync(join(extracted, 'Files/ünïcode.txt'), 'utf8')).toBe('names in UTF-8');
  });

  it('keeps CRLF line endings in the TOSCA.meta it rewrites', async () => {
    const tree = goodTree();
    tree['TOSCA-Metadata/TOSCA.meta'] = META.replace(/\n/g, '\r\n');
    const out = join(tmp, 'crlf.zip');
    await buildCsar(writeTree(tree), out);
    const files = await openPackage(out);
    const text = await files.readText('TOSCA-Metadata/TOSCA.meta');
    expect(text.split('\r\n').length).toBeGreaterThan(10);
    expect(text.replace(/\r\n/g, '')).not.toMatch(/\n/);
    expect((await checkCsarStructure(files)).findings).toEqual([]);
    await files.close();
  });

  it('leaves its own output out when writing inside the tree', async () => {
    const dir = writeTree(goodTree());
    const out = join(dir, 'pkg.zip');
    await buildCsar(dir, out);
    const first = readFileSync(out);
    await buildCsar(dir, out);
    expect(readFileSync(out).equals(first)).toBe(true);
  });

  const refusals: Array<[string, (t: Tree) => void, string]> = [
    ['no TOSCA.meta', (t) => delete t['TOSCA-Metadata/TOSCA.meta'], 'tosca-meta-missing'],
    ['a missing Entry-Definitions', (t) => delete t['Definitions/top.yaml'], 'entry-definitions-missing'],
    ['a listed member that is absent', (t) => delete t['Scripts/install.sh'], 'listed-member-missing'],
    ['an unknown algorithm', (t) => (t['manifest.mf'] = MANIFEST.replace('SHA-512', 'MD5')), 'hash-algorithm-unsupported'],
    ['a manifest listing itself', (t) => (t['manifest.mf'] = `${MANIFEST}\nSource: manifest.mf\n`), 'hash-cycle'],
  ];
  it.each(refusals)('refuses %s and writes nothing', async (_name, change, code) => {
    const tree = goodTree();
    change(tree);
    const outDir = mkdtempSync(join(tmp, 'out-'));
    const err = await buildCsar(writeTree(tree), join(outDir, 'x.zip')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PackageError);
    expect((err as PackageError).findings.map((f) => f.code)).toContain(code);
    expect(readdirSync(outDir)).toEqual([]);
  });

  it('refuses a tree holding a symlink', async () => {
    const dir = writeTree(goodTree());
    symlinkSync('/etc/passwd', join(dir, 'Files/passwd'));
    await expect(buildCsar(dir, join(tmp, 'link.zip'))).rejects.toMatchObject({ code: 'symlink' });
  });

  it('refuses an output folder that does not exist', async () => {
    await expect(buildCsar(writeTree(goodTree()), join(tmp, 'no/such/dir/x.zip'))).rejects.toThrow(/cannot write/);
  });
});
