/**
 * Generic REST handlers for every registered resource: list, get, create,
 * update (and the `status` subresource) and delete, with the metadata
 * handling, admission and error answers of a real API server. Kind-specific
 * behaviour comes from each ResourceType's strategy; nothing here knows a
 * kind by name except the NamespaceLifecycle admission rules.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { ResourceRequest } from './request-info.js';
import { groupVersion, rfc3339, type KubeObject, type ObjectMeta, type ResourceRegistry, type ResourceType, type Verb } from './resources.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import {
  alreadyExists,
  badRequest,
  conflict,
  deletedStatus,
  forbidden,
  invalid,
  methodNotAllowed,
  notFound,
  resourceNotFound,
  type Target,
} from './status.js';
import type { ObjectStore } from './store.js';
import { toTable } from './table.js';
import { validateObjectMeta } from './validation.js';

/** What the handler answers; the server encodes it. */
export interface RestResponse {
  code: number;
  body: unknown;
}

/** How the client wants objects back. */
export interface ResponseShape {
  /** meta.k8s.io version of the Table asked for, or undefined for plain objects. */
  table?: string;
}

export interface RestContext {
  registry: ResourceRegistry;
  store: ObjectStore;
  now(): Date;
}

const GENERATE_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function generateNameSuffix(): string {
  return [...randomBytes(5)].map((b) => GENERATE_NAME_ALPHABET[b % GENERATE_NAME_ALPHABET.length]).join('');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object as served: with kind and apiVersion. */
function withTypeMeta(type: ResourceType, obj: KubeObject): KubeObject {
  const { metadata, ...rest } = obj;
  delete rest.kind;
  delete rest.apiVersion;
  return { kind: type.kind, apiVersion: groupVersion(type), metadata, ...rest } as KubeObject;
}

/** List items of built-in kinds carry no kind/apiVersion on the wire. */
function withoutTypeMeta(obj: KubeObject): KubeObject {
  const { kind: _kind, apiVersion: _apiVersion, ...rest } = obj;
  return rest as KubeObject;
}

export class RestHandler {
  constructor(private readonly ctx: RestContext) {}

  /**
   * Serves one request. The body is read only once the request is known to
   * be allowed, so a forbidden verb answers 405 whatever it carries.
   */
  async handle(req: ResourceRequest, query: URLSearchParams, readBody: () => Promise<unknown>, shape: ResponseShape): Promise<RestResponse> {
    const type = this.ctx.registry.find(req.group, req.version, req.resource);
    if (!type) throw resourceNotFound();
    if (req.namespace !== undefined && !type.namespaced) throw resourceNotFound();
    if (req.subresource !== undefined && !type.subresources?.some((s) => s.name === req.subresource)) throw resourceNotFound();
    const verbs: Verb[] = req.subresource ? type.subresources!.find((s) => s.name === req.subresource)!.verbs : type.verbs;
    if (!verbs.includes(req.verb)) throw methodNotAllowed();
    // Namespaced kinds are reachable without a namespace only to list across all of them.
    if (type.namespaced && req.namespace === undefined && req.verb !== 'list' && req.verb !== 'watch') {
      throw req.name === undefined ? methodNotAllowed() : resourceNotFound();
    }
    const dryRun = query.getAll('dryRun').includes('All');

    switch (req.verb) {
      case 'list':
        return this.list(type, req, query, shape);
      case 'get':
        return this.get(type, req, shape);
      case 'create':
        return this.create(type, req, await readBody(), dryRun);
      case 'update':
        return this.update(type, req, await readBody(), dryRun);
      case 'delete':
        return this.delete(type, req, dryRun);
      default:
        throw methodNotAllowed();
    }
  }

  private target(type: ResourceType, name: string): Target {
    return { group: type.group, resource: type.plural, name };
  }

  private mustGet(type: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const obj = this.ctx.store.get(type.group, type.plural, namespace, name);
    if (!obj) throw notFound(this.target(type, name));
    return obj;
  }

  private list(type: ResourceType, req: ResourceRequest, query: URLSearchParams, shape: ResponseShape): RestResponse {
    const byLabel = parseLabelSelector(query.get('labelSelector'));
    const byField = parseFieldSelector(query.get('fieldSelector'));
    const { items, resourceVersion } = this.ctx.store.list(type.group, type.plural, req.namespace);
    let selected = items.filter((obj) => byLabel(obj) && byField(obj));

    const metadata: Record<string, unknown> = { resourceVersion };
    const limit = Number(query.get('limit') ?? 0);
    const token = query.get('continue');
    if (token) {
      const start = decodeContinue(token);
      selected = selected.filter((obj) => itemKey(obj) > start);
    }
    if (limit > 0 && selected.length > limit) {
      const remaining = selected.length - limit;
      selected = selected.slice(0, limit);
      metadata.continue = encodeContinue(resourceVersion, itemKey(selected[selected.length - 1]!));
      metadata.remainingItemCount = remaining;
    }

    if (shape.table) return { code: 200, body: toTable(type, selected, resourceVersion, this.ctx.now(), shape.table) };
    return {
      code: 200,
      body: { kind: type.listKind, apiVersion: groupVersion(type), metadata, items: selected.map(withoutTypeMeta) },
    };
  }

  private get(type: ResourceType, req: ResourceRequest, shape: ResponseShape): RestResponse {
    const obj = this.mustGet(type, req.namespace, req.name!);
    if (shape.table) return { code: 200, body: toTable(type, [obj], obj.metadata.resourceVersion ?? '', this.ctx.now(), shape.table) };
    return { code: 200, body: withTypeMeta(type, obj) };
  }

  /** Decodes a request body into an object of `type`, checking what the URL already says. */
  private decode(type: ResourceType, req: ResourceRequest, body: unknown): KubeObject {
    if (!isObject(body)) throw badRequest('the body of the request was not a JSON or YAML object');
    if (body.apiVersion !== undefined && body.apiVersion !== groupVersion(type)) {
      throw badRequest(`the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${groupVersion(type)})`);
    }
    if (body.kind !== undefined && body.kind !== type.kind) {
      throw badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${type.kind})`);
    }
    const metadata = body.metadata === undefined ? {} : body.metadata;
    if (!isObject(metadata)) throw badRequest('metadata must be an object');
    const obj = { ...structuredClone(body), metadata: structuredClone(metadata) } as KubeObject;
    if (type.namespaced) {
      if (obj.metadata.namespace && obj.metadata.namespace !== req.namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      obj.metadata.namespace = req.namespace;
    } else {
      delete obj.metadata.namespace;
    }
    return obj;
  }

  private validate(type: ResourceType, obj: KubeObject): void {
    const errors = [...validateObjectMeta(obj.metadata, type.nameRule, type.namespaced), ...(type.strategy?.validate?.(obj) ?? [])];
    if (errors.length > 0) throw invalid(type.kind, type.group, obj.metadata.name ?? '', errors);
  }

  /** NamespaceLifecycle admission: no new content in a missing or terminating namespace. */
  private admitCreate(type: ResourceType, obj: KubeObject): void {
    if (!type.namespaced) return;
    const ns = this.ctx.store.get('', 'namespaces', undefined, obj.metadata.namespace!);
    if (!ns) throw notFound({ group: '', resource: 'namespaces', name: obj.metadata.namespace! });
    if (ns.metadata.deletionTimestamp) {
      throw forbidden(
        this.target(type, obj.metadata.name || obj.metadata.generateName || ''),
        `unable to create new content in namespace ${ns.metadata.name} because it is being terminated`,
        [{ reason: 'NamespaceTerminating', message: `namespace ${ns.metadata.name} is being terminated`, field: 'metadata.namespace' }],
      );
    }
  }

  private create(type: ResourceType, req: ResourceRequest, body: unknown, dryRun: boolean): RestResponse {
    if (req.name !== undefined) throw methodNotAllowed();
    const obj = this.decode(type, req, body);
    this.admitCreate(type, obj);

    const meta: ObjectMeta = obj.metadata;
    if (!meta.name && typeof meta.generateName === 'string' && meta.generateName) meta.name = meta.generateName + generateNameSuffix();
    for (const serverOwned of ['uid', 'resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink'] as const) {
      delete meta[serverOwned];
    }
    meta.creationTimestamp = rfc3339(this.ctx.now());
    type.strategy?.prepareForCreate?.(obj);
    this.validate(type, obj);

    if (this.ctx.store.get(type.group, type.plural, meta.namespace, meta.name)) throw alreadyExists(this.target(type, meta.name));
    meta.uid = randomUUID();
    if (dryRun) return { code: 201, body: withTypeMeta(type, obj) };
    const stored = this.ctx.store.create(type.group, type.plural, obj);
    return { code: 201, body: withTypeMeta(type, stored) };
  }

  private update(type: ResourceType, req: ResourceRequest, body: unknown, dryRun: boolean): RestResponse {
    const obj = this.decode(type, req, body);
    const name = req.name!;
    if (obj.metadata.name && obj.metadata.name !== name) {
      throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
    }
    obj.metadata.name = name;
    const old = this.mustGet(type, req.namespace, name);
    const wanted = obj.metadata.resourceVersion;
    if (wanted && wanted !== old.metadata.resourceVersion) {
      throw conflict(this.target(type, name), 'the object has been modified; please apply your changes to the latest version and try again');
    }

    let next: KubeObject;
    if (req.subresource === 'status') {
      next = { ...old, status: obj.status } as KubeObject;
    } else {
      next = obj;
      if ('status' in old) next.status = old.status;
      else delete next.status;
      type.strategy?.prepareForUpdate?.(next, old);
    }
    for (const serverOwned of ['uid', 'creationTimestamp', 'deletionTimestamp', 'generateName'] as const) {
      if (old.metadata[serverOwned] === undefined) delete next.metadata[serverOwned];
      else next.metadata[serverOwned] = old.metadata[serverOwned];
    }
    this.validate(type, next);
    if (dryRun) return { code: 200, body: withTypeMeta(type, { ...next, metadata: { ...next.metadata, resourceVersion: old.metadata.resourceVersion } }) };

    // An object marked for deletion goes once its last finalizer is removed.
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length && !type.strategy?.beginDelete) {
      const gone = this.ctx.store.delete(type.group, type.plural, req.namespace, name)!;
      return { code: 200, body: withTypeMeta(type, { ...next, metadata: { ...next.metadata, resourceVersion: gone.metadata.resourceVersion } }) };
    }
    return { code: 200, body: withTypeMeta(type, this.ctx.store.update(type.group, type.plural, next)) };
  }

  private delete(type: ResourceType, req: ResourceRequest, dryRun: boolean): RestResponse {
    const name = req.name!;
    const obj = this.mustGet(type, req.namespace, name);
    const now = this.ctx.now();

    let kept: KubeObject | undefined;
    if (type.strategy?.beginDelete) {
      kept = type.strategy.beginDelete(obj, now);
    } else if (obj.metadata.finalizers?.length) {
      obj.metadata.deletionTimestamp ??= rfc3339(now);
      kept = obj;
    }
    if (kept) {
      const result = dryRun ? kept : this.ctx.store.update(type.group, type.plural, kept);
      return { code: 200, body: withTypeMeta(type, result) };
    }
    const gone = dryRun ? obj : this.ctx.store.delete(type.group, type.plural, req.namespace, name)!;
    if (type.returnDeletedObject) return { code: 200, body: withTypeMeta(type, gone) };
    return { code: 200, body: deletedStatus(this.target(type, name), obj.metadata.uid ?? '') };
  }
}

function itemKey(obj: KubeObject): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
}

function encodeContinue(resourceVersion: string, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: Number(resourceVersion), start })).toString('base64url');
}

function decodeContinue(token: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { start?: unknown };
    if (typeof parsed.start === 'string') return parsed.start;
  } catch {
    // fall through to the error below
  }
  throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}
