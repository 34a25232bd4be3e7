import { resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { Finding } from '../../src/model/package-files.js';
import { loadVnfd } from '../../src/vnfd/index.js';
import { memoryPackage, readDirectoryTree } from '../support/memory-package.js';

const FIXTURES = resolve(import.meta.dirname, '../fixtures/vnfd');
const CNF_TOP = 'Definitions/sample_cnf_top.vnfd.yaml';
const CNF_DF = 'Definitions/sample_cnf_df_simple.yaml';
const CNF_TYPES = 'Definitions/sample_cnf_types.yaml';
const SINGLE = 'Definitions/vnfd_single.yaml';
const HEAT_TOP = 'Definitions/heat_top.vnfd.yaml';
const HEAT_DF = 'Definitions/heat_df_simple.yaml';

type Members = Record<string, string>;

async function fixture(name: 'cnf' | 'single' | 'heat'): Promise<Members> {
  return readDirectoryTree(resolve(FIXTURES, name));
}

/** Replaces `from` (which must occur exactly once, so a drifting fixture fails loudly) in one member. */
function edit(members: Members, file: string, from: string, to: string): Members {
  const text = members[file];
  if (text === undefined) throw new Error(`no ${file} in fixture`);
  const count = text.split(from).length - 1;
  if (count !== 1) throw new Error(`${JSON.stringify(from)} occurs ${count} times in ${file}`);
  return { ...members, [file]: text.replace(from, to) };
}

/** 1-based line of the only line of `file` containing `marker`. */
function lineContaining(members: Members, file: string, marker: string): number {
  const lines = members[file]!.split('\n');
  const hits = lines.flatMap((l, i) => (l.includes(marker) ? [i + 1] : []));
  if (hits.length !== 1) throw new Error(`${JSON.stringify(marker)} is on ${hits.length} lines of ${file}`);
  return hits[0]!;
}

const errors = (findings: Finding[]) => findings.filter((f) => f.severity === 'error');

describe('loadVnfd on good descriptors', () => {
  test('a Tacker-style CNF: top, types and flavour files', async () => {
    const { vnfd, findings } = await loadVnfd(memoryPackage(await fixture('cnf')), CNF_TOP);
    expect(findings).toEqual([]);
    expect(vnfd).toMatchObject({
      id: '4f3c2a10-7d55-4f0e-9a61-2b8c0d9e1a77',
      provider: 'Example Networks',
      productName: 'Web Frontend',
      softwareVersion: '2.1',
      descriptorVersion: '1.0',
      vnfmInfo: ['Tacker'],
      vnfNodeType: 'example.vnfm.WebFrontend',
      topFile: CNF_TOP,
      files: [CNF_TOP, CNF_TYPES, CNF_DF],
    });
    expect(vnfd!.imports.filter((i) => i.builtin).map((i) => i.ref)).toContain('etsi_nfv_sol001_vnfd_types.yaml');
    expect(vnfd!.imports.find((i) => i.ref === 'sample_cnf_df_simple.yaml')?.resolved).toBe(CNF_DF);

    const simple = vnfd!.flavours.simple!;
    expect(Object.keys(vnfd!.flavours)).toEqual(['simple']);
    expect(simple).toMatchObject({ id: 'simple', description: 'One web tier and one cache', file: CNF_DF, defaultLevel: 'instantiation_level_1' });
    expect(simple.vdus.VDU1).toMatchObject({
      nodeName: 'VDU1',
      name: 'web',
      type: 'tosca.nodes.nfv.Vdu.Compute',
      vduProfile: { minNumberOfInstances: 1, maxNumberOfInstances: 4 },
      isComputeNode: true,
    });
    expect(simple.vdus.VDU1!.swImage).toBeUndefined();
    expect(simple.aspects.web_aspect).toEqual({
      id: 'web_aspect',
      name: 'web_aspect',
      description: 'scale the web tier',
      maxScaleLevel: 3,
      stepDeltas: ['delta_1'],
      vduDeltas: { VDU1: { delta_1: 1 } },
    });
    expect(simple.initialDeltas).toEqual({ VDU1: 1, VDU2: 1 });
    expect(simple.instantiationLevels.instantiation_level_2).toEqual({
      id: 'instantiation_level_2',
      description: 'Largest size',
      scaleInfo: { web_aspect: { scaleLevel: 3 } },
      vduInstances: { VDU1: 4, VDU2: 1 },
    });
    expect(simple.hooks).toEqual({
      instantiate_end: { implementation: 'post-install', artifactFile: 'Scripts/post_install.py', artifactType: 'tosca.artifacts.Implementation.Python' },
      heal_end: { implementation: 'post-install', artifactFile: 'Scripts/post_install.py', artifactType: 'tosca.artifacts.Implementation.Python' },
    });
  });

  test('a single-file VNFD importing the ETSI types by forge.etsi.org URL', async () => {
    const { vnfd, findings } = await loadVnfd(memoryPackage(await fixture('single')), SINGLE);
    expect(findings).toEqual([]);
    expect(vnfd!.id).toBe('0d3f5c3e-2b7a-4a5e-8f0e-2f6f1d6c9b01');
    expect(vnfd!.imports.every((i) => i.builtin)).toBe(true);
    expect(Object.keys(vnfd!.flavours)).toEqual(['tiny']);
    expect(vnfd!.flavours.tiny!.vdus.ECHO!.name).toBe('echo');
    expect(vnfd!.flavours.tiny!.description).toBe('One echo pod');
  });

  test('a single file without substitution_mappings still yields its flavour', async () => {
    let members = await fixture('single');
    members = edit(members, SINGLE, '  substitution_mappings:\n    node_type: example.vnfm.Echo\n    properties:\n      flavour_id: tiny\n', '');
    const { vnfd, findings } = await loadVnfd(memoryPackage(members), SINGLE);
    expect(findings).toEqual([]);
    expect(Object.keys(vnfd!.flavours.tiny!.vdus)).toEqual(['ECHO']);
  });

  test('a Heat-style VNFD: images, compute, storage, CPs, VLs, aspects, placement', async () => {
    const { vnfd, findings } = await loadVnfd(memoryPackage(await fixture('heat')), HEAT_TOP);
    expect(findings).toEqual([]);
    const simple = vnfd!.flavours.simple!;
    expect(simple.description).toBe('App servers behind a database');
    expect(simple.vdus.VDU1!.swImage).toMatchObject({
      name: 'cirros-0.6.2',
      version: '0.6.2',
      checksum: { algorithm: 'sha-256' },
      diskFormat: 'qcow2',
      containerFormat: 'bare',
      minRam: '256 MB',
      file: 'Files/images/cirros-0.6.2-x86_64-disk.img',
    });
    expect(simple.vdus.VDU1!.virtualCompute).toEqual({ flavorName: 'm1.tiny', numVirtualCpu: 1, virtualMemSize: '512 MB', localStorageSizes: ['1 GB'] });
    expect(simple.vdus.VDU2!.requirements.virtualStorage).toEqual(['VirtualStorage']);
    expect(simple.storages.VirtualStorage).toMatchObject({ isComputeNode: false, sizeOfStorage: '10 GB', swImage: { name: 'db-image' } });
    expect(simple.cps.VDU1_CP2).toEqual({ nodeName: 'VDU1_CP2', type: 'tosca.nodes.nfv.VduCp', vdu: 'VDU1', virtualLink: 'internalVL1', order: 1, layerProtocols: ['ipv4'] });
    expect(simple.cps.VDU1_CP1!.virtualLink).toBeUndefined();
    expect(simple.virtualLinks.internalVL1).toMatchObject({ layerProtocols: ['ipv4'], l3: [{ ipVersion: 'ipv4', cidr: '10.10.0.0/24' }] });
    expect(simple.aspects.app_instance!.maxScaleLevel).toBe(2);
    expect(simple.instantiationLevels.instantiation_level_2!.vduInstances).toEqual({ VDU1: 3, VDU2: 1 });
    expect(simple.placementGroups).toEqual({ app_group: ['VDU1'] });
    expect(simple.affinityRules).toEqual([{ policyName: 'app_anti_affinity', kind: 'anti-affinity', scope: 'nfvi_node', targets: ['app_group'] }]);
    // The artifact is written relative to the flavour file (../Scripts/...), and resolves to the package path.
    expect(simple.hooks.scale_end).toEqual({ implementation: 'app-config', artifactFile: 'Scripts/app_config.py', artifactType: 'tosca.artifacts.Implementation.Python' });
    expect(simple.hooks.terminate_start).toBeUndefined();
  });

  test('shipped ETSI type files are read instead of the built-in table', async () => {
    const members = await fixture('cnf');
    members['Definitions/etsi_nfv_sol001_vnfd_types.yaml'] = [
      'tosca_definitions_version: tosca_simple_yaml_1_2',
      'node_types:',
      '  tosca.nodes.nfv.VNF:',
      '    derived_from: tosca.nodes.Root',
      '',
    ].join('\n');
    const { vnfd, findings } = await loadVnfd(memoryPackage(members), CNF_TOP);
    expect(findings).toEqual([]);
    expect(vnfd!.files).toContain('Definitions/etsi_nfv_sol001_vnfd_types.yaml');
    expect(vnfd!.imports.find((i) => i.ref === 'etsi_nfv_sol001_vnfd_types.yaml')).toMatchObject({ resolved: 'Definitions/etsi_nfv_sol001_vnfd_types.yaml' });
  });
});

interface BrokenCase {
  name: string;
  fixture: 'cnf' | 'single' | 'heat';
  entry?: string;
  break: (m: Members) => Members;
  code: string;
  file: string;
  /** Text on the line the finding must point at (in the broken file). */
  lineOf?: string;
  line?: number;
  hint: RegExp;
  severity?: Finding['severity'];
}

const entryOf = { cnf: CNF_TOP, single: SINGLE, heat: HEAT_TOP } as const;

const broken: BrokenCase[] = [
  {
    name: 'YAML syntax error in a flavour file',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, '        description: cache StatefulSet\n', '        description: cache: StatefulSet\n'),
    code: 'yaml-syntax',
    file: CNF_DF,
    lineOf: 'description: cache: StatefulSet',
    hint: /indentation|quoting/,
  },
  {
    name: 'duplicate key',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_TOP, "        software_version: '2.1'\n", "        software_version: '2.1'\n        software_version: '2.2'\n"),
    code: 'yaml-syntax',
    file: CNF_TOP,
    lineOf: "software_version: '2.2'",
    hint: /only once/,
  },
  {
    name: 'alias bomb',
    fixture: 'cnf',
    break: (m) =>
      edit(
        m,
        CNF_TYPES,
        'node_types:\n',
        [
          'metadata:',
          '  a: &a [x, x, x, x, x, x, x, x, x, x]',
          '  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
          '  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
          '  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
          '  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]',
          '  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]',
          '  g: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]',
          'node_types:',
          '',
        ].join('\n'),
      ),
    code: 'yaml-bounds',
    file: CNF_TYPES,
    hint: /aliases/,
  },
  {
    name: 'import that is not in the package',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_TOP, '  - sample_cnf_df_simple.yaml\n', '  - sample_cnf_df_simple.yaml\n  - sample_cnf_df_gold.yaml\n'),
    code: 'import-unresolved',
    file: CNF_TOP,
    lineOf: 'sample_cnf_df_gold.yaml',
    hint: /add the file to the package/,
  },
  {
    name: 'import by URL other than the ETSI types',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_TOP, '  - sample_cnf_types.yaml\n', '  - sample_cnf_types.yaml\n  - https://example.com/types/extra.yaml\n'),
    code: 'import-unresolved',
    file: CNF_TOP,
    lineOf: 'https://example.com/types/extra.yaml',
    hint: /ship the file inside the package/,
  },
  {
    name: 'import escaping the package',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_TOP, '  - sample_cnf_types.yaml\n', '  - sample_cnf_types.yaml\n  - ../../../etc/types.yaml\n'),
    code: 'import-escapes-package',
    file: CNF_TOP,
    lineOf: '../../../etc/types.yaml',
    hint: /inside the package/,
  },
  {
    name: 'no tosca_definitions_version',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_TYPES, 'tosca_definitions_version: tosca_simple_yaml_1_2\n', ''),
    code: 'tosca-version-missing',
    file: CNF_TYPES,
    line: 1,
    hint: /tosca_simple_yaml_1_2/,
  },
  {
    name: 'no VNF node anywhere',
    fixture: 'single',
    break: (m) => edit(m, SINGLE, '    VNF:\n      type: example.vnfm.Echo\n', '    VNF:\n      type: tosca.nodes.Root\n'),
    code: 'vnf-node-missing',
    file: SINGLE,
    lineOf: '  node_templates:',
    hint: /derives from tosca.nodes.nfv.VNF/,
  },
  {
    name: 'no flavour (flavour file not imported)',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_TOP, '  - sample_cnf_df_simple.yaml\n', ''),
    code: 'flavour-missing',
    file: CNF_TOP,
    hint: /substitution_mappings/,
  },
  {
    name: 'flavour_id not allowed by the VNF type (Tacker instantiates it: a warning)',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, '      flavour_id: simple\n', '      flavour_id: complex\n'),
    code: 'flavour-id-not-allowed',
    file: CNF_DF,
    lineOf: 'flavour_id: complex',
    hint: /valid_values in Definitions\/sample_cnf_types.yaml/,
    severity: 'warning',
  },
  {
    name: 'top VNFD names a flavour no file defines',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_TOP, 'flavour_id: { get_input: selected_flavour }', 'flavour_id: gold'),
    code: 'flavour-id-mismatch',
    file: CNF_TOP,
    lineOf: 'flavour_id: gold',
    hint: /get_input: selected_flavour/,
  },
  {
    name: 'VNF node and substitution_mappings disagree in a single file',
    fixture: 'single',
    break: (m) => edit(m, SINGLE, '        flavour_id: tiny\n', '        flavour_id: small\n'),
    code: 'flavour-id-mismatch',
    file: SINGLE,
    lineOf: 'flavour_id: small',
    hint: /same flavour_id/,
  },
  {
    name: 'substitution_mappings without flavour_id',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, '    properties:\n      flavour_id: simple\n', ''),
    code: 'flavour-id-missing',
    file: CNF_DF,
    lineOf: '  substitution_mappings:',
    hint: /flavour_id/,
  },
  {
    name: 'VNF property missing',
    fixture: 'single',
    break: (m) => edit(m, SINGLE, '        provider: Example Networks\n', ''),
    code: 'vnf-property-missing',
    file: SINGLE,
    lineOf: '    VNF:',
    hint: /properties.provider/,
  },
  {
    name: 'initial delta targets a missing VDU',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, '        targets: [ VDU2 ]\n\n    - web_scaling_aspect_deltas:', '        targets: [ VDU9 ]\n\n    - web_scaling_aspect_deltas:'),
    code: 'policy-target-missing',
    file: CNF_DF,
    lineOf: 'targets: [ VDU9 ]',
    hint: /VDU1, VDU2/,
  },
  {
    name: 'aspect delta targets a missing VDU',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, '              number_of_instances: 1\n        targets: [ VDU1 ]', '              number_of_instances: 1\n        targets: [ VDU3 ]'),
    code: 'policy-target-missing',
    file: CNF_DF,
    lineOf: 'targets: [ VDU3 ]',
    hint: /Vdu.Compute node of this flavour/,
  },
  {
    name: 'VduScalingAspectDeltas names a missing aspect',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, '          aspect: web_aspect\n', '          aspect: db_aspect\n'),
    code: 'aspect-missing',
    file: CNF_DF,
    lineOf: 'aspect: db_aspect',
    hint: /web_aspect/,
  },
  {
    name: 'delta id not in step_deltas',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, '          deltas:\n            delta_1:', '          deltas:\n            delta_big:'),
    code: 'delta-unknown',
    file: CNF_DF,
    lineOf: 'delta_big:',
    hint: /add delta_big to step_deltas of web_aspect/,
  },
  {
    name: 'step delta with no VDU delta',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, '                - delta_1\n', '                - delta_1\n                - delta_2\n'),
    code: 'delta-missing',
    file: CNF_DF,
    lineOf: '          deltas:',
    hint: /delta_2: \{number_of_instances: 1\}/,
  },
  {
    name: 'instantiation level names a missing aspect',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, 'Largest size\n              scale_info:\n                web_aspect:', 'Largest size\n              scale_info:\n                cache_aspect:'),
    code: 'aspect-missing',
    file: CNF_DF,
    lineOf: 'cache_aspect:',
    hint: /web_aspect/,
  },
  {
    name: 'scale level above max_scale_level',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, '                  scale_level: 3\n', '                  scale_level: 5\n'),
    code: 'scale-level-out-of-range',
    file: CNF_DF,
    lineOf: 'scale_level: 5',
    hint: /between 0 and 3/,
  },
  {
    name: 'default_level not among the levels',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, 'default_level: instantiation_level_1', 'default_level: instantiation_level_9'),
    code: 'default-level-missing',
    file: CNF_DF,
    lineOf: 'default_level: instantiation_level_9',
    hint: /one of the levels/,
  },
  {
    name: 'several levels, no default_level',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, '          default_level: instantiation_level_1\n', ''),
    code: 'default-level-missing',
    severity: 'warning',
    file: CNF_DF,
    hint: /instantiationLevelId/,
  },
  {
    name: 'vdu_profile min above max',
    fixture: 'cnf',
    break: (m) =>
      edit(
        m,
        CNF_DF,
        '          min_number_of_instances: 1\n          max_number_of_instances: 4\n',
        '          min_number_of_instances: 5\n          max_number_of_instances: 4\n',
      ),
    code: 'vdu-profile-invalid',
    file: CNF_DF,
    lineOf: 'min_number_of_instances: 5',
    hint: /lower the minimum/,
  },
  {
    name: 'vdu_profile missing',
    fixture: 'single',
    break: (m) => edit(m, SINGLE, '        vdu_profile:\n          min_number_of_instances: 1\n          max_number_of_instances: 1\n', ''),
    code: 'vdu-profile-invalid',
    file: SINGLE,
    lineOf: '    ECHO:',
    hint: /min_number_of_instances: 1/,
  },
  {
    name: 'level instances outside vdu_profile (Tacker onboards it: a warning)',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, '              number_of_instances: 4\n', '              number_of_instances: 7\n'),
    code: 'level-instances-out-of-range',
    file: CNF_DF,
    lineOf: 'number_of_instances: 7',
    hint: /a number in 1\.\.4/,
    severity: 'warning',
  },
  {
    name: 'initial delta outside vdu_profile (Tacker instantiates it: a warning)',
    fixture: 'cnf',
    break: (m) =>
      edit(
        m,
        CNF_DF,
        'initial_delta:\n            number_of_instances: 1\n        targets: [ VDU1 ]',
        'initial_delta:\n            number_of_instances: 5\n        targets: [ VDU1 ]',
      ),
    code: 'initial-delta-out-of-range',
    file: CNF_DF,
    lineOf: 'number_of_instances: 5',
    hint: /a number in 1\.\.4/,
    severity: 'warning',
  },
  {
    name: 'VduInstantiationLevels names an undefined level',
    fixture: 'cnf',
    break: (m) =>
      edit(m, CNF_DF, '            instantiation_level_2:\n              number_of_instances: 1\n', '            instantiation_level_3:\n              number_of_instances: 1\n'),
    code: 'level-missing',
    file: CNF_DF,
    lineOf: 'instantiation_level_3:',
    hint: /instantiation_level_1, instantiation_level_2/,
  },
  {
    name: 'hook implementation names no artifact',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, '          heal_end:\n            implementation: post-install\n', '          heal_end:\n            implementation: heal-script\n'),
    code: 'hook-artifact-missing',
    file: CNF_DF,
    lineOf: 'implementation: heal-script',
    hint: /post-install/,
  },
  {
    name: 'hook with no implementation',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, '          heal_end:\n            implementation: post-install\n', '          heal_end:\n            description: heal\n'),
    code: 'hook-artifact-missing',
    file: CNF_DF,
    lineOf: 'heal_end:',
    hint: /"heal_end: \[\]"/,
  },
  {
    name: 'hook artifact file absent from the package',
    fixture: 'heat',
    entry: HEAT_TOP,
    break: (m) => edit(m, HEAT_DF, 'file: ../Scripts/app_config.py', 'file: /usr/lib/tacker/mgmt_drivers/app_config.py'),
    code: 'hook-artifact-file-missing',
    file: HEAT_DF,
    lineOf: 'file: /usr/lib/tacker/mgmt_drivers/app_config.py',
    hint: /Scripts\//,
  },
  {
    name: 'sw_image artifact file absent',
    fixture: 'heat',
    break: (m) => edit(m, HEAT_DF, 'file: ../Files/images/cirros-0.6.2-x86_64-disk.img', 'file: ../Files/images/cirros-0.5.img'),
    code: 'artifact-file-missing',
    file: HEAT_DF,
    lineOf: 'cirros-0.5.img',
    hint: /Files\/images/,
  },
  {
    name: 'CP links to a missing virtual link',
    fixture: 'heat',
    break: (m) =>
      edit(m, HEAT_DF, '        - virtual_binding: VDU2\n        - virtual_link: internalVL1\n', '        - virtual_binding: VDU2\n        - virtual_link: internalVL9\n'),
    code: 'requirement-target-missing',
    file: HEAT_DF,
    lineOf: 'virtual_link: internalVL9',
    hint: /VnfVirtualLink/,
  },
  {
    name: 'placement group member missing',
    fixture: 'heat',
    break: (m) => edit(m, HEAT_DF, 'members: [ VDU1 ]', 'members: [ VDU7 ]'),
    code: 'group-member-missing',
    file: HEAT_DF,
    lineOf: 'members: [ VDU7 ]',
    hint: /VDU1, VDU2/,
  },
  {
    name: 'anti-affinity rule targets nothing known',
    fixture: 'heat',
    break: (m) => edit(m, HEAT_DF, 'targets: [ app_group ]', 'targets: [ web_group ]'),
    code: 'policy-target-missing',
    file: HEAT_DF,
    lineOf: 'targets: [ web_group ]',
    hint: /VDU1/,
  },
  {
    name: 'unknown package node type',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, '    VDU2:\n      type: tosca.nodes.nfv.Vdu.Compute\n', '    VDU2:\n      type: example.vnfm.Cache\n'),
    code: 'type-unknown',
    file: CNF_DF,
    lineOf: 'type: example.vnfm.Cache',
    hint: /import the definitions file/,
  },
  {
    name: 'misspelt SOL001 type',
    fixture: 'cnf',
    break: (m) => edit(m, CNF_DF, '    VDU2:\n      type: tosca.nodes.nfv.Vdu.Compute\n', '    VDU2:\n      type: tosca.nodes.nfv.Vdu.Compte\n'),
    code: 'type-unknown',
    file: CNF_DF,
    lineOf: 'type: tosca.nodes.nfv.Vdu.Compte',
    hint: /tosca.nodes.nfv.Vdu.Compute/,
  },
  {
    name: 'VDU without a name',
    fixture: 'single',
    break: (m) => edit(m, SINGLE, '        name: echo\n', ''),
    code: 'vdu-name-missing',
    file: SINGLE,
    lineOf: '    ECHO:',
    hint: /metadata.name/,
  },
];

describe('loadVnfd on broken descriptors', () => {
  test.each(broken)('$name → $code', async (c) => {
    const members = c.break(await fixture(c.fixture));
    const { findings } = await loadVnfd(memoryPackage(members), c.entry ?? entryOf[c.fixture]);
    const hits = findings.filter((f) => f.code === c.code && f.file === c.file);
    expect(hits, JSON.stringify(findings, null, 2)).not.toHaveLength(0);
    const hit = hits[0]!;
    expect(hit.severity).toBe(c.severity ?? 'error');
    if (c.lineOf !== undefined) {
      // A multi-line marker points at its first line; the finding must be on one of its lines.
      const first = lineContaining(members, c.file, c.lineOf.split('\n')[0]!);
      const span = c.lineOf.split('\n').length;
      expect(hit.line).toBeGreaterThanOrEqual(first);
      expect(hit.line).toBeLessThan(first + span);
    }
    if (c.line !== undefined) expect(hit.line).toBe(c.line);
    expect(hit.hint).toMatch(c.hint);
    expect(hit.message.length).toBeGreaterThan(10);
  });

  test('the entry file itself missing', async () => {
    const { vnfd, findings } = await loadVnfd(memoryPackage(await fixture('cnf')), 'Definitions/nope.yaml');
    expect(vnfd).toBeUndefined();
    expect(findings).toEqual([expect.objectContaining({ code: 'entry-definitions-missing', file: 'Definitions/nope.yaml', hint: expect.stringMatching(/Entry-Definitions/) })]);
  });

  test('a long import chain stops at the bound with one finding', async () => {
    const members = await fixture('single');
    const chain = 40;
    members[SINGLE] = members[SINGLE]!.replace('imports:\n', 'imports:\n  - chain_0.yaml\n');
    for (let i = 0; i < chain; i++) {
      members[`Definitions/chain_${i}.yaml`] = `tosca_definitions_version: tosca_simple_yaml_1_2\nimports:\n  - chain_${i + 1}.yaml\n`;
    }
    members[`Definitions/chain_${chain}.yaml`] = 'tosca_definitions_version: tosca_simple_yaml_1_2\n';
    const { vnfd, findings } = await loadVnfd(memoryPackage(members), SINGLE);
    expect(findings.filter((f) => f.code === 'import-limit')).toHaveLength(1);
    expect(vnfd!.files.length).toBeLessThanOrEqual(17);
  });

  test('an import cycle is read once per file, not forever', async () => {
    const members = await fixture('cnf');
    members[CNF_TYPES] = members[CNF_TYPES]!.replace('imports:\n', 'imports:\n  - sample_cnf_top.vnfd.yaml\n');
    const { vnfd, findings } = await loadVnfd(memoryPackage(members), CNF_TOP);
    expect(findings).toEqual([]);
    expect(vnfd!.files).toEqual([CNF_TOP, CNF_TYPES, CNF_DF]);
  });

  test('every problem is reported, not just the first', async () => {
    let members = await fixture('cnf');
    members = edit(members, CNF_TOP, '  - sample_cnf_types.yaml\n', '  - sample_cnf_types.yaml\n  - extra_types.yaml\n');
    members = edit(members, CNF_DF, '          aspect: web_aspect\n', '          aspect: db_aspect\n');
    members = edit(members, CNF_DF, '                  scale_level: 3\n', '                  scale_level: 9\n');
    members = edit(members, CNF_DF, 'default_level: instantiation_level_1', 'default_level: level_x');
    members = edit(members, CNF_DF, 'file: Scripts/post_install.py', 'file: Scripts/missing.py');
    const { vnfd, findings } = await loadVnfd(memoryPackage(members), CNF_TOP);
    // The broken references are findings; the descriptor itself still loads.
    expect(Object.keys(vnfd?.flavours['simple']?.vdus ?? {})).toContain('VDU1');
    expect(new Set(errors(findings).map((f) => f.code))).toEqual(
      new Set(['import-unresolved', 'aspect-missing', 'scale-level-out-of-range', 'default-level-missing', 'hook-artifact-file-missing']),
    );
    // One finding per hook that uses the missing artifact.
    expect(findings.filter((f) => f.code === 'hook-artifact-file-missing').map((f) => f.message)).toEqual([
      expect.stringContaining('instantiate_end'),
      expect.stringContaining('heal_end'),
    ]);
  });
});

describe('what Tacker onboards and instantiates is a warning that says what vnfm does', () => {
  const warningsOf = (findings: Finding[], code: string) => findings.filter((f) => f.code === code);

  test('a flavour id outside the type’s valid_values: the flavour is read and marked, no error', async () => {
    const members = edit(await fixture('cnf'), CNF_DF, '      flavour_id: simple\n', '      flavour_id: vdumap\n');
    const { vnfd, findings } = await loadVnfd(memoryPackage(members), CNF_TOP);
    expect(errors(findings)).toEqual([]);
    expect(warningsOf(findings, 'flavour-id-not-allowed')).toEqual([
      expect.objectContaining({
        severity: 'warning',
        message: expect.stringMatching(
          /flavour vdumap is not one of the flavour_id values .* allows \(simple\); vnfm, as Tacker, onboards the package and instantiates flavour vdumap/,
        ),
      }),
    ]);
    expect(vnfd!.flavours['vdumap']).toMatchObject({ typeAllowsOnly: ['simple'] });
    expect(Object.keys(vnfd!.flavours['vdumap']!.vdus)).toEqual(['VDU1', 'VDU2']);
  });

  test('an initial delta outside vdu_profile that the levels override: the message says the levels set the count', async () => {
    const members = edit(
      await fixture('cnf'),
      CNF_DF,
      'initial_delta:\n            number_of_instances: 1\n        targets: [ VDU1 ]',
      'initial_delta:\n            number_of_instances: 5\n        targets: [ VDU1 ]',
    );
    const { findings } = await loadVnfd(memoryPackage(members), CNF_TOP);
    expect(errors(findings)).toEqual([]);
    const [w] = warningsOf(findings, 'initial-delta-out-of-range');
    expect(w!.message).toBe(
      "initial delta web_initial_delta gives VDU1 5 instances, outside its vdu_profile 1..4; vnfm, as Tacker, accepts it: an instantiate does not use it, the instantiation levels set VDU1's instances (1 at instantiation_level_1, 4 at instantiation_level_2), as Tacker v2 grants them",
    );
  });

  test('an initial delta outside vdu_profile that an instantiate uses: the counts per level, and the scale rule', async () => {
    let members = edit(
      await fixture('cnf'),
      CNF_DF,
      'initial_delta:\n            number_of_instances: 1\n        targets: [ VDU1 ]',
      'initial_delta:\n            number_of_instances: 0\n        targets: [ VDU1 ]',
    );
    const webLevels = members[CNF_DF]!.slice(members[CNF_DF]!.indexOf('    - web_instantiation_levels:'), members[CNF_DF]!.indexOf('    - cache_instantiation_levels:'));
    members = edit(members, CNF_DF, webLevels, '');
    const { vnfd, findings } = await loadVnfd(memoryPackage(members), CNF_TOP);
    expect(errors(findings)).toEqual([]);
    expect(warningsOf(findings, 'initial-delta-out-of-range').map((f) => f.message)).toEqual([
      "initial delta web_initial_delta gives VDU1 0 instances, outside its vdu_profile 1..4; vnfm, as Tacker, accepts it: an instantiate gives VDU1 the initial delta plus the aspects' deltas at the level, as Tacker v1 does (0 at instantiation_level_1, 3 at instantiation_level_2), and a scale that would leave VDU1 outside 1..4 is refused, as in Tacker",
    ]);
    expect(vnfd!.flavours['simple']!.initialDeltas['VDU1']).toBe(0);
  });
});

describe('software images: the artifact Tacker takes, and where sw_image_data is written', () => {
  const ARTIFACT = '      artifacts:\n        sw_image:\n          type: tosca.artifacts.nfv.SwImage\n          file: ../Files/images/cirros-0.6.2-x86_64-disk.img\n';

  test('the image, its checksum line and the file; a URL is kept as the image’s url, not a member', async () => {
    const members = await fixture('heat');
    const { vnfd } = await loadVnfd(memoryPackage(members), HEAT_TOP);
    expect(vnfd!.flavours.simple!.vdus.VDU1!.swImage).toMatchObject({
      file: 'Files/images/cirros-0.6.2-x86_64-disk.img',
      source: { file: HEAT_DF, line: lineContaining(members, HEAT_DF, 'hash: d0c6eef0') },
    });
    const url = edit(members, HEAT_DF, 'file: ../Files/images/cirros-0.6.2-x86_64-disk.img', 'file: https://images.example.net/cirros.img');
    const loaded = await loadVnfd(memoryPackage(url), HEAT_TOP);
    expect(errors(loaded.findings)).toEqual([]);
    const image = loaded.vnfd!.flavours.simple!.vdus.VDU1!.swImage!;
    expect(image.url).toBe('https://images.example.net/cirros.img');
    expect(image.file).toBeUndefined();
  });

  test('an artifact of type tosca.artifacts.nfv.SwImage under another name, or the short form, is the image', async () => {
    const renamed = edit(await fixture('heat'), HEAT_DF, ARTIFACT, ARTIFACT.replace('sw_image:', 'VDU1_image:'));
    const byType = await loadVnfd(memoryPackage(renamed), HEAT_TOP);
    expect(errors(byType.findings)).toEqual([]);
    expect(byType.vnfd!.flavours.simple!.vdus.VDU1!.swImage!.file).toBe('Files/images/cirros-0.6.2-x86_64-disk.img');

    const short = edit(await fixture('heat'), HEAT_DF, ARTIFACT, '      artifacts:\n        sw_image: ../Files/images/cirros-0.6.2-x86_64-disk.img\n');
    const shortForm = await loadVnfd(memoryPackage(short), HEAT_TOP);
    expect(errors(shortForm.findings)).toEqual([]);
    expect(shortForm.vnfd!.flavours.simple!.vdus.VDU1!.swImage!.file).toBe('Files/images/cirros-0.6.2-x86_64-disk.img');
  });

  test('an image artifact without sw_image_data is refused, as Tacker refuses it', async () => {
    const members = await fixture('heat');
    const text = members[HEAT_DF]!;
    const data = text.slice(text.indexOf('        sw_image_data:\n          name: cirros-0.6.2'), text.indexOf(ARTIFACT));
    const { findings } = await loadVnfd(memoryPackage(edit(members, HEAT_DF, data, '')), HEAT_TOP);
    expect(errors(findings).map((f) => [f.code, f.file, f.line])).toEqual([
      ['sw-image-data-missing', HEAT_DF, lineContaining(edit(members, HEAT_DF, data, ''), HEAT_DF, '        sw_image:')],
    ]);
    expect(errors(findings)[0]!.message).toMatch(/VDU1 has the image artifact sw_image but no properties\.sw_image_data/);
  });
});
