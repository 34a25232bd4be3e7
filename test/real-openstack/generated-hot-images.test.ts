/**
 * A Heat VNF package with no Base HOT, carrying its software images, on a
 * real OpenStack with no stand-in environment: vnfm makes the HOT from the
 * VNFD (as Tacker v1 translates it: a flavor of each VDU's size, the ports
 * on the request's network and on a network of the stack, the scaling
 * aspect's group with its policies) and uploads each image of the package to
 * Glance before the stack (as Tacker v1's pre_instantiation_vnf does). What
 * the stand-ins cannot show is asserted on Nova, Neutron and Glance: the
 * images Glance holds are the package's bytes (its SHA-512), the servers
 * boot from them and run on flavors of the VNFD's sizes, each port is on the
 * network the VNFD and the request say, the aspect's policies move the real
 * server count, and terminate leaves no server, port, network, flavor or
 * image of the instance.
 *
 * The package is test/fixtures/tacker-shapes/v1-no-basehot made fit for
 * this cloud: no volumes (it has no Cinder), no bit rate on the internal
 * network (its Neutron has no QoS plugin), no anti-affinity rule (one
 * compute host). Its VIM user has the admin role: the HOT makes flavors
 * (OS::Nova::Flavor), which Nova and Heat let only an admin do, as with
 * Tacker v1's usual admin VIM.
 */
import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, okStdoutWith, vnfm } from '../support/cli.js';
import { openStackVimConfig } from '../support/heat.js';
import { CloudClient, createTenant, emptyQcow2, useRealOpenStack, type GlanceImage, type Server } from '../support/real-openstack-client.js';

const FIXTURE = resolve('test/fixtures/tacker-shapes/v1-no-basehot');
const VNFD_ID = '7d3e51c0-8a2f-4c6b-9e15-3b4f0a6d2c81';
const ASPECT = 'worker_instance';
/** The images the package carries: two contents, so each VDU's server shows its own. */
const IMAGES = { worker: emptyQcow2(192), edge: emptyQcow2(48) };
/** sw_image_data.name of each VDU: the Glance images' names. */
const IMAGE_NAMES = { worker: 'relay-worker-1.4', edge: 'relay-edge-1.4' };
/** The VDUs' virtual_compute (vcpus, MiB, GiB), the flavors Heat makes of them. */
const SIZES = { worker: { vcpus: 2, ram: 2048, disk: 10 }, edge: { vcpus: 1, ram: 1024, disk: 2 } };
const SETUP = 30 * 60_000;
const LIFECYCLE = 30 * 60_000;

let user: CloudClient;
let admin: CloudClient;
let home: string;
let work: string;
let uplink: string;

const ok = okStdoutWith((args) => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } }));
const sha512 = (b: Buffer) => createHash('sha512').update(b).digest('hex');
type Vdu = keyof typeof IMAGES;
const vduOf = (s: Server): Vdu => (s.name === 'relay-worker' ? 'worker' : s.name === 'relay-edge' ? 'edge' : (s.name as Vdu));

/** Definitions/relay_df_simple.yaml as this cloud can build it, each VDU carrying its image (see the file's comment). */
function fitForThisCloud(doc: any): any {
  const nodes = doc.topology_template.node_templates;
  const worker = nodes.worker;
  const edge = nodes.edge;
  // The worker boots from its own image instead of a volume; the edge loses its log volume.
  worker.properties.sw_image_data = { ...nodes.worker_root.properties.sw_image_data };
  delete nodes.worker_root;
  delete nodes.edge_log;
  delete worker.requirements;
  delete edge.requirements;
  for (const vdu of ['worker', 'edge'] as const) {
    const image = nodes[vdu].properties.sw_image_data;
    image.checksum = { algorithm: 'sha-512', hash: sha512(IMAGES[vdu]) };
    image.size = `${IMAGES[vdu].length} B`;
    image.min_disk = '1 GiB';
    nodes[vdu].artifacts = { sw_image: { type: 'tosca.artifacts.nfv.SwImage', file: `../Files/images/${vdu}.qcow2` } };
  }
  delete nodes.relay_net.properties.vl_profile.max_bitrate_requirements;
  delete nodes.relay_net.properties.vl_profile.min_bitrate_requirements;
  doc.topology_template.policies = doc.topology_template.policies.filter((p: Record<string, unknown>) => !('worker_anti_affinity' in p));
  return doc;
}

beforeAll(async () => {
  const cloud = await useRealOpenStack();
  const tenant = await createTenant(cloud, `genhot-${randomBytes(3).toString('hex')}`, { admin: true });
  user = CloudClient.of(cloud, tenant);
  admin = CloudClient.admin(cloud);
  uplink = await user.createNetwork('uplink', '192.0.2.0/24');

  home = newHome();
  work = dirname(home);
  await writeFile(join(work, 'vim.yaml'), openStackVimConfig(tenant));
  await ok(['vim-register', '--config-file', join(work, 'vim.yaml'), '--is-default', 'real-os']);
  const pkg = join(work, 'package');
  await cp(FIXTURE, pkg, { recursive: true });
  await mkdir(join(pkg, 'Files/images'), { recursive: true });
  for (const vdu of ['worker', 'edge'] as const) await writeFile(join(pkg, `Files/images/${vdu}.qcow2`), IMAGES[vdu]);
  const df = join(pkg, 'Definitions/relay_df_simple.yaml');
  await writeFile(df, yaml.dump(fitForThisCloud(yaml.load(await readFile(df, 'utf8')))));
  await ok(['vnfpkg-build', pkg, '--file', join(work, 'relay.zip')]);
  await ok(['vnfpkg-onboard', join(work, 'relay.zip'), '--name', 'relay']);

  // A v1 InstantiateVnfRequest: both uplinks on the network, the edge's at a fixed address.
  const ip = (address?: string) => ({
    layerProtocol: 'IP_OVER_ETHERNET',
    ipOverEthernet: { ipAddresses: [address ? { type: 'IPV4', fixedAddresses: [address] } : { type: 'IPV4', numDynamicAddresses: 1 }] },
  });
  const extCps = [
    { cpdId: 'worker_CP1', cpConfig: [{ cpProtocolData: [ip()] }] },
    { cpdId: 'edge_CP1', cpConfig: [{ cpProtocolData: [ip('192.0.2.61')] }] },
  ];
  const request = { flavourId: 'simple', instantiationLevelId: 'instantiation_level_1', extVirtualLinks: [{ id: 'uplink', resourceId: uplink, extCps }] };
  await writeFile(join(work, 'instantiate.json'), JSON.stringify(request));
}, SETUP);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('a package without a Base HOT, carrying its images, on a real OpenStack', () => {
  it(
    "Glance holds the package's images (its SHA-512), the servers boot from them on flavors of the VNFD's sizes, ports on the VNFD's networks; the aspect's policies move the server count; terminate leaves no server, port, network, flavor or image",
    async () => {
      const vnf = JSON.parse(await ok(['vnf-create', '--package', VNFD_ID, '--name', 'relay', '-o', 'json'])).id as string;
      expect(JSON.parse(await ok(['vnf-instantiate', vnf, '--request-file', join(work, 'instantiate.json'), '-o', 'json'])).operationState).toBe('COMPLETED');

      // Glance: one image per VDU, the package's bytes, private and tagged with the instance.
      const images = await user.imagesTagged(vnf);
      expect(images.map((i) => i.name).sort()).toEqual([IMAGE_NAMES.edge, IMAGE_NAMES.worker]);
      const imageOf = {} as Record<Vdu, GlanceImage>;
      for (const vdu of ['worker', 'edge'] as const) {
        const image = images.find((i) => i.name === IMAGE_NAMES[vdu])!;
        expect(image).toMatchObject({
          status: 'active',
          visibility: 'private',
          disk_format: 'qcow2',
          container_format: 'bare',
          size: IMAGES[vdu].length,
          os_hash_algo: 'sha512',
          os_hash_value: sha512(IMAGES[vdu]),
          tags: [vnf],
        });
        imageOf[vdu] = image;
      }

      /** The project's servers by VDU, each ACTIVE, booted from its VDU's uploaded image, on a flavor of its VDU's size. */
      const flavors = new Set<string>();
      const servers = async (): Promise<Record<Vdu, Server[]>> => {
        const byVdu = { worker: [], edge: [] } as Record<Vdu, Server[]>;
        for (const s of await user.servers()) {
          const vdu = vduOf(s);
          expect(s.status, `${s.name} ${s.id}`).toBe('ACTIVE');
          expect(s.image === '' ? undefined : s.image.id, `image of ${s.name}`).toBe(imageOf[vdu].id);
          expect(await admin.flavor(s.flavor.id), `flavor of ${s.name}`).toMatchObject(SIZES[vdu]);
          flavors.add(s.flavor.id);
          byVdu[vdu].push(s);
        }
        return byVdu;
      };
      let now = await servers();
      expect([now.worker.length, now.edge.length]).toEqual([1, 1]);

      // Neutron: each server's first port on the request's network (the edge's at its fixed address), its second on the stack's network.
      const stackNets = (await user.networks()).filter((n) => n.id !== uplink);
      expect(stackNets).toHaveLength(1);
      const relayNet = stackNets[0]!.id;
      const portsOf = async (server: Server) => {
        const own = (await user.ports()).filter((p) => p.device_id === server.id);
        return own.map((p) => p.network_id).sort();
      };
      const both = [uplink, relayNet].sort();
      expect(await portsOf(now.worker[0]!)).toEqual(both);
      expect(await portsOf(now.edge[0]!)).toEqual(both);
      const edgeUplink = (await user.ports()).find((p) => p.device_id === now.edge[0]!.id && p.network_id === uplink)!;
      expect(edgeUplink.fixed_ips.map((f) => f.ip_address)).toEqual(['192.0.2.61']);
      const edgeInner = (await user.ports()).find((p) => p.device_id === now.edge[0]!.id && p.network_id === relayNet)!;
      expect(edgeInner.fixed_ips[0]!.ip_address).toMatch(/^10\.90\.0\./);

      // The aspect's policies: each step a real server more or less, from the same image; Glance keeps one image per VDU.
      await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', ASPECT]);
      now = await servers();
      expect([now.worker.length, now.edge.length]).toEqual([2, 1]);
      for (const w of now.worker) expect(await portsOf(w)).toEqual(both);
      await ok(['vnf-scale', vnf, '--type', 'SCALE_IN', '--aspect-id', ASPECT]);
      now = await servers();
      expect([now.worker.length, now.edge.length]).toEqual([1, 1]);
      expect((await user.imagesTagged(vnf)).map((i) => i.id).sort()).toEqual([imageOf.edge.id, imageOf.worker.id].sort());
      expect(flavors.size).toBe(2);

      // Terminate: the stack's servers, ports, network and flavors gone, then the instance's images.
      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
      expect(await user.servers()).toEqual([]);
      expect(await user.ports()).toEqual([]);
      expect((await user.networks()).map((n) => n.id)).toEqual([uplink]);
      for (const id of flavors) expect(await admin.flavor(id)).toBeUndefined();
      expect(await user.imagesTagged(vnf)).toEqual([]);
      for (const vdu of ['worker', 'edge'] as const) expect(await user.image(imageOf[vdu].id)).toBeUndefined();
    },
    LIFECYCLE,
  );

  it(
    "a VIM user without the admin role: Heat's refusal to make the VDUs' flavors, said with the fix, FAILED_TEMP before any stack; the rollback deletes the images uploaded for it",
    async () => {
      const cloud = await useRealOpenStack();
      const tenant = await createTenant(cloud, `genhot-member-${randomBytes(3).toString('hex')}`);
      const member = CloudClient.of(cloud, tenant);
      const memberUplink = await member.createNetwork('uplink', '192.0.2.0/24');
      const memberHome = newHome();
      const memberWork = dirname(memberHome);
      const run = (args: string[]) => vnfm(args, { home: memberHome, env: { VNFM_MASTER_KEY: undefined } });
      const okMember = okStdoutWith(run);
      try {
        await writeFile(join(memberWork, 'vim.yaml'), openStackVimConfig(tenant));
        await okMember(['vim-register', '--config-file', join(memberWork, 'vim.yaml'), '--is-default', 'member-os']);
        await okMember(['vnfpkg-onboard', join(work, 'relay.zip'), '--name', 'relay']);
        const request = (await readFile(join(work, 'instantiate.json'), 'utf8')).replace(uplink, memberUplink);
        await writeFile(join(memberWork, 'instantiate.json'), request);
        const vnf = JSON.parse(await okMember(['vnf-create', '--package', VNFD_ID, '--name', 'relay', '-o', 'json'])).id as string;
        const r = await run(['vnf-instantiate', vnf, '--request-file', join(memberWork, 'instantiate.json')]);
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr).toMatch(/FAILED_TEMP/);
        expect(r.stderr).toMatch(/OS::Nova::Flavor/);
        expect(r.stderr).toMatch(/hint: .*admin role/);
        expect(r.stderr).not.toMatch(/\n\s+at /);
        expect(await member.servers()).toEqual([]);
        expect((await member.imagesTagged(vnf)).map((i) => i.name).sort()).toEqual([IMAGE_NAMES.edge, IMAGE_NAMES.worker]);
        const op = (JSON.parse(await okMember(['op-list', '--vnf', vnf, '-o', 'json'])) as Array<{ id: string }>)[0]!;
        await okMember(['op-rollback', op.id]);
        expect(await member.imagesTagged(vnf)).toEqual([]);
        expect(await member.ports()).toEqual([]);
      } finally {
        await rm(memberWork, { recursive: true, force: true });
      }
    },
    LIFECYCLE,
  );
});
