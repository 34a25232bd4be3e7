/**
 * What the emulated Cluster API controllers share (controllers/cluster-api.ts):
 * the groups, labels and finalizers they act on, the phase clock that holds
 * each step back for the ready delay, and the status, finalizer and Machine
 * writes every reconciler makes.
 */
import type { ObjectApi } from '../objects.js';
import { generateNameSuffix } from '../generate-name.js';
import { rfc3339, type KubeObject, type ResourceType } from '../resources.js';
import { controllerRef, isControlledBy, setCondition, status, WorkQueue, type ControllerContext } from './base.js';

export const CAPI_GROUP = 'cluster.x-k8s.io';
export const CONTROL_PLANE_GROUP = 'controlplane.cluster.x-k8s.io';
export const INFRASTRUCTURE_GROUP = 'infrastructure.cluster.x-k8s.io';
export const BOOTSTRAP_GROUP = 'bootstrap.cluster.x-k8s.io';

export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
export const DEPLOYMENT_NAME_LABEL = 'cluster.x-k8s.io/deployment-name';
export const SET_NAME_LABEL = 'cluster.x-k8s.io/set-name';
export const CONTROL_PLANE_LABEL = 'cluster.x-k8s.io/control-plane';
export const CONTROL_PLANE_NAME_LABEL = 'cluster.x-k8s.io/control-plane-name';
export const TEMPLATE_HASH_LABEL = 'machine-template-hash';
/** Machines marked with this annotation go first when their owner scales in. */
export const DELETE_MACHINE_ANNOTATION = 'cluster.x-k8s.io/delete-machine';
export const CLUSTER_FINALIZER = 'cluster.cluster.x-k8s.io';
export const MACHINE_FINALIZER = 'machine.cluster.x-k8s.io';
export const MANAGER = 'cluster-api-controller';

export const CAPI_GROUPS = new Set([CAPI_GROUP, CONTROL_PLANE_GROUP, INFRASTRUCTURE_GROUP, BOOTSTRAP_GROUP]);

export type Obj = Record<string, any>;

/** A condition to set: its type, whether it holds, its reason and message. */
export type ConditionSpec = [type: string, ok: boolean, reason: string, message?: string];

/** A referenced object: its served type, and the object when it exists. */
export interface Resolved {
  type: ResourceType;
  obj: KubeObject | undefined;
}

export const isTrue = (obj: KubeObject | undefined, type: string): boolean =>
  ((status(obj ?? ({} as KubeObject)).conditions as Obj[] | undefined) ?? []).some((c) => c.type === type && c.status === 'True');

/** The group a reference names (v1beta1 `apiVersion`, v1beta2 `apiGroup`). */
export function refGroup(ref: Obj): string {
  if (typeof ref.apiGroup === 'string') return ref.apiGroup;
  const apiVersion = String(ref.apiVersion ?? '');
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
}

/** The work queue's key of an object: `group|kind|namespace|name`. */
export const keyOf = (group: string, kind: string, namespace: string | undefined, name: string): string => `${group}|${kind}|${namespace ?? ''}|${name}`;

export const isRunning = (m: KubeObject): boolean => status(m).phase === 'Running';

/** Which machines go first on scale-in: marked ones, then the newest. */
export function deletionOrder(machines: KubeObject[]): KubeObject[] {
  const marked = (m: KubeObject): number => (m.metadata.annotations?.[DELETE_MACHINE_ANNOTATION] !== undefined ? 0 : 1);
  return [...machines].sort(
    (a, b) => marked(a) - marked(b) || String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp)) || b.metadata.name.localeCompare(a.metadata.name),
  );
}

/** The API, the work queue and the phase clock the Cluster API reconcilers share, with the writes they all make. */
export class CapiKit {
  readonly api: ObjectApi;
  readonly queue: WorkQueue;
  /** When an object may leave its current phase: `uid/phase` → epoch ms. */
  readonly readyAt = new Map<string, number>();
  /** Infrastructure objects marked ready whose schema may have pruned the mark. */
  readonly provisioned = new Set<string>();

  constructor(
    readonly ctx: ControllerContext,
    reconcile: (key: string) => void,
  ) {
    this.api = ctx.api;
    this.queue = new WorkQueue(reconcile);
  }

  /** The served type of `group`/`kind`, through the CRD's storage version when there is a choice. */
  typeOf(group: string, kind: string): ResourceType | undefined {
    const types = this.api.registry.all().filter((t) => t.group === group && t.kind === kind);
    return types.find((t) => t.custom?.storageVersion === t.version) ?? types[0];
  }

  kindOf(group: string, plural: string): string | undefined {
    return this.api.registry.all().find((t) => t.group === group && t.plural === plural)?.kind;
  }

  now(): string {
    return rfc3339(this.api.now());
  }

  /** True once `delayMs` has passed since the object entered `phase`; schedules the check otherwise. */
  elapsed(key: string, obj: KubeObject, phase: string, delayMs = this.ctx.readyDelayMs): boolean {
    const k = `${obj.metadata.uid}/${phase}`;
    const at = this.readyAt.get(k);
    const t = Date.now();
    if (at === undefined) {
      this.readyAt.set(k, t + delayMs);
      if (delayMs <= 0) return true;
      this.queue.addAfter(key, delayMs);
      return false;
    }
    if (t >= at) return true;
    this.queue.addAfter(key, at - t);
    return false;
  }

  /** Forgets the phase clock of a deleted object. */
  forget(uid: string | undefined): void {
    for (const k of [...this.readyAt.keys()]) if (k.startsWith(`${uid}/`)) this.readyAt.delete(k);
  }

  conditions(obj: KubeObject, list: ConditionSpec[]): Obj[] {
    let out = (status(obj).conditions as Obj[] | undefined) ?? [];
    const generation = obj.metadata.generation;
    for (const [type, ok, reason, message] of list) {
      const c: Obj = { type, status: ok ? 'True' : 'False', reason, message: message ?? '' };
      if (!ok) c.severity = 'Info';
      if (generation !== undefined) c.observedGeneration = generation;
      out = setCondition(out, c, this.now());
    }
    return out;
  }

  writeStatus(type: ResourceType, obj: KubeObject, next: Obj): KubeObject {
    if (JSON.stringify(next) === JSON.stringify(obj.status ?? {})) return obj;
    return this.api.update(type, { ...obj, status: next }, { subresource: 'status', manager: MANAGER });
  }

  addFinalizer(type: ResourceType, obj: KubeObject, finalizer: string): KubeObject {
    if (obj.metadata.finalizers?.includes(finalizer)) return obj;
    return this.api.update(type, { ...obj, metadata: { ...obj.metadata, finalizers: [...(obj.metadata.finalizers ?? []), finalizer] } }, { manager: MANAGER });
  }

  removeFinalizer(type: ResourceType, obj: KubeObject, finalizer: string): void {
    if (!obj.metadata.finalizers?.includes(finalizer)) return;
    this.api.update(type, { ...obj, metadata: { ...obj.metadata, finalizers: obj.metadata.finalizers.filter((f) => f !== finalizer) } }, { manager: MANAGER });
  }

  resolve(namespace: string | undefined, ref: Obj | undefined): Resolved | undefined {
    if (!ref?.kind || !ref.name) return undefined;
    const type = this.typeOf(refGroup(ref), ref.kind);
    if (!type) return undefined;
    return { type, obj: this.api.find(type, ref.namespace ?? namespace, ref.name) };
  }

  tryDelete(type: ResourceType, obj: KubeObject): void {
    if (obj.metadata.deletionTimestamp) return;
    try {
      this.api.delete(type, obj.metadata.namespace, obj.metadata.name, { propagationPolicy: 'Background' });
    } catch {
      // Gone already.
    }
  }

  ownedMachines(owner: KubeObject): KubeObject[] {
    const type = this.typeOf(CAPI_GROUP, 'Machine');
    if (!type) return [];
    return this.api.list(type, owner.metadata.namespace).filter((m) => isControlledBy(m, owner));
  }

  createMachine(owner: KubeObject, ownerType: ResourceType, labels: Record<string, string>, annotations: Record<string, string> | undefined, machineSpec: Obj): void {
    const type = this.typeOf(CAPI_GROUP, 'Machine');
    if (!type) return;
    const metadata: Obj = {
      name: `${owner.metadata.name}-${generateNameSuffix()}`,
      namespace: owner.metadata.namespace,
      labels,
      ownerReferences: [controllerRef(owner, ownerType)],
    };
    if (annotations && Object.keys(annotations).length) metadata.annotations = annotations;
    this.api.create(type, { metadata, spec: machineSpec } as unknown as KubeObject, { manager: MANAGER });
  }
}
