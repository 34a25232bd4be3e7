/**
 * The namespace controller's job, reduced to what clients can observe: a
 * namespace marked for deletion (phase Terminating) has its content deleted,
 * then its `kubernetes` finalizer removed, then it is gone. The work runs on
 * a later turn of the event loop, as a controller reacting to the change
 * would, so the DELETE answer still shows the namespace Terminating.
 */
import type { ObjectStore } from './store.js';

export interface Controller {
  stop(): void;
}

export function startNamespaceController(store: ObjectStore): Controller {
  const pending = new Map<string, NodeJS.Immediate>();

  function finalize(name: string): void {
    pending.delete(name);
    const ns = store.get('', 'namespaces', undefined, name);
    if (!ns?.metadata.deletionTimestamp) return;
    for (const { group, resource, object } of store.namespaceContents(name)) {
      store.delete(group, resource, name, object.metadata.name);
    }
    const spec = (ns.spec ?? {}) as { finalizers?: string[] };
    const finalizers = spec.finalizers ?? [];
    const others = finalizers.filter((f) => f !== 'kubernetes');
    if (others.length > 0 || ns.metadata.finalizers?.length) {
      // Someone else's finalizer still holds it; they remove theirs through an update.
      if (others.length !== finalizers.length) store.update('', 'namespaces', { ...ns, spec: { ...spec, finalizers: others } });
      return;
    }
    store.delete('', 'namespaces', undefined, name);
  }

  const unsubscribe = store.subscribe((event) => {
    if (event.group !== '' || event.resource !== 'namespaces' || event.type === 'DELETED') return;
    const name = event.object.metadata.name;
    if (event.object.metadata.deletionTimestamp && !pending.has(name)) {
      pending.set(name, setImmediate(() => finalize(name)));
    }
  });

  return {
    stop() {
      unsubscribe();
      for (const handle of pending.values()) clearImmediate(handle);
      pending.clear();
    },
  };
}
