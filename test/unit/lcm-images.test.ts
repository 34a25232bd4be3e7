/**
 * The OpenStack planner's use of the images service, in process (the
 * onboarded package, the store, the engine; the infra-driver recording what
 * it is asked): the image is streamed from the stored package as onboarded,
 * its Glance id reaches the stack's nfv parameter and the instance's record,
 * and terminate deletes the instance's images after the stack; a driver or a
 * VIM without Glance gives the templates the image's name and says that it
 * must exist. The Glance side itself is tested against a real Glance
 * (glance-images.test.ts, e2e/openstack-images.test.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { onboardPackage } from '../../src/csar/index.js';
import type { OpenStackDeployInput, OpenStackImageService, OpenStackInfraDriver, OpenStackPackageImage } from '../../src/infra/openstack/driver-contract.js';
import { createVnf, getVnf, instantiateVnf, terminateVnf, type LcmDeps } from '../../src/lcm/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import type { Vim } from '../../src/vim/index.js';
import { FakeInfraDriver } from '../support/fake-infra-driver.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/heat-vnf');
const IMAGE = randomBytes(300_000);
const sha512 = (b: Buffer) => createHash('sha512').update(b).digest('hex');

const vim: Vim = {
  id: 'vim-os',
  name: 'openstack',
  description: '',
  isDefault: true,
  spec: { type: 'openstack', authUrl: 'http://127.0.0.1:5000/v3', projectName: 'demo', auth: { method: 'password', username: 'u' }, verifyTls: true },
  secretNames: [],
  status: 'REACHABLE',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

let home: string;
let store: Store;
let calls: string[];
let deployed: OpenStackDeployInput[];
let streamed: Array<{ image: Omit<OpenStackPackageImage, 'open'>; sha512: string; bytes: number }>;

/** The heat-vnf sample with VDU1's and VDU2's image in the package. */
function imagePackage(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'vnfm-images-pkg-')), 'package');
  cpSync(join(SAMPLE, 'package'), dir, { recursive: true });
  mkdirSync(join(dir, 'Files/images'), { recursive: true });
  writeFileSync(join(dir, 'Files/images/cirros.qcow2'), IMAGE);
  const df = join(dir, 'Definitions/heat_vnf_df_simple.yaml');
  const doc = yaml.load(readFileSync(df, 'utf8')) as {
    topology_template: { node_templates: Record<string, { properties: Record<string, Record<string, unknown>>; artifacts?: unknown }> };
  };
  for (const vdu of ['VDU1', 'VDU2']) {
    const node = doc.topology_template.node_templates[vdu]!;
    node.properties['sw_image_data']!['checksum'] = { algorithm: 'sha-512', hash: sha512(IMAGE) };
    node.artifacts = { sw_image: { type: 'tosca.artifacts.nfv.SwImage', file: '../Files/images/cirros.qcow2' } };
  }
  writeFileSync(df, yaml.dump(doc));
  return dir;
}

/** An images service that reads each image to its end, as an upload does, and hands out ids. */
const recordingImages = (available: boolean): OpenStackImageService => ({
  available: async () => available,
  upload: async (_ctx, input) => {
    calls.push('upload');
    const ids: Record<string, string> = {};
    for (const { open, ...image } of input.images) {
      const hash = createHash('sha512');
      let bytes = 0;
      for await (const chunk of await open()) {
        hash.update(chunk as Buffer);
        bytes += (chunk as Buffer).length;
      }
      streamed.push({ image, sha512: hash.digest('hex'), bytes });
      for (const node of image.nodes) ids[node] = `glance-${image.name}`;
    }
    return ids;
  },
  removeAll: async () => {
    calls.push('remove images');
    return 1;
  },
});

function depsWith(images: OpenStackImageService | undefined): LcmDeps {
  const driver: OpenStackInfraDriver = {
    deploy: async (_ctx, input) => {
      calls.push('deploy');
      deployed.push(input);
      return [{ apiVersion: 'heat', kind: 'Stack', name: 'vnf' }];
    },
    scale: async () => {},
    heal: async () => {},
    remove: async () => void calls.push('remove stack'),
    changePackage: async () => [],
    listVnfcs: async () => [],
    ...(images ? { images } : {}),
  };
  return {
    store,
    home,
    now: () => new Date(),
    openVimSecrets: async () => ({ password: 'p' }),
    kubernetesDriver: () => new FakeInfraDriver(),
    openstackDriver: () => driver,
  };
}

const request = () => JSON.parse(readFileSync(join(SAMPLE, 'requests/instantiate.json'), 'utf8')) as Record<string, unknown>;

beforeEach(async () => {
  home = join(mkdtempSync(join(tmpdir(), 'vnfm-images-')), 'home');
  store = openStore(home);
  await onboardPackage({ packages: store.packages, home, now: () => new Date() }, { path: imagePackage() });
  await store.vims.insert(vim, undefined);
  calls = [];
  deployed = [];
  streamed = [];
});

afterEach(async () => await store.close());

describe('the images of an OpenStack instantiate', () => {
  it('the image streamed from the stored package once for both VDUs, its id in the stack’s nfv and the record; terminate deletes it after the stack', async () => {
    const deps = depsWith(recordingImages(true));
    const vnf = await createVnf(deps, { vnfdId: (await store.packages.list())[0]!.vnfdId, name: 'vm' });
    await instantiateVnf(deps, vnf.id, request());
    expect(streamed).toEqual([
      {
        image: expect.objectContaining({
          nodes: ['VDU1', 'VDU2'],
          name: 'cirros-0.5.2-x86_64-disk',
          file: 'Files/images/cirros.qcow2',
          size: IMAGE.length,
          minDisk: 1,
          minRam: 256,
        }),
        sha512: sha512(IMAGE),
        bytes: IMAGE.length,
      },
    ]);
    expect(deployed[0]!.nfv.VDU['VDU1']!.vcImageId).toBe('glance-cirros-0.5.2-x86_64-disk');
    expect(deployed[0]!.nfv.VDU['VDU2']!.vcImageId).toBe('glance-cirros-0.5.2-x86_64-disk');
    const heat = ((await getVnf(deps, vnf.id)).instantiatedVnfInfo!.metadata as unknown as { heat: { nfv: { VDU: Record<string, { vcImageId?: string }> } } }).heat;
    expect(heat.nfv.VDU['VDU1']!.vcImageId).toBe('glance-cirros-0.5.2-x86_64-disk');
    await terminateVnf(deps, vnf.id, { terminationType: 'FORCEFUL' });
    expect(calls).toEqual(['upload', 'deploy', 'remove stack', 'remove images']);
  });

  it.each([
    ['a VIM whose catalog has no image service', true],
    ['a driver without an images service', false],
  ])('%s: the templates get the image by name, and a notice says it must exist', async (_name, withService) => {
    const deps = depsWith(withService ? recordingImages(false) : undefined);
    const vnf = await createVnf(deps, { vnfdId: (await store.packages.list())[0]!.vnfdId, name: 'vm' });
    const notices: string[] = [];
    await instantiateVnf(deps, vnf.id, request(), { onEvent: (e) => void (e.type === 'notice' && notices.push(e.message)) });
    expect(streamed).toEqual([]);
    expect(deployed[0]!.nfv.VDU['VDU1']!.vcImageId).toBe('cirros-0.5.2-x86_64-disk');
    expect(notices).toContain(
      'VIM "openstack" has no image service (Glance) in its catalog: Files/images/cirros.qcow2 not uploaded; the templates get each image by name (VDU1, VDU2: cirros-0.5.2-x86_64-disk), which must exist in the VIM',
    );
  });
});
