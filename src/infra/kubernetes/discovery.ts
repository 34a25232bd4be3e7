/**
 * API discovery: which kinds the cluster serves, under which resource name,
 * namespaced or not, with which verbs and subresources. This is how the
 * driver reaches any kind — built-in or defined by a CRD — without a table
 * of classes. Answers are cached per group/version for the driver's life;
 * a kind not found is looked up once more, since a CRD created moments ago
 * adds kinds to a group the cache already holds.
 */
import { NotFoundError } from '../../errors.js';
import type { ResourceRef } from '../driver.js';
import type { KubeClient } from './client.js';

/** One served resource, as discovery describes it. */
export interface ApiResource {
  group: string;
  version: string;
  /** `v1` or `group/version`. */
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  verbs: string[];
  /** Subresource names: `status`, `scale`, … */
  subresources: Set<string>;
}

interface ApiResourceList {
  groupVersion?: string;
  resources?: Array<{ name: string; kind: string; namespaced: boolean; verbs?: string[] }>;
}

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Builds the resources of one APIResourceList (subresources fold into their parent). */
export function parseResourceList(apiVersion: string, list: ApiResourceList): Map<string, ApiResource> {
  const { group, version } = splitApiVersion(apiVersion);
  const byPlural = new Map<string, ApiResource>();
  const subs: Array<[string, string]> = [];
  for (const r of list.resources ?? []) {
    const slash = r.name.indexOf('/');
    if (slash >= 0) {
      subs.push([r.name.slice(0, slash), r.name.slice(slash + 1)]);
      continue;
    }
    byPlural.set(r.name, { group, version, apiVersion, kind: r.kind, plural: r.name, namespaced: r.namespaced, verbs: r.verbs ?? [], subresources: new Set() });
  }
  for (const [plural, sub] of subs) byPlural.get(plural)?.subresources.add(sub);
  const byKind = new Map<string, ApiResource>();
  for (const r of byPlural.values()) byKind.set(r.kind, r);
  return byKind;
}

export class Discovery {
  private readonly cache = new Map<string, Promise<Map<string, ApiResource> | undefined>>();

  constructor(private readonly client: KubeClient) {}

  /** The resource serving `kind` in `apiVersion`; a clear error if the cluster does not serve it. */
  async resolve(apiVersion: string, kind: string, signal?: AbortSignal): Promise<ApiResource> {
    let found = (await this.groupVersion(apiVersion, signal))?.get(kind);
    if (!found) {
      this.cache.delete(apiVersion);
      found = (await this.groupVersion(apiVersion, signal))?.get(kind);
    }
    if (found) return found;
    const served = await this.groupVersion(apiVersion, signal);
    throw new NotFoundError(
      served
        ? `the cluster at ${this.client.server} does not serve kind ${kind} in ${apiVersion} (it serves ${[...served.keys()].sort().join(', ') || 'no kinds'} there)`
        : `the cluster at ${this.client.server} does not serve ${apiVersion} (needed for kind ${kind})`,
      {
        hint: served
          ? 'check the kind in the manifest; a custom resource needs its CustomResourceDefinition installed first'
          : 'the apiVersion may be removed in this Kubernetes version (use the current one, e.g. apps/v1), or a CustomResourceDefinition is missing',
      },
    );
  }

  /** Like resolve, but undefined when the kind is not served (for optional kinds such as Endpoints). */
  async tryResolve(apiVersion: string, kind: string, signal?: AbortSignal): Promise<ApiResource | undefined> {
    return (await this.groupVersion(apiVersion, signal))?.get(kind);
  }

  /** The group's preferred `group/version`, or undefined when the cluster does not serve the group. */
  async preferredVersion(group: string, signal?: AbortSignal): Promise<string | undefined> {
    const res = await this.client.call({ method: 'GET', path: `/apis/${group}`, signal }, { what: `discover the versions of ${group}`, accept: [404], signal });
    if (res.status === 404) return undefined;
    const body = res.body as { preferredVersion?: { groupVersion?: string }; versions?: Array<{ groupVersion?: string }> };
    return body.preferredVersion?.groupVersion ?? body.versions?.[0]?.groupVersion;
  }

  /** Forgets everything, so the next lookups see kinds added since (new CRDs). */
  invalidate(): void {
    this.cache.clear();
  }

  private groupVersion(apiVersion: string, signal?: AbortSignal): Promise<Map<string, ApiResource> | undefined> {
    let entry = this.cache.get(apiVersion);
    if (!entry) {
      const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      entry = this.client
        .call({ method: 'GET', path, signal }, { what: `discover the kinds of ${apiVersion}`, accept: [404], signal })
        .then((res) => (res.status === 404 ? undefined : parseResourceList(apiVersion, res.body as ApiResourceList)));
      entry.catch(() => this.cache.delete(apiVersion));
      this.cache.set(apiVersion, entry);
    }
    return entry;
  }
}

/** The URL path of a resource's collection (namespace given for namespaced kinds). */
export function collectionPath(res: ApiResource, namespace: string | undefined): string {
  const root = res.group ? `/apis/${res.group}/${res.version}` : `/api/${res.version}`;
  return res.namespaced ? `${root}/namespaces/${encodeURIComponent(namespace ?? 'default')}/${res.plural}` : `${root}/${res.plural}`;
}

export function objectPath(res: ApiResource, ref: Pick<ResourceRef, 'name' | 'namespace'>, subresource?: string): string {
  return `${collectionPath(res, ref.namespace)}/${encodeURIComponent(ref.name)}${subresource ? `/${subresource}` : ''}`;
}

/** "Deployment vdu1 in namespace ns" / "Namespace ns", for messages. */
export function describeRef(ref: ResourceRef): string {
  return `${ref.kind} ${ref.name}${ref.namespace ? ` in namespace ${ref.namespace}` : ''}`;
}
