/**
 * The test Heat and the Nova/Neutron stand-in environment, driven over raw
 * HTTP as Tacker's v2 driver drives Heat: the heat-vnf sample's BaseHOT
 * (top template plus its nested member template in `files`), one JSON
 * parameter `nfv`, then scale by updating desired_capacity, heal by
 * mark-unhealthy and update, and delete.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectToken, startOpenStack, type OpenStackServers } from '../support/heat.js';

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const BASE_HOT = 'csar-samples/heat-vnf/package/BaseHOT/simple';
const ENV_DIR = 'test/fixtures/heat/env';
const STANDINS = ['server', 'port', 'net', 'subnet', 'floating-ip'].map((name) => `standins/${name}.yaml`);
const WAIT_MS = 150_000;
const POLL_MS = 250;

/** What vnfm builds from the VNFD, the instantiation level and the request. */
function nfv(vdu1Capacity: number) {
  return {
    VDU: {
      VDU1: { desired_capacity: vdu1Capacity, computeFlavourId: 'm1.tiny', vcImageId: 'cirros-0.5.2' },
      VDU2: { computeFlavourId: 'm1.small', vcImageId: 'cirros-0.5.2' },
    },
    CP: {
      VDU1_CP1: { network: 'ext-net' },
      VDU2_CP1: { network: 'ext-net' },
    },
  };
}

interface StackRef {
  name: string;
  id: string;
}

interface HeatResource {
  resource_name: string;
  resource_type: string;
  physical_resource_id: string;
  resource_status: string;
  links: { href: string; rel: string }[];
  attributes?: Record<string, unknown>;
}

let os: OpenStackServers;
let token: string;

async function heat(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${os.heat.url}${path}`, {
    method,
    headers: {
      'x-auth-token': token,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

/** Polls the stack until no operation runs on it; a deleted stack answers DELETE_COMPLETE or 404. */
async function settled(stack: StackRef): Promise<{ status: string; reason: string }> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const { status, json } = await heat('GET', `/stacks/${stack.name}/${stack.id}`);
    if (status === 404) return { status: 'DELETE_COMPLETE', reason: 'gone' };
    expect(status).toBe(200);
    const current = json.stack as { stack_status: string; stack_status_reason: string };
    if (!current.stack_status.endsWith('_IN_PROGRESS')) {
      return { status: current.stack_status, reason: current.stack_status_reason };
    }
    if (Date.now() > deadline) throw new Error(`stack ${stack.name} still ${current.stack_status} after ${WAIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function resources(stack: StackRef, depth: number): Promise<HeatResource[]> {
  const { status, json } = await heat('GET', `/stacks/${stack.name}/${stack.id}/resources?nested_depth=${depth}`);
  expect(status).toBe(200);
  return json.resources as HeatResource[];
}

async function resource(stack: StackRef, name: string): Promise<HeatResource> {
  const { status, json } = await heat('GET', `/stacks/${stack.name}/${stack.id}/resources/${name}`);
  expect(status).toBe(200);
  return json.resource as HeatResource;
}

/** The stack a resource of a nested stack belongs to, from its `stack` link (…/stacks/<name>/<id>). */
function owner(r: HeatResource): StackRef {
  const href = r.links.find((l) => l.rel === 'stack')!.href;
  const [name, id] = href.split('/stacks/')[1]!.split('/');
  return { name: name!, id: id! };
}

/** The environment as `openstack stack create -e` sends it, and the provider templates it names. */
async function standinEnvironment(): Promise<{ environment: Record<string, unknown>; files: Record<string, string> }> {
  const environment = load(await readFile(root(`${ENV_DIR}/nova-neutron-standins.yaml`), 'utf8')) as Record<string, unknown>;
  const files: Record<string, string> = {};
  for (const name of STANDINS) files[name] = await readFile(root(`${ENV_DIR}/${name}`), 'utf8');
  return { environment, files };
}

beforeAll(async () => {
  // Its own Keystone and Heat: a test below restarts Heat.
  os = await startOpenStack();
  token = await projectToken(os.keystone);
  // Keystone's and Heat's start imports all of each, several times: minutes when the cores are busy.
}, 300_000);

afterAll(async () => {
  await os?.stop();
});

describe('Heat with the Nova/Neutron stand-ins', () => {
  it('creates, scales, heals and deletes the heat-vnf sample, with the addresses the test chose', { timeout: 600_000 }, async () => {
    const { environment, files } = await standinEnvironment();
    const stackName = 'vnf-heat-env-sample';
    const created = await heat('POST', '/stacks', {
      stack_name: stackName,
      template: await readFile(root(`${BASE_HOT}/heat_vnf.yaml`), 'utf8'),
      files: { ...files, 'VDU1.yaml': await readFile(root(`${BASE_HOT}/nested/VDU1.yaml`), 'utf8') },
      environment: {
        ...environment,
        parameter_defaults: { standin_addresses: { VDU2_CP1: '192.168.0.10', VDU1_CP1: '10.20.' } },
      },
      parameters: { nfv: nfv(1) },
      timeout_mins: 5,
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const stack: StackRef = { name: stackName, id: created.json.stack.id };
    expect(await settled(stack)).toMatchObject({ status: 'CREATE_COMPLETE' });

    // The stand-ins keep the real types' names, and their attributes carry the chosen addresses.
    let all = await resources(stack, 2);
    const servers = () => all.filter((r) => r.resource_type === 'OS::Nova::Server');
    expect(
      servers()
        .map((r) => r.resource_name)
        .sort(),
    ).toEqual(['VDU1', 'VDU2']);
    expect(all.filter((r) => r.resource_type === 'OS::Neutron::Port')).toHaveLength(4);
    const vdu2 = await resource(stack, 'VDU2');
    expect(vdu2.attributes!.first_address).toBe('192.168.0.10');
    const vdu2Addresses = Object.values(vdu2.attributes!.addresses as Record<string, { addr: string; port: string }[]>).flat();
    expect(vdu2Addresses.map((a) => a.addr)).toContain('192.168.0.10');
    expect((await resource(stack, 'VDU2_CP1')).attributes!.fixed_ips).toEqual([{ ip_address: '192.168.0.10', subnet_id: '' }]);
    const cp2 = (await resource(stack, 'VDU2_CP2')).attributes!.fixed_ips as { ip_address: string; subnet_id: string }[];
    expect(cp2[0]!.subnet_id).toBe((await resource(stack, 'internalVL1_subnet')).physical_resource_id);
    expect(vdu2Addresses.map((a) => a.addr)).toContain(cp2[0]!.ip_address);

    const memberAddress = async (server: HeatResource) => {
      const port = await resource(owner(server), 'VDU1_CP1');
      const [fixed] = port.attributes!.fixed_ips as { ip_address: string }[];
      expect((await resource(owner(server), 'VDU1')).attributes!.first_address).toBe(fixed!.ip_address);
      return fixed!.ip_address;
    };
    const [firstMember] = servers().filter((r) => r.resource_name === 'VDU1');
    expect(await memberAddress(firstMember!)).toMatch(/^10\.20\.\d+\.\d+$/);

    // Scale out: Tacker's v2 driver updates desired_capacity, not a ScalingPolicy.
    const scaled = await heat('PATCH', `/stacks/${stack.name}/${stack.id}`, { parameters: { nfv: nfv(2) } });
    expect(scaled.status, JSON.stringify(scaled.json)).toBe(202);
    expect(await settled(stack)).toMatchObject({ status: 'UPDATE_COMPLETE' });
    all = await resources(stack, 2);
    const members = servers().filter((r) => r.resource_name === 'VDU1');
    expect(members).toHaveLength(2);
    const addresses = await Promise.all(members.map(memberAddress));
    expect(new Set(addresses).size).toBe(2);

    // Heal one member: mark its server unhealthy in its nested stack, then update.
    const [sick, healthy] = members as [HeatResource, HeatResource];
    const marked = await heat('PATCH', `/stacks/${owner(sick).name}/${owner(sick).id}/resources/VDU1`, {
      mark_unhealthy: true,
      resource_status_reason: 'heal requested by the test',
    });
    expect(marked.status, JSON.stringify(marked.json)).toBe(200);
    const healed = await heat('PATCH', `/stacks/${stack.name}/${stack.id}`, {});
    expect(healed.status, JSON.stringify(healed.json)).toBe(202);
    expect(await settled(stack)).toMatchObject({ status: 'UPDATE_COMPLETE' });
    all = await resources(stack, 2);
    const after = servers().filter((r) => r.resource_name === 'VDU1');
    const ids = after.map((r) => r.physical_resource_id);
    expect(ids).toHaveLength(2);
    expect(ids).not.toContain(sick.physical_resource_id);
    expect(ids).toContain(healthy.physical_resource_id);
    // The replaced server keeps its member's ports, so its address.
    const replaced = after.find((r) => r.physical_resource_id !== healthy.physical_resource_id)!;
    expect(await memberAddress(replaced)).toBe(addresses[members.indexOf(sick)]);

    const deleted = await heat('DELETE', `/stacks/${stack.name}/${stack.id}`);
    expect(deleted.status).toBe(204);
    // Heat may list the stack for a moment after it reads DELETE_COMPLETE.
    expect(await settled(stack)).toMatchObject({ status: 'DELETE_COMPLETE' });
  });

  it('gives a port its fixed_ips address and a floating IP the address of its port', { timeout: 300_000 }, async () => {
    const { environment, files } = await standinEnvironment();
    const template = {
      heat_template_version: '2018-08-31',
      resources: {
        port: { type: 'OS::Neutron::Port', properties: { network: 'net0', fixed_ips: [{ ip_address: '192.0.2.7' }] } },
        fip: {
          type: 'OS::Neutron::FloatingIP',
          properties: { floating_network: 'public', port_id: { get_resource: 'port' } },
        },
        server: { type: 'OS::Nova::Server', properties: { flavor: 'm1.tiny', image: 'cirros', networks: [{ port: { get_resource: 'port' } }] } },
      },
      outputs: {
        fixed: { value: { get_attr: ['fip', 'fixed_ip_address'] } },
        floating: { value: { get_attr: ['fip', 'floating_ip_address'] } },
        server: { value: { get_attr: ['server', 'first_address'] } },
      },
    };
    const created = await heat('POST', '/stacks', { stack_name: 'vnf-heat-env-fip', template, files, environment });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const stack: StackRef = { name: 'vnf-heat-env-fip', id: created.json.stack.id };
    expect(await settled(stack)).toMatchObject({ status: 'CREATE_COMPLETE' });
    const shown = await heat('GET', `/stacks/${stack.name}/${stack.id}`);
    const outputs = Object.fromEntries((shown.json.stack.outputs as { output_key: string; output_value: unknown }[]).map((o) => [o.output_key, o.output_value]));
    expect(outputs.fixed).toBe('192.0.2.7');
    expect(outputs.server).toBe('192.0.2.7');
    expect(outputs.floating).toMatch(/^172\.24\.\d+\.\d+$/);
    expect((await heat('DELETE', `/stacks/${stack.name}/${stack.id}`)).status).toBe(204);
    expect(await settled(stack)).toMatchObject({ status: 'DELETE_COMPLETE' });
  });

  it('answers again after restart(), with the stacks it had', { timeout: 120_000 }, async () => {
    const { environment, files } = await standinEnvironment();
    const template = {
      heat_template_version: '2018-08-31',
      resources: { net: { type: 'OS::Neutron::Net' } },
    };
    const created = await heat('POST', '/stacks', { stack_name: 'vnf-heat-env-restart', template, files, environment });
    expect(created.status).toBe(201);
    const stack: StackRef = { name: 'vnf-heat-env-restart', id: created.json.stack.id };
    expect(await settled(stack)).toMatchObject({ status: 'CREATE_COMPLETE' });
    await os.heat.restart();
    expect(await settled(stack)).toMatchObject({ status: 'CREATE_COMPLETE' });
    expect((await heat('DELETE', `/stacks/${stack.name}/${stack.id}`)).status).toBe(204);
    expect(await settled(stack)).toMatchObject({ status: 'DELETE_COMPLETE' });
  });
});
