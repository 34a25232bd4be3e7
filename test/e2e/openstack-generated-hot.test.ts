/**
 * A Heat VNF package without a Base HOT (test/fixtures/tacker-shapes/
 * v1-no-basehot, our own content in Tacker's v1 shape) on the real Keystone
 * and Heat, through the real program: vnfm makes the HOT from the VNFD as
 * Tacker v1 does, and the stack Heat builds has what the VNFD says — a
 * flavor of each VDU's size, its image, its ports on the request's network
 * and on the internal network (with its subnet and QoS rule), its volumes,
 * the anti-affinity server group, and the scaling aspect's group with its
 * <aspect>_scale_out / _scale_in policies. Every fact is read from Heat (the
 * stand-ins publish what Nova, Neutron and Cinder would show), not from vnfm.
 */
import { rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, okStdoutWith, vnfm, type RunResult } from '../support/cli.js';
import { openStackVimConfig, projectToken, useOpenStack, type OpenStackServers } from '../support/heat.js';

const PACKAGE = resolve('test/fixtures/tacker-shapes/v1-no-basehot');
const STANDINS = resolve('test/fixtures/heat/env/nova-neutron-standins.yaml');
const VNFD_ID = '7d3e51c0-8a2f-4c6b-9e15-3b4f0a6d2c81';
const ASPECT = 'worker_instance';
// The real Keystone and Heat on 2 cores; each scale waits for Heat's resize.
const LONG = 480_000;

let os: OpenStackServers;
let home: string;
let work: string;

const run = (args: string[]): Promise<RunResult> => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okStdoutWith((args) => run(args));

interface HeatResource {
  resource_name: string;
  resource_type: string;
  resource_status: string;
  physical_resource_id: string;
  links: Array<{ href: string; rel: string }>;
}

/** GET on the test Heat as the test user (a stack's name redirects to `<name>/<id>`); undefined on 404. */
async function heat<T>(path: string): Promise<T | undefined> {
  const url = path.startsWith('http') ? path : `${os.heat.url}${path}`;
  const res = await fetch(url, { headers: { 'x-auth-token': await projectToken(os.keystone) } });
  if (res.status === 404) return undefined;
  expect(res.status, `GET ${url}`).toBe(200);
  return (await res.json()) as T;
}

const stackOf = (r: HeatResource) => r.links.find((l) => l.rel === 'stack')!.href;
const live = (r: HeatResource) => !r.resource_status.startsWith('DELETE') && !r.resource_status.endsWith('_FAILED');

/** The stack's resources down to two nested stacks (the group, its members). */
async function resources(vnf: string): Promise<HeatResource[]> {
  return (await heat<{ resources: HeatResource[] }>(`/stacks/vnf-${vnf}/resources?nested_depth=2`))!.resources.filter(live);
}

/**
 * What a resource shows as Nova, Neutron or Cinder would show it: its
 * stand-in's `show` output, read from the stand-in's nested stack (Heat's
 * resource-show answers a provider template's `show` only to get_attr).
 */
async function shown(r: HeatResource): Promise<Record<string, unknown>> {
  const nested = r.links.find((l) => l.rel === 'nested')!.href;
  return (await heat<{ output: { output_value: Record<string, unknown> } }>(`${nested}/outputs/show`))!.output.output_value;
}

async function instantiate(name: string, level: string): Promise<string> {
  const vnf = JSON.parse(await ok(['vnf-create', '--package', VNFD_ID, '--name', name, '-o', 'json'])).id as string;
  const request = {
    flavourId: 'simple',
    instantiationLevelId: level,
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
            cpConfig: [{ cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', fixedAddresses: ['192.0.2.61'] }] } }] }],
          },
        ],
      },
    ],
  };
  await writeFile(join(work, `${name}.json`), JSON.stringify(request));
  const r = await run(['vnf-instantiate', vnf, '--request-file', join(work, `${name}.json`), '--heat-environment', STANDINS, '-o', 'json']);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout).operationState).toBe('COMPLETED');
  return vnf;
}

beforeAll(async () => {
  os = await useOpenStack();
  home = newHome();
  work = dirname(home);
  await writeFile(join(work, 'vim.yaml'), openStackVimConfig(os.keystone));
  await ok(['vim-register', '--config-file', join(work, 'vim.yaml'), '--is-default', 'os1']);
  await ok(['vnfpkg-onboard', PACKAGE, '--name', 'relay']);
}, LONG);

afterAll(async () => {
  await os?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('a Heat package without a Base HOT: the stack is made from the VNFD', () => {
  it(
    "Heat's resources are the VNFD's nodes and policies, sized and connected as it says; the aspect scales through its policies; terminate removes the stack",
    async () => {
      const vnf = await instantiate('relay', 'instantiation_level_2');
      const all = await resources(vnf);
      const top = all.filter((r) => stackOf(r).includes(`/stacks/vnf-${vnf}/`));
      expect(Object.fromEntries(top.map((r) => [r.resource_name, r.resource_type]))).toEqual({
        worker_anti_affinity_group: 'OS::Nova::ServerGroup',
        relay_net: 'OS::Neutron::Net',
        relay_net_subnet: 'OS::Neutron::Subnet',
        relay_net_qospolicy: 'OS::Neutron::QoSPolicy',
        relay_net_bandwidth: 'OS::Neutron::QoSBandwidthLimitRule',
        worker_flavor: 'OS::Nova::Flavor',
        edge_flavor: 'OS::Nova::Flavor',
        edge_CP1: 'OS::Neutron::Port',
        edge_CP2: 'OS::Neutron::Port',
        edge_log: 'OS::Cinder::Volume',
        edge: 'OS::Nova::Server',
        worker_instance: 'OS::Heat::AutoScalingGroup',
        worker_instance_scale_out: 'OS::Heat::ScalingPolicy',
        worker_instance_scale_in: 'OS::Heat::ScalingPolicy',
      });
      const named = (name: string) => all.filter((r) => r.resource_name === name);
      const one = (name: string) => named(name)[0]!;

      // Flavors of the VDUs' virtual_compute: memory in MiB, local storage in GiB.
      expect(await shown(one('worker_flavor'))).toMatchObject({ vcpus: 2, ram: 2048, disk: 10 });
      expect(await shown(one('edge_flavor'))).toMatchObject({ vcpus: 1, ram: 1024, disk: 2 });
      // The edge server: its flavor, its own image, its two ports in order; its volume of 8 GiB a data disk.
      const edge = await shown(one('edge'));
      expect(edge).toMatchObject({ name: 'relay-edge', flavor: { id: one('edge_flavor').physical_resource_id }, image: { id: 'relay-edge-1.4' } });
      expect(await shown(one('edge_log'))).toMatchObject({ size: 8, bootable: 'false' });
      expect(await shown(one('edge_CP1'))).toMatchObject({ network_id: 'net-uplink-1', fixed_ips: [{ ip_address: '192.0.2.61' }] });
      expect(await shown(one('edge_CP2'))).toMatchObject({ network_id: one('relay_net').physical_resource_id });
      expect(await shown(one('relay_net_subnet'))).toMatchObject({ cidr: '10.90.0.0/24', ip_version: 4, network_id: one('relay_net').physical_resource_id });
      expect(await shown(one('relay_net_bandwidth'))).toMatchObject({ max_kbps: 1024, qos_policy_id: one('relay_net_qospolicy').physical_resource_id });
      expect(await shown(one('worker_anti_affinity_group'))).toMatchObject({ policies: ['anti-affinity'] });

      // instantiation_level_2: two workers, each a member with its ports and the volume it boots from, carrying the image.
      const workers = named('worker');
      expect(workers).toHaveLength(2);
      for (const w of workers) {
        expect(await shown(w)).toMatchObject({ name: 'relay-worker', flavor: { id: one('worker_flavor').physical_resource_id }, image: { id: '' } });
        const member = all.filter((r) => stackOf(r) === stackOf(w));
        expect(Object.fromEntries(member.map((r) => [r.resource_name, r.resource_type]))).toEqual({
          worker: 'OS::Nova::Server',
          worker_CP1: 'OS::Neutron::Port',
          worker_CP2: 'OS::Neutron::Port',
          worker_root: 'OS::Cinder::Volume',
        });
        const root = member.find((r) => r.resource_name === 'worker_root')!;
        expect(await shown(root)).toMatchObject({ size: 4, bootable: 'true', volume_image_metadata: { image_id: 'relay-worker-1.4' } });
        expect(await shown(member.find((r) => r.resource_name === 'worker_CP1')!)).toMatchObject({ network_id: 'net-uplink-1' });
        expect(await shown(member.find((r) => r.resource_name === 'worker_CP2')!)).toMatchObject({ network_id: one('relay_net').physical_resource_id });
      }
      const info = JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])).instantiatedVnfInfo;
      expect(info.vnfcInfo.map((v: { vduId: string }) => v.vduId).sort()).toEqual(['edge', 'worker', 'worker']);
      expect(info.scaleStatus).toEqual([{ aspectId: ASPECT, scaleLevel: 1 }]);

      // The aspect's policies scale the group, one member a step, as Heat counts them.
      const scale = (type: string) => run(['vnf-scale', vnf, '--type', type, '--aspect-id', ASPECT]);
      const out = await scale('SCALE_OUT');
      expect(out.code, out.stderr).toBe(0);
      expect((await resources(vnf)).filter((r) => r.resource_name === 'worker')).toHaveLength(3);
      const inn = await scale('SCALE_IN');
      expect(inn.code, inn.stderr).toBe(0);
      expect((await resources(vnf)).filter((r) => r.resource_name === 'worker')).toHaveLength(2);
      expect(JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])).instantiatedVnfInfo.scaleStatus).toEqual([{ aspectId: ASPECT, scaleLevel: 1 }]);

      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
      expect(await heat(`/stacks/vnf-${vnf}`)).toBeUndefined();
    },
    LONG,
  );
});
