/**
 * The Heat watcher of test/support/heat-nodes.ts on the test Keystone and
 * Heat: a node per stand-in server at its port's address, more on scale-out,
 * fewer on scale-in, a rebuilt node (new host key, same address, data kept)
 * when a heal replaces a server, none after the stack is deleted.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import yaml from 'js-yaml';
import { NodeSSH } from 'node-ssh';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectToken, useOpenStack, type OpenStackServers } from '../support/heat.js';
import { heatEnvironmentFor, watchStackNodes, type StackNodes } from '../support/heat-nodes.js';
import { createNodeNetwork, type NodeNetwork } from '../support/nodes.js';

const LONG = 240_000;
const TEMPLATE = `heat_template_version: 2018-08-31
parameters:
  count: {type: number, default: 1}
resources:
  VDU2:
    type: OS::Nova::Server
    properties:
      flavor: m1.tiny
      image: cirros
      networks: [{port: {get_resource: VDU2_CP1}}]
  VDU2_CP1:
    type: OS::Neutron::Port
    properties: {network: net0}
  group:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 0
      max_size: 3
      desired_capacity: {get_param: count}
      resource: {type: member.yaml}
`;
const MEMBER = `heat_template_version: 2018-08-31
resources:
  VDU1:
    type: OS::Nova::Server
    properties:
      flavor: m1.tiny
      image: cirros
      networks: [{port: {get_resource: VDU1_CP1}}]
  VDU1_CP1:
    type: OS::Neutron::Port
    properties: {network: net0}
`;

let os: OpenStackServers;
let net: NodeNetwork;
let work: string;
let watcher: StackNodes | undefined;

async function heat(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${os.heat.url}${path}`, {
    method,
    headers: { 'x-auth-token': await projectToken(os.keystone), 'content-type': 'application/json', accept: 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

async function settle(name: string): Promise<string> {
  for (;;) {
    const { status, json } = await heat('GET', `/stacks/${name}`);
    if (status === 404) return 'GONE';
    const s = json.stack.stack_status as string;
    if (!s.endsWith('_IN_PROGRESS')) return s;
    await new Promise((r) => setTimeout(r, 300));
  }
}

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; !check(); i++) {
    if (i > 600) throw new Error(`never: ${what} (${watcher?.events().join('; ')})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  [os, net] = await Promise.all([useOpenStack(), createNodeNetwork()]);
  work = mkdtempSync(join(tmpdir(), 'vnfm-heat-nodes-'));
}, LONG);

afterAll(async () => {
  await watcher?.close();
  await net?.close();
  await os?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('servers of a Heat stack as simulated nodes', () => {
  it(
    'boot, scale out and in, heal (rebuild at the same address), delete',
    async () => {
      const vdu2Address = `${net.prefix}0.10`;
      const envFile = await heatEnvironmentFor(net, join(work, 'env'), { VDU2_CP1: vdu2Address, VDU1_CP1: net.prefix });
      await expect(heatEnvironmentFor(net, join(work, 'bad'), { VDU2_CP1: '192.168.0.10' })).rejects.toThrow(/not on the node network/);
      const environment = yaml.load(readFileSync(envFile, 'utf8')) as { resource_registry: Record<string, string> };
      const files: Record<string, string> = { 'member.yaml': MEMBER };
      for (const f of Object.values(environment.resource_registry)) files[f] = readFileSync(join(dirname(envFile), f), 'utf8');

      const name = `nodes-${process.pid}`;
      watcher = watchStackNodes(net, { heat: os, stackName: name, node: (vdu) => (vdu === 'VDU2' ? { users: [{ name: 'admin', password: 'pw' }] } : {}), pollMs: 300 });
      const created = await heat('POST', '/stacks', { stack_name: name, template: TEMPLATE, environment, files });
      expect(created.status).toBe(201);
      const stackPath = `/stacks/${name}/${created.json.stack.id}`;
      expect(await settle(name)).toBe('CREATE_COMPLETE');

      const nodes = await watcher.ready(2);
      const vdu2 = nodes.find((n) => n.address === vdu2Address)!;
      expect(vdu2).toBeDefined();
      const member = nodes.find((n) => n !== vdu2)!;
      expect(member.address.startsWith(net.prefix)).toBe(true);
      const ssh = new NodeSSH();
      await ssh.connect({ host: vdu2Address, username: 'admin', password: 'pw', readyTimeout: 10_000 });
      expect((await ssh.execCommand('hostname')).stdout).toMatch(/^VDU2-/);
      ssh.dispose();

      expect((await heat('PATCH', stackPath, { parameters: { count: 2 } })).status).toBe(202);
      expect(await settle(name)).toBe('UPDATE_COMPLETE');
      await watcher.ready(3);
      expect(new Set([...watcher.nodes().values()].map((n) => n.address)).size).toBe(3);

      expect((await heat('PATCH', stackPath, { parameters: { count: 1 } })).status).toBe(202);
      expect(await settle(name)).toBe('UPDATE_COMPLETE');
      await until('scale-in stops a node', () => watcher!.nodes().size === 2);

      // Heal VDU2: its server is replaced, its port (and address) stays.
      await vdu2.run('mkdir -p /var/lib/private-registry && echo kept > /var/lib/private-registry/data && echo lost > /var/lib/scratch');
      const keyBefore = await vdu2.hostKeyFingerprint();
      const idsBefore = [...watcher.nodes().keys()];
      expect((await heat('PATCH', `${stackPath}/resources/VDU2`, { mark_unhealthy: true, resource_status_reason: 'test heal' })).status).toBe(200);
      expect((await heat('PATCH', stackPath, {})).status).toBe(202);
      expect(await settle(name)).toBe('UPDATE_COMPLETE');
      await until('the healed server rebuilds its node', () => watcher!.events().some((e) => e.startsWith('rebuild VDU2')));
      expect([...watcher.nodes().keys()]).not.toEqual(idsBefore);
      expect([...watcher.nodes().values()]).toContain(vdu2);
      expect(vdu2.address).toBe(vdu2Address);
      expect(await vdu2.hostKeyFingerprint()).not.toBe(keyBefore);
      expect(vdu2.file('/var/lib/private-registry/data')).toBe('kept\n');
      expect(vdu2.file('/var/lib/scratch')).toBeUndefined();

      expect((await heat('DELETE', stackPath)).status).toBe(204);
      expect(await settle(name)).toMatch(/GONE|DELETE_COMPLETE/);
      await until('every node stopped', () => watcher!.nodes().size === 0);
      expect(net.nodes()).toEqual([]);
      expect(watcher.events().filter((e) => e.startsWith('stop'))).toHaveLength(3);
    },
    LONG,
  );
});
