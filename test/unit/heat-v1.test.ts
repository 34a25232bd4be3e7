/**
 * What vnfm reads in a Base HOT of either package generation: the nfv keys
 * the templates take (Tacker v1's `flavor`/`image` beside v2's
 * `computeFlavourId`/`vcImageId`), which scaling group holds each VDU and
 * how it is sized (nfv.VDU.<vdu>.desired_capacity, or Tacker v1's
 * `<aspect>_scale_out`/`_scale_in` policies), the signals of a scale, and the
 * sizes a template sent for a policy-sized group carries.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openPackage } from '../../src/csar/index.js';
import { UsageError } from '../../src/errors.js';
import type { DriverContext } from '../../src/infra/driver.js';
import { GroupSizes } from '../../src/infra/openstack/group-sizes.js';
import type { HeatEvent, HeatResource, HeatSession } from '../../src/infra/openstack/heat.js';
import { groupMembers, parseHot, templateGroups, withGroupSizes } from '../../src/infra/openstack/hot.js';
import { buildNfvParameter, nfvReads } from '../../src/lcm/heat-nfv.js';
import { groupSizes, policySignal, vduGroups } from '../../src/lcm/heat-scaling.js';
import { levelReplicas } from '../../src/lcm/replicas.js';
import { loadVnfd, type Flavour } from '../../src/vnfd/index.js';

const V1 = resolve('test/fixtures/tacker-shapes/v1-heat-scale');
const V2 = resolve('csar-samples/heat-vnf/package');

interface Shape {
  flavour: Flavour;
  templates: { template: string; files: Record<string, string> };
}

async function shape(dir: string, entry: string, top: string, nested: string[]): Promise<Shape> {
  const files = await openPackage(dir);
  try {
    const { vnfd } = await loadVnfd(files, entry);
    const base = join(dir, 'BaseHOT/simple');
    const nestedFiles = Object.fromEntries(await Promise.all(nested.map(async (n) => [n, await readFile(join(base, 'nested', n), 'utf8')] as const)));
    return { flavour: vnfd!.flavours['simple']!, templates: { template: await readFile(join(base, top), 'utf8'), files: nestedFiles } };
  } finally {
    await files.close();
  }
}

let v1: Shape;
let v2: Shape;

beforeAll(async () => {
  v1 = await shape(V1, 'Definitions/gateway_top.vnfd.yaml', 'gateway.yaml', ['worker.yaml']);
  v2 = await shape(V2, 'Definitions/heat_vnf_top.vnfd.yaml', 'heat_vnf.yaml', ['VDU1.yaml']);
});

/** A v1 extVirtualLinks entry: cpConfig is a list (SOL003 2.6.1). */
const uplink = (edgeAddress?: string) => [
  {
    id: 'uplink',
    resourceId: 'net-uplink-1',
    extCps: [
      { cpdId: 'worker_CP1', cpConfig: [{ cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', numDynamicAddresses: 1 }] } }] }] },
      {
        cpdId: 'edge_CP1',
        cpConfig: [
          {
            cpProtocolData: [
              {
                layerProtocol: 'IP_OVER_ETHERNET',
                ipOverEthernet: { ipAddresses: [edgeAddress ? { type: 'IPV4', fixedAddresses: [edgeAddress], subnetId: 'sub-1' } : { type: 'IPV4', numDynamicAddresses: 1 }] },
              },
            ],
          },
        ],
      },
    ],
  },
];

describe('the nfv parameter of each package generation', () => {
  it("a v1 Base HOT: the paths it reads, and Tacker v1's flavor and image beside v2's keys", () => {
    const reads = nfvReads(v1.templates);
    expect(reads).toEqual(
      expect.arrayContaining([
        ['VDU', 'worker', 'flavor'],
        ['VDU', 'worker', 'image'],
        ['CP', 'worker_CP1', 'network'],
        ['VDU', 'edge', 'flavor'],
        ['VDU', 'edge', 'image'],
        ['CP', 'edge_CP1', 'network'],
        ['CP', 'edge_CP1', 'fixed_ips'],
      ]),
    );
    const nfv = buildNfvParameter(v1.flavour, levelReplicas(v1.flavour).replicas, { reads, extVirtualLinks: uplink('192.0.2.44') });
    expect(nfv.VDU).toEqual({
      worker: { desired_capacity: 1, computeFlavourId: 'gw.worker.small', vcImageId: 'gateway-worker-3.2', flavor: 'gw.worker.small', image: 'gateway-worker-3.2' },
      edge: { desired_capacity: 1, computeFlavourId: 'gw.edge.tiny', vcImageId: 'gateway-edge-3.2', flavor: 'gw.edge.tiny', image: 'gateway-edge-3.2' },
    });
    // cpConfig as v1's list; fixed_ips where the template reads it, empty when the request gives no address (as Tacker's utils.py create_network_dict).
    expect(nfv.CP).toEqual({ worker_CP1: { network: 'net-uplink-1' }, edge_CP1: { network: 'net-uplink-1', fixed_ips: [{ ip_address: '192.0.2.44', subnet: 'sub-1' }] } });
    expect(buildNfvParameter(v1.flavour, { worker: 1, edge: 1 }, { reads, extVirtualLinks: uplink() }).CP['edge_CP1']).toEqual({ network: 'net-uplink-1', fixed_ips: [] });
  });

  it("a v2 Base HOT reads none of v1's keys: the parameter is v2's alone", () => {
    const nfv = buildNfvParameter(v2.flavour, { VDU1: 1, VDU2: 1 }, { reads: nfvReads(v2.templates) });
    expect(nfv.VDU['VDU1']).toEqual({ desired_capacity: 1, computeFlavourId: 'm1.tiny', vcImageId: 'cirros-0.5.2-x86_64-disk' });
    expect(Object.keys(nfv.VDU['VDU2']!).sort()).toEqual(['computeFlavourId', 'desired_capacity', 'vcImageId']);
  });

  it("a template making an OS::Nova::Flavor from nfv.VDU.<vdu>.flavor.ram/vcpus/disk gets the VDU's size, in MiB and GiB rounded down as Tacker does", () => {
    const template = `heat_template_version: 2013-05-23
parameters:
  nfv: {type: json}
resources:
  worker_flavor:
    type: OS::Nova::Flavor
    properties:
      ram: { get_param: [ nfv, VDU, worker, flavor, ram ] }
      vcpus: { get_param: [ nfv, VDU, worker, flavor, vcpus ] }
      disk: { get_param: [ nfv, VDU, worker, flavor, disk ] }
  worker:
    type: OS::Nova::Server
    properties:
      flavor: { get_resource: worker_flavor }
      image: { get_param: [ nfv, VDU, worker, image ] }
`;
    const nfv = buildNfvParameter(v1.flavour, { worker: 1, edge: 1 }, { reads: nfvReads({ template, files: {} }) });
    // 1 GB = 10^9 bytes = 953.67 MiB; 4 GB = 3.73 GiB.
    expect(nfv.VDU['worker']).toMatchObject({ flavor: { vcpus: 2, ram: 953, disk: 3 }, image: 'gateway-worker-3.2' });
    expect(nfv.VDU['edge']).not.toHaveProperty('flavor');
  });

  it("a virtual storage's image under its own name, when the template reads it", () => {
    const storages = {
      VirtualStorage: { nodeName: 'VirtualStorage', type: 'tosca.nodes.nfv.Vdu.VirtualBlockStorage', swImage: { name: 'gateway-disk-3.2' }, isComputeNode: false as const },
    };
    const flavour = { ...v1.flavour, storages };
    const nfv = buildNfvParameter(flavour, { worker: 1, edge: 1 }, { reads: [['VDU', 'VirtualStorage', 'image']] });
    expect(nfv.VDU['VirtualStorage']).toEqual({ image: 'gateway-disk-3.2' });
  });
});

describe('scaling groups and how they are sized', () => {
  it("v1: the group its aspect's <aspect>_scale_out/_scale_in policies name; v2: the group whose desired_capacity reads nfv", () => {
    expect(vduGroups(v1.templates, v1.flavour)).toEqual([
      { group: 'worker_group', vduId: 'worker', policies: { aspectId: 'worker_group', scaleOut: 'worker_group_scale_out', scaleIn: 'worker_group_scale_in' } },
    ]);
    expect(vduGroups(v2.templates, v2.flavour)).toEqual([{ group: 'VDU1_scale_group', vduId: 'VDU1' }]);
  });

  it('a scale of the v1 form: one signal per step and the size after each; the v2 form has none', () => {
    const groups = vduGroups(v1.templates, v1.flavour);
    const out = policySignal(groups, v1.flavour, { aspectId: 'worker_group', fromLevel: 0, toLevel: 2, replicas: { worker: 1, edge: 1 } }, 'BaseHOT/simple/gateway.yaml');
    expect(out).toEqual({ policy: 'worker_group_scale_out', group: 'worker_group', vduId: 'worker', from: 1, steps: [2, 3] });
    const back = policySignal(groups, v1.flavour, { aspectId: 'worker_group', fromLevel: 2, toLevel: 1, replicas: { worker: 3, edge: 1 } }, 'BaseHOT/simple/gateway.yaml');
    expect(back).toEqual({ policy: 'worker_group_scale_in', group: 'worker_group', vduId: 'worker', from: 3, steps: [2] });
    expect(policySignal(vduGroups(v2.templates, v2.flavour), v2.flavour, { aspectId: 'vdu1_aspect', fromLevel: 0, toLevel: 1, replicas: { VDU1: 1 } }, 'x')).toBeUndefined();
  });

  it('a v1 template without the policy for the direction is refused before anything is done', () => {
    const template = v1.templates.template.replace(/\n {2}worker_group_scale_in:[\s\S]*?adjustment_type: change_in_capacity\n/, '\n');
    const groups = vduGroups({ ...v1.templates, template }, v1.flavour);
    expect(groups[0]!.policies).toEqual({ aspectId: 'worker_group', scaleOut: 'worker_group_scale_out' });
    const err = (() => {
      try {
        return policySignal(groups, v1.flavour, { aspectId: 'worker_group', fromLevel: 1, toLevel: 0, replicas: { worker: 2 } }, 'BaseHOT/simple/gateway.yaml');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toBe(
      'the Base HOT BaseHOT/simple/gateway.yaml scales aspect worker_group through OS::Heat::ScalingPolicy resources, and has no worker_group_scale_in',
    );
  });

  it("the sizes each group must have: a policy group its VDU's replicas, an nfv group the desired_capacity sent", () => {
    expect(groupSizes(vduGroups(v1.templates, v1.flavour), { worker: 3, edge: 1 }, { VDU: {}, CP: {} })).toEqual([{ group: 'worker_group', members: 3, vduId: 'worker' }]);
    const nfv = { VDU: { VDU1: { desired_capacity: 2 } }, CP: {} };
    expect(groupSizes(vduGroups(v2.templates, v2.flavour), { VDU1: 1, VDU2: 1 }, nfv)).toEqual([{ group: 'VDU1_scale_group', members: 2, vduId: 'VDU1' }]);
  });

  it('a template sent for a policy group carries its size; an nfv group and a group already at its size are left as written', () => {
    const top = parseHot(v1.templates.template)!;
    expect(top['heat_template_version']).toBe('2013-05-23');
    expect(withGroupSizes(top, { worker_group: 1 })).toBeUndefined();
    const sized = withGroupSizes(top, { worker_group: 3 })!;
    expect(templateGroups(sized)).toEqual([
      {
        name: 'worker_group',
        desiredCapacity: 3,
        minSize: 1,
        maxSize: 3,
        memberType: 'worker.yaml',
        policies: [
          { name: 'worker_group_scale_out', adjustment: 1 },
          { name: 'worker_group_scale_in', adjustment: -1 },
        ],
      },
    ]);
    // Only desired_capacity changed.
    expect({ ...sized, resources: { ...(sized['resources'] as object), worker_group: undefined } }).toEqual({
      ...top,
      resources: { ...(top['resources'] as object), worker_group: undefined },
    });
    expect(withGroupSizes(parseHot(v2.templates.template)!, { VDU1_scale_group: 3 })).toBeUndefined();
  });

  it("a group's members as Heat lists them: failed and deleted ones do not count", () => {
    const stack = { name: 'vnf-1', id: 's1' };
    const nested = { name: 'vnf-1-worker_group-x', id: 'n1' };
    const row = (name: string, type: string, status: string, on = nested, extra: Partial<HeatResource> = {}): HeatResource => ({
      name,
      type,
      status,
      statusReason: '',
      physicalId: `${name}-id`,
      stack: on,
      ...extra,
    });
    const rows = [
      row('worker_group', 'OS::Heat::AutoScalingGroup', 'UPDATE_COMPLETE', stack, { nestedStack: nested }),
      row('edge', 'OS::Nova::Server', 'CREATE_COMPLETE', stack),
      row('m1', 'worker.yaml', 'CREATE_COMPLETE'),
      row('m2', 'worker.yaml', 'UPDATE_COMPLETE'),
      row('m3', 'worker.yaml', 'CHECK_FAILED'),
      row('m4', 'worker.yaml', 'DELETE_COMPLETE'),
    ];
    expect(groupMembers(rows, 's1')).toEqual({ worker_group: { members: 2, failed: 1, nested } });
  });
});

describe("the signals of a scale, as Heat answers them (Heat's API played by a script, time injected)", () => {
  /** A group's resize as Heat runs it: a signal is taken when the group is idle, out of its cooldown and under max_size. */
  function scriptedHeat(start: { members: number; max: number; cooldownEnd?: number }) {
    const clock = { now: 1_000_000 };
    const stack = { name: 'vnf-1', id: 's1' };
    const nested = { name: 'vnf-1-worker_group-x', id: 'n1' };
    const state = { members: start.members, resizing: 0, cooldownEnd: start.cooldownEnd ?? 0, signals: [] as number[], events: [] as HeatEvent[] };
    const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '');
    const session = {
      async listResources() {
        const group: HeatResource = {
          name: 'worker_group',
          type: 'OS::Heat::AutoScalingGroup',
          status: 'CREATE_COMPLETE',
          statusReason: '',
          physicalId: 'n1',
          stack,
          nestedStack: nested,
        };
        const member = (i: number): HeatResource => ({ name: `m${i}`, type: 'worker.yaml', status: 'CREATE_COMPLETE', statusReason: '', physicalId: `m${i}`, stack: nested });
        return [group, ...Array.from({ length: state.members }, (_, i) => member(i))];
      },
      async resourceMetadata() {
        if (state.resizing > 0 && --state.resizing === 0) {
          state.members += 1;
          state.events.push({ id: `e${state.events.length + 1}`, resourceName: 'worker_group_scale_out', physicalResourceId: '', status: 'SIGNAL_COMPLETE', statusReason: '' });
          return { scaling_in_progress: false, cooldown_end: { [iso(clock.now)]: 'change_in_capacity : 1' } };
        }
        return { scaling_in_progress: state.resizing > 0, ...(state.cooldownEnd ? { cooldown_end: { [iso(state.cooldownEnd)]: 'change_in_capacity : 1' } } : {}) };
      },
      async lastEventId() {
        return state.events.at(-1)?.id;
      },
      async signalResource() {
        state.signals.push(clock.now);
        if (state.resizing === 0 && clock.now >= state.cooldownEnd && state.members < start.max) state.resizing = 2;
      },
      async listEvents(_ref: unknown, o: { marker?: string }) {
        const from = o.marker ? state.events.findIndex((e) => e.id === o.marker) + 1 : 0;
        return state.events.slice(from);
      },
      async getStack() {
        return { ...nested, status: 'UPDATE_COMPLETE', statusReason: '', parameters: {}, outputs: [] };
      },
    } as unknown as HeatSession;
    const sleeps: number[] = [];
    const sizes = new GroupSizes(session, {
      now: () => clock.now,
      sleep: async (ms) => {
        sleeps.push(ms);
        clock.now += ms;
      },
      poll: { min: 100, max: 1_000 },
      quietMs: 10_000,
    });
    const events: string[] = [];
    const ctx = {
      journal: { record: () => undefined, steps: () => [] },
      report: (e: { message: string }) => events.push(e.message),
      signal: new AbortController().signal,
    } as unknown as DriverContext;
    return { sizes, state, clock, sleeps, events, ctx, stack };
  }
  const signal = { policy: 'worker_group_scale_out', group: 'worker_group', vduId: 'worker', from: 1, steps: [2, 3] };

  it('one signal per step, each waited for before the next', async () => {
    const h = scriptedHeat({ members: 1, max: 3 });
    await h.sizes.signalSteps(h.ctx, h.stack, signal);
    expect(h.state.members).toBe(3);
    expect(h.state.signals).toHaveLength(2);
  });

  it('a retry after the first step took: only the missing signal is sent', async () => {
    const h = scriptedHeat({ members: 2, max: 3 });
    await h.sizes.signalSteps(h.ctx, h.stack, signal);
    expect(h.state.members).toBe(3);
    expect(h.state.signals).toHaveLength(1);
  });

  it("a group in its cooldown is signalled once the cooldown has ended (Tacker's get_cooldown)", async () => {
    const h = scriptedHeat({ members: 1, max: 3, cooldownEnd: 1_000_000 + 30_000 });
    await h.sizes.signalSteps(h.ctx, h.stack, { ...signal, steps: [2] });
    expect(h.state.members).toBe(2);
    expect(h.state.signals[0]).toBeGreaterThanOrEqual(1_030_000);
    expect(h.events).toContain('waiting: worker_group is in its cooldown for 30 s');
  });

  it('a group at its max_size: Heat takes no action, the wait ends after the quiet time and the error names the group and both counts', async () => {
    const h = scriptedHeat({ members: 1, max: 2 });
    const err = await h.sizes.signalSteps(h.ctx, h.stack, signal).catch((e: unknown) => e);
    expect(h.state.signals).toHaveLength(2);
    expect((err as Error).message).toBe(
      "scaling group worker_group (worker) of Heat stack vnf-1 has 2 members after the signal to worker_group_scale_out, 3 expected: Heat took no action on the signal within 10 s: the group is at its max_size or min_size, or in its cooldown, or Heat failed to resize it (heat-engine's log says which)",
    );
  });

  it('a group resized outside vnfm is refused before any signal', async () => {
    const h = scriptedHeat({ members: 5, max: 9 });
    const err = await h.sizes.signalSteps(h.ctx, h.stack, signal).catch((e: unknown) => e);
    expect(h.state.signals).toHaveLength(0);
    expect((err as Error).message).toMatch(/has 5 members: neither the 1 recorded nor a step of this scale \(2, 3\)/);
  });
});
