/**
 * What an instance's objects are on the cluster now (vnf-describe): each
 * object vnfm applied, read live, with what it owns (Deployment →
 * ReplicaSets → Pods, StatefulSet → Pods, MachineDeployment → MachineSets →
 * Machines), its readiness as the driver judges it while waiting, the last
 * events of those not ready, and how it differs from what was applied.
 *
 * "Changed by hand" is read from `metadata.managedFields`, the API server's
 * own record of who set which field: an object vnfm applied is changed when
 * a field manager other than the instance's own (vnfm, or helm for a
 * release) owns fields outside metadata and status. It needs nothing
 * recorded at apply time, survives vnfm's own scale and change of package,
 * and names who changed it and when. Only `spec.replicas` set elsewhere is
 * left to the replica check (an autoscaler or `kubectl scale`).
 */
import type { ResourceRef } from '../driver.js';
import type { KubeClient } from './client.js';
import { collectionPath, describeRef, objectPath, type ApiResource, type Discovery } from './discovery.js';
import type { KubeObject } from './driver-contract.js';
import { refKey, refOf } from './objects.js';
import { forEachLimited } from './order.js';
import { isBuiltinGroup } from './package-kinds.js';
import { assessReadiness } from './readiness.js';
import type { ReadinessOverrides } from './readiness-rules.js';
import { withKind } from './watch.js';

export interface DescribeInput {
  /** The objects the instance records, in creation order. */
  resources: ResourceRef[];
  /** Where objects of a namespaced kind without a namespace are. */
  namespace: string;
  readiness?: ReadinessOverrides;
  /** Field managers whose writes are the instance's own (default: vnfm). */
  ownManagers?: string[];
  /** An adopted instance: every write made up to this time (ISO 8601) is the instance's own, whoever made it. */
  adoptedAt?: string;
  /** Events shown per object not ready (default 5). */
  events?: number;
}

/** One core/v1 Event of an object, newest last. */
export interface LiveEvent {
  type: string;
  reason: string;
  message: string;
  count: number;
  /** lastTimestamp, eventTime or firstTimestamp (ISO 8601). */
  time?: string;
}

/** An object as it is now, with what it owns. */
export interface LiveObject {
  ref: ResourceRef;
  /** Whether vnfm recorded it (an object it applied, or one of a Helm release) rather than found it owned by one. */
  applied: boolean;
  /** Absent when the object is gone. */
  exists: boolean;
  ready: boolean;
  /** "ready", or what it waits for ("0/2 replicas ready"), or "deleted". */
  reason: string;
  /** spec.replicas of a workload (or a custom resource with replicas). */
  replicas?: number;
  /** What differs from what was applied: "deleted", "changed by kubectl-edit at T: spec.template". */
  drift: string[];
  /** The last events, for an object not ready. */
  events: LiveEvent[];
  children: LiveObject[];
}

/** The kinds an owner's children are, by the owner's kind: [apiVersion or group prefix, kind]. */
const CHILD_KINDS: Record<string, Array<[string, string]>> = {
  Deployment: [['apps/v1', 'ReplicaSet']],
  ReplicaSet: [['v1', 'Pod']],
  StatefulSet: [['v1', 'Pod']],
  DaemonSet: [['v1', 'Pod']],
  Job: [['v1', 'Pod']],
  CronJob: [['batch/v1', 'Job']],
  MachineDeployment: [['cluster.x-k8s.io', 'MachineSet']],
  MachineSet: [['cluster.x-k8s.io', 'Machine']],
  MachinePool: [['cluster.x-k8s.io', 'Machine']],
  KubeadmControlPlane: [['cluster.x-k8s.io', 'Machine']],
};

const CAPI_GROUP = 'cluster.x-k8s.io';

type ManagedEntry = { manager?: string; operation?: string; time?: string; subresource?: string; fieldsV1?: Record<string, unknown> };

/**
 * What fields managers other than `own` set outside metadata and status,
 * one line per manager; spec.replicas alone (a scale) is left out; so are
 * writes last made by `adoptedAt` (an adopted object as it was taken over).
 */
export function handChanges(obj: KubeObject, own: ReadonlySet<string>, adoptedAt?: string): string[] {
  const entries = (obj.metadata['managedFields'] ?? []) as ManagedEntry[];
  // managedFields times are whole seconds: the adoption's second counts as before it.
  const adopted = adoptedAt ? Date.parse(adoptedAt.slice(0, 19) + 'Z') : undefined;
  const out: string[] = [];
  for (const e of entries) {
    if (!e.manager || own.has(e.manager) || (e.subresource && e.subresource !== 'scale')) continue;
    if (adopted !== undefined && e.time && Date.parse(e.time) <= adopted) continue;
    const paths = fieldPaths(e.fieldsV1 ?? {}).filter((p) => p !== 'spec.replicas');
    if (paths.length === 0) continue;
    const shown = paths.slice(0, 3).join(', ') + (paths.length > 3 ? `, +${paths.length - 3} more` : '');
    out.push(`changed by ${e.manager}${e.time ? ` at ${e.time}` : ''}: ${shown}`);
  }
  return out;
}

/** The field paths of a fieldsV1 set, two levels deep, without metadata and status. */
function fieldPaths(fields: Record<string, unknown>): string[] {
  const paths: string[] = [];
  for (const [key, sub] of Object.entries(fields)) {
    if (!key.startsWith('f:')) continue;
    const top = key.slice(2);
    if (top === 'metadata' || top === 'status') continue;
    const inner = typeof sub === 'object' && sub !== null ? Object.keys(sub).filter((k) => k.startsWith('f:')) : [];
    if (inner.length === 0) paths.push(top);
    else for (const k of inner) paths.push(`${top}.${k.slice(2)}`);
  }
  return paths;
}

const replicasOf = (obj: KubeObject): number | undefined => {
  const r = (obj.spec as { replicas?: unknown } | undefined)?.replicas;
  return typeof r === 'number' ? r : undefined;
};

const eventTime = (e: Record<string, unknown>): string | undefined =>
  (e['lastTimestamp'] as string | undefined) ?? (e['eventTime'] as string | undefined) ?? (e['firstTimestamp'] as string | undefined);

/** Reads the live tree of an instance's objects; writes nothing. */
export class LiveReader {
  private readonly lists = new Map<string, Promise<KubeObject[]>>();

  constructor(
    private readonly client: KubeClient,
    private readonly discovery: Discovery,
    private readonly signal: AbortSignal,
    private readonly limit = 8,
  ) {}

  async describe(input: DescribeInput): Promise<LiveObject[]> {
    const own = new Set(input.ownManagers ?? ['vnfm']);
    const read = await forEachLimited(input.resources, this.limit, (ref) => this.readApplied(ref, input, own));
    const nodes = read.map((r) => r.node);
    // An applied object owned by another applied one (a Cluster API MachineDeployment by its Cluster) goes under it.
    const byUid = new Map(read.flatMap((r) => (r.uid ? [[r.uid, r.node] as const] : [])));
    const top: LiveObject[] = [];
    read.forEach((r, i) => {
      const parent = r.ownerUids.map((u) => byUid.get(u)).find((p) => p && p !== nodes[i]);
      if (parent) parent.children.push(nodes[i]!);
      else top.push(nodes[i]!);
    });
    await this.addEvents(top, input.events ?? 5);
    return top;
  }

  private async readApplied(ref: ResourceRef, input: DescribeInput, own: ReadonlySet<string>): Promise<{ node: LiveObject; uid?: string; ownerUids: string[] }> {
    const withNs = ref.namespace || !(await this.namespaced(ref)) ? ref : { ...ref, namespace: input.namespace };
    const res = await this.discovery.tryResolve(ref.apiVersion, ref.kind, this.signal);
    const obj = res ? await this.read(res, withNs) : undefined;
    if (!obj) {
      const reason = res ? 'deleted' : `kind not served (${ref.apiVersion})`;
      return { node: { ref: withNs, applied: true, exists: false, ready: false, reason, drift: ['deleted'], events: [], children: [] }, ownerUids: [] };
    }
    const node = this.nodeOf(obj, true, input.readiness, res);
    node.drift.push(...handChanges(obj, own, input.adoptedAt));
    node.children = await this.childrenOf(obj, input.readiness);
    const ownerUids = ((obj.metadata['ownerReferences'] ?? []) as Array<{ uid?: string }>).flatMap((o) => (o.uid ? [o.uid] : []));
    return { node, ...(typeof obj.metadata['uid'] === 'string' ? { uid: obj.metadata['uid'] } : {}), ownerUids };
  }

  private async namespaced(ref: ResourceRef): Promise<boolean> {
    return (await this.discovery.tryResolve(ref.apiVersion, ref.kind, this.signal))?.namespaced ?? true;
  }

  private nodeOf(obj: KubeObject, applied: boolean, rules: ReadinessOverrides | undefined, res?: ApiResource): LiveObject {
    // As the driver judges it while waiting: a custom resource with a status subresource is ready only once its controller says so.
    const facts = res ? { reportsStatus: !isBuiltinGroup(res.group) && res.subresources.has('status') && !res.kind.endsWith('Template') } : {};
    const r = assessReadiness(obj, rules, facts);
    const replicas = replicasOf(obj);
    return {
      ref: refOf(obj),
      applied,
      exists: true,
      ready: r.ready,
      reason: r.failed ?? r.message,
      ...(replicas !== undefined ? { replicas } : {}),
      drift: [],
      events: [],
      children: [],
    };
  }

  /** What `owner` controls, by the kinds its kind makes, recursively. */
  private async childrenOf(owner: KubeObject, rules: ReadinessOverrides | undefined, depth = 0): Promise<LiveObject[]> {
    const kinds = CHILD_KINDS[owner.kind];
    const uid = owner.metadata['uid'];
    if (!kinds || typeof uid !== 'string' || depth > 3) return [];
    const out: LiveObject[] = [];
    for (const [version, kind] of kinds) {
      const res = await this.childResource(version, kind);
      if (!res) continue;
      const items = (await this.listIn(res, owner.metadata.namespace)).filter((o) => ((o.metadata['ownerReferences'] ?? []) as Array<{ uid?: string }>).some((r) => r.uid === uid));
      items.sort(
        (a, b) => String(a.metadata['creationTimestamp'] ?? '').localeCompare(String(b.metadata['creationTimestamp'] ?? '')) || a.metadata.name.localeCompare(b.metadata.name),
      );
      for (const item of items) {
        const node = this.nodeOf(item, false, rules, res);
        node.children = await this.childrenOf(item, rules, depth + 1);
        out.push(node);
      }
    }
    return out;
  }

  private async childResource(version: string, kind: string): Promise<ApiResource | undefined> {
    if (version !== CAPI_GROUP) return this.discovery.tryResolve(version, kind, this.signal);
    const preferred = await this.discovery.preferredVersion(CAPI_GROUP, this.signal);
    return preferred ? this.discovery.tryResolve(preferred, kind, this.signal) : undefined;
  }

  private listIn(res: ApiResource, namespace: string | undefined): Promise<KubeObject[]> {
    const key = `${res.group}/${res.version}/${res.plural}/${namespace ?? ''}`;
    let list = this.lists.get(key);
    if (!list) {
      list = this.client
        .json<{ items?: KubeObject[] }>(
          { method: 'GET', path: collectionPath(res, namespace) },
          { what: `list ${res.plural}${namespace ? ` in namespace ${namespace}` : ''}`, signal: this.signal },
        )
        .then((l) => (l.items ?? []).map((o) => withKind(res, o)));
      this.lists.set(key, list);
    }
    return list;
  }

  private async read(res: ApiResource, ref: ResourceRef): Promise<KubeObject | undefined> {
    const got = await this.client.call({ method: 'GET', path: objectPath(res, ref) }, { what: `read ${describeRef(ref)}`, signal: this.signal, accept: [404] });
    return got.status === 404 ? undefined : withKind(res, got.body as KubeObject);
  }

  /** The last `count` events of every existing object not ready, at any depth. */
  private async addEvents(nodes: LiveObject[], count: number): Promise<void> {
    const all: LiveObject[] = [];
    const walk = (n: LiveObject) => {
      if (n.exists && !n.ready) all.push(n);
      n.children.forEach(walk);
    };
    nodes.forEach(walk);
    if (all.length === 0 || count <= 0) return;
    const res = await this.discovery.tryResolve('v1', 'Event', this.signal);
    if (!res) return;
    await forEachLimited(all, this.limit, async (n) => {
      const selector = `involvedObject.name=${n.ref.name},involvedObject.kind=${n.ref.kind}`;
      const got = await this.client.call(
        { method: 'GET', path: collectionPath(res, n.ref.namespace), query: { fieldSelector: selector } },
        { what: `list the events of ${describeRef(n.ref)}`, signal: this.signal, accept: [403] },
      );
      if (got.status >= 300) return;
      const items = ((got.body as { items?: Array<Record<string, unknown>> }).items ?? []).map((e): LiveEvent => ({
        type: String(e['type'] ?? 'Normal'),
        reason: String(e['reason'] ?? ''),
        message: String(e['message'] ?? '').trim(),
        count: typeof e['count'] === 'number' ? e['count'] : 1,
        ...(eventTime(e) ? { time: eventTime(e)! } : {}),
      }));
      items.sort((a, b) => (a.time ?? '').localeCompare(b.time ?? ''));
      n.events = items.slice(-count);
    });
  }
}

/** Every node of a tree, depth first. */
export function flattenLive(nodes: readonly LiveObject[]): LiveObject[] {
  return nodes.flatMap((n) => [n, ...flattenLive(n.children)]);
}

/** The key of a live object's ref, to match it with the instance's records. */
export const liveKey = (ref: ResourceRef): string => refKey(ref);
