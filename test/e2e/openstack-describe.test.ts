/**
 * vnf-describe and vnf-sync of the heat-vnf sample on a real Keystone and
 * Heat: the stack's resources as a tree (VDU1's scaling group over its
 * members), all complete; a server marked unhealthy behind vnfm's back (as
 * `openstack stack resource mark unhealthy` does) is not ready and is drift.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, vnfm, type RunResult, okStdoutWith } from '../support/cli.js';
import { projectToken, useOpenStack, type OpenStackServers, openStackVimConfig } from '../support/heat.js';

const SAMPLE = resolve('csar-samples/heat-vnf');
const STANDINS = resolve('test/fixtures/heat/env/nova-neutron-standins.yaml');
const LONG = 240_000;

let os: OpenStackServers;
let home: string;
let work: string;
let addressesEnv: string;

const run = (args: string[]): Promise<RunResult> => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okStdoutWith((args) => run(args));

interface Node {
  kind: string;
  name: string;
  id?: string;
  ready: boolean;
  reason: string;
  replicas?: number;
  drift: string[];
  children: Node[];
}
const flat = (nodes: Node[]): Node[] => nodes.flatMap((n) => [n, ...flat(n.children)]);

beforeAll(async () => {
  os = await useOpenStack();
  home = newHome();
  work = dirname(home);
  const vimConfig = join(work, 'vim.yaml');
  await writeFile(vimConfig, openStackVimConfig(os.keystone));
  await ok(['vim-register', '--config-file', vimConfig, '--is-default', 'os1']);
  await ok(['vnfpkg-build', join(SAMPLE, 'package'), '-f', join(work, 'heat-vnf.zip')]);
  await ok(['vnfpkg-onboard', join(work, 'heat-vnf.zip'), '--name', 'heat-vnf']);
  const request = (await readFile(join(SAMPLE, 'requests/instantiate.json'), 'utf8')).replace('REPLACE-WITH-EXTERNAL-NETWORK-ID', 'net-public-1');
  await writeFile(join(work, 'instantiate.json'), request);
  addressesEnv = join(work, 'addresses.yaml');
  await writeFile(addressesEnv, 'parameter_defaults:\n  standin_addresses:\n    VDU2_CP1: 192.168.0.10\n    VDU1_CP1: "10.20."\n');
}, LONG);

afterAll(async () => {
  await os?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('vnf-describe on Heat', () => {
  it(
    'shows the stack as a tree, then a server marked unhealthy as not ready and drift; sync finds the VNFCs in sync',
    async () => {
      await ok(['vnf-create', '--package', 'heat-vnf', '--name', 'hv']);
      await ok(['vnf-instantiate', 'hv', '--request-file', join(work, 'instantiate.json'), '--heat-environment', STANDINS, '--heat-environment', addressesEnv]);
      const id = (JSON.parse(await ok(['vnf-show', 'hv', '-o', 'json'])) as { id: string }).id;

      const fresh = JSON.parse(await ok(['vnf-describe', 'hv', '-o', 'json'])) as { stack: string; vimType: string; ready: boolean; drift: string[]; objects: Node[] };
      expect(fresh).toMatchObject({ stack: `vnf-${id}`, vimType: 'openstack', ready: true, drift: [] });
      const group = fresh.objects.find((n) => n.name === 'VDU1_scale_group')!;
      expect(group).toMatchObject({ kind: 'OS::Heat::AutoScalingGroup', replicas: 1, ready: true });
      const servers = flat(fresh.objects).filter((n) => n.kind === 'OS::Nova::Server');
      expect(servers.map((s) => s.name).sort()).toEqual(['VDU1', 'VDU2']);
      expect(flat(group.children).some((n) => n.kind === 'OS::Nova::Server')).toBe(true);
      const table = await ok(['vnf-describe', 'hv']);
      expect(table).toMatch(/^OS::Heat::AutoScalingGroup\/VDU1_scale_group\s+True$/m);
      expect(table).toContain('No drift from what vnfm recorded.');
      expect(await ok(['vnf-sync', 'hv'])).toBe('vnf instance hv: in sync\n');

      // Marked unhealthy as `openstack stack resource mark unhealthy` does.
      const token = await projectToken(os.keystone);
      const stackRes = await fetch(`${os.heat.url}/stacks/vnf-${id}`, { headers: { 'x-auth-token': token }, redirect: 'follow' });
      const stack = ((await stackRes.json()) as { stack: { id: string } }).stack;
      const marked = await fetch(`${os.heat.url}/stacks/vnf-${id}/${stack.id}/resources/VDU2`, {
        method: 'PATCH',
        headers: { 'x-auth-token': token, 'content-type': 'application/json' },
        body: JSON.stringify({ mark_unhealthy: true, resource_status_reason: 'not answering' }),
      });
      expect(marked.status).toBe(200);
      const after = JSON.parse(await ok(['vnf-describe', 'hv', '-o', 'json'])) as { ready: boolean; drift: string[]; objects: Node[] };
      expect(after.ready).toBe(false);
      expect(after.drift).toContain('OS::Nova::Server/VDU2: CHECK_FAILED: not answering');
      expect(after.objects.find((n) => n.name === 'VDU2')).toMatchObject({ ready: false, reason: 'CHECK_FAILED: not answering' });

      await ok(['vnf-terminate', 'hv', '--termination-type', 'FORCEFUL', '--yes']);
    },
    LONG,
  );
});
