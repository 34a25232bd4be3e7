/**
 * CustomResourceDefinitions (apiextensions.k8s.io/v1), served as the API
 * server's apiextensions part serves them:
 *
 * - the CRD kind itself (defaults, the checks that matter, `storedVersions`);
 * - a controller that accepts its names (`NamesAccepted`, or a conflict with
 *   another CRD of the group), then registers one resource per served
 *   version — so discovery, CRUD, watch, `/status` and `/scale` follow from
 *   the generic handlers — and marks it `Established`;
 * - custom resources shaped by their version's structural schema (defaults,
 *   pruning, validation: schema.ts) and stored version-less: with the `None`
 *   conversion strategy only apiVersion differs between served versions;
 * - deletion: a deleted CRD is `Terminating`, refuses new objects, deletes
 *   its objects (honouring their finalizers), then goes and stops being
 *   served.
 *
 * It runs whether or not the workload controllers do: it is the API
 * server's own work, not a controller manager's.
 */
import { ALL_VERBS } from './kinds/kind-def.js';
import { CONTROLLER_MANAGER, setCondition, WorkQueue, type Controller } from './controllers/base.js';
import type { FaultRules } from './faults.js';
import type { ObjectApi } from './objects.js';
import { rfc3339, type KubeObject, type ResourceType, type TableColumn, compareKubeVersions } from './resources.js';
import { applySchemaDefaults, pruneUnknownFields, undeclaredFields, validateAgainstSchema, type StructuralSchema } from './schema.js';
import { ApiError, invalid, type FieldError } from './status.js';
import { nameProblems } from './validation.js';

export const CRD_GROUP = 'apiextensions.k8s.io';
export const CRD_RESOURCE = 'customresourcedefinitions';
/** The finalizer that holds a deleted CRD until its objects are gone. */
export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

type Obj = Record<string, any>;

/** The parts of a CRD the sandbox reads. */
interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema?: { openAPIV3Schema?: StructuralSchema };
  subresources?: { status?: object; scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string } };
  additionalPrinterColumns?: { name: string; type: string; format?: string; description?: string; priority?: number; jsonPath: string }[];
}

interface CrdNames {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

const spec = (crd: KubeObject): Obj => (crd.spec as Obj | undefined) ?? {};
const versionsOf = (crd: KubeObject): CrdVersion[] => (Array.isArray(spec(crd).versions) ? (spec(crd).versions as CrdVersion[]) : []);
const namesOf = (crd: KubeObject): CrdNames => (spec(crd).names as CrdNames | undefined) ?? ({} as CrdNames);
const storageVersionOf = (crd: KubeObject): string | undefined => versionsOf(crd).find((v) => v.storage)?.name;

function condition(crd: KubeObject, type: string): Obj | undefined {
  return ((crd.status as Obj | undefined)?.conditions as Obj[] | undefined)?.find((c) => c.type === type);
}

/** `.spec.replicas` → `spec.replicas`: CRDs name fields as JSON paths, the registry as dotted paths. */
function dotted(jsonPath: string): string {
  return jsonPath.replace(/^\./, '');
}

function getPath(obj: unknown, path: string): unknown {
  let node = obj;
  for (const p of dotted(path).split('.')) node = typeof node === 'object' && node !== null ? (node as Obj)[p] : undefined;
  return node;
}

function validateCrd(crd: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const s = spec(crd);
  const names = namesOf(crd);
  const group = s.group as string | undefined;
  if (!group) errors.push({ type: 'FieldValueRequired', field: 'spec.group', detail: '' });
  else if (!group.includes('.')) errors.push({ type: 'FieldValueInvalid', field: 'spec.group', value: group, detail: 'should be a domain with at least one dot' });
  if (!names.plural) errors.push({ type: 'FieldValueRequired', field: 'spec.names.plural', detail: '' });
  else for (const p of nameProblems('dns1123-label', names.plural)) errors.push({ type: 'FieldValueInvalid', field: 'spec.names.plural', value: names.plural, detail: p });
  if (!names.kind) errors.push({ type: 'FieldValueRequired', field: 'spec.names.kind', detail: '' });
  if (names.plural && group && crd.metadata.name !== `${names.plural}.${group}`) {
    errors.push({ type: 'FieldValueInvalid', field: 'metadata.name', value: crd.metadata.name, detail: 'must be spec.names.plural+"."+spec.group' });
  }
  if (s.scope !== 'Namespaced' && s.scope !== 'Cluster') {
    errors.push(
      s.scope
        ? { type: 'FieldValueNotSupported', field: 'spec.scope', value: s.scope, detail: 'supported values: "Cluster", "Namespaced"' }
        : { type: 'FieldValueRequired', field: 'spec.scope', detail: '' },
    );
  }
  const versions = versionsOf(crd);
  if (versions.length === 0) {
    errors.push({ type: 'FieldValueInvalid', field: 'spec.versions', value: [], detail: 'must have exactly one version marked as storage version' });
    return errors;
  }
  if (versions.filter((v) => v.storage).length !== 1) {
    errors.push({ type: 'FieldValueInvalid', field: 'spec.versions', value: versions.map((v) => v.name), detail: 'must have exactly one version marked as storage version' });
  }
  if (!versions.some((v) => v.served)) {
    errors.push({ type: 'FieldValueInvalid', field: 'spec.versions', value: versions.map((v) => v.name), detail: 'must have at least one served version' });
  }
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    if (seen.has(v.name)) errors.push({ type: 'FieldValueInvalid', field: `spec.versions[${i}].name`, value: v.name, detail: 'must be unique' });
    seen.add(v.name);
    if (!v.schema?.openAPIV3Schema) errors.push({ type: 'FieldValueRequired', field: `spec.versions[${i}].schema.openAPIV3Schema`, detail: 'schemas are required' });
    const scale = v.subresources?.scale;
    if (scale) {
      if (!scale.specReplicasPath?.startsWith('.spec.')) {
        errors.push({
          type: 'FieldValueInvalid',
          field: `spec.versions[${i}].subresources.scale.specReplicasPath`,
          value: scale.specReplicasPath ?? '',
          detail: 'should be a json path under .spec',
        });
      }
      if (!scale.statusReplicasPath?.startsWith('.status.')) {
        errors.push({
          type: 'FieldValueInvalid',
          field: `spec.versions[${i}].subresources.scale.statusReplicasPath`,
          value: scale.statusReplicasPath ?? '',
          detail: 'should be a json path under .status',
        });
      }
    }
  });
  return errors;
}

function addStoredVersion(crd: KubeObject): void {
  const status = (crd.status as Obj | undefined) ?? {};
  const stored = [...((status.storedVersions as string[] | undefined) ?? [])];
  const storage = storageVersionOf(crd);
  if (storage && !stored.includes(storage)) stored.push(storage);
  crd.status = { ...status, storedVersions: stored };
}

/** The CustomResourceDefinition kind. */
export const customResourceDefinitions: ResourceType = {
  group: CRD_GROUP,
  version: 'v1',
  kind: 'CustomResourceDefinition',
  listKind: 'CustomResourceDefinitionList',
  plural: CRD_RESOURCE,
  singular: 'customresourcedefinition',
  namespaced: false,
  verbs: ALL_VERBS,
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'] }],
  nameRule: 'dns1123-subdomain',
  generation: true,
  strategicMerge: true,
  columns: [{ name: 'Created At', type: 'date', description: 'Created At', priority: 0, cell: (o) => o.metadata.creationTimestamp }],
  noAgeColumn: true,
  strategy: {
    applyDefaults(crd) {
      const s = spec(crd);
      const names = s.names as Obj | undefined;
      if (names?.kind) {
        names.singular ||= String(names.kind).toLowerCase();
        names.listKind ||= `${names.kind}List`;
      }
      s.conversion ??= { strategy: 'None' };
      for (const v of versionsOf(crd)) {
        if (typeof v !== 'object' || v === null) continue;
        v.served ??= false;
        v.storage ??= false;
      }
    },
    prepareForCreate(crd) {
      crd.status = { acceptedNames: { plural: '', kind: '' } };
      addStoredVersion(crd);
    },
    prepareForUpdate(crd, old) {
      if (spec(crd).group !== spec(old).group) {
        throw invalid('CustomResourceDefinition', CRD_GROUP, crd.metadata.name, [
          { type: 'FieldValueInvalid', field: 'spec.group', value: spec(crd).group, detail: 'field is immutable' },
        ]);
      }
      if (spec(crd).scope !== spec(old).scope) {
        throw invalid('CustomResourceDefinition', CRD_GROUP, crd.metadata.name, [
          { type: 'FieldValueInvalid', field: 'spec.scope', value: spec(crd).scope, detail: 'field is immutable' },
        ]);
      }
      addStoredVersion(crd);
    },
    validate: validateCrd,
    beginDelete(crd, now) {
      crd.metadata.deletionTimestamp ??= rfc3339(now);
      crd.metadata.deletionGracePeriodSeconds ??= 0;
      if (!crd.metadata.finalizers?.includes(CRD_CLEANUP_FINALIZER)) crd.metadata.finalizers = [...(crd.metadata.finalizers ?? []), CRD_CLEANUP_FINALIZER];
      const status = (crd.status as Obj | undefined) ?? {};
      crd.status = {
        ...status,
        conditions: setCondition(
          status.conditions as Obj[] | undefined,
          { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' },
          rfc3339(now),
        ),
      };
      return crd;
    },
  },
};

function terminatingError(crdName: string): ApiError {
  return new ApiError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `create is not supported on resources of kind "${crdName}"`,
    reason: 'MethodNotAllowed',
    details: {},
    code: 405,
  });
}

/** The resource serving one version of a CRD. */
function customResourceType(api: ObjectApi, crd: KubeObject, version: CrdVersion): ResourceType {
  const s = spec(crd);
  const names = namesOf(crd);
  const crdName = crd.metadata.name;
  const storageVersion = storageVersionOf(crd)!;
  const schema: StructuralSchema = version.schema?.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const storageSchema = versionsOf(crd).find((v) => v.name === storageVersion)?.schema?.openAPIV3Schema ?? schema;
  const type: ResourceType = {
    group: s.group as string,
    version: version.name,
    kind: names.kind,
    listKind: names.listKind ?? `${names.kind}List`,
    plural: names.plural,
    singular: names.singular ?? names.kind.toLowerCase(),
    namespaced: s.scope === 'Namespaced',
    verbs: ALL_VERBS,
    nameRule: 'dns1123-subdomain',
    generation: true,
    strategicMerge: false,
    custom: { crdName, storageVersion },
  };
  if (version.schema?.openAPIV3Schema) type.openApiSchema = version.schema.openAPIV3Schema;
  if (names.shortNames?.length) type.shortNames = names.shortNames;
  if (names.categories?.length) type.categories = names.categories;
  const subresources: NonNullable<ResourceType['subresources']> = [];
  const hasStatus = version.subresources?.status !== undefined;
  if (hasStatus) subresources.push({ name: 'status', verbs: ['get', 'patch', 'update'] });
  const scale = version.subresources?.scale;
  if (scale) {
    subresources.push({ name: 'scale', verbs: ['get', 'patch', 'update'], responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' } });
    type.scale = { specReplicasPath: dotted(scale.specReplicasPath), statusReplicasPath: dotted(scale.statusReplicasPath) };
    if (scale.labelSelectorPath) type.scale.labelSelector = dotted(scale.labelSelectorPath);
  }
  if (subresources.length) type.subresources = subresources;
  const columns: TableColumn[] = (version.additionalPrinterColumns ?? [])
    .filter((c) => c.jsonPath !== '.metadata.creationTimestamp')
    .map((c) => ({
      name: c.name,
      type: (['string', 'integer', 'number', 'boolean', 'date'].includes(c.type) ? c.type : 'string') as TableColumn['type'],
      ...(c.format ? { format: c.format } : {}),
      description: c.description ?? c.name,
      priority: c.priority ?? 0,
      cell: (o: KubeObject) => getPath(o, c.jsonPath) ?? null,
    }));
  if (columns.length) type.columns = columns;

  type.strategy = {
    normalize(obj) {
      applySchemaDefaults(schema, obj);
      pruneUnknownFields(schema, obj, true);
      if (storageSchema !== schema) {
        // Stored through the storage version: what its schema does not know is lost (conversion `None`).
        applySchemaDefaults(storageSchema, obj);
        pruneUnknownFields(storageSchema, obj, true);
      }
    },
    prepareForCreate(obj) {
      const current = api.store.get(CRD_GROUP, CRD_RESOURCE, undefined, crdName);
      if (!current || current.metadata.deletionTimestamp) throw terminatingError(crdName);
      // With a status subresource the status is the controllers' to write, never the creator's.
      if (hasStatus) delete obj.status;
    },
    validate(obj) {
      return validateAgainstSchema(schema, obj);
    },
    undeclaredForApply(obj) {
      return undeclaredFields(schema, obj, true);
    },
  };
  return type;
}

/** Whether another CRD of the same group already holds one of these names. */
function nameConflict(api: ObjectApi, crd: KubeObject): { reason: string; message: string } | undefined {
  const group = spec(crd).group;
  const names = namesOf(crd);
  for (const other of api.store.list(CRD_GROUP, CRD_RESOURCE).items) {
    if (other.metadata.name === crd.metadata.name || spec(other).group !== group) continue;
    const accepted = ((other.status as Obj | undefined)?.acceptedNames as CrdNames | undefined) ?? ({} as CrdNames);
    if (!accepted.kind) continue;
    if (accepted.plural === names.plural) return { reason: 'PluralConflict', message: `"${names.plural}" is already in use` };
    if (accepted.kind === names.kind) return { reason: 'KindConflict', message: `"${names.kind}" is already in use` };
    const short = (names.shortNames ?? []).find((n) => (accepted.shortNames ?? []).includes(n));
    if (short) return { reason: 'ShortNamesConflict', message: `"${short}" is already in use` };
  }
  return undefined;
}

/** Names, establishing, serving and clean-up of CRDs; see the file comment. */
export function startCrdController(api: ObjectApi, faults?: FaultRules): Controller {
  const store = api.store;
  const crdType = api.type(CRD_GROUP, CRD_RESOURCE);

  // What each served CRD was served from: as the API server's CRD handler,
  // storage is rebuilt (and the kinds' watch history restarted) only when a
  // CRD's spec or accepted names change, never on a status update or on the
  // deletion of one of its objects.
  const servedFrom = new Map<string, string>();

  function unserve(crdName: string): void {
    servedFrom.delete(crdName);
    for (const t of [...api.registry.all()]) {
      if (t.custom?.crdName === crdName) api.registry.unregister(t.group, t.version, t.plural);
    }
  }

  function serve(crd: KubeObject): void {
    const signature = JSON.stringify([crd.metadata.uid, crd.spec, namesOf(crd)]);
    if (servedFrom.get(crd.metadata.name) === signature) return;
    unserve(crd.metadata.name);
    servedFrom.set(crd.metadata.name, signature);
    const served = versionsOf(crd)
      .filter((v) => v.served)
      .sort((a, b) => compareKubeVersions(a.name, b.name));
    for (const v of served) api.registry.register(customResourceType(api, crd, v));
  }

  function cleanUp(crd: KubeObject): void {
    const group = spec(crd).group as string;
    const plural = namesOf(crd).plural;
    const type = api.registry.all().find((t) => t.custom?.crdName === crd.metadata.name);
    const remaining = store.list(group, plural).items;
    if (type) {
      for (const obj of remaining) {
        if (obj.metadata.deletionTimestamp) continue;
        try {
          api.delete(type, obj.metadata.namespace, obj.metadata.name, { propagationPolicy: 'Background' });
        } catch {
          // Gone already.
        }
      }
    }
    // Objects held by finalizers bring the CRD back here when they go.
    if (store.list(group, plural).items.length > 0) return;
    const finalizers = (crd.metadata.finalizers ?? []).filter((f) => f !== CRD_CLEANUP_FINALIZER);
    if (finalizers.length > 0) {
      if (finalizers.length !== crd.metadata.finalizers?.length) store.update(CRD_GROUP, CRD_RESOURCE, { ...crd, metadata: { ...crd.metadata, finalizers } });
      return;
    }
    store.delete(CRD_GROUP, CRD_RESOURCE, undefined, crd.metadata.name);
  }

  function reconcile(name: string): void {
    const crd = store.get(CRD_GROUP, CRD_RESOURCE, undefined, name);
    if (!crd) {
      unserve(name);
      return;
    }
    if (crd.metadata.deletionTimestamp) {
      cleanUp(crd);
      return;
    }
    const now = rfc3339(api.now());
    const status = { ...((crd.status as Obj | undefined) ?? {}) };
    const conflict = nameConflict(api, crd);
    if (conflict) {
      status.conditions = setCondition(status.conditions as Obj[] | undefined, { type: 'NamesAccepted', status: 'False', ...conflict }, now);
      if (!condition(crd, 'Established')) {
        status.conditions = setCondition(status.conditions as Obj[], { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' }, now);
      }
    } else {
      // A test's fault can hold a CRD between its names being accepted and Established (its kinds unserved).
      const held = condition(crd, 'Established')?.status !== 'True' && faults?.neverEstablished(crd) === true;
      if (!held) serve(crd);
      const names = namesOf(crd);
      const accepted: Obj = { plural: names.plural, singular: names.singular, kind: names.kind, listKind: names.listKind };
      if (names.shortNames?.length) accepted.shortNames = names.shortNames;
      if (names.categories?.length) accepted.categories = names.categories;
      status.acceptedNames = accepted;
      status.conditions = setCondition(
        status.conditions as Obj[] | undefined,
        { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' },
        now,
      );
      if (!held) {
        status.conditions = setCondition(
          status.conditions as Obj[],
          { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
          now,
        );
      }
    }
    if (JSON.stringify(status) !== JSON.stringify(crd.status ?? {})) {
      api.update(crdType, { ...crd, status }, { subresource: 'status', manager: CONTROLLER_MANAGER });
    }
  }

  const queue = new WorkQueue(reconcile);
  if (faults) {
    const previous = faults.onChange;
    faults.onChange = () => {
      previous();
      for (const crd of store.list(CRD_GROUP, CRD_RESOURCE).items) queue.add(crd.metadata.name);
    };
  }
  const unsubscribe = store.subscribe((event) => {
    if (event.group === CRD_GROUP && event.resource === CRD_RESOURCE) {
      queue.add(event.object.metadata.name);
      if (event.type === 'DELETED') unserve(event.object.metadata.name);
      return;
    }
    // A custom resource of a terminating CRD went: the CRD may be done.
    if (event.type === 'DELETED') {
      const crdName = api.registry.all().find((t) => t.group === event.group && t.plural === event.resource)?.custom?.crdName;
      if (crdName) queue.add(crdName);
    }
  });
  return {
    stop() {
      unsubscribe();
      queue.stop();
    },
  };
}
