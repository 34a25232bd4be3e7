/**
 * A package's own LCM user-data class (not one of Tacker's samples), run
 * with Tacker v1's contract on the real Keystone and Heat, through the real
 * program. The package is the v1 Edge Gateway (our own, in Tacker's v1
 * shape) with UserData files of our own: EdgeUserData derives Tacker's
 * AbstractUserData and computes each VDU's flavor and image from the VNFD
 * and each CP's network and fixed addresses from the request with the
 * helpers of tacker.vnfm.lcm_user_data.utils (vnfm's stand-ins), then sizes
 * the edge router from an additionalParams value of its own. What is
 * asserted is the `nfv` parameter as Heat has it. Running package code
 * needs consent (--allow-package-scripts); a class that raises, a class the
 * file lacks and one that returns no dict are refused (exit 2) naming the
 * file and the class, with nothing recorded and no stack in Heat. A Tacker
 * v2 class of our own (on common_script_utils, in the heat-vnf sample) gives
 * Heat its parameters.nfv.
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
const LONG = 600_000;

let os: OpenStackServers;
let home: string;
let work: string;
let pkgDir: string;
let v2Dir: string;

const run = (args: string[]): Promise<RunResult> => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okStdoutWith((args) => run(args));

/** Our own user-data class on Tacker v1's utilities: not the sample (it reads the request's edge_size too). */
const EDGE_USER_DATA = [
  '"""Heat parameters of the Edge Gateway, sized per site."""',
  'import tacker.vnfm.lcm_user_data.utils as UserDataUtil',
  'from tacker.vnfm.lcm_user_data.abstract_user_data import AbstractUserData',
  '',
  "SIZES = {'large': 'gw.edge.large'}",
  '',
  '',
  'class EdgeUserData(AbstractUserData):',
  '',
  '    @staticmethod',
  '    def instantiate(base_hot_dict=None, vnfd_dict=None, inst_req_info=None, grant_info=None):',
  '        params = UserDataUtil.create_initial_param_server_port_dict(base_hot_dict)',
  '        flavors = UserDataUtil.create_vdu_flavor_capability_name_dict(vnfd_dict)',
  '        images = UserDataUtil.create_sw_image_dict(vnfd_dict)',
  '        networks = UserDataUtil.create_network_dict(inst_req_info, params)',
  '        final = UserDataUtil.create_final_param_dict(params, flavors, images, networks)',
  "        size = (inst_req_info.additional_params or {}).get('edge_size')",
  '        if size in SIZES:',
  "            final['nfv']['VDU']['edge']['flavor'] = SIZES[size]",
  "        print('edge flavor: %s' % final['nfv']['VDU']['edge']['flavor'])",
  '        return final',
  '',
].join('\n');

/** A class that fails as package code does: it looks for a node the VNFD does not have. */
const BROKEN_USER_DATA = [
  'from tacker.vnfm.lcm_user_data.abstract_user_data import AbstractUserData',
  '',
  '',
  'class RouterUserData(AbstractUserData):',
  '',
  '    @staticmethod',
  '    def instantiate(base_hot_dict=None, vnfd_dict=None, inst_req_info=None, grant_info=None):',
  "        router = vnfd_dict['topology_template']['node_templates']['router']",
  "        return {'nfv': {'VDU': {'router': router}}}",
  '',
  '',
  'class ListUserData(AbstractUserData):',
  '',
  '    @staticmethod',
  '    def instantiate(base_hot_dict=None, vnfd_dict=None, inst_req_info=None, grant_info=None):',
  "        return ['nfv']",
  '',
].join('\n');

/** Our own Tacker v2 class on common_script_utils: the VNFD's flavours, prefixed with the request's site. */
const SITE_USER_DATA_V2 = [
  'from tacker.sol_refactored.common import common_script_utils as csu',
  'from tacker.sol_refactored.infra_drivers.openstack import userdata_utils',
  '',
  '',
  'class SiteUserData(userdata_utils.AbstractUserData):',
  '',
  '    @staticmethod',
  '    def instantiate(req, inst, grant_req, grant, tmp_csar_dir):',
  "        vnfd = csu.get_vnfd(inst['vnfdId'], tmp_csar_dir)",
  "        flavour = req['flavourId']",
  "        nfv = csu.init_nfv_dict(vnfd.get_base_hot(flavour)['template'])",
  "        site = req.get('additionalParams', {}).get('site', 'any')",
  "        for name, vdu in nfv.get('VDU', {}).items():",
  "            vdu['computeFlavourId'] = '%s.%s' % (site, csu.get_param_flavor(name, flavour, vnfd, grant))",
  "            vdu['vcImageId'] = csu.get_param_image(name, flavour, vnfd, grant)",
  "            if 'desired_capacity' in vdu:",
  "                vdu['desired_capacity'] = csu.get_param_capacity(name, inst, grant_req)",
  "        for name, cp in nfv.get('CP', {}).items():",
  "            cp['network'] = csu.get_param_network(name, grant, req)",
  "        return {'parameters': {'nfv': nfv}}",
  '',
].join('\n');

const userData = (file: string, cls: string) => ({ 'lcm-operation-user-data': `./UserData/${file}`, 'lcm-operation-user-data-class': cls });

const request = (additionalParams: Record<string, unknown>) => ({
  flavourId: 'simple',
  instantiationLevelId: 'instantiation_level_1',
  extVirtualLinks: [
    {
      id: 'uplink',
      resourceId: 'net-uplink-7',
      extCps: [
        {
          cpdId: 'worker_CP1',
          cpConfig: [{ cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', numDynamicAddresses: 1 }] } }] }],
        },
        {
          cpdId: 'edge_CP1',
          cpConfig: [
            {
              cpProtocolData: [
                { layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', fixedAddresses: ['192.0.2.71'], subnetId: 'subnet-uplink-7' }] } },
              ],
            },
          ],
        },
      ],
    },
  ],
  additionalParams,
});

async function heatStack(vnf: string): Promise<{ status: number; parameters?: Record<string, string> }> {
  const res = await fetch(`${os.heat.url}/stacks/vnf-${vnf}`, { headers: { 'x-auth-token': await projectToken(os.keystone) }, redirect: 'follow' });
  if (res.status !== 200) return { status: res.status };
  const { stack } = (await res.json()) as { stack: { parameters: Record<string, string> } };
  return { status: 200, parameters: stack.parameters };
}

async function instantiate(name: string, additionalParams: Record<string, unknown>, flags: string[] = []): Promise<{ vnf: string; result: RunResult }> {
  const vnf = JSON.parse(await ok(['vnf-create', '--package', 'gateway-own-user-data', '--name', name, '-o', 'json'])).id as string;
  const file = join(work, `${name}.json`);
  await writeFile(file, JSON.stringify(request(additionalParams)));
  return { vnf, result: await run(['vnf-instantiate', vnf, '--request-file', file, '--heat-environment', STANDINS, '-o', 'json', ...flags]) };
}

/** Refused with exit 2: no occurrence, the instance NOT_INSTANTIATED, no stack in Heat. */
async function refusedLeavingNothing(vnf: string, result: RunResult): Promise<void> {
  expect(result.code, result.stderr).toBe(2);
  const ops = JSON.parse(await ok(['op-list', '-o', 'json'])) as Array<{ vnfInstanceId: string }>;
  expect(ops.filter((o) => o.vnfInstanceId === vnf)).toEqual([]);
  expect(JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])).instantiationState).toBe('NOT_INSTANTIATED');
  expect((await heatStack(vnf)).status).toBe(404);
}

beforeAll(async () => {
  os = await useOpenStack();
  home = newHome();
  work = dirname(home);
  await writeFile(join(work, 'vim.yaml'), openStackVimConfig(os.keystone));
  await ok(['vim-register', '--config-file', join(work, 'vim.yaml'), '--is-default', 'os1']);
  pkgDir = await mkdtemp(join(tmpdir(), 'vnfm-own-user-data-'));
  await cp(V1_PACKAGE, pkgDir, { recursive: true });
  await mkdir(join(pkgDir, 'UserData'), { recursive: true });
  await writeFile(join(pkgDir, 'UserData/__init__.py'), '');
  await writeFile(join(pkgDir, 'UserData/edge_user_data.py'), EDGE_USER_DATA);
  await writeFile(join(pkgDir, 'UserData/broken_user_data.py'), BROKEN_USER_DATA);
  await ok(['vnfpkg-onboard', pkgDir, '--name', 'gateway-own-user-data']);
  v2Dir = await mkdtemp(join(tmpdir(), 'vnfm-own-user-data-v2-'));
  await cp(join(V2_SAMPLE, 'package'), v2Dir, { recursive: true });
  await mkdir(join(v2Dir, 'UserData'), { recursive: true });
  await writeFile(join(v2Dir, 'UserData/site_user_data.py'), SITE_USER_DATA_V2);
  await ok(['vnfpkg-onboard', v2Dir, '--name', 'heat-vnf-own-user-data']);
}, LONG);

afterAll(async () => {
  await os?.stop();
  if (work) await rm(work, { recursive: true, force: true });
  if (pkgDir) await rm(pkgDir, { recursive: true, force: true });
  if (v2Dir) await rm(v2Dir, { recursive: true, force: true });
});

describe("a package's own user-data class, run with Tacker v1's contract", () => {
  it(
    "with --allow-package-scripts: Heat's nfv is the one the class computed from the VNFD and the request",
    async () => {
      const { vnf, result } = await instantiate('edge', { ...userData('edge_user_data.py', 'EdgeUserData'), edge_size: 'large' }, ['--allow-package-scripts']);
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).operationState).toBe('COMPLETED');
      expect(result.stderr).toContain("(class EdgeUserData) is the package's own user-data class: vnfm runs it with Tacker v1's contract");
      const stack = await heatStack(vnf);
      expect(stack.status).toBe(200);
      expect(JSON.parse(stack.parameters!['nfv']!)).toEqual({
        VDU: {
          worker: { flavor: 'gw.worker.small', image: 'gateway-worker-3.2' },
          edge: { flavor: 'gw.edge.large', image: 'gateway-edge-3.2' },
        },
        CP: {
          worker_CP1: { network: 'net-uplink-7', fixed_ips: [] },
          edge_CP1: { network: 'net-uplink-7', fixed_ips: [{ subnet: 'subnet-uplink-7', ip_address: '192.0.2.71' }] },
        },
      });
      // The instance keeps what the class computed, and which class it was.
      const heat = JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])).instantiatedVnfInfo.metadata.heat;
      expect(heat.nfv.VDU.edge.flavor).toBe('gw.edge.large');
      expect(heat.userDataClass).toEqual({ file: 'UserData/edge_user_data.py', className: 'EdgeUserData', generation: 'v1' });
      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
    },
    LONG,
  );

  it(
    'without consent: refused (exit 2), naming the class, the file and the flag; nothing recorded, no stack',
    async () => {
      const { vnf, result } = await instantiate('no-consent', userData('edge_user_data.py', 'EdgeUserData'));
      await refusedLeavingNothing(vnf, result);
      expect(result.stderr).toContain(
        'additionalParams.lcm-operation-user-data-class "EdgeUserData" is the package\'s own user-data class (in UserData/edge_user_data.py of package',
      );
      expect(result.stderr).toContain("running a package's code needs the operator's consent");
      expect(result.stderr).toContain('--allow-package-scripts');
    },
    LONG,
  );

  it(
    'a class that raises: refused (exit 2) with its exception and the line it came from; nothing recorded, no stack',
    async () => {
      const { vnf, result } = await instantiate('raises', userData('broken_user_data.py', 'RouterUserData'), ['--allow-package-scripts']);
      await refusedLeavingNothing(vnf, result);
      expect(result.stderr).toContain('user-data class RouterUserData in UserData/broken_user_data.py of package');
      expect(result.stderr).toContain("raised KeyError: 'router'");
      expect(result.stderr).toMatch(/broken_user_data\.py", line 8, in instantiate/);
    },
    LONG,
  );

  it(
    'a class the file does not have, and a class returning a list: each refused (exit 2), naming file and class',
    async () => {
      const missing = await instantiate('no-class', userData('edge_user_data.py', 'CoreUserData'), ['--allow-package-scripts']);
      await refusedLeavingNothing(missing.vnf, missing.result);
      expect(missing.result.stderr).toContain('UserData/edge_user_data.py of package');
      expect(missing.result.stderr).toContain('has no class CoreUserData (its classes: EdgeUserData)');
      const list = await instantiate('list', userData('broken_user_data.py', 'ListUserData'), ['--allow-package-scripts']);
      await refusedLeavingNothing(list.vnf, list.result);
      expect(list.result.stderr).toContain('user-data class ListUserData in UserData/broken_user_data.py of package');
      expect(list.result.stderr).toContain('returned a list, not a dict of HOT parameters');
    },
    LONG,
  );

  it(
    "a Tacker v2 class (userdata_utils.AbstractUserData), allowed: Heat's nfv is its parameters.nfv",
    async () => {
      const vnf = JSON.parse(await ok(['vnf-create', '--package', 'heat-vnf-own-user-data', '--name', 'v2-site', '-o', 'json'])).id as string;
      const body = JSON.parse((await readFile(join(V2_SAMPLE, 'requests/instantiate.json'), 'utf8')).replace('REPLACE-WITH-EXTERNAL-NETWORK-ID', 'net-public-3'));
      body.additionalParams = { ...userData('site_user_data.py', 'SiteUserData'), site: 'osaka' };
      const file = join(work, 'v2-site.json');
      await writeFile(file, JSON.stringify(body));
      const result = await run(['vnf-instantiate', vnf, '--request-file', file, '--heat-environment', STANDINS, '--allow-package-scripts', '-o', 'json']);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain("(class SiteUserData) is the package's own user-data class: vnfm runs it with Tacker v2's contract");
      const stack = await heatStack(vnf);
      expect(JSON.parse(stack.parameters!['nfv']!)).toEqual({
        VDU: {
          VDU1: { computeFlavourId: 'osaka.m1.tiny', vcImageId: 'cirros-0.5.2-x86_64-disk', desired_capacity: 1 },
          VDU2: { computeFlavourId: 'osaka.m1.tiny', vcImageId: 'cirros-0.5.2-x86_64-disk' },
        },
        CP: { VDU1_CP1: { network: 'net-public-3' }, VDU2_CP1: { network: 'net-public-3' } },
      });
      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
    },
    LONG,
  );
});
