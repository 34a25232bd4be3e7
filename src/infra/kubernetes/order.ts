import { isBuiltinGroup } from './package-kinds.js';

/**
 * Creation order: what other objects need must exist first. Namespaces
 * hold everything; CRDs define the kinds of custom resources; storage,
 * accounts and configuration are what pods mount and run as; Services come
 * before their pods so the pods see their environment variables; workloads
 * next; then whatever refers to workloads (HPAs, PDBs, Ingresses, custom
 * resources). Objects of one rank do not depend on each other and are
 * created in parallel. Removal runs the ranks backwards (removalPhases).
 */

/** Kind → rank; a kind not named here is ranked with the "others", last. */
const RANKS: ReadonlyArray<readonly string[]> = [
  ['Namespace'],
  ['CustomResourceDefinition'],
  ['PriorityClass', 'ResourceQuota', 'LimitRange', 'NetworkPolicy', 'PodSecurityPolicy', 'StorageClass', 'PersistentVolume'],
  // A claim binds to a volume of its class: both exist before it, and it goes before them.
  ['PersistentVolumeClaim'],
  ['ServiceAccount', 'ClusterRole', 'Role', 'ClusterRoleBinding', 'RoleBinding'],
  ['ConfigMap', 'Secret'],
  ['Service', 'Endpoints', 'EndpointSlice'],
  ['Pod', 'ReplicationController', 'ReplicaSet', 'Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob'],
];

const RANK_OF = new Map<string, number>(RANKS.flatMap((kinds, rank) => kinds.map((k) => [k, rank] as const)));
export const OTHERS_RANK = RANKS.length;

export function creationRank(kind: string): number {
  return RANK_OF.get(kind) ?? OTHERS_RANK;
}

/** Objects grouped by rank, in creation order; each group keeps the input order. */
export function groupByRank<T>(items: readonly T[], kindOf: (item: T) => string): T[][] {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const rank = creationRank(kindOf(item));
    let group = groups.get(rank);
    if (!group) groups.set(rank, (group = []));
    group.push(item);
  }
  return [...groups.entries()].sort(([a], [b]) => a - b).map(([, g]) => g);
}

/**
 * Removal groups for resources listed in creation order: the reverse of
 * creation, so workloads go before the Services, config and accounts they
 * use, and Namespaces and CRDs last.
 */
export function removalGroups<T>(items: readonly T[], kindOf: (item: T) => string): T[][] {
  return groupByRank(items, kindOf)
    .reverse()
    .map((g) => g.reverse());
}

/**
 * What terminate deletes, in phases: within a phase every delete is sent
 * (in removal order) before any object is awaited gone, as Tacker v2's
 * Kubernetes driver does, so the cluster's controllers and garbage collector
 * work on all of them at once. The objects ranked with the "others" (custom
 * resources, webhook configurations, APIServices, HPAs, Ingresses …) are a
 * phase of their own, gone before the rest is deleted: a custom resource's
 * finalizer is removed by its controller, which may be a workload of the same
 * CNF, and a webhook or an aggregated API whose pods go first makes the
 * cluster refuse or stall the deletions it serves. Everything else is one
 * phase: a workload deleted with foreground propagation is gone only once
 * its pods are, and Namespaces and CRDs remove what they hold themselves.
 * What `leads` picks (Cluster API Clusters) is a phase before all of these.
 */
export function removalPhases<T>(items: readonly T[], kindOf: (item: T) => string, leads: (item: T) => boolean = () => false): T[][] {
  const lead: T[] = [];
  const first: T[] = [];
  const rest: T[] = [];
  for (const group of removalGroups(items, kindOf)) {
    for (const item of group) (leads(item) ? lead : creationRank(kindOf(item)) === OTHERS_RANK ? first : rest).push(item);
  }
  return [lead, first, rest].filter((phase) => phase.length > 0);
}

/**
 * A Cluster API Cluster: terminate deletes it, and waits until it is gone,
 * before the rest of the CNF's objects, as Cluster API asks ("always delete
 * the Cluster object"): its controllers then take down the control plane, the
 * machines and the infrastructure they made, in their order. The CNF's other
 * Cluster API objects (templates, configurations) are deleted after it, those
 * it took along already gone.
 */
export function isClusterApiCluster(apiVersion: string, kind: string): boolean {
  return kind === 'Cluster' && apiVersion.startsWith('cluster.x-k8s.io/');
}

/** Built-in kinds whose objects own what terminate waits for: pods (a CronJob's Jobs). */
const OWNERS = new Set(['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'ReplicationController', 'Job', 'CronJob']);

/**
 * The propagation policy terminate deletes an object with. Foreground for
 * the built-in workloads that own pods and for custom resources (a Cluster
 * API object owns its children): such an object is gone only once what it
 * owns is. Background for every other built-in kind (ConfigMaps, Secrets,
 * Services, accounts, storage, Namespaces, CRDs, HPAs, Pods …): it owns
 * nothing of the CNF (a Service's EndpointSlices are the cluster's), and a
 * foreground delete would only add the foregroundDeletion finalizer, which
 * the garbage collector must take off again, one object at a time, in the
 * queue the workloads' deletions wait in (on a real API server that queue,
 * not the deletes, bounds a terminate's time).
 */
export function removalPropagation(apiVersion: string, kind: string): 'Foreground' | 'Background' {
  return OWNERS.has(kind) || !isBuiltinGroup(apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '') ? 'Foreground' : 'Background';
}

/**
 * Workloads whose controller makes nothing new once the workload is being
 * deleted (its deletionTimestamp set): the Deployment controller creates no
 * ReplicaSet, the ReplicaSet and StatefulSet controllers no pod. Terminate
 * deletes what such a workload owns right after the workload itself
 * (a Deployment's ReplicaSets, then their pods; a ReplicaSet's or a
 * StatefulSet's pods), instead of waiting for the garbage collector to come
 * to each level in turn. The owners are deleted with foreground propagation
 * first, so each still outlives what it owns: the garbage collector removes
 * an owner only once its dependents are gone, and only then does terminate
 * count it deleted.
 */
export function deletesDependentsAtOnce(group: string, kind: string): boolean {
  return group === 'apps' && (kind === 'Deployment' || kind === 'ReplicaSet' || kind === 'StatefulSet');
}

/**
 * Runs `fn` on every item with at most `limit` at once. On a failure no new
 * call starts; the running ones finish, then the first failure is rethrown
 * (so no call is left running behind the error).
 */
export async function forEachLimited<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  const failures: unknown[] = [];
  let next = 0;
  const worker = async () => {
    // After a failure nothing new starts; what is running finishes.
    while (next < items.length && failures.length === 0) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!, i);
      } catch (err) {
        failures.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failures.length > 0) throw failures[0];
  return results;
}
