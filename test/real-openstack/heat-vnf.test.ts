/**
 * The heat-vnf sample (Tacker's v2 shape: `nfv.VDU.<vdu>.computeFlavourId`
 * and `vcImageId`) on a real OpenStack, with no stand-in environment: Heat
 * creates real Nova servers and Neutron ports and networks. Every assertion
 * reads the cloud's own APIs (Nova, Neutron) as well as what vnfm reports:
 * the servers are ACTIVE with the flavor and image the VNFD names, scaling
 * changes how many there are, a heal replaces the server, and terminate
 * leaves nothing of the stack. vnf-describe shows the servers, ports and
 * network the cloud has; vnf-sync records a group that Heat was told to grow
 * behind vnfm's back; change-ext-conn moves the external ports to another
 * network and change-package brings each server to the new package's flavor
 * and image.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, okStdoutWith, vnfm } from '../support/cli.js';
import { openStackVimConfig } from '../support/heat.js';
import { packageVariant } from '../support/package-variant.js';
import { CloudClient, createTenant, emptyQcow2, useRealOpenStack, type Port, type Server } from '../support/real-openstack-client.js';
import type { RealOpenStackInfo } from '../support/real-openstack.js';

const SAMPLE = resolve('csar-samples/heat-vnf');
const VNFD_ID = '72c3c844-4146-4e33-a2ab-fe1fbd9927fc';
/** What the VNFD names: VDU1's and VDU2's requested_additional_capability_name and sw_image_data.name. */
const FLAVOR = 'm1.tiny';
const IMAGE = 'cirros-0.5.2-x86_64-disk';
/** The second package: another vnfdId, flavor and image (its VDUs' requested_additional_capability_name and sw_image_data.name). */
const V2_VNFD_ID = '72c3c844-4146-4e33-a2ab-fe1fbd99c002';
const V2_FLAVOR = 'm1.small';
const V2_IMAGE = 'cirros-0.6.2-x86_64-disk';
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
let extNet2: string;
let v2: { flavor: string; image: string };
let tenantProject: string;

const ok = okStdoutWith((args) => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } }));

interface Shown {
  instantiationState: string;
  vnfdId: string;
  instantiatedVnfInfo?: {
    metadata: { heat: { nfv: { VDU: Record<string, { desired_capacity?: number }> } } };
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

interface Node {
  kind: string;
  name: string;
  id?: string;
  ready: boolean;
  children: Node[];
}
const flat = (nodes: Node[]): Node[] => nodes.flatMap((n) => [n, ...flat(n.children)]);

/** The instance's stack as Heat shows it to the project. */
async function heatStack(vnf: string): Promise<{ id: string; stack_status: string; updated_time: string | null }> {
  const base = cloud.endpoints.orchestration.replace('%(tenant_id)s', tenantProject);
  return (await user.call<{ stack: { id: string; stack_status: string; updated_time: string | null } }>(base, 'GET', `/stacks/vnf-${vnf}`)).stack;
}

/** What an operator does with `openstack stack update --existing --parameter`: a new nfv parameter, vnfm not told; waits for the update's end. */
async function updateBehindVnfm(vnf: string, nfv: unknown): Promise<void> {
  const base = cloud.endpoints.orchestration.replace('%(tenant_id)s', tenantProject);
  const before = await heatStack(vnf);
  await user.call(base, 'PATCH', `/stacks/vnf-${vnf}/${before.id}`, { parameters: { nfv } });
  for (;;) {
    const now = await heatStack(vnf);
    if (now.updated_time !== before.updated_time && now.stack_status !== 'UPDATE_IN_PROGRESS') {
      expect(now.stack_status).toBe('UPDATE_COMPLETE');
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}

/** Every server's ports: the external one on `ext`, the internal one on `internalNet`. */
async function expectExternalOn(ext: string, internalNet: string): Promise<void> {
  const ports = await user.ports();
  for (const s of await user.servers()) {
    expect(
      ports
        .filter((p) => p.device_id === s.id)
        .map((p) => p.network_id)
        .sort(),
      `networks of ${s.name} ${s.id}`,
    ).toEqual([ext, internalNet].sort());
  }
}

beforeAll(async () => {
  cloud = await useRealOpenStack();
  const tenant = await createTenant(cloud, `heatvnf-${randomBytes(3).toString('hex')}`);
  tenantProject = tenant.projectId;
  user = CloudClient.of(cloud, tenant);
  // The flavor and image the VNFD names, and the external network of the request, made as an operator would.
  flavorId = await CloudClient.admin(cloud).ensureFlavor(FLAVOR, { vcpus: 1, ramMiB: 512, diskGiB: 1 });
  imageId = await user.createImage(IMAGE, emptyQcow2(64), { disk: 'qcow2', container: 'bare' });
  extNet = await user.createNetwork('ext-net', '10.30.0.0/24');
  extNet2 = await user.createNetwork('ext-net-2', '10.31.0.0/24');
  v2 = {
    flavor: await CloudClient.admin(cloud).ensureFlavor(V2_FLAVOR, { vcpus: 1, ramMiB: 1024, diskGiB: 2 }),
    image: await user.createImage(V2_IMAGE, emptyQcow2(128), { disk: 'qcow2', container: 'bare' }),
  };

  home = newHome();
  work = dirname(home);
  await writeFile(join(work, 'vim.yaml'), openStackVimConfig(tenant));
  await ok(['vim-register', '--config-file', join(work, 'vim.yaml'), '--is-default', 'real-os']);
  await ok(['vnfpkg-build', join(SAMPLE, 'package'), '-o', join(work, 'heat-vnf.zip')]);
  await ok(['vnfpkg-onboard', join(work, 'heat-vnf.zip')]);
  const variant = packageVariant(join(SAMPLE, 'package'), {
    fromVnfdId: VNFD_ID,
    vnfdId: V2_VNFD_ID,
    softwareVersion: '2.0',
    replace: [
      [FLAVOR, V2_FLAVOR],
      [IMAGE, V2_IMAGE],
    ],
  });
  await ok(['vnfpkg-build', variant, '-o', join(work, 'heat-vnf-v2.zip')]);
  await rm(dirname(variant), { recursive: true, force: true });
  await ok(['vnfpkg-onboard', join(work, 'heat-vnf-v2.zip')]);
  const request = await readFile(join(SAMPLE, 'requests/instantiate.json'), 'utf8');
  await writeFile(join(work, 'instantiate.json'), request.replace('REPLACE-WITH-EXTERNAL-NETWORK-ID', extNet));
  const { extVirtualLinks } = JSON.parse(request.replace('REPLACE-WITH-EXTERNAL-NETWORK-ID', extNet2)) as { extVirtualLinks: Array<{ id: string }> };
  await writeFile(join(work, 'ext-conn.json'), JSON.stringify({ extVirtualLinks: extVirtualLinks.map((l) => ({ ...l, id: 'ext-vl-2' })) }));
  await writeFile(join(work, 'change-package.json'), JSON.stringify({ vnfdId: V2_VNFD_ID }));
}, SETUP);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the heat-vnf sample on a real OpenStack (Nova with the fake driver, Neutron, Glance)', () => {
  it(
    'instantiate: real ACTIVE servers with the VNFD flavor and image and their ports; scale out and in; heal one VNFC; describe and sync read the real stack; change-ext-conn and change-package change the real servers; terminate leaves nothing',
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
      const internalNet = (await user.networks()).find((n) => n.id !== extNet && n.id !== extNet2)!.id;
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

      // vnf-describe: the stack's servers, ports and network are the ones Nova and Neutron have.
      const described = JSON.parse(await ok(['vnf-describe', vnf, '-o', 'json'])) as { stack: string; ready: boolean; drift: string[]; objects: Node[] };
      expect(described).toMatchObject({ stack: `vnf-${vnf}`, ready: true, drift: [] });
      const nodes = flat(described.objects);
      const idsOf = (kind: string) =>
        nodes
          .filter((n) => n.kind === kind)
          .map((n) => n.id)
          .sort();
      expect(idsOf('OS::Nova::Server')).toEqual(ids([...servers['VDU1']!, ...servers['VDU2']!]));
      expect(idsOf('OS::Neutron::Port')).toEqual((await user.ports()).map((p) => p.id).sort());
      expect(idsOf('OS::Neutron::Net')).toEqual([internalNet]);

      // The group grown by Heat behind vnfm's back: vnf-sync records the new server and the scale level it makes.
      const nfv = (await show(vnf)).instantiatedVnfInfo!.metadata.heat.nfv;
      await updateBehindVnfm(vnf, { ...nfv, VDU: { ...nfv.VDU, VDU1: { ...nfv.VDU['VDU1'], desired_capacity: 2 } } });
      servers = await serversByVdu();
      expect(servers['VDU1']).toHaveLength(2);
      const synced = JSON.parse(await ok(['vnf-sync', vnf, '-o', 'json'])) as { changes: Array<{ type: string; id: string; from?: number; to?: number }> };
      expect(synced.changes.map((c) => c.type).sort()).toEqual(['REPLICAS', 'SCALE_LEVEL', 'VNFC_ADDED']);
      expect(synced.changes.find((c) => c.type === 'SCALE_LEVEL')).toMatchObject({ id: 'vdu1_aspect', from: 0, to: 1 });
      expect(await reported(vnf, 'VDU1')).toEqual(ids(servers['VDU1']));
      expect((await show(vnf)).instantiatedVnfInfo!.scaleStatus).toEqual([{ aspectId: 'vdu1_aspect', scaleLevel: 1 }]);
      const three = ids([...servers['VDU1']!, ...servers['VDU2']!]);

      // change-ext-conn: each server's external port is now on the other network; the servers stay.
      await ok(['vnf-change-ext-conn', vnf, join(work, 'ext-conn.json')]);
      servers = await serversByVdu();
      expect(ids([...servers['VDU1']!, ...servers['VDU2']!])).toEqual(three);
      await expectExternalOn(extNet2, internalNet);

      // change-package: every server runs the new package's flavor and image (resized and rebuilt in place by Nova).
      await ok(['vnf-change-package', vnf, join(work, 'change-package.json')]);
      flavorId = v2.flavor;
      imageId = v2.image;
      servers = await serversByVdu();
      expect(ids([...servers['VDU1']!, ...servers['VDU2']!])).toEqual(three);
      expect((await show(vnf)).vnfdId).toBe(V2_VNFD_ID);
      expect(await reported(vnf, 'VDU1')).toEqual(ids(servers['VDU1']));
      expect(await reported(vnf, 'VDU2')).toEqual(ids(servers['VDU2']));
      await expectExternalOn(extNet2, internalNet);

      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
      expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
      // Nothing of the stack is left: no server, no port, only the networks the test made. (The cloud has no Cinder: the sample has no volume.)
      expect(await user.servers()).toEqual([]);
      expect(await user.ports()).toEqual([]);
      expect((await user.networks()).map((n) => n.id).sort()).toEqual([extNet, extNet2].sort());
    },
    LIFECYCLE,
  );
});
