/**
 * What a real cloud says back when it cannot do what the stack asks: the
 * heat-vnf sample instantiated into a project whose instance quota is too
 * small, with a flavor no compute host can hold, with its external port on
 * a network that does not exist, and with an image Glance has not yet
 * received the bytes of. Each ends in a FAILED_TEMP operation whose error
 * carries the reason Nova, Neutron or Glance gave (through Heat) and names
 * op-retry and op-rollback; a rollback leaves nothing of the stack, and the
 * quota case completes on op-retry once the quota is raised.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, okStdoutWith, vnfm } from '../support/cli.js';
import { openStackVimConfig } from '../support/heat.js';
import type { KeystoneInfo } from '../support/keystone.js';
import { packageVariant } from '../support/package-variant.js';
import { CloudClient, createTenant, emptyQcow2, useRealOpenStack } from '../support/real-openstack-client.js';
import type { RealOpenStackInfo } from '../support/real-openstack.js';

const SAMPLE = resolve('csar-samples/heat-vnf');
const VNFD_ID = '72c3c844-4146-4e33-a2ab-fe1fbd9927fc';
const HUGE_VNFD_ID = '72c3c844-4146-4e33-a2ab-fe1fbd99f001';
const QUEUED_VNFD_ID = '72c3c844-4146-4e33-a2ab-fe1fbd99f002';
const FLAVOR = 'm1.tiny';
const IMAGE = 'cirros-0.5.2-x86_64-disk';
const HUGE_FLAVOR = 'vnfm.larger-than-the-host';
const QUEUED_IMAGE = 'vnfm-image-still-uploading';
const SETUP = 30 * 60_000;
const CASE = 15 * 60_000;

let cloud: RealOpenStackInfo;
let tenant: KeystoneInfo;
let user: CloudClient;
let admin: CloudClient;
let home: string;
let work: string;
let extNet: string;

const run = (args: string[]) => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okStdoutWith(run);

interface Op {
  id: string;
  operation: string;
  operationState: string;
  error?: { status: number; title: string; detail: string };
}

/** The project's Heat stacks (deleted ones are not listed). */
async function stacks(): Promise<Array<{ stack_name: string; stack_status: string }>> {
  const base = cloud.endpoints.orchestration.replace('%(tenant_id)s', tenant.projectId);
  return (await user.call<{ stacks: Array<{ stack_name: string; stack_status: string }> }>(base, 'GET', '/stacks')).stacks;
}

async function setInstanceQuota(instances: number): Promise<void> {
  await admin.call(cloud.endpoints.compute, 'PUT', `/os-quota-sets/${tenant.projectId}`, { quota_set: { instances } });
}

/** Instantiates a new instance of `vnfdId` with `request`; expects the CLI to fail (exit 1) and returns the FAILED_TEMP occurrence. */
async function failedInstantiate(name: string, vnfdId: string, request: string): Promise<{ vnf: string; op: Op; stderr: string }> {
  const vnf = JSON.parse(await ok(['vnf-create', '--package', vnfdId, '--name', name, '-o', 'json'])).id as string;
  const r = await run(['vnf-instantiate', vnf, '--request-file', request]);
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).toMatch(/FAILED_TEMP/);
  const ops = JSON.parse(await ok(['op-list', '--vnf', vnf, '-o', 'json'])) as Op[];
  expect(ops).toHaveLength(1);
  const op = JSON.parse(await ok(['op-show', ops[0]!.id, '-o', 'json'])) as Op;
  expect(op).toMatchObject({ operation: 'INSTANTIATE', operationState: 'FAILED_TEMP' });
  // The way on: the occurrence's error says what op-retry and op-rollback do with the stack, the command names them with its id.
  expect(op.error!.detail).toMatch(/\(hint: .*op-retry .*op-rollback/);
  expect(r.stderr).toContain(`vnfm op-retry ${op.id}`);
  expect(r.stderr).toContain(`vnfm op-rollback ${op.id}`);
  return { vnf, op, stderr: r.stderr };
}

/** After op-rollback: the instance is NOT_INSTANTIATED and the project has no stack, server or port, only the network the test made. */
async function expectRolledBack(vnf: string, op: Op): Promise<void> {
  await ok(['op-rollback', op.id]);
  expect((JSON.parse(await ok(['op-show', op.id, '-o', 'json'])) as Op).operationState).toBe('ROLLED_BACK');
  expect((JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])) as { instantiationState: string }).instantiationState).toBe('NOT_INSTANTIATED');
  expect(await stacks()).toEqual([]);
  expect(await user.servers()).toEqual([]);
  expect(await user.ports()).toEqual([]);
  expect((await user.networks()).map((n) => n.id)).toEqual([extNet]);
}

beforeAll(async () => {
  cloud = await useRealOpenStack();
  tenant = await createTenant(cloud, `faults-${randomBytes(3).toString('hex')}`);
  user = CloudClient.of(cloud, tenant);
  admin = CloudClient.admin(cloud);
  await admin.ensureFlavor(FLAVOR, { vcpus: 1, ramMiB: 512, diskGiB: 1 });
  // A flavor whose root disk is larger than the only compute host's (disk is not one of Nova's quotas: the scheduler refuses it).
  const hostDiskGiB = await admin.computeDiskGiB();
  await admin.ensureFlavor(HUGE_FLAVOR, { vcpus: 1, ramMiB: 512, diskGiB: hostDiskGiB + 1 });
  await user.createImage(IMAGE, emptyQcow2(64), { disk: 'qcow2', container: 'bare' });
  // Created, its bytes never sent: Glance keeps it `queued`.
  await user.call(cloud.endpoints.image, 'POST', '/v2/images', { name: QUEUED_IMAGE, disk_format: 'qcow2', container_format: 'bare', visibility: 'private' });
  extNet = await user.createNetwork('ext-net', '10.40.0.0/24');

  home = newHome();
  work = dirname(home);
  await writeFile(join(work, 'vim.yaml'), openStackVimConfig(tenant));
  await ok(['vim-register', '--config-file', join(work, 'vim.yaml'), '--is-default', 'real-os']);
  await ok(['vnfpkg-build', join(SAMPLE, 'package'), '-o', join(work, 'heat-vnf.zip')]);
  await ok(['vnfpkg-onboard', join(work, 'heat-vnf.zip')]);
  const variants: Array<[string, string, [string, string]]> = [
    ['huge', HUGE_VNFD_ID, [FLAVOR, HUGE_FLAVOR]],
    ['queued', QUEUED_VNFD_ID, [IMAGE, QUEUED_IMAGE]],
  ];
  for (const [name, vnfdId, replace] of variants) {
    const dir = packageVariant(join(SAMPLE, 'package'), { fromVnfdId: VNFD_ID, vnfdId, replace: [replace] });
    await ok(['vnfpkg-build', dir, '-o', join(work, `${name}.zip`)]);
    await ok(['vnfpkg-onboard', join(work, `${name}.zip`)]);
    await rm(dirname(dir), { recursive: true, force: true });
  }
  const request = await readFile(join(SAMPLE, 'requests/instantiate.json'), 'utf8');
  await writeFile(join(work, 'instantiate.json'), request.replace('REPLACE-WITH-EXTERNAL-NETWORK-ID', extNet));
  // A network id of the right form that Neutron does not have.
  await writeFile(join(work, 'no-network.json'), request.replace('REPLACE-WITH-EXTERNAL-NETWORK-ID', '6a1d4f0e-0000-4000-8000-00000000dead'));
}, SETUP);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('what a real OpenStack says back: FAILED_TEMP with the service’s own reason', () => {
  it(
    "quota exceeded: Nova's reason; op-retry after the quota is raised completes with both servers; terminate leaves nothing",
    async () => {
      // The sample makes two servers (VDU1 in its group, VDU2): the project may have one.
      await setInstanceQuota(1);
      let failed: Awaited<ReturnType<typeof failedInstantiate>>;
      try {
        failed = await failedInstantiate('quota', VNFD_ID, join(work, 'instantiate.json'));
      } finally {
        await setInstanceQuota(10);
      }
      const { vnf, op } = failed;
      expect(op.error!.detail).toMatch(/ended CREATE_FAILED: .*Quota exceeded for instances: Requested 1, but already used 1 of 1 instances/);
      expect(op.error!.detail).toMatch(/hint: raise the project's quota at the VIM/);
      expect((await stacks()).map((s) => s.stack_status)).toEqual(['CREATE_FAILED']);

      // The quota raised above: the retry updates the failed stack and Nova makes the missing server.
      await ok(['op-retry', op.id]);
      expect((JSON.parse(await ok(['op-show', op.id, '-o', 'json'])) as Op).operationState).toBe('COMPLETED');
      const servers = await user.servers();
      expect(servers.map((s) => [s.name, s.status]).sort()).toEqual([
        ['VDU1', 'ACTIVE'],
        ['VDU2', 'ACTIVE'],
      ]);
      expect((await stacks()).map((s) => s.stack_status)).toEqual(['UPDATE_COMPLETE']);

      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
      expect(await stacks()).toEqual([]);
      expect(await user.servers()).toEqual([]);
      expect(await user.ports()).toEqual([]);
    },
    CASE,
  );

  it(
    "no valid host (a flavor larger than the compute host): the scheduler's reason as Nova gives it; op-rollback leaves nothing",
    async () => {
      const { vnf, op } = await failedInstantiate('no-host', HUGE_VNFD_ID, join(work, 'instantiate.json'));
      expect(op.error!.detail).toMatch(/ended CREATE_FAILED: .*Went to status ERROR due to "Message: No valid host was found/);
      expect(op.error!.detail).toMatch(/hint: no compute host of the VIM has room for a server of this flavour/);
      expect((await stacks()).map((s) => s.stack_status)).toEqual(['CREATE_FAILED']);
      await expectRolledBack(vnf, op);
    },
    CASE,
  );

  it(
    'a port on a network that does not exist: Neutron has no such network, nothing was created; op-rollback leaves nothing',
    async () => {
      const { vnf, op } = await failedInstantiate('no-net', VNFD_ID, join(work, 'no-network.json'));
      // Heat looks the network up in Neutron before it creates anything, and says which port's network it is.
      expect(op.error!.detail).toMatch(
        /^Heat refused the stack: the VIM lacks a network the request or the package names: .*VDU2_CP1\.properties\.network: .*Unable to find network with name or id '6a1d4f0e-0000-4000-8000-00000000dead'/,
      );
      expect(op.error!.detail).toMatch(/hint: create the network at the VIM, .*nothing was created/);
      expect(await stacks()).toEqual([]);
      await expectRolledBack(vnf, op);
    },
    CASE,
  );

  it(
    'an image still uploading (queued in Glance): its status named, nothing was created; op-rollback leaves nothing',
    async () => {
      const { vnf, op } = await failedInstantiate('queued', QUEUED_VNFD_ID, join(work, 'instantiate.json'));
      // Heat checks each server's image while it validates the stack: VDU2's, or VDU1's in the group's nested template, whichever comes first.
      expect(op.error!.detail).toMatch(/^Heat refused the stack: the VIM lacks an active image: .*Image status is required to be active not queued/);
      expect(op.error!.detail).toMatch(/hint: an image the stack names is not active in Glance .*nothing was created/);
      expect(await stacks()).toEqual([]);
      await expectRolledBack(vnf, op);
    },
    CASE,
  );
});
