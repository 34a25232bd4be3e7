/**
 * Generic REST handlers for every registered resource: list, watch, get,
 * create, update, patch (JSON, merge, strategic merge, server-side apply),
 * delete and deletecollection, and the `status` and `scale` subresources.
 * HTTP concerns live here (query parameters, bodies, answers); object
 * semantics live in objects.ts, which the controllers share.
 */
import { apply, checkApplyOptions, defaultManager } from './managed-fields.js';
import { ObjectApi, type DeleteOptions, type PropagationPolicy } from './objects.js';
import { jsonPatch, mergePatch, PATCH_TYPES, strategicMergePatch } from './patch.js';
import type { ResourceRequest } from './request-info.js';
import { groupVersion, rfc3339, type KubeObject, type ResourceRegistry, type ResourceType, type Verb } from './resources.js';
import { parseFieldSelector, parseLabelSelector, parseLabelSelectorParts, type Matcher } from './selectors.js';
import { badRequest, conflict, deletedStatus, invalid, methodNotAllowed, notFound, resourceNotFound, typedPatchError, unsupportedMediaType } from './status.js';
import { readRequestBody } from './request-body.js';
import { scaledObject, scaleOf, writeScale } from './scale.js';
import { ReviewInvalid } from './kinds/review-kinds.js';
import type { ObjectStore } from './store.js';
import { toTable, type IncludeObject } from './table.js';

/** What a watch request asks for; the server streams it (watch.ts). */
export interface WatchRequest {
  type: ResourceType;
  namespace?: string;
  matches: Matcher;
  resourceVersion: string;
  timeoutSeconds?: number;
  allowBookmarks: boolean;
  sendInitialEvents?: boolean;
  table?: string;
}

/** What the handler answers; the server encodes it (or streams a watch). */
export type RestResponse = { code: number; body: unknown } | { watch: WatchRequest };

/** How the client wants objects back. */
export interface ResponseShape {
  /** meta.k8s.io version of the Table asked for, or undefined for plain objects. */
  table?: string;
}

/** What the request says about itself besides its path and query. */
export interface RequestMeta {
  /** Media type of the body, without parameters. */
  contentType?: string;
  userAgent?: string;
  /** The body as it came, once read: quoted in the error for a body the decoder could not read. */
  rawBody?: () => Buffer | undefined;
}

export interface RestContext {
  registry: ResourceRegistry;
  store: ObjectStore;
  now(): Date;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object as served: with kind and apiVersion. */
export function withTypeMeta(type: ResourceType, obj: KubeObject): KubeObject {
  const { metadata, ...rest } = type.conversion ? type.conversion.served(obj) : obj;
  delete rest.kind;
  delete rest.apiVersion;
  return { kind: type.kind, apiVersion: groupVersion(type), metadata, ...rest } as KubeObject;
}

/** List items of built-in kinds carry no kind/apiVersion on the wire. */
function withoutTypeMeta(obj: KubeObject): KubeObject {
  const { kind: _kind, apiVersion: _apiVersion, ...rest } = obj;
  return rest as KubeObject;
}

const POLICIES: PropagationPolicy[] = ['Foreground', 'Background', 'Orphan'];

export class RestHandler {
  readonly api: ObjectApi;

  constructor(ctx: RestContext, api?: ObjectApi) {
    this.api = api ?? new ObjectApi(ctx.registry, ctx.store, ctx.now);
  }

  /**
   * Serves one request. The body is read only once the request is known to
   * be allowed, so a forbidden verb answers 405 whatever it carries.
   */
  async handle(req: ResourceRequest, query: URLSearchParams, readBody: () => Promise<unknown>, shape: ResponseShape, meta: RequestMeta = {}): Promise<RestResponse> {
    const type = this.api.registry.find(req.group, req.version, req.resource);
    if (!type) throw resourceNotFound();
    if (req.namespace !== undefined && !type.namespaced) throw resourceNotFound();
    if (req.subresource !== undefined && !type.subresources?.some((s) => s.name === req.subresource)) {
      // The handler of custom resources answers a subresource its CRD does not declare as the object's absence.
      throw type.custom && req.name !== undefined ? notFound({ group: type.group, resource: type.plural, name: req.name }) : resourceNotFound();
    }
    const verbs: Verb[] = req.subresource ? type.subresources!.find((s) => s.name === req.subresource)!.verbs : type.verbs;
    if (!verbs.includes(req.verb)) throw methodNotAllowed();
    // Namespaced kinds are reachable without a namespace only to list or watch across all of them.
    if (type.namespaced && req.namespace === undefined && req.verb !== 'list' && req.verb !== 'watch') {
      throw req.name === undefined ? methodNotAllowed() : resourceNotFound();
    }
    const dryRun = query.getAll('dryRun').includes('All');
    const manager = query.get('fieldManager') ?? defaultManager(meta.userAgent);
    if (manager.length > 128) throw badRequest('fieldManager: Too long: may not be more than 128 bytes');

    switch (req.verb) {
      case 'list':
        return this.list(type, req, query, shape);
      case 'watch':
        return { watch: this.watchRequest(type, req, query, shape) };
      case 'get':
        if (req.subresource === 'scale') return { code: 200, body: scaleOf(type, scaledObject(this.api, type, req)) };
        return this.get(type, req, query, shape);
      case 'create':
        if (req.subresource === 'binding') return this.bind(type, req, await readBody(), dryRun, manager);
        if (type.group === '' && type.plural === 'bindings') return this.bindNamed(req, await readBody(), dryRun, manager);
        return this.create(type, req, await readRequestBody(type, 'create', meta, readBody), dryRun, manager);
      case 'update':
        return this.update(type, req, await readRequestBody(type, 'update', meta, readBody), dryRun, manager);
      case 'patch':
        if (!(Object.values(PATCH_TYPES) as string[]).includes(meta.contentType ?? '')) throw unknownPatchType();
        return this.patch(type, req, query, await readRequestBody(type, 'patch', meta, readBody), meta.contentType ?? '', dryRun, manager);
      case 'delete':
        return this.delete(type, req, query, await readBody(), dryRun);
      case 'deletecollection':
        return this.deleteCollection(type, req, query, await readBody(), dryRun);
      default:
        throw methodNotAllowed();
    }
  }

  private list(type: ResourceType, req: ResourceRequest, query: URLSearchParams, shape: ResponseShape): RestResponse {
    const byLabel = parseLabelSelectorParts(query.get('labelSelector'));
    const byField = parseFieldSelector(query.get('fieldSelector'), type.selectableFields);
    // The stored objects themselves (frozen): a list only reads them, to serialise them. `k=v` labels narrow through the label index.
    const resourceVersion = this.api.store.currentResourceVersion();
    const items = this.api.selectByLabels(type, req.namespace, byLabel.equalities);
    let selected = items.filter((obj) => byLabel.matches(obj) && byField(obj));

    const metadata: Record<string, unknown> = { resourceVersion };
    const limit = Number(query.get('limit') ?? 0);
    const token = query.get('continue');
    // Keys relative to the listed prefix, as etcd holds them: `name` in one namespace, `namespace/name` across all.
    const key = (obj: KubeObject): string => (type.namespaced && req.namespace === undefined ? itemKey(obj) : obj.metadata.name);
    if (token) {
      const start = decodeContinue(token);
      selected = selected.filter((obj) => key(obj) >= start);
    }
    if (limit > 0 && selected.length > limit) {
      const remaining = selected.length - limit;
      selected = selected.slice(0, limit);
      metadata.continue = encodeContinue(resourceVersion, `${key(selected[selected.length - 1]!)}\u0000`);
      // The store counts what is left only when nothing filters the list.
      if (!query.get('labelSelector') && !query.get('fieldSelector')) metadata.remainingItemCount = remaining;
    }

    if (shape.table) {
      const { resourceVersion: _rv, ...listMeta } = metadata;
      const opts = { includeObject: includeObject(query), listMeta, served: (o: KubeObject) => withTypeMeta(type, o) };
      return { code: 200, body: toTable(type, selected, resourceVersion, this.api.now(), shape.table, opts) };
    }
    return {
      code: 200,
      body: { kind: type.listKind, apiVersion: groupVersion(type), metadata, items: selected.map((o) => withoutTypeMeta(withTypeMeta(type, o))) },
    };
  }

  private watchRequest(type: ResourceType, req: ResourceRequest, query: URLSearchParams, shape: ResponseShape): WatchRequest {
    const byLabel = parseLabelSelector(query.get('labelSelector'));
    const byField = parseFieldSelector(query.get('fieldSelector'), type.selectableFields);
    const w: WatchRequest = {
      type,
      matches: (obj) => byLabel(obj) && byField(obj),
      resourceVersion: query.get('resourceVersion') ?? '',
      allowBookmarks: ['1', 'true'].includes(query.get('allowWatchBookmarks') ?? ''),
    };
    if (req.namespace !== undefined) w.namespace = req.namespace;
    const timeout = query.get('timeoutSeconds');
    if (timeout !== null) {
      if (!/^[0-9]+$/.test(timeout)) throw badRequest(`timeoutSeconds: Invalid value: "${timeout}": must be a non-negative integer`);
      w.timeoutSeconds = Number(timeout);
    }
    const initial = query.get('sendInitialEvents');
    if (initial !== null) w.sendInitialEvents = ['1', 'true'].includes(initial);
    if (shape.table) w.table = shape.table;
    return w;
  }

  private get(type: ResourceType, req: ResourceRequest, query: URLSearchParams, shape: ResponseShape): RestResponse {
    // The stored object itself (frozen): the answer only serialises it.
    const obj = this.api.peek(type, req.namespace, req.name!);
    if (!obj) throw notFound(this.api.target(type, req.name!));
    if (shape.table) {
      const opts = { includeObject: includeObject(query), served: (o: KubeObject) => withTypeMeta(type, o) };
      return { code: 200, body: toTable(type, [obj], obj.metadata.resourceVersion ?? '', this.api.now(), shape.table, opts) };
    }
    return { code: 200, body: withTypeMeta(type, obj) };
  }

  /** Decodes a request body into an object of `type`, checking what the URL already says. */
  private decode(type: ResourceType, req: ResourceRequest, body: unknown): KubeObject {
    if (!isObject(body)) throw badRequest('the body of the request was not a JSON or YAML object');
    if (body.apiVersion !== undefined && body.apiVersion !== groupVersion(type)) {
      throw badRequest(`the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${groupVersion(type)})`);
    }
    if (body.kind !== undefined && body.kind !== type.kind) {
      const other = typeof body.kind === 'string' ? this.api.registry.findByKind(type.group, type.version, body.kind) : undefined;
      if (other) {
        // A kind of the same group version: the decoder cannot convert one into the other.
        const internal = type.group ? type.group.split('.')[0] : 'core';
        throw badRequest(
          `${other.kind} in version "${type.version}" cannot be handled as a ${type.kind}: converting (${type.version}.${other.kind}) to (${internal}.${type.kind}): unknown conversion`,
        );
      }
      throw badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${type.kind})`);
    }
    const metadata = body.metadata === undefined ? {} : body.metadata;
    if (!isObject(metadata)) throw badRequest('metadata must be an object');
    const problem = type.strategy?.decodeProblem?.(body);
    if (problem) throw badRequest(problem);
    const obj = { ...structuredClone(body), metadata: structuredClone(metadata) } as KubeObject;
    if (type.namespaced) {
      if (obj.metadata.namespace && obj.metadata.namespace !== req.namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      obj.metadata.namespace = req.namespace;
    } else {
      delete obj.metadata.namespace;
    }
    return type.conversion ? type.conversion.stored(obj) : obj;
  }

  private create(type: ResourceType, req: ResourceRequest, body: unknown, dryRun: boolean, manager: string): RestResponse {
    if (req.name !== undefined) throw methodNotAllowed();
    const obj = this.decode(type, req, body);
    if (type.review) {
      let answer: Record<string, unknown>;
      try {
        answer = type.review(obj);
      } catch (err) {
        // The review's registry reports the object without its kind, as the API server words it.
        if (err instanceof ReviewInvalid) throw invalid('', type.group, '', err.errors);
        throw err;
      }
      const metadata: Record<string, unknown> = { ...obj.metadata, creationTimestamp: null };
      if (!type.namespaced) delete metadata.namespace;
      return { code: 201, body: { kind: type.kind, apiVersion: groupVersion(type), metadata, spec: obj.spec, status: answer } };
    }
    return { code: 201, body: withTypeMeta(type, this.api.create(type, obj, { dryRun, manager })) };
  }

  /** The object a PUT or PATCH names, with the name checked against the URL. */
  private named(type: ResourceType, req: ResourceRequest, body: unknown): KubeObject {
    const obj = this.decode(type, req, body);
    const name = req.name!;
    if (obj.metadata.name && obj.metadata.name !== name) {
      throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
    }
    obj.metadata.name = name;
    return obj;
  }

  private update(type: ResourceType, req: ResourceRequest, body: unknown, dryRun: boolean, manager: string): RestResponse {
    if (req.subresource === 'scale') return { code: 200, body: writeScale(this.api, type, req, body, dryRun, manager) };
    const obj = this.named(type, req, body);
    const opts = { dryRun, manager, ...(req.subresource ? { subresource: req.subresource } : {}) };
    return { code: 200, body: withTypeMeta(type, this.api.update(type, obj, opts)) };
  }

  private patch(type: ResourceType, req: ResourceRequest, query: URLSearchParams, body: unknown, contentType: string, dryRun: boolean, manager: string): RestResponse {
    if (contentType === PATCH_TYPES.apply) {
      if (req.subresource) throw methodNotAllowed();
      return this.apply(type, req, query, body, dryRun);
    }
    const live = req.subresource === 'scale' ? scaledObject(this.api, type, req) : this.api.get(type, req.namespace, req.name!);
    const current = req.subresource === 'scale' ? scaleOf(type, live) : withTypeMeta(type, live);
    let patched: unknown;
    switch (contentType) {
      case PATCH_TYPES.json:
        patched = jsonPatch(current, body);
        break;
      case PATCH_TYPES.merge:
        patched = mergePatch(current, body);
        break;
      case PATCH_TYPES.strategic:
        if (!type.strategicMerge && req.subresource !== 'scale') throw unsupportedPatch();
        patched = strategicMergePatch(current, body);
        break;
      default:
        throw unknownPatchType();
    }
    if (req.subresource === 'scale') return { code: 200, body: writeScale(this.api, type, req, patched, dryRun, manager) };
    const obj = this.named(type, req, patched);
    const opts = { dryRun, manager, ...(req.subresource ? { subresource: req.subresource } : {}) };
    return { code: 200, body: withTypeMeta(type, this.api.update(type, obj, opts)) };
  }

  private apply(type: ResourceType, req: ResourceRequest, query: URLSearchParams, body: unknown, dryRun: boolean): RestResponse {
    const manager = checkApplyOptions(query.get('fieldManager'));
    const force = ['1', 'true'].includes(query.get('force') ?? '');
    if (!isObject(body)) throw badRequest('the body of the request was not a JSON or YAML object');
    if (body.apiVersion === undefined || body.kind === undefined) {
      throw badRequest('invalid object type: apiVersion and kind are required for apply');
    }
    const meta = isObject(body.metadata) ? body.metadata : {};
    const undeclared = type.strategy?.undeclaredForApply?.(body as KubeObject) ?? [];
    if (undeclared.length) {
      throw typedPatchError(`${typeof meta.namespace === 'string' ? meta.namespace : ''}/${req.name}`, `${groupVersion(type)}, Kind=${type.kind}`, undeclared);
    }
    const applied = this.named(type, req, body);
    const live = this.api.find(type, req.namespace, req.name!);
    const result = apply(type, live, applied, manager, force, this.api.now());
    if (result.created) {
      const created = this.api.create(type, result.object, { dryRun, keepManagedFields: true });
      return { code: 201, body: withTypeMeta(type, created) };
    }
    return { code: 200, body: withTypeMeta(type, this.api.update(type, result.object, { dryRun, keepManagedFields: true })) };
  }

  /**
   * `POST pods/{name}/binding`: what a scheduler does. Sets the pod's node
   * once (409 when it has one) and its PodScheduled condition.
   */
  private bind(type: ResourceType, req: ResourceRequest, body: unknown, dryRun: boolean, manager: string): RestResponse {
    if (!isObject(body)) throw badRequest('the body of the request was not a JSON or YAML object');
    const target = isObject(body.target) ? body.target : {};
    const pod = this.api.get(type, req.namespace, req.name!);
    const spec = (isObject(pod.spec) ? pod.spec : {}) as Record<string, unknown>;
    if (spec.nodeName) {
      throw conflict({ group: '', resource: 'pods/binding', name: req.name! }, `pod ${req.name} is already assigned to node "${String(spec.nodeName)}"`);
    }
    if (typeof target.name !== 'string' || !target.name) {
      throw invalid('Binding', '', req.name!, [{ type: 'FieldValueRequired', field: 'target.name', detail: '' }]);
    }
    if (!dryRun) {
      const bound = this.api.update(type, { ...pod, spec: { ...spec, nodeName: target.name } }, { manager, subresource: 'binding' });
      const status = (isObject(bound.status) ? bound.status : {}) as Record<string, unknown>;
      const conditions = ((status.conditions as Record<string, unknown>[] | undefined) ?? []).filter((c) => c.type !== 'PodScheduled');
      conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339(this.api.now()) });
      this.api.update(type, { ...bound, status: { ...status, conditions } }, { manager, subresource: 'status' });
    }
    return { code: 201, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } };
  }

  /** `POST bindings`: binds the pod the Binding names, as `pods/{name}/binding` does. */
  private bindNamed(req: ResourceRequest, body: unknown, dryRun: boolean, manager: string): RestResponse {
    const binding = this.decode(this.api.type('', 'bindings'), req, body);
    return this.bind(this.api.type('', 'pods'), { ...req, name: binding.metadata.name }, body, dryRun, manager);
  }

  private deleteOptions(query: URLSearchParams, body: unknown, dryRun: boolean): DeleteOptions {
    const opts: DeleteOptions = { dryRun };
    const b = isObject(body) ? body : {};
    if (Array.isArray(b.dryRun) && b.dryRun.includes('All')) opts.dryRun = true;
    const policy = query.get('propagationPolicy') ?? (b.propagationPolicy as string | undefined);
    if (policy !== undefined && policy !== null) {
      if (!POLICIES.includes(policy as PropagationPolicy)) {
        throw badRequest(`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`);
      }
      opts.propagationPolicy = policy as PropagationPolicy;
    } else if (query.get('orphanDependents') === 'true' || b.orphanDependents === true) {
      opts.propagationPolicy = 'Orphan';
    }
    const grace = query.get('gracePeriodSeconds') ?? b.gracePeriodSeconds;
    if (grace !== undefined && grace !== null) {
      const n = Number(grace);
      if (!Number.isInteger(n)) throw badRequest(`gracePeriodSeconds: Invalid value: "${String(grace)}"`);
      opts.gracePeriodSeconds = Math.max(0, n);
    }
    if (isObject(b.preconditions)) opts.preconditions = b.preconditions as DeleteOptions['preconditions'] & object;
    return opts;
  }

  private delete(type: ResourceType, req: ResourceRequest, query: URLSearchParams, body: unknown, dryRun: boolean): RestResponse {
    const name = req.name!;
    const { object, removed } = this.api.delete(type, req.namespace, name, this.deleteOptions(query, body, dryRun));
    if (removed && !type.returnDeletedObject) {
      return { code: 200, body: deletedStatus(this.api.target(type, name), object.metadata.uid ?? '') };
    }
    return { code: 200, body: withTypeMeta(type, object) };
  }

  private deleteCollection(type: ResourceType, req: ResourceRequest, query: URLSearchParams, body: unknown, dryRun: boolean): RestResponse {
    const byLabel = parseLabelSelector(query.get('labelSelector'));
    const byField = parseFieldSelector(query.get('fieldSelector'), type.selectableFields);
    const opts = this.deleteOptions(query, body, dryRun);
    const deleted: KubeObject[] = [];
    for (const obj of this.api.list(type, req.namespace)) {
      if (!byLabel(obj) || !byField(obj)) continue;
      deleted.push(withoutTypeMeta(withTypeMeta(type, this.api.delete(type, obj.metadata.namespace, obj.metadata.name, opts).object)));
    }
    return {
      code: 200,
      body: { kind: type.listKind, apiVersion: groupVersion(type), metadata: { resourceVersion: this.api.store.currentResourceVersion() }, items: deleted },
    };
  }
}

/** A patch in a media type no patcher knows. */
function unknownPatchType(): Error {
  const err = unsupportedMediaType();
  err.status.message = '415: Unsupported Media Type';
  return err;
}

function unsupportedPatch(): Error {
  const err = unsupportedMediaType();
  err.status.message = `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.json}, ${PATCH_TYPES.merge}, ${PATCH_TYPES.apply}`;
  return err;
}

function itemKey(obj: KubeObject): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
}

function encodeContinue(resourceVersion: string, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: Number(resourceVersion), start })).toString('base64');
}

/** `includeObject` of a Table request; the API server refuses any other value. */
function includeObject(query: URLSearchParams): IncludeObject {
  const value = query.get('includeObject') ?? 'Metadata';
  if (value !== 'None' && value !== 'Metadata' && value !== 'Object') {
    throw badRequest(`Unable to convert to Table as requested: includeObject: Invalid value: "${value}": must be 'Metadata', 'Object', 'None', or empty`);
  }
  return value;
}

function decodeContinue(token: string): string {
  let parsed: { start?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as { start?: unknown };
  } catch (err) {
    // The API server quotes Go's JSON decoder here; the sandbox quotes its own.
    throw badRequest(`invalid continue token: continue key is not valid: ${(err as Error).message}`);
  }
  if (typeof parsed.start === 'string') return parsed.start;
  throw badRequest('invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}
