/**
 * Package rules taken from Tacker: SOL004 manifest metadata at column 0 is
 * read as the metadata block (Tacker reads only the Source/Algorithm/Hash
 * blocks), and a node template of an unknown type is refused whether or not
 * a policy names it (Tacker's TOSCA parser refuses it), while the TOSCA
 * normative types resolve without an import. A flavour id its VNF type does
 * not list and instance counts outside a vdu_profile, which Tacker onboards
 * and instantiates, are instantiated with a warning saying what was done.
 */
import { resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseManifest } from '../../src/csar/manifest.js';
import { instantiateWarnings, levelReplicas } from '../../src/lcm/replicas.js';
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

describe('what an instantiate says of a VNFD Tacker instantiates against its own rules', () => {
  const CNF_TOP = 'Definitions/sample_cnf_top.vnfd.yaml';
  const CNF_DF = 'Definitions/sample_cnf_df_simple.yaml';
  const DELTA = 'initial_delta:\n            number_of_instances: 1\n        targets: [ VDU1 ]';
  const flavourOf = async (change: (df: string) => string, id = 'simple') => {
    const members = await readDirectoryTree(resolve(import.meta.dirname, '../fixtures/vnfd/cnf'));
    members[CNF_DF] = change(members[CNF_DF]!);
    const { vnfd, findings } = await loadVnfd(memoryPackage(members), CNF_TOP);
    expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
    return vnfd!.flavours[id]!;
  };
  const once = (text: string, from: string, to: string) => {
    if (text.split(from).length !== 2) throw new Error(`${JSON.stringify(from)} is not in the fixture once`);
    return text.replace(from, to);
  };
  /** The fixture without VDU1's VduInstantiationLevels: its count comes from the initial delta and the aspect. */
  const withoutVdu1Levels = (df: string) => df.slice(0, df.indexOf('    - web_instantiation_levels:')) + df.slice(df.indexOf('    - cache_instantiation_levels:'));

  test('a flavour id the VNF type does not list', async () => {
    const f = await flavourOf((df) => once(df, '      flavour_id: simple\n', '      flavour_id: vdumap\n'), 'vdumap');
    expect(instantiateWarnings(f)).toEqual([
      'warning: flavour vdumap is not one of the flavour_id values its VNF node type allows (simple): instantiated all the same, as Tacker does',
    ]);
  });

  test('an initial delta below the vdu_profile that the instantiate uses: that many are created, and the warning says so', async () => {
    const f = await flavourOf((df) => withoutVdu1Levels(once(df, DELTA, DELTA.replace('instances: 1', 'instances: 0'))));
    expect(levelReplicas(f).replicas['VDU1']).toBe(0);
    expect(instantiateWarnings(f)).toEqual([
      "warning: VDU1 gets 0 instances (its initial delta plus the aspects' deltas at instantiation_level_1, as Tacker v1 counts them), outside its vdu_profile 1..4: created all the same; a scale that would leave VDU1 outside 1..4 is refused, as in Tacker",
    ]);
    // At the level whose aspect steps bring the count inside the profile, the initial delta is still named.
    expect(levelReplicas(f, 'instantiation_level_2').replicas['VDU1']).toBe(3);
    expect(instantiateWarnings(f, 'instantiation_level_2')).toEqual([
      "warning: the initial delta of VDU1 (0) is outside its vdu_profile 1..4; VDU1 gets 3 instances (its initial delta plus the aspects' deltas at instantiation_level_2, as Tacker v1 counts them)",
    ]);
  });

  test('an initial delta outside the vdu_profile that the level overrides, and a level outside it', async () => {
    const f = await flavourOf((df) =>
      once(once(df, DELTA, DELTA.replace('instances: 1', 'instances: 6')), '              number_of_instances: 4\n', '              number_of_instances: 7\n'),
    );
    expect(instantiateWarnings(f)).toEqual([
      'warning: the initial delta of VDU1 (6) is outside its vdu_profile 1..4; VDU1 gets 1 instance (VduInstantiationLevels at instantiation_level_1, as Tacker v2 grants them)',
    ]);
    expect(instantiateWarnings(f, 'instantiation_level_2')).toEqual([
      'warning: VDU1 gets 7 instances (VduInstantiationLevels at instantiation_level_2, as Tacker v2 grants them), outside its vdu_profile 1..4: created all the same; a scale that would leave VDU1 outside 1..4 is refused, as in Tacker',
    ]);
  });

  test('nothing for a VNFD that keeps its rules', async () => {
    const f = await flavourOf((df) => df);
    expect(instantiateWarnings(f)).toEqual([]);
    expect(instantiateWarnings(f, 'instantiation_level_2')).toEqual([]);
  });
});
