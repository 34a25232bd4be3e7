/**
 * Tacker's LCM user data that vnfm serves natively, on the real Keystone and
 * Heat, through the real program: a Tacker v1 package naming its sample user
 * data (UserData/lcm_user_data.py, class SampleUserData: the four utility
 * dicts through create_final_param_dict) and a Tacker v2 package shipping
 * DefaultUserData (UserData/userdata_default.py). Both files are our own, in
 * the shape of Tacker's. The `nfv` parameter is read back from Heat (the
 * stack's parameters as Heat reports them), with the flavor and image each
 * server was given. A user-data class that differs from the sample by one
 * statement is the package's own code: without consent it is refused
 * (exit 2) with nothing recorded.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, okStdoutWith, vnfm, type RunResult } from '../support/cli.js';
import { openStackVimConfig, projectToken, useOpenStack, type OpenStackServers } from '../support/heat.js';

const V1_PACKAGE = resolve('test/fixtures/tacker-shapes/v1-heat-scale');
const V2_SAMPLE = resolve('csar-samples/heat-vnf');
const STANDINS = resolve('test/fixtures/heat/env/nova-neutron-standins.yaml');
const V1_VNFD_ID = '0c1f7a52-3d9e-4b8a-8f61-2a7e5c9d1b01';
const LONG = 600_000;

let os: OpenStackServers;
let home: string;
let work: string;
const dirs: string[] = [];

const run = (args: string[]): Promise<RunResult> => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okStdoutWith((args) => run(args));

/** Tacker v1's sample user data, in our own words. */
const V1_SAMPLE = (extra = '') =>
  [
    '# Heat parameters of the Edge Gateway, from the utilities Tacker v1 provides.',
    'import tacker.vnfm.lcm_user_data.utils as UserDataUtil',
    '',
    'from tacker.vnfm.lcm_user_data.abstract_user_data import AbstractUserData',
    '',
    '',
    'class SampleUserData(AbstractUserData):',
    '',
    '    @staticmethod',
    '    def instantiate(base_hot_dict=None, vnfd_dict=None,',
    '                    inst_req_info=None, grant_info=None):',
    '        params = UserDataUtil.create_initial_param_dict(base_hot_dict)',
    '        flavors = UserDataUtil.create_vdu_flavor_dict(vnfd_dict)  # by VDU',
    '        images = UserDataUtil.create_vdu_image_dict(grant_info)',
    '        links = UserDataUtil.create_cpd_vl_dict(',
    '            base_hot_dict, inst_req_info)',
    '',
    '        final = UserDataUtil.create_final_param_dict(',
    '            params, flavors, images, links)',
    extra,
    '        return final',
    '',
  ].join('\n');

/** Tacker v2's DefaultUserData as a package ships it, in our own words (instantiate only). */
const V2_DEFAULT = [
  'from tacker.sol_refactored.common import vnf_instance_utils as inst_utils',
  'from tacker.sol_refactored.infra_drivers.openstack import userdata_utils',
  '',
  '',
  'class DefaultUserData(userdata_utils.AbstractUserData):',
  '',
  '    @staticmethod',
  '    def instantiate(req, inst, grant_req, grant, tmp_csar_dir):',
  "        vnfd = userdata_utils.get_vnfd(inst['vnfdId'], tmp_csar_dir)",
  "        flavour = req['flavourId']",
  '        hot = vnfd.get_base_hot(flavour)',
  "        nfv = userdata_utils.init_nfv_dict(hot['template'])",
  "        for name, vdu in nfv.get('VDU', {}).items():",
  "            if 'computeFlavourId' in vdu:",
  "                vdu['computeFlavourId'] = userdata_utils.get_param_flavor(name, flavour, vnfd, grant)",
  "            if 'vcImageId' in vdu:",
  "                vdu['vcImageId'] = userdata_utils.get_param_image(name, flavour, vnfd, grant)",
  "            if 'locationConstraints' in vdu:",
  "                vdu['locationConstraints'] = userdata_utils.get_param_zone(name, grant_req, grant)",
  "            if 'desired_capacity' in vdu:",
  "                vdu['desired_capacity'] = userdata_utils.get_param_capacity(name, inst, grant_req)",
  "        for name, cp in nfv.get('CP', {}).items():",
  "            if 'network' in cp:",
  "                cp['network'] = userdata_utils.get_param_network(name, grant, req)",
  "            if 'fixed_ips' in cp:",
  "                cp['fixed_ips'] = userdata_utils.get_param_fixed_ips(name, grant, req)",
  "        nfv = inst_utils.json_merge_patch(nfv, req.get('additionalParams', {}).get('nfv', {}))",
  "        return {'template': hot['template'], 'parameters': {'nfv': nfv}, 'files': {}}",
  '',
].join('\n');

/** A copy of a package with a user-data file added. */
async function withUserData(pkg: string, file: string, text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'vnfm-user-data-heat-'));
  dirs.push(dir);
  await cp(pkg, dir, { recursive: true });
  await mkdir(join(dir, dirname(file)), { recursive: true });
  await writeFile(join(dir, file), text);
  return dir;
}

/** The stack's `nfv` parameter as Heat reports it. */
async function heatNfv(vnf: string): Promise<Record<string, any>> {
  const res = await fetch(`${os.heat.url}/stacks/vnf-${vnf}`, { headers: { 'x-auth-token': await projectToken(os.keystone) }, redirect: 'follow' });
  expect(res.status).toBe(200);
  const { stack } = (await res.json()) as { stack: { parameters: Record<string, string> } };
  return JSON.parse(stack.parameters['nfv']!);
}

async function instantiate(pkgName: string, name: string, request: object): Promise<{ vnf: string; result: RunResult }> {
  const vnf = JSON.parse(await ok(['vnf-create', '--package', pkgName, '--name', name, '-o', 'json'])).id as string;
  const file = join(work, `${name}.json`);
  await writeFile(file, JSON.stringify(request));
  return { vnf, result: await run(['vnf-instantiate', vnf, '--request-file', file, '--heat-environment', STANDINS, '-o', 'json']) };
}

const V1_USER_DATA = { 'lcm-operation-user-data': './UserData/lcm_user_data.py', 'lcm-operation-user-data-class': 'SampleUserData' };
const v1Request = {
  flavourId: 'simple',
  instantiationLevelId: 'instantiation_level_1',
  extVirtualLinks: [
    {
      id: 'uplink',
      resourceId: 'net-uplink-1',
      extCps: [
        {
          cpdId: 'worker_CP1',
          cpConfig: [{ cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', numDynamicAddresses: 1 }] } }] }],
        },
        {
          cpdId: 'edge_CP1',
          cpConfig: [{ cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', fixedAddresses: ['192.0.2.45'] }] } }] }],
        },
      ],
    },
  ],
  additionalParams: V1_USER_DATA,
};

beforeAll(async () => {
  os = await useOpenStack();
  home = newHome();
  work = dirname(home);
  await writeFile(join(work, 'vim.yaml'), openStackVimConfig(os.keystone));
  await ok(['vim-register', '--config-file', join(work, 'vim.yaml'), '--is-default', 'os1']);
  await ok(['vnfpkg-onboard', await withUserData(V1_PACKAGE, 'UserData/lcm_user_data.py', V1_SAMPLE()), '--name', 'gateway-v1-sample']);
  await ok(['vnfpkg-onboard', await withUserData(join(V2_SAMPLE, 'package'), 'UserData/userdata_default.py', V2_DEFAULT), '--name', 'heat-vnf-default']);
}, LONG);

afterAll(async () => {
  await os?.stop();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  if (work) await rm(work, { recursive: true, force: true });
});

describe("Tacker's own user-data classes, served natively on Heat", () => {
  it(
    "v1 SampleUserData: Heat's nfv carries the VDUs' flavor and image and the CPs' network and fixed address, as Heat reports them",
    async () => {
      const { vnf, result } = await instantiate('gateway-v1-sample', 'v1-sample', v1Request);
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).operationState).toBe('COMPLETED');
      expect(result.stderr).toContain("lcm-operation-user-data ./UserData/lcm_user_data.py (class SampleUserData) is Tacker v1's sample user data");
      const nfv = await heatNfv(vnf);
      expect(nfv['VDU']['worker']).toMatchObject({ flavor: 'gw.worker.small', image: 'gateway-worker-3.2' });
      expect(nfv['VDU']['edge']).toMatchObject({ flavor: 'gw.edge.tiny', image: 'gateway-edge-3.2' });
      expect(nfv['CP']['worker_CP1']).toMatchObject({ network: 'net-uplink-1' });
      expect(nfv['CP']['edge_CP1']).toMatchObject({ network: 'net-uplink-1', fixed_ips: [{ ip_address: '192.0.2.45' }] });
      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
    },
    LONG,
  );

  it(
    "v2 DefaultUserData: Heat's nfv carries computeFlavourId, vcImageId, desired_capacity and the CP's network",
    async () => {
      const request = JSON.parse((await readFile(join(V2_SAMPLE, 'requests/instantiate.json'), 'utf8')).replace('REPLACE-WITH-EXTERNAL-NETWORK-ID', 'net-public-1'));
      request.additionalParams = { 'lcm-operation-user-data': './UserData/userdata_default.py', 'lcm-operation-user-data-class': 'DefaultUserData' };
      const { vnf, result } = await instantiate('heat-vnf-default', 'v2-default', request);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain("(class DefaultUserData) is Tacker v2's DefaultUserData");
      const nfv = await heatNfv(vnf);
      expect(nfv['VDU']['VDU1']).toMatchObject({ computeFlavourId: 'm1.tiny', vcImageId: 'cirros-0.5.2-x86_64-disk', desired_capacity: 1 });
      expect(nfv['VDU']['VDU2']).toMatchObject({ computeFlavourId: 'm1.tiny', vcImageId: 'cirros-0.5.2-x86_64-disk' });
      expect(nfv['CP']['VDU1_CP1']).toMatchObject({ network: 'net-public-1' });
      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
    },
    LONG,
  );

  it(
    "a user-data class one statement away from the sample is the package's own: without consent refused (exit 2), nothing recorded, no stack",
    async () => {
      const dir = await withUserData(V1_PACKAGE, 'UserData/lcm_user_data.py', V1_SAMPLE("        final['nfv']['VDU']['edge']['flavor'] = 'gw.edge.large'"));
      for (const file of ['Definitions/gateway_top.vnfd.yaml', 'Definitions/gateway_types.yaml']) {
        await writeFile(join(dir, file), (await readFile(join(dir, file), 'utf8')).replaceAll(V1_VNFD_ID, '0c1f7a52-3d9e-4b8a-8f61-2a7e5c9d1b0f'));
      }
      await ok(['vnfpkg-onboard', dir, '--name', 'gateway-v1-custom']);
      const { vnf, result } = await instantiate('gateway-v1-custom', 'v1-custom', v1Request);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain('"SampleUserData" is the package\'s own user-data class (in UserData/lcm_user_data.py of package');
      expect(result.stderr).toContain('--allow-package-scripts');
      const ops = JSON.parse(await ok(['op-list', '-o', 'json'])) as Array<{ vnfInstanceId: string }>;
      expect(ops.filter((o) => o.vnfInstanceId === vnf)).toEqual([]);
      const res = await fetch(`${os.heat.url}/stacks/vnf-${vnf}`, { headers: { 'x-auth-token': await projectToken(os.keystone) } });
      expect(res.status).toBe(404);
    },
    LONG,
  );
});
