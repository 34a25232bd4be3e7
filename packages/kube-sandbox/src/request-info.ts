/**
 * Turns a request path and method into what it asks for, the way the API
 * server's RequestInfoFactory does:
 *
 *   /api/{v}/{resource}[/{name}[/{subresource}]]
 *   /api/{v}/namespaces/{ns}/{resource}[/{name}[/{subresource}]]
 *   /apis/{group}/{v}/...                      (same shapes)
 *
 * `/api/v1/namespaces/{name}/status` and `/finalize` are subresources of the
 * namespace itself, not resources inside it.
 */
import type { Verb } from './resources.js';

export interface ResourceRequest {
  group: string;
  version: string;
  /** Set when the path names a namespace (`/namespaces/{ns}/...`). */
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
  verb: Verb;
}

/** Discovery and other non-resource paths under /api and /apis. */
export type DiscoveryRequest =
  | { type: 'core-versions' } // /api
  | { type: 'core-resources'; version: string } // /api/v1
  | { type: 'groups' } // /apis
  | { type: 'group'; group: string } // /apis/{g}
  | { type: 'group-resources'; group: string; version: string }; // /apis/{g}/{v}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function verbFor(method: string, hasName: boolean, watch: boolean): Verb | undefined {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return hasName ? 'get' : watch ? 'watch' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      return undefined;
  }
}

export type ParsedPath = { kind: 'discovery'; request: DiscoveryRequest } | { kind: 'resource'; request: ResourceRequest } | { kind: 'bad-method' } | { kind: 'unknown' };

/** Parses a path under /api or /apis. `watch` is the `?watch=` query flag. */
export function parseApiPath(method: string, pathname: string, watch: boolean): ParsedPath {
  let parts = pathname
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  let group: string;
  if (parts[0] === 'api') {
    if (parts.length === 1) return { kind: 'discovery', request: { type: 'core-versions' } };
    group = '';
    parts = parts.slice(1);
  } else if (parts[0] === 'apis') {
    if (parts.length === 1) return { kind: 'discovery', request: { type: 'groups' } };
    if (parts.length === 2) return { kind: 'discovery', request: { type: 'group', group: parts[1]! } };
    group = parts[1]!;
    parts = parts.slice(2);
  } else {
    return { kind: 'unknown' };
  }
  const version = parts[0]!;
  parts = parts.slice(1);
  if (parts.length === 0) {
    return group ? { kind: 'discovery', request: { type: 'group-resources', group, version } } : { kind: 'discovery', request: { type: 'core-resources', version } };
  }

  let namespace: string | undefined;
  if (parts[0] === 'namespaces' && parts.length > 1) {
    namespace = parts[1];
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) parts = parts.slice(2);
  }
  if (parts.length > 3) return { kind: 'unknown' };
  const [resource, name, subresource] = parts as [string, string?, string?];
  const verb = verbFor(method, name !== undefined, watch);
  if (!verb) return { kind: 'bad-method' };
  // For /namespaces/{name}[/status], the namespace in the path is the object itself.
  const request: ResourceRequest = { group, version, resource, verb };
  if (namespace !== undefined && !(resource === 'namespaces' && name === namespace)) request.namespace = namespace;
  if (name !== undefined) request.name = name;
  if (subresource !== undefined) request.subresource = subresource;
  return { kind: 'resource', request };
}
