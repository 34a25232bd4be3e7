/**
 * The in-memory object store, keyed by group/resource/namespace/name. Like
 * etcd behind a real API server it has one revision counter for everything:
 * each write takes the next number as the object's resourceVersion, and a
 * list reports the current one. Objects are copied in and out so no caller
 * can change stored state behind the store's back.
 *
 * Indexed by resource and namespace, by namespace, and by owner uid: a
 * controller's list of one namespace's pods, a namespace's deletion and the
 * garbage collector's look-up of dependents cost what they find, not the
 * whole store (a 500-object CNF, or 5 000 objects, stay linear).
 */
import type { KubeObject } from './resources.js';

export type StoreEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change, as watches stream it. */
export interface StoreEvent {
  type: StoreEventType;
  group: string;
  resource: string;
  object: KubeObject;
  /** For MODIFIED, the object as it was before (watches with selectors need both). */
  old?: KubeObject;
}

/** Where an object is stored. */
export interface StoredRef {
  group: string;
  resource: string;
  object: KubeObject;
}

export type StoreListener = (event: StoreEvent) => void;

export interface ListResult {
  items: KubeObject[];
  /** The store's revision when the list was taken. */
  resourceVersion: string;
}

function key(group: string, resource: string, namespace: string | undefined, name: string): string {
  return `${group}/${resource}/${namespace ?? ''}/${name}`;
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function ownerUids(obj: KubeObject): string[] {
  const refs = obj.metadata.ownerReferences as { uid?: string }[] | undefined;
  return refs ? refs.flatMap((r) => (r.uid ? [r.uid] : [])) : [];
}

export class ObjectStore {
  private readonly objects = new Map<string, KubeObject>();
  /** uid → key, for owner references and garbage collection. */
  private readonly byUid = new Map<string, string>();
  /** group/resource → namespace ('' when cluster-scoped) → name → object. */
  private readonly byResource = new Map<string, Map<string, Map<string, KubeObject>>>();
  /** group/resource/namespace → its names sorted, kept until a create or delete there. */
  private readonly sortedNames = new Map<string, string[]>();
  /** namespace → keys of the objects in it, in the order they were created. */
  private readonly byNamespace = new Map<string, Set<string>>();
  /** owner uid → keys of the objects whose ownerReferences name it. */
  private readonly byOwner = new Map<string, Set<string>>();
  private readonly listeners = new Set<StoreListener>();
  private revision = 0;
  private readonly pending: StoreEvent[] = [];
  private emitting = false;

  /** The latest revision, as a resourceVersion string. */
  currentResourceVersion(): string {
    return String(this.revision);
  }

  get(group: string, resource: string, namespace: string | undefined, name: string): KubeObject | undefined {
    const obj = this.objects.get(key(group, resource, namespace, name));
    return obj && structuredClone(obj);
  }

  /** Objects of one resource, in one namespace or all, sorted by namespace then name. */
  list(group: string, resource: string, namespace?: string): ListResult {
    const spaces = this.byResource.get(`${group}/${resource}`);
    const items: KubeObject[] = [];
    if (spaces) {
      // The order of the keys `namespace/name` as strings: namespaces by `namespace/`, then names.
      const order = namespace === undefined ? [...spaces.keys()].sort((a, b) => compare(a + '/', b + '/')) : spaces.has(namespace) ? [namespace] : [];
      for (const ns of order) {
        const names = spaces.get(ns)!;
        const sortKey = `${group}/${resource}/${ns}`;
        let sorted = this.sortedNames.get(sortKey);
        if (!sorted) this.sortedNames.set(sortKey, (sorted = [...names.keys()].sort(compare)));
        for (const name of sorted) items.push(structuredClone(names.get(name)!));
      }
    }
    return { items, resourceVersion: this.currentResourceVersion() };
  }

  /** Stores a new object; the caller has checked it does not exist. Returns the stored copy. */
  create(group: string, resource: string, obj: KubeObject): KubeObject {
    return this.write('ADDED', group, resource, obj);
  }

  /** Replaces an existing object. Returns the stored copy. */
  update(group: string, resource: string, obj: KubeObject): KubeObject {
    return this.write('MODIFIED', group, resource, obj);
  }

  /** Removes an object; returns it as it was last stored, or undefined if it was not there. */
  delete(group: string, resource: string, namespace: string | undefined, name: string): KubeObject | undefined {
    const k = key(group, resource, namespace, name);
    const obj = this.objects.get(k);
    if (!obj) return undefined;
    this.objects.delete(k);
    this.unindex(group, resource, k, obj);
    if (obj.metadata.uid) this.byUid.delete(obj.metadata.uid);
    // Like etcd, a delete is a write: watchers see the object at the delete's revision.
    const deleted = structuredClone(obj);
    deleted.metadata.resourceVersion = String(++this.revision);
    this.emit({ type: 'DELETED', group, resource, object: deleted });
    return structuredClone(deleted);
  }

  /** Every namespaced object in `namespace`, whatever its resource. */
  namespaceContents(namespace: string): { group: string; resource: string; object: KubeObject }[] {
    const found: { group: string; resource: string; object: KubeObject }[] = [];
    for (const k of this.byNamespace.get(namespace) ?? []) {
      const obj = this.objects.get(k)!;
      if (obj.metadata.namespace !== namespace) continue;
      const [group, resource] = k.split('/');
      found.push({ group: group!, resource: resource!, object: structuredClone(obj) });
    }
    return found;
  }

  /** The object with this uid, wherever it is stored. */
  getByUid(uid: string): StoredRef | undefined {
    const k = this.byUid.get(uid);
    const obj = k === undefined ? undefined : this.objects.get(k);
    if (!obj || k === undefined) return undefined;
    const [group, resource] = k.split('/');
    return { group: group!, resource: resource!, object: structuredClone(obj) };
  }

  /** Objects that name `uid` in their owner references. */
  dependentsOf(uid: string): StoredRef[] {
    const found: StoredRef[] = [];
    for (const k of this.byOwner.get(uid) ?? []) {
      const obj = this.objects.get(k)!;
      const [group, resource] = k.split('/');
      found.push({ group: group!, resource: resource!, object: structuredClone(obj) });
    }
    return found;
  }

  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private write(type: StoreEventType, group: string, resource: string, obj: KubeObject): KubeObject {
    const stored = structuredClone(obj);
    stored.metadata.resourceVersion = String(++this.revision);
    const k = key(group, resource, stored.metadata.namespace, stored.metadata.name);
    const old = this.objects.get(k);
    this.objects.set(k, stored);
    if (old) this.unindex(group, resource, k, old, stored);
    this.indexObject(group, resource, k, stored);
    if (stored.metadata.uid) this.byUid.set(stored.metadata.uid, k);
    const event: StoreEvent = { type, group, resource, object: structuredClone(stored) };
    if (type === 'MODIFIED' && old) event.old = structuredClone(old);
    this.emit(event);
    return structuredClone(stored);
  }

  private indexObject(group: string, resource: string, k: string, obj: KubeObject): void {
    const ns = obj.metadata.namespace ?? '';
    let spaces = this.byResource.get(`${group}/${resource}`);
    if (!spaces) this.byResource.set(`${group}/${resource}`, (spaces = new Map()));
    let names = spaces.get(ns);
    if (!names) spaces.set(ns, (names = new Map()));
    if (!names.has(obj.metadata.name)) this.sortedNames.delete(`${group}/${resource}/${ns}`);
    names.set(obj.metadata.name, obj);
    let inNamespace = this.byNamespace.get(ns);
    if (!inNamespace) this.byNamespace.set(ns, (inNamespace = new Set()));
    inNamespace.add(k);
    for (const uid of ownerUids(obj)) {
      let dependents = this.byOwner.get(uid);
      if (!dependents) this.byOwner.set(uid, (dependents = new Set()));
      dependents.add(k);
    }
  }

  /** Drops `obj` from the indexes; with `next` (an update of the same key), only what it no longer has. */
  private unindex(group: string, resource: string, k: string, obj: KubeObject, next?: KubeObject): void {
    const kept = new Set(next ? ownerUids(next) : []);
    for (const uid of ownerUids(obj)) {
      if (kept.has(uid)) continue;
      const dependents = this.byOwner.get(uid);
      dependents?.delete(k);
      if (dependents?.size === 0) this.byOwner.delete(uid);
    }
    if (next) return;
    const ns = obj.metadata.namespace ?? '';
    const names = this.byResource.get(`${group}/${resource}`)?.get(ns);
    names?.delete(obj.metadata.name);
    if (names?.size === 0) this.byResource.get(`${group}/${resource}`)!.delete(ns);
    this.sortedNames.delete(`${group}/${resource}/${ns}`);
    const inNamespace = this.byNamespace.get(ns);
    inNamespace?.delete(k);
    if (inNamespace?.size === 0) this.byNamespace.delete(ns);
  }

  /**
   * Delivers events in revision order to every listener, even when a
   * listener writes while being told about an earlier change.
   */
  private emit(event: StoreEvent): void {
    this.pending.push(event);
    if (this.emitting) return;
    this.emitting = true;
    try {
      for (let e = this.pending.shift(); e; e = this.pending.shift()) {
        for (const listener of this.listeners) listener(e);
      }
    } finally {
      this.emitting = false;
    }
  }
}
