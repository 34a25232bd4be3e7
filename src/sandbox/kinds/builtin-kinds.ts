/**
 * The built-in workload, networking, storage, RBAC and policy kinds, all
 * served by the generic handlers. What a real API server does for a kind on
 * its own — defaults, a few validations, the Service IP allocator — lives
 * in the kind's strategy here; what controllers do lives in controllers/.
 */
import type { FieldError } from '../status.js';
import { goLabelSelector, goStringMap, goStrings, invalid } from '../status.js';
import { fieldLabelNotSupported, formatSelector, matchesSelector, METADATA_FIELDS, type FieldGetter, type LabelSelectorObject, type SelectableFields } from '../selectors.js';
import type { KubeObject, ResourceStrategy, ResourceType, SubresourceType, TableColumn, Verb } from '../resources.js';
import * as d from './defaults.js';
import { generateNameSuffix } from '../objects.js';
import { hpaStrategy, hpaV1 } from './autoscaling.js';

/** Every verb the generic handlers serve. */
export const ALL_VERBS: Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const STATUS = { name: 'status', verbs: ['get', 'patch', 'update'] as Verb[] };
const SCALE = { name: 'scale', verbs: ['get', 'patch', 'update'] as Verb[], responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' } };

type Obj = Record<string, any>;

interface KindDef {
  group: string;
  version: string;
  kind: string;
  plural?: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  status?: boolean;
  scale?: boolean;
  generation?: boolean;
  columns?: TableColumn[];
  strategy?: ResourceStrategy;
  returnDeletedObject?: boolean;
  fields?: SelectableFields;
  noAgeColumn?: boolean;
  extraSubresources?: SubresourceType[];
}

/** Selectable fields of a kind with its own field-label conversion: metadata.name/namespace and `more`. */
export function ownFields(more: Record<string, FieldGetter>, opts: { clusterScoped?: boolean; unsupported?: (field: string) => string } = {}): SelectableFields {
  const fields = { ...METADATA_FIELDS, ...more };
  if (opts.clusterScoped) delete fields['metadata.namespace'];
  return { fields, unsupported: opts.unsupported ?? fieldLabelNotSupported };
}

const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

function define(def: KindDef): ResourceType {
  const plural = def.plural ?? `${def.kind.toLowerCase()}s`;
  const type: ResourceType = {
    group: def.group,
    version: def.version,
    kind: def.kind,
    listKind: `${def.kind}List`,
    plural,
    singular: def.kind.toLowerCase(),
    namespaced: def.namespaced,
    verbs: ALL_VERBS,
    nameRule: 'dns1123-subdomain',
    strategicMerge: true,
  };
  if (def.shortNames) type.shortNames = def.shortNames;
  if (def.categories) type.categories = def.categories;
  const subresources = [...(def.status ? [STATUS] : []), ...(def.scale ? [SCALE] : []), ...(def.extraSubresources ?? [])];
  if (subresources.length) type.subresources = subresources;
  if (def.scale) {
    type.scale = {
      specReplicasPath: 'spec.replicas',
      statusReplicasPath: 'status.replicas',
      labelSelector: (o) => formatSelector((o.spec as Obj | undefined)?.selector as LabelSelectorObject | undefined),
    };
  }
  if (def.generation) type.generation = true;
  if (def.columns) type.columns = def.columns;
  if (def.strategy) type.strategy = def.strategy;
  if (def.returnDeletedObject) type.returnDeletedObject = true;
  if (def.fields) type.selectableFields = def.fields;
  if (def.noAgeColumn) type.noAgeColumn = true;
  return type;
}

const col = (name: string, cell: (o: Obj) => unknown, type: TableColumn['type'] = 'string', priority = 0): TableColumn => ({
  name,
  type,
  description: name,
  priority,
  cell: cell as (o: KubeObject) => unknown,
});

/** The wide columns of workloads: their template's containers and images, and their selector. */
export function templateColumns(selector: boolean, templateOf: (o: Obj) => Obj | undefined = (o) => spec(o).template as Obj | undefined): TableColumn[] {
  const containers = (o: Obj): Obj[] => ((templateOf(o)?.spec as Obj | undefined)?.containers as Obj[] | undefined) ?? [];
  const cols = [
    col('Containers', (o) => containers(o).map((c) => c.name).join(','), 'string', 1),
    col('Images', (o) => containers(o).map((c) => c.image).join(','), 'string', 1),
  ];
  if (selector) {
    cols.push(
      col('Selector', (o) => {
        const sel = spec(o).selector as Obj | undefined;
        if (sel && (sel.matchLabels || sel.matchExpressions)) return formatSelector(sel as LabelSelectorObject) || '<none>';
        return Object.entries((sel as Record<string, string> | undefined) ?? {}).map(([k, v]) => `${k}=${v}`).join(',') || '<none>';
      }, 'string', 1),
    );
  }
  return cols;
}

/** The `Created At` column some kinds print instead of Age. */
const createdAt: TableColumn = { name: 'Created At', type: 'date', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.', priority: 0, cell: (o) => o.metadata.creationTimestamp };

const spec = (o: Obj): Obj => (o.spec as Obj | undefined) ?? {};
const status = (o: Obj): Obj => (o.status as Obj | undefined) ?? {};

/** Workloads need a selector that matches their pod template's labels (apps/v1 validation). */
function validateSelectorTemplate(o: KubeObject, templatePath: string[] = ['spec', 'template']): FieldError[] {
  const s = spec(o);
  const selector = s.selector as LabelSelectorObject | undefined;
  const errors: FieldError[] = [];
  if (!selector || (Object.keys(selector.matchLabels ?? {}).length === 0 && !(selector.matchExpressions ?? []).length)) {
    errors.push({ type: 'FieldValueRequired', field: 'spec.selector', detail: '' });
    return errors;
  }
  let template: Obj | undefined = o;
  for (const p of templatePath) template = template?.[p] as Obj | undefined;
  const labels = (template?.metadata as Obj | undefined)?.labels as Record<string, string> | undefined;
  if (!matchesSelector(selector, labels)) {
    errors.push({
      type: 'FieldValueInvalid',
      field: `${templatePath.join('.')}.metadata.labels`,
      value: labels ?? {},
      goValue: goStringMap(labels ?? {}),
      detail: '`selector` does not match template `labels`',
    });
  }
  return [...errors, ...validateContainers((template?.spec as Obj | undefined) ?? {}, `${templatePath.join('.')}.spec`)];
}

function validateContainers(podSpec: Obj, path: string): FieldError[] {
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
function validateStatefulSetUpdate(o: KubeObject, old: KubeObject): FieldError[] {
  if (changedSpecFields(o, old, ['replicas', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds']).length === 0) return [];
  return [
    {
      type: 'FieldValueForbidden',
      field: 'spec',
      detail: "updates to statefulset spec for fields other than 'replicas', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    },
  ];
}

/** A Job's pod template cannot change (the real message prints the whole internal template; this one its JSON). */
function validateJobUpdate(o: KubeObject, old: KubeObject): FieldError[] {
  const now = spec(o).template;
  if (JSON.stringify(now) === JSON.stringify(spec(old).template)) return [];
  return [{ type: 'FieldValueInvalid', field: 'spec.template', value: now, detail: 'field is immutable' }];
}

/**
 * A claim's spec is immutable but for its requests (once bound), the volume
 * the binder sets once, and a storage class set where there was none.
 */
function validateClaimUpdate(o: KubeObject, old: KubeObject): FieldError[] {
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
function keepSelector(kind: string, group: string): ResourceStrategy['prepareForUpdate'] {
  return (o, old) => {
    if (JSON.stringify(spec(o).selector) !== JSON.stringify(spec(old).selector)) {
      throw invalid(kind, group, o.metadata.name, [
        { type: 'FieldValueInvalid', field: 'spec.selector', value: spec(o).selector, goValue: goLabelSelector(spec(o).selector as LabelSelectorObject | undefined), detail: 'field is immutable' },
      ]);
    }
  };
}

const ready = (o: Obj): string => `${status(o).readyReplicas ?? 0}/${spec(o).replicas ?? 0}`;

function podReady(o: Obj): string {
  const statuses = (status(o).containerStatuses as Obj[] | undefined) ?? [];
  const total = ((spec(o).containers as Obj[] | undefined) ?? []).length;
  return `${statuses.filter((c) => c.ready).length}/${total}`;
}

function podPhase(o: Obj): string {
  if (o.metadata?.deletionTimestamp) return 'Terminating';
  const waiting = ((status(o).containerStatuses as Obj[] | undefined) ?? []).find((c) => c.state?.waiting?.reason);
  return waiting?.state.waiting.reason ?? status(o).reason ?? status(o).phase ?? 'Pending';
}

/** Per-sandbox allocators for what the API server assigns on create. */
export interface Allocators {
  clusterIp(): string;
  /** Takes an address a Service asks for; an error message when it cannot (`failed to allocate IP ...`). */
  claimClusterIp(ip: string): string | undefined;
  nodePort(): number;
}

/** The service range of the sandbox, as `--service-cluster-ip-range` sets it on an API server. */
export const SERVICE_CIDR = '10.96.0.0/12';

function ipv4(ip: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return ((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!;
}

const isIpv6 = (ip: string): boolean => ip.includes(':') && /^[0-9a-fA-F:.]+$/.test(ip);

export function newAllocators(): Allocators {
  const [base, bits] = SERVICE_CIDR.split('/') as [string, string];
  const first = ipv4(base)!;
  const size = 2 ** (32 - Number(bits));
  const used = new Set<number>();
  let nextIp = 10;
  let nextPort = 30000;
  const show = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
  return {
    clusterIp() {
      while (used.has(first + nextIp)) nextIp++;
      const n = first + nextIp++;
      used.add(n);
      return show(n);
    },
    claimClusterIp(ip) {
      const n = ipv4(ip);
      if (n === undefined || n <= first || n >= first + size - 1) {
        return `failed to allocate IP ${ip}: the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${SERVICE_CIDR}`;
      }
      if (used.has(n)) return `failed to allocate IP ${ip}: provided IP is already allocated`;
      used.add(n);
      return undefined;
    },
    nodePort() {
      return nextPort++;
    },
  };
}

function serviceStrategy(alloc: Allocators): ResourceStrategy {
  return {
    applyDefaults: d.defaultService,
    prepareForCreate(o) {
      const s = spec(o);
      if (s.type !== 'ExternalName') {
        if (s.clusterIP && s.clusterIP !== 'None') {
          const ip = String(s.clusterIP);
          if (ipv4(ip) === undefined && !isIpv6(ip)) {
            throw invalid('Service', '', o.metadata.name, [
              { type: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', value: ip, detail: 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)' },
            ]);
          }
          const problem = alloc.claimClusterIp(ip);
          if (problem) throw invalid('Service', '', o.metadata.name, [{ type: 'FieldValueInvalid', field: 'spec.clusterIPs', value: [ip], goValue: goStrings([ip]), detail: problem }]);
        }
        if (!s.clusterIP) s.clusterIP = alloc.clusterIp();
        s.clusterIPs = [s.clusterIP];
        if (s.clusterIP !== 'None') {
          s.ipFamilies ??= ['IPv4'];
          s.ipFamilyPolicy ??= 'SingleStack';
        }
        if (s.type === 'NodePort' || s.type === 'LoadBalancer') {
          for (const p of (s.ports as Obj[] | undefined) ?? []) p.nodePort ??= alloc.nodePort();
        }
      }
      o.status = { loadBalancer: {} };
    },
    prepareForUpdate(o, old) {
      // As the Service REST storage does: allocated values carry over when the update leaves them out.
      const s = spec(o);
      const before = spec(old);
      s.clusterIP ??= before.clusterIP;
      s.clusterIPs ??= before.clusterIPs;
      if (before.ipFamilies) s.ipFamilies ??= before.ipFamilies;
      if (before.ipFamilyPolicy) s.ipFamilyPolicy ??= before.ipFamilyPolicy;
      for (const p of (s.ports as Obj[] | undefined) ?? []) {
        const was = ((before.ports as Obj[] | undefined) ?? []).find((q) => q.port === p.port && (q.protocol ?? 'TCP') === (p.protocol ?? 'TCP'));
        if (was?.nodePort && (s.type === 'NodePort' || s.type === 'LoadBalancer')) p.nodePort ??= was.nodePort;
      }
      const ips = Array.isArray(s.clusterIPs) ? (s.clusterIPs as string[]) : [String(s.clusterIP)];
      if ((s.clusterIP !== before.clusterIP || ips[0] !== before.clusterIP) && before.clusterIP) {
        throw invalid('Service', '', o.metadata.name, [
          { type: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', value: ips, goValue: goStrings(ips.map(String)), detail: 'may not change once set' },
        ]);
      }
    },
  };
}

/** The kinds beyond namespaces, configmaps, secrets and leases. */
export function builtinKinds(alloc: Allocators): ResourceType[] {
  const kinds = builtinKindsOnce(alloc);
  // autoscaling/v1 serves the same HorizontalPodAutoscalers as v2, converted.
  const hpa = kinds.find((t) => t.group === 'autoscaling' && t.kind === 'HorizontalPodAutoscaler')!;
  kinds.splice(kinds.indexOf(hpa) + 1, 0, hpaV1(hpa));
  return kinds;
}

function builtinKindsOnce(alloc: Allocators): ResourceType[] {
  const core = (def: Omit<KindDef, 'group' | 'version'>): ResourceType => define({ group: '', version: 'v1', ...def });
  const apps = (def: Omit<KindDef, 'group' | 'version'>): ResourceType => define({ group: 'apps', version: 'v1', ...def });

  return [
    core({
      kind: 'Pod',
      namespaced: true,
      returnDeletedObject: true,
      // What a scheduler posts to bind a pod to a node (rest.ts).
      extraSubresources: [{ name: 'binding', verbs: ['create'], responseKind: { group: '', version: 'v1', kind: 'Binding' } }],
      fields: ownFields({
        'spec.nodeName': (o) => str(spec(o).nodeName),
        'spec.restartPolicy': (o) => str(spec(o).restartPolicy),
        'spec.schedulerName': (o) => str(spec(o).schedulerName),
        'spec.serviceAccountName': (o) => str(spec(o).serviceAccountName),
        'status.phase': (o) => str(status(o).phase),
        'status.podIP': (o) => str(status(o).podIP),
        // The field set holds the first IP of each family; the sandbox's pods have one.
        'status.podIPs': (o) => str(((status(o).podIPs as Obj[] | undefined) ?? [])[0]?.ip),
        'status.nominatedNodeName': (o) => str(status(o).nominatedNodeName),
      }),
      shortNames: ['po'],
      categories: ['all'],
      status: true,
      columns: [
        col('Ready', podReady),
        col('Status', podPhase),
        col('Restarts', (o) => String(((status(o).containerStatuses as Obj[] | undefined) ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0))),
        col('IP', (o) => status(o).podIP ?? '<none>', 'string', 1),
        col('Node', (o) => spec(o).nodeName ?? '<none>', 'string', 1),
        col('Nominated Node', (o) => status(o).nominatedNodeName ?? '<none>', 'string', 1),
        col('Readiness Gates', (o) => {
          const gates = (spec(o).readinessGates as Obj[] | undefined) ?? [];
          if (!gates.length) return '<none>';
          const conds = (status(o).conditions as Obj[] | undefined) ?? [];
          return `${gates.filter((g) => conds.some((c) => c.type === g.conditionType && c.status === 'True')).length}/${gates.length}`;
        }, 'string', 1),
      ],
      strategy: {
        applyDefaults: d.defaultPod,
        prepareForCreate(o) {
          o.status = { phase: 'Pending', qosClass: 'BestEffort' };
        },
        validate: (o) => validateContainers(spec(o), 'spec'),
        validateUpdate: validatePodUpdate,
      },
    }),
    core({
      kind: 'Service',
      returnDeletedObject: true,
      namespaced: true,
      shortNames: ['svc'],
      categories: ['all'],
      status: true,
      columns: [
        col('Type', (o) => spec(o).type),
        col('Cluster-IP', (o) => spec(o).clusterIP ?? '<none>'),
        col('External-IP', (o) => spec(o).externalName ?? ((status(o).loadBalancer?.ingress as Obj[] | undefined)?.map((i) => i.ip).join(',') || (spec(o).type === 'LoadBalancer' ? '<pending>' : '<none>'))),
        col('Port(s)', (o) => ((spec(o).ports as Obj[] | undefined) ?? []).map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol}`).join(',') || '<none>'),
        col('Selector', (o) => Object.entries((spec(o).selector as Record<string, string> | undefined) ?? {}).map(([k, v]) => `${k}=${v}`).join(',') || '<none>', 'string', 1),
      ],
      strategy: serviceStrategy(alloc),
    }),
    core({
      kind: 'Endpoints',
      plural: 'endpoints',
      namespaced: true,
      shortNames: ['ep'],
      columns: [
        col('Endpoints', (o) =>
          ((o.subsets as Obj[] | undefined) ?? [])
            .flatMap((s) => ((s.addresses as Obj[] | undefined) ?? []).flatMap((a) => ((s.ports as Obj[] | undefined) ?? [{}]).map((p) => (p.port ? `${a.ip}:${p.port}` : a.ip))))
            .join(',') || '<none>'),
      ],
    }),
    core({ kind: 'ServiceAccount', namespaced: true, shortNames: ['sa'], returnDeletedObject: true }),
    core({
      kind: 'PersistentVolumeClaim',
      returnDeletedObject: true,
      namespaced: true,
      shortNames: ['pvc'],
      status: true,
      columns: [
        col('Status', (o) => status(o).phase ?? 'Pending'),
        col('Volume', (o) => spec(o).volumeName ?? ''),
        col('Capacity', (o) => status(o).capacity?.storage ?? ''),
        col('Access Modes', (o) => ((status(o).accessModes as string[] | undefined) ?? []).map((m) => ({ ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' })[m] ?? m).join(',')),
        col('StorageClass', (o) => spec(o).storageClassName ?? '<unset>'),
      ],
      strategy: {
        applyDefaults: d.defaultPersistentVolumeClaim,
        prepareForCreate(o) {
          o.status = { phase: 'Pending' };
        },
        validateUpdate: validateClaimUpdate,
      },
    }),
    core({
      kind: 'PersistentVolume',
      returnDeletedObject: true,
      namespaced: false,
      shortNames: ['pv'],
      status: true,
      columns: [
        col('Capacity', (o) => spec(o).capacity?.storage ?? ''),
        col('Reclaim Policy', (o) => spec(o).persistentVolumeReclaimPolicy),
        col('Status', (o) => status(o).phase ?? 'Pending'),
        col('Claim', (o) => (spec(o).claimRef ? `${spec(o).claimRef.namespace}/${spec(o).claimRef.name}` : '')),
      ],
      strategy: {
        applyDefaults: d.defaultPersistentVolume,
        prepareForCreate(o) {
          o.status = { phase: 'Pending' };
        },
      },
    }),
    core({ kind: 'LimitRange', namespaced: true, shortNames: ['limits'], columns: [createdAt], noAgeColumn: true }),
    core({ kind: 'ResourceQuota', namespaced: true, shortNames: ['quota'], status: true, returnDeletedObject: true }),
    core({
      kind: 'Event',
      namespaced: true,
      fields: ownFields({
        ...Object.fromEntries(
          ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'].map((f) => [`involvedObject.${f}`, (o: KubeObject) => str((o.involvedObject as Obj | undefined)?.[f])]),
        ),
        reason: (o) => str(o.reason),
        reportingComponent: (o) => str(o.reportingComponent),
        source: (o) => str((o.source as Obj | undefined)?.component ?? o.reportingComponent),
        type: (o) => str(o.type),
      }),
      shortNames: ['ev'],
      columns: [col('Type', (o) => o.type ?? ''), col('Reason', (o) => o.reason ?? ''), col('Message', (o) => o.message ?? '')],
    }),
    core({
      kind: 'Node',
      namespaced: false,
      fields: ownFields({ 'spec.unschedulable': (o) => String(spec(o).unschedulable === true) }, { clusterScoped: true }),
      shortNames: ['no'],
      status: true,
      columns: [
        col('Status', (o) => (((status(o).conditions as Obj[] | undefined) ?? []).find((c) => c.type === 'Ready')?.status === 'True' ? 'Ready' : 'NotReady')),
        col('Roles', () => '<none>'),
        { ...col('Version', (o) => status(o).nodeInfo?.kubeletVersion ?? ''), afterAge: true },
        col('Internal-IP', (o) => ((status(o).addresses as Obj[] | undefined) ?? []).find((a) => a.type === 'InternalIP')?.address ?? '<none>', 'string', 1),
        col('External-IP', (o) => ((status(o).addresses as Obj[] | undefined) ?? []).find((a) => a.type === 'ExternalIP')?.address ?? '<none>', 'string', 1),
        col('OS-Image', (o) => status(o).nodeInfo?.osImage ?? '<unknown>', 'string', 1),
        col('Kernel-Version', (o) => status(o).nodeInfo?.kernelVersion ?? '<unknown>', 'string', 1),
        col('Container-Runtime', (o) => status(o).nodeInfo?.containerRuntimeVersion ?? '<unknown>', 'string', 1),
      ],
    }),
    apps({
      kind: 'Deployment',
      namespaced: true,
      shortNames: ['deploy'],
      categories: ['all'],
      status: true,
      scale: true,
      generation: true,
      columns: [
        col('Ready', ready),
        col('Up-to-date', (o) => status(o).updatedReplicas ?? 0),
        col('Available', (o) => status(o).availableReplicas ?? 0),
        ...templateColumns(true),
      ],
      strategy: { applyDefaults: d.defaultDeployment, validate: (o) => validateSelectorTemplate(o), prepareForUpdate: keepSelector('Deployment', 'apps') },
    }),
    apps({
      kind: 'ReplicaSet',
      namespaced: true,
      shortNames: ['rs'],
      categories: ['all'],
      status: true,
      scale: true,
      generation: true,
      columns: [
        col('Desired', (o) => spec(o).replicas ?? 0, 'integer'),
        col('Current', (o) => status(o).replicas ?? 0, 'integer'),
        col('Ready', (o) => status(o).readyReplicas ?? 0, 'integer'),
        ...templateColumns(true),
      ],
      strategy: { applyDefaults: d.defaultReplicaSet, validate: (o) => validateSelectorTemplate(o), prepareForUpdate: keepSelector('ReplicaSet', 'apps') },
    }),
    apps({
      kind: 'StatefulSet',
      namespaced: true,
      shortNames: ['sts'],
      categories: ['all'],
      status: true,
      scale: true,
      generation: true,
      columns: [col('Ready', ready), ...templateColumns(false)],
      strategy: {
        applyDefaults: d.defaultStatefulSet,
        validate: (o) => validateSelectorTemplate(o),
        prepareForUpdate: keepSelector('StatefulSet', 'apps'),
        validateUpdate: validateStatefulSetUpdate,
      },
    }),
    apps({
      kind: 'DaemonSet',
      namespaced: true,
      shortNames: ['ds'],
      categories: ['all'],
      status: true,
      generation: true,
      columns: [
        col('Desired', (o) => status(o).desiredNumberScheduled ?? 0, 'integer'),
        col('Current', (o) => status(o).currentNumberScheduled ?? 0, 'integer'),
        col('Ready', (o) => status(o).numberReady ?? 0, 'integer'),
        col('Up-to-date', (o) => status(o).updatedNumberScheduled ?? 0, 'integer'),
        col('Available', (o) => status(o).numberAvailable ?? 0, 'integer'),
        col('Node Selector', (o) => Object.entries(((spec(o).template as Obj | undefined)?.spec?.nodeSelector as Record<string, string> | undefined) ?? {}).map(([k, v]) => `${k}=${v}`).join(',') || '<none>'),
        ...templateColumns(true),
      ],
      strategy: { applyDefaults: d.defaultDaemonSet, validate: (o) => validateSelectorTemplate(o), prepareForUpdate: keepSelector('DaemonSet', 'apps') },
    }),
    apps({ kind: 'ControllerRevision', namespaced: true, columns: [col('Revision', (o) => o.revision ?? 0, 'integer')] }),
    define({
      group: 'batch',
      version: 'v1',
      kind: 'Job',
      namespaced: true,
      returnDeletedObject: true,
      fields: ownFields({ 'status.successful': (o) => String(status(o).succeeded ?? 0) }, { unsupported: (f) => `field label "${f}" not supported for Job` }),
      categories: ['all'],
      status: true,
      generation: true,
      columns: [
        col('Status', (o) => {
          const conds = (status(o).conditions as Obj[] | undefined) ?? [];
          const done = conds.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
          return done ? done.type : 'Running';
        }),
        col('Completions', (o) => `${status(o).succeeded ?? 0}/${spec(o).completions ?? 1}`),
        ...templateColumns(true),
      ],
      strategy: {
        applyDefaults: d.defaultJob,
        validateUpdate: validateJobUpdate,
        prepareForCreate(o) {
          // The API server generates the selector and the pod labels that tie pods to this Job's uid.
          const s = spec(o);
          if (s.manualSelector) return;
          const uid = o.metadata.uid as string | undefined;
          if (!uid) return;
          s.selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
          const template = (s.template ??= {}) as Obj;
          const meta = (template.metadata ??= {}) as Obj;
          meta.labels = {
            ...meta.labels,
            'batch.kubernetes.io/controller-uid': uid,
            'batch.kubernetes.io/job-name': o.metadata.name,
            'controller-uid': uid,
            'job-name': o.metadata.name,
          };
        },
        validate(o) {
          const errors = validateContainers(((spec(o).template as Obj | undefined)?.spec as Obj | undefined) ?? {}, 'spec.template.spec');
          const policy = ((spec(o).template as Obj | undefined)?.spec as Obj | undefined)?.restartPolicy;
          if (policy !== 'Never' && policy !== 'OnFailure') {
            errors.push({ type: 'FieldValueNotSupported', field: 'spec.template.spec.restartPolicy', value: policy ?? 'Always', detail: 'supported values: "OnFailure", "Never"' });
          }
          return errors;
        },
      },
    }),
    define({
      group: 'batch',
      version: 'v1',
      kind: 'CronJob',
      namespaced: true,
      shortNames: ['cj'],
      categories: ['all'],
      status: true,
      generation: true,
      columns: [
        col('Schedule', (o) => spec(o).schedule ?? ''),
        col('Suspend', (o) => spec(o).suspend ?? false, 'boolean'),
        col('Active', (o) => ((status(o).active as unknown[] | undefined) ?? []).length, 'integer'),
        col('Last Schedule', (o) => status(o).lastScheduleTime ?? '<none>'),
        ...templateColumns(true, (o) => (spec(o).jobTemplate as Obj | undefined)?.spec?.template as Obj | undefined),
      ],
      strategy: { applyDefaults: d.defaultCronJob },
    }),
    ...['Role', 'ClusterRole'].map((kind) =>
      define({ group: 'rbac.authorization.k8s.io', version: 'v1', kind, namespaced: kind === 'Role', columns: [createdAt], noAgeColumn: true }),
    ),
    ...['RoleBinding', 'ClusterRoleBinding'].map((kind) =>
      define({
        group: 'rbac.authorization.k8s.io',
        version: 'v1',
        kind,
        namespaced: kind === 'RoleBinding',
        columns: [
          col('Role', (o) => `${o.roleRef?.kind ?? ''}/${o.roleRef?.name ?? ''}`),
          ...(['User', 'Group', 'ServiceAccount'] as const).map((k) =>
            col(`${k === 'ServiceAccount' ? 'ServiceAccounts' : `${k}s`}`, (o) =>
              ((o.subjects as Obj[] | undefined) ?? []).filter((x) => x.kind === k).map((x) => (k === 'ServiceAccount' ? `${x.namespace ?? ''}/${x.name}` : x.name)).join(', '),
            'string', 1),
          ),
        ],
      }),
    ),
    define({
      group: 'networking.k8s.io',
      version: 'v1',
      kind: 'NetworkPolicy',
      plural: 'networkpolicies',
      namespaced: true,
      shortNames: ['netpol'],
      generation: true,
      strategy: { applyDefaults: d.defaultNetworkPolicy },
    }),
    define({ group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', plural: 'ingresses', namespaced: true, shortNames: ['ing'], status: true, generation: true }),
    define({
      group: 'autoscaling',
      version: 'v2',
      kind: 'HorizontalPodAutoscaler',
      namespaced: true,
      shortNames: ['hpa'],
      categories: ['all'],
      status: true,
      generation: true,
      columns: [
        col('Reference', (o) => `${spec(o).scaleTargetRef?.kind ?? ''}/${spec(o).scaleTargetRef?.name ?? ''}`),
        col('MinPods', (o) => spec(o).minReplicas ?? 1, 'integer'),
        col('MaxPods', (o) => spec(o).maxReplicas ?? 0, 'integer'),
      ],
      strategy: hpaStrategy,
    }),
    define({ group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', namespaced: true, shortNames: ['pdb'], status: true, generation: true }),
    define({
      group: 'storage.k8s.io',
      version: 'v1',
      kind: 'StorageClass',
      plural: 'storageclasses',
      returnDeletedObject: true,
      namespaced: false,
      shortNames: ['sc'],
      columns: [col('Provisioner', (o) => o.provisioner ?? ''), col('ReclaimPolicy', (o) => o.reclaimPolicy ?? ''), col('VolumeBindingMode', (o) => o.volumeBindingMode ?? '')],
      strategy: { applyDefaults: d.defaultStorageClass },
    }),
    define({
      group: 'scheduling.k8s.io',
      version: 'v1',
      kind: 'PriorityClass',
      plural: 'priorityclasses',
      namespaced: false,
      shortNames: ['pc'],
      columns: [col('Value', (o) => o.value ?? 0, 'integer'), col('Global-Default', (o) => String(o.globalDefault ?? false), 'boolean')],
      strategy: { applyDefaults: d.defaultPriorityClass },
    }),
    define({
      group: 'discovery.k8s.io',
      version: 'v1',
      kind: 'EndpointSlice',
      namespaced: true,
      columns: [col('AddressType', (o) => o.addressType ?? ''), col('Ports', (o) => ((o.ports as Obj[] | undefined) ?? []).map((p) => p.port).join(',') || '<unset>')],
    }),
  ];
}
