/**
 * What a package's own CustomResourceDefinitions promise before they exist
 * on the cluster: which kinds they define, namespaced or not, in which
 * served versions, and with or without a /scale subresource. The driver's
 * plan reads this instead of discovery for kinds the package brings itself.
 */
import type { KubeObject } from './driver-contract.js';

export interface DefinedVersion {
  served: boolean;
  storage: boolean;
  scale: boolean;
  /** Its schema declares `spec.template.metadata.labels`, so vnfm may label the template (MachineDeployment, not OpenStackMachineTemplate). */
  templateLabels: boolean;
}

/** One kind a CRD in the package defines. */
export interface DefinedKind {
  /** The CRD's metadata.name, `<plural>.<group>`. */
  crdName: string;
  group: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  versions: Map<string, DefinedVersion>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `<group>/<Kind>` → what the package's CRDs say of it. */
export function kindsDefinedBy(objects: readonly KubeObject[]): Map<string, DefinedKind> {
  const out = new Map<string, DefinedKind>();
  for (const o of objects) {
    if (o.kind !== 'CustomResourceDefinition' || !isObject(o.spec)) continue;
    const spec = o.spec as { group?: unknown; scope?: unknown; names?: { kind?: unknown; plural?: unknown }; versions?: unknown };
    if (typeof spec.group !== 'string' || typeof spec.names?.kind !== 'string') continue;
    const versions = new Map<string, DefinedVersion>();
    for (const v of Array.isArray(spec.versions) ? spec.versions : []) {
      if (!isObject(v) || typeof v.name !== 'string') continue;
      versions.set(v.name, {
        served: v.served !== false,
        storage: v.storage === true,
        scale: isObject(v.subresources) && isObject(v.subresources.scale),
        templateLabels: declaresTemplateLabels(isObject(v.schema) ? v.schema.openAPIV3Schema : undefined),
      });
    }
    out.set(`${spec.group}/${spec.names.kind}`, {
      crdName: o.metadata.name,
      group: spec.group,
      kind: spec.names.kind,
      plural: typeof spec.names.plural === 'string' ? spec.names.plural : `${spec.names.kind.toLowerCase()}s`,
      namespaced: spec.scope !== 'Cluster',
      versions,
    });
  }
  return out;
}

/**
 * Whether a structural schema declares `spec.template.metadata.labels`:
 * each step a declared property. vnfm adds no field a kind's schema does
 * not name (a server-side apply of one is refused with a 500).
 */
export function declaresTemplateLabels(schema: unknown): boolean {
  let node: unknown = schema;
  for (const step of ['spec', 'template', 'metadata', 'labels']) {
    const properties = isObject(node) ? node.properties : undefined;
    node = isObject(properties) ? properties[step] : undefined;
    if (!isObject(node)) return false;
  }
  return true;
}

/** A group Kubernetes itself serves (core, apps, *.k8s.io), as opposed to one a CRD adds. */
export function isBuiltinGroup(group: string): boolean {
  return group === '' || !group.includes('.') || group.endsWith('.k8s.io');
}

/**
 * The key the package's sources are recorded under: `<group>/<Kind>/<name>`.
 * An object without a name (a review, which the API server takes for create
 * only) is known by its spec instead: `<group>/<Kind>/?<spec as JSON>`.
 */
export function sourceKey(obj: Pick<KubeObject, 'apiVersion' | 'kind'> & { metadata?: { name?: string }; spec?: unknown }): string {
  const slash = obj.apiVersion.indexOf('/');
  const name = typeof obj.metadata?.name === 'string' ? obj.metadata.name : `?${JSON.stringify(obj.spec ?? {})}`;
  return `${slash < 0 ? '' : obj.apiVersion.slice(0, slash)}/${obj.kind}/${name}`;
}
