import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkCsarStructure, type CheckStructureOptions } from '../../src/csar/check-structure.js';
import type { Finding } from '../../src/model/package-files.js';
import { openPackage } from '../../src/csar/open-package.js';
import { buildZip } from '../support/zip-builder.js';

const tmp = mkdtempSync(join(tmpdir(), 'vnfm-csar-check-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const sha = (alg: string, s: string) => createHash(alg).update(s).digest('hex');
const VNFD = 'tosca_definitions_version: tosca_simple_yaml_1_2\n';
const SCRIPT = '#!/bin/sh\necho hello\n';
const IMAGE = 'not really a disk image';

function metaText(extra = ''): string {
  return [
    'TOSCA-Meta-File-Version: 1.0',
    'CSAR-Version: 1.1',
    'Created-by: Tacker',
    'Entry-Definitions: Definitions/top.yaml',
    'ETSI-Entry-Manifest: manifest.mf',
    '',
    'Name: Scripts/install.sh',
    'Content-Type: application/sh',
    'Algorithm: SHA-256',
    `Hash: ${sha('sha256', SCRIPT)}`,
    '',
    'Name: Files/images/disk.img',
    'Content-Type: application/x-iso9066-image',
    'Algorithm: SHA-256',
    `Hash: ${sha('sha256', IMAGE)}`,
    extra,
  ].join('\n');
}
function manifestText(extra = ''): string {
  return [
    'metadata:',
    '  vnf_provider_id: Company',
    '  vnf_product_name: Sample',
    '  vnf_release_date_time: 2024-01-01T00:00:00Z',
    '  vnf_package_version: 1.0',
    '',
    'Source: Definitions/top.yaml',
    'Algorithm: SHA-512',
    `Hash: ${sha('sha512', VNFD).toUpperCase()}`,
    '',
    'Source: Scripts/install.sh',
    'Algorithm: sha-384',
    `Hash: ${sha('sha384', SCRIPT)}`,
    extra,
  ].join('\n');
}

type Tree = Record<string, string>;
const goodTree = (): Tree => ({
  'TOSCA-Metadata/TOSCA.meta': metaText(),
  'manifest.mf': manifestText(),
  'Definitions/top.yaml': VNFD,
  'Scripts/install.sh': SCRIPT,
  'Files/images/disk.img': IMAGE,
});

let n = 0;
function writeTree(tree: Tree): string {
  const dir = join(tmp, `t${n++}`);
  for (const [p, c] of Object.entries(tree)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), c);
  }
  return dir;
}
function writeTreeZip(tree: Tree): string {
  const file = join(tmp, `z${n++}.zip`);
  writeFileSync(file, buildZip(Object.entries(tree).map(([name, data]) => ({ name, data }))));
  return file;
}
async function check(path: string, opts?: CheckStructureOptions): Promise<Finding[]> {
  const files = await openPackage(path);
  try {
    return (await checkCsarStructure(files, opts)).findings;
  } finally {
    await files.close();
  }
}
const errs = (fs: Finding[]) => fs.filter((f) => f.severity === 'error').map((f) => ({ code: f.code, file: f.file, line: f.line }));

describe('checkCsarStructure', () => {
  it.each([
    ['directory', writeTree],
    ['zip', writeTreeZip],
  ])('passes a good package (%s), returning TOSCA.meta and the manifest', async (_kind, write) => {
    const files = await openPackage(write(goodTree()));
    const { meta, manifest, findings } = await checkCsarStructure(files);
    expect(findings).toEqual([]);
    expect(meta?.entryDefinitions).toBe('Definitions/top.yaml');
    expect(meta?.entries.map((e) => [e.name, e.contentType, e.algorithm])).toEqual([
      ['Scripts/install.sh', 'application/sh', 'SHA-256'],
      ['Files/images/disk.img', 'application/x-iso9066-image', 'SHA-256'],
    ]);
    expect(manifest?.metadata.vnf_product_name).toBe('Sample');
    await files.close();
  });

  it('finds a hash mismatch in TOSCA.meta and in the manifest, all at once', async () => {
    const tree = goodTree();
    tree['Scripts/install.sh'] = '#!/bin/sh\nrm -rf /\n';
    expect(errs(await check(writeTree(tree)))).toEqual([
      { code: 'hash-mismatch', file: 'Scripts/install.sh', line: undefined },
      { code: 'hash-mismatch', file: 'Scripts/install.sh', line: undefined },
    ]);
  });

  it('finds members listed but absent, with their lines', async () => {
    const tree = goodTree();
    tree['TOSCA-Metadata/TOSCA.meta'] = metaText('\nName: Scripts/gone.sh\nContent-Type: x\n');
    tree['manifest.mf'] = manifestText(`\nSource: Files/gone.yaml\nAlgorithm: SHA-256\nHash: ${'0'.repeat(64)}\n`);
    expect(errs(await check(writeTreeZip(tree)))).toEqual([
      { code: 'listed-member-missing', file: 'TOSCA-Metadata/TOSCA.meta', line: 17 },
      { code: 'listed-member-missing', file: 'manifest.mf', line: 15 },
    ]);
  });

  it('finds a missing manifest and a missing Entry-Definitions', async () => {
    const tree = goodTree();
    delete tree['manifest.mf'];
    delete tree['Definitions/top.yaml'];
    tree['Definitions/Top.yaml'] = VNFD;
    const findings = await check(writeTree(tree));
    expect(errs(findings)).toEqual([
      { code: 'entry-definitions-missing', file: 'TOSCA-Metadata/TOSCA.meta', line: 4 },
      { code: 'manifest-missing', file: 'TOSCA-Metadata/TOSCA.meta', line: 5 },
    ]);
    expect(findings[0]!.hint).toMatch(/did you mean Definitions\/Top.yaml/);
  });

  it('finds ETSI-Entry-Licenses and -Change-Log that are not there, and accepts a Licenses folder', async () => {
    const tree = goodTree();
    tree['TOSCA-Metadata/TOSCA.meta'] = metaText().replace('ETSI-Entry-Manifest', 'ETSI-Entry-Licenses: Licenses\nETSI-Entry-Change-Log: ChangeLog.txt\nETSI-Entry-Manifest');
    expect(errs(await check(writeTree(tree)))).toEqual([
      { code: 'entry-file-missing', file: 'TOSCA-Metadata/TOSCA.meta', line: 6 },
      { code: 'entry-file-missing', file: 'TOSCA-Metadata/TOSCA.meta', line: 5 },
    ]);
    tree['Licenses/LICENSE.txt'] = 'Apache-2.0';
    tree['ChangeLog.txt'] = 'v1';
    expect(errs(await check(writeTree(tree)))).toEqual([]);
  });

  it('reports a missing TOSCA.meta, and says so for a SOL004 option 2 package', async () => {
    expect(errs(await check(writeTree({ 'Definitions/top.yaml': VNFD })))).toEqual([{ code: 'tosca-meta-missing', file: 'TOSCA-Metadata/TOSCA.meta', line: undefined }]);
    const findings = await check(writeTreeZip({ 'vnfd.yaml': 'tosca_definitions_version: tosca_simple_yaml_1_2\nmetadata:\n  template_name: x\n', 'vnfd.mf': manifestText() }));
    expect(errs(findings)).toEqual([{ code: 'tosca-meta-missing', file: 'TOSCA-Metadata/TOSCA.meta', line: undefined }]);
    expect(findings[0]!.message).toMatch(/option 2/);
    expect(findings[0]!.hint).toMatch(/Entry-Definitions: vnfd.yaml/);
  });

  it('skips image hashes when asked, saying so', async () => {
    const tree = goodTree();
    tree['Files/images/disk.img'] = 'a different image';
    expect(errs(await check(writeTree(tree)))).toEqual([{ code: 'hash-mismatch', file: 'Files/images/disk.img', line: undefined }]);
    const skipped = await check(writeTree(tree), { skipImageHashes: true });
    expect(skipped.map((f) => [f.severity, f.code, f.file])).toEqual([['info', 'hash-not-checked', 'Files/images/disk.img']]);
  });

  it('notes external artifacts without fetching them', async () => {
    const tree = goodTree();
    tree['manifest.mf'] = manifestText(`\nSource: http://127.0.0.1:9/image.qcow2\nAlgorithm: SHA-256\nHash: ${'0'.repeat(64)}\n`);
    const findings = await check(writeTree(tree));
    expect(findings.map((f) => [f.severity, f.code, f.line])).toEqual([['info', 'external-artifact', 15]]);
  });

  it('warns about a manifest TOSCA.meta does not name', async () => {
    const tree = goodTree();
    tree['TOSCA-Metadata/TOSCA.meta'] = metaText().replace('ETSI-Entry-Manifest: manifest.mf\n', '');
    const findings = await check(writeTree(tree));
    expect(findings.map((f) => [f.severity, f.code])).toEqual([['warning', 'manifest-not-referenced']]);
  });

  it('reports a TOSCA.meta too large to be metadata', async () => {
    const tree = goodTree();
    tree['TOSCA-Metadata/TOSCA.meta'] = metaText() + '\n' + '#'.repeat(5 * 1024 * 1024);
    expect(errs(await check(writeTree(tree)))).toEqual([{ code: 'text-too-large', file: 'TOSCA-Metadata/TOSCA.meta', line: undefined }]);
  });
});
