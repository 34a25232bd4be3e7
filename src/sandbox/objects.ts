/**
 * The object semantics of the API server, below HTTP: create, update (and
 * `/status`), delete with finalizers and propagation policies. The REST
 * handlers and the in-process controllers both write through here, so a
 * controller's write gets the same resourceVersion, generation, managed
 * fields and deletion rules as a client's.
 */
import { randomUUID } from 'node:crypto';
import { recordUpdate } from './managed-fields.js';
import { rfc3339, type KubeObject, type ObjectMeta, type ResourceRegistry, type ResourceType } from './resources.js';
import { alreadyExists, conflict, forbidden, invalid, notFound, type Target } from './status.js';
import type { ObjectStore } from './store.js';
import { validateObjectMeta } from './validation.js';
import { generateNameSuffix } from './generate-name.js';
import { mountServiceAccountToken } from './kinds/builtin-validation.js';

export type PropagationPolicy = 'Foreground' | 'Background' | 'Orphan';

/** The fields of `metav1.DeleteOptions` the sandbox honours. */
export interface DeleteOptions {
  propagationPolicy?: PropagationPolicy;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export interface WriteOptions {
  dryRun?: boolean;
  /** The field manager recorded in managedFields (`fieldManager=`, or derived from the user agent). */
  manager?: string;
  /** `status` for writes to the status subresource; `scale` for writes through `/scale`. */
  subresource?: string;
  /** The object's managedFields are already set (server-side apply): keep them, record nothing. */
  keepManagedFields?: boolean;
}

export interface DeleteResult {
  /** The object as stored after the request (marked for deletion) or as it was when removed. */
  object: KubeObject;
  /** True when the object is gone; false when finalizers or a grace period keep it. */
  removed: boolean;
}

/** Finalizers the garbage collector acts on. */
export const FOREGROUND_FINALIZER = 'foregroundDeletion';
export const ORPHAN_FINALIZER = 'orphan';

/**
 * Everything but metadata and status: what bumps `metadata.generation` when
 * it changes. A custom resource without a status subresource has no status
 * of its own, so a change to `status` bumps it too, as the real server does.
 */
/**
 * What an update compares of the stored object, kept beside it: a stored object is frozen to the
 * bottom (store.ts, deepFreeze), so the text stays true for as long as the object lives, and the
 * controllers' many writes to one object do not serialize its stored copy again each time.
 */
const storedText = new WeakMap<object, { spec?: { type: ResourceType; text: string }; comparable?: string; ownership?: string }>();
function remembered<K extends 'comparable' | 'ownership'>(obj: KubeObject, key: K, make: () => string): string {
  if (!Object.isFrozen(obj)) return make();
  let texts = storedText.get(obj);
  if (!texts) storedText.set(obj, (texts = {}));
  return (texts[key] ??= make());
}

function storedSpecPart(type: ResourceType, obj: KubeObject): string {
  if (!Object.isFrozen(obj)) return specPart(type, obj);
  let texts = storedText.get(obj);
  if (!texts) storedText.set(obj, (texts = {}));
  if (texts.spec?.type !== type) texts.spec = { type, text: specPart(type, obj) };
  return texts.spec.text;
}

function specPart(type: ResourceType, obj: KubeObject): string {
  const { metadata: _m, status, kind: _k, apiVersion: _a, ...rest } = obj;
  const statusCounts = type.custom !== undefined && !type.subresources?.some((s) => s.name === 'status');
  return JSON.stringify(statusCounts ? { ...rest, status } : rest);
}

/** The object without what every write changes, to tell a no-op update from a real one. */
function comparable(obj: KubeObject): string {
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = obj.metadata;
  return JSON.stringify({ ...obj, metadata: meta });
}

/** managedFields without their times: an apply that changes nothing else is a no-op. */
function ownership(obj: KubeObject): string {
  const entries = (obj.metadata.managedFields as { time?: string }[] | undefined) ?? [];
  return JSON.stringify(entries.map(({ time: _t, ...rest }) => rest));
}

export class ObjectApi {
  constructor(
    readonly registry: ResourceRegistry,
    readonly store: ObjectStore,
    readonly now: () => Date,
  ) {}

  /** The registered type serving `group`/`resource` (any version). */
  type(group: string, resource: string): ResourceType {
    const t = this.registry.all().find((r) => r.group === group && r.plural === resource);
    if (!t) throw new Error(`no resource ${resource} in group "${group}"`);
    return t;
  }

  target(type: ResourceType, name: string): Target {
    return { group: type.group, resource: type.plural, name };
  }

  find(type: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.store.get(type.group, type.plural, type.namespaced ? namespace : undefined, name);
  }

  get(type: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const obj = this.find(type, namespace, name);
    if (!obj) throw notFound(this.target(type, name));
    return obj;
  }

  list(type: ResourceType, namespace?: string): KubeObject[] {
    return this.store.list(type.group, type.plural, type.namespaced ? namespace : undefined).items;
  }

  /** As find, but the stored object itself, frozen: to read, never to change (copy it to write it back). */
  peek(type: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.store.peek(type.group, type.plural, type.namespaced ? namespace : undefined, name);
  }

  /** As get, but the stored object itself, frozen: to read, never to change. */
  getShared(type: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const obj = this.peek(type, namespace, name);
    if (!obj) throw notFound(this.target(type, name));
    return obj;
  }

  /** As list, but the stored objects themselves, frozen: to read, never to change. */
  scan(type: ResourceType, namespace?: string): KubeObject[] {
    return this.store.scan(type.group, type.plural, type.namespaced ? namespace : undefined).items;
  }

  /**
   * The objects of `type` (frozen, in list order) carrying every label of
   * `labels`, from the store's label index; all of them when `labels` is empty.
   */
  selectByLabels(type: ResourceType, namespace: string | undefined, labels: Record<string, string>): KubeObject[] {
    const ns = type.namespaced ? namespace : undefined;
    return this.store.select(type.group, type.plural, ns, labels) ?? this.store.scan(type.group, type.plural, ns).items;
  }

  /**
   * The objects of `type` whose controller is `owner`, sorted by name as
   * list sorts them: found through the store's owner index, so a controller
   * reconciling one ReplicaSet reads its pods, not every pod of the namespace.
   * The stored objects themselves, frozen: to read, never to change.
   */
  controlledBy(type: ResourceType, owner: KubeObject): KubeObject[] {
    const uid = owner.metadata.uid;
    if (!uid) return [];
    return this.store
      .peekDependents(uid)
      .filter(
        (d) =>
          d.group === type.group &&
          d.resource === type.plural &&
          (!type.namespaced || d.object.metadata.namespace === owner.metadata.namespace) &&
          (d.object.metadata.ownerReferences as { uid?: string; controller?: boolean }[] | undefined)?.find((r) => r.controller)?.uid === uid,
      )
      .map((d) => d.object)
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  }

  private validate(type: ResourceType, obj: KubeObject, old?: KubeObject): void {
    const errors = [
      ...validateObjectMeta(obj.metadata, type.nameRule, type.namespaced),
      ...(type.strategy?.validate?.(obj) ?? []),
      ...(old ? (type.strategy?.validateUpdate?.(obj, old) ?? []) : []),
    ];
    const as = type.validatedAs ?? type;
    if (errors.length > 0) throw invalid(as.kind, as.group, obj.metadata.name ?? '', errors);
  }

  /**
   * NamespaceLifecycle admission: no new content in a missing or terminating
   * namespace. ServiceAccount admission: a pod's ServiceAccount must exist,
   * and its token volume is mounted.
   */
  private admitCreate(type: ResourceType, obj: KubeObject): void {
    if (!type.namespaced) return;
    const ns = this.store.peek('', 'namespaces', undefined, obj.metadata.namespace!);
    if (!ns) throw notFound({ group: '', resource: 'namespaces', name: obj.metadata.namespace! });
    const target = this.target(type, obj.metadata.name || obj.metadata.generateName || '');
    if (ns.metadata.deletionTimestamp) {
      throw forbidden(target, `unable to create new content in namespace ${ns.metadata.name} because it is being terminated`, [
        { reason: 'NamespaceTerminating', message: `namespace ${ns.metadata.name} is being terminated`, field: 'metadata.namespace' },
      ]);
    }
    if (this.isPod(type)) {
      const spec = (typeof obj.spec === 'object' && obj.spec !== null ? obj.spec : {}) as Record<string, unknown>;
      const name = typeof spec.serviceAccountName === 'string' && spec.serviceAccountName ? spec.serviceAccountName : 'default';
      const serviceAccount = this.store.peek('', 'serviceaccounts', ns.metadata.name, name);
      if (!serviceAccount) {
        throw forbidden(target, `error looking up service account ${ns.metadata.name}/${name}: serviceaccount "${name}" not found`);
      }
      mountServiceAccountToken(obj, serviceAccount);
    }
  }

  /** Creates `obj` (its namespace already set from the URL). */
  create(type: ResourceType, obj: KubeObject, opts: WriteOptions = {}): KubeObject {
    obj = structuredClone(obj);
    delete obj.kind;
    delete obj.apiVersion;
    if (!type.namespaced) delete obj.metadata.namespace;
    this.admitCreate(type, obj);
    const meta: ObjectMeta = obj.metadata;
    if (!meta.name && typeof meta.generateName === 'string' && meta.generateName) meta.name = meta.generateName + generateNameSuffix();
    for (const serverOwned of ['uid', 'resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink', 'generation'] as const) {
      delete meta[serverOwned];
    }
    if (!opts.keepManagedFields) delete meta.managedFields;
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.now());
    if (type.generation) meta.generation = 1;
    if (obj.metadata.finalizers?.length === 0) delete obj.metadata.finalizers;
    type.strategy?.normalize?.(obj);
    // Fields the request set are its manager's; those defaulting fills in below are no one's.
    if (opts.manager && !opts.keepManagedFields) recordUpdate(type, undefined, obj, opts.manager, this.now(), opts.subresource);
    type.strategy?.applyDefaults?.(obj);
    type.strategy?.prepareForCreate?.(obj);
    this.validate(type, obj);
    if (this.peek(type, meta.namespace, meta.name)) throw alreadyExists(this.target(type, meta.name));
    if (opts.dryRun) return obj;
    // `obj` is this call's own copy: the store keeps it, and what it returns is frozen.
    return this.store.create(type.group, type.plural, obj, { adopt: true });
  }

  /**
   * Replaces an object (or its status). A resourceVersion in `obj` is a
   * precondition; an update that changes nothing writes nothing, as etcd
   * would not be asked to.
   */
  update(type: ResourceType, obj: KubeObject, opts: WriteOptions = {}): KubeObject {
    obj = structuredClone(obj);
    delete obj.kind;
    delete obj.apiVersion;
    const name = obj.metadata.name;
    // The stored object itself, frozen: read here, and parts of it carried into `next` are never changed in place.
    const old = this.peek(type, obj.metadata.namespace, name);
    if (!old) throw notFound(this.target(type, name));
    const wanted = obj.metadata.resourceVersion;
    if (wanted && wanted !== old.metadata.resourceVersion) {
      throw conflict(this.target(type, name), 'the object has been modified; please apply your changes to the latest version and try again');
    }
    const hasStatus = type.subresources?.some((s) => s.name === 'status') ?? false;

    let next: KubeObject;
    // `approval` (CertificateSigningRequests) writes status conditions as `status` writes status.
    if (opts.subresource === 'status' || opts.subresource === 'approval') {
      // The new revision shares what it does not change with the stored one (frozen): the spec of a
      // pod whose status moves on is held once, however many revisions the watch history keeps.
      next = type.strategy?.normalize ? structuredClone(old) : ({ ...old, metadata: { ...old.metadata } } as KubeObject);
      if (obj.status === undefined) delete next.status;
      else next.status = obj.status;
    } else {
      next = obj;
      if (hasStatus) {
        if ('status' in old) next.status = structuredClone(old.status);
        else delete next.status;
      }
      type.strategy?.applyDefaults?.(next);
      type.strategy?.prepareForUpdate?.(next, old);
    }
    type.strategy?.normalize?.(next);
    const serverOwned = ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'];
    if (!opts.keepManagedFields) serverOwned.push('managedFields');
    for (const field of serverOwned) {
      if (old.metadata[field] === undefined) delete next.metadata[field];
      else next.metadata[field] = old.metadata[field];
    }
    if (!next.metadata.generateName) delete next.metadata.generateName;
    if (next.metadata.finalizers?.length === 0) delete next.metadata.finalizers;
    const sameSpec = !!type.generation && specPart(type, next) === storedSpecPart(type, old);
    if (type.generation && !sameSpec) next.metadata.generation = Number(old.metadata.generation ?? 0) + 1;

    if (old.metadata.deletionTimestamp) {
      const added = (next.metadata.finalizers ?? []).filter((f) => !(old.metadata.finalizers ?? []).includes(f));
      if (added.length > 0) {
        throw invalid(type.kind, type.group, name, [
          { type: 'FieldValueForbidden', field: 'metadata.finalizers', detail: 'no new finalizers can be added if the object is being deleted' },
        ]);
      }
    }
    this.validate(type, next, opts.subresource ? undefined : old);
    next.metadata.resourceVersion = old.metadata.resourceVersion;
    if (comparable(next) === remembered(old, 'comparable', () => comparable(old)) && ownership(next) === remembered(old, 'ownership', () => ownership(old))) return old;
    // recordUpdate never changes the entries it reads: those it leaves alone are shared with the stored revision.
    if (opts.manager && !opts.keepManagedFields) recordUpdate(type, old, next, opts.manager, this.now(), opts.subresource);
    if (opts.dryRun) return next;

    // An object marked for deletion goes once its last finalizer is removed (and its grace period is over).
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length && !type.strategy?.beginDelete && !this.inGracePeriod(type, next)) {
      const gone = this.store.delete(type.group, type.plural, next.metadata.namespace, name)!;
      return { ...next, metadata: { ...next.metadata, resourceVersion: gone.metadata.resourceVersion } };
    }
    if (sameSpec && !type.strategy?.normalize) {
      // Equal as JSON: the stored revision's (frozen) parts serve the new one too.
      for (const k of Object.keys(next)) if (k !== 'metadata' && k !== 'status' && k in old) next[k] = old[k];
    }
    return this.store.update(type.group, type.plural, next, { adopt: true });
  }

  /** A pod deleted gracefully stays until its kubelet (the sandbox's pod controller) confirms the stop. */
  private inGracePeriod(type: ResourceType, obj: KubeObject): boolean {
    return type.group === '' && type.plural === 'pods' && Number(obj.metadata.deletionGracePeriodSeconds ?? 0) > 0;
  }

  /** Starts or completes the deletion of one object. */
  delete(type: ResourceType, namespace: string | undefined, name: string, opts: DeleteOptions = {}): DeleteResult {
    const obj = this.get(type, namespace, name);
    const pre = opts.preconditions;
    // The API server checks a delete's preconditions before it deletes, and names the object by its kind there.
    const byKind = { group: type.group, resource: type.kind, name };
    if (pre?.uid && pre.uid !== obj.metadata.uid) {
      throw conflict(
        byKind,
        `the UID in the precondition (${pre.uid}) does not match the UID in record (${obj.metadata.uid}). The object might have been deleted and then recreated`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== obj.metadata.resourceVersion) {
      throw conflict(
        byKind,
        `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${obj.metadata.resourceVersion}). The object might have been modified`,
      );
    }
    const now = this.now();

    if (type.strategy?.beginDelete) {
      const before = JSON.stringify(obj);
      const kept = type.strategy.beginDelete(obj, now);
      if (kept && JSON.stringify(kept) === before) return { object: kept, removed: false };
      if (kept) return { object: opts.dryRun ? kept : this.store.update(type.group, type.plural, kept), removed: false };
    }

    const meta = obj.metadata;
    const finalizers = [...(meta.finalizers ?? [])];
    const policy = opts.propagationPolicy ?? 'Background';
    if (policy === 'Foreground' && !finalizers.includes(FOREGROUND_FINALIZER) && !finalizers.includes(ORPHAN_FINALIZER)) finalizers.push(FOREGROUND_FINALIZER);
    if (policy === 'Orphan' && !finalizers.includes(ORPHAN_FINALIZER) && !finalizers.includes(FOREGROUND_FINALIZER)) finalizers.push(ORPHAN_FINALIZER);

    let grace = 0;
    if (this.isPod(type)) {
      const spec = (obj.spec ?? {}) as { terminationGracePeriodSeconds?: number; nodeName?: string };
      const phase = (obj.status as { phase?: string } | undefined)?.phase;
      grace = opts.gracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? 30;
      // Like the real pod storage: a pod no kubelet runs (unscheduled or finished) goes at once.
      if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') grace = 0;
      if (meta.deletionTimestamp && meta.deletionGracePeriodSeconds !== undefined) grace = Math.min(grace, Number(meta.deletionGracePeriodSeconds));
    }

    if (finalizers.length === 0 && grace === 0) {
      const gone = opts.dryRun ? obj : this.store.delete(type.group, type.plural, meta.namespace, name)!;
      return { object: gone, removed: true };
    }
    const sameFinalizers = JSON.stringify(finalizers) === JSON.stringify(meta.finalizers ?? []);
    if (meta.deletionTimestamp && sameFinalizers && Number(meta.deletionGracePeriodSeconds ?? 0) === grace) {
      return { object: obj, removed: false };
    }
    const marked = structuredClone(obj);
    marked.metadata.deletionTimestamp =
      meta.deletionTimestamp && grace === Number(meta.deletionGracePeriodSeconds ?? 0) ? meta.deletionTimestamp : rfc3339(new Date(now.getTime() + grace * 1000));
    marked.metadata.deletionGracePeriodSeconds = grace;
    if (finalizers.length) marked.metadata.finalizers = finalizers;
    if (type.generation) marked.metadata.generation = Number(meta.generation ?? 0) + (meta.deletionTimestamp ? 0 : 1);
    if (opts.dryRun) return { object: marked, removed: false };
    return { object: this.store.update(type.group, type.plural, marked), removed: false };
  }

  private isPod(type: ResourceType): boolean {
    return type.group === '' && type.plural === 'pods';
  }
}
