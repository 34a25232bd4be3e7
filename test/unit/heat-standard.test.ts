/**
 * Tacker v2's StandardUserData as vnfm makes it (heat-standard.ts), on the
 * edge relay package in Tacker's StandardUserData shape: the indexed
 * resources, init_nfv_dict, the values per index, extManagedVirtualLinks,
 * the indexes a scale out takes and a scale in frees, and the CP values of a
 * change of external connectivity.
 */
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openPackage } from '../../src/csar/index.js';
import type { HeatTemplates } from '../../src/infra/openstack/driver-contract.js';
import { parseHot } from '../../src/infra/openstack/hot.js';
import { findBaseHot } from '../../src/lcm/heat-files.js';
import { firstIndexes, initNfvDict, scaleIn, scaleOut, standardExtConnCps, standardNfv, standardTemplates, withoutIndex } from '../../src/lcm/heat-standard.js';
import { loadVnfd, type Flavour } from '../../src/vnfd/index.js';

const PACKAGE = resolve('test/fixtures/tacker-shapes/v2-heat-standard');
let flavour: Flavour;
let hot: HeatTemplates;

beforeAll(async () => {
  const files = await openPackage(PACKAGE);
  try {
    const { vnfd } = await loadVnfd(files, 'Definitions/relay_top.vnfd.yaml');
    flavour = vnfd!.flavours['simple']!;
    hot = (await findBaseHot(files, 'simple'))!;
  } finally {
    await files.close();
  }
});

const links = (network: string, vdu2: Record<string, unknown> = { numDynamicAddresses: 1, subnetId: 'sub-a' }) => [
  {
    id: 'up',
    resourceId: network,
    extCps: [
      {
        cpdId: 'VDU1_CP1',
        cpConfig: { a: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', numDynamicAddresses: 1 }] } }] } },
      },
      { cpdId: 'VDU2_CP1', cpConfig: { b: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', ...vdu2 }] } }] } } },
    ],
  },
];

describe('StandardUserData templates and parameters', () => {
  it('rm_idx as Python rpartition: the last dash only; no dash → empty', () => {
    expect(withoutIndex('VDU2-VirtualStorage-3')).toBe('VDU2-VirtualStorage');
    expect(withoutIndex('VDU1')).toBe('');
  });

  it('one resource per index in place of each VDU; only 4-item get_params of its properties are indexed', () => {
    const t = standardTemplates(hot, flavour, { VDU1: [0, 2], VDU2: [0] });
    const top = parseHot(t.template)!;
    const resources = top['resources'] as Record<string, { properties: Record<string, unknown> }>;
    expect(Object.keys(resources).sort()).toEqual(['VDU1-0', 'VDU1-2', 'VDU2-0', 'internalVL1', 'internalVL1_subnet', 'relay_spread']);
    expect(resources['VDU1-2']!.properties['flavor']).toEqual({ get_param: ['nfv', 'VDU', 'VDU1-2', 'computeFlavourId'] });
    expect(resources['VDU1-2']!.properties['inner']).toEqual({ get_resource: 'internalVL1' });
    expect(top['heat_template_version']).toBe('2013-05-23');
    expect(t.files).toEqual(hot.files);
  });

  it('init_nfv_dict: null leaves, list indexes as keys', () => {
    const top = parseHot(standardTemplates(hot, flavour, { VDU1: [0], VDU2: [0] }).template)!;
    expect(initNfvDict(top)).toEqual({
      VDU: { 'VDU1-0': { computeFlavourId: null, vcImageId: null }, 'VDU2-0': { computeFlavourId: null }, 'VDU2-VirtualStorage-0': { vcImageId: null } },
      CP: { 'VDU1_CP1-0': { network: null }, 'VDU2_CP1-0': { network: null, fixed_ips: { '0': { subnet: null } } } },
    });
  });

  it('values per index from the VNFD and the request; uploaded images by id; additionalParams.nfv merged last', () => {
    const t = standardTemplates(hot, flavour, firstIndexes(flavour, { VDU1: 2, VDU2: 1 }));
    const nfv = standardNfv(t, flavour, {
      extVirtualLinks: links('net-a'),
      images: { VDU1: 'glance-id-1' },
      overrides: { VDU: { 'VDU1-1': { computeFlavourId: 'relay.large' } } },
    });
    expect(nfv.VDU).toEqual({
      'VDU1-0': { computeFlavourId: 'relay.small', vcImageId: 'glance-id-1' },
      'VDU1-1': { computeFlavourId: 'relay.large', vcImageId: 'glance-id-1' },
      'VDU2-0': { computeFlavourId: 'relay.medium' },
      'VDU2-VirtualStorage-0': { vcImageId: 'relay-store-2.0' },
    });
    expect(nfv.CP['VDU2_CP1-0']).toEqual({ network: 'net-a', fixed_ips: [{ subnet: 'sub-a' }] });
    // A CP the request does not connect: null, as Tacker sends it; fixed_ips empty.
    expect(standardNfv(t, flavour, {}).CP['VDU2_CP1-0']).toEqual({ network: null, fixed_ips: [] });
  });

  it("extManagedVirtualLinks: the link's network in place of the template's net and subnet", () => {
    const t = standardTemplates(hot, flavour, { VDU1: [0], VDU2: [0] }, [{ id: 'm', vnfVirtualLinkDescId: 'internalVL1', resourceId: 'net-managed' }]);
    const resources = parseHot(t.template)!['resources'] as Record<string, { properties: Record<string, unknown> }>;
    expect(resources['internalVL1']).toBeUndefined();
    expect(resources['internalVL1_subnet']).toBeUndefined();
    expect(resources['VDU1-0']!.properties['inner']).toBe('net-managed');
  });

  it('scale out: new indexes from the VNFC count on, skipping used ones; the new keys merged over the stack nfv', () => {
    const nfv = { VDU: { 'VDU1-1': { computeFlavourId: 'kept' } }, CP: {} };
    const out = scaleOut(hot, flavour, { VDU1: [1], VDU2: [0] }, { VDU1: 2 }, nfv, { extVirtualLinks: links('net-b') });
    expect(out.indexes).toEqual({ VDU1: [1, 2, 3], VDU2: [0] });
    expect(out.nfv.VDU['VDU1-1']).toEqual({ computeFlavourId: 'kept' });
    expect(out.nfv.VDU['VDU1-3']).toEqual({ computeFlavourId: 'relay.small', vcImageId: 'relay-worker-2.0' });
    expect(out.nfv.CP['VDU1_CP1-2']).toEqual({ network: 'net-b' });
    expect(out.nfv.VDU['VDU2-0']).toBeUndefined();
  });

  it("scale in: the newest VNFCs' indexes go, with their VDU, storage and CP keys", () => {
    const vnfc = (index: number, at: string) => ({ id: `c${index}`, vduId: 'VDU1', metadata: { parentResource: `VDU1-${index}`, creationTime: at } });
    const nfv = {
      VDU: { 'VDU1-0': { a: 1 }, 'VDU1-1': { a: 1 }, 'VDU1-2': { a: 1 } },
      CP: { 'VDU1_CP1-0': { network: 'n' }, 'VDU1_CP1-1': { network: 'n' }, 'VDU1_CP1-2': { network: 'n' } },
    };
    // VDU1-0 was healed last: it is the newest, and goes first, as Tacker picks by creation time.
    const out = scaleIn(flavour, { VDU1: [0, 1, 2] }, { VDU1: 1 }, [vnfc(0, '2026-01-03T00:00:00'), vnfc(1, '2026-01-01T00:00:00'), vnfc(2, '2026-01-02T00:00:00')], nfv);
    expect(out.removed).toEqual({ VDU1: [0] });
    expect(out.indexes).toEqual({ VDU1: [1, 2] });
    expect(Object.keys(out.nfv.VDU)).toEqual(['VDU1-1', 'VDU1-2']);
    expect(Object.keys(out.nfv.CP)).toEqual(['VDU1_CP1-1', 'VDU1_CP1-2']);
    expect(() => scaleIn(flavour, { VDU1: [0] }, { VDU1: 1 }, [{ id: 'x', vduId: 'VDU1', metadata: {} }], nfv)).toThrow(/not in a resource VDU1-<index>/);
  });

  it('change of external connectivity: the CP values per index of the connection points the request names', () => {
    const cps = standardExtConnCps(hot, flavour, { VDU1: [0, 1], VDU2: [0] }, [
      { id: 'new', resourceId: 'net-c', extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { a: { cpProtocolData: [] } } }] },
    ]);
    expect(cps).toEqual({ 'VDU1_CP1-0': { network: 'net-c' }, 'VDU1_CP1-1': { network: 'net-c' } });
  });

  it('a Base HOT without a resource named after a VDU is refused, saying what StandardUserData needs', () => {
    const broken = { ...hot, template: hot.template.replace(/\n {2}VDU2:\n/, '\n  Store:\n') };
    expect(() => standardTemplates(broken, flavour, { VDU1: [0], VDU2: [0] })).toThrow(/has no resource "VDU2"/);
  });
});
