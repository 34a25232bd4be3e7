/**
 * Cluster API, emulated the way the sandbox emulates a kubelet: no
 * machines boot, but the objects move through the phases and carry the
 * status that the real controllers (core, kubeadm control plane, an
 * infrastructure provider) would write, so that what reads them — vnfm's
 * readiness, scale, heal and credentials hand-off — meets the real shapes.
 *
 * It is keyed on API groups, kinds and field paths, never on a particular
 * CRD file, and acts only on kinds some CRD makes served:
 *
 * - `cluster.x-k8s.io` Cluster: Pending → Provisioning → Provisioned once
 *   its infrastructure is ready and its control plane initialised; then a
 *   second sandbox API server is started for it and the Secret
 *   `<cluster>-kubeconfig` (key `value`) holds a kubeconfig for it; deleting
 *   the Cluster deletes what belongs to it and stops that server.
 * - MachineDeployment → MachineSet (one per template; a changed template
 *   rolls to a new one) → Machines (Pending → Provisioning → Provisioned →
 *   Running), following `spec.replicas`; a deleted Machine is replaced.
 * - `controlplane.cluster.x-k8s.io` kinds: with a machine template
 *   (KubeadmControlPlane) they own Machines as a MachineSet does (a version
 *   change replaces them one by one); others (KamajiControlPlane) are ready
 *   with their replicas after the delay.
 * - `infrastructure.` and `bootstrap.cluster.x-k8s.io` kinds other than
 *   templates: `status.ready: true` after the delay.
 *
 * Like the real controllers, they reach a new object only after a while:
 * for `readyDelayMs` it has no status at all (what a client must not take
 * for "ready"), then each step takes `readyDelayMs` again.
 *
 * Status is written with both the v1beta1 fields (`controlPlaneReady`,
 * `readyReplicas`, conditions with severity) and the v1beta2 ones
 * (`initialization`, `upToDateReplicas`, conditions with reason and
 * observedGeneration): the CRD's schema prunes what its version lacks.
 *
 * This file dispatches events and keys; the reconcilers live by kind in
 * cluster-api-cluster.ts, cluster-api-machines.ts and
 * cluster-api-control-plane.ts, and what they share in cluster-api-kit.ts.
 */
import { ApiError } from '../status.js';
import type { StoreEvent } from '../store.js';
import { ownerRefs, spec, status, type Controller, type ControllerContext } from './base.js';
import { reconcileCluster, WorkloadServers, type WorkloadClusterEndpoint, type WorkloadServer } from './cluster-api-cluster.js';
import { reconcileControlPlane, reconcileProviderObject } from './cluster-api-control-plane.js';
import { CAPI_GROUP, CAPI_GROUPS, CapiKit, CONTROL_PLANE_GROUP, keyOf, refGroup, type Obj } from './cluster-api-kit.js';
import { reconcileMachine, reconcileMachineDeployment, reconcileMachineSet } from './cluster-api-machines.js';

export type { WorkloadClusterEndpoint, WorkloadServer } from './cluster-api-cluster.js';

export interface ClusterApiController extends Controller {
  /** The workload clusters whose API servers are running now. */
  workloadClusters(): WorkloadClusterEndpoint[];
  /** Stops every workload cluster's API server. */
  close(): Promise<void>;
}

/** Runs the reconciler of the object `key` names, once the controller has "noticed" it. */
function reconcile(k: CapiKit, servers: WorkloadServers, key: string): void {
  const [group, kind, namespace, name] = key.split('|') as [string, string, string, string];
  const type = k.typeOf(group, kind);
  if (!type) return;
  const obj = k.api.find(type, namespace || undefined, name);
  if (!obj) return;
  // A real controller reaches a new object some time after it is created: until then it has no status at all.
  if (!obj.metadata.deletionTimestamp && Object.keys(status(obj)).length === 0 && !k.elapsed(key, obj, 'Unobserved')) return;
  try {
    if (group === CAPI_GROUP) {
      if (kind === 'Cluster') reconcileCluster(k, servers, key, type, obj);
      else if (kind === 'MachineDeployment') reconcileMachineDeployment(k, type, obj);
      else if (kind === 'MachineSet') reconcileMachineSet(k, type, obj);
      else if (kind === 'Machine') reconcileMachine(k, key, type, obj);
    } else if (group === CONTROL_PLANE_GROUP) {
      reconcileControlPlane(k, key, type, obj);
    } else {
      reconcileProviderObject(k, key, type, obj);
    }
  } catch (err) {
    // A schema that rejects what the emulation writes would fail the same way on every retry: wait for the next change instead.
    if (err instanceof ApiError && err.status.code === 422) return;
    throw err;
  }
}

function enqueueClustersIn(k: CapiKit, namespace: string | undefined): void {
  const type = k.typeOf(CAPI_GROUP, 'Cluster');
  if (!type) return;
  for (const c of k.api.list(type, namespace)) k.queue.add(keyOf(CAPI_GROUP, 'Cluster', c.metadata.namespace, c.metadata.name));
}

/** Queues what a change of a Cluster API object concerns: the object, its owners, its Clusters and what a Cluster references. */
function onEvent(k: CapiKit, servers: WorkloadServers, event: StoreEvent): void {
  if (!CAPI_GROUPS.has(event.group)) return;
  const kind = k.kindOf(event.group, event.resource);
  if (!kind || (event.group !== CAPI_GROUP && kind.endsWith('Template'))) return;
  const obj = event.object;
  if (event.type !== 'DELETED') k.queue.add(keyOf(event.group, kind, obj.metadata.namespace, obj.metadata.name));
  else k.forget(obj.metadata.uid);
  for (const ref of ownerRefs(obj)) {
    const group = refGroup(ref as Obj);
    if (CAPI_GROUPS.has(group)) k.queue.add(keyOf(group, ref.kind, obj.metadata.namespace, ref.name));
  }
  // Clusters follow their control plane, infrastructure, machines and what their deletion waits for.
  if (event.group !== CAPI_GROUP || kind === 'Machine' || kind === 'MachineDeployment' || kind === 'MachineSet') enqueueClustersIn(k, obj.metadata.namespace);
  if (kind === 'Cluster' && event.type !== 'DELETED') {
    for (const field of ['controlPlaneRef', 'infrastructureRef']) {
      const ref = spec(obj)[field] as Obj | undefined;
      if (ref?.kind && ref.name) k.queue.add(keyOf(refGroup(ref), ref.kind, obj.metadata.namespace, ref.name));
    }
  }
  if (kind === 'Cluster' && event.type === 'DELETED') void servers.stop(obj.metadata.uid!);
}

export function startClusterApiController(ctx: ControllerContext, startWorkloadServer: () => Promise<WorkloadServer>): ClusterApiController {
  const kit: CapiKit = new CapiKit(ctx, (key) => reconcile(kit, servers, key));
  const servers = new WorkloadServers(startWorkloadServer, kit.queue);
  const unsubscribe = ctx.api.store.subscribe((event) => onEvent(kit, servers, event));
  return {
    stop() {
      servers.stopped = true;
      unsubscribe();
      kit.queue.stop();
    },
    workloadClusters() {
      return servers.endpoints();
    },
    async close() {
      await servers.closeAll();
    },
  };
}
