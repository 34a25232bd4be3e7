/**
 * What every in-process controller shares: a work queue keyed by object
 * (deduplicated, run on a later turn of the event loop, as an informer's
 * handler would), timers that stop with the sandbox, and small helpers for
 * owner references and pod state.
 */
import { createHash } from 'node:crypto';
import type { ObjectApi } from '../objects.js';
import type { KubeObject, ResourceType } from '../resources.js';
import type { StoreEvent } from '../store.js';
import type { FaultRules } from '../faults.js';

/** Options of the in-process controllers. */
export interface ControllerOptions {
  /** Run the workload controllers at all (default true). Garbage collection and namespaces always run. */
  enabled?: boolean;
  /** How long a scheduled pod takes to become Running and Ready (default 200 ms). Job pods take as long again to succeed. */
  readyDelayMs?: number;
  /** How long a pod deleted with a grace period stays Terminating (default: readyDelayMs, at most the grace period). */
  terminationDelayMs?: number;
  /**
   * Emulate the Cluster API controllers for the kinds CRDs define (default
   * true; controllers/cluster-api.ts): Clusters get a workload API server of
   * their own, MachineDeployments get Machines. The steps take readyDelayMs each.
   */
  clusterApi?: boolean;
}

export interface ControllerContext {
  api: ObjectApi;
  faults: FaultRules;
  readyDelayMs: number;
  terminationDelayMs: number;
  /** The sandbox CA, published in every namespace as the `kube-root-ca.crt` ConfigMap. */
  caPem: string;
}

export interface Controller {
  stop(): void;
}

/** A deduplicating work queue that runs `reconcile(key)` soon, and again on errors. */
export class WorkQueue {
  private readonly pending = new Map<string, NodeJS.Immediate>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly reconcile: (key: string) => void) {}

  add(key: string): void {
    if (this.stopped || this.pending.has(key)) return;
    this.pending.set(
      key,
      setImmediate(() => {
        this.pending.delete(key);
        try {
          this.reconcile(key);
        } catch {
          // A conflict or a vanished object: try again shortly, as a controller requeues with backoff.
          this.addAfter(key, 20);
        }
      }),
    );
  }

  /** Runs `key` after `ms`; a later call for the same key replaces the earlier timer. */
  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    const previous = this.timers.get(key);
    if (previous) clearTimeout(previous);
    const t = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    t.unref();
    this.timers.set(key, t);
  }

  stop(): void {
    this.stopped = true;
    for (const h of this.pending.values()) clearImmediate(h);
    for (const t of this.timers.values()) clearTimeout(t);
    this.pending.clear();
    this.timers.clear();
  }
}

export const CONTROLLER_MANAGER = 'kube-controller-manager';

type Obj = Record<string, any>;

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export function ownerRefs(obj: KubeObject): OwnerReference[] {
  return (obj.metadata.ownerReferences as OwnerReference[] | undefined) ?? [];
}

export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return ownerRefs(obj).find((r) => r.controller);
}

export function isControlledBy(obj: KubeObject, owner: KubeObject): boolean {
  return controllerOf(obj)?.uid === owner.metadata.uid;
}

/** The owner reference a controller puts on what it creates. */
export function controllerRef(owner: KubeObject, type: ResourceType): OwnerReference {
  return {
    apiVersion: type.group ? `${type.group}/${type.version}` : type.version,
    kind: type.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export const key = (obj: KubeObject): string => `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;

export function splitKey(k: string): { namespace: string | undefined; name: string } {
  const i = k.indexOf('/');
  const ns = k.slice(0, i);
  return { namespace: ns === '' ? undefined : ns, name: k.slice(i + 1) };
}

export const isEvent = (event: StoreEvent, group: string, resource: string): boolean => event.group === group && event.resource === resource;

/**
 * Runs `reconcile` for every object of `owner`, and again whenever it changes
 * or an object of `owned` that it controls does (as an informer on both
 * would). `also` enqueues on other events (a DaemonSet on nodes).
 */
export function runOwnerController(
  api: ObjectApi,
  owner: { type: ResourceType; kind: string },
  owned: { group: string; resource: string },
  reconcile: (key: string) => void,
  also?: (event: StoreEvent, enqueue: (key: string) => void) => void,
): Controller {
  const queue = new WorkQueue(reconcile);
  const enqueue = (k: string) => queue.add(k);
  const unsubscribe = api.store.subscribe((event) => {
    if (isEvent(event, owner.type.group, owner.type.plural)) queue.add(key(event.object));
    else if (isEvent(event, owned.group, owned.resource)) {
      const ref = controllerOf(event.object);
      if (ref?.kind === owner.kind) queue.add(`${event.object.metadata.namespace}/${ref.name}`);
    }
    also?.(event, enqueue);
  });
  for (const obj of api.scan(owner.type)) queue.add(key(obj));
  return {
    stop() {
      unsubscribe();
      queue.stop();
    },
  };
}

export const spec = (o: KubeObject): Obj => (o.spec as Obj | undefined) ?? {};
export const status = (o: KubeObject): Obj => (o.status as Obj | undefined) ?? {};

export function isPodReady(pod: KubeObject): boolean {
  return ((status(pod).conditions as Obj[] | undefined) ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

export function isPodActive(pod: KubeObject): boolean {
  const phase = status(pod).phase;
  return !pod.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed';
}

/** A short, stable, DNS-safe hash of a pod template, like pod-template-hash and controller-revision-hash. */
export function templateHash(template: unknown): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  const digest = createHash('sha256')
    .update(JSON.stringify(template ?? {}))
    .digest();
  return [...digest.subarray(0, 10)].map((b) => alphabet[b % alphabet.length]).join('');
}

/** A condition list with one condition set; times move only when the status changes. */
export function setCondition(conditions: Obj[] | undefined, next: Obj, now: string, withUpdateTime = false): Obj[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === next.type);
  const old = i >= 0 ? list[i] : undefined;
  const changed = !old || old.status !== next.status;
  const cond: Obj = { ...next };
  if (withUpdateTime) cond.lastUpdateTime = changed || old?.reason !== next.reason ? now : (old?.lastUpdateTime ?? now);
  cond.lastTransitionTime = changed ? now : (old?.lastTransitionTime ?? now);
  if (i >= 0) list[i] = cond;
  else list.push(cond);
  return list;
}

/** Writes `next` as the object's status when it differs from what is stored. */
export function writeStatus(api: ObjectApi, type: ResourceType, obj: KubeObject, next: Obj): void {
  if (JSON.stringify(next) === JSON.stringify(obj.status ?? {})) return;
  api.update(type, { ...obj, status: next }, { subresource: 'status', manager: CONTROLLER_MANAGER });
}
