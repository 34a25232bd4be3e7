/**
 * OpenAPI for kubectl and other clients: `/openapi/v3` and its
 * group-version documents (kubectl reads them to learn that PATCH accepts
 * `fieldValidation`, then validates server-side, and `kubectl explain`
 * finds each kind's schema by its `x-kubernetes-group-version-kind`), and
 * `/openapi/v2` in JSON (and in protobuf, openapi-protobuf.ts). A custom resource's schema is its CRD's, in both;
 * a built-in kind has only an outline (apiVersion, kind, metadata, spec and
 * status as open objects) in v2 and no schema in v3: the sandbox does not
 * carry the API's whole schema, and kubectl, finding none in v3, builds
 * strategic merge patches with the merge keys compiled into it.
 */
import { createHash } from 'node:crypto';
import type { ResourceRegistry, ResourceType } from './resources.js';

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** The definition name the API server gives a kind: io.k8s.api.<group's first label>.<version>.<Kind>, reversed domain for custom kinds. */
export function definitionName(t: ResourceType): string {
  if (t.custom) return `${t.group.split('.').reverse().join('.')}.${t.version}.${t.kind}`;
  if (t.group === 'apiextensions.k8s.io') return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${t.version}.${t.kind}`;
  if (t.group === 'apiregistration.k8s.io') return `io.k8s.kube-aggregator.pkg.apis.apiregistration.${t.version}.${t.kind}`;
  return `io.k8s.api.${t.group ? t.group.split('.')[0] : 'core'}.${t.version}.${t.kind}`;
}

const objectMetaSchema = {
  description: 'ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.',
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Name must be unique within a namespace.' },
    generateName: {
      type: 'string',
      description: 'GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided.',
    },
    namespace: { type: 'string', description: 'Namespace defines the space within which each name must be unique.' },
    labels: {
      type: 'object',
      additionalProperties: { type: 'string', default: '' },
      description: 'Map of string keys and values that can be used to organize and categorize (scope and select) objects.',
    },
    annotations: {
      type: 'object',
      additionalProperties: { type: 'string', default: '' },
      description: 'Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata.',
    },
    finalizers: { type: 'array', items: { type: 'string', default: '' }, description: 'Must be empty before the object is deleted from the registry.' },
    ownerReferences: { type: 'array', items: { type: 'object' }, description: 'List of objects depended by this object.' },
    uid: { type: 'string', description: 'UID is the unique in time and space value for this object.' },
    resourceVersion: { type: 'string', description: 'An opaque value that represents the internal version of this object.' },
    generation: { type: 'integer', format: 'int64', description: 'A sequence number representing a specific generation of the desired state.' },
    creationTimestamp: { type: 'string', format: 'date-time', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.' },
    deletionTimestamp: { type: 'string', format: 'date-time', description: 'DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted.' },
  },
};

/** The schema of one kind, with its group-version-kind; `ref` builds a reference in the document's style. */
function kindSchema(t: ResourceType, ref: (name: string) => string): object {
  const gvk = { 'x-kubernetes-group-version-kind': [{ group: t.group, kind: t.kind, version: t.version }] };
  const typeMeta = {
    apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
    kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
    metadata: { description: "Standard object's metadata.", allOf: [{ $ref: ref(OBJECT_META) }], default: {} },
  };
  if (t.openApiSchema) {
    const schema = structuredClone(t.openApiSchema) as Record<string, any>;
    schema.properties = { ...typeMeta, ...(schema.properties ?? {}) };
    return { ...schema, ...gvk };
  }
  const open = (what: string): object => ({
    type: 'object',
    description: `${what} of the ${t.kind} (not described by this server).`,
    'x-kubernetes-preserve-unknown-fields': true,
  });
  return {
    type: 'object',
    description: `${t.kind} (${t.group || 'core'}/${t.version}).`,
    properties: { ...typeMeta, spec: open('The desired state'), status: open('The observed state') },
    ...gvk,
  };
}

function docPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

function gvDocument(registry: ResourceRegistry, group: string, version: string): object {
  const paths: Record<string, object> = {};
  const param = (name: string) => ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } });
  for (const t of registry.resources(group, version)) {
    const gvk = { 'x-kubernetes-group-version-kind': { group: t.group, version: t.version, kind: t.kind } };
    const base = `/${docPath(group, version)}${t.namespaced ? '/namespaces/{namespace}' : ''}/${t.plural}`;
    const writeParams = ['dryRun', 'fieldManager', 'fieldValidation'].map(param);
    paths[base] = { post: { ...gvk, parameters: writeParams }, get: { ...gvk } };
    paths[`${base}/{name}`] = {
      get: { ...gvk },
      put: { ...gvk, parameters: writeParams },
      patch: { ...gvk, parameters: [...writeParams, param('force')] },
      delete: { ...gvk },
    };
  }
  // Only custom kinds: for a built-in kind kubectl would take an outline for the whole schema and
  // build its strategic merge patches without merge keys, where finding none it uses its own.
  const custom = registry.resources(group, version).filter((t) => t.openApiSchema);
  const schemas: Record<string, object> = custom.length ? { [OBJECT_META]: objectMetaSchema } : {};
  for (const t of custom) schemas[definitionName(t)] = kindSchema(t, (name) => `#/components/schemas/${name}`);
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths, components: { schemas } };
}

/** `GET /openapi/v2` (JSON): the definitions of every served kind and their collection paths. */
export function openApiV2Document(registry: ResourceRegistry): object {
  const definitions: Record<string, object> = { [OBJECT_META]: objectMetaSchema };
  const paths: Record<string, object> = {};
  for (const t of registry.all()) {
    definitions[definitionName(t)] = kindSchema(t, (name) => `#/definitions/${name}`);
    const gvk = { 'x-kubernetes-group-version-kind': { group: t.group, version: t.version, kind: t.kind } };
    const base = `/${docPath(t.group, t.version)}${t.namespaced ? '/namespaces/{namespace}' : ''}/${t.plural}`;
    paths[`${base}/{name}`] = { get: { ...gvk, responses: { '200': { description: 'OK', schema: { $ref: `#/definitions/${definitionName(t)}` } } } } };
  }
  return { swagger: '2.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths, definitions };
}

/** `GET /openapi/v3`: one entry per served group-version. */
export function openApiV3Index(registry: ResourceRegistry): object {
  const paths: Record<string, object> = {};
  const gvs = [...registry.coreVersions().map((v) => ({ group: '', version: v })), ...registry.groups().flatMap((g) => g.versions.map((v) => ({ group: g.name, version: v })))];
  for (const gv of gvs) {
    const hash = createHash('sha512')
      .update(JSON.stringify(gvDocument(registry, gv.group, gv.version)))
      .digest('hex')
      .slice(0, 128)
      .toUpperCase();
    paths[docPath(gv.group, gv.version)] = { serverRelativeURL: `/openapi/v3/${docPath(gv.group, gv.version)}?hash=${hash}` };
  }
  return { paths };
}

/** `GET /openapi/v3/api/v1`, `/openapi/v3/apis/{group}/{version}`, or undefined. */
export function openApiV3Document(registry: ResourceRegistry, path: string): object | undefined {
  const m = /^\/openapi\/v3\/(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(path);
  if (!m) return undefined;
  const group = m[1] ? '' : m[2]!;
  const version = m[1] ?? m[3]!;
  if (!registry.hasGroupVersion(group, version)) return undefined;
  return gvDocument(registry, group, version);
}
