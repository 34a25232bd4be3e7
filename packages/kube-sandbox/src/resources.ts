/**
 * The resource registry: one entry per served group/version/resource. It
 * drives discovery (`/api`, `/apis`, aggregated discovery) and the REST
 * handlers alike, so a kind is served exactly as it is advertised: a verb
 * not listed here answers 405, a resource not registered answers 404.
 */
import { createHash } from 'node:crypto';
import type { SelectableFields } from './selectors.js';
import type { FieldError } from './status.js';
import type { NameRule } from './validation.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** A stored object, as JSON. */
export type KubeObject = Record<string, unknown> & { metadata: ObjectMeta };

export interface ObjectMeta {
  name: string;
  namespace?: string;
  generateName?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  [key: string]: unknown;
}

/** A subresource and the verbs it serves (`status`: get, update). */
export interface SubresourceType {
  name: string;
  verbs: Verb[];
  /** The kind the subresource answers with when it is not the parent's (`scale`: autoscaling/v1 Scale). */
  responseKind?: { group: string; version: string; kind: string };
}

/**
 * Where a kind keeps its replica count, for the `scale` subresource — the
 * same description a CustomResourceDefinition gives in `subresources.scale`.
 */
export interface ScaleSpec {
  /** Dotted path of the desired count (`spec.replicas`). */
  specReplicasPath: string;
  /** Dotted path of the observed count (`status.replicas`). */
  statusReplicasPath: string;
  /**
   * The selector the Scale reports in `status.selector`: a dotted path to a
   * string, or a function (built-ins serialise their `spec.selector`).
   */
  labelSelector?: string | ((obj: KubeObject) => string | undefined);
}

/** A column of the server-side `Table` (kubectl get), after Name and before Age. */
export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description: string;
  priority: number;
  /** A priority-0 column the API server prints after Age (ResourceQuota's Request, CSR's SignerName...). */
  afterAge?: boolean;
  cell(obj: KubeObject): unknown;
}

/**
 * Per-kind behaviour the generic handlers call into, in the spirit of the
 * API server's registry strategies. Every hook is optional.
 */
export interface ResourceStrategy {
  /** Set server-owned fields on a new object (status, defaults). */
  prepareForCreate?(obj: KubeObject): void;
  /** Carry server-owned fields over from the stored object on update. */
  prepareForUpdate?(obj: KubeObject, old: KubeObject): void;
  /**
   * Reshape the whole object on every write, `/status` and `/scale`
   * included, before anything else looks at it — what a custom resource's
   * decoder does with its schema (drop nulls, default, prune).
   */
  normalize?(obj: KubeObject): void;
  /**
   * A problem the API server's decoder finds in a request body before any
   * validation (a Secret's data that is not base64): the 400's message.
   */
  decodeProblem?(body: Record<string, unknown>): string | undefined;
  /** Fields of an applied configuration the kind's schema does not declare (custom resources: server-side apply answers 500). */
  undeclaredForApply?(obj: KubeObject): string[];
  /** Kind-specific checks beyond object metadata. */
  validate?(obj: KubeObject): FieldError[];
  /** Checks of a client's update against the stored object (immutable fields); not run for subresource writes. */
  validateUpdate?(obj: KubeObject, old: KubeObject): FieldError[];
  /**
   * Fill in defaults, as the API server's defaulting does before storing.
   * Runs on create and on every update, so it must be idempotent.
   */
  applyDefaults?(obj: KubeObject): void;
  /**
   * Start a delete. Returns the object to keep (marked for deletion, for
   * kinds that finish deleting later, like namespaces) or `undefined` to
   * remove it now.
   */
  beginDelete?(obj: KubeObject, now: Date): KubeObject | undefined;
}

/** One served resource. */
export interface ResourceType {
  /** API group; '' for the core group served under /api. */
  group: string;
  version: string;
  kind: string;
  listKind: string;
  /** The URL segment, lower-case plural (`namespaces`). */
  plural: string;
  singular: string;
  namespaced: boolean;
  verbs: Verb[];
  shortNames?: string[];
  categories?: string[];
  subresources?: SubresourceType[];
  nameRule: NameRule;
  /** Deletes answer with the object (namespaces) rather than a Success Status. */
  returnDeletedObject?: boolean;
  columns?: TableColumn[];
  /** The kind's Table has no Age column (Roles, LimitRanges and CRDs print `Created At` instead). */
  noAgeColumn?: boolean;
  strategy?: ResourceStrategy;
  /** `metadata.generation` is set to 1 on create and bumped when anything but metadata and status changes. */
  generation?: boolean;
  /** Where `/scale` reads and writes the replica count (with a `scale` entry in `subresources`). */
  scale?: ScaleSpec;
  /**
   * Lists merged by key in strategic merge patches and tracked per item by
   * server-side apply. Built-in kinds have them; custom resources do not
   * accept strategic merge patches at all.
   */
  strategicMerge?: boolean;
  /** Set for kinds a CustomResourceDefinition defines (crds.ts). */
  custom?: CustomResourceInfo;
  /**
   * A create-only kind (TokenReview, the access reviews) that is answered,
   * never stored: the status computed from the request. It may throw
   * ReviewInvalid (kinds/more-kinds.ts) for a 422.
   */
  review?: (obj: KubeObject) => Record<string, unknown>;
  /** The kind a 422 names when the API server validates the object as another (events.k8s.io Events as core Events). */
  validatedAs?: { kind: string; group: string };
  /** The OpenAPI schema the server publishes for the kind (custom resources: their CRD version's). */
  openApiSchema?: object;
  /** Fields `fieldSelector` may name; metadata.name and metadata.namespace when absent. */
  selectableFields?: SelectableFields;
  /**
   * A version served by conversion from the stored one (autoscaling/v1
   * HorizontalPodAutoscaler over v2): objects are stored in the other
   * version's form; the handlers convert what they serve and what they are sent.
   */
  conversion?: ResourceConversion;
}

/** Between a served version and the stored form of the same objects. */
export interface ResourceConversion {
  served(stored: KubeObject): KubeObject;
  stored(served: KubeObject): KubeObject;
}

/** What a custom resource's type keeps of the CustomResourceDefinition that defines it. */
export interface CustomResourceInfo {
  /** The CRD's name (`<plural>.<group>`). */
  crdName: string;
  /** The version objects are stored in; the other served versions differ only in apiVersion (conversion `None`). */
  storageVersion: string;
}

/** RFC 3339 at second precision, as metav1.Time serialises. */
export function rfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** `group/version`, or `version` alone for the core group. */
export function groupVersion(t: { group: string; version: string }): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

/**
 * The discovery `storageVersionHash`: the first 8 bytes of the SHA-256 of
 * `group/version/kind` in base64, as the API server computes it. Clients use
 * it only to notice that a storage version changed.
 */
export function storageVersionHash(t: ResourceType): string {
  return createHash('sha256').update(`${t.group}/${t.version}/${t.kind}`).digest().subarray(0, 8).toString('base64');
}

/**
 * Orders API versions as the API server prefers them: GA before beta before
 * alpha, higher numbers first (v2, v1, v1beta2, v1beta1, v1alpha1), then
 * versions of other shapes alphabetically.
 */
export function compareKubeVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] | undefined => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    return [m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2, Number(m[1]), Number(m[3] ?? 0)];
  };
  const ra = rank(a);
  const rb = rank(b);
  if (ra && rb) return rb[0] - ra[0] || rb[1] - ra[1] || rb[2] - ra[2];
  if (ra) return -1;
  if (rb) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

export class ResourceRegistry {
  private readonly types: ResourceType[] = [];
  private readonly listeners: ((type: ResourceType) => void)[] = [];

  private served = 0;

  /** Counts the changes to what is served: discovery documents built at one count hold until the next. */
  get revision(): number {
    return this.served;
  }

  register(type: ResourceType): void {
    if (this.find(type.group, type.version, type.plural)) {
      throw new Error(`resource ${type.plural} in ${groupVersion(type)} is already registered`);
    }
    this.types.push(type);
    this.served++;
    for (const listener of this.listeners) listener(type);
  }

  /** Calls `listener` with each resource registered from now on (a CRD's kind being served). */
  onRegister(listener: (type: ResourceType) => void): void {
    this.listeners.push(listener);
  }

  /** Stops serving a resource (a CRD's version that is deleted or no longer served). */
  unregister(group: string, version: string, plural: string): void {
    const i = this.types.findIndex((t) => t.group === group && t.version === version && t.plural === plural);
    if (i >= 0) {
      this.types.splice(i, 1);
      this.served++;
    }
  }

  find(group: string, version: string, plural: string): ResourceType | undefined {
    return this.types.find((t) => t.group === group && t.version === version && t.plural === plural);
  }

  /** The resources of one group/version, in registration order. */
  resources(group: string, version: string): ResourceType[] {
    return this.types.filter((t) => t.group === group && t.version === version);
  }

  /** Named groups (not the core group) with their versions, preferred version first. */
  groups(): { name: string; versions: string[] }[] {
    const groups = new Map<string, string[]>();
    for (const t of this.types) {
      if (!t.group) continue;
      const versions = groups.get(t.group) ?? [];
      if (!versions.includes(t.version)) versions.push(t.version);
      groups.set(t.group, versions);
    }
    return [...groups].map(([name, versions]) => ({ name, versions: versions.sort(compareKubeVersions) }));
  }

  /** Versions of the core group (served under /api). */
  coreVersions(): string[] {
    return [...new Set(this.types.filter((t) => !t.group).map((t) => t.version))];
  }

  /** The resource serving `kind` in `group/version` (a kind has one plural). */
  findByKind(group: string, version: string, kind: string): ResourceType | undefined {
    return this.types.find((t) => t.group === group && t.version === version && t.kind === kind);
  }

  /** The resource for an `apiVersion` and `kind` as an owner reference names them. */
  findByApiVersionKind(apiVersion: string, kind: string): ResourceType | undefined {
    const slash = apiVersion.indexOf('/');
    return slash < 0 ? this.findByKind('', apiVersion, kind) : this.findByKind(apiVersion.slice(0, slash), apiVersion.slice(slash + 1), kind);
  }

  hasGroupVersion(group: string, version: string): boolean {
    return this.types.some((t) => t.group === group && t.version === version);
  }

  all(): readonly ResourceType[] {
    return this.types;
  }
}
