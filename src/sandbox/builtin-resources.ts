/**
 * The built-in kinds the sandbox serves so far, with the server-owned
 * behaviour a real API server gives them. Verbs list only what the generic
 * handlers implement, so discovery never promises what the sandbox cannot do.
 */
import { forbidden, type FieldError } from './status.js';
import type { ObjectApi } from './objects.js';
import { rfc3339, type KubeObject, type ResourceRegistry, type ResourceType } from './resources.js';
import { moreKinds } from './kinds/more-kinds.js';
import { builtinKinds } from './kinds/builtin-kinds.js';
import { bindingAndHealthKinds, registerComponentStatuses } from './kinds/binding-and-health.js';
import { ALL_VERBS, ownFields } from './kinds/kind-def.js';
import { newAllocators, type Allocators } from './kinds/service-allocation.js';

/** The label the API server puts on every namespace (since Kubernetes 1.21). */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/** The namespaces the NamespaceLifecycle admission plugin refuses to delete. */
const UNDELETABLE_NAMESPACES = ['default', 'kube-system', 'kube-public'];

export const namespaces: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'Namespace',
  listKind: 'NamespaceList',
  plural: 'namespaces',
  singular: 'namespace',
  namespaced: false,
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  shortNames: ['ns'],
  strategicMerge: true,
  subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'] }],
  nameRule: 'dns1123-label',
  returnDeletedObject: true,
  selectableFields: ownFields({ 'status.phase': (o) => String((o.status as { phase?: string } | undefined)?.phase ?? '') }, { clusterScoped: true }),
  columns: [
    {
      name: 'Status',
      type: 'string',
      description: 'The status of the namespace',
      priority: 0,
      cell: (obj) => (obj.status as { phase?: string } | undefined)?.phase ?? '',
    },
  ],
  strategy: {
    prepareForCreate(obj) {
      const spec = (obj.spec ?? {}) as { finalizers?: string[] };
      obj.spec = { ...spec, finalizers: spec.finalizers ?? ['kubernetes'] };
      obj.status = { phase: 'Active' };
      obj.metadata.labels = { ...obj.metadata.labels, [NAMESPACE_NAME_LABEL]: obj.metadata.name ?? '' };
    },
    prepareForUpdate(obj, old) {
      // spec.finalizers changes only through /finalize, status only through /status.
      obj.spec = old.spec;
      obj.status = old.status;
      obj.metadata.labels = { ...obj.metadata.labels, [NAMESPACE_NAME_LABEL]: obj.metadata.name ?? '' };
    },
    beginDelete(obj, now) {
      if (UNDELETABLE_NAMESPACES.includes(obj.metadata.name)) {
        throw forbidden({ group: '', resource: 'namespaces', name: obj.metadata.name }, 'this namespace may not be deleted');
      }
      // Deleting a namespace that is already terminating answers it as it is.
      if (obj.metadata.deletionTimestamp) return obj;
      obj.metadata.deletionTimestamp = rfc3339(now);
      obj.status = { ...(obj.status as object), phase: 'Terminating' };
      return obj;
    },
  },
};

/** ConfigMaps and Secrets marked `immutable` keep their data and the mark (ValidateConfigMapUpdate, ValidateSecretUpdate). */
function validateImmutableData(obj: KubeObject, old: KubeObject): FieldError[] {
  if (old.immutable !== true) return [];
  const errors: FieldError[] = [];
  const detail = 'field is immutable when `immutable` is set';
  for (const field of ['data', 'binaryData'] as const) {
    if (JSON.stringify(obj[field] ?? {}) !== JSON.stringify(old[field] ?? {})) errors.push({ type: 'FieldValueForbidden', field, detail });
  }
  if (obj.immutable !== true) errors.push({ type: 'FieldValueForbidden', field: 'immutable', detail });
  return errors;
}

export const configMaps: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  listKind: 'ConfigMapList',
  plural: 'configmaps',
  singular: 'configmap',
  namespaced: true,
  verbs: ALL_VERBS,
  strategicMerge: true,
  shortNames: ['cm'],
  nameRule: 'dns1123-subdomain',
  strategy: { validateUpdate: validateImmutableData },
  columns: [
    {
      name: 'Data',
      type: 'string',
      description: 'Number of user-provided data entries',
      priority: 0,
      cell: (obj) => Object.keys((obj.data as object | undefined) ?? {}).length + Object.keys((obj.binaryData as object | undefined) ?? {}).length,
    },
  ],
};

const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const secrets: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'Secret',
  listKind: 'SecretList',
  plural: 'secrets',
  singular: 'secret',
  namespaced: true,
  selectableFields: ownFields({ type: (o) => String(o.type ?? '') }),
  verbs: ALL_VERBS,
  strategicMerge: true,
  nameRule: 'dns1123-subdomain',
  columns: [
    { name: 'Type', type: 'string', description: 'The type of the secret', priority: 0, cell: (obj) => obj.type ?? '' },
    {
      name: 'Data',
      type: 'string',
      description: 'Number of data entries',
      priority: 0,
      cell: (obj) => Object.keys((obj.data as object | undefined) ?? {}).length,
    },
  ],
  strategy: {
    decodeProblem(body) {
      // Go's base64 decoder runs while the body is decoded: it names the first byte it cannot read.
      const data = body.data;
      if (typeof data !== 'object' || data === null) return undefined;
      for (const v of Object.values(data as Record<string, unknown>)) {
        if (typeof v !== 'string') continue;
        const bad = v.search(/[^A-Za-z0-9+/=]/);
        if (bad >= 0) return `Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte ${bad}`;
      }
      return undefined;
    },
    prepareForCreate: normalizeSecret,
    prepareForUpdate: normalizeSecret,
    validateUpdate(obj, old) {
      const errors: FieldError[] = [];
      if (obj.type !== old.type) errors.push({ type: 'FieldValueInvalid', field: 'type', value: obj.type, detail: 'field is immutable' });
      return [...errors, ...validateImmutableData(obj, old)];
    },
    validate(obj) {
      const errors: FieldError[] = [];
      for (const [k, v] of Object.entries((obj.data as Record<string, unknown> | undefined) ?? {})) {
        if (typeof v !== 'string' || !BASE64_RE.test(v)) {
          errors.push({ type: 'FieldValueInvalid', field: `data[${k}]`, value: '<secret contents redacted>', detail: 'must be base64-encoded' });
        }
      }
      return errors;
    },
  },
};

/** `stringData` is write-only: the server merges it into `data` (base64) and drops it. */
function normalizeSecret(obj: KubeObject): void {
  obj.type ??= 'Opaque';
  const stringData = obj.stringData as Record<string, string> | undefined;
  if (stringData) {
    const data = { ...((obj.data as Record<string, string> | undefined) ?? {}) };
    for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    obj.data = data;
    delete obj.stringData;
  }
}

export const leases: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  listKind: 'LeaseList',
  plural: 'leases',
  singular: 'lease',
  namespaced: true,
  verbs: ALL_VERBS,
  strategicMerge: true,
  nameRule: 'dns1123-subdomain',
  columns: [
    {
      name: 'Holder',
      type: 'string',
      description: 'The holder of the lease',
      priority: 0,
      cell: (obj) => (obj.spec as { holderIdentity?: string } | undefined)?.holderIdentity ?? '',
    },
  ],
};

/** Registers every built-in kind; `alloc` hands out Service IPs and node ports. */
export function registerBuiltins(registry: ResourceRegistry, alloc: Allocators = newAllocators()): void {
  for (const type of [namespaces, configMaps, secrets, leases, ...builtinKinds(alloc), ...bindingAndHealthKinds(), ...moreKinds()]) registry.register(type);
}

/** The namespaces a fresh cluster has. */
export const INITIAL_NAMESPACES = ['default', 'kube-node-lease', 'kube-public', 'kube-system'];

/**
 * The APIService the API server registers for each group version it serves
 * itself (`v1.`, `v1.apps`...): no service, Available because Local.
 */
function registerLocalApiServices(api: ObjectApi): void {
  const type = api.type('apiregistration.k8s.io', 'apiservices');
  const gvs = [
    ...api.registry.coreVersions().map((version) => ({ group: '', version })),
    ...api.registry.groups().flatMap((g) => g.versions.map((version) => ({ group: g.name, version }))),
  ];
  const time = rfc3339(api.now());
  gvs.forEach(({ group, version }, i) => {
    const apiService = {
      metadata: { name: `${version}.${group}`, labels: { 'kube-aggregator.kubernetes.io/automanaged': 'onstart' } },
      spec: { group, version, groupPriorityMinimum: group === '' ? 18000 : 17000 - i * 50, versionPriority: 15 },
    } as unknown as KubeObject;
    api.create(type, apiService, { manager: 'kube-apiserver' });
    const created = api.get(type, undefined, apiService.metadata.name);
    api.update(
      type,
      { ...created, status: { conditions: [{ type: 'Available', status: 'True', lastTransitionTime: time, reason: 'Local', message: 'Local APIServices are always available' }] } },
      { subresource: 'status', manager: 'kube-apiserver' },
    );
  });
}

/** The objects a real API server has from its start: the local APIServices and the component statuses. */
export function registerStartupObjects(api: ObjectApi): void {
  registerLocalApiServices(api);
  registerComponentStatuses(api);
}
