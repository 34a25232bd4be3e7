/**
 * What the API server checks and adds for built-in kinds on its own: workload
 * selectors and containers, the immutable parts of pods, StatefulSets, Jobs
 * and claims, and the ServiceAccount token volume of a new pod.
 */
import type { FieldError } from '../status.js';
import { goLabelSelector, goStringMap, invalid } from '../status.js';
import { matchesSelector, type LabelSelectorObject } from '../selectors.js';
import type { KubeObject, ResourceStrategy } from '../resources.js';
import { generateNameSuffix } from '../generate-name.js';
import { spec, status, type Obj } from './kind-def.js';

/**
 * Workloads need a non-empty selector that matches their pod template's
 * labels (apps/v1 validation), and the server reports each failure: a
 * missing selector selects nothing, so the template's labels fail to match
 * it too; an empty one selects everything, so they are not checked. A
 * DaemonSet's selector has no Required check of its own.
 */
export function validateSelectorTemplate(o: KubeObject, kind: 'deployment' | 'replicaset' | 'statefulset' | 'daemonset'): FieldError[] {
  const s = spec(o);
  const selector = s.selector as LabelSelectorObject | undefined | null;
  const errors: FieldError[] = [];
  const empty = !!selector && Object.keys(selector.matchLabels ?? {}).length === 0 && !(selector.matchExpressions ?? []).length;
  // The ReplicaSet check says `deployment` too: the API server's validation shares the words.
  const word = kind === 'replicaset' ? 'deployment' : kind;
  const emptyError: FieldError = {
    type: 'FieldValueInvalid',
    field: 'spec.selector',
    goValue: goLabelSelector(selector ?? undefined),
    detail: `empty selector is invalid for ${word}`,
  };
  if (!selector && kind !== 'daemonset') errors.push({ type: 'FieldValueRequired', field: 'spec.selector', detail: '' });
  if (empty && kind !== 'daemonset') errors.push(emptyError);
  const template = s.template as Obj | undefined;
  const labels = (template?.metadata as Obj | undefined)?.labels as Record<string, string> | undefined;
  if (!empty && (!selector || !matchesSelector(selector, labels))) {
    errors.push({
      type: 'FieldValueInvalid',
      field: 'spec.template.metadata.labels',
      value: labels ?? {},
      goValue: goStringMap(labels),
      detail: '`selector` does not match template `labels`',
    });
  }
  if (empty && kind === 'daemonset') errors.push(emptyError);
  return [...errors, ...validateContainers((template?.spec as Obj | undefined) ?? {}, 'spec.template.spec')];
}

export function validateContainers(podSpec: Obj, path: string): FieldError[] {
  const containers = podSpec.containers as Obj[] | undefined;
  if (!Array.isArray(containers) || containers.length === 0) return [{ type: 'FieldValueRequired', field: `${path}.containers`, detail: '' }];
  const errors: FieldError[] = [];
  containers.forEach((c, i) => {
    if (!c?.name) errors.push({ type: 'FieldValueRequired', field: `${path}.containers[${i}].name`, detail: '' });
    if (!c?.image) errors.push({ type: 'FieldValueRequired', field: `${path}.containers[${i}].image`, detail: '' });
  });
  return errors;
}

const POD_UPDATABLE =
  'pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/**
 * A pod's spec is immutable but for images, activeDeadlineSeconds,
 * added tolerations and terminationGracePeriodSeconds (ValidatePodUpdate).
 * The real message ends with a Go diff of the internal PodSpec; this one
 * lists the changed fields instead.
 */
export function validatePodUpdate(o: KubeObject, old: KubeObject): FieldError[] {
  const now = spec(o);
  const before = spec(old);
  for (const key of ['containers', 'initContainers'] as const) {
    if (((now[key] as Obj[] | undefined) ?? []).length !== ((before[key] as Obj[] | undefined) ?? []).length) {
      return [{ type: 'FieldValueForbidden', field: `spec.${key}`, detail: 'pod updates may not add or remove containers' }];
    }
  }
  const masked = (s: Obj, images: Obj): Obj => {
    const copy = structuredClone(s);
    for (const key of ['containers', 'initContainers'] as const) {
      ((copy[key] as Obj[] | undefined) ?? []).forEach((c, i) => {
        if (c) c.image = ((images[key] as Obj[] | undefined) ?? [])[i]?.image;
      });
    }
    delete copy.activeDeadlineSeconds;
    delete copy.terminationGracePeriodSeconds;
    delete copy.tolerations;
    return copy;
  };
  const a = masked(now, before);
  const b = masked(before, before);
  const changed = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k])).sort();
  const oldTolerations = ((before.tolerations as Obj[] | undefined) ?? []).map((t) => JSON.stringify(t));
  const newTolerations = new Set(((now.tolerations as Obj[] | undefined) ?? []).map((t) => JSON.stringify(t)));
  if (oldTolerations.some((t) => !newTolerations.has(t))) changed.push('tolerations');
  if (changed.length === 0) return [];
  const diff = changed.map((k) => `  spec.${k}: ${JSON.stringify(b[k] ?? null)} -> ${JSON.stringify(a[k] ?? null)}`).join('\n');
  return [{ type: 'FieldValueForbidden', field: 'spec', detail: `${POD_UPDATABLE}\n${diff}\n` }];
}

const SERVICE_ACCOUNT_MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * What the ServiceAccount admission plugin adds to a new pod: a projected
 * `kube-api-access-*` volume (token, cluster CA, namespace) mounted
 * read-only into every container, unless the pod or its ServiceAccount
 * opts out or a container already mounts something there.
 */
export function mountServiceAccountToken(o: KubeObject, serviceAccount: KubeObject): void {
  const s = spec(o);
  if (s.automountServiceAccountToken === false) return;
  if (s.automountServiceAccountToken === undefined && serviceAccount.automountServiceAccountToken === false) return;
  const containers = [...((s.initContainers as Obj[] | undefined) ?? []), ...((s.containers as Obj[] | undefined) ?? [])].filter((c) => c && typeof c === 'object');
  if (containers.some((c) => ((c.volumeMounts as Obj[] | undefined) ?? []).some((m) => m?.mountPath === SERVICE_ACCOUNT_MOUNT))) return;
  const name = `kube-api-access-${generateNameSuffix()}`;
  const volumes = Array.isArray(s.volumes) ? (s.volumes as Obj[]) : [];
  volumes.push({
    name,
    projected: {
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
      defaultMode: 420,
    },
  });
  s.volumes = volumes;
  for (const c of containers) c.volumeMounts = [...((c.volumeMounts as Obj[] | undefined) ?? []), { name, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT }];
}

/** The fields of `spec` that differ between two objects, except `allowed`. */
function changedSpecFields(o: KubeObject, old: KubeObject, allowed: string[]): string[] {
  const a = spec(o);
  const b = spec(old);
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !allowed.includes(k) && JSON.stringify(a[k]) !== JSON.stringify(b[k])).sort();
}

/** A StatefulSet's spec may change only in the fields the API server lists (its 1.25 wording). */
export function validateStatefulSetUpdate(o: KubeObject, old: KubeObject): FieldError[] {
  if (changedSpecFields(o, old, ['replicas', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds']).length === 0) return [];
  return [
    {
      type: 'FieldValueForbidden',
      field: 'spec',
      detail:
        "updates to statefulset spec for fields other than 'replicas', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    },
  ];
}

/** A Job's pod template cannot change (the real message prints the whole internal template; this one its JSON). */
export function validateJobUpdate(o: KubeObject, old: KubeObject): FieldError[] {
  const now = spec(o).template;
  if (JSON.stringify(now) === JSON.stringify(spec(old).template)) return [];
  return [{ type: 'FieldValueInvalid', field: 'spec.template', value: now, detail: 'field is immutable' }];
}

/**
 * A claim's spec is immutable but for its requests (once bound), the volume
 * the binder sets once, and a storage class set where there was none.
 */
export function validateClaimUpdate(o: KubeObject, old: KubeObject): FieldError[] {
  const allowed = ['resources'];
  if (!spec(old).volumeName) allowed.push('volumeName');
  if (spec(old).storageClassName === undefined) allowed.push('storageClassName');
  const changed = changedSpecFields(o, old, allowed);
  const bound = status(old).phase === 'Bound';
  if (!bound && JSON.stringify(spec(o).resources) !== JSON.stringify(spec(old).resources)) changed.push('resources');
  if (changed.length === 0) return [];
  const diff = changed.map((k) => `  spec.${k}: ${JSON.stringify(spec(old)[k] ?? null)} -> ${JSON.stringify(spec(o)[k] ?? null)}`).join('\n');
  return [{ type: 'FieldValueForbidden', field: 'spec', detail: `spec is immutable after creation except resources.requests for bound claims\n${diff}\n` }];
}

/** apps/v1 selectors cannot change after creation. */
export function keepSelector(kind: string, group: string): ResourceStrategy['prepareForUpdate'] {
  return (o, old) => {
    if (JSON.stringify(spec(o).selector) !== JSON.stringify(spec(old).selector)) {
      throw invalid(kind, group, o.metadata.name, [
        {
          type: 'FieldValueInvalid',
          field: 'spec.selector',
          value: spec(o).selector,
          goValue: goLabelSelector(spec(o).selector as LabelSelectorObject | undefined),
          detail: 'field is immutable',
        },
      ]);
    }
  };
}
