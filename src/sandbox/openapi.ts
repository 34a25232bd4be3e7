/**
 * A minimal OpenAPI v3 index, enough for kubectl: it reads `/openapi/v3`
 * and the group-version documents to learn that PATCH accepts
 * `fieldValidation` (then it validates server-side and needs no schema),
 * and to look for merge keys (finding no schemas, it falls back to the ones
 * compiled into it for built-in kinds). Schemas themselves are not served.
 */
import { createHash } from 'node:crypto';
import type { ResourceRegistry } from './resources.js';

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
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths, components: { schemas: {} } };
}

/** `GET /openapi/v3`: one entry per served group-version. */
export function openApiV3Index(registry: ResourceRegistry): object {
  const paths: Record<string, object> = {};
  const gvs = [...registry.coreVersions().map((v) => ({ group: '', version: v })), ...registry.groups().flatMap((g) => g.versions.map((v) => ({ group: g.name, version: v })))];
  for (const gv of gvs) {
    const hash = createHash('sha512').update(JSON.stringify(gvDocument(registry, gv.group, gv.version))).digest('hex').slice(0, 128).toUpperCase();
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
