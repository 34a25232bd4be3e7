/**
 * The in-memory object store, keyed by group/resource/namespace/name. Like
 * etcd behind a real API server it has one revision counter for everything:
 * each write takes the next number as the object's resourceVersion, and a
 * list reports the current one. Objects are copied in and out so no caller
 * can change stored state behind the store's back.
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

function prefix(group: string, resource: string, namespace?: string): string {
  return namespace === undefined ? `${group}/${resource}/` : `${group}/${resource}/${namespace}/`;
}

export class ObjectStore {
  private readonly objects = new Map<string, KubeObject>();
  /** uid → key, for owner references and garbage collection. */
  private readonly byUid = new Map<string, string>();
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
    const start = prefix(group, resource, namespace);
    const items = [...this.objects]
      .filter(([k]) => k.startsWith(start))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, obj]) => structuredClone(obj));
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
    for (const [k, obj] of this.objects) {
      const [group, resource, ns] = k.split('/');
      if (ns === namespace && obj.metadata.namespace === namespace) {
        found.push({ group: group!, resource: resource!, object: structuredClone(obj) });
      }
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

  /**
   * Objects that name `uid` in their owner references. A scan: the sandbox
   * holds hundreds of objects, not millions.
   */
  dependentsOf(uid: string): StoredRef[] {
    const found: StoredRef[] = [];
    for (const [k, obj] of this.objects) {
      const refs = obj.metadata.ownerReferences as { uid?: string }[] | undefined;
      if (!refs?.some((r) => r.uid === uid)) continue;
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
    if (stored.metadata.uid) this.byUid.set(stored.metadata.uid, k);
    const event: StoreEvent = { type, group, resource, object: structuredClone(stored) };
    if (type === 'MODIFIED' && old) event.old = structuredClone(old);
    this.emit(event);
    return structuredClone(stored);
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
