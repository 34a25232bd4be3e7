/**
 * What the Kubernetes planner reads from a package's objects: the namespace
 * they go to, the workload each VDU is, and the objects made ready for the
 * driver (namespaced, bare pods, replicas by workload).
 */
import { ValidationError } from '../../errors.js';
import type { ResourceRef } from '../../infra/driver.js';
import type { KubeObject, KubernetesInfraDriver, VduTarget } from '../../infra/kubernetes/driver-contract.js';
import { kindsDefinedBy } from '../../infra/kubernetes/package-kinds.js';
import type { Flavour } from '../../vnfd/index.js';
import type { VimConnection } from '../../model/lcm.js';
import { vnfcRecords } from '../../model/vnfcs.js';

const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'ReplicaSet', 'DaemonSet', 'Pod']);
/** Kinds whose replicas cannot be set: a DaemonSet runs one pod per node, a Pod is one. */
export const FIXED_KINDS = new Set(['DaemonSet', 'Pod']);
const NEVER_A_VDU = new Set([
  'Service',
  'ConfigMap',
  'Secret',
  'ServiceAccount',
  'PersistentVolumeClaim',
  'Endpoints',
  'NetworkPolicy',
  'HorizontalPodAutoscaler',
  'PodDisruptionBudget',
  'Ingress',
  'Role',
  'RoleBinding',
]);

/**
 * Kinds Tacker v2 treats as namespaced when it fills in a missing namespace
 * (SUPPORTED_NAMESPACE_KIND in tacker/sol_refactored/infra_drivers/kubernetes/kubernetes_utils.py).
 */
const TACKER_NAMESPACED_KINDS = new Set([
  'Binding',
  'ConfigMap',
  'ControllerRevision',
  'DaemonSet',
  'Deployment',
  'HorizontalPodAutoscaler',
  'Job',
  'Lease',
  'LimitRange',
  'LocalSubjectAccessReview',
  'NetworkPolicy',
  'PersistentVolumeClaim',
  'Pod',
  'PodTemplate',
  'ReplicaSet',
  'ResourceQuota',
  'Role',
  'RoleBinding',
  'Secret',
  'Service',
  'ServiceAccount',
  'StatefulSet',
]);

/** Namespaces the definition files create themselves (Namespace objects). */
const createdNamespaces = (objects: KubeObject[]): Set<string> => new Set(objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name));

/**
 * The namespace rule, Tacker's (v2: kubernetes_utils.get_k8s_reses_from_json_files;
 * v1: check_and_save_namespace in tacker/vnfm/infra_drivers/kubernetes/utils.py):
 * `additionalParams.namespace` wins over every manifest's metadata.namespace;
 * without it, the manifests' own namespace, objects without one counting as
 * the default (the VIM's project_name here, else `default`); manifests that
 * name different namespaces are refused (Tacker's NamespaceIsNotUnique).
 * One addition: objects in a namespace the files create themselves (a
 * Namespace object among them, as a package of cluster controllers brings)
 * stay in it; Tacker has no such packages.
 */
export function chooseNamespace(source: string, requested: string | undefined, objects: KubeObject[], vim: VimConnection, files: string[]): string {
  if (requested) return requested;
  const fallback = vim.spec.projectName ?? 'default';
  const created = createdNamespaces(objects);
  const found = new Set<string>();
  for (const o of objects) {
    const ns = o.metadata.namespace;
    if (typeof ns === 'string' && ns !== '') {
      if (!created.has(ns)) found.add(ns);
    } else if (TACKER_NAMESPACED_KINDS.has(o.kind)) found.add(fallback);
  }
  if (found.size > 1) {
    throw new ValidationError(
      source,
      'additionalParams.namespace',
      `is not given, and the definition files put objects in ${found.size} namespaces (${[...found].join(', ')}; objects without metadata.namespace go to ${fallback}): ${files.join(', ')}`,
      {
        hint: "give additionalParams.namespace (it overrides every manifest's metadata.namespace, as in Tacker), or put every object in one namespace",
      },
    );
  }
  const first = objects.find((o) => typeof o.metadata.namespace === 'string' && o.metadata.namespace !== '')?.metadata.namespace;
  return [...found][0] ?? first ?? fallback;
}

/**
 * The VDUs the request's definition files deploy, each with its workload. A
 * VDU whose workload is not among those files is left out, not refused: a
 * request may deploy part of a flavour (a ConfigMap alone, one Deployment of
 * several), as Tacker's `_select_vdu_reses` maps only the resources it
 * created (tacker/sol_refactored/infra_drivers/kubernetes/kubernetes.py).
 */
export function vduTargets(flavour: Flavour, objects: KubeObject[], namespace: string): VduTarget[] {
  return Object.entries(flavour.vdus).flatMap(([vduId, vdu]) => {
    const named = objects.filter((o) => o.metadata.name === vdu.name);
    const o =
      named.find((x) => WORKLOAD_KINDS.has(x.kind)) ??
      pickCustomVdu(
        named.filter((x) => !NEVER_A_VDU.has(x.kind)),
        objects,
      );
    if (!o) return [];
    const resource: ResourceRef = { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace ?? namespace };
    return [{ vduId, resource }];
  });
}

/**
 * Among custom resources sharing the VDU's name (Cluster API names a
 * MachineDeployment, its machine templates and its bootstrap template
 * alike; a Cluster and its control plane and infrastructure alike), the one
 * that can be scaled: a kind whose package CRD declares /scale, else — by
 * the Cluster API convention — a *Deployment, *Set, *Pool or *ControlPlane,
 * never a *Template. The driver checks at plan time that the choice has
 * /scale.
 */
function pickCustomVdu(candidates: KubeObject[], objects: KubeObject[]): KubeObject | undefined {
  const scalable = kindsDefinedBy(objects);
  const declared = candidates.find((c) => scalable.get(`${c.apiVersion.split('/')[0]}/${c.kind}`)?.versions.get(c.apiVersion.split('/')[1] ?? '')?.scale);
  return declared ?? candidates.find((c) => /(Deployment|Set|Pool|ControlPlane)$/.test(c.kind)) ?? candidates.find((c) => !c.kind.endsWith('Template')) ?? candidates[0];
}

export function replicasByWorkload(targets: VduTarget[], replicas: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of targets) {
    const n = replicas[t.vduId];
    if (n !== undefined && !FIXED_KINDS.has(t.resource.kind)) out[`${t.resource.kind}/${t.resource.name}`] = n;
  }
  return out;
}

/**
 * The objects in the instance's namespace: it replaces every manifest's own
 * metadata.namespace (the request's namespace wins, as in Tacker; without
 * one the manifests agree on it), except a namespace the files create
 * themselves. Objects without one get it from the driver, namespaced kinds
 * only; bare Pods get it here, for heal to find them.
 */
export function withNamespace(objects: KubeObject[], namespace: string): KubeObject[] {
  const created = createdNamespaces(objects);
  return objects.map((o) => {
    const own = o.metadata.namespace;
    const moved = own ? own !== namespace && !created.has(own) : o.kind === 'Pod';
    return moved ? { ...o, metadata: { ...o.metadata, namespace } } : o;
  });
}

export function barePods(objects: KubeObject[], namespace: string): Record<string, KubeObject> {
  return Object.fromEntries(
    withNamespace(
      objects.filter((o) => o.kind === 'Pod'),
      namespace,
    ).map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]),
  );
}

export async function refreshed(driver: KubernetesInfraDriver, ctx: Parameters<KubernetesInfraDriver['listVnfcs']>[0], targets: VduTarget[], vimId: string | undefined) {
  return vnfcRecords(await driver.listVnfcs(ctx, targets), vimId);
}
