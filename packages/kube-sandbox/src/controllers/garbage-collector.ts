/**
 * The garbage collector, reduced to the rules clients can observe:
 * - an object all of whose owners are gone is deleted (background);
 * - an owner deleted in the foreground (`foregroundDeletion` finalizer) has
 *   its dependents deleted — those that block owner deletion in the
 *   foreground too — and goes once no dependent with
 *   `blockOwnerDeletion: true` remains;
 * - an owner deleted with `Orphan` (`orphan` finalizer) has its owner
 *   references removed from its dependents, then goes.
 */
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../objects.js';
import type { KubeObject } from '../resources.js';
import type { StoredRef } from '../store.js';
import { CONTROLLER_MANAGER, ownerRefs, WorkQueue, type Controller, type ControllerContext } from './base.js';

const GC_MANAGER = 'kube-controller-manager';

export function startGarbageCollector(ctx: ControllerContext): Controller {
  const { api } = ctx;
  const store = api.store;

  function typeOf(ref: StoredRef) {
    return api.type(ref.group, ref.resource);
  }

  /** Whether the owner a reference names still exists (same uid). */
  function ownerExists(ref: { uid: string }): boolean {
    return store.peekByUid(ref.uid) !== undefined;
  }

  function deleteDependent(dep: StoredRef, foreground: boolean): void {
    if (dep.object.metadata.deletionTimestamp && !foreground) return;
    const type = typeOf(dep);
    try {
      api.delete(type, dep.object.metadata.namespace, dep.object.metadata.name, { propagationPolicy: foreground ? 'Foreground' : 'Background' });
    } catch {
      // Already gone.
    }
  }

  /** An object being deleted with a GC finalizer: act on its dependents, then drop the finalizer when done. */
  function processOwner(uid: string): void {
    const owner = store.peekByUid(uid);
    if (!owner?.object.metadata.deletionTimestamp) return;
    const finalizers = owner.object.metadata.finalizers ?? [];
    const dependents = store.peekDependents(uid);
    if (finalizers.includes(ORPHAN_FINALIZER)) {
      for (const dep of dependents) {
        const next = structuredClone(dep.object);
        next.metadata.ownerReferences = ownerRefs(next).filter((r) => r.uid !== uid);
        if ((next.metadata.ownerReferences as unknown[]).length === 0) delete next.metadata.ownerReferences;
        api.update(typeOf(dep), next, { manager: GC_MANAGER });
      }
      removeFinalizer(owner, ORPHAN_FINALIZER);
      return;
    }
    if (!finalizers.includes(FOREGROUND_FINALIZER)) return;
    let blocking = 0;
    for (const dep of dependents) {
      const ref = ownerRefs(dep.object).find((r) => r.uid === uid)!;
      const blocks = ref.blockOwnerDeletion === true;
      // A dependent with another live owner stays; it no longer counts this one.
      const others = ownerRefs(dep.object).filter((r) => r.uid !== uid && ownerExists(r));
      if (others.length > 0) continue;
      if (blocks) blocking++;
      if (!dep.object.metadata.deletionTimestamp || (blocks && !(dep.object.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER))) {
        deleteDependent(dep, blocks);
      }
    }
    if (blocking === 0) removeFinalizer(owner, FOREGROUND_FINALIZER);
  }

  function removeFinalizer(ref: StoredRef, finalizer: string): void {
    const next = structuredClone(ref.object);
    next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    api.update(typeOf(ref), next, { manager: CONTROLLER_MANAGER });
  }

  /** An object whose owners are all gone is garbage. */
  function processDependent(uid: string): void {
    const dep = store.peekByUid(uid);
    if (!dep) return;
    const refs = ownerRefs(dep.object);
    if (refs.length === 0 || refs.some(ownerExists)) return;
    deleteDependent(dep, false);
  }

  const queue = new WorkQueue((k) => {
    const [what, uid] = k.split(':') as ['owner' | 'dependent', string];
    if (what === 'owner') processOwner(uid);
    else processDependent(uid);
  });

  function onObject(obj: KubeObject): void {
    const uid = obj.metadata.uid;
    if (!uid) return;
    const f = obj.metadata.finalizers ?? [];
    if (obj.metadata.deletionTimestamp && (f.includes(FOREGROUND_FINALIZER) || f.includes(ORPHAN_FINALIZER))) queue.add(`owner:${uid}`);
    if (ownerRefs(obj).length > 0) queue.add(`dependent:${uid}`);
  }

  const unsubscribe = store.subscribe((event) => {
    const obj = event.object;
    if (event.type !== 'DELETED') {
      onObject(obj);
      return;
    }
    // The owner is gone: its dependents may be garbage now.
    for (const dep of store.peekDependents(obj.metadata.uid ?? '')) queue.add(`dependent:${dep.object.metadata.uid}`);
    // A dependent is gone: an owner waiting in the foreground may be done.
    for (const ref of ownerRefs(obj)) queue.add(`owner:${ref.uid}`);
  });

  return {
    stop() {
      unsubscribe();
      queue.stop();
    },
  };
}
