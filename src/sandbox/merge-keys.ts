/**
 * Which lists of the built-in kinds are maps keyed by a field of their
 * items (the `patchMergeKey` of k8s.io/api's types, and the list-map keys
 * server-side apply uses). Strategic merge patches merge these lists item by
 * item and server-side apply tracks ownership per item; every other list is
 * atomic: replaced whole.
 *
 * Simplified: the real schema keys a few lists by two fields (container
 * ports by containerPort+protocol, service ports by port+protocol); here
 * one field is enough to tell items apart in practice.
 */

const BY_FIELD: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  imagePullSecrets: 'name',
  // A ServiceAccount's secrets (its imagePullSecrets are atomic there, keyed only in pod specs).
  secrets: 'name',
  hostAliases: 'ip',
  conditions: 'type',
  ownerReferences: 'uid',
  topologySpreadConstraints: 'topologyKey',
  resourceClaims: 'name',
};

/** Primitive lists merged as sets by strategic merge patches. */
const PRIMITIVE_SETS = new Set(['finalizers']);

/**
 * The merge key of the list in field `field`, or undefined for an atomic
 * list. `ports` holds container ports (key containerPort) in pod specs and
 * service ports (key port) in services.
 */
export function mergeKeyFor(field: string, items: unknown[]): string | undefined {
  if (field === 'ports') {
    const first = items.find((i) => typeof i === 'object' && i !== null) as Record<string, unknown> | undefined;
    return first && 'containerPort' in first ? 'containerPort' : 'port';
  }
  return BY_FIELD[field];
}

export function isPrimitiveSet(field: string): boolean {
  return PRIMITIVE_SETS.has(field);
}
