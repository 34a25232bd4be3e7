/**
 * The heat-vnf sample on a real Keystone and Heat with no VIM registered:
 * the OpenStack VIM given inline in a Tacker v2 request (Keystone endpoint,
 * user, password, project). Every later operation reaches Heat with the
 * credentials kept, sealed, with the instance; a wrong password is refused
 * (exit 6) before anything is recorded.
 */
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, vnfm, type RunResult, okStdoutWith } from '../support/cli.js';
import { projectToken, useOpenStack, type OpenStackServers } from '../support/heat.js';

const SAMPLE = resolve('csar-samples/heat-vnf');
const STANDINS = resolve('test/fixtures/heat/env/nova-neutron-standins.yaml');
const VNFD_ID = '72c3c844-4146-4e33-a2ab-fe1fbd9927fc';
const LONG = 240_000;

let os: OpenStackServers;
let home: string;
let work: string;

const run = (args: string[]): Promise<RunResult> => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okStdoutWith((args) => run(args));

async function stack(instanceId: string): Promise<{ stack_status: string } | undefined> {
  const token = await projectToken(os.keystone);
  const res = await fetch(`${os.heat.url}/stacks/vnf-${instanceId}`, { headers: { 'x-auth-token': token } });
  if (res.status === 404) return undefined;
  return ((await res.json()) as { stack: { stack_status: string } }).stack;
}

/** Every file under VNFM_HOME as text: the password must be in none of them. */
async function homeText(dir = home): Promise<string> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(await homeText(p));
    else if (e.isFile()) out.push((await readFile(p)).toString('latin1'));
  }
  return out.join('\n');
}

async function request(name: string, password: string): Promise<string> {
  const body = JSON.parse((await readFile(join(SAMPLE, 'requests/instantiate.json'), 'utf8')).replace('REPLACE-WITH-EXTERNAL-NETWORK-ID', 'net-public-1')) as Record<
    string,
    unknown
  >;
  body['vimConnectionInfo'] = {
    vim1: {
      vimId: '4d8e2b1c-7a6f-4e3d-9c2b-1a0f9e8d7c6b',
      vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
      interfaceInfo: { endpoint: os.keystone.url },
      accessInfo: { username: os.keystone.user.name, password, region: os.keystone.region, project: os.keystone.project, projectDomain: 'Default', userDomain: 'Default' },
      extra: {},
    },
  };
  const path = join(work, name);
  await writeFile(path, JSON.stringify(body, null, 2));
  return path;
}

beforeAll(async () => {
  os = await useOpenStack();
  home = newHome();
  work = dirname(home);
  await ok(['vnfpkg-build', join(SAMPLE, 'package'), '-o', join(work, 'heat-vnf.zip')]);
  await ok(['vnfpkg-onboard', join(work, 'heat-vnf.zip')]);
}, LONG);

afterAll(async () => {
  await os?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('an OpenStack VIM given inline', () => {
  it(
    'instantiate, scale out and in, terminate: no VIM registered, the password kept only sealed',
    async () => {
      expect(JSON.parse(await ok(['vim-list', '-o', 'json']))).toEqual([]);
      const vnf = JSON.parse(await ok(['vnf-create', '--package', VNFD_ID, '--name', 'inline-os', '-o', 'json'])).id as string;
      await ok(['vnf-instantiate', vnf, await request('instantiate.json', os.keystone.user.password), '--heat-environment', STANDINS]);
      expect((await stack(vnf))?.stack_status).toBe('CREATE_COMPLETE');
      await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']);
      await ok(['vnf-scale', vnf, '--type', 'SCALE_IN', '--aspect-id', 'vdu1_aspect']);
      expect(await homeText()).not.toContain(os.keystone.user.password);
      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
      expect(await stack(vnf)).toBeUndefined();
    },
    LONG,
  );

  it(
    'a wrong password is refused with exit 6 before anything is recorded',
    async () => {
      const vnf = JSON.parse(await ok(['vnf-create', '--package', VNFD_ID, '--name', 'wrong-password', '-o', 'json'])).id as string;
      const r = await run(['vnf-instantiate', vnf, await request('wrong.json', 'not-the-password'), '--heat-environment', STANDINS]);
      expect(r.code).toBe(6);
      expect(r.stderr).toMatch(/rejected the credentials/);
      expect(r.stderr).not.toContain('not-the-password');
      expect(JSON.parse(await ok(['op-list', '--vnf', vnf, '-o', 'json']))).toEqual([]);
      expect(await stack(vnf)).toBeUndefined();
    },
    LONG,
  );
});
