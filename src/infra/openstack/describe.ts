/**
 * A Heat stack's resources as vnf-describe shows them: a tree (a scaling
 * group's or provider template's nested stack under the resource that made
 * it), each resource ready when its last action completed, its status
 * reason otherwise, and drift where Heat says something failed. Built from
 * one resource list with nested_depth (`openstack stack resource list -n N`).
 */
import type { LiveNode } from '../../model/live.js';

/** The fields of a Heat resource (heat.ts's HeatResource) the tree needs. */
export interface HeatResourceRow {
  name: string;
  type: string;
  status: string;
  statusReason: string;
  physicalId: string;
  stack: { name: string; id: string };
  nestedStack?: { name: string; id: string };
}

/** Heat's resource types whose nested stack holds one member per unit of capacity. */
const GROUP_TYPES = new Set(['OS::Heat::AutoScalingGroup', 'OS::Heat::ResourceGroup', 'OS::Heat::InstanceGroup']);

function nodeOf(r: HeatResourceRow): LiveNode {
  const done = r.status.endsWith('_COMPLETE') && r.status !== 'INIT_COMPLETE' && !r.status.startsWith('DELETE_');
  const failed = r.status.endsWith('_FAILED');
  const reason = done ? 'ready' : r.status === 'INIT_COMPLETE' ? 'not created yet (INIT_COMPLETE)' : `${r.status}${r.statusReason ? `: ${r.statusReason}` : ''}`;
  return {
    kind: r.type,
    name: r.name,
    ...(r.physicalId ? { id: r.physicalId } : {}),
    applied: true,
    exists: !r.status.startsWith('DELETE_COMPLETE'),
    ready: done,
    reason,
    drift: failed ? [`${r.status}${r.statusReason ? `: ${r.statusReason}` : ''}`] : r.status.startsWith('DELETE_') ? ['deleted'] : [],
    events: [],
    children: [],
  };
}

/**
 * The resources of stack `stackId` as a tree: each resource with a nested
 * stack gets that stack's resources as children (a scaling group's size
 * as its replicas). Resources keep Heat's order within a stack.
 */
export function heatTree(resources: readonly HeatResourceRow[], stackId: string): LiveNode[] {
  const byStack = new Map<string, HeatResourceRow[]>();
  for (const r of resources) {
    const list = byStack.get(r.stack.id) ?? [];
    list.push(r);
    byStack.set(r.stack.id, list);
  }
  const build = (id: string, seen: Set<string>): LiveNode[] =>
    (byStack.get(id) ?? []).map((r) => {
      const node = nodeOf(r);
      const nested = r.nestedStack?.id;
      if (nested && !seen.has(nested)) {
        node.children = build(nested, new Set([...seen, nested]));
        if (GROUP_TYPES.has(r.type)) node.replicas = node.children.length;
      }
      return node;
    });
  return build(stackId, new Set([stackId]));
}
