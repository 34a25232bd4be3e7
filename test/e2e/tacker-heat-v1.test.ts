/**
 * A Heat VNF package of Tacker's v1 generation (test/fixtures/tacker-shapes/
 * v1-heat-scale, our own content in Tacker's shape) on the real Keystone and
 * Heat, through the real program. Its Base HOT fixes `desired_capacity: 1` in
 * the scaling group and scales it through the OS::Heat::ScalingPolicy
 * resources `worker_group_scale_out` / `_scale_in`; its templates read
 * `nfv.VDU.<vdu>.flavor` / `.image` and `nfv.CP.<cp>.network` / `fixed_ips`.
 * The stand-in servers refuse an empty flavor or image, as Nova does. Every
 * count below is read from Heat (the group's nested stack), not from vnfm,
 * and the scale level vnfm records must equal it.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, okStdoutWith, vnfm, type RunResult } from '../support/cli.js';
import { openStackVimConfig, projectToken, useOpenStack, type OpenStackServers } from '../support/heat.js';

const PACKAGE = resolve('test/fixtures/tacker-shapes/v1-heat-scale');
const STANDINS = resolve('test/fixtures/heat/env/nova-neutron-standins.yaml');
const VNFD_ID = '0c1f7a52-3d9e-4b8a-8f61-2a7e5c9d1b01';
const SMALL_VNFD_ID = '0c1f7a52-3d9e-4b8a-8f61-2a7e5c9d1b02';
const GROUP = 'worker_group';
// The real Keystone and Heat on 2 cores; each scale waits for Heat's resize (the first test took 330 s on a loaded machine).
const LONG = 600_000;

let os: OpenStackServers;
let home: string;
let work: string;

const run = (args: string[]): Promise<RunResult> => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okStdoutWith((args) => run(args));

interface Shown {
  instantiationState: string;
  instantiatedVnfInfo?: {
    scaleStatus: Array<{ aspectId: string; scaleLevel: number }>;
    vnfcInfo: Array<{ id: string; vduId: string }>;
    vnfcResourceInfo: Array<{ vduId: string; metadata: { addresses: Record<string, string[]> } }>;
  };
}
const show = async (vnf: string) => JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])) as Shown;
const scaleLevel = async (vnf: string) => (await show(vnf)).instantiatedVnfInfo!.scaleStatus.find((s) => s.aspectId === GROUP)!.scaleLevel;
const workers = async (vnf: string) =>
  (await show(vnf))
    .instantiatedVnfInfo!.vnfcInfo.filter((v) => v.vduId === 'worker')
    .map((v) => v.id)
    .sort();

interface HeatResourceJson {
  resource_name: string;
  resource_type: string;
  resource_status: string;
  physical_resource_id: string;
  links: Array<{ href: string; rel: string }>;
  attributes?: Record<string, unknown>;
}

/** GET on the test Heat as the test user (redirects from a stack's name to `<name>/<id>` followed); undefined on 404. */
async function heat<T>(path: string): Promise<T | undefined> {
  const url = path.startsWith('http') ? path : `${os.heat.url}${path}`;
  const res = await fetch(url, { headers: { 'x-auth-token': await projectToken(os.keystone) } });
  if (res.status === 404) return undefined;
  expect(res.status, `GET ${url}`).toBe(200);
  return (await res.json()) as T;
}

/** The instance's stack resources down to `depth` nested stacks. */
async function resources(vnf: string, depth: number): Promise<HeatResourceJson[]> {
  return (await heat<{ resources: HeatResourceJson[] }>(`/stacks/vnf-${vnf}/resources?nested_depth=${depth}`))!.resources;
}

/** How many members the scaling group has, as Heat lists its nested stack (failed or deleted ones left out). */
async function groupSize(vnf: string): Promise<number> {
  const all = await resources(vnf, 1);
  const group = all.find((r) => r.resource_name === GROUP && r.resource_type === 'OS::Heat::AutoScalingGroup')!;
  const members = all.filter((r) => r.links.some((l) => l.rel === 'stack' && l.href.endsWith(`/${group.physical_resource_id}`)));
  return members.filter((r) => !r.resource_status.startsWith('DELETE') && !r.resource_status.endsWith('_FAILED')).length;
}

/**
 * The flavor and image each server of the stack was given, by VDU: the
 * parameters of the stand-in server's own stack, which are the properties
 * Heat gave the OS::Nova::Server (what Nova would be asked for).
 */
async function serverFacts(vnf: string): Promise<Array<{ vdu: string; flavor: unknown; image: unknown }>> {
  const servers = (await resources(vnf, 2)).filter((r) => r.resource_type === 'OS::Nova::Server');
  return Promise.all(
    servers.map(async (s) => {
      const { parameters } = (await heat<{ stack: { parameters: Record<string, unknown> } }>(`/stacks/${s.physical_resource_id}`))!.stack;
      return { vdu: s.resource_name, flavor: parameters['flavor'], image: parameters['image'] };
    }),
  );
}

async function instantiate(packageId: string, name: string): Promise<string> {
  const vnf = JSON.parse(await ok(['vnf-create', '--package', packageId, '--name', name, '-o', 'json'])).id as string;
  const r = await run(['vnf-instantiate', vnf, '--request-file', join(work, 'instantiate.json'), '--heat-environment', STANDINS, '-o', 'json']);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout).operationState).toBe('COMPLETED');
  return vnf;
}

const scale = (vnf: string, type: 'SCALE_OUT' | 'SCALE_IN', steps = 1) =>
  run(['vnf-scale', vnf, '--type', type, '--aspect-id', GROUP, '--number-of-steps', String(steps), '-o', 'json']);

beforeAll(async () => {
  os = await useOpenStack();
  home = newHome();
  work = dirname(home);
  await writeFile(join(work, 'vim.yaml'), openStackVimConfig(os.keystone));
  await ok(['vim-register', '--config-file', join(work, 'vim.yaml'), '--is-default', 'os1']);
  await ok(['vnfpkg-onboard', PACKAGE, '--name', 'gateway']);
  // The same package with a group that stops at 2 members, under the VNFD's 3.
  const small = await mkdtemp(join(tmpdir(), 'vnfm-v1-heat-small-'));
  await cp(PACKAGE, small, { recursive: true });
  const top = join(small, 'BaseHOT/simple/gateway.yaml');
  await writeFile(top, (await readFile(top, 'utf8')).replace('      max_size: 3\n', '      max_size: 2\n'));
  for (const file of ['Definitions/gateway_top.vnfd.yaml', 'Definitions/gateway_types.yaml']) {
    await writeFile(join(small, file), (await readFile(join(small, file), 'utf8')).replaceAll(VNFD_ID, SMALL_VNFD_ID));
  }
  await ok(['vnfpkg-onboard', small, '--name', 'gateway-small']);
  await rm(small, { recursive: true, force: true });
  // A v1 InstantiateVnfRequest: both uplinks on one network, the edge router at a fixed address.
  const ipOverEthernet = (address?: string) => ({
    layerProtocol: 'IP_OVER_ETHERNET',
    ipOverEthernet: { ipAddresses: [address ? { type: 'IPV4', fixedAddresses: [address] } : { type: 'IPV4', numDynamicAddresses: 1 }] },
  });
  const request = {
    flavourId: 'simple',
    instantiationLevelId: 'instantiation_level_1',
    extVirtualLinks: [
      {
        id: 'uplink',
        resourceId: 'net-uplink-1',
        extCps: [
          { cpdId: 'worker_CP1', cpConfig: [{ cpProtocolData: [ipOverEthernet()] }] },
          { cpdId: 'edge_CP1', cpConfig: [{ cpProtocolData: [ipOverEthernet('192.0.2.44')] }] },
        ],
      },
    ],
  };
  await writeFile(join(work, 'instantiate.json'), JSON.stringify(request));
}, LONG);

afterAll(async () => {
  await os?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe("a Tacker v1 Heat package: ScalingPolicy scaling and v1's flavor/image parameters", () => {
  it(
    'servers get the flavor and image the VNFD names; scale out, out, in move the group by one member each, the level recorded is what Heat has; heal keeps the size',
    async () => {
      const vnf = await instantiate(VNFD_ID, 'gw');
      expect(await groupSize(vnf)).toBe(1);
      expect(await scaleLevel(vnf)).toBe(0);
      const facts = await serverFacts(vnf);
      expect(facts.map((f) => f.vdu).sort()).toEqual(['edge', 'worker']);
      expect(facts.find((f) => f.vdu === 'worker')).toMatchObject({ flavor: 'gw.worker.small', image: 'gateway-worker-3.2' });
      expect(facts.find((f) => f.vdu === 'edge')).toMatchObject({ flavor: 'gw.edge.tiny', image: 'gateway-edge-3.2' });
      // nfv.CP.edge_CP1.fixed_ips carries the request's fixed address.
      const edge = (await show(vnf)).instantiatedVnfInfo!.vnfcResourceInfo.find((r) => r.vduId === 'edge')!;
      expect(edge.metadata.addresses['edge_CP1']).toEqual(['192.0.2.44']);

      const one = await workers(vnf);
      const out1 = await scale(vnf, 'SCALE_OUT');
      expect(out1.code, out1.stderr).toBe(0);
      expect(await groupSize(vnf)).toBe(2);
      expect(await scaleLevel(vnf)).toBe(1);
      const two = await workers(vnf);
      expect(two).toHaveLength(2);
      expect(two).toEqual(expect.arrayContaining(one));

      const out2 = await scale(vnf, 'SCALE_OUT');
      expect(out2.code, out2.stderr).toBe(0);
      expect(await groupSize(vnf)).toBe(3);
      expect(await scaleLevel(vnf)).toBe(2);
      const three = await workers(vnf);
      expect(three).toHaveLength(3);

      const in1 = await scale(vnf, 'SCALE_IN');
      expect(in1.code, in1.stderr).toBe(0);
      expect(await groupSize(vnf)).toBe(2);
      expect(await scaleLevel(vnf)).toBe(1);
      // A policy signal leaves the choice to Heat, as with Tacker: the oldest member goes.
      const left = await workers(vnf);
      expect(left).toHaveLength(2);
      expect(left).not.toContain(one[0]);
      expect(three).toEqual(expect.arrayContaining(left));

      // A heal updates the stack: the group keeps the 2 members its signals gave it, not the template's 1.
      const healed = await run(['vnf-heal', vnf, '--vnfc-instance', left[0]!]);
      expect(healed.code, healed.stderr).toBe(0);
      expect(await groupSize(vnf)).toBe(2);
      expect(await scaleLevel(vnf)).toBe(1);
      const afterHeal = await workers(vnf);
      expect(afterHeal).toHaveLength(2);
      expect(afterHeal).not.toContain(left[0]);
      expect(afterHeal).toContain(left[1]);

      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
      expect(await heat(`/stacks/vnf-${vnf}`)).toBeUndefined();
    },
    LONG,
  );

  it(
    'a group that stops short of the step (max_size 2): FAILED_TEMP naming the group and both counts, no level recorded beyond what Heat has; rollback removes the member the failed scale added',
    async () => {
      const vnf = await instantiate(SMALL_VNFD_ID, 'gw-small');
      const first = await workers(vnf);
      expect(await groupSize(vnf)).toBe(1);

      const r = await scale(vnf, 'SCALE_OUT', 2);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /scaling group worker_group \(worker\) of Heat stack vnf-[0-9a-f-]+ has 2 members after the signal to worker_group_scale_out, 3 expected: Heat took no action/,
      );
      expect(r.stderr).toMatch(/FAILED_TEMP/);
      // Heat took the first step, not the second: the record stays at the level it had.
      expect(await groupSize(vnf)).toBe(2);
      expect(await scaleLevel(vnf)).toBe(0);
      const op = JSON.parse(await ok(['op-list', '-o', 'json'])).find((o: { vnfInstanceId: string; operation: string }) => o.vnfInstanceId === vnf && o.operation === 'SCALE');
      expect(op.operationState).toBe('FAILED_TEMP');

      await ok(['op-rollback', op.id]);
      expect(await groupSize(vnf)).toBe(1);
      expect(await scaleLevel(vnf)).toBe(0);
      // The member the failed scale added went; the first one stayed.
      expect(await workers(vnf)).toEqual(first);
      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
    },
    LONG,
  );
});
