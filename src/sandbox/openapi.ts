/**
 * OpenAPI for kubectl and other clients: `/openapi/v3` and its
 * group-version documents (kubectl reads them to learn that PATCH accepts
 * `fieldValidation`, then validates server-side, and `kubectl explain`
 * finds each kind's schema by its `x-kubernetes-group-version-kind`), and
 * `/openapi/v2` in JSON (and in protobuf, openapi-protobuf.ts). A custom resource's schema is its CRD's, in both,
 * and so is a built-in kind's that builtin-schemas.ts describes whole; any
 * other built-in kind has only an outline (apiVersion, kind, metadata, spec
 * and status as open objects) in v2 and no schema in v3: the sandbox does
 * not carry the API's whole schema, and kubectl, finding none in v3, builds
 * strategic merge patches with the merge keys compiled into it.
 */
import { createHash } from 'node:crypto';
import { BUILTIN_SCHEMAS, OBJECT_META_SCHEMA } from './builtin-schemas.js';
import type { ResourceRegistry, ResourceType } from './resources.js';

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** The definition name the API server gives a kind: io.k8s.api.<group's first label>.<version>.<Kind>, reversed domain for custom kinds. */
export function definitionName(t: ResourceType): string {
  if (t.custom) return `${t.group.split('.').reverse().join('.')}.${t.version}.${t.kind}`;
  if (t.group === 'apiextensions.k8s.io') return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${t.version}.${t.kind}`;
  if (t.group === 'apiregistration.k8s.io') return `io.k8s.kube-aggregator.pkg.apis.apiregistration.${t.version}.${t.kind}`;
  return `io.k8s.api.${t.group ? t.group.split('.')[0] : 'core'}.${t.version}.${t.kind}`;
}

/** The schema the server publishes for a kind: a custom kind's from its CRD, a built-in one's where it is described whole. */
function schemaOf(t: ResourceType): object | undefined {
  return t.openApiSchema ?? BUILTIN_SCHEMAS[`${t.group}/${t.version}/${t.kind}`];
}

/** The schema of one kind, with its group-version-kind; `ref` builds a reference in the document's style. */
function kindSchema(t: ResourceType, ref: (name: string) => string): object {
  const gvk = { 'x-kubernetes-group-version-kind': [{ group: t.group, kind: t.kind, version: t.version }] };
  const typeMeta = {
    apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
    kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
    metadata: { description: "Standard object's metadata.", allOf: [{ $ref: ref(OBJECT_META) }], default: {} },
  };
  const described = schemaOf(t);
  if (described) {
    const schema = structuredClone(described) as Record<string, any>;
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
  // Only the kinds described whole: for another kubectl would take an outline for the whole schema and
  // build its strategic merge patches without merge keys, where finding none it uses its own.
  const described = registry.resources(group, version).filter((t) => schemaOf(t));
  const schemas: Record<string, object> = described.length ? { [OBJECT_META]: OBJECT_META_SCHEMA } : {};
  for (const t of described) schemas[definitionName(t)] = kindSchema(t, (name) => `#/components/schemas/${name}`);
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths, components: { schemas } };
}

/** `GET /openapi/v2` (JSON): the definitions of every served kind and their collection paths. */
export function openApiV2Document(registry: ResourceRegistry): object {
  const definitions: Record<string, object> = { [OBJECT_META]: OBJECT_META_SCHEMA };
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
