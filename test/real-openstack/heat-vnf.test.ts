/**
 * The heat-vnf sample (Tacker's v2 shape: `nfv.VDU.<vdu>.computeFlavourId`
 * and `vcImageId`) on a real OpenStack, with no stand-in environment: Heat
 * creates real Nova servers and Neutron ports and networks. Every assertion
 * reads the cloud's own APIs (Nova, Neutron) as well as what vnfm reports:
 * the servers are ACTIVE with the flavor and image the VNFD names, scaling
 * changes how many there are, a heal replaces the server, and terminate
 * leaves nothing of the stack.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, okStdoutWith, vnfm } from '../support/cli.js';
import { openStackVimConfig } from '../support/heat.js';
import { CloudClient, createTenant, emptyQcow2, useRealOpenStack, type Port, type Server } from '../support/real-openstack-client.js';
import type { RealOpenStackInfo } from '../support/real-openstack.js';

const SAMPLE = resolve('csar-samples/heat-vnf');
const VNFD_ID = '72c3c844-4146-4e33-a2ab-fe1fbd9927fc';
/** What the VNFD names: VDU1's and VDU2's requested_additional_capability_name and sw_image_data.name. */
const FLAVOR = 'm1.tiny';
const IMAGE = 'cirros-0.5.2-x86_64-disk';
/** The cloud's cold start (minutes, alongside the other tiers) and its setup. */
const SETUP = 30 * 60_000;
/** A real stack's create, two scales, a heal and a delete on two busy cores. */
const LIFECYCLE = 30 * 60_000;

let cloud: RealOpenStackInfo;
let user: CloudClient;
let home: string;
let work: string;
let flavorId: string;
let imageId: string;
let extNet: string;

const ok = okStdoutWith((args) => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } }));

interface Shown {
  instantiationState: string;
  instantiatedVnfInfo?: {
    vnfcInfo: Array<{ id: string; vduId: string; vnfcResourceInfoId: string }>;
    vnfcResourceInfo: Array<{ id: string; vduId: string; computeResource: { resourceId: string } }>;
    scaleStatus: Array<{ aspectId: string; scaleLevel: number }>;
  };
}
const show = async (vnf: string) => JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])) as Shown;

/** The project's servers by VDU (Heat names them after it), each checked ACTIVE with the VNFD's flavor and image. */
async function serversByVdu(): Promise<Record<string, Server[]>> {
  const byVdu: Record<string, Server[]> = {};
  for (const s of await user.servers()) {
    expect(s.status, `server ${s.id} (${s.name})`).toBe('ACTIVE');
    expect(s.flavor.id, `flavor of ${s.name}`).toBe(flavorId);
    expect(s.image === '' ? undefined : s.image.id, `image of ${s.name}`).toBe(imageId);
    (byVdu[s.name] ??= []).push(s);
  }
  return byVdu;
}
const ids = (servers: Server[] | undefined) => (servers ?? []).map((s) => s.id).sort();

/** Each server has its two ports, the first on the external network the request names, the second on the stack's internal network. */
function expectPorts(ports: Port[], servers: Server[], internalNet: string): void {
  expect(ports.map((p) => p.device_id).sort()).toEqual(servers.flatMap((s) => [s.id, s.id]).sort());
  for (const s of servers) {
    const own = ports.filter((p) => p.device_id === s.id);
    expect(own.map((p) => p.network_id).sort(), `networks of ${s.name} ${s.id}`).toEqual([extNet, internalNet].sort());
    expect(own.every((p) => p.device_owner.startsWith('compute:'))).toBe(true);
    const internal = own.find((p) => p.network_id === internalNet)!;
    expect(internal.fixed_ips[0]?.ip_address).toMatch(/^192\.168\.10\.\d+$/);
  }
}

/** What vnfm reports: the Nova server id of each VNFC of `vdu`. */
async function reported(vnf: string, vdu: string): Promise<string[]> {
  const info = (await show(vnf)).instantiatedVnfInfo!;
  return info.vnfcResourceInfo
    .filter((r) => r.vduId === vdu)
    .map((r) => r.computeResource.resourceId)
    .sort();
}

beforeAll(async () => {
  cloud = await useRealOpenStack();
  const tenant = await createTenant(cloud, `heatvnf-${randomBytes(3).toString('hex')}`);
  user = CloudClient.of(cloud, tenant);
  // The flavor and image the VNFD names, and the external network of the request, made as an operator would.
  flavorId = await CloudClient.admin(cloud).ensureFlavor(FLAVOR, { vcpus: 1, ramMiB: 512, diskGiB: 1 });
  imageId = await user.createImage(IMAGE, emptyQcow2(64), { disk: 'qcow2', container: 'bare' });
  extNet = await user.createNetwork('ext-net', '10.30.0.0/24');

  home = newHome();
  work = dirname(home);
  await writeFile(join(work, 'vim.yaml'), openStackVimConfig(tenant));
  await ok(['vim-register', '--config-file', join(work, 'vim.yaml'), '--is-default', 'real-os']);
  await ok(['vnfpkg-build', join(SAMPLE, 'package'), '-o', join(work, 'heat-vnf.zip')]);
  await ok(['vnfpkg-onboard', join(work, 'heat-vnf.zip')]);
  const request = await readFile(join(SAMPLE, 'requests/instantiate.json'), 'utf8');
  await writeFile(join(work, 'instantiate.json'), request.replace('REPLACE-WITH-EXTERNAL-NETWORK-ID', extNet));
}, SETUP);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the heat-vnf sample on a real OpenStack (Nova with the fake driver, Neutron, Glance)', () => {
  it(
    'instantiate: real ACTIVE servers with the VNFD flavor and image and their ports; scale out and in; heal one VNFC; terminate leaves nothing',
    async () => {
      const vnf = JSON.parse(await ok(['vnf-create', '--package', VNFD_ID, '--name', 'real-hv', '-o', 'json'])).id as string;
      const inst = JSON.parse(await ok(['vnf-instantiate', vnf, '--request-file', join(work, 'instantiate.json'), '-o', 'json']));
      expect(inst.operationState).toBe('COMPLETED');

      // One VDU1 (instantiation_level_1) and one VDU2, as Nova has them.
      let servers = await serversByVdu();
      expect(Object.keys(servers).sort()).toEqual(['VDU1', 'VDU2']);
      expect(servers['VDU1']).toHaveLength(1);
      expect(servers['VDU2']).toHaveLength(1);
      expect(await reported(vnf, 'VDU1')).toEqual(ids(servers['VDU1']));
      expect(await reported(vnf, 'VDU2')).toEqual(ids(servers['VDU2']));
      const internalNet = (await user.networks()).find((n) => n.id !== extNet)!.id;
      expectPorts(await user.ports(), [...servers['VDU1']!, ...servers['VDU2']!], internalNet);
      const firstVdu1 = servers['VDU1']![0]!.id;
      const vdu2 = servers['VDU2']![0]!.id;

      await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']);
      servers = await serversByVdu();
      expect(servers['VDU1']).toHaveLength(2);
      expect(ids(servers['VDU1'])).toContain(firstVdu1);
      expect(ids(servers['VDU2'])).toEqual([vdu2]);
      expect(await reported(vnf, 'VDU1')).toEqual(ids(servers['VDU1']));
      expectPorts(await user.ports(), [...servers['VDU1']!, ...servers['VDU2']!], internalNet);

      await ok(['vnf-scale', vnf, '--type', 'SCALE_IN', '--aspect-id', 'vdu1_aspect']);
      servers = await serversByVdu();
      expect(ids(servers['VDU1'])).toEqual([firstVdu1]);
      expect(ids(servers['VDU2'])).toEqual([vdu2]);
      expect((await show(vnf)).instantiatedVnfInfo!.scaleStatus).toEqual([{ aspectId: 'vdu1_aspect', scaleLevel: 0 }]);
      expectPorts(await user.ports(), [...servers['VDU1']!, ...servers['VDU2']!], internalNet);

      // Heal the VDU1 VNFC: Nova has a new server in its place, the old one is gone, VDU2 is untouched.
      const vnfc = (await show(vnf)).instantiatedVnfInfo!.vnfcInfo.find((c) => c.vduId === 'VDU1')!;
      await ok(['vnf-heal', vnf, '--vnfc-instance', vnfc.id, '--cause', 'not answering']);
      servers = await serversByVdu();
      expect(servers['VDU1']).toHaveLength(1);
      expect(servers['VDU1']![0]!.id).not.toBe(firstVdu1);
      expect(await user.server(firstVdu1)).toBeUndefined();
      expect(ids(servers['VDU2'])).toEqual([vdu2]);
      expect(await reported(vnf, 'VDU1')).toEqual(ids(servers['VDU1']));
      expectPorts(await user.ports(), [...servers['VDU1']!, ...servers['VDU2']!], internalNet);

      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
      expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
      // Nothing of the stack is left: no server, no port, only the network the test made. (The cloud has no Cinder: the sample has no volume.)
      expect(await user.servers()).toEqual([]);
      expect(await user.ports()).toEqual([]);
      expect((await user.networks()).map((n) => n.id)).toEqual([extNet]);
    },
    LIFECYCLE,
  );
});
