/**
 * The software images of an OpenStack instance: which nodes' images the
 * templates take from the nfv parameter (v1's `nfv.VDU.<node>.image`, v2's
 * `vcImageId`), which of those the package carries (uploaded to the VIM's
 * Glance before the stack, their ids passed in place of the names, as
 * Tacker passes the images it creates), and what must already exist in the
 * VIM, said as notices. An image parameter nothing would fill is refused
 * before anything changes.
 */
import { openStoredZip } from '../csar/index.js';
import { parseImageChecksumAlgorithm } from '../csar/hashes.js';
import { UsageError } from '../errors.js';
import type { DriverContext } from '../infra/driver.js';
import type { OpenStackInfraDriver, OpenStackPackageImage } from '../infra/openstack/driver-contract.js';
import type { Flavour, SwImage } from '../vnfd/index.js';
import { sizeIn, type NfvReads } from './heat-nfv.js';
import { createHash } from 'node:crypto';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The keys of a node's entry in `nfv.VDU` that carry its image. */
const IMAGE_KEYS = ['image', 'vcImageId'] as const;

/** An image to upload, before the package is opened. */
export type PlannedImage = Omit<OpenStackPackageImage, 'size' | 'open'>;

export interface ImagePlan {
  uploads: PlannedImage[];
  /** What the operator should know before the operation (images that must exist in the VIM). */
  notices: string[];
}

const readsKey = (reads: NfvReads, node: string, key: string) => reads.some((p) => p[0] === 'VDU' && p[1] === node && p[2] === key);

/** Glance keeps a property to 255 characters: a longer key is its SHA-256. */
const bounded = (key: string) => (key.length <= 200 ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`);

/** What identifies an image's content and how Glance is to read it: the checksum checked at onboarding, else the package's member. */
function imageKey(image: SwImage & { file: string }, packageId: string, checksum: OpenStackPackageImage['checksum']): string {
  const content = checksum ? `${checksum.algorithm}:${checksum.hash}` : `package:${packageId}:${image.file}`;
  return bounded(`${content}|${image.diskFormat ?? ''}|${image.containerFormat ?? ''}`);
}

function checksumOf(image: SwImage): OpenStackPackageImage['checksum'] {
  const algorithm = image.checksum ? parseImageChecksumAlgorithm(image.checksum.algorithm) : undefined;
  return algorithm && image.checksum ? { algorithm, hash: image.checksum.hash.trim().toLowerCase() } : undefined;
}

/**
 * For each VDU and virtual storage of the flavour: the image keys the
 * templates read that the request's `additionalParams.nfv` does not set;
 * an image in the package for those is uploaded, one outside it (a URL, or
 * no artifact) is passed by name, and must exist. Throws UsageError when
 * the templates read a node's image and nothing gives one.
 */
export function planImages(flavour: Flavour, reads: NfvReads, overrides: Json | undefined, packageId: string, templatePath: string): ImagePlan {
  const uploads = new Map<string, PlannedImage>();
  const notices: string[] = [];
  const overridden = (node: string) => {
    const entry = isObject(overrides?.['VDU']) ? (overrides['VDU'] as Json)[node] : undefined;
    return isObject(entry) ? IMAGE_KEYS.filter((k) => entry[k] !== undefined) : [];
  };
  for (const [node, holder] of [...Object.entries(flavour.vdus), ...Object.entries(flavour.storages)]) {
    const image = holder.swImage;
    const read = IMAGE_KEYS.filter((k) => readsKey(reads, node, k));
    const open = read.filter((k) => !overridden(node).includes(k));
    if (open.length === 0) {
      if (image?.file && read.length === 0) {
        notices.push(
          `${templatePath} does not take the image of ${node} from the nfv parameter (nfv.VDU.${node}.image or vcImageId): vnfm does not upload ${image.file}, and the image the template names must exist in the VIM`,
        );
      }
      continue;
    }
    if (!image) {
      throw new UsageError(`${templatePath} reads nfv.VDU.${node}.${open[0]}, but ${node} has no sw_image_data and the request sets none: Heat would get an empty image`, {
        hint: `give ${node} sw_image_data (and its image in the package), or set additionalParams.nfv.VDU.${node}.${open[0]} to an image of the VIM`,
      });
    }
    if (!image.file) {
      // No artifact is the usual v2 package: the image is in Glance already, as Tacker assumes too. A URL is worth a word (Tacker v1 has Glance fetch it).
      if (image.url) notices.push(`the image of ${node} is ${image.url}, which vnfm does not fetch: the image named ${image.name} must exist in the VIM's Glance`);
      continue;
    }
    const checksum = checksumOf(image);
    const key = imageKey({ ...image, file: image.file }, packageId, checksum);
    const same = uploads.get(key);
    if (same) {
      same.nodes.push(node);
      continue;
    }
    uploads.set(key, {
      nodes: [node],
      name: image.name,
      ...(image.diskFormat ? { diskFormat: image.diskFormat } : {}),
      ...(image.containerFormat ? { containerFormat: image.containerFormat } : {}),
      // Tacker's conversions (vnflcm/utils.py _create_grant_request): min_disk in GB, min_ram in MB, 0 when absent.
      minDisk: sizeIn(image.minDisk, 'GB') ?? 0,
      minRam: sizeIn(image.minRam, 'MB') ?? 0,
      file: image.file,
      ...(checksum ? { checksum } : {}),
      key,
    });
  }
  return { uploads: [...uploads.values()], notices };
}

/**
 * The planned images uploaded to the VIM's Glance, streamed from the stored
 * package; node → image id. None when the driver or the VIM has no image
 * service: `notice` then says that each image, by name, must exist.
 */
export async function uploadImages(
  driver: OpenStackInfraDriver,
  ctx: DriverContext,
  plan: ImagePlan,
  target: { zip: string; packageId: string; instanceId: string; vimName: string },
  notice: (message: string) => void,
): Promise<Record<string, string>> {
  if (plan.uploads.length === 0) return {};
  if (!driver.images || !(await driver.images.available(ctx.signal))) {
    const named = plan.uploads.map((u) => `${u.nodes.join(', ')}: ${u.name}`).join('; ');
    notice(
      `VIM "${target.vimName}" has no image service (Glance) in its catalog: ${plan.uploads.map((u) => u.file).join(', ')} not uploaded; the templates get each image by name (${named}), which must exist in the VIM`,
    );
    return {};
  }
  const files = await openStoredZip(target.zip);
  try {
    const images: OpenStackPackageImage[] = plan.uploads.map((u) => ({ ...u, size: files.size(u.file), open: () => files.stream(u.file) }));
    return await driver.images.upload(ctx, { instanceId: target.instanceId, packageId: target.packageId, images });
  } finally {
    await files.close();
  }
}

/** Every image vnfm uploaded for the instance, deleted (after its stack). */
export async function removeImages(driver: OpenStackInfraDriver, ctx: DriverContext, instanceId: string): Promise<void> {
  await driver.images?.removeAll(ctx, instanceId);
}
