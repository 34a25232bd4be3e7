/**
 * The VMs of a VNF instance as the SSH management drivers see them: each
 * VNFC (a server) with the addresses of its connection points, which the
 * OpenStack infra-driver records in `vnfcResourceInfo[].metadata.addresses`
 * (read from the ports' `fixed_ips` through Heat, a floating IP first).
 */
import { VnfmError } from '../errors.js';
import type { Vnfc } from '../infra/driver.js';
import type { VnfInstance } from '../model/lcm.js';
import { vnfcsOf } from '../model/vnfcs.js';

export interface Node {
  /** The vnfcInfo id (`<vdu>-<server id>`), what heal requests name. */
  vnfcId: string;
  vduId: string;
  /** The server's id at the VIM: what SSH host keys are pinned to. */
  serverId: string;
  /** The first address of the connection point asked for. */
  address: string;
  /** The server's creation time when the VIM reported it (ISO 8601). */
  createdAt?: string;
  /** Every connection point's addresses. */
  addresses: Record<string, string[]>;
}

function nodeOf(v: Vnfc, cp: string): Node | undefined {
  const meta = (v.metadata ?? {}) as { addresses?: Record<string, string[]>; creationTime?: string };
  const addresses = meta.addresses ?? {};
  const address = addresses[cp]?.[0];
  if (!address) return undefined;
  return { vnfcId: v.id, vduId: v.vduId, serverId: v.resourceId, address, addresses, ...(meta.creationTime ? { createdAt: meta.creationTime } : {}) };
}

/** Every server of the instance that has the connection point `cp`, in a stable order. */
export function nodesByCp(instance: VnfInstance | undefined, cp: string): Node[] {
  return vnfcsOf(instance?.instantiatedVnfInfo)
    .map((v) => nodeOf(v, cp))
    .filter((n): n is Node => n !== undefined);
}

/** Like nodesByCp, but an instance with no server on that CP is an error naming the CP and what exists. */
export function requireNodes(instance: VnfInstance | undefined, cp: string, field: string): Node[] {
  const nodes = nodesByCp(instance, cp);
  if (nodes.length > 0) return nodes;
  const cps = [...new Set(vnfcsOf(instance?.instantiatedVnfInfo).flatMap((v) => Object.keys(((v.metadata ?? {}) as { addresses?: object }).addresses ?? {})))];
  throw new VnfmError(`no server of vnf instance ${instance?.id ?? '?'} has an address on connection point "${cp}" (${field})`, {
    hint: cps.length
      ? `connection points with addresses: ${cps.join(', ')}`
      : 'the instance has no servers with addresses: is it an OpenStack VNF, and do its ports have fixed IPs?',
  });
}

/** Servers of `after` that were not in `before`: created by scale-out, or by a heal that replaced them. */
export function newNodes(before: VnfInstance | undefined, after: VnfInstance | undefined, cp: string): Node[] {
  const had = new Set(vnfcsOf(before?.instantiatedVnfInfo).map((v) => v.resourceId));
  return nodesByCp(after, cp).filter((n) => !had.has(n.serverId));
}

/**
 * The servers a scale-in will remove, as the OpenStack infra-driver chooses
 * them: per VDU, the newest first (creation time, then id).
 */
export function scaleInVictims(instance: VnfInstance | undefined, removing: Record<string, number>, cp: string): Node[] {
  const nodes = nodesByCp(instance, cp);
  return Object.entries(removing).flatMap(([vdu, count]) =>
    count <= 0
      ? []
      : nodes
          .filter((n) => n.vduId === vdu)
          .sort((a, b) => (b.createdAt ?? '').localeCompare(a.createdAt ?? '') || b.serverId.localeCompare(a.serverId))
          .slice(0, count),
  );
}
