/**
 * Two core kinds that are not stored objects of their own: Binding, what a
 * scheduler posts to put a pod on a node (rest.ts binds the pod it names),
 * and ComponentStatus, the health of the control plane's parts
 * (`kubectl get cs`), read-only.
 */
import type { ObjectApi } from '../objects.js';
import type { KubeObject, ResourceType } from '../resources.js';
import { col, define, type Obj } from './kind-def.js';

/** `POST bindings`: the older way to bind a pod to a node, as `pods/binding` does (rest.ts); nothing is stored. */
const bindings: ResourceType = { ...define({ group: '', version: 'v1', kind: 'Binding', namespaced: true }), verbs: ['create'] };

/**
 * The health of the control plane's parts (`kubectl get cs`), read-only:
 * the sandbox registers one Healthy entry for each part a real server
 * checks (registerComponentStatuses).
 */
const componentStatuses: ResourceType = {
  ...define({
    group: '',
    version: 'v1',
    kind: 'ComponentStatus',
    plural: 'componentstatuses',
    namespaced: false,
    shortNames: ['cs'],
    noAgeColumn: true,
    columns: [
      col('Status', (o) => {
        const healthy = ((o.conditions as Obj[] | undefined) ?? []).find((c) => c.type === 'Healthy');
        return healthy?.status === 'True' ? 'Healthy' : 'Unhealthy';
      }),
      col('Message', (o) => ((o.conditions as Obj[] | undefined) ?? [])[0]?.message ?? ''),
      col('Error', (o) => ((o.conditions as Obj[] | undefined) ?? [])[0]?.error ?? ''),
    ],
  }),
  verbs: ['get', 'list'],
};

/** Binding and ComponentStatus. */
export function bindingAndHealthKinds(): ResourceType[] {
  return [bindings, componentStatuses];
}

/** The parts of the control plane whose health `componentstatuses` reports, all Healthy: the sandbox has no parts apart. */
export function registerComponentStatuses(api: ObjectApi): void {
  const type = api.type('', 'componentstatuses');
  const parts: [string, string][] = [
    ['controller-manager', 'ok'],
    ['etcd-0', '{"health":"true","reason":""}'],
    ['scheduler', 'ok'],
  ];
  for (const [name, message] of parts) {
    const status = { metadata: { name }, conditions: [{ type: 'Healthy', status: 'True', message }] } as unknown as KubeObject;
    api.create(type, status, { manager: 'kube-apiserver' });
  }
}
