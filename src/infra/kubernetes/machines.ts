/**
 * The VNFCs of a VDU that is a custom resource with /scale: the Cluster API
 * `Machine`s it owns. A MachineDeployment owns Machines through its
 * MachineSets (and labels them `cluster.x-k8s.io/deployment-name`); a
 * control plane (KubeadmControlPlane, …) owns its Machines directly (and
 * labels them `cluster.x-k8s.io/control-plane-name`). A kind that owns no
 * Machines has no VNFCs beyond itself.
 */
import type { KubeObject } from './driver-contract.js';
import { controlledBy } from './objects.js';

export const MACHINE_GROUP = 'cluster.x-k8s.io';
export const DEPLOYMENT_NAME_LABEL = 'cluster.x-k8s.io/deployment-name';
export const CONTROL_PLANE_NAME_LABEL = 'cluster.x-k8s.io/control-plane-name';

/** The MachineSets' uids that `owner` controls. */
export function ownedSetUids(owner: KubeObject, machineSets: Iterable<KubeObject>): Set<string> {
  const ownerUid = new Set([owner.metadata.uid as string]);
  const out = new Set<string>();
  for (const ms of machineSets) {
    if (controlledBy(ms, ownerUid) || (owner.kind === 'MachineDeployment' && ms.metadata.labels?.[DEPLOYMENT_NAME_LABEL] === owner.metadata.name)) {
      out.add(ms.metadata.uid as string);
    }
  }
  return out;
}

/** True when `machine` belongs to `owner`: by owner reference (directly or through one of `setUids`), else by label. */
export function machineOf(machine: KubeObject, owner: KubeObject, setUids: ReadonlySet<string>): boolean {
  if (machine.metadata.namespace !== owner.metadata.namespace) return false;
  if (controlledBy(machine, new Set([owner.metadata.uid as string, ...setUids]))) return true;
  const labels = machine.metadata.labels ?? {};
  if (owner.kind === 'MachineDeployment') return labels[DEPLOYMENT_NAME_LABEL] === owner.metadata.name;
  return owner.metadata.name !== undefined && labels[CONTROL_PLANE_NAME_LABEL] === owner.metadata.name && owner.apiVersion.startsWith('controlplane.');
}

/** Oldest first, then by name, so VNFC lists are stable. */
export function byAge(a: KubeObject, b: KubeObject): number {
  return String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')) || a.metadata.name.localeCompare(b.metadata.name);
}
