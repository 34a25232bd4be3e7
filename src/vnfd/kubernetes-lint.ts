/**
 * Checks a CNF package's Kubernetes manifests before anything is applied:
 * each file parses as Kubernetes objects, no object uses an apiVersion that
 * Kubernetes has stopped serving, and which VDUs of the VNFD have a workload
 * named after them (Tacker maps a VDU to the resource whose metadata.name is
 * the VDU's `properties.name`). What depends on the instantiate request —
 * which files it deploys — is a note here, as Tacker accepts such packages:
 * a VDU with no workload in the package, and one object defined in several
 * (alternative) files. The request's own files are checked at instantiate.
 */
import type { Finding, PackageFiles } from '../model/package-files.js';
import { isMapping } from '../yaml.js';
import type { Vnfd } from '../model/vnfd.js';
import { lineOf, parseYaml, splitYamlDocuments } from './yaml-source.js';
import { reachBeyond, reachFinding, type ReachObject } from './kubernetes-reach.js';

/** An apiVersion (for some kinds, or all) that Kubernetes no longer serves. */
export interface RemovedApi {
  apiVersion: string;
  /** Kinds this entry covers; undefined for every kind of the apiVersion. */
  kinds?: readonly string[];
  /** The Kubernetes minor release that stopped serving it, e.g. "1.16". */
  removedIn: string;
  /** The apiVersion to use instead; undefined when the API was dropped without one. */
  replacement?: string;
  /** What else changes when moving, or what replaces a dropped API. */
  note?: string;
}

/**
 * From the Kubernetes "Deprecated API Migration Guide" (Removed APIs by
 * release, v1.16 through v1.32). The most specific entry (with kinds) wins.
 */
export const REMOVED_APIS: readonly RemovedApi[] = [
  // v1.16
  {
    apiVersion: 'extensions/v1beta1',
    kinds: ['Deployment', 'DaemonSet', 'ReplicaSet'],
    removedIn: '1.16',
    replacement: 'apps/v1',
    note: 'apps/v1 requires spec.selector matching the pod template labels',
  },
  { apiVersion: 'extensions/v1beta1', kinds: ['NetworkPolicy'], removedIn: '1.16', replacement: 'networking.k8s.io/v1' },
  {
    apiVersion: 'extensions/v1beta1',
    kinds: ['PodSecurityPolicy'],
    removedIn: '1.16',
    note: 'PodSecurityPolicy itself was removed in 1.25; use Pod Security Admission (namespace labels pod-security.kubernetes.io/*) instead',
  },
  {
    apiVersion: 'apps/v1beta1',
    kinds: ['Deployment', 'StatefulSet', 'ReplicaSet', 'DaemonSet'],
    removedIn: '1.16',
    replacement: 'apps/v1',
    note: 'apps/v1 requires spec.selector matching the pod template labels',
  },
  {
    apiVersion: 'apps/v1beta2',
    kinds: ['Deployment', 'StatefulSet', 'ReplicaSet', 'DaemonSet'],
    removedIn: '1.16',
    replacement: 'apps/v1',
    note: 'apps/v1 requires spec.selector matching the pod template labels',
  },
  // v1.22
  {
    apiVersion: 'extensions/v1beta1',
    kinds: ['Ingress'],
    removedIn: '1.22',
    replacement: 'networking.k8s.io/v1',
    note: 'spec.backend becomes spec.defaultBackend, serviceName/servicePort become service.name/service.port, and pathType is required',
  },
  {
    apiVersion: 'networking.k8s.io/v1beta1',
    kinds: ['Ingress'],
    removedIn: '1.22',
    replacement: 'networking.k8s.io/v1',
    note: 'spec.backend becomes spec.defaultBackend, serviceName/servicePort become service.name/service.port, and pathType is required',
  },
  { apiVersion: 'networking.k8s.io/v1beta1', kinds: ['IngressClass'], removedIn: '1.22', replacement: 'networking.k8s.io/v1' },
  { apiVersion: 'rbac.authorization.k8s.io/v1beta1', removedIn: '1.22', replacement: 'rbac.authorization.k8s.io/v1' },
  {
    apiVersion: 'apiextensions.k8s.io/v1beta1',
    removedIn: '1.22',
    replacement: 'apiextensions.k8s.io/v1',
    note: 'v1 needs spec.versions[*].schema.openAPIV3Schema (a structural schema) and an explicit spec.scope',
  },
  {
    apiVersion: 'admissionregistration.k8s.io/v1beta1',
    removedIn: '1.22',
    replacement: 'admissionregistration.k8s.io/v1',
    note: 'v1 requires webhooks[*].sideEffects and admissionReviewVersions',
  },
  { apiVersion: 'apiregistration.k8s.io/v1beta1', removedIn: '1.22', replacement: 'apiregistration.k8s.io/v1' },
  { apiVersion: 'authentication.k8s.io/v1beta1', removedIn: '1.22', replacement: 'authentication.k8s.io/v1' },
  { apiVersion: 'authorization.k8s.io/v1beta1', removedIn: '1.22', replacement: 'authorization.k8s.io/v1', note: 'spec.group is renamed spec.groups' },
  { apiVersion: 'certificates.k8s.io/v1beta1', removedIn: '1.22', replacement: 'certificates.k8s.io/v1', note: 'v1 requires spec.signerName and spec.usages' },
  { apiVersion: 'coordination.k8s.io/v1beta1', removedIn: '1.22', replacement: 'coordination.k8s.io/v1' },
  { apiVersion: 'scheduling.k8s.io/v1beta1', removedIn: '1.22', replacement: 'scheduling.k8s.io/v1' },
  { apiVersion: 'storage.k8s.io/v1beta1', kinds: ['CSIDriver', 'CSINode', 'StorageClass', 'VolumeAttachment'], removedIn: '1.22', replacement: 'storage.k8s.io/v1' },
  // v1.25
  { apiVersion: 'batch/v1beta1', kinds: ['CronJob'], removedIn: '1.25', replacement: 'batch/v1' },
  { apiVersion: 'discovery.k8s.io/v1beta1', removedIn: '1.25', replacement: 'discovery.k8s.io/v1', note: 'topology is replaced by per-endpoint nodeName and zone' },
  { apiVersion: 'events.k8s.io/v1beta1', removedIn: '1.25', replacement: 'events.k8s.io/v1' },
  { apiVersion: 'autoscaling/v2beta1', removedIn: '1.25', replacement: 'autoscaling/v2' },
  {
    apiVersion: 'policy/v1beta1',
    kinds: ['PodDisruptionBudget'],
    removedIn: '1.25',
    replacement: 'policy/v1',
    note: 'in policy/v1 an empty spec.selector selects every pod in the namespace',
  },
  {
    apiVersion: 'policy/v1beta1',
    kinds: ['PodSecurityPolicy'],
    removedIn: '1.25',
    note: 'PodSecurityPolicy has no successor API; use Pod Security Admission (namespace labels pod-security.kubernetes.io/*) instead',
  },
  { apiVersion: 'node.k8s.io/v1beta1', kinds: ['RuntimeClass'], removedIn: '1.25', replacement: 'node.k8s.io/v1' },
  // v1.26, v1.27, v1.29, v1.32
  { apiVersion: 'autoscaling/v2beta2', removedIn: '1.26', replacement: 'autoscaling/v2' },
  { apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta1', removedIn: '1.26', replacement: 'flowcontrol.apiserver.k8s.io/v1' },
  { apiVersion: 'storage.k8s.io/v1beta1', kinds: ['CSIStorageCapacity'], removedIn: '1.27', replacement: 'storage.k8s.io/v1' },
  { apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2', removedIn: '1.29', replacement: 'flowcontrol.apiserver.k8s.io/v1' },
  { apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta3', removedIn: '1.32', replacement: 'flowcontrol.apiserver.k8s.io/v1' },
  // Anything else under extensions/v1beta1 went with the group (last kinds removed in 1.22).
  { apiVersion: 'extensions/v1beta1', removedIn: '1.22', note: "the extensions group is gone; use the kind's current group (apps/v1, networking.k8s.io/v1, ...)" },
];

/** The removal entry for an object's apiVersion and kind, if Kubernetes no longer serves it. */
export function findRemovedApi(apiVersion: string, kind: string): RemovedApi | undefined {
  const candidates = REMOVED_APIS.filter((r) => r.apiVersion === apiVersion);
  return candidates.find((r) => r.kinds?.includes(kind)) ?? candidates.find((r) => r.kinds === undefined);
}

/** Kinds whose pods a VDU maps to (Tacker's CNF VDU kinds). */
export const WORKLOAD_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Pod'] as const;

/**
 * Built-in kinds that never carry a VDU's pods. A VDU named after one of
 * these alone is a mistake; a custom resource (Cluster API's
 * MachineDeployment, say) may stand for a VDU.
 */
const NON_WORKLOAD_KINDS = new Set([
  'Service',
  'ConfigMap',
  'Secret',
  'ServiceAccount',
  'Role',
  'RoleBinding',
  'ClusterRole',
  'ClusterRoleBinding',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'StorageClass',
  'Namespace',
  'NetworkPolicy',
  'Ingress',
  'IngressClass',
  'LimitRange',
  'ResourceQuota',
  'HorizontalPodAutoscaler',
  'PodDisruptionBudget',
  'Endpoints',
  'EndpointSlice',
  'CustomResourceDefinition',
  'PriorityClass',
  'Lease',
  'Job',
  'CronJob',
]);

/**
 * Kinds that are only ever created, never read back or named: the API server
 * answers them in the response and keeps nothing, so they need no
 * metadata.name. Tacker creates them with create only
 * (AuthenticationResource in
 * tacker/sol_refactored/infra_drivers/kubernetes/kubernetes_resource.py).
 */
export const CREATE_ONLY_KINDS: ReadonlySet<string> = new Set([
  'SubjectAccessReview',
  'LocalSubjectAccessReview',
  'SelfSubjectAccessReview',
  'SelfSubjectRulesReview',
  'TokenReview',
  'SelfSubjectReview',
]);

interface ManifestObject {
  file: string;
  line: number;
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/**
 * Lints the Kubernetes definition files `paths` (package paths, as listed by
 * `lcm-kubernetes-def-files`). With a VNFD, also checks that every VDU of
 * every flavour has a workload named after it.
 */
export async function lintKubernetesDefinitions(files: PackageFiles, paths: string[], vnfd?: Vnfd): Promise<Finding[]> {
  const findings: Finding[] = [];
  const objects: ManifestObject[] = [];
  const scalable = new Map<string, boolean>();
  for (const path of paths) {
    if (!files.has(path)) {
      findings.push({
        severity: 'error',
        code: 'kubernetes-file-missing',
        file: path,
        message: `Kubernetes definition file ${path} is listed but not in the package`,
        hint: 'add the file under Files/kubernetes/, or remove it from lcm-kubernetes-def-files',
      });
      continue;
    }
    let text: string;
    try {
      text = await files.readText(path);
    } catch (err) {
      findings.push({
        severity: 'error',
        code: 'kubernetes-file-unreadable',
        file: path,
        message: `cannot be read: ${err instanceof Error ? err.message : String(err)}`,
        hint: 'Kubernetes definition files are YAML manifests of a few KiB',
      });
      continue;
    }
    lintFile(path, text, objects, findings, scalable);
  }
  checkDuplicates(objects, findings);
  if (vnfd && paths.length > 0) {
    const texts = new Map<string, string>();
    for (const flavour of Object.values(vnfd.flavours)) {
      if (!texts.has(flavour.file)) texts.set(flavour.file, await files.readText(flavour.file).catch(() => ''));
    }
    checkVduNames(vnfd, objects, texts, findings, scalable);
  }
  return findings;
}

/** How a rendered chart's reach beyond its instance is judged: the namespace it was rendered in, and whether reaching is refused. */
export interface RenderedReach {
  namespace: string;
  strict?: boolean;
}

/**
 * The lint of a Helm chart's rendered manifests (`helm template` output):
 * each object parses and uses no apiVersion Kubernetes removed; with
 * `reach`, each object that is cluster-scoped or in another namespace than
 * the one the chart was rendered in is a warning (an error when strict).
 * Findings name the chart and the template each object came from (Helm's
 * `# Source:` comments).
 */
export function lintRenderedChart(chartPath: string, rendered: string, reach?: RenderedReach): Finding[] {
  const findings: Finding[] = [];
  const objects: ManifestObject[] = [];
  const scalable = new Map<string, boolean>();
  const docs: Array<{ doc: ReachObject; at: ManifestObject }> = [];
  // helm template starts each template's documents with "---" then "# Source: <chart>/templates/<file>".
  const parts = rendered.split(/^(?=---\s*\n# Source: )/m);
  for (const part of parts) {
    const source = /^# Source: (.+)$/m.exec(part)?.[1]?.trim();
    if (splitYamlDocuments(part).length === 0) continue;
    lintFile(source ? `${chartPath} (${source})` : chartPath, part, objects, findings, scalable, (doc, at) => docs.push({ doc, at }));
  }
  if (reach) {
    const beyond = reachBeyond(
      docs.map((d) => d.doc),
      reach.namespace,
      'the namespace the chart is installed in',
    );
    for (const r of beyond) {
      const at = docs.find((d) => d.doc.kind === r.kind && d.doc.metadata.name === r.name && (r.namespace === undefined || d.doc.metadata.namespace === r.namespace))?.at;
      findings.push(reachFinding(r, at?.file ?? chartPath, at?.line, reach.strict === true));
    }
  }
  return findings;
}

/**
 * `scalable`: `<apiVersion>/<Kind>` → whether the package's CRD gives that version a /scale subresource.
 * `seen`: given each named object's document, with where it is.
 */
function lintFile(
  path: string,
  text: string,
  objects: ManifestObject[],
  findings: Finding[],
  scalable: Map<string, boolean>,
  seen?: (doc: ReachObject, at: ManifestObject) => void,
): void {
  const docs = splitYamlDocuments(text);
  if (docs.length === 0) {
    findings.push({
      severity: 'error',
      code: 'kubernetes-object-invalid',
      file: path,
      message: 'holds no Kubernetes object',
      hint: 'a Kubernetes definition file holds one or more objects (apiVersion, kind, metadata.name), separated by ---',
    });
    return;
  }
  for (const { text: docText, startLine, firstLine } of docs) {
    const parsed = parseYaml(docText, path, startLine - 1);
    if (!parsed.ok) {
      findings.push(parsed.finding);
      continue;
    }
    const doc = parsed.doc;
    if (doc === null || doc === undefined) continue;
    const at = (key: string[]) => {
      const l = lineOf(docText, key);
      return l === undefined ? firstLine : l + startLine - 1;
    };
    if (!isMapping(doc)) {
      findings.push({
        severity: 'error',
        code: 'kubernetes-object-invalid',
        file: path,
        line: firstLine,
        message: 'a document here is not a Kubernetes object (a mapping)',
        hint: 'each document needs apiVersion, kind and metadata.name',
      });
      continue;
    }
    const apiVersion = doc.apiVersion;
    const kind = doc.kind;
    const metadata = isMapping(doc.metadata) ? doc.metadata : {};
    const name = metadata.name;
    const createOnly = typeof kind === 'string' && CREATE_ONLY_KINDS.has(kind);
    const missing = [
      typeof apiVersion === 'string' && apiVersion !== '' ? undefined : 'apiVersion',
      typeof kind === 'string' && kind !== '' ? undefined : 'kind',
      (typeof name === 'string' && name !== '') || createOnly ? undefined : 'metadata.name',
    ].filter((m): m is string => m !== undefined);
    if (missing.length > 0) {
      findings.push({
        severity: 'error',
        code: 'kubernetes-object-invalid',
        file: path,
        line: firstLine,
        message: `the object starting here has no ${missing.join(', ')}`,
        hint: 'each object needs apiVersion (e.g. apps/v1), kind (e.g. Deployment) and metadata.name; generateName is not enough, as vnfm tracks resources by name',
      });
      continue;
    }
    if (createOnly && (typeof name !== 'string' || name === '')) {
      const removed = findRemovedApi(apiVersion as string, kind as string);
      if (removed)
        findings.push(removedApiFinding({ file: path, line: firstLine, apiVersion: apiVersion as string, kind: kind as string, name: '(unnamed)' }, removed, at(['apiVersion'])));
      continue;
    }
    const object: ManifestObject = {
      file: path,
      line: at(['metadata', 'name']),
      apiVersion: apiVersion as string,
      kind: kind as string,
      name: name as string,
      namespace: typeof metadata.namespace === 'string' ? metadata.namespace : undefined,
    };
    objects.push(object);
    seen?.(doc as unknown as ReachObject, object);
    if (object.kind === 'CustomResourceDefinition' && isMapping(doc.spec)) recordScale(doc.spec, scalable);
    const removed = findRemovedApi(object.apiVersion, object.kind);
    if (removed) findings.push(removedApiFinding(object, removed, at(['apiVersion'])));
  }
}

function removedApiFinding(object: ManifestObject, removed: RemovedApi, line: number): Finding {
  const what = `${object.kind} ${object.name} uses apiVersion ${object.apiVersion}, which Kubernetes stopped serving in v${removed.removedIn}`;
  const hint = removed.replacement
    ? `change it to "apiVersion: ${removed.replacement}"${removed.note ? `; ${removed.note}` : ''}`
    : `there is no replacement API: ${removed.note ?? 'remove the object'}`;
  return {
    severity: 'error',
    code: 'removed-api-version',
    file: object.file,
    line,
    message: removed.replacement ? `${what}; its replacement is ${removed.replacement}` : `${what}, with no replacement`,
    hint,
  };
}

function checkDuplicates(objects: ManifestObject[], findings: Finding[]): void {
  const seen = new Map<string, ManifestObject>();
  for (const o of objects) {
    const key = `${o.apiVersion.split('/').length > 1 ? o.apiVersion.split('/')[0] : ''}/${o.kind}/${o.namespace ?? ''}/${o.name}`;
    const first = seen.get(key);
    if (first && first.file !== o.file) {
      // Tacker's samples ship alternatives (one Deployment in two files, say) of which a request names one.
      findings.push({
        severity: 'info',
        code: 'kubernetes-object-alternative',
        file: o.file,
        line: o.line,
        message: `${o.kind} ${o.name} is also defined in ${first.file}:${first.line}; the files are alternatives, and an instantiate request may name only one of them`,
        hint: 'nothing to change if the files are meant as alternatives; a request naming both is refused',
      });
    } else if (first) {
      findings.push({
        severity: 'error',
        code: 'kubernetes-object-duplicate',
        file: o.file,
        line: o.line,
        message: `${o.kind} ${o.name} is defined twice in this file (first at line ${first.line})`,
        hint: 'each object may appear once in a definition file; rename or remove one',
      });
    } else {
      seen.set(key, o);
    }
  }
}

function recordScale(spec: Record<string, unknown>, scalable: Map<string, boolean>): void {
  const names = isMapping(spec.names) ? spec.names : {};
  if (typeof spec.group !== 'string' || typeof names.kind !== 'string' || !Array.isArray(spec.versions)) return;
  for (const v of spec.versions) {
    if (!isMapping(v) || typeof v.name !== 'string') continue;
    const subresources = isMapping(v.subresources) ? v.subresources : {};
    scalable.set(`${spec.group}/${v.name}/${names.kind}`, isMapping(subresources.scale));
  }
}

/** `flavourTexts`: the flavour files' source, to point each finding at the VDU's name line. */
function checkVduNames(vnfd: Vnfd, objects: ManifestObject[], flavourTexts: Map<string, string>, findings: Finding[], scalable: Map<string, boolean>): void {
  const workloads = objects.filter((o) => (WORKLOAD_KINDS as readonly string[]).includes(o.kind));
  const workloadNames = [...new Set(workloads.map((o) => `${o.kind} ${o.name}`))];
  for (const flavour of Object.values(vnfd.flavours)) {
    for (const vdu of Object.values(flavour.vdus)) {
      const named = objects.filter((o) => o.name === vdu.name);
      const candidates = named.filter((o) => !NON_WORKLOAD_KINDS.has(o.kind));
      // A custom resource stands for a VDU only through /scale; the package's own CRDs say whether it has one.
      const unscalable = candidates.filter((o) => scalable.get(`${o.apiVersion}/${o.kind}`) === false);
      if (candidates.length > 0 && unscalable.length === candidates.length) {
        findings.push({
          severity: 'error',
          code: 'vdu-resource-not-scalable',
          file: flavour.file,
          line: lineOf(flavourTexts.get(flavour.file) ?? '', ['topology_template', 'node_templates', vdu.nodeName, 'properties', 'name']),
          message: `VDU ${vdu.nodeName} of flavour ${flavour.id} is named ${vdu.name}, which only ${unscalable.map((o) => `${o.kind} (${o.file}:${o.line})`).join(', ')} is called, and the package's CRD gives that kind no /scale subresource`,
          hint: 'name the VDU after a workload or a custom resource whose CRD declares subresources.scale (specReplicasPath, statusReplicasPath), or add scale to that CRD version',
        });
        continue;
      }
      if (candidates.length > 0) continue;
      // Tacker maps only the VDUs whose workload a request deploys (_select_vdu_reses), so this is a note.
      findings.push({
        severity: 'info',
        code: 'vdu-resource-missing',
        file: flavour.file,
        line: lineOf(flavourTexts.get(flavour.file) ?? '', ['topology_template', 'node_templates', vdu.nodeName, 'properties', 'name']),
        message:
          named.length > 0
            ? `VDU ${vdu.nodeName} of flavour ${flavour.id} is named ${vdu.name}, which only a ${named.map((o) => o.kind).join('/')} is called; a VDU maps to a workload, so an instance of this package runs without ${vdu.nodeName}`
            : `VDU ${vdu.nodeName} of flavour ${flavour.id} is named ${vdu.name}, and no object in the Kubernetes definition files has that metadata.name, so an instance of this package runs without ${vdu.nodeName}`,
        hint: workloadNames.length
          ? `if ${vdu.nodeName} should run, set its properties.name to a workload's metadata.name (workloads found: ${workloadNames.join(', ')}) or add a Deployment/StatefulSet/DaemonSet/ReplicaSet/Pod named ${vdu.name}`
          : `if ${vdu.nodeName} should run, add a Deployment, StatefulSet, DaemonSet, ReplicaSet or Pod named ${vdu.name} to the Kubernetes definition files`,
      });
    }
  }
}
