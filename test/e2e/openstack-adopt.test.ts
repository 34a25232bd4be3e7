/**
 * vnf-adopt of a VNF Tacker v2 instantiated on OpenStack, on the real
 * Keystone and Heat (the stand-in environment of test/fixtures/heat/env/ for
 * Nova and Neutron): the heat-vnf sample's stack created directly through
 * Heat's API as Tacker v2 creates it (named vnf-<instance id>, the package's
 * Base HOT and nested template, the `nfv` JSON parameter), adopted with no
 * server replaced, then scaled out and terminated by vnfm; a stack left
 * UPDATE_FAILED is refused, nothing recorded.
 */
import { randomUUID } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, okStdoutWith, vnfm, type RunResult } from '../support/cli.js';
import { openStackVimConfig, projectToken, useOpenStack, type OpenStackServers } from '../support/heat.js';

const SAMPLE = resolve('csar-samples/heat-vnf');
const STANDINS = resolve('test/fixtures/heat/env/nova-neutron-standins.yaml');
const VNFD_ID = '72c3c844-4146-4e33-a2ab-fe1fbd9927fc';
const TACKER_VIM_ID = '6b0e3f0c-2d1a-4c7e-8f5b-9a0b1c2d3e4f';
const LONG = 480_000;

let os: OpenStackServers;
let home: string;
let work: string;

const run = (args: string[]): Promise<RunResult> => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okStdoutWith((args) => run(args));

async function heat(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const token = await projectToken(os.keystone);
  const res = await fetch(`${os.heat.url}${path}`, {
    method,
    headers: { 'x-auth-token': token, 'content-type': 'application/json', accept: 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    redirect: 'follow',
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** The stack until its status is not *_IN_PROGRESS (Heat works on its own time; no fixed sleep). */
async function settled(name: string): Promise<{ id: string; stack_status: string }> {
  for (;;) {
    const got = await heat('GET', `/stacks/${name}`);
    const stack = got.json['stack'] as { id: string; stack_status: string };
    if (!stack.stack_status.endsWith('_IN_PROGRESS')) return stack;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The stand-in environment and its provider templates, as `openstack stack create -e` sends them. */
async function environmentFiles(): Promise<Record<string, string>> {
  const files: Record<string, string> = { 'env-1-nova-neutron-standins.yaml': await readFile(STANDINS, 'utf8') };
  const dir = join(dirname(STANDINS), 'standins');
  for (const f of await readdir(dir)) files[`standins/${f}`] = await readFile(join(dir, f), 'utf8');
  return files;
}

/** The stack as Tacker v2 creates it for instance `id` (heat_utils.get_stack_name: vnf-<id>), VDU1 at `vdu1` members. */
async function createAsTackerV2(id: string, vdu1: number): Promise<{ id: string; name: string }> {
  const base = join(SAMPLE, 'package/BaseHOT/simple');
  const nfv = {
    VDU: {
      VDU1: { computeFlavourId: 'm1.tiny', vcImageId: 'cirros-0.5.2', desired_capacity: vdu1 },
      VDU2: { computeFlavourId: 'm1.tiny', vcImageId: 'cirros-0.5.2', desired_capacity: 1 },
    },
    CP: { VDU1_CP1: { network: 'net-public-1' }, VDU2_CP1: { network: 'net-public-1' } },
  };
  const name = `vnf-${id}`;
  const made = await heat('POST', '/stacks', {
    stack_name: name,
    disable_rollback: true,
    template: yaml.load(await readFile(join(base, 'heat_vnf.yaml'), 'utf8'), { schema: yaml.JSON_SCHEMA }),
    files: { 'VDU1.yaml': await readFile(join(base, 'nested/VDU1.yaml'), 'utf8'), ...(await environmentFiles()) },
    environment_files: ['env-1-nova-neutron-standins.yaml'],
    parameters: { nfv },
  });
  if (made.status !== 201) throw new Error(`create stack ${name}: HTTP ${made.status}: ${JSON.stringify(made.json)}`);
  const stack = await settled(name);
  expect(stack.stack_status).toBe('CREATE_COMPLETE');
  return { id: stack.id, name };
}

/** The physical ids of the stack's servers (at any depth). */
async function serverIds(stack: { id: string; name: string }): Promise<string[]> {
  const got = await heat('GET', `/stacks/${stack.name}/${stack.id}/resources?nested_depth=4`);
  const resources = got.json['resources'] as { resource_type: string; physical_resource_id: string }[];
  return resources
    .filter((r) => r.resource_type === 'OS::Nova::Server')
    .map((r) => r.physical_resource_id)
    .sort();
}

/** Tacker v2's VnfInstance of an OpenStack VNF (GET /vnflcm/v2/vnf_instances/ID). */
function tackerV2Instance(id: string, stackId: string, level: number): Record<string, unknown> {
  return {
    id,
    vnfInstanceName: `hv-${id.slice(0, 4)}`,
    vnfInstanceDescription: 'heat-vnf, instantiated by Tacker',
    vnfdId: VNFD_ID,
    vnfProvider: 'vnfm',
    vnfProductName: 'heat-vnf',
    vnfSoftwareVersion: '1.0',
    vnfdVersion: '1.0',
    vimConnectionInfo: { vim1: { vimId: TACKER_VIM_ID, vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3', interfaceInfo: { endpoint: 'http://127.0.0.1/identity/v3' }, accessInfo: {} } },
    instantiationState: 'INSTANTIATED',
    instantiatedVnfInfo: {
      flavourId: 'simple',
      vnfState: 'STARTED',
      scaleStatus: [{ aspectId: 'vdu1_aspect', scaleLevel: level }],
      maxScaleLevels: [{ aspectId: 'vdu1_aspect', scaleLevel: 2 }],
      vnfcResourceInfo: [],
      metadata: { stack_id: stackId },
    },
    _links: {},
  };
}

beforeAll(async () => {
  os = await useOpenStack();
  home = newHome();
  work = dirname(home);
  const vimConfig = join(work, 'vim.yaml');
  await writeFile(vimConfig, openStackVimConfig(os.keystone));
  await ok(['vim-register', '--config-file', vimConfig, 'os1']);
  await ok(['vnfpkg-build', join(SAMPLE, 'package'), '-o', join(work, 'heat-vnf.zip')]);
  await ok(['vnfpkg-onboard', join(work, 'heat-vnf.zip')]);
}, LONG);

afterAll(async () => {
  await os?.stop();
});

describe('vnf-adopt of a Heat VNF Tacker v2 instantiated', () => {
  it(
    'refuses a stack in UPDATE_FAILED and a wrong scale level (nothing recorded), adopts a complete one (no server replaced), then scales it out and terminates it',
    async () => {
      const id = randomUUID();
      const broken = randomUUID();
      const [stack, other] = await Promise.all([createAsTackerV2(id, 1), createAsTackerV2(broken, 1)]);
      // The other stack updated as Tacker would, and failing: VDU2's server fails (a copy of the stand-in whose TestResource fails).
      const failing = (await readFile(join(dirname(STANDINS), 'standins/server.yaml'), 'utf8')).replace(
        '      value: {get_param: name}\n',
        '      value: {get_param: name}\n      fail: true\n',
      );
      const patched = await heat('PATCH', `/stacks/${other.name}/${other.id}`, {
        files: { 'failing/server.yaml': failing },
        environment: { resource_registry: { resources: { VDU2: { 'OS::Nova::Server': 'failing/server.yaml' } } } },
      });
      expect(patched.status).toBe(202);
      expect((await settled(other.name)).stack_status).toBe('UPDATE_FAILED');

      const brokenFile = join(work, 'broken.json');
      await writeFile(brokenFile, JSON.stringify(tackerV2Instance(broken, other.id, 0)));
      const refused = await run(['vnf-adopt', '--from-tacker', brokenFile, '--vim', 'os1']);
      expect(refused.code).toBe(4);
      expect(refused.stderr).toContain(`Heat stack vnf-${broken}: UPDATE_FAILED`);
      expect(refused.stderr).toContain('nothing was recorded');

      // Tacker v1 records the stack's id alone (instantiatedVnfInfo.instanceId): found by id, its other name and its state named.
      const v1 = randomUUID();
      const v1File = join(work, 'v1.json');
      await writeFile(
        v1File,
        JSON.stringify({
          ID: v1,
          'VNFD ID': VNFD_ID,
          'Instantiation State': 'INSTANTIATED',
          'VIM Connection Info': [{ id: 'c1', vimId: TACKER_VIM_ID, vimType: 'openstack', interfaceInfo: {}, accessInfo: {} }],
          'Instantiated Vnf Info': { flavourId: 'simple', instanceId: other.id, scaleStatus: [{ aspectId: 'vdu1_aspect', scaleLevel: 0 }], additionalParams: {} },
          vnfPkgId: randomUUID(),
        }),
      );
      const byId = await run(['vnf-adopt', '--from-tacker', v1File, '--vim', 'os1']);
      expect(byId.code).toBe(4);
      expect(byId.stderr).toContain(`Heat stack vnf-${broken} (${other.id}): vnfm keeps a VNF's stack under the name Tacker v2 gives it, vnf-${v1}`);
      expect(byId.stderr).toContain(`Heat stack vnf-${broken}: UPDATE_FAILED`);

      const wrongLevel = join(work, 'wrong-level.json');
      await writeFile(wrongLevel, JSON.stringify(tackerV2Instance(id, stack.id, 1)));
      const wrong = await run(['vnf-adopt', '--from-tacker', wrongLevel, '--vim', 'os1']);
      expect(wrong.code).toBe(4);
      expect(wrong.stderr).toContain(`Heat stack vnf-${id}: nfv.VDU.VDU1.desired_capacity is 1; Tacker's scale level 1 of vdu1_aspect gives 2`);
      expect(JSON.parse(await ok(['vnf-list', '-o', 'json']))).toEqual([]);

      const before = await serverIds(stack);
      expect(before).toHaveLength(2);
      const file = join(work, 'hv.json');
      await writeFile(file, JSON.stringify(tackerV2Instance(id, stack.id, 0)));
      const dry = JSON.parse(await ok(['vnf-adopt', '--from-tacker', file, '--vim', 'os1', '--dry-run', '-o', 'json'])) as Record<string, unknown>[];
      expect(dry[0]).toMatchObject({ vnfInstanceId: id, dryRun: true, stack: { name: `vnf-${id}`, id: stack.id, status: 'CREATE_COMPLETE' } });
      expect((dry[0]!['vnfcs'] as string[]).length).toBe(2);

      const adopted = JSON.parse(await ok(['vnf-adopt', '--from-tacker', file, '--vim', 'os1', '-o', 'json'])) as Record<string, unknown>[];
      expect(adopted[0]).toMatchObject({ vnfInstanceId: id, instantiationState: 'INSTANTIATED', operationState: 'COMPLETED', tacker: { api: 'v2' } });
      expect(await serverIds(stack)).toEqual(before);
      expect((await settled(stack.name)).stack_status).toBe('CREATE_COMPLETE');
      const shown = JSON.parse(await ok(['vnf-show', id, '-o', 'json'])) as {
        instantiatedVnfInfo: {
          scaleStatus: unknown[];
          vnfcInfo: { vduId: string }[];
          vnfcResourceInfo: { computeResource: { resourceId: string } }[];
          metadata: { vduReplicas: Record<string, number>; heat: { stackName: string; nfv: { VDU: Record<string, { desired_capacity?: number }> } } };
        };
      };
      const info = shown.instantiatedVnfInfo;
      expect(info.scaleStatus).toEqual([{ aspectId: 'vdu1_aspect', scaleLevel: 0 }]);
      expect(info.vnfcInfo.map((v) => v.vduId).sort()).toEqual(['VDU1', 'VDU2']);
      expect(info.vnfcResourceInfo.map((r) => r.computeResource.resourceId).sort()).toEqual(before);
      expect(info.metadata.vduReplicas).toEqual({ VDU1: 1, VDU2: 1 });
      expect(info.metadata.heat.stackName).toBe(`vnf-${id}`);
      expect(info.metadata.heat.nfv.VDU['VDU1']?.desired_capacity).toBe(1);
      expect(await ok(['op-list', '--vnf', id])).toMatch(/ADOPT\s+COMPLETED/);

      // vnfm's scale: a stack update like any other, the adopted server kept.
      await ok(['vnf-scale', id, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']);
      const scaled = await serverIds(stack);
      expect(scaled).toHaveLength(3);
      expect(scaled).toEqual(expect.arrayContaining(before));
      expect((await settled(stack.name)).stack_status).toBe('UPDATE_COMPLETE');
      const after = JSON.parse(await ok(['vnf-show', id, '-o', 'json'])) as typeof shown;
      expect(after.instantiatedVnfInfo.scaleStatus).toEqual([{ aspectId: 'vdu1_aspect', scaleLevel: 1 }]);
      expect(after.instantiatedVnfInfo.vnfcInfo.filter((v) => v.vduId === 'VDU1')).toHaveLength(2);

      await ok(['vnf-terminate', id, '--termination-type', 'FORCEFUL', '--yes']);
      expect((await heat('GET', `/stacks/${stack.name}`)).status).toBe(404);
      await heat('DELETE', `/stacks/${other.name}/${other.id}`);
    },
    LONG,
  );
});
