/**
 * Package rules taken from Tacker: SOL004 manifest metadata at column 0 is
 * read as the metadata block (Tacker reads only the Source/Algorithm/Hash
 * blocks), and a node template of an unknown type is refused whether or not
 * a policy names it (Tacker's TOSCA parser refuses it), while the TOSCA
 * normative types resolve without an import.
 */
import { resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseManifest } from '../../src/csar/manifest.js';
import { loadVnfd } from '../../src/vnfd/index.js';
import { memoryPackage, readDirectoryTree } from '../support/memory-package.js';

const HASH = 'a'.repeat(64);

describe('SOL004 manifest metadata at column 0', () => {
  test('is the metadata block, with one note, and the file blocks still parse', () => {
    const text = [
      'metadata:',
      'vnf_provider_id: Example Edge',
      'vnf_product_name: Swap',
      'vnf_release_date_time: 2026-03-01T09:30:00+00:00',
      'vnf_package_version: 2.1',
      '',
      'Source: Definitions/swap_top.vnfd.yaml',
      'Algorithm: SHA-256',
      `Hash: ${HASH}`,
      '',
    ].join('\n');
    const { manifest, findings } = parseManifest(text, 'swap.mf');
    expect(manifest.metadata).toEqual({
      vnf_provider_id: 'Example Edge',
      vnf_product_name: 'Swap',
      vnf_release_date_time: '2026-03-01T09:30:00+00:00',
      vnf_package_version: '2.1',
    });
    expect(findings).toEqual([expect.objectContaining({ severity: 'info', code: 'manifest-metadata-unindented', line: 2 })]);
    expect(manifest.artifacts).toMatchObject([{ path: 'Definitions/swap_top.vnfd.yaml', algorithm: 'SHA-256', hash: HASH, line: 7 }]);
  });

  test('a Source: line right after metadata: still starts a file block', () => {
    const { manifest, findings } = parseManifest(`metadata:\nSource: a.yaml\nAlgorithm: SHA-256\nHash: ${HASH}\n`, 'm.mf');
    expect(manifest.metadata).toEqual({});
    expect(manifest.artifacts).toMatchObject([{ path: 'a.yaml' }]);
    expect(findings.filter((f) => f.code === 'manifest-metadata-unindented')).toEqual([]);
  });
});

describe('node template types', () => {
  const CNF_TOP = 'Definitions/sample_cnf_top.vnfd.yaml';
  const CNF_DF = 'Definitions/sample_cnf_df_simple.yaml';
  const withNode = async (node: string) => {
    const members = await readDirectoryTree(resolve(import.meta.dirname, '../fixtures/vnfd/cnf'));
    const df = members[CNF_DF]!;
    const at = df.indexOf('\n  policies:');
    if (at < 0) throw new Error('fixture has no policies section');
    members[CNF_DF] = `${df.slice(0, at)}\n${node}${df.slice(at)}`;
    return (await loadVnfd(memoryPackage(members), CNF_TOP)).findings;
  };

  test('an unknown tosca.* type that no policy names is an error', async () => {
    const findings = await withNode('    Spare:\n      type: tosca.nodes.nfv.Vdu.Computer\n      properties:\n        name: spare\n');
    expect(findings).toEqual([
      expect.objectContaining({ severity: 'error', code: 'type-unknown', file: CNF_DF, message: expect.stringContaining('Spare has type tosca.nodes.nfv.Vdu.Computer') }),
    ]);
  });

  test('TOSCA normative and further SOL001 types resolve without an import', async () => {
    for (const type of ['tosca.nodes.Compute', 'tosca.nodes.network.Port', 'tosca.nodes.nfv.VipCp']) {
      expect(await withNode(`    Extra:\n      type: ${type}\n`)).toEqual([]);
    }
  });
});
