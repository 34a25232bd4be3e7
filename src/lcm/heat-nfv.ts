/**
 * The Heat side of an OpenStack VNF: what an instance records about its
 * stack, and the `nfv` JSON parameter built the way Tacker's v2 driver
 * builds it (from the VNFD, the instantiation level or scale level, and the
 * request), with the request checks it depends on.
 */
import { echo, ValidationError } from '../errors.js';
import type { NfvParameter } from '../infra/openstack/driver-contract.js';
import type { Flavour } from '../vnfd/index.js';
import type { InstantiatedVnfInfo } from '../model/lcm.js';
import { jsonMergePatch } from './merge-patch.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the instance keeps about its stack, in instantiatedVnfInfo.metadata.heat. */
export interface HeatStackRecord {
  stackName: string;
  /** The Base HOT's top template in the package. */
  templatePath: string;
  /** The `nfv` parameter last sent. */
  nfv: NfvParameter;
  /** The request's extVirtualLinks and additionalParams.nfv, to build `nfv` again for a new package. */
  extVirtualLinks?: unknown[];
  nfvOverrides?: Json;
  /** The environment files the stack was made with (copies are kept under VNFM_HOME). */
  environments: string[];
}

/** instantiatedVnfInfo of an instance on OpenStack. */
export type OpenStackInfo = InstantiatedVnfInfo & { metadata: InstantiatedVnfInfo['metadata'] & { heat: HeatStackRecord } };

/**
 * The `nfv` parameter: for each VDU its `desired_capacity` (the replicas),
 * `computeFlavourId` (virtual_compute's requested_additional_capability_name),
 * `vcImageId` (sw_image_data.name) and `locationConstraints` (when a zone is
 * known); for each connection point on an external virtual link its
 * `network` (the link's resourceId), `port` (an extLinkPort's resource, when
 * the cpConfig names one) and `fixed_ips` (fixed addresses, or subnets);
 * then `additionalParams.nfv` merged over it.
 */
export function buildNfvParameter(flavour: Flavour, replicas: Record<string, number>, opts: { extVirtualLinks?: unknown[]; overrides?: Json; zone?: string } = {}): NfvParameter {
  const VDU: NfvParameter['VDU'] = {};
  for (const [vduId, vdu] of Object.entries(flavour.vdus)) {
    VDU[vduId] = {
      desired_capacity: replicas[vduId] ?? vdu.vduProfile.minNumberOfInstances,
      ...(vdu.virtualCompute?.flavorName ? { computeFlavourId: vdu.virtualCompute.flavorName } : {}),
      ...(vdu.swImage?.name ? { vcImageId: vdu.swImage.name } : {}),
      ...(opts.zone ? { locationConstraints: opts.zone } : {}),
    };
    // Tacker names the image of a VDU's virtual storage after the storage node.
    for (const storageId of vdu.requirements.virtualStorage) {
      const image = flavour.storages[storageId]?.swImage?.name;
      if (image) VDU[storageId] = { vcImageId: image };
    }
  }
  const CP: NfvParameter['CP'] = {};
  for (const link of opts.extVirtualLinks ?? []) {
    if (!isObject(link)) continue;
    const ports = Array.isArray(link['extLinkPorts']) ? (link['extLinkPorts'] as Json[]) : [];
    for (const cp of Array.isArray(link['extCps']) ? (link['extCps'] as Json[]) : []) {
      const cpdId = cp['cpdId'];
      if (typeof cpdId !== 'string') continue;
      const entry: NfvParameter['CP'][string] = { ...(typeof link['resourceId'] === 'string' ? { network: link['resourceId'] } : {}) };
      const fixed: Array<{ ip_address?: string; subnet?: string }> = [];
      for (const config of Object.values(isObject(cp['cpConfig']) ? cp['cpConfig'] : {})) {
        if (!isObject(config)) continue;
        const portId = config['linkPortId'];
        const port = ports.find((p) => p['id'] === portId);
        const handle = port && isObject(port['resourceHandle']) ? port['resourceHandle']['resourceId'] : undefined;
        if (typeof handle === 'string') entry.port = handle;
        for (const proto of Array.isArray(config['cpProtocolData']) ? (config['cpProtocolData'] as Json[]) : []) {
          const ipOverEthernet = isObject(proto['ipOverEthernet']) ? proto['ipOverEthernet'] : {};
          for (const address of Array.isArray(ipOverEthernet['ipAddresses']) ? (ipOverEthernet['ipAddresses'] as Json[]) : []) {
            const subnet = typeof address['subnetId'] === 'string' ? address['subnetId'] : undefined;
            const fixedAddresses = Array.isArray(address['fixedAddresses']) ? address['fixedAddresses'].filter((a): a is string => typeof a === 'string') : [];
            if (fixedAddresses.length) fixed.push(...fixedAddresses.map((ip) => ({ ip_address: ip, ...(subnet ? { subnet } : {}) })));
            else if (subnet) fixed.push({ subnet });
          }
        }
      }
      if (fixed.length) entry.fixed_ips = fixed;
      CP[cpdId] = entry;
    }
  }
  const nfv: NfvParameter = { VDU, CP };
  return (opts.overrides ? jsonMergePatch(nfv, opts.overrides) : nfv) as NfvParameter;
}

/** The nfv parameter with new desired capacities. */
export function withCapacities(nfv: NfvParameter, replicas: Record<string, number>, vduIds: string[]): NfvParameter {
  const VDU = { ...nfv.VDU };
  for (const vduId of vduIds) VDU[vduId] = { ...VDU[vduId], desired_capacity: replicas[vduId] ?? 0 };
  return { ...nfv, VDU };
}

/** Connection points of each VDU (the port resources whose addresses a VNFC records). */
export function cpsByVdu(flavour: Flavour): Record<string, string[]> {
  const out: Record<string, string[]> = Object.fromEntries(Object.keys(flavour.vdus).map((v) => [v, [] as string[]]));
  const cps = Object.values(flavour.cps).sort((a, b) => (a.order ?? 0) - (b.order ?? 0) || a.nodeName.localeCompare(b.nodeName));
  for (const cp of cps) if (cp.vdu && out[cp.vdu]) out[cp.vdu]!.push(cp.nodeName);
  return out;
}

// ---------------------------------------------------------------------------
// Request checks specific to OpenStack

export function checkExtVirtualLinks(source: string, raw: unknown, flavour: Flavour): unknown[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw new ValidationError(source, 'extVirtualLinks', 'must be a list');
  raw.forEach((link, i) => {
    const field = `extVirtualLinks[${i}]`;
    if (!isObject(link)) throw new ValidationError(source, field, 'must be an object with resourceId and extCps');
    if (typeof link['resourceId'] !== 'string' || link['resourceId'] === '') {
      throw new ValidationError(source, `${field}.resourceId`, 'is required: the id of the Neutron network', { hint: 'openstack network show NETWORK -f value -c id' });
    }
    const cps = link['extCps'];
    if (!Array.isArray(cps)) throw new ValidationError(source, `${field}.extCps`, 'must be a list of {cpdId, cpConfig}');
    cps.forEach((cp, j) => {
      const cpdId = isObject(cp) ? cp['cpdId'] : undefined;
      if (typeof cpdId !== 'string' || !flavour.cps[cpdId]) {
        throw new ValidationError(source, `${field}.extCps[${j}].cpdId`, `${echo(cpdId)} is not a connection point of flavour ${flavour.id}`, {
          hint: `choose from: ${Object.keys(flavour.cps).join(', ') || '(none)'}`,
        });
      }
    });
  });
  return raw;
}

export function checkNfvOverrides(source: string, params: unknown): Json | undefined {
  if (!isObject(params) || params['nfv'] === undefined) return undefined;
  if (!isObject(params['nfv'])) throw new ValidationError(source, 'additionalParams.nfv', 'must be an object (merged over the nfv parameter vnfm builds)');
  return params['nfv'];
}
