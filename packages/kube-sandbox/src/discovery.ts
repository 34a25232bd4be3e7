/**
 * Discovery documents, built from the resource registry: the legacy ones
 * (APIVersions, APIGroupList, APIGroup, APIResourceList) and aggregated
 * discovery (apidiscovery.k8s.io/v2 APIGroupDiscoveryList), which kubectl
 * 1.26+ asks for first at /api and /apis.
 */
import yaml from 'js-yaml';
import type { DiscoveryRequest } from './request-info.js';
import { resourceNotFound } from './status.js';
import { groupVersion, storageVersionHash, type ResourceRegistry, type ResourceType } from './resources.js';

/** The media type a server answers aggregated discovery with. */
export const AGGREGATED_DISCOVERY_CONTENT_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** `GET /api` */
export function apiVersions(registry: ResourceRegistry, serverAddress: string): object {
  return {
    kind: 'APIVersions',
    versions: registry.coreVersions(),
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupEntry(group: { name: string; versions: string[] }): object {
  const versions = group.versions.map((version) => ({ groupVersion: `${group.name}/${version}`, version }));
  return { name: group.name, versions, preferredVersion: versions[0] };
}

/** `GET /apis` */
export function apiGroupList(registry: ResourceRegistry): object {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: registry.groups().map(groupEntry) };
}

/** `GET /apis/{group}`, or undefined for a group the server does not serve. */
export function apiGroup(registry: ResourceRegistry, name: string): object | undefined {
  const group = registry.groups().find((g) => g.name === name);
  return group && { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group) };
}

function apiResources(types: ResourceType[]): object[] {
  const resources: object[] = [];
  for (const t of types) {
    const entry: Record<string, unknown> = {
      name: t.plural,
      singularName: t.singular,
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: [...t.verbs].sort(),
    };
    if (t.shortNames?.length) entry.shortNames = t.shortNames;
    if (t.categories?.length) entry.categories = t.categories;
    entry.storageVersionHash = storageVersionHash(t);
    resources.push(entry);
    for (const sub of t.subresources ?? []) {
      const entry: Record<string, unknown> = { name: `${t.plural}/${sub.name}`, singularName: '', namespaced: t.namespaced };
      // Group and version are named only when they are not the parent's (autoscaling/v1 Scale).
      if (sub.responseKind && (sub.responseKind.group !== t.group || sub.responseKind.version !== t.version)) {
        entry.group = sub.responseKind.group;
        entry.version = sub.responseKind.version;
      }
      entry.kind = sub.responseKind?.kind ?? t.kind;
      entry.verbs = [...sub.verbs].sort();
      resources.push(entry);
    }
  }
  return resources.sort((a, b) => ((a as { name: string }).name < (b as { name: string }).name ? -1 : 1));
}

/** `GET /api/{v}` and `/apis/{group}/{v}`, or undefined when nothing is served there. */
export function apiResourceList(registry: ResourceRegistry, group: string, version: string): object | undefined {
  const types = registry.resources(group, version);
  if (types.length === 0) return undefined;
  const list: Record<string, unknown> = { kind: 'APIResourceList' };
  // The real server leaves apiVersion out of the core list and sets it for named groups.
  if (group) list.apiVersion = 'v1';
  list.groupVersion = groupVersion({ group, version });
  list.resources = apiResources(types);
  return list;
}

function resourceDiscovery(t: ResourceType): object {
  const entry: Record<string, unknown> = {
    resource: t.plural,
    responseKind: { group: t.group, version: t.version, kind: t.kind },
    scope: t.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: t.singular,
    verbs: [...t.verbs].sort(),
  };
  if (t.shortNames?.length) entry.shortNames = t.shortNames;
  if (t.categories?.length) entry.categories = t.categories;
  if (t.subresources?.length) {
    entry.subresources = t.subresources.map((sub) => ({
      subresource: sub.name,
      responseKind: sub.responseKind ?? { group: t.group, version: t.version, kind: t.kind },
      verbs: [...sub.verbs].sort(),
    }));
  }
  return entry;
}

function groupDiscovery(registry: ResourceRegistry, name: string, versions: string[]): object {
  const metadata: Record<string, unknown> = name ? { name, creationTimestamp: null } : { creationTimestamp: null };
  return {
    metadata,
    versions: versions.map((version) => ({
      version,
      resources: registry
        .resources(name, version)
        .map(resourceDiscovery)
        .sort((a, b) => ((a as { resource: string }).resource < (b as { resource: string }).resource ? -1 : 1)),
      freshness: 'Current',
    })),
  };
}

/** Aggregated discovery for `/api` (core: true) or `/apis`. */
export function aggregatedDiscovery(registry: ResourceRegistry, core: boolean): object {
  const items = core ? [groupDiscovery(registry, '', registry.coreVersions())] : registry.groups().map((g) => groupDiscovery(registry, g.name, g.versions));
  return { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {}, items };
}

/** A discovery document as sent: its text and content type. */
export interface DiscoveryAnswer {
  text: string;
  contentType: string;
}

/** Each registry's discovery answers as sent, while what it serves stays the same (every client asks for the same few). */
const discoveryAnswers = new WeakMap<ResourceRegistry, { revision: number; answers: Map<string, DiscoveryAnswer> }>();

/**
 * The discovery document asked for, serialized, from the registry's cache while
 * what it serves is unchanged; undefined for a group nobody serves (the
 * plain-text not-found page).
 */
export function discoveryAnswer(
  registry: ResourceRegistry,
  serverAddress: string,
  request: DiscoveryRequest,
  aggregated: boolean,
  encoding: 'json' | 'yaml',
): DiscoveryAnswer | undefined {
  let cache = discoveryAnswers.get(registry);
  if (cache?.revision !== registry.revision) discoveryAnswers.set(registry, (cache = { revision: registry.revision, answers: new Map() }));
  const key = JSON.stringify([request, aggregated, encoding, serverAddress]);
  let answer = cache.answers.get(key);
  if (!answer) {
    answer = buildDiscoveryAnswer(registry, serverAddress, request, aggregated, encoding);
    if (answer) cache.answers.set(key, answer);
  }
  return answer;
}

function buildDiscoveryAnswer(
  registry: ResourceRegistry,
  serverAddress: string,
  request: DiscoveryRequest,
  aggregated: boolean,
  encoding: 'json' | 'yaml',
): DiscoveryAnswer | undefined {
  const serialized = (doc: object, contentType: string) => ({ text: encoding === 'yaml' ? yaml.dump(doc, { noRefs: true }) : JSON.stringify(doc), contentType });
  if (aggregated) return { text: JSON.stringify(aggregatedDiscovery(registry, request.type === 'core-versions')), contentType: AGGREGATED_DISCOVERY_CONTENT_TYPE };
  let doc: object | undefined;
  switch (request.type) {
    case 'core-versions':
      doc = apiVersions(registry, serverAddress);
      break;
    case 'groups':
      doc = apiGroupList(registry);
      break;
    case 'group':
      doc = apiGroup(registry, request.group);
      break;
    case 'core-resources':
      doc = apiResourceList(registry, '', request.version);
      break;
    case 'group-resources':
      doc = apiResourceList(registry, request.group, request.version);
      break;
  }
  if (!doc) {
    // No handler at all for a group nobody serves: the plain-text not-found page, as for its resources.
    const group = request.type === 'group' || request.type === 'group-resources' ? request.group : '';
    if (group && !registry.groups().some((g) => g.name === group)) return undefined;
    throw resourceNotFound();
  }
  return serialized(doc, encoding === 'yaml' ? 'application/yaml' : 'application/json');
}
