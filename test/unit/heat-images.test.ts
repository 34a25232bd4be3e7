/**
 * What an OpenStack instantiate does about the VNFD's software images, in
 * both package generations (Tacker v1's nfv.VDU.<vdu>.image, v2's
 * vcImageId): which images are uploaded (once per content, for every node
 * naming it), with Tacker's min_disk/min_ram units; what must already exist
 * in the VIM (a notice); what the request overrides; an image parameter
 * nothing would fill (refused); and the uploaded image's id reaching the
 * keys the templates read.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openPackage } from '../../src/csar/index.js';
import { UsageError } from '../../src/errors.js';
import { planImages } from '../../src/lcm/heat-images.js';
import { buildNfvParameter, nfvReads, type NfvReads } from '../../src/lcm/heat-nfv.js';
import { loadVnfd, type Flavour, type SwImage } from '../../src/vnfd/index.js';

const V1 = resolve('test/fixtures/tacker-shapes/v1-heat-scale');
const V2 = resolve('csar-samples/heat-vnf/package');
const SHA = 'a'.repeat(128);

interface Shape {
  flavour: Flavour;
  reads: NfvReads;
}

async function shape(dir: string, entry: string, top: string, nested: string[]): Promise<Shape> {
  const files = await openPackage(dir);
  try {
    const { vnfd } = await loadVnfd(files, entry);
    const base = join(dir, 'BaseHOT/simple');
    const nestedFiles = Object.fromEntries(await Promise.all(nested.map(async (n) => [n, await readFile(join(base, 'nested', n), 'utf8')] as const)));
    return { flavour: vnfd!.flavours['simple']!, reads: nfvReads({ template: await readFile(join(base, top), 'utf8'), files: nestedFiles }) };
  } finally {
    await files.close();
  }
}

/** The flavour with each named node's image in the package (as Files/images/<file>), its other fields as given. */
function carrying(flavour: Flavour, images: Record<string, Partial<SwImage>>): Flavour {
  const vdus = { ...flavour.vdus };
  const storages = { ...flavour.storages };
  for (const [node, over] of Object.entries(images)) {
    if (vdus[node]) vdus[node] = { ...vdus[node]!, swImage: { ...vdus[node]!.swImage!, ...over } };
    else storages[node] = { ...storages[node]!, swImage: { ...storages[node]!.swImage!, ...over } };
  }
  return { ...flavour, vdus, storages };
}

let v1: Shape;
let v2: Shape;

beforeAll(async () => {
  v1 = await shape(V1, 'Definitions/gateway_top.vnfd.yaml', 'gateway.yaml', ['worker.yaml']);
  v2 = await shape(V2, 'Definitions/heat_vnf_top.vnfd.yaml', 'heat_vnf.yaml', ['VDU1.yaml']);
});

describe('the images an instantiate uploads', () => {
  it('v2: one upload for the two VDUs whose image is the same file and checksum; Tacker’s units', () => {
    const image = { file: 'Files/images/cirros.qcow2', checksum: { algorithm: 'SHA-512', hash: SHA.toUpperCase() } };
    const flavour = carrying(v2.flavour, { VDU1: image, VDU2: image });
    const plan = planImages(flavour, v2.reads, undefined, 'pkg-1', 'BaseHOT/simple/heat_vnf.yaml');
    expect(plan.notices).toEqual([]);
    expect(plan.uploads).toEqual([
      {
        nodes: ['VDU1', 'VDU2'],
        name: 'cirros-0.5.2-x86_64-disk',
        diskFormat: 'qcow2',
        containerFormat: 'bare',
        // min_disk: 1 GB, min_ram: 256 MB (Tacker: GB and MB, the whole number below).
        minDisk: 1,
        minRam: 256,
        file: 'Files/images/cirros.qcow2',
        checksum: { algorithm: 'sha512', hash: SHA },
        key: `sha512:${SHA}|qcow2|bare`,
      },
    ]);
  });

  it('v1: each node its image (nfv.VDU.<vdu>.image); binary units truncated as Tacker does', () => {
    const flavour = carrying(v1.flavour, {
      worker: { file: 'Files/images/worker.qcow2', minDisk: '2 GiB', minRam: '512 MiB' },
      edge: { file: 'Files/images/edge.qcow2' },
    });
    const plan = planImages(flavour, v1.reads, undefined, 'pkg-1', 'BaseHOT/simple/gateway.yaml');
    expect(plan.uploads.map((u) => [u.nodes, u.file, u.minDisk, u.minRam])).toEqual([
      [['worker'], 'Files/images/worker.qcow2', 2, 536],
      [['edge'], 'Files/images/edge.qcow2', 1, 256],
    ]);
  });

  it('an image given by URL must exist: a notice naming it; one without an artifact is passed by name, as Tacker does, without a word', () => {
    const flavour = carrying(v1.flavour, { worker: { url: 'https://images.example.net/worker.qcow2' } });
    const plan = planImages(flavour, v1.reads, undefined, 'pkg-1', 'BaseHOT/simple/gateway.yaml');
    expect(plan.uploads).toEqual([]);
    expect(plan.notices).toEqual([
      "the image of worker is https://images.example.net/worker.qcow2, which vnfm does not fetch: the image named gateway-worker-3.2 must exist in the VIM's Glance",
    ]);
  });

  it('the request’s additionalParams.nfv sets the image: nothing uploaded, nothing said', () => {
    const flavour = carrying(v1.flavour, { worker: { file: 'Files/images/worker.qcow2' }, edge: { file: 'Files/images/edge.qcow2' } });
    const plan = planImages(flavour, v1.reads, { VDU: { worker: { image: 'golden-worker' }, edge: { image: 'golden-edge' } } }, 'pkg-1', 'BaseHOT/simple/gateway.yaml');
    expect(plan).toEqual({ uploads: [], notices: [] });
  });

  it('a template that names its image itself: the package’s image is not uploaded, and the notice says the named one must exist', () => {
    const flavour = carrying(v2.flavour, { VDU2: { file: 'Files/images/cirros.qcow2' } });
    const reads = v2.reads.filter((p) => !(p[1] === 'VDU2' && p[2] === 'vcImageId'));
    const plan = planImages(flavour, reads, undefined, 'pkg-1', 'BaseHOT/simple/heat_vnf.yaml');
    expect(plan.uploads).toEqual([]);
    expect(plan.notices).toContain(
      'BaseHOT/simple/heat_vnf.yaml does not take the image of VDU2 from the nfv parameter (nfv.VDU.VDU2.image or vcImageId): vnfm does not upload Files/images/cirros.qcow2, and the image the template names must exist in the VIM',
    );
  });

  it('a template reading the image of a VDU without sw_image_data is refused before anything changes', () => {
    const { swImage: _gone, ...edge } = v1.flavour.vdus['edge']!;
    const flavour = { ...v1.flavour, vdus: { ...v1.flavour.vdus, edge } };
    expect(() => planImages(flavour, v1.reads, undefined, 'pkg-1', 'BaseHOT/simple/gateway.yaml')).toThrow(UsageError);
    expect(() => planImages(flavour, v1.reads, undefined, 'pkg-1', 'BaseHOT/simple/gateway.yaml')).toThrow(
      'BaseHOT/simple/gateway.yaml reads nfv.VDU.edge.image, but edge has no sw_image_data and the request sets none: Heat would get an empty image',
    );
    expect(planImages(flavour, v1.reads, { VDU: { edge: { image: 'golden-edge' } } }, 'pkg-1', 'BaseHOT/simple/gateway.yaml').uploads).toEqual([]);
  });
});

describe("the uploaded image's id in the nfv parameter", () => {
  it('v1: nfv.VDU.<vdu>.image is the Glance id; v2: vcImageId is; a node vnfm did not upload keeps the name', () => {
    const nfv1 = buildNfvParameter(v1.flavour, { worker: 1, edge: 1 }, { reads: v1.reads, images: { worker: 'glance-id-worker' } });
    expect(nfv1.VDU['worker']).toMatchObject({ image: 'glance-id-worker', vcImageId: 'glance-id-worker' });
    expect(nfv1.VDU['edge']).toMatchObject({ image: 'gateway-edge-3.2' });
    const nfv2 = buildNfvParameter(v2.flavour, { VDU1: 1, VDU2: 1 }, { reads: v2.reads, images: { VDU1: 'glance-id-1', VDU2: 'glance-id-1' } });
    expect([nfv2.VDU['VDU1']!.vcImageId, nfv2.VDU['VDU2']!.vcImageId]).toEqual(['glance-id-1', 'glance-id-1']);
    // The request's override still wins over an uploaded image.
    const over = buildNfvParameter(
      v1.flavour,
      { worker: 1, edge: 1 },
      { reads: v1.reads, images: { worker: 'glance-id-worker' }, overrides: { VDU: { worker: { image: 'golden' } } } },
    );
    expect(over.VDU['worker']!.image).toBe('golden');
  });
});
