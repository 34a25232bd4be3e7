/**
 * Objects that reach beyond a VNF instance: cluster-scoped ones (a
 * ClusterRoleBinding, a CRD, a Namespace, a webhook configuration...), which
 * act on the whole cluster, and namespaced ones put in another namespace
 * than the instance's. A Helm chart creates whatever its templates render;
 * these are what an operator should see before it is installed (a warning),
 * or refuse (--strict). One wording for validation and instantiation.
 */
import type { Finding } from '../model/package-files.js';
import { isMapping } from '../yaml.js';

/**
 * Built-in kinds that are not namespaced (`kubectl api-resources
 * --namespaced=false`), by `group/Kind` (the core group is ''). The review
 * kinds (TokenReview, SubjectAccessReview...) are left out: the API server
 * answers them and keeps nothing.
 */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set([
  '/Namespace',
  '/Node',
  '/PersistentVolume',
  '/ComponentStatus',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'apiregistration.k8s.io/APIService',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'admissionregistration.k8s.io/MutatingAdmissionPolicy',
  'admissionregistration.k8s.io/MutatingAdmissionPolicyBinding',
  'storage.k8s.io/StorageClass',
  'storage.k8s.io/CSIDriver',
  'storage.k8s.io/CSINode',
  'storage.k8s.io/VolumeAttachment',
  'storage.k8s.io/VolumeAttributesClass',
  'scheduling.k8s.io/PriorityClass',
  'node.k8s.io/RuntimeClass',
  'networking.k8s.io/IngressClass',
  'networking.k8s.io/IPAddress',
  'networking.k8s.io/ServiceCIDR',
  'certificates.k8s.io/CertificateSigningRequest',
  'certificates.k8s.io/ClusterTrustBundle',
  'flowcontrol.apiserver.k8s.io/FlowSchema',
  'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration',
  'policy/PodSecurityPolicy',
  'extensions/PodSecurityPolicy',
  'resource.k8s.io/DeviceClass',
  'resource.k8s.io/ResourceSlice',
  'internal.apiserver.k8s.io/StorageVersion',
  'storagemigration.k8s.io/StorageVersionMigration',
]);

/** What the check reads of an object (a parsed manifest document, a KubeObject). */
export interface ReachObject {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string };
  roleRef?: unknown;
  spec?: unknown;
}

/** One object beyond the instance. */
export interface Reach {
  code: 'kubernetes-cluster-scoped' | 'kubernetes-other-namespace';
  kind: string;
  name: string;
  /** The namespace it is in; none for a cluster-scoped object. */
  namespace?: string;
  /** "ClusterRoleBinding x (cluster-scoped; it grants ClusterRole cluster-admin)", "Secret y (in namespace kube-system)". */
  label: string;
  /** The label, and why it reaches beyond the instance: "…: it acts on the whole cluster, beyond the instance's namespace web". */
  what: string;
}

const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

/** `group/Kind` of the custom kinds that `objects`' own CRDs declare cluster-scoped (spec.scope: Cluster). */
function clusterScopedCustomKinds(objects: readonly ReachObject[]): Set<string> {
  const kinds = new Set<string>();
  for (const o of objects) {
    if (o.kind !== 'CustomResourceDefinition' || !isMapping(o.spec)) continue;
    const names = isMapping(o.spec.names) ? o.spec.names : {};
    if (o.spec.scope === 'Cluster' && typeof o.spec.group === 'string' && typeof names.kind === 'string') kinds.add(`${o.spec.group}/${names.kind}`);
  }
  return kinds;
}

/** What a binding grants, for the message: "; it grants ClusterRole cluster-admin". */
function grants(o: ReachObject): string {
  if (!o.kind.endsWith('RoleBinding') || !isMapping(o.roleRef)) return '';
  const { kind, name } = o.roleRef;
  return typeof kind === 'string' && typeof name === 'string' ? `; it grants ${kind} ${name}` : '';
}

/**
 * The objects of `objects` that reach beyond an instance in `namespace`:
 * cluster-scoped kinds (built-in, or made so by a CRD among the objects),
 * and namespaced objects whose metadata.namespace is another (an object
 * without one goes to the instance's). `namespaceLabel` words the
 * instance's namespace in the message.
 */
export function reachBeyond(objects: readonly ReachObject[], namespace: string, namespaceLabel = `the instance's namespace ${namespace}`): Reach[] {
  const custom = clusterScopedCustomKinds(objects);
  const out: Reach[] = [];
  for (const o of objects) {
    const name = o.metadata.name ?? '';
    const key = `${groupOf(o.apiVersion)}/${o.kind}`;
    if (CLUSTER_SCOPED_KINDS.has(key) || custom.has(key)) {
      const label = `${o.kind} ${name} (cluster-scoped${grants(o)})`;
      out.push({ code: 'kubernetes-cluster-scoped', kind: o.kind, name, label, what: `${label}: it acts on the whole cluster, beyond ${namespaceLabel}` });
      continue;
    }
    const ns = o.metadata.namespace;
    if (typeof ns === 'string' && ns !== '' && ns !== namespace) {
      const label = `${o.kind} ${name} (in namespace ${ns})`;
      out.push({ code: 'kubernetes-other-namespace', kind: o.kind, name, namespace: ns, label, what: `${label}: not in ${namespaceLabel}` });
    }
  }
  return out;
}

/** The hint of reaches (all of `codes`), warned of or refused (`strict`). */
export function reachHint(codes: Iterable<Reach['code']>, strict: boolean): string {
  const seen = new Set(codes);
  const fixes = [
    seen.has('kubernetes-cluster-scoped') ? 'leave cluster-wide objects to the cluster administrator (installed once, apart from the VNF)' : undefined,
    seen.has('kubernetes-other-namespace')
      ? 'put namespaced objects in the namespace the chart is installed in (metadata.namespace: {{ .Release.Namespace }}, or none)'
      : undefined,
  ].filter((f): f is string => f !== undefined);
  const fix = fixes.join('; ');
  return strict
    ? `refused under --strict: ${fix}; or go without --strict if the chart is meant to change the cluster`
    : `review what the chart creates beyond its instance before it is installed: ${fix}; --strict refuses such a chart (vnfpkg-validate --strict, vnf-instantiate --strict)`;
}

/** The finding of a reach in a rendered chart: a warning, an error under --strict. */
export function reachFinding(reach: Reach, file: string, line: number | undefined, strict: boolean): Finding {
  return {
    severity: strict ? 'error' : 'warning',
    code: reach.code,
    file,
    ...(line !== undefined ? { line } : {}),
    message: `creates ${reach.what}`,
    hint: reachHint([reach.code], strict),
  };
}
