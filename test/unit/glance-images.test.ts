/**
 * The Glance seam (infra/openstack/glance.ts) and an instance's images
 * (images.ts) against a real Glance on a real Keystone (test/support/
 * glance.ts, keystone.ts): an image created private and tagged with the
 * instance, its bytes streamed and stored as sent, its checksum compared
 * with Glance's; used again on a retry, what an interrupted attempt left
 * replaced, an image that is not the package's deleted at once; at the end
 * only vnfm's images of the instance deleted. Every fact is read back from
 * Glance over its own API.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriverContext, JournalStep } from '../../src/infra/driver.js';
import type { OpenStackPackageImage } from '../../src/infra/openstack/driver-contract.js';
import { createGlanceSession } from '../../src/infra/openstack/glance.js';
import { createImageService } from '../../src/infra/openstack/images.js';
import type { KeystoneCredentials } from '../../src/infra/openstack/keystone.js';
import { startGlance, type GlanceServer } from '../support/glance.js';
import { projectToken } from '../support/heat.js';
import { startKeystone, type KeystoneServer } from '../support/keystone.js';

let keystone: KeystoneServer;
let glance: GlanceServer | undefined;
let creds: KeystoneCredentials;

const INSTANCE = 'b0e5d6a1-2f3c-4d8e-9a7b-1c2d3e4f5a6b';
const OTHER_INSTANCE = 'c1f6e7b2-3a4d-4e9f-8b8c-2d3e4f5a6b7c';
const DISK = randomBytes(3 * 1024 * 1024 + 17);
const DATA_DISK = randomBytes(200_000);
const sha512 = (b: Buffer | string) => createHash('sha512').update(b).digest('hex');

const noWait = { sleep: async () => {}, poll: { min: 1, max: 1 } };

function context(): DriverContext & { steps: JournalStep[]; said: string[] } {
  const steps: JournalStep[] = [];
  const said: string[] = [];
  return {
    steps,
    said,
    journal: { record: (s) => steps.push(s), steps: () => steps },
    report: (e) => said.push(`${e.resource?.name ?? ''}: ${e.message}`),
    signal: new AbortController().signal,
  };
}

function packageImage(data: Buffer, over: Partial<OpenStackPackageImage> = {}): OpenStackPackageImage {
  return {
    nodes: ['VDU1'],
    name: 'app-disk-2.1',
    diskFormat: 'qcow2',
    containerFormat: 'bare',
    minDisk: 1,
    minRam: 256,
    file: 'Files/images/app-disk.qcow2',
    size: data.length,
    checksum: { algorithm: 'sha512', hash: sha512(data) },
    key: `sha512:${sha512(data)}|qcow2|bare`,
    // In 64 KiB chunks, as a zip member streams.
    open: async () => Readable.from(Array.from({ length: Math.ceil(data.length / 65536) }, (_, i) => data.subarray(i * 65536, (i + 1) * 65536))),
    ...over,
  };
}

/** Glance's own answer, as the test user. */
async function glanceGet(path: string): Promise<Response> {
  return fetch(`${glance!.url}${path}`, { headers: { 'x-auth-token': await projectToken(keystone) } });
}
async function glanceJson<T>(path: string): Promise<T> {
  const res = await glanceGet(path);
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}
const tagged = async (tag: string) => (await glanceJson<{ images: Array<Record<string, unknown>> }>(`/v2/images?tag=${tag}`)).images;

/** An image made behind vnfm's back, as the test user: queued (no data). */
async function createRaw(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${glance!.url}/v2/images`, {
    method: 'POST',
    headers: { 'x-auth-token': await projectToken(keystone), 'content-type': 'application/json' },
    body: JSON.stringify({ disk_format: 'raw', container_format: 'bare', visibility: 'private', ...body }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

beforeAll(async () => {
  keystone = await startKeystone();
  creds = {
    authUrl: keystone.url,
    auth: {
      method: 'password',
      username: keystone.user.name,
      password: keystone.user.password,
      projectName: keystone.project,
      userDomainName: 'Default',
      projectDomainName: 'Default',
    },
    verifyTls: true,
    regionName: keystone.region,
  };
}, 120_000);

afterAll(async () => {
  await glance?.stop();
  await keystone?.stop();
});

describe('software images in Glance', () => {
  it('a catalog without an image service: not available, and nothing to remove', async () => {
    const service = createImageService(createGlanceSession(creds, { region: keystone.region }), noWait);
    expect(await service.available(new AbortController().signal)).toBe(false);
    expect(await service.removeAll(context(), INSTANCE)).toBe(0);
    await expect(createGlanceSession(creds, { region: keystone.region }).listImages(['x'])).rejects.toThrow(
      /catalog has no public image \(Glance\) endpoint in region "RegionOne"/,
    );
  });

  it('uploads each image once, private and tagged with the instance, and Glance holds exactly the bytes streamed', async () => {
    glance = await startGlance(keystone);
    const service = createImageService(createGlanceSession(creds, { region: keystone.region }), noWait);
    expect(await service.available(new AbortController().signal)).toBe(true);
    const ctx = context();
    const ids = await service.upload(ctx, {
      instanceId: INSTANCE,
      packageId: 'pkg-1',
      images: [
        packageImage(DISK, { nodes: ['VDU1', 'VDU2'] }),
        packageImage(DATA_DISK, { nodes: ['VirtualStorage'], name: 'db-data-1.0', file: 'Files/images/db.raw', diskFormat: 'raw', minDisk: 2, minRam: 0 }),
      ],
    });
    expect(ids.VDU1).toBe(ids.VDU2);
    expect(ids.VirtualStorage).not.toBe(ids.VDU1);

    const app = await glanceJson<Record<string, unknown>>(`/v2/images/${ids.VDU1}`);
    expect(app).toMatchObject({
      name: 'app-disk-2.1',
      status: 'active',
      visibility: 'private',
      disk_format: 'qcow2',
      container_format: 'bare',
      min_disk: 1,
      min_ram: 256,
      size: DISK.length,
      os_hash_algo: 'sha512',
      os_hash_value: sha512(DISK),
      tags: [INSTANCE],
      vnfm_image_key: `sha512:${sha512(DISK)}|qcow2|bare`,
      vnfm_package_id: 'pkg-1',
      vnfm_file: 'Files/images/app-disk.qcow2',
    });
    const stored = Buffer.from(await (await glanceGet(`/v2/images/${ids.VDU1}/file`)).arrayBuffer());
    expect(stored.equals(DISK)).toBe(true);
    expect(await glanceJson<Record<string, unknown>>(`/v2/images/${ids.VirtualStorage}`)).toMatchObject({
      status: 'active',
      min_disk: 2,
      disk_format: 'raw',
      os_hash_value: sha512(DATA_DISK),
    });
    expect(ctx.steps.filter((s) => s.state === 'done').map((s) => [s.action, s.resource.name, s.detail])).toEqual([
      ['create', 'app-disk-2.1', ids.VDU1],
      ['create', 'db-data-1.0', ids.VirtualStorage],
    ]);
  });

  it('a retry uses the active image again, and replaces what an interrupted attempt left queued', async () => {
    const service = createImageService(createGlanceSession(creds, { region: keystone.region }), noWait);
    const before = await tagged(INSTANCE);
    const leftKey = 'sha512:left-by-a-killed-attempt|raw|bare';
    const left = await createRaw({ name: 'half', tags: [INSTANCE], vnfm_image_key: leftKey });
    const ctx = context();
    const ids = await service.upload(ctx, {
      instanceId: INSTANCE,
      packageId: 'pkg-1',
      images: [packageImage(DISK, { nodes: ['VDU1'] }), packageImage(DATA_DISK, { nodes: ['Other'], name: 'half', key: leftKey, checksum: undefined, diskFormat: 'raw' })],
    });
    const app = before.find((i) => i['name'] === 'app-disk-2.1')!;
    expect(ids.VDU1).toBe(app['id']);
    expect((await glanceGet(`/v2/images/${left}`)).status).toBe(404);
    expect(await glanceJson<Record<string, unknown>>(`/v2/images/${ids.Other}`)).toMatchObject({ status: 'active', os_hash_value: sha512(DATA_DISK) });
    expect(ctx.said).toContain(`app-disk-2.1: already uploaded for this instance (${app['id']})`);
    expect((await tagged(INSTANCE)).length).toBe(before.length + 1);
  });

  it('an image Glance computes another SHA-512 for than the package declares is deleted at once, and the upload fails', async () => {
    const service = createImageService(createGlanceSession(creds, { region: keystone.region }), noWait);
    const lying = packageImage(DISK, { name: 'lying', checksum: { algorithm: 'sha512', hash: sha512('another image') }, key: 'sha512:lying|qcow2|bare' });
    await expect(service.upload(context(), { instanceId: INSTANCE, packageId: 'pkg-1', images: [lying] })).rejects.toThrow(
      new RegExp(
        `image lying \\([0-9a-f-]+\\) is not the package's Files/images/app-disk.qcow2: Glance computed the sha512 ${sha512(DISK)}, the VNFD declares ${sha512('another image')}`,
      ),
    );
    expect((await tagged(INSTANCE)).filter((i) => i['name'] === 'lying')).toEqual([]);
  });

  it("removeAll deletes vnfm's images of the instance, and neither an image someone else tagged the same nor another instance's", async () => {
    const service = createImageService(createGlanceSession(creds, { region: keystone.region }), noWait);
    const theirs = await createRaw({ name: 'operator-made', tags: [INSTANCE] });
    const otherIds = await service.upload(context(), { instanceId: OTHER_INSTANCE, packageId: 'pkg-1', images: [packageImage(DATA_DISK, { nodes: ['VDU1'], diskFormat: 'raw' })] });
    const mine = (await tagged(INSTANCE)).filter((i) => i['vnfm_image_key'] !== undefined).map((i) => i['id']);
    expect(mine.length).toBe(3);
    const ctx = context();
    expect(await service.removeAll(ctx, INSTANCE)).toBe(3);
    expect((await tagged(INSTANCE)).map((i) => i['id'])).toEqual([theirs]);
    expect((await glanceGet(`/v2/images/${otherIds.VDU1}`)).status).toBe(200);
    expect(
      ctx.steps
        .filter((s) => s.action === 'delete' && s.state === 'done')
        .map((s) => s.detail)
        .sort(),
    ).toEqual([...mine].sort());
    // Nothing left to delete: a second terminate (a retry) finds none.
    expect(await service.removeAll(context(), INSTANCE)).toBe(0);
  });
});
