/**
 * The heat-vnf sample's whole life on a real Keystone and Heat (no Nova or
 * Neutron: the stand-in environment of test/fixtures/heat/env/), through the
 * real program, and the faults: a template Heat rejects, a stack that ends
 * CREATE_FAILED (then rolled back). Tacker's request shapes: a v1 body
 * written for Tacker's test cloud runs on the default VIM in its region; a
 * change of external connectivity with vimConnectionInfo merges it into the
 * instance and updates the stack there, and one that fails there is rolled
 * back on the VIM the instance keeps.
 */
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, vnfm, type RunResult, okStdoutWith } from '../support/cli.js';
import { projectToken, useOpenStack, type OpenStackServers, openStackVimConfig } from '../support/heat.js';

const SAMPLE = resolve('csar-samples/heat-vnf');
const STANDINS = resolve('test/fixtures/heat/env/nova-neutron-standins.yaml');
const VNFD_ID = '72c3c844-4146-4e33-a2ab-fe1fbd9927fc';
// The real Keystone and Heat on 2 cores: a slow run of the whole lifecycle took past 240 s once.
const LONG = 480_000;

let os: OpenStackServers;
let home: string;
let work: string;
let addressesEnv: string;
let failingEnv: string;

const run = (args: string[]): Promise<RunResult> => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okStdoutWith((args) => run(args));
async function show(vnf: string) {
  return JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])) as {
    id: string;
    instantiationState: string;
    instantiatedVnfInfo?: {
      vnfcInfo: Array<{ id: string; vduId: string }>;
      vnfcResourceInfo: Array<{ vduId: string; metadata: { addresses: Record<string, string[]> } }>;
      scaleStatus: Array<{ aspectId: string; scaleLevel: number }>;
    };
  };
}
const vnfcIds = async (vnf: string, vdu = 'VDU1') => (await show(vnf)).instantiatedVnfInfo!.vnfcInfo.filter((v) => v.vduId === vdu).map((v) => v.id);

/** The stack as Heat shows it to the test user; undefined when there is none. */
async function stack(instanceId: string): Promise<{ stack_status: string } | undefined> {
  const token = await projectToken(os.keystone);
  const res = await fetch(`${os.heat.url}/stacks/vnf-${instanceId}`, { headers: { 'x-auth-token': token } });
  if (res.status === 404) return undefined;
  return ((await res.json()) as { stack: { stack_status: string } }).stack;
}

/** The sample's InstantiateVnfRequest, as the tests write it. */
const instantiateRequest = async () => JSON.parse(await readFile(join(work, 'instantiate.json'), 'utf8')) as Record<string, unknown>;

async function newInstance(name: string): Promise<string> {
  return JSON.parse(await ok(['vnf-create', '--package', VNFD_ID, '--name', name, '-o', 'json'])).id as string;
}

beforeAll(async () => {
  os = await useOpenStack();
  home = newHome();
  work = dirname(home);
  const vimConfig = join(work, 'vim.yaml');
  await writeFile(vimConfig, openStackVimConfig(os.keystone));
  await ok(['vim-register', '--config-file', vimConfig, '--is-default', 'os1']);
  await ok(['vnfpkg-build', join(SAMPLE, 'package'), '-o', join(work, 'heat-vnf.zip')]);
  await ok(['vnfpkg-onboard', join(work, 'heat-vnf.zip')]);
  const request = (await readFile(join(SAMPLE, 'requests/instantiate.json'), 'utf8')).replace('REPLACE-WITH-EXTERNAL-NETWORK-ID', 'net-public-1');
  await writeFile(join(work, 'instantiate.json'), request);
  // The addresses the stand-in ports take: VDU2's fixed, VDU1's members under 10.20.
  addressesEnv = join(work, 'addresses.yaml');
  await writeFile(addressesEnv, 'parameter_defaults:\n  standin_addresses:\n    VDU2_CP1: 192.168.0.10\n    VDU1_CP1: "10.20."\n');
  // VDU2's server fails: a copy of the stand-in whose TestResource fails.
  const server = await readFile(join(dirname(STANDINS), 'standins/server.yaml'), 'utf8');
  await mkdir(join(work, 'failing'), { recursive: true });
  await writeFile(join(work, 'failing/server.yaml'), server.replace('      value: {get_param: name}\n', '      value: {get_param: name}\n      fail: true\n'));
  failingEnv = join(work, 'failing.yaml');
  await writeFile(failingEnv, 'resource_registry:\n  resources:\n    VDU2:\n      OS::Nova::Server: failing/server.yaml\n');
}, LONG);

afterAll(async () => {
  await os?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the heat-vnf sample on Keystone and Heat', () => {
  it(
    'instantiate, scale out and in, heal one VNFC, heal all, terminate',
    async () => {
      const vnf = await newInstance('hv');
      const inst = await run([
        'vnf-instantiate',
        vnf,
        '--request-file',
        join(work, 'instantiate.json'),
        '--heat-environment',
        STANDINS,
        '--heat-environment',
        addressesEnv,
        '-o',
        'json',
      ]);
      expect(inst.stderr).toMatch(/CREATE_COMPLETE/);
      expect(inst.code).toBe(0);
      expect(JSON.parse(inst.stdout).operationState).toBe('COMPLETED');
      expect((await stack(vnf))?.stack_status).toBe('CREATE_COMPLETE');
      const info = (await show(vnf)).instantiatedVnfInfo!;
      expect(info.vnfcInfo.map((v) => v.vduId).sort()).toEqual(['VDU1', 'VDU2']);
      const vdu2 = info.vnfcResourceInfo.find((r) => r.vduId === 'VDU2')!;
      expect(vdu2.metadata.addresses['VDU2_CP1']).toEqual(['192.168.0.10']);
      expect(vdu2.metadata.addresses['VDU2_CP2']?.[0]).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect(info.vnfcResourceInfo.find((r) => r.vduId === 'VDU1')!.metadata.addresses['VDU1_CP1']?.[0]).toMatch(/^10\.20\.\d+\.\d+$/);

      const first = await vnfcIds(vnf);
      await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']);
      const two = await vnfcIds(vnf);
      expect(two).toHaveLength(2);
      expect(two).toEqual(expect.arrayContaining(first));
      await ok(['vnf-scale', vnf, '--type', 'SCALE_IN', '--aspect-id', 'vdu1_aspect']);
      // The newest member went, the first stayed.
      expect(await vnfcIds(vnf)).toEqual(first);
      expect((await show(vnf)).instantiatedVnfInfo!.scaleStatus).toEqual([{ aspectId: 'vdu1_aspect', scaleLevel: 0 }]);

      const vdu2Before = await vnfcIds(vnf, 'VDU2');
      await ok(['vnf-heal', vnf, '--vnfc-instance', first[0]!, '--cause', 'not answering']);
      const healed = await vnfcIds(vnf);
      expect(healed).toHaveLength(1);
      expect(healed[0]).not.toBe(first[0]);
      expect(await vnfcIds(vnf, 'VDU2')).toEqual(vdu2Before);

      await writeFile(join(work, 'heal-all.json'), JSON.stringify({ additionalParams: { all: true } }));
      await ok(['vnf-heal', vnf, '--request-file', join(work, 'heal-all.json')]);
      expect(await vnfcIds(vnf)).not.toEqual(healed);
      expect(await vnfcIds(vnf, 'VDU2')).not.toEqual(vdu2Before);
      // The environments kept at instantiate were used again: the addresses are still the chosen ones.
      const after = (await show(vnf)).instantiatedVnfInfo!;
      expect(after.vnfcResourceInfo.find((r) => r.vduId === 'VDU2')!.metadata.addresses['VDU2_CP1']).toEqual(['192.168.0.10']);

      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
      expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
      expect(await stack(vnf)).toBeUndefined();
    },
    LONG,
  );

  it(
    "a v1 body written for Tacker's test cloud (fake_vnflcm.py): instantiated on the default VIM in the entry's region, kept for scale and terminate; another region: exit 6, nothing recorded",
    async () => {
      const ID = 'f8c35bd0-4d67-4436-9f11-14b8a84c92aa';
      // fake_vnflcm.py make_inst_request_body's vimConnectionInfo: no vimId, the endpoint and credentials of Tacker's devstack.
      const v1 = (region: string) => [
        {
          id: ID,
          vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_2',
          vimConnectionId: ID,
          interfaceInfo: { endpoint: 'http://127.0.0.1/identity' },
          accessInfo: { username: 'nfv_user', region, password: 'devstack', tenant: '6f7c0b3e-2a4d-4c1e-9f8a-1b2c3d4e5f60' },
        },
      ];
      const os1 = JSON.parse(await ok(['vim-show', 'os1', '-o', 'json'])) as { id: string; status: string };
      await writeFile(join(work, 'v1-instantiate.json'), JSON.stringify({ ...(await instantiateRequest()), vimConnectionInfo: v1(os.keystone.region) }));
      const vnf = await newInstance('v1-body');
      const inst = await run(['vnf-instantiate', vnf, '--request-file', join(work, 'v1-instantiate.json'), '--heat-environment', STANDINS, '-o', 'json']);
      expect(inst.stderr).toContain(`the default VIM "os1" (${os1.id}) is used in region "${os.keystone.region}" (accessInfo.region)`);
      expect(inst.stderr).toContain('interfaceInfo (endpoint), accessInfo (username, password, tenant) not used, as in Tacker v1');
      expect(inst.code).toBe(0);
      expect((await stack(vnf))?.stack_status).toBe('CREATE_COMPLETE');
      const shown = JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])) as { vimId: string; vimConnectionInfo: unknown };
      expect(shown.vimId).toBe(os1.id);
      expect(shown.vimConnectionInfo).toEqual({ [ID]: { vimId: os1.id, vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3', accessInfo: { region: os.keystone.region } } });
      expect(JSON.stringify(JSON.parse(await ok(['op-list', '--vnf', vnf, '-o', 'json'])))).not.toMatch(/devstack|nfv_user/);
      await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']);
      expect(await vnfcIds(vnf)).toHaveLength(2);
      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
      expect(await stack(vnf)).toBeUndefined();

      // The region is the one used: the catalog has no Heat in RegionTwo.
      await writeFile(join(work, 'v1-region-two.json'), JSON.stringify({ ...(await instantiateRequest()), vimConnectionInfo: v1('RegionTwo') }));
      const other = await newInstance('v1-region-two');
      const r = await run(['vnf-instantiate', other, '--request-file', join(work, 'v1-region-two.json'), '--heat-environment', STANDINS]);
      expect(r.code).toBe(6);
      expect(r.stderr).toMatch(/the catalog has no orchestration \(Heat\) endpoint in region "RegionTwo"/);
      expect(JSON.parse(await ok(['op-list', '--vnf', other, '-o', 'json']))).toEqual([]);
      // The VIM as registered (its own region) is not marked unreachable by it.
      expect((JSON.parse(await ok(['vim-show', 'os1', '-o', 'json'])) as { status: string }).status).toBe(os1.status);
    },
    LONG,
  );

  it(
    'change-ext-conn with vimConnectionInfo (paramgen.py change_ext_conn_max): merged into the instance, the stack updated on that VIM; one that fails there rolls back on the VIM the instance keeps',
    async () => {
      const vnf = await newInstance('ext-conn');
      expect((await run(['vnf-instantiate', vnf, '--request-file', join(work, 'instantiate.json'), '--heat-environment', STANDINS])).code).toBe(0);
      const vimEntry = (username: string, password: string, project: string) => ({
        vimId: '3a1e2b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b',
        vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
        interfaceInfo: { endpoint: os.keystone.url },
        accessInfo: { username, region: os.keystone.region, password, project, projectDomain: 'Default', userDomain: 'Default' },
        extra: { 'dummy-key': 'dummy-val' },
      });
      const body = (network: string, vim1: ReturnType<typeof vimEntry>) => ({
        extVirtualLinks: [
          {
            id: 'ext-vl-2',
            vimConnectionId: 'vim1',
            resourceProviderId: '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a',
            resourceId: network,
            extCps: [
              {
                cpdId: 'VDU1_CP1',
                cpConfig: { VDU1_CP1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', numDynamicAddresses: 1 }] } }] } },
              },
            ],
          },
        ],
        vimConnectionInfo: { vim1, vim2: { ...vimEntry('dummy_user', 'dummy_password', 'dummy_project'), vimId: '4b2f3c5d-6e7f-4081-9bac-1d2e3f4a5b6c' } },
        additionalParams: { 'dummy-key': 'dummy-val' },
      });
      type Shown = {
        vimId?: string;
        vimConnectionInfo?: Record<string, { interfaceInfo: unknown; accessInfo: Record<string, unknown>; extra: unknown }>;
        instantiatedVnfInfo: { metadata: { heat: { nfv: { CP: Record<string, { network?: string }> } } } };
      };
      const shownOf = async () => JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])) as Shown;
      const { user, project, url } = os.keystone;

      await writeFile(join(work, 'ext-conn.json'), JSON.stringify(body('net-public-2', vimEntry(user.name, user.password, project))));
      const changed = await run(['vnf-change-ext-conn', vnf, join(work, 'ext-conn.json'), '-o', 'json']);
      expect(changed.stderr).toMatch(/vimConnectionInfo\.vim2 is not kept: an instance runs on one VIM/);
      expect(changed.code).toBe(0);
      expect(JSON.parse(changed.stdout)).toMatchObject({ operation: 'CHANGE_EXT_CONN', operationState: 'COMPLETED' });
      expect((await stack(vnf))?.stack_status).toBe('UPDATE_COMPLETE');
      const merged = await shownOf();
      expect(merged.vimId).toBeUndefined();
      expect(Object.keys(merged.vimConnectionInfo!)).toEqual(['vim1']);
      expect(merged.vimConnectionInfo!['vim1']).toMatchObject({
        interfaceInfo: { endpoint: url },
        accessInfo: { username: user.name, password: '***', project },
        extra: { 'dummy-key': 'dummy-val' },
      });
      expect(merged.instantiatedVnfInfo.metadata.heat.nfv.CP['VDU1_CP1']?.network).toBe('net-public-2');

      // The admin of another project: Keystone takes the credentials, but its Heat has no such stack.
      await writeFile(join(work, 'ext-conn-elsewhere.json'), JSON.stringify(body('net-public-3', vimEntry('admin', os.keystone.adminPassword, 'admin'))));
      const failed = await run(['vnf-change-ext-conn', vnf, join(work, 'ext-conn-elsewhere.json')]);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(/FAILED_TEMP/);
      expect((await shownOf()).vimConnectionInfo).toEqual(merged.vimConnectionInfo);
      const op = (JSON.parse(await ok(['op-list', '--vnf', vnf, '--state', 'FAILED_TEMP', '-o', 'json'])) as Array<{ id: string }>)[0]!;
      await ok(['op-rollback', op.id]);
      const back = await shownOf();
      expect(back.vimConnectionInfo).toEqual(merged.vimConnectionInfo);
      expect(back.instantiatedVnfInfo.metadata.heat.nfv.CP['VDU1_CP1']?.network).toBe('net-public-2');
      expect((await stack(vnf))?.stack_status).toBe('UPDATE_COMPLETE');

      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
      expect(await stack(vnf)).toBeUndefined();
    },
    LONG,
  );

  it(
    'a template Heat rejects: FAILED_TEMP naming the file, nothing created; rollback leaves nothing',
    async () => {
      const broken = join(work, 'broken');
      await cp(join(SAMPLE, 'package'), broken, { recursive: true });
      const top = join(broken, 'BaseHOT/simple/heat_vnf.yaml');
      await writeFile(top, (await readFile(top, 'utf8')).replace('flavor: { get_param: [ nfv, VDU, VDU2, computeFlavourId ] }', 'flavor: { get_param: no_such_parameter }'));
      const vnfd = join(broken, 'Definitions/heat_vnf_top.vnfd.yaml');
      await writeFile(vnfd, (await readFile(vnfd, 'utf8')).replaceAll(VNFD_ID, '5b0c4d0e-1111-4c5e-9a63-000000000001'));
      await ok(['vnfpkg-build', broken, '-o', join(work, 'broken.zip')]);
      await ok(['vnfpkg-onboard', join(work, 'broken.zip')]);
      const vnf = JSON.parse(await ok(['vnf-create', '--package', '5b0c4d0e-1111-4c5e-9a63-000000000001', '--name', 'broken', '-o', 'json'])).id as string;
      const r = await run(['vnf-instantiate', vnf, '--request-file', join(work, 'instantiate.json'), '--heat-environment', STANDINS]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/Heat rejected the template BaseHOT\/simple\/heat_vnf\.yaml: .*no_such_parameter/);
      expect(r.stderr).toMatch(/FAILED_TEMP/);
      expect(await stack(vnf)).toBeUndefined();
      const op = JSON.parse(await ok(['op-list', '-o', 'json'])).find((o: { vnfInstanceId: string }) => o.vnfInstanceId === vnf);
      await ok(['op-rollback', op.id]);
      expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
    },
    LONG,
  );

  it(
    'a stack that ends CREATE_FAILED: FAILED_TEMP with the reason and the failed resource; rollback deletes the stack',
    async () => {
      const vnf = await newInstance('fails');
      const r = await run(['vnf-instantiate', vnf, '--request-file', join(work, 'instantiate.json'), '--heat-environment', STANDINS, '--heat-environment', failingEnv]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/Heat stack vnf-[0-9a-f-]+ ended CREATE_FAILED: .*; failed: .*\(OS::Heat::TestResource in vnf-[^)]*VDU2/);
      expect((await stack(vnf))?.stack_status).toBe('CREATE_FAILED');
      const op = JSON.parse(await ok(['op-list', '-o', 'json', '--fields', 'error', '--exclude-default'])).find((o: { vnfInstanceId: string }) => o.vnfInstanceId === vnf);
      expect(op.operationState).toBe('FAILED_TEMP');
      expect(op.error.detail).toMatch(/CREATE_FAILED/);
      await ok(['op-rollback', op.id]);
      expect(await stack(vnf)).toBeUndefined();
      expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
    },
    LONG,
  );
});
