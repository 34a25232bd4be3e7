import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPackage } from '../../src/csar/index.js';
import { ValidationError, UsageError, VnfmError } from '../../src/errors.js';
import {
  isAbsent,
  loadInstanceEnvironments,
  NO_ENVIRONMENTS,
  readHeatEnvironments,
  readStackTemplates,
  saveInstanceEnvironments,
  withEnvironments,
} from '../../src/lcm/heat-files.js';
import { buildNfvParameter, cpsByVdu } from '../../src/lcm/heat-nfv.js';
import { jsonMergePatch } from '../../src/lcm/merge-patch.js';
import { levelReplicas } from '../../src/lcm/replicas.js';
import { loadVnfd, type Flavour } from '../../src/vnfd/index.js';

const SAMPLE = resolve('csar-samples/heat-vnf/package');
const ENV = resolve('test/fixtures/heat/env/nova-neutron-standins.yaml');
let flavour: Flavour;

beforeAll(async () => {
  const files = await openPackage(SAMPLE);
  try {
    const { vnfd } = await loadVnfd(files, 'Definitions/heat_vnf_top.vnfd.yaml');
    flavour = vnfd!.flavours['simple']!;
  } finally {
    await files.close();
  }
});

const extVl = (cpConfig: Record<string, unknown>, extra: Record<string, unknown> = {}) => [
  {
    id: 'ext1',
    resourceId: 'net-public',
    extCps: [
      { cpdId: 'VDU1_CP1', cpConfig },
      { cpdId: 'VDU2_CP1', cpConfig: { a: {} } },
    ],
    ...extra,
  },
];

describe('the nfv parameter of the heat-vnf sample', () => {
  it('desired_capacity from each instantiation level, flavour and image from the VDUs', () => {
    for (const [level, vdu1] of [
      ['instantiation_level_1', 1],
      ['instantiation_level_2', 3],
    ] as const) {
      const nfv = buildNfvParameter(flavour, levelReplicas(flavour, level).replicas);
      expect(nfv.VDU).toEqual({
        VDU1: { desired_capacity: vdu1, computeFlavourId: 'm1.tiny', vcImageId: 'cirros-0.5.2-x86_64-disk' },
        VDU2: { desired_capacity: 1, computeFlavourId: 'm1.tiny', vcImageId: 'cirros-0.5.2-x86_64-disk' },
      });
      expect(nfv.CP).toEqual({});
    }
  });

  it('locationConstraints when a zone is known', () => {
    const nfv = buildNfvParameter(flavour, { VDU1: 2, VDU2: 1 }, { zone: 'az-1' });
    expect(nfv.VDU['VDU1']).toMatchObject({ desired_capacity: 2, locationConstraints: 'az-1' });
  });

  it('network, port and fixed_ips from extVirtualLinks', () => {
    const dynamic = buildNfvParameter(
      flavour,
      { VDU1: 1, VDU2: 1 },
      {
        extVirtualLinks: extVl({ c: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', numDynamicAddresses: 1 }] } }] } }),
      },
    );
    expect(dynamic.CP).toEqual({ VDU1_CP1: { network: 'net-public' }, VDU2_CP1: { network: 'net-public' } });

    const fixed = buildNfvParameter(
      flavour,
      { VDU1: 1, VDU2: 1 },
      {
        extVirtualLinks: extVl({
          c: {
            cpProtocolData: [
              {
                layerProtocol: 'IP_OVER_ETHERNET',
                ipOverEthernet: {
                  ipAddresses: [
                    { type: 'IPV4', fixedAddresses: ['192.0.2.10', '192.0.2.11'], subnetId: 'sub-1' },
                    { type: 'IPV4', subnetId: 'sub-2', numDynamicAddresses: 1 },
                  ],
                },
              },
            ],
          },
        }),
      },
    );
    expect(fixed.CP['VDU1_CP1']).toEqual({
      network: 'net-public',
      fixed_ips: [{ ip_address: '192.0.2.10', subnet: 'sub-1' }, { ip_address: '192.0.2.11', subnet: 'sub-1' }, { subnet: 'sub-2' }],
    });

    const port = buildNfvParameter(
      flavour,
      { VDU1: 1, VDU2: 1 },
      {
        extVirtualLinks: extVl({ c: { linkPortId: 'lp1' } }, { extLinkPorts: [{ id: 'lp1', resourceHandle: { resourceId: 'port-uuid' } }] }),
      },
    );
    expect(port.CP['VDU1_CP1']).toEqual({ network: 'net-public', port: 'port-uuid' });
  });

  it('additionalParams.nfv is merged over it (JSON merge patch: null removes)', () => {
    const nfv = buildNfvParameter(
      flavour,
      { VDU1: 1, VDU2: 1 },
      {
        overrides: { VDU: { VDU1: { computeFlavourId: 'm1.small', vcImageId: null }, VDU3: { desired_capacity: 0 } }, CP: { VDU1_CP2: { network: 'n2' } }, extra: 1 },
      },
    );
    expect(nfv.VDU['VDU1']).toEqual({ desired_capacity: 1, computeFlavourId: 'm1.small' });
    expect(nfv.VDU['VDU3']).toEqual({ desired_capacity: 0 });
    expect(nfv.CP).toEqual({ VDU1_CP2: { network: 'n2' } });
    expect(nfv['extra']).toBe(1);
    expect(jsonMergePatch({ a: [1] }, { a: [2, 3] })).toEqual({ a: [2, 3] });
  });

  it('connection points by VDU, in order', () => {
    expect(cpsByVdu(flavour)).toEqual({ VDU1: ['VDU1_CP1', 'VDU1_CP2'], VDU2: ['VDU2_CP1', 'VDU2_CP2'] });
  });
});

describe('Base HOT and Heat environments', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vnfm-heat-files-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('the first YAML of BaseHOT/<flavour>/ as the template, nested/ files by name', async () => {
    const hot = await readStackTemplates(SAMPLE, flavour, 'req.json', 'pkg-1');
    expect(hot.templatePath).toBe('BaseHOT/simple/heat_vnf.yaml');
    expect(hot.template).toContain('VDU1_scale_group');
    expect(Object.keys(hot.files)).toEqual(['VDU1.yaml']);
    expect(hot.sources['VDU1.yaml']).toBe('BaseHOT/simple/nested/VDU1.yaml');
  });

  it('a flavour without a Base HOT: the HOT made from the VNFD; exit 2 naming the flavour when the VNFD cannot make one', async () => {
    const big = { ...flavour, id: 'big' };
    const hot = await readStackTemplates(SAMPLE, big, 'req.json', 'pkg-1');
    expect(hot.templatePath).toBe('Definitions/heat_vnf_df_simple.yaml (HOT generated for flavour big)');
    expect(hot.template).toContain('vdu1_aspect_scale_out:');
    const unsized = { ...big, vdus: { ...big.vdus, VDU2: { ...big.vdus['VDU2']!, virtualCompute: undefined } } };
    const err = await readStackTemplates(SAMPLE, unsized, 'req.json', 'pkg-1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toMatch(
      /^req\.json: flavourId: package pkg-1 has no Base HOT for flavour "big" \(BaseHOT\/big\/\), and the HOT of flavour big cannot be made from its VNFD \(Definitions\/heat_vnf_df_simple\.yaml\): VDU VDU2 has no virtual_compute size/,
    );
  });

  it('environment files in order, with the provider templates their resource_registry names, read relative to them', async () => {
    const envs = await readHeatEnvironments([ENV], '/nowhere');
    expect(envs.environmentFiles).toEqual(['env-1-nova-neutron-standins.yaml']);
    expect(Object.keys(envs.files).sort()).toEqual([
      'env-1-nova-neutron-standins.yaml',
      'standins/flavor.yaml',
      'standins/floating-ip.yaml',
      'standins/net.yaml',
      'standins/port.yaml',
      'standins/qos-bandwidth-limit-rule.yaml',
      'standins/qos-policy.yaml',
      'standins/server-group.yaml',
      'standins/server.yaml',
      'standins/subnet.yaml',
      'standins/volume-attachment.yaml',
      'standins/volume-type.yaml',
      'standins/volume.yaml',
    ]);
    expect(envs.sources['standins/server.yaml']).toBe(resolve('test/fixtures/heat/env/standins/server.yaml'));
    const all = withEnvironments(await readStackTemplates(SAMPLE, flavour, 'r', 'p'), envs);
    expect(all.environmentFiles).toEqual(envs.environmentFiles);
    expect(Object.keys(all.files)).toContain('VDU1.yaml');
  });

  it('the environments kept for an instance: none when never saved; one that cannot be read is reported naming the file, not taken as none', async () => {
    const home = join(dir, 'home');
    expect(await loadInstanceEnvironments(home, '00000000-0000-4000-8000-0000000000a1')).toEqual(NO_ENVIRONMENTS);
    const envs = await readHeatEnvironments([ENV], '/nowhere');
    await saveInstanceEnvironments(home, '00000000-0000-4000-8000-0000000000a2', envs);
    expect(await loadInstanceEnvironments(home, '00000000-0000-4000-8000-0000000000a2')).toEqual(envs);
    // Tests run as root, which reads any file whatever its mode: a directory in the file's place fails the read as well (EISDIR).
    const UNREADABLE = '00000000-0000-4000-8000-0000000000a3';
    const file = join(home, 'instances', UNREADABLE, 'heat', 'environments.json');
    await mkdir(file, { recursive: true });
    const err = await loadInstanceEnvironments(home, UNREADABLE).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VnfmError);
    expect((err as Error).message).toBe(`the Heat environments kept for vnf instance ${UNREADABLE} cannot be read: ${file}: EISDIR: illegal operation on a directory, read`);
    // Only a path with nothing at it is "absent": a file vnfm may not read (EACCES) is not.
    expect(isAbsent(Object.assign(new Error('gone'), { code: 'ENOENT' }))).toBe(true);
    expect(isAbsent(Object.assign(new Error('denied'), { code: 'EACCES' }))).toBe(false);
  });

  it('a missing provider template or environment file, or two different files under one name, are refused', async () => {
    await mkdir(join(dir, 'a'));
    await writeFile(join(dir, 'a', 'env.yaml'), 'resource_registry:\n  OS::Nova::Server: gone.yaml\n');
    await expect(readHeatEnvironments([join(dir, 'a', 'env.yaml')], dir)).rejects.toThrow(/cannot read the provider template named in .*env.yaml .*gone.yaml: it does not exist/);
    await expect(readHeatEnvironments(['missing.yaml'], dir)).rejects.toBeInstanceOf(UsageError);
    await mkdir(join(dir, 'b'));
    await writeFile(join(dir, 'a', 's.yaml'), 'heat_template_version: 2018-08-31\n');
    await writeFile(join(dir, 'b', 's.yaml'), 'heat_template_version: 2021-04-16\n');
    await writeFile(join(dir, 'a', 'e.yaml'), 'resource_registry:\n  OS::Nova::Server: s.yaml\n');
    await writeFile(join(dir, 'b', 'e.yaml'), 'resource_registry:\n  resources:\n    VDU1:\n      OS::Nova::Server: s.yaml\n');
    await expect(readHeatEnvironments([join(dir, 'a', 'e.yaml'), join(dir, 'b', 'e.yaml')], dir)).rejects.toThrow(/two different files are named "s.yaml"/);
  });
});
