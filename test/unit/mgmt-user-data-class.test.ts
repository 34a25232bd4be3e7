/**
 * A package's own user-data class run with Tacker's contract by the real
 * python3 (mgmt/user-data-class.ts): vnfm's stand-ins for
 * tacker.vnfm.lcm_user_data (what each helper computes from a Base HOT, a
 * VNFD and a request), the request handed over as Tacker's objects
 * (snake_case attributes), grant_info's images, and every way a run fails:
 * the file not importable, the class raising, the time limit, a result
 * that is not plain data. Each failure names the file and the class.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TimeoutError, UsageError } from '../../src/errors.js';
import { runUserDataClass, type UserDataClassRun } from '../../src/mgmt/user-data-class.js';

let pkg: string;

/** A class whose instantiate returns what `body` computes (indented under the method). */
const probe = (name: string, body: string[]) =>
  [
    'import tacker.vnfm.lcm_user_data.utils as U',
    'from tacker.vnfm.lcm_user_data.abstract_user_data import AbstractUserData',
    '',
    '',
    `class ${name}(AbstractUserData):`,
    '    @staticmethod',
    '    def instantiate(base_hot_dict=None, vnfd_dict=None, inst_req_info=None, grant_info=None):',
    ...body.map((l) => `        ${l}`),
    '',
  ].join('\n');

const top = {
  heat_template_version: '2013-05-23',
  parameters: { nfv: { type: 'json' }, site: { type: 'string' } },
  resources: {
    web_group: {
      type: 'OS::Heat::AutoScalingGroup',
      properties: {
        resource: { type: 'web.yaml', properties: { flavor: { get_param: ['nfv', 'VDU', 'web', 'flavor'] }, net: { get_param: ['nfv', 'CP', 'web_CP1', 'network'] } } },
      },
    },
    db: {
      type: 'OS::Nova::Server',
      properties: {
        flavor: { get_param: ['nfv', 'VDU', 'db', 'flavor'] },
        block_device_mapping_v2: [{ image: { get_param: ['nfv', 'VDU', 'db_disk', 'image'] } }],
      },
    },
    db_CP1: {
      type: 'OS::Neutron::Port',
      properties: { network: { get_param: ['nfv', 'CP', 'db_CP1', 'network'] }, fixed_ips: { get_param: ['nfv', 'CP', 'db_CP1', 'fixed_ips'] } },
    },
  },
};

const vnfd = {
  topology_template: {
    node_templates: {
      web: {
        type: 'tosca.nodes.nfv.Vdu.Compute',
        properties: { sw_image_data: { name: 'web-1.0' } },
        capabilities: {
          virtual_compute: {
            properties: {
              requested_additional_capabilities: { properties: { requested_additional_capability_name: 'web.small' } },
              virtual_memory: { virtual_mem_size: '512 MB' },
              virtual_cpu: { num_virtual_cpu: 2 },
              virtual_local_storage: [{ size_of_storage: '3 GiB' }],
            },
          },
        },
      },
      db: { type: 'tosca.nodes.nfv.Vdu.Compute', capabilities: { virtual_compute: { properties: { virtual_memory: { virtual_mem_size: '2 GiB' } } } } },
      db_disk: { type: 'tosca.nodes.nfv.Vdu.VirtualBlockStorage', properties: { sw_image_data: { name: 'db-disk-4' } } },
    },
    policies: [
      { web_scale: { type: 'tosca.policies.nfv.ScalingAspects', properties: { aspects: { web_scale: { max_scale_level: 3 } } } } },
      { web_delta: { type: 'tosca.policies.nfv.VduScalingAspectDeltas', targets: ['web'], properties: { aspect: 'web_scale', deltas: { d1: { number_of_instances: 2 } } } } },
      { web_initial: { type: 'tosca.policies.nfv.VduInitialDelta', targets: ['web'], properties: { initial_delta: { number_of_instances: 1 } } } },
      {
        levels: {
          type: 'tosca.policies.nfv.InstantiationLevels',
          properties: { default_level: 'small', levels: { small: { scale_info: { web_scale: { scale_level: 0 } } }, big: { scale_info: { web_scale: { scale_level: 2 } } } } },
        },
      },
    ],
  },
};

const request = {
  flavourId: 'simple',
  instantiationLevelId: 'big',
  extVirtualLinks: [
    {
      id: 'l1',
      resourceId: 'net-1',
      extCps: [
        { cpdId: 'web_CP1', cpConfig: [{ cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', numDynamicAddresses: 1 }] } }] }] },
        {
          cpdId: 'db_CP1',
          cpConfig: [
            { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', fixedAddresses: ['10.0.0.9'], subnetId: 'sub-1' }] } }] },
          ],
        },
      ],
    },
  ],
  additionalParams: { site: 'osaka', unrelated: 'x', 'lcm-operation-user-data': './UserData/probe.py' },
};

const runOf = (file: string, className: string, extra: Partial<UserDataClassRun> = {}): UserDataClassRun => ({
  generation: 'v1',
  file,
  className,
  packageId: 'pkg-1',
  packageDir: pkg,
  input: {
    base_hot_dict: { heat_template: top, 'web.yaml': { parameters: {}, resources: {} } },
    vnfd_dict: vnfd,
    inst_req_info: request,
    grant_info: { db_disk: [{ resource_identifier: 'glance-77' }] },
  },
  ...extra,
});

beforeAll(() => {
  pkg = mkdtempSync(join(tmpdir(), 'vnfm-user-data-unit-'));
  mkdirSync(join(pkg, 'UserData'));
  writeFileSync(
    join(pkg, 'UserData/helpers.py'),
    probe('Helpers', [
      'initial = U.create_initial_param_dict(base_hot_dict)',
      'return {',
      "    'initial': initial,",
      "    'server_port': U.create_initial_param_server_port_dict(base_hot_dict),",
      "    'flavor': U.create_vdu_flavor_dict(vnfd_dict),",
      "    'flavor_name': U.create_vdu_flavor_capability_name_dict(vnfd_dict),",
      "    'sw_image': U.create_sw_image_dict(vnfd_dict),",
      "    'image': U.create_vdu_image_dict(grant_info),",
      "    'cpd_vl': U.create_cpd_vl_dict(base_hot_dict, inst_req_info),",
      "    'network': U.create_network_dict(inst_req_info, initial),",
      "    'api': U.get_diff_base_hot_param_from_api(base_hot_dict, inst_req_info),",
      "    'capacity': U.create_desired_capacity_dict(base_hot_dict, vnfd_dict, inst_req_info),",
      "    'request': [inst_req_info.flavour_id, inst_req_info.instantiation_level_id, inst_req_info.ext_virtual_links[0].ext_cps[1].cpd_id, inst_req_info.vim_connection_info],",
      '}',
    ]),
  );
  writeFileSync(join(pkg, 'UserData/fails.py'), probe('Fails', ["raise ValueError('no site ' + inst_req_info.additional_params['site'])"]));
  writeFileSync(join(pkg, 'UserData/slow.py'), probe('Slow', ['import time', 'time.sleep(60)', 'return {}']));
  writeFileSync(join(pkg, 'UserData/odd.py'), probe('Odd', ["return {'nfv': {1, 2}}"]));
  writeFileSync(join(pkg, 'UserData/broken.py'), 'import tacker.vnfm.nfvo\n');
  writeFileSync(
    join(pkg, 'UserData/v2.py'),
    [
      'from tacker.sol_refactored.common import common_script_utils as csu',
      'from tacker.sol_refactored.common import vnf_instance_utils',
      'from tacker.sol_refactored.infra_drivers.openstack import userdata_utils',
      '',
      '',
      'class V2(userdata_utils.AbstractUserData):',
      '    @staticmethod',
      '    def instantiate(req, inst, grant_req, grant, tmp_csar_dir):',
      "        vnfd = csu.get_vnfd(inst['vnfdId'], tmp_csar_dir)",
      "        hot = vnfd.get_base_hot(req['flavourId'])",
      '        return {',
      "            'init': csu.init_nfv_dict(hot['template']),",
      "            'flavor': [csu.get_param_flavor(v, 'simple', vnfd, grant) for v in ('web', 'db')],",
      "            'image': [csu.get_param_image(v, 'simple', vnfd, grant) for v in ('web', 'db_disk')],",
      "            'capacity': csu.get_param_capacity('web', inst, grant_req),",
      "            'network': csu.get_param_network('db_CP1', grant, req),",
      "            'fixed_ips': csu.get_param_fixed_ips('db_CP1', grant, req),",
      "            'vdus': sorted(vnfd.get_vdu_nodes('simple')),",
      "            'merged': vnf_instance_utils.json_merge_patch({'a': 1, 'b': {'c': 2}}, {'b': {'c': None, 'd': 3}}),",
      "            'files': sorted(hot['files']),",
      '        }',
      '',
    ].join('\n'),
  );
});

afterAll(() => {
  if (pkg) rmSync(pkg, { recursive: true, force: true });
});

const v2Request = {
  ...request,
  extVirtualLinks: [{ ...request.extVirtualLinks[0], extCps: [{ cpdId: 'db_CP1', cpConfig: { c1: request.extVirtualLinks[0]!.extCps[1]!.cpConfig[0] } }] }],
};

describe("a package's Tacker v2 user-data class, with vnfm's stand-ins for userdata_utils and common_script_utils", () => {
  it('reads the VNFD and the Base HOT vnfm hands over, the request, the grant request and the grant as Tacker does', async () => {
    const got = await runUserDataClass({
      generation: 'v2',
      file: 'UserData/v2.py',
      className: 'V2',
      packageId: 'pkg-1',
      packageDir: pkg,
      input: {
        operation: 'instantiate',
        req: v2Request,
        inst: { id: 'i-1', vnfdId: 'vnfd-1' },
        grant_req: { addResources: [1, 2, 3].map((i) => ({ id: `r${i}`, type: 'COMPUTE', resourceTemplateId: 'web' })) },
        grant: { vimAssets: { softwareImages: [{ vnfdSoftwareImageId: 'db_disk', vimSoftwareImageId: 'glance-9' }] } },
        vnfd: { vnfdId: 'vnfd-1', flavours: { simple: { definitions: vnfd, base_hot: { template: top, files: { 'web.yaml': {} } } } } },
      },
    });
    expect(got['init']).toEqual({
      VDU: { web: { flavor: null }, db: { flavor: null }, db_disk: { image: null } },
      CP: { web_CP1: { network: null }, db_CP1: { network: null, fixed_ips: null } },
    });
    expect(got['flavor']).toEqual(['web.small', null]);
    expect(got['image']).toEqual(['web-1.0', 'glance-9']);
    expect(got['capacity']).toBe(3);
    expect(got['network']).toBe('net-1');
    expect(got['fixed_ips']).toEqual([{ ip_address: '10.0.0.9', subnet: 'sub-1' }]);
    expect(got['vdus']).toEqual(['db', 'web']);
    expect(got['merged']).toEqual({ a: 1, b: { d: 3 } });
    expect(got['files']).toEqual(['web.yaml']);
  });
});

describe("a package's user-data class, with vnfm's stand-ins for Tacker v1's utilities", () => {
  it('each helper computes from the Base HOT, the VNFD and the request what Tacker documents', async () => {
    const got = await runUserDataClass(runOf('UserData/helpers.py', 'Helpers'));
    // Each VDU and CP a template reads (a server's boot volume image, a group's member too), with nothing in it yet.
    expect(got['initial']).toEqual({ nfv: { VDU: { web: {}, db: {}, db_disk: {} }, CP: { web_CP1: {}, db_CP1: {} } } });
    expect(got['server_port']).toEqual({ nfv: { VDU: { web: {}, db: {}, db_disk: {} }, CP: { web_CP1: {}, db_CP1: {} } } });
    // 512 MB is 488 MiB rounded down; 3 GiB of disk.
    expect(got['flavor']).toEqual({ web: { vcpus: 2, ram: 488, disk: 3 }, db: { ram: 2048 } });
    expect(got['flavor_name']).toEqual({ web: 'web.small' });
    expect(got['sw_image']).toEqual({ web: 'web-1.0', db_disk: 'db-disk-4' });
    expect(got['image']).toEqual({ db_disk: 'glance-77' });
    expect(got['cpd_vl']).toEqual({ db_CP1: 'net-1' });
    expect(got['network']).toEqual({ web_CP1: { network: 'net-1', fixed_ips: [] }, db_CP1: { network: 'net-1', fixed_ips: [{ subnet: 'sub-1', ip_address: '10.0.0.9' }] } });
    expect(got['api']).toEqual({ site: 'osaka' });
    // Level "big": scale level 2 of web_scale, 2 instances a step over the initial 1.
    expect(got['capacity']).toEqual({ web_scale: 5 });
    expect(got['request']).toEqual(['simple', 'big', 'db_CP1', null]);
  });

  it('a class that raises: its exception and traceback, naming the file and the class', async () => {
    const err = await runUserDataClass(runOf('UserData/fails.py', 'Fails')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toContain('user-data class Fails in UserData/fails.py of package pkg-1 raised ValueError: no site osaka');
    expect((err as Error).message).toMatch(/UserData\/fails\.py", line 8, in instantiate/);
  });

  it('a file that imports a Tacker module vnfm does not stand in for: not importable, saying which modules vnfm provides', async () => {
    const err = await runUserDataClass(runOf('UserData/broken.py', 'Broken')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toContain(
      "UserData/broken.py of package pkg-1 could not be imported (to run user-data class Broken): ModuleNotFoundError: No module named 'tacker.vnfm.nfvo'",
    );
    expect((err as UsageError).hint).toContain('vnfm provides its own tacker.vnfm.lcm_user_data');
  });

  it('a class past the time limit is stopped', async () => {
    const err = await runUserDataClass(runOf('UserData/slow.py', 'Slow', { timeoutMs: 300 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toContain("user-data class Slow in UserData/slow.py of package pkg-1 did not return within 300 ms (Tacker's limit for user data is 60 s)");
  });

  it('a result that is not plain data, and python3 missing, are refused naming the class', async () => {
    const odd = await runUserDataClass(runOf('UserData/odd.py', 'Odd')).catch((e: unknown) => e);
    expect((odd as Error).message).toContain('user-data class Odd in UserData/odd.py of package pkg-1 returned a value that is not plain data (TypeError');
    const noPython = await runUserDataClass(runOf('UserData/odd.py', 'Odd'), { env: { PATH: '/nonexistent' } }).catch((e: unknown) => e);
    expect(noPython).toBeInstanceOf(UsageError);
    expect((noPython as Error).message).toContain('user-data class Odd in UserData/odd.py of package pkg-1 needs python3, which is not on the PATH (/nonexistent)');
  });
});
