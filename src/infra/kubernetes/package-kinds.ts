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

/** A group Kubernetes itself serves (core, apps, *.k8s.io), as opposed to one a CRD adds. */
export function isBuiltinGroup(group: string): boolean {
  return group === '' || !group.includes('.') || group.endsWith('.k8s.io');
}

/** The key the package's sources are recorded under: `<group>/<Kind>/<name>`. */
export function sourceKey(obj: Pick<KubeObject, 'apiVersion' | 'kind'> & { metadata: { name: string } }): string {
  const slash = obj.apiVersion.indexOf('/');
  return `${slash < 0 ? '' : obj.apiVersion.slice(0, slash)}/${obj.kind}/${obj.metadata.name}`;
}
