/**
 * The emulated control-plane and provider controllers: a control plane with
 * a machine template owns Machines as a MachineSet does (a version change
 * replaces them one at a time), one without is ready after the delay; an
 * infrastructure or bootstrap object is ready after the delay.
 */
import type { KubeObject, ResourceType } from '../resources.js';
import { spec, status } from './base.js';
import {
  BOOTSTRAP_GROUP,
  CAPI_GROUP,
  CLUSTER_NAME_LABEL,
  CONTROL_PLANE_LABEL,
  CONTROL_PLANE_NAME_LABEL,
  deletionOrder,
  isRunning,
  isTrue,
  type CapiKit,
  type Obj,
} from './cluster-api-kit.js';

function clusterReferencing(k: CapiKit, namespace: string | undefined, kind: string, name: string, field: 'controlPlaneRef' | 'infrastructureRef'): KubeObject | undefined {
  const type = k.typeOf(CAPI_GROUP, 'Cluster');
  if (!type) return undefined;
  return k.api.list(type, namespace).find((c) => {
    const ref = spec(c)[field] as Obj | undefined;
    return ref?.name === name && ref?.kind === kind;
  });
}

function machineTemplateRef(cp: KubeObject): Obj | undefined {
  const t = spec(cp).machineTemplate as Obj | undefined;
  return (t?.infrastructureRef ?? t?.spec?.infrastructureRef) as Obj | undefined;
}

/** Keeps a control plane's Machines at its count and version; returns its replica counts. */
function reconcileControlPlaneMachines(k: CapiKit, type: ResourceType, cp: KubeObject, clusterName: string, infraRef: Obj): { replicas: number; ready: number; upToDate: number } {
  const desired = Number(spec(cp).replicas ?? 1);
  const version = spec(cp).version as string | undefined;
  const active = k.ownedMachines(cp).filter((m) => !m.metadata.deletionTimestamp);
  const outdated = active.filter((m) => spec(m).version !== version);
  const labels = { [CLUSTER_NAME_LABEL]: clusterName, [CONTROL_PLANE_LABEL]: '', [CONTROL_PLANE_NAME_LABEL]: cp.metadata.name };
  const machineSpec: Obj = { clusterName, bootstrap: { dataSecretName: `${cp.metadata.name}-bootstrap` }, infrastructureRef: structuredClone(infraRef) };
  if (version) machineSpec.version = version;
  const allReady = active.every(isRunning);
  if (active.length < desired) {
    k.createMachine(cp, type, labels, undefined, machineSpec);
  } else if (active.length > desired) {
    k.tryDelete(k.typeOf(CAPI_GROUP, 'Machine')!, deletionOrder(outdated.length ? outdated : active)[0]!);
  } else if (outdated.length > 0 && allReady) {
    // One at a time, a new machine first: the control plane keeps its quorum.
    k.createMachine(cp, type, labels, undefined, machineSpec);
  }
  const current = k.ownedMachines(cp).filter((m) => !m.metadata.deletionTimestamp);
  return { replicas: current.length, ready: current.filter(isRunning).length, upToDate: current.filter((m) => spec(m).version === version).length };
}

export function reconcileControlPlane(k: CapiKit, key: string, type: ResourceType, cp: KubeObject): void {
  if (cp.metadata.deletionTimestamp) return;
  const cluster = clusterReferencing(k, cp.metadata.namespace, type.kind, cp.metadata.name, 'controlPlaneRef');
  const clusterName = cluster?.metadata.name ?? cp.metadata.labels?.[CLUSTER_NAME_LABEL];
  if (!clusterName) return; // Like the real controllers: nothing happens until a Cluster claims it.
  const desired = Number(spec(cp).replicas ?? 1);
  const version = spec(cp).version as string | undefined;
  const selector = `${CLUSTER_NAME_LABEL}=${clusterName},${CONTROL_PLANE_LABEL}`;
  const infraRef = machineTemplateRef(cp);
  let replicas = desired;
  let ready = 0;
  let upToDate = desired;
  if (infraRef) {
    ({ replicas, ready, upToDate } = reconcileControlPlaneMachines(k, type, cp, clusterName, infraRef));
  } else if (k.elapsed(key, cp, 'Scaling')) {
    ready = desired;
  } else {
    ready = 0;
  }
  const initialized = status(cp).initialized === true || ready > 0;
  k.writeStatus(type, cp, {
    ...status(cp),
    replicas,
    readyReplicas: ready,
    updatedReplicas: upToDate,
    upToDateReplicas: upToDate,
    availableReplicas: ready,
    unavailableReplicas: Math.max(0, replicas - ready),
    initialized,
    ready: ready > 0,
    initialization: { controlPlaneInitialized: initialized },
    ...(version ? { version } : {}),
    selector,
    observedGeneration: cp.metadata.generation,
    conditions: k.conditions(cp, [
      ['Available', ready > 0, ready > 0 ? 'Available' : 'WaitingForMachines'],
      ['Initialized', initialized, initialized ? 'Initialized' : 'WaitingForMachines'],
      ['Ready', ready === desired, ready === desired ? 'Ready' : 'ScalingUp'],
    ]),
  });
}

/** Infrastructure and bootstrap objects: ready after the delay. */
export function reconcileProviderObject(k: CapiKit, key: string, type: ResourceType, obj: KubeObject): void {
  if (obj.metadata.deletionTimestamp || status(obj).ready === true) return;
  if (!k.elapsed(key, obj, 'Provisioning')) return;
  k.provisioned.add(obj.metadata.uid!);
  const next: Obj = { ...status(obj), ready: true, initialization: { provisioned: true }, conditions: k.conditions(obj, [['Ready', true, 'Ready']]) };
  if (type.group === BOOTSTRAP_GROUP) next.dataSecretName = `${obj.metadata.name}-bootstrap`;
  k.writeStatus(type, obj, next);
}

export const providerReady = (k: CapiKit, obj: KubeObject | undefined): boolean =>
  obj !== undefined && (status(obj).ready === true || status(obj).initialization?.provisioned === true || isTrue(obj, 'Ready') || k.provisioned.has(obj.metadata.uid!));

export const controlPlaneInitialized = (obj: KubeObject | undefined): boolean =>
  obj !== undefined && (status(obj).initialized === true || status(obj).initialization?.controlPlaneInitialized === true || status(obj).ready === true);
