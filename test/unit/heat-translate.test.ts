/**
 * The HOT vnfm makes from a VNFD flavour when the package has no Base HOT
 * (lcm/heat-translate.ts), on our own VNFDs in Tacker's shapes: what each
 * node and policy becomes, that the nfv parameter vnfm builds fills every
 * value the template reads, that the scaling code sees Tacker v1's policy
 * form in it, and what is refused with the fix.
 */
import { resolve } from 'node:path';
import yaml from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { openPackage } from '../../src/csar/index.js';
import { UsageError, ValidationError } from '../../src/errors.js';
import { generatedTemplates, readStackTemplates } from '../../src/lcm/heat-files.js';
import { buildNfvParameter, nfvReads } from '../../src/lcm/heat-nfv.js';
import { vduGroups } from '../../src/lcm/heat-scaling.js';
import { hotText, sizeInGiB, translateFlavour } from '../../src/lcm/heat-translate.js';
import { levelReplicas } from '../../src/lcm/replicas.js';
import { loadVnfd, type Flavour } from '../../src/vnfd/index.js';
import { memoryPackage } from '../support/memory-package.js';

const RELAY = resolve('test/fixtures/tacker-shapes/v1-no-basehot');
const HEAT_VNF = resolve('csar-samples/heat-vnf/package');

type Hot = { resources: Record<string, { type: string; properties?: Record<string, unknown> }>; parameters?: Record<string, { type: string }> };

async function flavourOf(path: string, entry: string, id = 'simple'): Promise<Flavour> {
  const files = await openPackage(path);
  try {
    const { vnfd, findings } = await loadVnfd(files, entry);
    expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
    return vnfd!.flavours[id]!;
  } finally {
    await files.close();
  }
}

/** A one-file VNFD of flavour "df" with these node templates and policies (YAML, indented as under topology_template). */
async function oneFile(nodes: string, policies = ''): Promise<Flavour> {
  const text = `tosca_definitions_version: tosca_simple_yaml_1_2
imports:
  - etsi_nfv_sol001_common_types.yaml
  - etsi_nfv_sol001_vnfd_types.yaml
node_types:
  example.Small:
    derived_from: tosca.nodes.nfv.VNF
    properties:
      flavour_id: {type: string, constraints: [ {equal: df} ]}
topology_template:
  substitution_mappings:
    node_type: example.Small
    properties: {flavour_id: df}
  node_templates:
    VNF:
      type: example.Small
      properties: {descriptor_id: 11111111-2222-4333-8444-555555555555, descriptor_version: '1', provider: p, product_name: n, software_version: '1', vnfm_info: [Tacker], flavour_id: df}
${nodes}
${policies ? `  policies:\n${policies}` : ''}`;
  const { vnfd, findings } = await loadVnfd(memoryPackage({ 'Definitions/one.yaml': text }), 'Definitions/one.yaml');
  expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
  return vnfd!.flavours['df']!;
}

const vdu = (name: string, compute: string, extra = '') => `    ${name}:
      type: tosca.nodes.nfv.Vdu.Compute
      properties:
        name: ${name.toLowerCase()}
        vdu_profile: {min_number_of_instances: 1, max_number_of_instances: 3}
        sw_image_data: {name: img-${name}, version: '1', container_format: bare, disk_format: qcow2, min_disk: 1 GiB, size: 1 GiB, checksum: {algorithm: sha-256, hash: ab}}
      capabilities:
        virtual_compute:
          properties:
${compute}
${extra}`;
const SIZED = '            virtual_memory: {virtual_mem_size: 512 MiB}\n            virtual_cpu: {num_virtual_cpu: 1}';

const types = (hot: Hot) => Object.fromEntries(Object.entries(hot.resources).map(([name, r]) => [name, r.type]));

let relay: Flavour;
beforeAll(async () => {
  relay = await flavourOf(RELAY, 'Definitions/relay_top.vnfd.yaml');
});

describe("a VNFD flavour in Tacker v1's shape, translated", () => {
  it('each node and policy becomes the resource heat-translator makes of it, under its name', () => {
    const { template, files, notes } = translateFlavour(relay, { vnfdId: 'relay' });
    const top = template as Hot;
    expect(template['heat_template_version']).toBe('2013-05-23');
    expect(top.parameters).toEqual({ nfv: { type: 'json' } });
    expect(types(top)).toEqual({
      worker_anti_affinity_group: 'OS::Nova::ServerGroup',
      relay_net: 'OS::Neutron::Net',
      relay_net_subnet: 'OS::Neutron::Subnet',
      relay_net_qospolicy: 'OS::Neutron::QoSPolicy',
      relay_net_bandwidth: 'OS::Neutron::QoSBandwidthLimitRule',
      worker_flavor: 'OS::Nova::Flavor',
      edge_flavor: 'OS::Nova::Flavor',
      edge_CP1: 'OS::Neutron::Port',
      edge_CP2: 'OS::Neutron::Port',
      edge_log: 'OS::Cinder::Volume',
      edge: 'OS::Nova::Server',
      worker_instance: 'OS::Heat::AutoScalingGroup',
      worker_instance_scale_out: 'OS::Heat::ScalingPolicy',
      worker_instance_scale_in: 'OS::Heat::ScalingPolicy',
    });
    const r = top.resources;
    // The VDU with an image boots from it; its volume is a data disk.
    expect(r['edge']!.properties).toEqual({
      flavor: { get_resource: 'edge_flavor' },
      name: 'relay-edge',
      image: { get_param: ['nfv', 'VDU', 'edge', 'image'] },
      networks: [{ port: { get_resource: 'edge_CP1' } }, { port: { get_resource: 'edge_CP2' } }],
      block_device_mapping_v2: [{ volume_id: { get_resource: 'edge_log' }, boot_index: -1 }],
    });
    expect(r['edge_flavor']!.properties).toEqual({
      ram: { get_param: ['nfv', 'VDU', 'edge', 'flavor', 'ram'] },
      vcpus: { get_param: ['nfv', 'VDU', 'edge', 'flavor', 'vcpus'] },
      disk: { get_param: ['nfv', 'VDU', 'edge', 'flavor', 'disk'] },
    });
    // An external connection point reads the request's network and addresses; an internal one is on the stack's network.
    expect(r['edge_CP1']!.properties).toEqual({ network: { get_param: ['nfv', 'CP', 'edge_CP1', 'network'] }, fixed_ips: { get_param: ['nfv', 'CP', 'edge_CP1', 'fixed_ips'] } });
    expect(r['edge_CP2']!.properties).toEqual({ network: { get_resource: 'relay_net' }, 'binding:vnic_type': 'normal' });
    expect(r['edge_log']!.properties).toEqual({ size: 8 });
    expect(r['relay_net']!.properties).toEqual({ qos_policy: { get_resource: 'relay_net_qospolicy' } });
    expect(r['relay_net_subnet']!.properties).toEqual({ network: { get_resource: 'relay_net' }, ip_version: 4, cidr: '10.90.0.0/24' });
    expect(r['relay_net_bandwidth']!.properties).toEqual({ max_kbps: 1024, policy: { get_resource: 'relay_net_qospolicy' } });
    expect(r['worker_anti_affinity_group']!.properties).toEqual({ name: 'worker_anti_affinity_group', policies: ['anti-affinity'] });
    // The aspect's group: min the initial delta, max at max_scale_level, desired at the default level; policies by the delta.
    expect(r['worker_instance']!.properties).toMatchObject({ min_size: 1, max_size: 3, desired_capacity: 1, resource: { type: 'worker_instance.hot.yaml' } });
    expect(r['worker_instance_scale_out']!.properties).toEqual({
      adjustment_type: 'change_in_capacity',
      auto_scaling_group_id: { get_resource: 'worker_instance' },
      scaling_adjustment: 1,
    });
    expect(r['worker_instance_scale_in']!.properties).toMatchObject({ scaling_adjustment: -1 });
    expect(notes).toEqual([]);

    // The members: the VDU boots from its volume, which carries the image; what the top template makes is passed in.
    expect(Object.keys(files)).toEqual(['worker_instance.hot.yaml']);
    const member = files['worker_instance.hot.yaml'] as Hot;
    expect(types(member)).toEqual({ worker_CP1: 'OS::Neutron::Port', worker_CP2: 'OS::Neutron::Port', worker_root: 'OS::Cinder::Volume', worker: 'OS::Nova::Server' });
    expect(member.resources['worker']!.properties).toEqual({
      flavor: { get_param: 'worker_flavor_id' },
      name: 'relay-worker',
      networks: [{ port: { get_resource: 'worker_CP1' } }, { port: { get_resource: 'worker_CP2' } }],
      block_device_mapping_v2: [{ volume_id: { get_resource: 'worker_root' }, boot_index: 0 }],
      scheduler_hints: { group: { get_param: 'worker_anti_affinity_group_id' } },
    });
    expect(member.resources['worker_root']!.properties).toEqual({ size: 4, image: { get_param: 'worker_root_image' } });
    expect(member.resources['worker_CP2']!.properties).toEqual({ network: { get_param: 'relay_net_id' } });
    expect(member.parameters).toEqual({
      worker_flavor_id: { type: 'string' },
      worker_CP1_network: { type: 'string' },
      worker_CP1_fixed_ips: { type: 'json' },
      relay_net_id: { type: 'string' },
      worker_root_image: { type: 'string' },
      worker_anti_affinity_group_id: { type: 'string' },
    });
    expect(r['worker_instance']!.properties!['resource']).toEqual({
      type: 'worker_instance.hot.yaml',
      properties: {
        worker_flavor_id: { get_resource: 'worker_flavor' },
        worker_CP1_network: { get_param: ['nfv', 'CP', 'worker_CP1', 'network'] },
        worker_CP1_fixed_ips: { get_param: ['nfv', 'CP', 'worker_CP1', 'fixed_ips'] },
        relay_net_id: { get_resource: 'relay_net' },
        worker_root_image: { get_param: ['nfv', 'VDU', 'worker_root', 'image'] },
        worker_anti_affinity_group_id: { get_resource: 'worker_anti_affinity_group' },
      },
    });
  });

  it("the group's desired_capacity is the instantiation level's", () => {
    const { template } = translateFlavour(relay, { instantiationLevelId: 'instantiation_level_2' });
    expect((template as Hot).resources['worker_instance']!.properties).toMatchObject({ min_size: 1, max_size: 3, desired_capacity: 2 });
  });

  it('the nfv parameter vnfm builds gives every value the templates read: sizes, images, networks', () => {
    const { templates } = generatedTemplates(relay, 'pkg');
    const reads = nfvReads(templates);
    const extVirtualLinks = [
      {
        id: 'uplink',
        resourceId: 'net-uplink',
        extCps: [
          {
            cpdId: 'worker_CP1',
            cpConfig: [{ cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', numDynamicAddresses: 1 }] } }] }],
          },
          {
            cpdId: 'edge_CP1',
            cpConfig: [{ cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', fixedAddresses: ['192.0.2.7'] }] } }] }],
          },
        ],
      },
    ];
    const nfv = buildNfvParameter(relay, levelReplicas(relay).replicas, { extVirtualLinks, reads });
    // 2 GiB and 1 GiB of memory in MiB, the local storage in GiB, as Tacker converts them.
    expect(nfv.VDU['worker']).toMatchObject({ flavor: { vcpus: 2, ram: 2048, disk: 10 } });
    expect(nfv.VDU['edge']).toMatchObject({ flavor: { vcpus: 1, ram: 1024, disk: 2 }, image: 'relay-edge-1.4' });
    expect(nfv.VDU['worker_root']).toMatchObject({ image: 'relay-worker-1.4' });
    expect(nfv.CP).toEqual({ worker_CP1: { network: 'net-uplink', fixed_ips: [] }, edge_CP1: { network: 'net-uplink', fixed_ips: [{ ip_address: '192.0.2.7' }] } });
    // Every nfv path the templates read has a value.
    const at = (path: ReadonlyArray<string | number>) => path.reduce<unknown>((v, k) => (v as Record<string | number, unknown> | undefined)?.[k], nfv);
    const missing = reads.filter((p) => at(p) === undefined || at(p) === '');
    expect(missing).toEqual([]);
  });

  it("vnfm's scaling sees Tacker v1's form: the aspect's group, signalled through <aspect>_scale_out / _scale_in", () => {
    const { templates } = generatedTemplates(relay, 'pkg');
    expect(vduGroups(templates, relay)).toEqual([
      { group: 'worker_instance', vduId: 'worker', policies: { aspectId: 'worker_instance', scaleOut: 'worker_instance_scale_out', scaleIn: 'worker_instance_scale_in' } },
    ]);
  });

  it('the YAML text reads back as the templates, intrinsic functions on one line', () => {
    const { template, files } = translateFlavour(relay);
    const text = hotText(template);
    expect(yaml.load(text, { schema: yaml.CORE_SCHEMA })).toEqual(template);
    expect(text).toContain("heat_template_version: '2013-05-23'\n");
    expect(text).toContain('      ram: {get_param: [nfv, VDU, worker, flavor, ram]}\n');
    expect(text).toContain('      - port: {get_resource: edge_CP1}\n');
    const member = files['worker_instance.hot.yaml']!;
    expect(yaml.load(hotText(member), { schema: yaml.CORE_SCHEMA })).toEqual(member);
  });
});

describe('the other forms of a VDU', () => {
  it('a VDU that names a flavor and gives no size uses that flavor, read from nfv.VDU.<vdu>.flavor', async () => {
    const named = '            requested_additional_capabilities: {properties: {requested_additional_capability_name: m1.large, support_mandatory: true}}';
    const f = await oneFile(vdu('VDU1', named));
    const { templates } = generatedTemplates(f, 'pkg');
    const hot = yaml.load(templates.template) as Hot;
    expect(types(hot)).toEqual({ VDU1: 'OS::Nova::Server' });
    expect(hot.resources['VDU1']!.properties).toMatchObject({ flavor: { get_param: ['nfv', 'VDU', 'VDU1', 'flavor'] }, image: { get_param: ['nfv', 'VDU', 'VDU1', 'image'] } });
    expect(buildNfvParameter(f, { VDU1: 1 }, { reads: nfvReads(templates) }).VDU['VDU1']).toMatchObject({ flavor: 'm1.large', image: 'img-VDU1' });
  });

  it('a VDU with several instances and no aspect: a group sized by nfv.VDU.<vdu>.desired_capacity', async () => {
    const f = await oneFile(vdu('VDU1', SIZED), '    - init: {type: tosca.policies.nfv.VduInitialDelta, properties: {initial_delta: {number_of_instances: 2}}, targets: [VDU1]}\n');
    const { templates } = generatedTemplates(f, 'pkg');
    const hot = yaml.load(templates.template) as Hot;
    expect(types(hot)).toEqual({ VDU1_flavor: 'OS::Nova::Flavor', VDU1_group: 'OS::Heat::AutoScalingGroup' });
    expect(hot.resources['VDU1_group']!.properties).toMatchObject({ min_size: 1, max_size: 3, desired_capacity: { get_param: ['nfv', 'VDU', 'VDU1', 'desired_capacity'] } });
    expect(vduGroups(templates, f)).toEqual([{ group: 'VDU1_group', vduId: 'VDU1' }]);
  });

  it('what Tacker leaves out is said, not made: a non-IP network gets no subnet, other affinity scopes no group', async () => {
    const nodes = `${vdu('VDU1', SIZED)}
    VL1:
      type: tosca.nodes.nfv.VnfVirtualLink
      properties:
        connectivity_type: {layer_protocols: [ethernet]}
        vl_profile: {max_bitrate_requirements: {root: 1000}, min_bitrate_requirements: {root: 1000}}
    CP1:
      type: tosca.nodes.nfv.VduCp
      properties: {layer_protocols: [ethernet]}
      requirements: [{virtual_binding: VDU1}, {virtual_link: VL1}]`;
    const f = await oneFile(nodes, '    - zoned: {type: tosca.policies.nfv.AntiAffinityRule, targets: [VDU1], properties: {scope: zone}}\n');
    const { template, notes } = translateFlavour(f);
    expect(types(template as Hot)).toEqual({ VL1: 'OS::Neutron::Net', VDU1_flavor: 'OS::Nova::Flavor', CP1: 'OS::Neutron::Port', VDU1: 'OS::Nova::Server' });
    expect(notes).toEqual([
      'anti-affinity rule zoned (scope zone) is not translated: only a rule of scope nfvi_node over VDUs becomes a server group',
      'virtual link VL1 carries no IP (layer_protocols ethernet): a network without a subnet',
    ]);
  });
});

describe('what cannot become a stack Heat accepts: exit 2, every problem and its fix at once', () => {
  it('a VDU without size or flavor, a network without CIDR, a volume under 1 GiB, steps of different sizes', async () => {
    const nodes = `${vdu('VDU1', '            virtual_local_storage: [{size_of_storage: 1 GiB}]', '      requirements: [{virtual_storage: VS1}]')}
    VS1:
      type: tosca.nodes.nfv.Vdu.VirtualBlockStorage
      properties: {virtual_block_storage_data: {size_of_storage: 512 MiB}}
    VL1:
      type: tosca.nodes.nfv.VnfVirtualLink
      properties:
        connectivity_type: {layer_protocols: [ipv4]}
        vl_profile: {max_bitrate_requirements: {root: 1000}, min_bitrate_requirements: {root: 1000}}`;
    const policies = `    - aspects: {type: tosca.policies.nfv.ScalingAspects, properties: {aspects: {a1: {name: a1, max_scale_level: 2, step_deltas: [d1, d2]}}}}
    - deltas: {type: tosca.policies.nfv.VduScalingAspectDeltas, properties: {aspect: a1, deltas: {d1: {number_of_instances: 1}, d2: {number_of_instances: 2}}}, targets: [VDU1]}
`;
    const f = await oneFile(nodes, policies);
    const err = (() => {
      try {
        return translateFlavour(f);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(UsageError);
    const message = (err as Error).message;
    expect(message).toMatch(/^the HOT of flavour df cannot be made from its VNFD \(Definitions\/one\.yaml\): /);
    expect(message).toContain('VDU VDU1 has no virtual_compute size (virtual_cpu.num_virtual_cpu, virtual_memory.virtual_mem_size) nor a flavor name');
    expect(message).toContain('the steps of scaling aspect a1 add 1, 2 instances of VDU1: an OS::Heat::ScalingPolicy adjusts its group by one number');
    expect(message).toContain('virtual link VL1 has no vl_profile.virtual_link_protocol_data[0].l3_protocol_data.cidr');
    expect(message).toContain('virtual storage VS1 has size_of_storage 512 MiB, which is 0 in whole GiB: Cinder needs at least 1');
    expect((err as UsageError).hint).toMatch(/give the package a Base HOT \(BaseHOT\/df\/<name>\.yaml/);
    expect((err as UsageError).hint).not.toMatch(/Kubernetes/);
  });

  it("a CNF's flavour on an OpenStack VIM: its VDUs have no flavor; the request's flavourId is named", async () => {
    const f = await oneFile(`    VDU1:
      type: tosca.nodes.nfv.Vdu.Compute
      properties: {name: web, vdu_profile: {min_number_of_instances: 1, max_number_of_instances: 2}}`);
    const err = (() => {
      try {
        return generatedTemplates(f, 'pkg-1', {}, 'req.json');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).hint).toMatch(/; a CNF's VDUs are Kubernetes workloads: instantiate it on a Kubernetes VIM$/);
    expect(() => generatedTemplates(f, 'pkg-1', {}, 'req.json')).toThrow(
      /^req\.json: flavourId: package pkg-1 has no Base HOT for flavour "df" \(BaseHOT\/df\/\), and the HOT of flavour df cannot be made from its VNFD .*VDU VDU1 has no virtual_compute size/,
    );
  });

  it('sizes as heat-translator reads them: whole GiB below, units regardless of case', () => {
    expect([sizeInGiB('30 GiB'), sizeInGiB('1 GB'), sizeInGiB('2048 mib'), sizeInGiB('1.5 TiB'), sizeInGiB('10'), sizeInGiB('many GiB'), sizeInGiB(undefined)]).toEqual([
      30,
      0,
      2,
      1536,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('the templates of a stack: the Base HOT, else the HOT made from the VNFD', () => {
  it('a package with a Base HOT for the flavour: its Base HOT', async () => {
    const f = await flavourOf(HEAT_VNF, 'Definitions/heat_vnf_top.vnfd.yaml');
    const hot = await readStackTemplates(HEAT_VNF, f, 'req.json', 'pkg-1');
    expect(hot.templatePath).toBe('BaseHOT/simple/heat_vnf.yaml');
    expect(Object.keys(hot.files)).toEqual(['VDU1.yaml']);
  });

  it('a package without: the generated HOT, named after the flavour file', async () => {
    const hot = await readStackTemplates(RELAY, relay, 'req.json', 'pkg-1', '7d3e51c0');
    expect(hot.templatePath).toBe('Definitions/relay_df_simple.yaml (HOT generated for flavour simple)');
    expect(hot.template).toBe(hotText(translateFlavour(relay, { vnfdId: '7d3e51c0' }).template));
    expect(Object.keys(hot.files)).toEqual(['worker_instance.hot.yaml']);
    expect(hot.sources['worker_instance.hot.yaml']).toBe('Definitions/relay_df_simple.yaml (HOT generated for flavour simple), nested worker_instance.hot.yaml');
  });
});
