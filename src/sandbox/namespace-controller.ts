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
import type { KubeObject } from './resources.js';

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
    if (store.namespaceContents(name).length > 0) return; // Finalizers hold some content; their removal brings us back.
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
