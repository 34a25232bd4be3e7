/**
 * The emulated Cluster API core controllers for workers: a Machine walks
 * Pending → Provisioning → Provisioned → Running, a MachineSet keeps its
 * count of Machines, and a MachineDeployment rolls MachineSets per template.
 */
import type { KubeObject, ResourceType } from '../resources.js';
import { formatSelector } from '../selectors.js';
import { controllerRef, isControlledBy, spec, status, templateHash } from './base.js';
import {
  CAPI_GROUP,
  CLUSTER_NAME_LABEL,
  deletionOrder,
  DEPLOYMENT_NAME_LABEL,
  isRunning,
  MACHINE_FINALIZER,
  MANAGER,
  SET_NAME_LABEL,
  TEMPLATE_HASH_LABEL,
  type CapiKit,
  type Obj,
} from './cluster-api-kit.js';

export function reconcileMachine(k: CapiKit, key: string, type: ResourceType, m: KubeObject): void {
  const s = status(m);
  if (m.metadata.deletionTimestamp) {
    if (!m.metadata.finalizers?.includes(MACHINE_FINALIZER)) return;
    m = k.writeStatus(type, m, { ...s, phase: 'Deleting', conditions: k.conditions(m, [['Deleting', true, 'Deleting']]) });
    if (k.elapsed(key, m, 'Deleting', k.ctx.terminationDelayMs)) k.removeFinalizer(type, m, MACHINE_FINALIZER);
    return;
  }
  m = k.addFinalizer(type, m, MACHINE_FINALIZER);
  const base: Obj = { ...status(m), observedGeneration: m.metadata.generation, lastUpdated: k.now() };
  const phase = status(m).phase as string | undefined;
  if (!phase) {
    k.writeStatus(type, m, {
      ...base,
      phase: 'Pending',
      bootstrapReady: false,
      infrastructureReady: false,
      conditions: k.conditions(m, [
        ['BootstrapReady', false, 'WaitingForBootstrapData'],
        ['InfrastructureReady', false, 'WaitingForInfrastructure'],
        ['Ready', false, 'WaitingForInfrastructure'],
      ]),
    });
    k.elapsed(key, m, 'Pending');
    return;
  }
  if (phase === 'Pending' && k.elapsed(key, m, 'Pending')) {
    k.writeStatus(type, m, {
      ...base,
      phase: 'Provisioning',
      bootstrapReady: true,
      initialization: { bootstrapDataSecretCreated: true },
      conditions: k.conditions(m, [['BootstrapReady', true, 'Ready']]),
    });
    return;
  }
  if (phase === 'Provisioning' && k.elapsed(key, m, 'Provisioning')) {
    const addresses = [
      { type: 'InternalIP', address: `10.0.${(m.metadata.uid!.charCodeAt(0) % 200) + 1}.${(m.metadata.uid!.charCodeAt(1) % 250) + 2}` },
      { type: 'Hostname', address: m.metadata.name },
    ];
    k.writeStatus(type, m, {
      ...base,
      phase: 'Provisioned',
      infrastructureReady: true,
      initialization: { ...base.initialization, infrastructureProvisioned: true },
      addresses,
      conditions: k.conditions(m, [['InfrastructureReady', true, 'Ready']]),
    });
    return;
  }
  if (phase === 'Provisioned' && k.elapsed(key, m, 'Provisioned')) {
    k.writeStatus(type, m, {
      ...base,
      phase: 'Running',
      nodeRef: { apiVersion: 'v1', kind: 'Node', name: m.metadata.name, uid: m.metadata.uid },
      nodeInfo: { kubeletVersion: spec(m).version ?? '', operatingSystem: 'linux', architecture: 'amd64' },
      conditions: k.conditions(m, [
        ['NodeHealthy', true, 'NodeHealthy'],
        ['Ready', true, 'Ready'],
        ['Available', true, 'Available'],
        ['UpToDate', true, 'UpToDate'],
      ]),
    });
  }
}

export function reconcileMachineSet(k: CapiKit, type: ResourceType, ms: KubeObject): void {
  if (ms.metadata.deletionTimestamp) return;
  const desired = Number(spec(ms).replicas ?? 1);
  const template = (spec(ms).template as Obj | undefined) ?? {};
  const machines = k.ownedMachines(ms);
  const active = machines.filter((m) => !m.metadata.deletionTimestamp);
  const clusterName = String(spec(ms).clusterName ?? ms.metadata.labels?.[CLUSTER_NAME_LABEL] ?? '');
  if (active.length < desired) {
    const labels = { ...(template.metadata?.labels ?? {}), ...(spec(ms).selector?.matchLabels ?? {}), [CLUSTER_NAME_LABEL]: clusterName, [SET_NAME_LABEL]: ms.metadata.name };
    const deployment = ms.metadata.labels?.[DEPLOYMENT_NAME_LABEL];
    if (deployment) labels[DEPLOYMENT_NAME_LABEL] = deployment;
    for (let i = active.length; i < desired; i++) k.createMachine(ms, type, labels, template.metadata?.annotations, { ...(template.spec ?? {}), clusterName });
  } else if (active.length > desired) {
    for (const m of deletionOrder(active).slice(0, active.length - desired)) k.tryDelete(k.typeOf(CAPI_GROUP, 'Machine')!, m);
  }
  const current = k.ownedMachines(ms).filter((m) => !m.metadata.deletionTimestamp);
  const ready = current.filter(isRunning).length;
  k.writeStatus(type, ms, {
    ...status(ms),
    replicas: current.length,
    fullyLabeledReplicas: current.length,
    readyReplicas: ready,
    availableReplicas: ready,
    upToDateReplicas: current.length,
    selector: formatSelector(spec(ms).selector),
    observedGeneration: ms.metadata.generation,
    conditions: k.conditions(ms, [
      ['Ready', ready === desired && current.length === desired, ready === desired ? 'Ready' : 'ScalingUp'],
      ['MachinesCreated', true, 'MachinesCreated'],
    ]),
  });
}

/** The labels a MachineDeployment selects its MachineSets by. */
const selectorLabelsOf = (md: KubeObject, clusterName: string): Record<string, string> => ({
  ...(spec(md).selector?.matchLabels ?? {}),
  [CLUSTER_NAME_LABEL]: clusterName,
  [DEPLOYMENT_NAME_LABEL]: md.metadata.name,
});

/** The MachineSet of the deployment's current template: created, or scaled to `desired`. */
function currentMachineSet(
  k: CapiKit,
  type: ResourceType,
  msType: ResourceType,
  md: KubeObject,
  owned: KubeObject[],
  desired: number,
  clusterName: string,
): { current: KubeObject; old: KubeObject[] } {
  const s = spec(md);
  const template = structuredClone((s.template as Obj | undefined) ?? {});
  const hash = templateHash({ labels: template.metadata?.labels ?? {}, spec: template.spec ?? {} });
  let current = owned.find((ms) => ms.metadata.labels?.[TEMPLATE_HASH_LABEL] === hash);
  const old = owned.filter((ms) => ms !== current);
  if (!current) {
    const labels = { ...selectorLabelsOf(md, clusterName), [TEMPLATE_HASH_LABEL]: hash };
    template.metadata = { ...(template.metadata ?? {}), labels: { ...(template.metadata?.labels ?? {}), ...labels } };
    template.spec = { ...(template.spec ?? {}), clusterName };
    current = k.api.create(
      msType,
      {
        metadata: { name: `${md.metadata.name}-${hash.slice(0, 5)}`, namespace: md.metadata.namespace, labels, ownerReferences: [controllerRef(md, type)] },
        spec: { clusterName, replicas: desired, selector: { matchLabels: labels }, template, ...(s.deletePolicy ? { deletePolicy: s.deletePolicy } : {}) },
      } as unknown as KubeObject,
      { manager: MANAGER },
    );
  } else if (Number(spec(current).replicas ?? 1) !== desired) {
    current = k.api.update(msType, { ...current, spec: { ...spec(current), replicas: desired } }, { manager: MANAGER });
  }
  return { current, old };
}

export function reconcileMachineDeployment(k: CapiKit, type: ResourceType, md: KubeObject): void {
  if (md.metadata.deletionTimestamp) return;
  const msType = k.typeOf(CAPI_GROUP, 'MachineSet');
  if (!msType) return;
  const s = spec(md);
  const desired = Number(s.replicas ?? 1);
  const clusterName = String(s.clusterName ?? md.metadata.labels?.[CLUSTER_NAME_LABEL] ?? '');
  const owned = k.api.list(msType, md.metadata.namespace).filter((ms) => isControlledBy(ms, md));
  const { current, old } = currentMachineSet(k, type, msType, md, owned, desired, clusterName);
  // The new set surges to the whole count; the old ones go once it is ready.
  if (old.length > 0 && Number(status(current).readyReplicas ?? 0) >= desired) for (const ms of old) k.tryDelete(msType, ms);

  const sets = k.api.list(msType, md.metadata.namespace).filter((ms) => isControlledBy(ms, md) && !ms.metadata.deletionTimestamp);
  const sum = (field: string): number => sets.reduce((n, ms) => n + Number(status(ms)[field] ?? 0), 0);
  const replicas = sum('replicas');
  const ready = sum('readyReplicas');
  const updated = Number(status(k.api.find(msType, md.metadata.namespace, current.metadata.name) ?? current).replicas ?? 0);
  const phase = replicas < desired || ready < desired ? 'ScalingUp' : replicas > desired ? 'ScalingDown' : 'Running';
  const running = phase === 'Running';
  k.writeStatus(type, md, {
    ...status(md),
    replicas,
    readyReplicas: ready,
    availableReplicas: ready,
    updatedReplicas: updated,
    upToDateReplicas: updated,
    unavailableReplicas: Math.max(0, desired - ready),
    phase,
    selector: formatSelector({ matchLabels: selectorLabelsOf(md, clusterName) }),
    observedGeneration: md.metadata.generation,
    conditions: k.conditions(md, [
      ['Ready', running, running ? 'Ready' : phase],
      ['Available', running, running ? 'Available' : 'WaitingForAvailableMachines'],
      ['MachineSetReady', running, running ? 'Ready' : phase],
    ]),
  });
}
