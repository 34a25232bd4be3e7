/**
 * Tacker v2's StandardUserData (served natively: a resource `<VDU>-<index>`
 * per VNFC) on a real OpenStack with no stand-in environment, and vnf-logs
 * on its servers: each server's console log, as Nova gives it.
 *
 * The package is test/fixtures/tacker-shapes/v2-heat-standard with its
 * store VDU booted from its image rather than a volume (this cloud has no
 * Cinder) and its server group's policy affinity (one compute host). What
 * is asserted is what Nova and Neutron did: the servers ACTIVE with the
 * flavor and image the VNFD names, one more or one less at each scale, a new
 * server in place of the healed one, each port on the network (and subnet)
 * the request names or on the stack's network, and nothing left after
 * terminate. vnf-logs reads Nova's os-getConsoleOutput (the fake compute
 * driver's fixed three lines): every server's, one server's, its last line
 * (--tail is Nova's length); a server Nova cannot give a log of (shelved:
 * on no host) or no longer has is said plainly (exit 1, exit 3), not with
 * a stack trace.
 */
import { randomBytes } from 'node:crypto';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, okStdoutWith, vnfm, type RunResult } from '../support/cli.js';
import { openStackVimConfig } from '../support/heat.js';
import { CloudClient, createTenant, emptyQcow2, useRealOpenStack, type Server } from '../support/real-openstack-client.js';
import type { RealOpenStackInfo } from '../support/real-openstack.js';

const FIXTURE = resolve('test/fixtures/tacker-shapes/v2-heat-standard');
const ASPECT = 'VDU1_scale';
/** What nova's fake driver answers to os-getConsoleOutput (nova/virt/fake.py get_console_output). */
const CONSOLE = ['FAKE CONSOLE OUTPUT', 'ANOTHER', 'LAST LINE'];
const SETUP = 30 * 60_000;
const LIFECYCLE = 30 * 60_000;
const USER_DATA = { 'lcm-operation-user-data': './UserData/userdata_standard.py', 'lcm-operation-user-data-class': 'StandardUserData' };

let cloud: RealOpenStackInfo;
let user: CloudClient;
let home: string;
let work: string;
let uplink: string;
let uplinkSubnet: string;
/** What the VNFD names for each VDU, as the cloud knows it: flavor and image ids. */
const made: Record<string, { flavor: string; image: string }> = {};

const run = (args: string[]): Promise<RunResult> => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okStdoutWith(run);

/** VDU2 booted from its own image (its VirtualStorage gone), the server group affinity: the fixture as this cloud can build it. */
async function fitForThisCloud(pkg: string): Promise<void> {
  const df = join(pkg, 'Definitions/relay_df_simple.yaml');
  const doc = yaml.load(await readFile(df, 'utf8')) as any;
  const nodes = doc.topology_template.node_templates;
  nodes.VDU2.properties.sw_image_data = { ...nodes['VDU2-VirtualStorage'].properties.sw_image_data };
  delete nodes['VDU2-VirtualStorage'];
  delete nodes.VDU2.requirements;
  await writeFile(df, yaml.dump(doc));
  const top = join(pkg, 'BaseHOT/simple/relay.yaml');
  const text = await readFile(top, 'utf8');
  const fitted = text
    .replace('image-VDU2-VirtualStorage: { get_param: [ nfv, VDU, VDU2-VirtualStorage, vcImageId ] }', 'image-VDU2: { get_param: [ nfv, VDU, VDU2, vcImageId ] }')
    .replace("policies: [ 'anti-affinity' ]", "policies: [ 'affinity' ]");
  expect(fitted).not.toContain('VirtualStorage');
  expect(fitted).toContain("'affinity'");
  await writeFile(top, fitted);
  await writeFile(
    join(pkg, 'BaseHOT/simple/nested/VDU2.yaml'),
    `heat_template_version: 2013-05-23
description: 'The relay store, booted from its image'

parameters:
  flavor:
    type: string
  image-VDU2:
    type: string
  uplink:
    type: string
  uplink_subnet:
    type: string
  inner:
    type: string
  group:
    type: string

resources:
  VDU2:
    type: OS::Nova::Server
    properties:
      name: VDU2
      flavor: { get_param: flavor }
      image: { get_param: image-VDU2 }
      networks:
        - port: { get_resource: VDU2_CP1 }
        - port: { get_resource: VDU2_CP2 }
      scheduler_hints:
        group: { get_param: group }

  VDU2_CP1:
    type: OS::Neutron::Port
    properties:
      network: { get_param: uplink }
      fixed_ips:
        - subnet: { get_param: uplink_subnet }

  VDU2_CP2:
    type: OS::Neutron::Port
    properties:
      network: { get_param: inner }
`,
  );
}

/** The project's servers by VDU, each ACTIVE with the flavor and image its VDU names. */
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

/** Each server's ports: its uplink on the request's network (VDU2's on the request's subnet), its second on the stack's network. */
async function expectPorts(byVdu: Record<string, string[]>): Promise<void> {
  const ports = await user.ports();
  const inner = (await user.networks()).filter((n) => n.id !== uplink).map((n) => n.id);
  expect(inner).toHaveLength(1);
  for (const [vdu, ids] of Object.entries(byVdu)) {
    for (const id of ids) {
      const own = ports.filter((p) => p.device_id === id);
      expect(own.map((p) => p.network_id).sort(), `networks of ${vdu} ${id}`).toEqual([uplink, inner[0]!].sort());
      if (vdu === 'VDU2') expect(own.find((p) => p.network_id === uplink)!.fixed_ips.map((f) => f.subnet_id)).toEqual([uplinkSubnet]);
    }
  }
}

/** Polls `done` once a second, up to two minutes. */
async function waitFor(done: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 120; i++) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`not reached in two minutes: ${what}`);
}

interface Vnfc {
  id: string;
  vduId: string;
  server: string;
}
async function vnfcs(vnf: string): Promise<Vnfc[]> {
  const info = JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])).instantiatedVnfInfo as { vnfcInfo: Array<{ id: string; vduId: string; vnfcResourceInfoId: string }> };
  return info.vnfcInfo.map((c) => ({ id: c.id, vduId: c.vduId, server: c.vnfcResourceInfoId }));
}

beforeAll(async () => {
  cloud = await useRealOpenStack();
  const tenant = await createTenant(cloud, `standard-${randomBytes(3).toString('hex')}`);
  user = CloudClient.of(cloud, tenant);
  const admin = CloudClient.admin(cloud);
  // The flavors the VNFD names (requested_additional_capability_name) and the images (sw_image_data.name), by name as a v2 package expects them.
  made['VDU1'] = {
    flavor: await admin.ensureFlavor('relay.small', { vcpus: 1, ramMiB: 512, diskGiB: 1 }),
    image: await user.createImage('relay-worker-2.0', emptyQcow2(64), { disk: 'qcow2', container: 'bare' }),
  };
  made['VDU2'] = {
    flavor: await admin.ensureFlavor('relay.medium', { vcpus: 2, ramMiB: 1024, diskGiB: 1 }),
    image: await user.createImage('relay-store-2.0', emptyQcow2(32), { disk: 'qcow2', container: 'bare' }),
  };
  uplink = await user.createNetwork('relay-uplink', '198.51.100.0/24');
  [uplinkSubnet] = (await user.subnetsOf(uplink)) as [string];

  home = newHome();
  work = dirname(home);
  await writeFile(join(work, 'vim.yaml'), openStackVimConfig(tenant));
  await ok(['vim-register', '--config-file', join(work, 'vim.yaml'), '--is-default', 'real-os']);
  const pkg = join(work, 'package');
  await cp(FIXTURE, pkg, { recursive: true });
  await fitForThisCloud(pkg);
  await ok(['vnfpkg-onboard', pkg, '--name', 'relay-standard']);

  const ip = (subnetId?: string) => ({
    cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', numDynamicAddresses: 1, ...(subnetId ? { subnetId } : {}) }] } }],
  });
  const request = {
    flavourId: 'simple',
    instantiationLevelId: 'instantiation_level_1',
    extVirtualLinks: [
      {
        id: 'relay-uplink',
        resourceId: uplink,
        extCps: [
          { cpdId: 'VDU1_CP1', cpConfig: { VDU1_CP1_1: ip() } },
          { cpdId: 'VDU2_CP1', cpConfig: { VDU2_CP1_1: ip(uplinkSubnet) } },
        ],
      },
    ],
    additionalParams: USER_DATA,
  };
  await writeFile(join(work, 'instantiate.json'), JSON.stringify(request));
}, SETUP);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe("Tacker v2's StandardUserData on a real OpenStack, and its servers' console logs", () => {
  it(
    'servers ACTIVE with the VNFD flavor and image, ports on the named network and subnet; each scale one real server more or less; heal a new server; vnf-logs prints each console log; terminate leaves nothing',
    async () => {
      const vnf = JSON.parse(await ok(['vnf-create', '--package', 'relay-standard', '--name', 'relay', '-o', 'json'])).id as string;
      expect(JSON.parse(await ok(['vnf-instantiate', vnf, '--request-file', join(work, 'instantiate.json'), '-o', 'json'])).operationState).toBe('COMPLETED');
      let now = await servers();
      expect(Object.keys(now).sort()).toEqual(['VDU1', 'VDU2']);
      expect(now['VDU1']).toHaveLength(1);
      expect(now['VDU2']).toHaveLength(1);
      await expectPorts(now);
      const first = now['VDU1']![0]!;

      // Scale out: a second worker (resource VDU1-1) next to the first; scale in: the newest goes.
      await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', ASPECT, '--number-of-steps', '1']);
      now = await servers();
      expect(now['VDU1']).toHaveLength(2);
      expect(now['VDU1']).toContain(first);
      await expectPorts(now);
      await ok(['vnf-scale', vnf, '--type', 'SCALE_IN', '--aspect-id', ASPECT, '--number-of-steps', '1']);
      now = await servers();
      expect(now['VDU1']).toEqual([first]);
      expect(now['VDU2']).toHaveLength(1);

      // Heal the worker: a new server in its place, the old one gone from Nova.
      const worker = (await vnfcs(vnf)).find((c) => c.vduId === 'VDU1')!;
      expect(worker.server).toBe(first);
      await ok(['vnf-heal', vnf, '--vnfc-instance', worker.id]);
      now = await servers();
      expect(now['VDU1']).toHaveLength(1);
      expect(now['VDU1']![0]).not.toBe(first);
      expect(await user.server(first)).toBeUndefined();
      await expectPorts(now);

      // vnf-logs: every server's console log, each line after its VNFC; one server's; its last line (Nova's length).
      const recorded = await vnfcs(vnf);
      expect(recorded.map((c) => c.server).sort()).toEqual([...now['VDU1']!, ...now['VDU2']!].sort());
      const all = (await ok(['vnf-logs', vnf])).split('\n').filter(Boolean);
      expect(all.sort()).toEqual(recorded.flatMap((c) => CONSOLE.map((line) => `[server/${c.id}] ${line}`)).sort());
      const store = recorded.find((c) => c.vduId === 'VDU2')!;
      expect(await ok(['vnf-logs', vnf, '--vnfc', store.id])).toBe(`${CONSOLE.join('\n')}\n`);
      expect(await ok(['vnf-logs', vnf, '--vdu', 'VDU1', '--tail', '1'])).toBe('LAST LINE\n');
      expect(await ok(['vnf-logs', vnf, '--vnfc', store.server, '--tail', '2'])).toBe('ANOTHER\nLAST LINE\n');
      const follow = await run(['vnf-logs', vnf, '-f']);
      expect(follow.code).toBe(2);
      expect(follow.stderr).toContain("its logs are its servers' console logs, which Nova gives whole, without -f");

      // A server shelved (offloaded: on no host): Nova answers 409, said with what to do (exit 1), no stack trace.
      const worker2 = recorded.find((c) => c.vduId === 'VDU1')!;
      await user.call(cloud.endpoints.compute, 'POST', `/servers/${worker2.server}/action`, { shelve: null });
      await waitFor(async () => (await user.server(worker2.server))?.status === 'SHELVED_OFFLOADED', `server ${worker2.server} SHELVED_OFFLOADED`);
      const shelved = await run(['vnf-logs', vnf, '--vnfc', worker2.id]);
      expect(shelved.code, shelved.stderr).toBe(1);
      expect(shelved.stderr).toContain(`Nova cannot read the console log of server ${worker2.server} now: Instance ${worker2.server} is not ready`);
      expect(shelved.stderr).toMatch(/hint: a server has a console log while it runs/);
      expect(shelved.stderr).not.toMatch(/\n\s+at /);

      // A server deleted behind vnfm's back: Nova's "not found", said as such (exit 3), no stack trace.
      await user.call(cloud.endpoints.compute, 'DELETE', `/servers/${store.server}`);
      await waitFor(async () => (await user.server(store.server)) === undefined, `server ${store.server} deleted`);
      const gone = await run(['vnf-logs', vnf, '--vnfc', store.id]);
      expect(gone.code, gone.stderr).toBe(3);
      expect(gone.stderr).toContain(`Nova has no server ${store.server}`);
      expect(gone.stderr).toContain('vnf-sync');
      expect(gone.stderr).not.toMatch(/\n\s+at /);

      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
      expect(await user.servers()).toEqual([]);
      expect(await user.ports()).toEqual([]);
      expect((await user.networks()).map((n) => n.id)).toEqual([uplink]);
    },
    LIFECYCLE,
  );
});
