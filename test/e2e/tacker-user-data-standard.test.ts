/**
 * Tacker v2's StandardUserData, served natively, on the real Keystone and
 * Heat, through the real program. The package (our own, in the shape of
 * Tacker's StandardUserData functional-test packages) has a Base HOT whose
 * VDUs are nested templates (`VDU1: {type: VDU1.yaml}`), a volume-booted VDU
 * whose storage's name has a dash (`VDU2-VirtualStorage`), and
 * UserData/userdata_standard.py in Tacker's form. What is asserted is what
 * Heat has: the stack's resources (`VDU1-0`, `VDU1-1`, … in place of
 * `VDU1`), the template Heat keeps (each indexed resource reading its own
 * `nfv` keys), and the `nfv` parameter, after instantiate, each scale out
 * and in, and a heal.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, okStdoutWith, vnfm, type RunResult } from '../support/cli.js';
import { openStackVimConfig, projectToken, useOpenStack, type OpenStackServers } from '../support/heat.js';

const PACKAGE = resolve('test/fixtures/tacker-shapes/v2-heat-standard');
const STANDINS = resolve('test/fixtures/heat/env/nova-neutron-standins.yaml');
const LONG = 900_000;
const VNFD_ID = '5e2b8d1c-7f3a-4c6e-9b21-8a4d0f6c3e17';
const NEXT_VNFD_ID = '5e2b8d1c-7f3a-4c6e-9b21-8a4d0f6c3e19';

let os: OpenStackServers;
let home: string;
let work: string;
const dirs: string[] = [];

const run = (args: string[]): Promise<RunResult> => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okStdoutWith((args) => run(args));

const USER_DATA = { 'lcm-operation-user-data': './UserData/userdata_standard.py', 'lcm-operation-user-data-class': 'StandardUserData' };

/** Tacker's sample3-style InstantiateVnfRequest (v2 cpConfig maps): the workers' uplink dynamic, the store's on a given subnet. */
const instantiateRequest = {
  flavourId: 'simple',
  instantiationLevelId: 'instantiation_level_1',
  extVirtualLinks: [
    {
      id: 'relay-uplink',
      resourceId: 'net-relay-uplink',
      extCps: [
        {
          cpdId: 'VDU1_CP1',
          cpConfig: { VDU1_CP1_1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', numDynamicAddresses: 1 }] } }] } },
        },
        {
          cpdId: 'VDU2_CP1',
          cpConfig: {
            VDU2_CP1_1: {
              cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', numDynamicAddresses: 1, subnetId: 'subnet-relay-uplink' }] } }],
            },
          },
        },
      ],
    },
  ],
  additionalParams: USER_DATA,
};

async function heatGet(path: string): Promise<any> {
  const res = await fetch(`${os.heat.url}${path}`, { headers: { 'x-auth-token': await projectToken(os.keystone) }, redirect: 'follow' });
  expect(res.status, path).toBe(200);
  return res.json();
}

/** What Heat has of the stack: its top-level resources, the template it keeps, and the nfv parameter. */
async function heatStack(vnf: string): Promise<{ resources: Record<string, { type: string; status: string; physicalId: string }>; template: any; nfv: any }> {
  const { stack } = await heatGet(`/stacks/vnf-${vnf}`);
  const { resources } = await heatGet(`/stacks/vnf-${vnf}/${stack.id}/resources`);
  const template = await heatGet(`/stacks/vnf-${vnf}/${stack.id}/template`);
  return {
    resources: Object.fromEntries(
      (resources as Array<{ resource_name: string; resource_type: string; resource_status: string; physical_resource_id: string }>).map((r) => [
        r.resource_name,
        { type: r.resource_type, status: r.resource_status, physicalId: r.physical_resource_id },
      ]),
    ),
    template,
    nfv: JSON.parse(stack.parameters['nfv']),
  };
}

/** The servers (VNFCs) vnfm records, by the stack resource they are in. */
async function vnfcs(vnf: string): Promise<Array<{ id: string; vduId: string; parent: string; resourceId: string }>> {
  const info = JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])).instantiatedVnfInfo;
  return (info.vnfcResourceInfo as Array<{ id: string; vduId: string; metadata: { parentResource?: string } }>).map((r) => ({
    id: info.vnfcInfo.find((c: { vnfcResourceInfoId: string }) => c.vnfcResourceInfoId === r.id).id,
    vduId: r.vduId,
    parent: r.metadata.parentResource ?? '',
    resourceId: r.id,
  }));
}

const vduResources = (resources: Record<string, unknown>) =>
  Object.keys(resources)
    .filter((n) => /^VDU\d(-\d+)?$/.test(n))
    .sort();

beforeAll(async () => {
  os = await useOpenStack();
  home = newHome();
  work = dirname(home);
  await writeFile(join(work, 'vim.yaml'), openStackVimConfig(os.keystone));
  await ok(['vim-register', '--config-file', join(work, 'vim.yaml'), '--is-default', 'os1']);
  await ok(['vnfpkg-onboard', PACKAGE, '--name', 'relay-standard']);
}, LONG);

afterAll(async () => {
  await os?.stop();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  if (work) await rm(work, { recursive: true, force: true });
});

describe("Tacker v2's StandardUserData, served natively on Heat", () => {
  it(
    'instantiate, scale out twice, scale in, heal, change-ext-conn, change-vnfpkg: one resource per VNFC, each reading its own nfv keys, as Heat has them',
    async () => {
      const vnf = JSON.parse(await ok(['vnf-create', '--package', 'relay-standard', '--name', 'relay', '-o', 'json'])).id as string;
      const file = join(work, 'instantiate.json');
      await writeFile(file, JSON.stringify(instantiateRequest));
      const inst = await run(['vnf-instantiate', vnf, '--request-file', file, '--heat-environment', STANDINS, '-o', 'json']);
      expect(inst.code, inst.stderr).toBe(0);
      expect(JSON.parse(inst.stdout).operationState).toBe('COMPLETED');
      expect(inst.stderr).toContain("(class StandardUserData) is Tacker v2's StandardUserData");

      // Instantiate: VDU1-0 and VDU2-0 in place of VDU1 and VDU2, the rest of the template as it was.
      let heat = await heatStack(vnf);
      expect(vduResources(heat.resources)).toEqual(['VDU1-0', 'VDU2-0']);
      expect(heat.resources['VDU1-0']!.type).toBe('VDU1.yaml');
      expect(Object.keys(heat.resources)).toEqual(expect.arrayContaining(['internalVL1', 'internalVL1_subnet', 'relay_spread']));
      expect(heat.template.resources['VDU1-0'].properties).toEqual({
        flavor: { get_param: ['nfv', 'VDU', 'VDU1-0', 'computeFlavourId'] },
        'image-VDU1': { get_param: ['nfv', 'VDU', 'VDU1-0', 'vcImageId'] },
        uplink: { get_param: ['nfv', 'CP', 'VDU1_CP1-0', 'network'] },
        inner: { get_resource: 'internalVL1' },
        group: { get_resource: 'relay_spread' },
      });
      expect(heat.template.resources['VDU2-0'].properties['image-VDU2-VirtualStorage']).toEqual({
        get_param: ['nfv', 'VDU', 'VDU2-VirtualStorage-0', 'vcImageId'],
      });
      expect(heat.nfv).toEqual({
        VDU: {
          'VDU1-0': { computeFlavourId: 'relay.small', vcImageId: 'relay-worker-2.0' },
          'VDU2-0': { computeFlavourId: 'relay.medium' },
          'VDU2-VirtualStorage-0': { vcImageId: 'relay-store-2.0' },
        },
        CP: {
          'VDU1_CP1-0': { network: 'net-relay-uplink' },
          'VDU2_CP1-0': { network: 'net-relay-uplink', fixed_ips: [{ subnet: 'subnet-relay-uplink' }] },
        },
      });
      let servers = await vnfcs(vnf);
      expect(servers.map((s) => `${s.vduId}@${s.parent}`).sort()).toEqual(['VDU1@VDU1-0', 'VDU2@VDU2-0']);

      // Scale out, twice: VDU1-1, then VDU1-2, each with its own keys; the earlier ones kept.
      for (const [i, expected] of [
        [1, ['VDU1-0', 'VDU1-1', 'VDU2-0']],
        [2, ['VDU1-0', 'VDU1-1', 'VDU1-2', 'VDU2-0']],
      ] as const) {
        const out = await run(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'VDU1_scale', '--number-of-steps', '1', '-o', 'json']);
        expect(out.code, out.stderr).toBe(0);
        heat = await heatStack(vnf);
        expect(vduResources(heat.resources)).toEqual(expected);
        expect(heat.nfv.VDU[`VDU1-${i}`]).toEqual({ computeFlavourId: 'relay.small', vcImageId: 'relay-worker-2.0' });
        expect(heat.nfv.CP[`VDU1_CP1-${i}`]).toEqual({ network: 'net-relay-uplink' });
        expect(heat.template.resources[`VDU1-${i}`].properties.uplink).toEqual({ get_param: ['nfv', 'CP', `VDU1_CP1-${i}`, 'network'] });
      }
      servers = await vnfcs(vnf);
      expect(
        servers
          .filter((s) => s.vduId === 'VDU1')
          .map((s) => s.parent)
          .sort(),
      ).toEqual(['VDU1-0', 'VDU1-1', 'VDU1-2']);
      let show = JSON.parse(await ok(['vnf-show', vnf, '-o', 'json']));
      expect(show.instantiatedVnfInfo.scaleStatus).toEqual([{ aspectId: 'VDU1_scale', scaleLevel: 2 }]);

      // Scale in: the newest VNFC's resource (VDU1-2) goes, and its keys leave nfv.
      const scaleIn = await run(['vnf-scale', vnf, '--type', 'SCALE_IN', '--aspect-id', 'VDU1_scale', '--number-of-steps', '1', '-o', 'json']);
      expect(scaleIn.code, scaleIn.stderr).toBe(0);
      heat = await heatStack(vnf);
      expect(vduResources(heat.resources)).toEqual(['VDU1-0', 'VDU1-1', 'VDU2-0']);
      expect(Object.keys(heat.nfv.VDU).sort()).toEqual(['VDU1-0', 'VDU1-1', 'VDU2-0', 'VDU2-VirtualStorage-0']);
      expect(Object.keys(heat.nfv.CP).sort()).toEqual(['VDU1_CP1-0', 'VDU1_CP1-1', 'VDU2_CP1-0']);
      servers = await vnfcs(vnf);
      expect(
        servers
          .filter((s) => s.vduId === 'VDU1')
          .map((s) => s.parent)
          .sort(),
      ).toEqual(['VDU1-0', 'VDU1-1']);
      show = JSON.parse(await ok(['vnf-show', vnf, '-o', 'json']));
      expect(show.instantiatedVnfInfo.scaleStatus).toEqual([{ aspectId: 'VDU1_scale', scaleLevel: 1 }]);

      // Heal the VNFC in VDU1-0: a new server in the same resource, the parameters and the other resources untouched.
      const before = heat;
      const target = servers.find((s) => s.parent === 'VDU1-0')!;
      const other = servers.find((s) => s.parent === 'VDU1-1')!;
      const healed = await run(['vnf-heal', vnf, '--vnfc-instance', target.id, '-o', 'json']);
      expect(healed.code, healed.stderr).toBe(0);
      heat = await heatStack(vnf);
      expect(vduResources(heat.resources)).toEqual(['VDU1-0', 'VDU1-1', 'VDU2-0']);
      expect(heat.nfv).toEqual(before.nfv);
      servers = await vnfcs(vnf);
      const rebuilt = servers.find((s) => s.parent === 'VDU1-0')!;
      expect(rebuilt.resourceId).not.toBe(target.resourceId);
      expect(servers.find((s) => s.parent === 'VDU1-1')!.resourceId).toBe(other.resourceId);

      // Change of external connectivity: the workers' uplink moves, per index; the store's CP as it was.
      const uplink2 = {
        id: 'relay-uplink-2',
        resourceId: 'net-relay-uplink-2',
        extCps: [
          {
            cpdId: 'VDU1_CP1',
            cpConfig: { VDU1_CP1_1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', numDynamicAddresses: 1 }] } }] } },
          },
        ],
      };
      await writeFile(join(work, 'ext-conn.json'), JSON.stringify({ extVirtualLinks: [uplink2] }));
      const moved = await run(['vnf-change-ext-conn', vnf, join(work, 'ext-conn.json'), '-o', 'json']);
      expect(moved.code, moved.stderr).toBe(0);
      heat = await heatStack(vnf);
      expect(heat.nfv.CP).toEqual({
        'VDU1_CP1-0': { network: 'net-relay-uplink-2' },
        'VDU1_CP1-1': { network: 'net-relay-uplink-2' },
        'VDU2_CP1-0': { network: 'net-relay-uplink', fixed_ips: [{ subnet: 'subnet-relay-uplink' }] },
      });

      // Change of package: the new VNFD's flavour for the workers, on the same resources; the moved uplink kept.
      const next = await mkdtemp(join(tmpdir(), 'vnfm-standard-next-'));
      dirs.push(next);
      await cp(PACKAGE, next, { recursive: true });
      for (const f of ['Definitions/relay_top.vnfd.yaml', 'Definitions/relay_types.yaml', 'Definitions/relay_df_simple.yaml']) {
        const text = await readFile(join(next, f), 'utf8');
        await writeFile(
          join(next, f),
          text.replaceAll(VNFD_ID, NEXT_VNFD_ID).replace('requested_additional_capability_name: relay.small', 'requested_additional_capability_name: relay.large'),
        );
      }
      await ok(['vnfpkg-onboard', next, '--name', 'relay-standard-next']);
      await writeFile(join(work, 'change-package.json'), JSON.stringify({ vnfdId: NEXT_VNFD_ID, additionalParams: { upgrade_type: 'RollingUpdate', ...USER_DATA } }));
      const changed = await run(['vnf-change-package', vnf, join(work, 'change-package.json'), '-o', 'json']);
      expect(changed.code, changed.stderr).toBe(0);
      heat = await heatStack(vnf);
      expect(vduResources(heat.resources)).toEqual(['VDU1-0', 'VDU1-1', 'VDU2-0']);
      expect(heat.nfv.VDU['VDU1-0']).toEqual({ computeFlavourId: 'relay.large', vcImageId: 'relay-worker-2.0' });
      expect(heat.nfv.VDU['VDU1-1']).toEqual({ computeFlavourId: 'relay.large', vcImageId: 'relay-worker-2.0' });
      expect(heat.nfv.CP['VDU1_CP1-1']).toEqual({ network: 'net-relay-uplink-2' });
      expect(JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])).vnfdId).toBe(NEXT_VNFD_ID);

      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
      const gone = await fetch(`${os.heat.url}/stacks/vnf-${vnf}`, { headers: { 'x-auth-token': await projectToken(os.keystone) } });
      expect(gone.status).toBe(404);
    },
    LONG,
  );

  it(
    "a file named StandardUserData that is not Tacker's userdata_standard.py is the package's own class: without consent refused (exit 2); nothing recorded, no stack",
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'vnfm-standard-'));
      dirs.push(dir);
      await cp(PACKAGE, dir, { recursive: true });
      const text = await readFile(join(dir, 'UserData/userdata_standard.py'), 'utf8');
      // The same class with its index helper changed: no longer Tacker's.
      await writeFile(join(dir, 'UserData/userdata_standard.py'), text.replace("return f'{name}-{index}'", "return f'{name}_{index}'"));
      for (const f of ['Definitions/relay_top.vnfd.yaml', 'Definitions/relay_types.yaml']) {
        await writeFile(join(dir, f), (await readFile(join(dir, f), 'utf8')).replaceAll(VNFD_ID, '5e2b8d1c-7f3a-4c6e-9b21-8a4d0f6c3e18'));
      }
      await ok(['vnfpkg-onboard', dir, '--name', 'relay-changed']);
      const vnf = JSON.parse(await ok(['vnf-create', '--package', 'relay-changed', '--name', 'relay-changed', '-o', 'json'])).id as string;
      const file = join(work, 'instantiate-changed.json');
      await writeFile(file, JSON.stringify(instantiateRequest));
      const r = await run(['vnf-instantiate', vnf, '--request-file', file, '--heat-environment', STANDINS, '-o', 'json']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain("named like Tacker v2's StandardUserData, but its file is not Tacker's userdata_standard.py");
      expect(r.stderr).toContain('"StandardUserData" is the package\'s own user-data class (in UserData/userdata_standard.py of package');
      expect(r.stderr).toContain('--allow-package-scripts');
      const ops = JSON.parse(await ok(['op-list', '-o', 'json'])) as Array<{ vnfInstanceId: string }>;
      expect(ops.filter((o) => o.vnfInstanceId === vnf)).toEqual([]);
      const res = await fetch(`${os.heat.url}/stacks/vnf-${vnf}`, { headers: { 'x-auth-token': await projectToken(os.keystone) } });
      expect(res.status).toBe(404);
    },
    LONG,
  );
});
