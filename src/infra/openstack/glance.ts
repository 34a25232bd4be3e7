/**
 * Glance's Image API v2, on a Keystone session (service-connection.ts): an
 * image record created, its bytes uploaded as one streamed PUT, read back,
 * listed by tag, deleted. Whether the VIM has Glance at all is the catalog's
 * to say (`available`).
 */
import type { Readable } from 'node:stream';
import { VnfmError } from '../../errors.js';
import type { KeystoneCredentials } from './keystone.js';
import { parseJson, type HttpAnswer } from './openstack-http.js';
import { serviceConnection, type ServiceConnectionOptions, type ServiceDescription } from './service-connection.js';

const GLANCE: ServiceDescription = {
  type: 'image',
  name: 'Glance',
  reachHint: 'check that Glance runs and this host may connect to it (its URL is the image endpoint of the Keystone catalog)',
  missingHint: "the package's images are uploaded to Glance: register Glance in this cloud, or check region_name in the VIM",
};

/** An upload without a byte moving for this long has stalled (Glance writes as it reads). */
const UPLOAD_STALL_MS = 120_000;
/** Images per page of a listing, and pages at most (a project's images by one tag are few). */
const PAGE = 100;
const MAX_PAGES = 50;

/** An image as Glance shows it; `properties` holds the ones Glance does not define (vnfm's own). */
export interface GlanceImage {
  id: string;
  name: string;
  /** queued, saving, uploading, importing, active, killed, deleted, deactivated. */
  status: string;
  size?: number;
  /** MD5 of the data. */
  checksum?: string;
  /** The algorithm of os_hash_value as hashlib names it (`sha512` by default). */
  osHashAlgo?: string;
  osHashValue?: string;
  tags: string[];
  properties: Record<string, string>;
}

/** What an image record is created with. */
export interface GlanceImageFields {
  name: string;
  diskFormat?: string;
  containerFormat?: string;
  /** GB. */
  minDisk?: number;
  /** MB. */
  minRam?: number;
  visibility: 'private' | 'shared' | 'community' | 'public';
  tags: string[];
  /** Further string properties. */
  properties?: Record<string, string>;
}

export class GlanceError extends VnfmError {
  constructor(
    message: string,
    readonly status: number,
    details: { hint?: string } = {},
  ) {
    super(message, details);
  }
}

export interface GlanceSession {
  /** Whether the catalog has an image endpoint (a token is issued to know). */
  available(signal?: AbortSignal): Promise<boolean>;
  createImage(fields: GlanceImageFields, signal?: AbortSignal): Promise<GlanceImage>;
  /** PUT `/v2/images/{id}/file`: the bytes `open` streams, as they are read (opened again for the one resend a 401 brings). */
  uploadData(id: string, open: () => Promise<{ data: Readable; size?: number }>, signal?: AbortSignal): Promise<void>;
  /** undefined when there is no such image. */
  getImage(id: string, signal?: AbortSignal): Promise<GlanceImage | undefined>;
  /** The images carrying every one of `tags` that the project can see. */
  listImages(tags: string[], signal?: AbortSignal): Promise<GlanceImage[]>;
  /** An image already gone counts as deleted. */
  deleteImage(id: string, signal?: AbortSignal): Promise<void>;
}

/** The fields of Glance's image schema; anything else on an image is a property. */
const SCHEMA_FIELDS = new Set([
  'id',
  'name',
  'status',
  'visibility',
  'protected',
  'os_hidden',
  'checksum',
  'os_hash_algo',
  'os_hash_value',
  'owner',
  'size',
  'virtual_size',
  'min_disk',
  'min_ram',
  'container_format',
  'disk_format',
  'created_at',
  'updated_at',
  'tags',
  'direct_url',
  'locations',
  'self',
  'file',
  'schema',
  'stores',
]);

function imageOf(raw: unknown): GlanceImage {
  const o = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const properties: Record<string, string> = {};
  for (const [k, v] of Object.entries(o)) if (!SCHEMA_FIELDS.has(k) && typeof v === 'string') properties[k] = v;
  const checksum = text(o['checksum']);
  const osHashAlgo = text(o['os_hash_algo']);
  const osHashValue = text(o['os_hash_value']);
  return {
    id: text(o['id']) ?? '',
    name: text(o['name']) ?? '',
    status: text(o['status']) ?? '',
    ...(typeof o['size'] === 'number' ? { size: o['size'] } : {}),
    ...(checksum ? { checksum } : {}),
    ...(osHashAlgo ? { osHashAlgo } : {}),
    ...(osHashValue ? { osHashValue } : {}),
    tags: Array.isArray(o['tags']) ? o['tags'].filter((t): t is string => typeof t === 'string') : [],
    properties,
  };
}

function glanceError(what: string, res: HttpAnswer): GlanceError {
  const body = parseJson(res.body) as { message?: unknown; explanation?: unknown; error?: { message?: unknown } } | undefined;
  const said =
    [body?.error?.message, body?.message, body?.explanation].find((m): m is string => typeof m === 'string' && m.trim() !== '') ??
    (res.body
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 300) ||
      `HTTP ${res.status}`);
  const hint =
    res.status === 403
      ? 'the VIM user needs a role that may create and delete images on this project (member); a property or quota the cloud restricts also answers 403'
      : res.status === 413
        ? "the project's image storage quota (user_storage_quota, image_size_cap) is smaller than the image: raise it, or free space"
        : res.status === 409
          ? 'another request changes the image; retry'
          : res.status >= 500
            ? 'Glance failed; its log says why. Retry once it is healthy'
            : undefined;
  return new GlanceError(`Glance refused to ${what} (HTTP ${res.status}): ${said}`, res.status, hint ? { hint } : {});
}

export interface GlanceSessionOptions extends ServiceConnectionOptions {
  now?(): number;
  /** How long an upload may move no byte before it counts as stalled (2 min). */
  uploadStallMs?: number;
}

export function createGlanceSession(creds: KeystoneCredentials, opts: GlanceSessionOptions = {}): GlanceSession {
  const conn = serviceConnection(creds, GLANCE, opts, opts.now ?? Date.now);
  // The catalog's endpoint may name the version already (`…:9292/v2`).
  const v2 = async (path: string, signal: AbortSignal | undefined) => ((await conn.session(signal, false)).base.match(/\/v2(\.\d+)?$/) ? path : `/v2${path}`);
  const expect = async (what: string, res: HttpAnswer, ok: number[]) => {
    if (ok.includes(res.status)) return parseJson(res.body);
    throw glanceError(what, res);
  };

  return {
    available: (signal) => conn.available(signal),

    async createImage(fields, signal) {
      const body = {
        ...fields.properties,
        name: fields.name,
        ...(fields.diskFormat ? { disk_format: fields.diskFormat } : {}),
        ...(fields.containerFormat ? { container_format: fields.containerFormat } : {}),
        ...(fields.minDisk !== undefined ? { min_disk: fields.minDisk } : {}),
        ...(fields.minRam !== undefined ? { min_ram: fields.minRam } : {}),
        visibility: fields.visibility,
        tags: fields.tags,
      };
      const res = await conn.call('POST', await v2('/images', signal), body, signal);
      const image = imageOf(await expect(`create image ${fields.name}`, res, [201, 200]));
      if (!image.id) throw new GlanceError(`Glance's answer to creating image ${fields.name} has no image id`, res.status);
      return image;
    },

    async uploadData(id, open, signal) {
      const path = await v2(`/images/${encodeURIComponent(id)}/file`, signal);
      const upload = async () => {
        const { data, size } = await open();
        return { data, contentType: 'application/octet-stream', ...(size !== undefined ? { length: size } : {}) };
      };
      const res = await conn.call('PUT', path, undefined, signal, { upload, timeoutMs: opts.uploadStallMs ?? UPLOAD_STALL_MS });
      await expect(`take the data of image ${id}`, res, [204, 200, 201]);
    },

    async getImage(id, signal) {
      const res = await conn.call('GET', await v2(`/images/${encodeURIComponent(id)}`, signal), undefined, signal);
      if (res.status === 404) return undefined;
      return imageOf(await expect(`show image ${id}`, res, [200]));
    },

    async listImages(tags, signal) {
      const out: GlanceImage[] = [];
      const q = new URLSearchParams({ limit: String(PAGE) });
      for (const t of tags) q.append('tag', t);
      let path = `${await v2('/images', signal)}?${q}`;
      for (let page = 0; page < MAX_PAGES; page++) {
        const res = await conn.call('GET', path, undefined, signal);
        const body = (await expect(`list the images tagged ${tags.join(', ')}`, res, [200])) as { images?: unknown[]; next?: unknown } | undefined;
        out.push(...(body?.images ?? []).map(imageOf));
        if (typeof body?.next !== 'string' || !body.images?.length) return out;
        // `next` is a path from the API root (`/v2/images?marker=…`); the endpoint may carry a prefix before it.
        const next = new URL(body.next, 'http://x');
        path = `${await v2('/images', signal)}${next.search}`;
      }
      return out;
    },

    async deleteImage(id, signal) {
      const res = await conn.call('DELETE', await v2(`/images/${encodeURIComponent(id)}`, signal), undefined, signal);
      if (res.status === 404) return;
      await expect(`delete image ${id}`, res, [204, 200]);
    },
  };
}
