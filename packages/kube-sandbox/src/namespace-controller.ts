/**
 * The namespace controller's job, reduced to what clients can observe: a
 * namespace marked for deletion (phase Terminating) has its content deleted
 * — objects with finalizers stay until those are removed — and once it is
 * empty its `kubernetes` finalizer goes, then the namespace. The work runs
 * on a later turn of the event loop, as a controller reacting to the change
 * would, so the DELETE answer still shows the namespace Terminating.
 *
 * It also does what the service-account and root-CA publisher controllers
 * do for a new namespace: the `default` ServiceAccount and the
 * `kube-root-ca.crt` ConfigMap.
 */
import { CONTROLLER_MANAGER, WorkQueue, type Controller, type ControllerContext } from './controllers/base.js';
import { rfc3339, type KubeObject } from './resources.js';

export type { Controller } from './controllers/base.js';

export function startNamespaceController(ctx: Pick<ControllerContext, 'api' | 'caPem'>): Controller {
  const { api } = ctx;
  const store = api.store;

  function populate(name: string): void {
    const sa = api.type('', 'serviceaccounts');
    const cm = api.type('', 'configmaps');
    if (!api.find(sa, name, 'default')) api.create(sa, { metadata: { name: 'default', namespace: name } } as KubeObject, { manager: CONTROLLER_MANAGER });
    if (!api.find(cm, name, 'kube-root-ca.crt')) {
      api.create(cm, { metadata: { name: 'kube-root-ca.crt', namespace: name }, data: { 'ca.crt': ctx.caPem } } as unknown as KubeObject, { manager: CONTROLLER_MANAGER });
    }
  }

  function finalize(name: string): void {
    const ns = store.get('', 'namespaces', undefined, name);
    if (!ns) return;
    if (!ns.metadata.deletionTimestamp) {
      populate(name);
      return;
    }
    const contents = store.namespaceContents(name);
    for (const { group, resource, object } of contents) {
      if (object.metadata.deletionTimestamp) continue;
      try {
        api.delete(api.type(group, resource), name, object.metadata.name, { propagationPolicy: 'Background' });
      } catch {
        // Gone already.
      }
    }
    const remaining = store.namespaceContents(name);
    setDeletionConditions(ns, remaining);
    if (remaining.length > 0) return; // Finalizers hold some content; their removal brings us back.
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

  /** The conditions the namespace controller reports while it empties a namespace. */
  function setDeletionConditions(ns: KubeObject, remaining: { group: string; resource: string; object: KubeObject }[]): void {
    const byResource = new Map<string, number>();
    const byFinalizer = new Map<string, number>();
    for (const { group, resource, object } of remaining) {
      const key = `${resource}.${group}`;
      byResource.set(key, (byResource.get(key) ?? 0) + 1);
      for (const f of object.metadata.finalizers ?? []) byFinalizer.set(f, (byFinalizer.get(f) ?? 0) + 1);
    }
    const list = (m: Map<string, number>, sep: string): string =>
      [...m]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, n]) => `${k}${sep}${n} resource instances`)
        .join(', ');
    const wanted = [
      ['NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered', 'All resources successfully discovered'],
      ['NamespaceDeletionGroupVersionParsingFailure', 'False', 'ParsedGroupVersions', 'All legacy kube types successfully parsed'],
      ['NamespaceDeletionContentFailure', 'False', 'ContentDeleted', 'All content successfully deleted, may be waiting on finalization'],
      byResource.size
        ? ['NamespaceContentRemaining', 'True', 'SomeResourcesRemain', `Some resources are remaining: ${list(byResource, ' has ')}`]
        : ['NamespaceContentRemaining', 'False', 'ContentRemoved', 'All content successfully removed'],
      byFinalizer.size
        ? ['NamespaceFinalizersRemaining', 'True', 'SomeFinalizersRemain', `Some content in the namespace has finalizers remaining: ${list(byFinalizer, ' in ')}`]
        : ['NamespaceFinalizersRemaining', 'False', 'ContentHasNoFinalizers', 'All content-preserving finalizers have been removed'],
    ];
    const status = (ns.status ?? {}) as { phase?: string; conditions?: Record<string, string>[] };
    const before = status.conditions ?? [];
    const time = rfc3339(api.now());
    const conditions = wanted.map(([type, st, reason, message]) => {
      const old = before.find((c) => c.type === type);
      const lastTransitionTime = old && old.status === st ? old.lastTransitionTime! : time;
      return { type: type!, status: st!, lastTransitionTime, reason: reason!, message: message! };
    });
    if (JSON.stringify(conditions) === JSON.stringify(before)) return;
    store.update('', 'namespaces', { ...ns, status: { ...status, conditions } });
  }

  const queue = new WorkQueue(finalize);
  const unsubscribe = store.subscribe((event) => {
    if (event.group === '' && event.resource === 'namespaces') {
      if (event.type !== 'DELETED') queue.add(event.object.metadata.name);
      return;
    }
    const ns = event.object.metadata.namespace;
    if (ns && event.type === 'DELETED') {
      const owner = store.get('', 'namespaces', undefined, ns);
      if (owner?.metadata.deletionTimestamp) queue.add(ns);
    }
  });
  for (const ns of store.list('', 'namespaces').items) queue.add(ns.metadata.name);

  return {
    stop() {
      unsubscribe();
      queue.stop();
    },
  };
}
