/**
 * The Heat side of an OpenStack VNF: what an instance records about its
 * stack, and the `nfv` JSON parameter built the way Tacker builds it (from
 * the VNFD, the instantiation level or scale level, and the request), with
 * the request checks it depends on. Both package generations are served:
 * Tacker v2's keys (`computeFlavourId`, `vcImageId`, `desired_capacity`) and,
 * where the Base HOT reads them, v1's (`flavor`, `image`).
 */
import { echo, ValidationError } from '../errors.js';
import type { HeatTemplates, NfvParameter } from '../infra/openstack/driver-contract.js';
import { getParamPaths, parseHot } from '../infra/openstack/hot.js';
import type { Flavour, Vdu } from '../vnfd/index.js';
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
  /**
   * Tacker v2's StandardUserData form (heat-standard.ts): each VDU's indexes,
   * its resources `<VDU>-<index>` in the stack. Absent for other stacks.
   */
  vduIndexes?: Record<string, number[]>;
  /** In that form: the instantiate request's extManagedVirtualLinks, whose networks replace the template's own. */
  extManagedVirtualLinks?: unknown[];
  /** The package's own LCM user-data class that computed `nfv` at instantiation (run with Tacker's contract). */
  userDataClass?: { file: string; className: string; generation: 'v1' | 'v2' };
}

/** instantiatedVnfInfo of an instance on OpenStack. */
export type OpenStackInfo = InstantiatedVnfInfo & { metadata: InstantiatedVnfInfo['metadata'] & { heat: HeatStackRecord } };

/** The paths into `nfv` a stack's templates read (`[VDU, VDU1, flavor]`): nfvReads. */
export type NfvReads = ReadonlyArray<ReadonlyArray<string | number>>;

/**
 * What the Base HOT reads of the `nfv` parameter: every `get_param: [nfv,
 * ...]` in the resources of the top template and of each nested template
 * that declares an `nfv` parameter, as Tacker v1's user data looks for them
 * (lcm_user_data/utils.py `create_initial_param_dict`).
 */
export function nfvReads(templates: Pick<HeatTemplates, 'template' | 'files'>): NfvReads {
  const out: Array<Array<string | number>> = [];
  const top = parseHot(templates.template);
  if (top) out.push(...getParamPaths(top, 'nfv'));
  for (const text of Object.values(templates.files)) {
    const nested = parseHot(text);
    const params = nested?.['parameters'];
    if (nested && typeof params === 'object' && params !== null && 'nfv' in params) out.push(...getParamPaths(nested, 'nfv'));
  }
  return out;
}

const reads = (paths: NfvReads | undefined, kind: 'VDU' | 'CP', name: string, key: string, deeper = false) =>
  (paths ?? []).some((p) => p[0] === kind && p[1] === name && p[2] === key && (!deeper || p.length > 3));

/** Tacker's MemoryUnit: bytes per unit, the unit matched exactly, else regardless of case. */
const UNIT_BYTES: Record<string, number> = { B: 1, kB: 1e3, KiB: 1024, MB: 1e6, MiB: 1024 ** 2, GB: 1e9, GiB: 1024 ** 3, TB: 1e12, TiB: 1024 ** 4 };

/** `512 MB` in `unit` as Tacker converts it (MemoryUnit): the whole number below (488 MiB); undefined when it is not a size. */
export function sizeIn(size: string | undefined, unit: keyof typeof UNIT_BYTES): number | undefined {
  const [num, given, ...rest] = (size ?? '').trim().split(/\s+/);
  const from = given === undefined ? undefined : (UNIT_BYTES[given] ?? Object.entries(UNIT_BYTES).find(([k]) => k.toUpperCase() === given.toUpperCase())?.[1]);
  const value = Number(num);
  if (rest.length || from === undefined || !Number.isFinite(value)) return undefined;
  return Math.trunc((value * from) / UNIT_BYTES[unit]!);
}

/**
 * Tacker v1's `flavor` of a VDU: the Nova flavor its virtual_compute names
 * (utils.py `create_vdu_flavor_capability_name_dict`), or, for a template
 * that reads `flavor.vcpus` / `.ram` / `.disk` to make an OS::Nova::Flavor,
 * the VDU's size (`create_vdu_flavor_dict`: RAM in MiB, disk in GiB).
 */
function v1Flavor(vdu: Vdu, asSize: boolean): unknown {
  const vc = vdu.virtualCompute;
  if (!asSize) return vc?.flavorName;
  if (!vc) return undefined;
  const ram = sizeIn(vc.virtualMemSize, 'MiB');
  const disk = sizeIn(vc.localStorageSizes[0], 'GiB');
  return { ...(vc.numVirtualCpu !== undefined ? { vcpus: vc.numVirtualCpu } : {}), ...(ram !== undefined ? { ram } : {}), ...(disk !== undefined ? { disk } : {}) };
}

/**
 * The `nfv` parameter: for each VDU its `desired_capacity` (the replicas),
 * `computeFlavourId` (virtual_compute's requested_additional_capability_name),
 * `vcImageId` (sw_image_data.name) and `locationConstraints` (when a zone is
 * known); where the templates read them (`reads`), Tacker v1's `flavor`
 * (the same flavor name, or the VDU's size for an OS::Nova::Flavor) and
 * `image` (sw_image_data.name, of a VDU or a virtual storage); for each
 * connection point on an external virtual link its `network` (the link's
 * resourceId), `port` (an extLinkPort's resource, when the cpConfig names
 * one) and `fixed_ips` (fixed addresses, or subnets; an empty list when the
 * templates read it and the request gives none); then
 * `additionalParams.nfv` merged over it. A node whose image vnfm uploaded
 * (`images`: node → Glance image id) gets the image's id in place of the
 * name, as Tacker passes the image it created.
 */
export function buildNfvParameter(
  flavour: Flavour,
  replicas: Record<string, number>,
  opts: { extVirtualLinks?: unknown[]; overrides?: Json; zone?: string; reads?: NfvReads; images?: Record<string, string> } = {},
): NfvParameter {
  const VDU: NfvParameter['VDU'] = {};
  const imageOf = (node: string, swImage: { name?: string } | undefined) => opts.images?.[node] ?? swImage?.name;
  const image = (name: string, swImage: { name?: string } | undefined) => {
    const ref = imageOf(name, swImage);
    return ref && reads(opts.reads, 'VDU', name, 'image') ? { image: ref } : {};
  };
  for (const [vduId, vdu] of Object.entries(flavour.vdus)) {
    const flavor = reads(opts.reads, 'VDU', vduId, 'flavor') ? v1Flavor(vdu, reads(opts.reads, 'VDU', vduId, 'flavor', true)) : undefined;
    VDU[vduId] = {
      desired_capacity: replicas[vduId] ?? vdu.vduProfile.minNumberOfInstances,
      ...(vdu.virtualCompute?.flavorName ? { computeFlavourId: vdu.virtualCompute.flavorName } : {}),
      ...(imageOf(vduId, vdu.swImage) ? { vcImageId: imageOf(vduId, vdu.swImage) } : {}),
      ...(opts.zone ? { locationConstraints: opts.zone } : {}),
      ...(flavor !== undefined ? { flavor } : {}),
      ...image(vduId, vdu.swImage),
    };
    // Tacker names the image of a VDU's virtual storage after the storage node.
    for (const storageId of vdu.requirements.virtualStorage) {
      const storageImage = flavour.storages[storageId]?.swImage;
      if (storageImage?.name) VDU[storageId] = { vcImageId: imageOf(storageId, storageImage), ...image(storageId, storageImage) };
    }
  }
  // v1 reads a storage's image whether or not a VDU requires it (utils.py create_sw_image_dict: every node with sw_image_data).
  for (const [storageId, storage] of Object.entries(flavour.storages)) {
    if (!VDU[storageId] && storage.swImage?.name && reads(opts.reads, 'VDU', storageId, 'image')) VDU[storageId] = image(storageId, storage.swImage);
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
      // cpConfig: a map in v2 (SOL003 3.x), a list in v1 (2.6.1).
      const configs: unknown[] = Array.isArray(cp['cpConfig']) ? cp['cpConfig'] : Object.values(isObject(cp['cpConfig']) ? cp['cpConfig'] : {});
      for (const config of configs) {
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
      if (fixed.length || reads(opts.reads, 'CP', cpdId, 'fixed_ips')) entry.fixed_ips = fixed;
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
