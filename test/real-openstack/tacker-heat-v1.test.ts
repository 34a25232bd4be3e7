/**
 * A Heat VNF package of Tacker's v1 generation (test/fixtures/tacker-shapes/
 * v1-heat-scale: `nfv.VDU.<vdu>.flavor` / `.image`, `nfv.CP.<cp>.fixed_ips`,
 * a scaling group of fixed size moved by its OS::Heat::ScalingPolicy
 * resources) on a real OpenStack with no stand-in environment. What the
 * stand-ins cannot show is asserted on Nova and Neutron: the servers got the
 * flavor and image the VNFD names (an empty one is refused by Nova), each
 * policy signal really adds or removes a server, the request's fixed address
 * is on the edge router's port, and terminate leaves nothing.
 */
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, okStdoutWith, vnfm } from '../support/cli.js';
import { openStackVimConfig } from '../support/heat.js';
import { CloudClient, createTenant, emptyQcow2, useRealOpenStack, type Server } from '../support/real-openstack-client.js';

const PACKAGE = resolve('test/fixtures/tacker-shapes/v1-heat-scale');
const VNFD_ID = '0c1f7a52-3d9e-4b8a-8f61-2a7e5c9d1b01';
const GROUP = 'worker_group';
const SETUP = 30 * 60_000;
const LIFECYCLE = 30 * 60_000;

let user: CloudClient;
let home: string;
let work: string;
/** What the VNFD names for each VDU, as the cloud knows it: flavor and image ids. */
const made: Record<string, { flavor: string; image: string }> = {};
let uplink: string;

const ok = okStdoutWith((args) => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } }));
const show = async (vnf: string) =>
  JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])) as {
    instantiatedVnfInfo?: { scaleStatus: Array<{ aspectId: string; scaleLevel: number }>; vnfcInfo: Array<{ id: string; vduId: string; vnfcResourceInfoId: string }> };
  };

/** The project's servers by name (the VDU), each ACTIVE with the flavor and image its VDU names. */
async function servers(): Promise<Record<string, string[]>> {
  const byVdu: Record<string, string[]> = {};
  for (const s of await user.servers()) {
    expect(s.status, `${s.name} ${s.id}`).toBe('ACTIVE');
    expect({ flavor: s.flavor.id, image: (s.image as Exclude<Server['image'], ''>).id }, `flavor and image of ${s.name}`).toEqual(made[s.name]);
    (byVdu[s.name] ??= []).push(s.id);
  }
  for (const list of Object.values(byVdu)) list.sort();
  return byVdu;
}

beforeAll(async () => {
  const cloud = await useRealOpenStack();
  const tenant = await createTenant(cloud, `heatv1-${randomBytes(3).toString('hex')}`);
  user = CloudClient.of(cloud, tenant);
  const admin = CloudClient.admin(cloud);
  // As the VNFD describes them: the worker 2 vCPU / 1 GiB / 4 GiB, the edge 1 / 512 MiB / 1 GiB.
  made['worker'] = {
    flavor: await admin.ensureFlavor('gw.worker.small', { vcpus: 2, ramMiB: 1024, diskGiB: 4 }),
    image: await user.createImage('gateway-worker-3.2', emptyQcow2(256), { disk: 'qcow2', container: 'bare' }),
  };
  made['edge'] = {
    flavor: await admin.ensureFlavor('gw.edge.tiny', { vcpus: 1, ramMiB: 512, diskGiB: 1 }),
    image: await user.createImage('gateway-edge-3.2', emptyQcow2(64), { disk: 'qcow2', container: 'bare' }),
  };
  uplink = await user.createNetwork('uplink', '192.0.2.0/24');

  home = newHome();
  work = dirname(home);
  await writeFile(join(work, 'vim.yaml'), openStackVimConfig(tenant));
  await ok(['vim-register', '--config-file', join(work, 'vim.yaml'), '--is-default', 'real-os']);
  await ok(['vnfpkg-onboard', PACKAGE, '--name', 'gateway']);
  // A v1 InstantiateVnfRequest (cpConfig as a list): both uplinks on the network, the edge router at a fixed address.
  const ip = (address?: string) => ({
    layerProtocol: 'IP_OVER_ETHERNET',
    ipOverEthernet: { ipAddresses: [address ? { type: 'IPV4', fixedAddresses: [address] } : { type: 'IPV4', numDynamicAddresses: 1 }] },
  });
  const extCps = [
    { cpdId: 'worker_CP1', cpConfig: [{ cpProtocolData: [ip()] }] },
    { cpdId: 'edge_CP1', cpConfig: [{ cpProtocolData: [ip('192.0.2.44')] }] },
  ];
  const request = { flavourId: 'simple', instantiationLevelId: 'instantiation_level_1', extVirtualLinks: [{ id: 'uplink', resourceId: uplink, extCps }] };
  await writeFile(join(work, 'instantiate.json'), JSON.stringify(request));
}, SETUP);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe("a Tacker v1 Heat package on a real OpenStack: v1's flavor/image parameters and ScalingPolicy scaling", () => {
  it(
    'servers ACTIVE with the VNFD flavor and image, the fixed address on the edge port; each signal moves the real server count by one; heal replaces a worker; terminate leaves nothing',
    async () => {
      const vnf = JSON.parse(await ok(['vnf-create', '--package', VNFD_ID, '--name', 'gw', '-o', 'json'])).id as string;
      expect(JSON.parse(await ok(['vnf-instantiate', vnf, '--request-file', join(work, 'instantiate.json'), '-o', 'json'])).operationState).toBe('COMPLETED');
      let now = await servers();
      expect(Object.keys(now).sort()).toEqual(['edge', 'worker']);
      expect(now['worker']).toHaveLength(1);
      const edgePorts = (await user.ports()).filter((p) => p.device_id === now['edge']![0]);
      expect(edgePorts.map((p) => [p.network_id, p.fixed_ips.map((f) => f.ip_address)])).toEqual([[uplink, ['192.0.2.44']]]);
      const first = now['worker']![0]!;
      const level = async () => (await show(vnf)).instantiatedVnfInfo!.scaleStatus.find((s) => s.aspectId === GROUP)!.scaleLevel;

      await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', GROUP]);
      expect((await servers())['worker']).toHaveLength(2);
      await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', GROUP]);
      const three = (await servers())['worker']!;
      expect(three).toHaveLength(3);
      expect(await level()).toBe(2);
      await ok(['vnf-scale', vnf, '--type', 'SCALE_IN', '--aspect-id', GROUP]);
      now = await servers();
      expect(now['worker']).toHaveLength(2);
      expect(three).toEqual(expect.arrayContaining(now['worker']!));
      // A policy signal leaves the choice to Heat, as with Tacker: the oldest member goes.
      expect(now['worker']).not.toContain(first);
      expect(await level()).toBe(1);

      // Heal one worker: a new server in its place, the group keeps the two its signals gave it.
      const vnfcs = (await show(vnf)).instantiatedVnfInfo!.vnfcInfo.filter((c) => c.vduId === 'worker');
      const healedId = vnfcs[0]!.vnfcResourceInfoId;
      await ok(['vnf-heal', vnf, '--vnfc-instance', vnfcs[0]!.id]);
      const after = (await servers())['worker']!;
      expect(after).toHaveLength(2);
      expect(after).not.toContain(healedId);
      expect(await user.server(healedId)).toBeUndefined();
      expect(await level()).toBe(1);

      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
      expect(await user.servers()).toEqual([]);
      expect(await user.ports()).toEqual([]);
      expect((await user.networks()).map((n) => n.id)).toEqual([uplink]);
    },
    LIFECYCLE,
  );
});
