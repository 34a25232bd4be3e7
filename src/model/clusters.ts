import type { VnfInstance } from './lcm.js';
import type { ResourceRef } from './resources.js';

/** The Cluster API Clusters among an instance's resources. */
export function clustersOf(instance: VnfInstance | undefined): ResourceRef[] {
  const info = instance?.instantiatedVnfInfo;
  return (info?.resources ?? [])
    .filter((r) => r.kind === 'Cluster' && r.apiVersion.startsWith('cluster.x-k8s.io/'))
    .map((r) => ({ ...r, namespace: r.namespace ?? info!.metadata.namespace }));
}
