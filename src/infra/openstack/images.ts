/**
 * An instance's software images in Glance, as Tacker makes them before the
 * stack (openstack.py `pre_instantiation_vnf`, `_image_create_wait`): each
 * image created private and tagged with the instance id, its bytes streamed
 * from the stored package, waited for until active and its checksum
 * compared with the one Glance computed; deleted with the instance.
 *
 * One image per instance, not one shared by every instance of a package:
 * an image then lives exactly as long as its instance, so terminate and
 * rollback delete what the instance uploaded without counting which other
 * instances (of other vnfm processes, at the same moment) still boot from
 * it, and nothing is reused that anyone else in the project could have made
 * under the same tags. Within the instance, an image is uploaded once for
 * all the nodes that name the same content, and a retried operation uses
 * what an earlier attempt left active.
 */
import type { Sleep } from '../../clock.js';
import { VnfmError } from '../../errors.js';
import type { DriverContext, ResourceRef } from '../driver.js';
import type { OpenStackImageService, OpenStackPackageImage } from './driver-contract.js';
import type { GlanceImage, GlanceSession } from './glance.js';

/** vnfm's properties on an image it uploads. */
const KEY = 'vnfm_image_key';
const PACKAGE = 'vnfm_package_id';
const FILE = 'vnfm_file';
/** Glance keeps property values to 255 characters. */
const MAX_PROPERTY = 255;

export interface ImageServiceOptions {
  sleep: Sleep;
  /** Pauses between reads of an image's status: the first, and the longest it grows to. */
  poll: { min: number; max: number };
}

const imageRef = (name: string): ResourceRef => ({ apiVersion: 'image/v2', kind: 'Image', name });

const MIB = 1024 * 1024;
const sized = (bytes: number) => (bytes >= MIB ? `${(bytes / MIB).toFixed(1)} MiB` : `${bytes} bytes`);

/** What Glance computed against what the package declares: undefined when they agree (or Glance computed another algorithm). */
function disagreement(image: GlanceImage, wanted: OpenStackPackageImage): string | undefined {
  if (image.size !== undefined && image.size !== wanted.size) return `Glance holds ${image.size} bytes, the package ${wanted.size}`;
  const c = wanted.checksum;
  if (!c) return undefined;
  if (c.algorithm === 'md5' && image.checksum && image.checksum.toLowerCase() !== c.hash) return `Glance computed the MD5 ${image.checksum}, the VNFD declares ${c.hash}`;
  if (image.osHashAlgo === c.algorithm && image.osHashValue && image.osHashValue.toLowerCase() !== c.hash)
    return `Glance computed the ${c.algorithm} ${image.osHashValue}, the VNFD declares ${c.hash}`;
  return undefined;
}

export function createImageService(glance: GlanceSession, opts: ImageServiceOptions): OpenStackImageService {
  /** Polls the image until it is active; fails when Glance gives up on it. */
  async function waitActive(ctx: DriverContext, id: string, name: string): Promise<GlanceImage> {
    let pause = opts.poll.min;
    for (;;) {
      const image = await glance.getImage(id, ctx.signal);
      if (!image) throw new VnfmError(`image ${name} (${id}) was deleted from Glance while vnfm waited for it to become active`);
      if (image.status === 'active') return image;
      if (image.status === 'killed' || image.status === 'deleted' || image.status === 'deactivated') {
        throw new VnfmError(`Glance did not keep the data of image ${name} (${id}): its status is ${image.status}`, {
          hint: "Glance's log says why (a full store, a quota); retry the operation once it is fixed",
        });
      }
      await opts.sleep(pause, ctx.signal);
      pause = Math.min(opts.poll.max, pause * 2);
    }
  }

  async function deleteQuietly(id: string, signal: AbortSignal): Promise<void> {
    try {
      await glance.deleteImage(id, signal);
    } catch {
      // The instance's tag still finds it: terminate or rollback delete it then.
    }
  }

  async function uploadOne(ctx: DriverContext, instanceId: string, packageId: string, wanted: OpenStackPackageImage): Promise<string> {
    const ref = imageRef(wanted.name);
    ctx.journal.record({ action: 'create', resource: ref, state: 'intended', detail: `${wanted.file} for ${wanted.nodes.join(', ')}` });
    const made = await glance.createImage(
      {
        name: wanted.name,
        ...(wanted.diskFormat ? { diskFormat: wanted.diskFormat } : {}),
        ...(wanted.containerFormat ? { containerFormat: wanted.containerFormat } : {}),
        minDisk: wanted.minDisk,
        minRam: wanted.minRam,
        visibility: 'private',
        tags: [instanceId],
        properties: { [KEY]: wanted.key, [PACKAGE]: packageId, [FILE]: wanted.file.slice(0, MAX_PROPERTY) },
      },
      ctx.signal,
    );
    ctx.report({ resource: ref, message: `uploading ${wanted.file} (${sized(wanted.size)}) as image ${made.id}` });
    try {
      await glance.uploadData(made.id, async () => ({ data: await wanted.open(), size: wanted.size }), ctx.signal);
      const active = await waitActive(ctx, made.id, wanted.name);
      const wrong = disagreement(active, wanted);
      if (wrong) {
        throw new VnfmError(`image ${wanted.name} (${made.id}) is not the package's ${wanted.file}: ${wrong}`, {
          hint: 'the stored package or the upload was damaged: onboard the package again (vnfm vnfpkg-onboard), then retry',
        });
      }
    } catch (err) {
      // As Tacker: an image that did not become what the package holds is deleted at once.
      await deleteQuietly(made.id, ctx.signal);
      throw err;
    }
    ctx.journal.record({ action: 'create', resource: ref, state: 'done', detail: made.id });
    ctx.report({ resource: ref, message: `active (${made.id})`, done: true });
    return made.id;
  }

  const service: OpenStackImageService = {
    available: (signal) => glance.available(signal),

    async upload(ctx, input) {
      const ids: Record<string, string> = {};
      if (input.images.length === 0) return ids;
      const own = (await glance.listImages([input.instanceId], ctx.signal)).filter((i) => i.properties[KEY] !== undefined);
      for (const wanted of input.images) {
        const same = own.filter((i) => i.properties[KEY] === wanted.key);
        let id = same.find((i) => i.status === 'active' && !disagreement(i, wanted))?.id;
        // What an interrupted attempt left (queued, saving, killed) is not worth resuming; an active image may be one a server boots from.
        for (const left of same.filter((i) => i.status !== 'active')) {
          const ref = imageRef(left.name);
          ctx.journal.record({ action: 'delete', resource: ref, state: 'intended', detail: `${left.id}: left ${left.status} by an earlier attempt` });
          await glance.deleteImage(left.id, ctx.signal);
          ctx.journal.record({ action: 'delete', resource: ref, state: 'done', detail: left.id });
        }
        if (id) ctx.report({ resource: imageRef(wanted.name), message: `already uploaded for this instance (${id})`, done: true });
        else id = await uploadOne(ctx, input.instanceId, input.packageId, wanted);
        for (const node of wanted.nodes) ids[node] = id;
      }
      return ids;
    },

    async removeAll(ctx, instanceId) {
      if (!(await glance.available(ctx.signal))) return 0;
      const own = (await glance.listImages([instanceId], ctx.signal)).filter((i) => i.properties[KEY] !== undefined);
      for (const image of own) {
        const ref = imageRef(image.name);
        ctx.journal.record({ action: 'delete', resource: ref, state: 'intended', detail: image.id });
        await glance.deleteImage(image.id, ctx.signal);
        ctx.journal.record({ action: 'delete', resource: ref, state: 'done', detail: image.id });
        ctx.report({ resource: ref, message: `deleted (${image.id})`, done: true });
      }
      return own.length;
    },
  };
  return service;
}
