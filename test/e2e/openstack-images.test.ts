/**
 * A Heat package that carries its software image (the heat-vnf sample with
 * Files/images/ and the image artifacts on VDU1 and VDU2), through the real
 * program on a real Keystone, Heat and Glance (test/support/keystone.ts,
 * heat.ts, glance.ts): instantiate uploads the image to Glance once, private
 * and tagged with the instance, before the stack, and the servers boot from
 * its id; terminate deletes it after the stack. An instantiate whose stack
 * fails leaves the image for its retry, which uses it again; the rollback
 * deletes it. Every fact is read from Glance and Heat, not from vnfm.
 */
import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, okStdoutWith, vnfm, type RunResult } from '../support/cli.js';
import { startGlance, type GlanceServer } from '../support/glance.js';
import { openStackVimConfig, projectToken, startHeat, type HeatServer } from '../support/heat.js';
import { startKeystone, type KeystoneServer } from '../support/keystone.js';

const SAMPLE = resolve('csar-samples/heat-vnf');
const STANDINS = resolve('test/fixtures/heat/env/nova-neutron-standins.yaml');
const VNFD_ID = '72c3c844-4146-4e33-a2ab-fe1fbd9927fc';
const IMAGE = randomBytes(2 * 1024 * 1024 + 5);
const IMAGE_NAME = 'cirros-0.5.2-x86_64-disk';
const LONG = 480_000;

let keystone: KeystoneServer;
let heatServer: HeatServer | undefined;
let glance: GlanceServer | undefined;
let home: string;
let work: string;

const run = (args: string[]): Promise<RunResult> => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okStdoutWith((args) => run(args));
const sha512 = (b: Buffer) => createHash('sha512').update(b).digest('hex');

async function get<T>(url: string): Promise<{ status: number; body: T }> {
  const res = await fetch(url, { headers: { 'x-auth-token': await projectToken(keystone) } });
  return { status: res.status, body: (res.status === 200 ? await res.json() : undefined) as T };
}

/** The Glance images tagged with the instance id, as the test user sees them. */
async function imagesOf(vnf: string): Promise<Array<Record<string, unknown>>> {
  return (await get<{ images: Array<Record<string, unknown>> }>(`${glance!.url}/v2/images?tag=${vnf}`)).body.images;
}

/** What each server of the stack boots from, as its stand-in shows it (Nova's server show). */
async function serverImages(vnf: string): Promise<string[]> {
  const { body } = await get<{ resources: Array<{ resource_name: string; resource_type: string; links: Array<{ rel: string; href: string }> }> }>(
    `${heatServer!.url}/stacks/vnf-${vnf}/resources?nested_depth=2`,
  );
  const servers = body.resources.filter((r) => r.resource_type === 'OS::Nova::Server');
  const shown = await Promise.all(
    servers.map(
      async (s) => (await get<{ output: { output_value: { image: { id: string } } } }>(`${s.links.find((l) => l.rel === 'nested')!.href}/outputs/show`)).body.output.output_value,
    ),
  );
  return shown.map((s) => s.image.id);
}

beforeAll(async () => {
  keystone = await startKeystone();
  // One after the other: both seed the `service` project of the same Keystone.
  heatServer = await startHeat(keystone);
  glance = await startGlance(keystone);
  home = newHome();
  work = dirname(home);
  await writeFile(join(work, 'vim.yaml'), openStackVimConfig(keystone));
  await ok(['vim-register', '--config-file', join(work, 'vim.yaml'), '--is-default', 'os1']);

  // The sample, carrying VDU1's and VDU2's image (one file) with its SHA-512.
  const pkg = join(work, 'package');
  await cp(join(SAMPLE, 'package'), pkg, { recursive: true });
  await mkdir(join(pkg, 'Files/images'), { recursive: true });
  await writeFile(join(pkg, 'Files/images/cirros.qcow2'), IMAGE);
  const df = join(pkg, 'Definitions/heat_vnf_df_simple.yaml');
  const doc = yaml.load(await readFile(df, 'utf8')) as {
    topology_template: { node_templates: Record<string, { properties: Record<string, Record<string, unknown>>; artifacts?: unknown }> };
  };
  for (const vdu of ['VDU1', 'VDU2']) {
    const node = doc.topology_template.node_templates[vdu]!;
    node.properties['sw_image_data']!['checksum'] = { algorithm: 'sha-512', hash: sha512(IMAGE) };
    node.artifacts = { sw_image: { type: 'tosca.artifacts.nfv.SwImage', file: '../Files/images/cirros.qcow2' } };
  }
  await writeFile(df, yaml.dump(doc));
  await ok(['vnfpkg-build', pkg, '-o', join(work, 'heat-vnf.zip')]);
  await ok(['vnfpkg-onboard', join(work, 'heat-vnf.zip')]);

  const request = (await readFile(join(SAMPLE, 'requests/instantiate.json'), 'utf8')).replace('REPLACE-WITH-EXTERNAL-NETWORK-ID', 'net-public-1');
  await writeFile(join(work, 'instantiate.json'), request);
  // VDU2's server fails: a copy of the stand-in whose TestResource fails.
  const server = await readFile(join(dirname(STANDINS), 'standins/server.yaml'), 'utf8');
  await mkdir(join(work, 'failing'), { recursive: true });
  await writeFile(join(work, 'failing/server.yaml'), server.replace('      value: {get_param: name}\n', '      value: {get_param: name}\n      fail: true\n'));
  await writeFile(join(work, 'failing.yaml'), 'resource_registry:\n  resources:\n    VDU2:\n      OS::Nova::Server: failing/server.yaml\n');
}, LONG);

afterAll(async () => {
  await heatServer?.stop();
  await glance?.stop();
  await keystone?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

const newInstance = async (name: string) => JSON.parse(await ok(['vnf-create', '--package', VNFD_ID, '--name', name, '-o', 'json'])).id as string;

describe('software images of a Heat package in Glance', () => {
  it(
    'instantiate uploads the image once and the servers boot from its id; terminate deletes it after the stack',
    async () => {
      const vnf = await newInstance('imaged');
      const inst = await run(['vnf-instantiate', vnf, '--request-file', join(work, 'instantiate.json'), '--heat-environment', STANDINS, '-o', 'json']);
      expect(inst.code, inst.stderr).toBe(0);
      expect(JSON.parse(inst.stdout).operationState).toBe('COMPLETED');

      const images = await imagesOf(vnf);
      expect(images).toHaveLength(1);
      const image = images[0]!;
      expect(image).toMatchObject({
        name: IMAGE_NAME,
        status: 'active',
        visibility: 'private',
        disk_format: 'qcow2',
        container_format: 'bare',
        min_disk: 1,
        min_ram: 256,
        size: IMAGE.length,
        os_hash_value: sha512(IMAGE),
        tags: [vnf],
      });
      const data = await fetch(`${glance!.url}/v2/images/${image['id']}/file`, { headers: { 'x-auth-token': await projectToken(keystone) } });
      expect(Buffer.from(await data.arrayBuffer()).equals(IMAGE)).toBe(true);

      // Both VDUs' servers boot from the uploaded image, by id (vcImageId), and the instance records it.
      expect(await serverImages(vnf)).toEqual([image['id'], image['id']]);
      const shown = JSON.parse(await ok(['vnf-show', vnf, '-o', 'json']));
      expect(shown.instantiatedVnfInfo.metadata.heat.nfv.VDU.VDU1.vcImageId).toBe(image['id']);

      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
      expect((await get(`${heatServer!.url}/stacks/vnf-${vnf}`)).status).toBe(404);
      expect(await imagesOf(vnf)).toEqual([]);
      expect((await get(`${glance!.url}/v2/images/${image['id']}`)).status).toBe(404);
    },
    LONG,
  );

  it(
    'a stack that fails keeps its image for the retry, which uses it again; the rollback deletes it',
    async () => {
      const vnf = await newInstance('failing');
      const args = ['vnf-instantiate', vnf, '--request-file', join(work, 'instantiate.json'), '--heat-environment', STANDINS, '--heat-environment', join(work, 'failing.yaml')];
      const first = await run(args);
      expect(first.code).toBe(1);
      expect(first.stderr).toMatch(/FAILED_TEMP/);
      const uploaded = await imagesOf(vnf);
      expect(uploaded.map((i) => [i['name'], i['status']])).toEqual([[IMAGE_NAME, 'active']]);

      const op = (JSON.parse(await ok(['op-list', '--vnf', vnf, '--state', 'FAILED_TEMP', '-o', 'json'])) as Array<{ id: string }>)[0]!;
      const retried = await run(['op-retry', op.id]);
      expect(retried.code).toBe(1);
      expect((await imagesOf(vnf)).map((i) => i['id'])).toEqual([uploaded[0]!['id']]);

      await ok(['op-rollback', op.id]);
      expect(await imagesOf(vnf)).toEqual([]);
      expect((await get(`${heatServer!.url}/stacks/vnf-${vnf}`)).status).toBe(404);
      expect(JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])).instantiationState).toBe('NOT_INSTANTIATED');
    },
    LONG,
  );
});
