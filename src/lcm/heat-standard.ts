/**
 * Tacker v2's StandardUserData (sol_refactored/infra_drivers/openstack/
 * userdata_standard.py), served natively: the stack has one resource per
 * VNFC. The Base HOT's top template names each VDU once (`VDU1: {type:
 * VDU1.yaml, properties: {flavor: {get_param: [nfv, VDU, VDU1,
 * computeFlavourId]}, ...}}`); the stack gets, in its place, `VDU1-0`,
 * `VDU1-1`, … — copies whose `get_param: [nfv, <kind>, <name>, ...]`
 * properties read `<name>-<index>` — and the `nfv` parameter is made from
 * what that template reads (init_nfv_dict): per index, `computeFlavourId`,
 * `vcImageId`, `locationConstraints` of a VDU or virtual storage, `network`
 * and `fixed_ips` of a connection point, filled from the VNFD and the
 * request as Tacker's common_script_utils fills them, then
 * `additionalParams.nfv` merged over it.
 *
 * Scale out adds the next indexes (Tacker: from the VDU's VNFC count) and
 * merges their values over the stack's `nfv`; scale in removes the newest
 * VNFCs' indexes from the template and their keys from `nfv`; heal keeps
 * the parameters (Tacker's `heal` returns an empty `nfv`). The indexes an
 * instance has are recorded (HeatStackRecord.vduIndexes).
 */
import yaml from 'js-yaml';
import { echo, UsageError, VnfmError } from '../errors.js';
import type { HeatTemplates, NfvParameter } from '../infra/openstack/driver-contract.js';
import { parseHot } from '../infra/openstack/hot.js';
import type { Vnfc } from '../model/resources.js';
import type { Flavour } from '../vnfd/index.js';
import type { NfvReads } from './heat-nfv.js';
import { jsonMergePatch } from './merge-patch.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** VDU → the indexes of its resources in the stack (`VDU1-0`, `VDU1-2`: [0, 2]). */
export type VduIndexes = Record<string, number[]>;

/** What the `nfv` values are made from. */
export interface StandardInputs {
  /** The request's (or the instance's) extVirtualLinks. */
  extVirtualLinks?: unknown[];
  /** extManagedVirtualLinks: networks that replace the template's own. */
  extManagedVirtualLinks?: unknown[];
  /** additionalParams.nfv, merged over the result. */
  overrides?: Json;
  /** The VIM's availability zone, for `locationConstraints`. */
  zone?: string;
  /** node → Glance image id, for images vnfm uploaded. */
  images?: Record<string, string>;
}

/** `VDU1` and 2 → `VDU1-2` (add_idx). */
export const withIndex = (name: string, index: number): string => `${name}-${index}`;

/** `VDU1-2` → `VDU1`; a name without `-` → '' (rm_idx, Python's rpartition). */
export function withoutIndex(name: string): string {
  const at = name.lastIndexOf('-');
  return at < 0 ? '' : name.slice(0, at);
}

/** The first indexes of each VDU: 0 … replicas-1. */
export function firstIndexes(flavour: Flavour, replicas: Record<string, number>): VduIndexes {
  return Object.fromEntries(Object.keys(flavour.vdus).map((v) => [v, Array.from({ length: replicas[v] ?? 0 }, (_, i) => i)]));
}

/** A VDU resource for one index: each property that is a `get_param` of 4 or more items reads `<name>-<index>` (add_idx_to_vdu_template). */
function indexedResource(resource: Json, index: number): Json {
  const out = clone(resource);
  const props = isObject(out['properties']) ? out['properties'] : {};
  for (const value of Object.values(props)) {
    const param = isObject(value) ? value['get_param'] : undefined;
    if (Array.isArray(param) && param.length >= 4) param[2] = withIndex(String(param[2]), index);
  }
  return out;
}

/** Networks of extManagedVirtualLinks in place of the template's own (common_script_utils `_apply_ext_managed_vls`). */
function applyExtManagedLinks(top: Json, links: unknown[]): void {
  const resources = isObject(top['resources']) ? top['resources'] : {};
  for (const link of links) {
    if (!isObject(link) || typeof link['vnfVirtualLinkDescId'] !== 'string' || typeof link['resourceId'] !== 'string') continue;
    const vl = link['vnfVirtualLinkDescId'];
    const networkId = link['resourceId'];
    const change = (item: unknown): void => {
      if (!isObject(item)) return;
      for (const [key, value] of Object.entries(item)) {
        if (isObject(value) && Object.keys(value).length === 1 && value['get_resource'] === vl) item[key] = networkId;
        else change(value);
      }
    };
    for (const [name, res] of Object.entries(resources)) {
      if (!isObject(res)) continue;
      const props = isObject(res['properties']) ? res['properties'] : {};
      const net = isObject(props['network']) ? props['network']['get_resource'] : undefined;
      if (name === vl || (res['type'] === 'OS::Neutron::Subnet' && net === vl)) {
        delete resources[name];
        continue;
      }
      change(res);
    }
  }
}

/** The top template as a mapping, with every VDU of the flavour taken out of its resources. */
function splitTop(hot: Pick<HeatTemplates, 'template' | 'templatePath'>, flavour: Flavour): { top: Json; vdus: Record<string, Json> } {
  const top = parseHot(hot.template);
  if (!top) throw new UsageError(`${hot.templatePath} is not a Heat template (a YAML mapping)`);
  const resources: Json = isObject(top['resources']) ? { ...top['resources'] } : {};
  const vdus: Record<string, Json> = {};
  for (const vduId of Object.keys(flavour.vdus)) {
    const res = resources[vduId];
    if (!isObject(res)) {
      throw new UsageError(
        `${hot.templatePath} has no resource ${echo(vduId)}: Tacker's StandardUserData makes one resource per VNFC from the top template's resource named after each VDU`,
        { hint: `give ${hot.templatePath} a resource ${vduId} (type: ${vduId}.yaml, the VDU's nested template), or use the package without lcm-operation-user-data` },
      );
    }
    vdus[vduId] = res;
    delete resources[vduId];
  }
  return { top: { ...top, resources }, vdus };
}

function withVdus(top: Json, vdus: Record<string, Json>, indexes: VduIndexes): Json {
  const resources = { ...(top['resources'] as Json) };
  for (const [vduId, list] of Object.entries(indexes)) {
    const res = vdus[vduId];
    if (!res) continue;
    for (const index of list) resources[withIndex(vduId, index)] = indexedResource(res, index);
  }
  return { ...top, resources };
}

const hotYaml = (template: Json) => yaml.dump(template, { lineWidth: -1, noRefs: true });

/**
 * The stack's templates in StandardUserData's form: the top template with
 * one resource per index of each VDU (and the extManagedVirtualLinks'
 * networks in place of the template's own); nested templates unchanged.
 */
export function standardTemplates(hot: HeatTemplates, flavour: Flavour, indexes: VduIndexes, extManagedVirtualLinks?: unknown[]): HeatTemplates {
  const { top, vdus } = splitTop(hot, flavour);
  const expanded = withVdus(top, vdus, indexes);
  if (extManagedVirtualLinks?.length) applyExtManagedLinks(expanded, extManagedVirtualLinks);
  return { ...hot, template: hotYaml(expanded) };
}

/** The `get_param: [nfv, ...]` paths of the resources' properties as a tree with null leaves (common_script_utils `init_nfv_dict`). */
export function initNfvDict(template: Json): Json {
  const params: unknown[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (isObject(v)) for (const [key, inner] of Object.entries(v)) key === 'get_param' ? params.push(inner) : walk(inner);
  };
  for (const res of Object.values(isObject(template['resources']) ? template['resources'] : {})) if (isObject(res)) walk(res['properties'] ?? {});
  const nfv: Json = {};
  for (const param of params) {
    if (!Array.isArray(param) || param.length < 4 || param[0] !== 'nfv') continue;
    let parent = nfv;
    for (const item of param.slice(1, -1)) {
      const key = String(item);
      if (!isObject(parent[key])) parent[key] = {};
      parent = parent[key] as Json;
    }
    parent[String(param[param.length - 1])] = null;
  }
  return nfv;
}

/**
 * The external links, the last first: an instance's record lists the links
 * a change of external connectivity gave after the ones it replaced (Tacker
 * takes the connection point out of the old link; here the newer one wins).
 */
const linksOf = (v: unknown[] | undefined): Json[] => (v ?? []).filter(isObject).reverse();
const extCpsOf = (link: Json): Json[] => (Array.isArray(link['extCps']) ? link['extCps'].filter(isObject) : []);

/** The network of a connection point: the external link with it (get_param_network). */
function networkOf(cp: string, links: Json[]): unknown {
  const link = links.find((l) => extCpsOf(l).some((c) => c['cpdId'] === cp));
  return link ? (link['resourceId'] ?? null) : null;
}

/** Its fixed IPs: per address entry, the first fixed address and the subnet (get_param_fixed_ips, _get_fixed_ips_from_extcp). */
function fixedIpsOf(cp: string, links: Json[]): Json[] | undefined {
  for (const link of links) {
    const ext = extCpsOf(link).find((c) => c['cpdId'] === cp);
    if (!ext) continue;
    const out: Json[] = [];
    const configs = Array.isArray(ext['cpConfig']) ? ext['cpConfig'] : Object.values(isObject(ext['cpConfig']) ? ext['cpConfig'] : {});
    for (const config of configs.filter(isObject)) {
      for (const proto of Array.isArray(config['cpProtocolData']) ? config['cpProtocolData'].filter(isObject) : []) {
        const ipOverEthernet = isObject(proto['ipOverEthernet']) ? proto['ipOverEthernet'] : undefined;
        for (const ip of Array.isArray(ipOverEthernet?.['ipAddresses']) ? (ipOverEthernet['ipAddresses'] as unknown[]).filter(isObject) : []) {
          const data: Json = {};
          if (Array.isArray(ip['fixedAddresses']) && ip['fixedAddresses'].length) data['ip_address'] = String(ip['fixedAddresses'][0]);
          if (ip['subnetId'] !== undefined) data['subnet'] = ip['subnetId'];
          if (Object.keys(data).length) out.push(data);
        }
      }
    }
    return out;
  }
  return undefined;
}

/** The image of a VDU or virtual storage: the one vnfm uploaded, else sw_image_data.name (get_param_image). */
function imageOf(node: string, flavour: Flavour, images: Record<string, string> | undefined): unknown {
  return images?.[node] ?? flavour.vdus[node]?.swImage?.name ?? flavour.storages[node]?.swImage?.name ?? null;
}

/** The `nfv` values of a StandardUserData template (its `instantiate`), without additionalParams.nfv. */
function filledNfv(template: Json, flavour: Flavour, inputs: StandardInputs): Json {
  const nfv = initNfvDict(template);
  const links = linksOf(inputs.extVirtualLinks);
  for (const [name, value] of Object.entries(isObject(nfv['VDU']) ? nfv['VDU'] : {})) {
    if (!isObject(value)) continue;
    const node = withoutIndex(name);
    if ('computeFlavourId' in value) value['computeFlavourId'] = flavour.vdus[node]?.virtualCompute?.flavorName ?? null;
    if ('vcImageId' in value) value['vcImageId'] = imageOf(node, flavour, inputs.images);
    if ('locationConstraints' in value) value['locationConstraints'] = inputs.zone ?? null;
  }
  for (const [name, value] of Object.entries(isObject(nfv['CP']) ? nfv['CP'] : {})) {
    if (!isObject(value)) continue;
    const cp = withoutIndex(name);
    if ('network' in value) value['network'] = networkOf(cp, links);
    if ('fixed_ips' in value) {
      // Tacker keeps the template's entries 0, 1, … in order, each filled from the request's entry of the same place.
      const wanted = isObject(value['fixed_ips']) ? value['fixed_ips'] : {};
      const given = fixedIpsOf(cp, links) ?? [];
      const list: Json[] = [];
      for (let i = 0; i < given.length && isObject(wanted[String(i)]); i++) {
        const entry = wanted[String(i)] as Json;
        if ('subnet' in entry) entry['subnet'] = given[i]!['subnet'] ?? null;
        if ('ip_address' in entry) entry['ip_address'] = given[i]!['ip_address'] ?? null;
        list.push(entry);
      }
      value['fixed_ips'] = list;
    }
  }
  return nfv;
}

const asNfv = (v: unknown): NfvParameter => {
  const out = (isObject(v) ? v : {}) as NfvParameter;
  return { ...out, VDU: isObject(out.VDU) ? out.VDU : {}, CP: isObject(out.CP) ? out.CP : {} };
};

/** The `nfv` parameter for templates in StandardUserData's form (standardTemplates), as its `instantiate` makes it. */
export function standardNfv(templates: Pick<HeatTemplates, 'template' | 'templatePath'>, flavour: Flavour, inputs: StandardInputs): NfvParameter {
  const top = parseHot(templates.template);
  if (!top) throw new UsageError(`${templates.templatePath} is not a Heat template (a YAML mapping)`);
  const nfv = filledNfv(top, flavour, inputs);
  return asNfv(inputs.overrides ? jsonMergePatch(nfv, inputs.overrides) : nfv);
}

/**
 * A scale out: the new indexes of each VDU — from its VNFC count on, as
 * Tacker counts them, skipping any index still in use — and the `nfv` with
 * their values merged over the stack's (StandardUserData `_scale_out`).
 */
export function scaleOut(
  hot: HeatTemplates,
  flavour: Flavour,
  indexes: VduIndexes,
  adding: Record<string, number>,
  nfv: NfvParameter,
  inputs: StandardInputs,
): { indexes: VduIndexes; nfv: NfvParameter } {
  const added: VduIndexes = {};
  const all: VduIndexes = clone(indexes);
  for (const [vduId, count] of Object.entries(adding)) {
    const used = new Set(all[vduId] ?? []);
    let next = used.size;
    for (let n = 0; n < count; n++) {
      while (used.has(next)) next++;
      used.add(next);
      (added[vduId] ??= []).push(next);
    }
    all[vduId] = [...used].sort((a, b) => a - b);
  }
  const { top, vdus } = splitTop(hot, flavour);
  const fresh = filledNfv(withVdus(top, vdus, added), flavour, { ...inputs, overrides: undefined });
  return { indexes: all, nfv: asNfv(jsonMergePatch(nfv, fresh)) };
}

/** The index of a VNFC's resource: its server's stack is the one the resource `<vdu>-<index>` made. */
export function indexOfVnfc(vnfc: Pick<Vnfc, 'id' | 'vduId' | 'metadata'>): number {
  const parent = (vnfc.metadata as { parentResource?: unknown } | undefined)?.parentResource;
  const m = typeof parent === 'string' && withoutIndex(parent) === vnfc.vduId ? /-(\d+)$/.exec(parent) : null;
  if (!m) {
    throw new VnfmError(`VNFC ${vnfc.id} is not in a resource ${vnfc.vduId}-<index> of the stack, as Tacker's StandardUserData makes them`, {
      hint: "the stack was changed outside vnfm: heal with additionalParams.all: true to make it again from the package's templates",
    });
  }
  return Number(m[1]);
}

/**
 * A scale in: of each VDU, the newest VNFCs go (Tacker v2 picks the newest
 * by creation time); their indexes leave the template, and their VDU, its
 * virtual storages' and its connection points' keys leave `nfv`
 * (StandardUserData `_scale_in`).
 */
export function scaleIn(
  flavour: Flavour,
  indexes: VduIndexes,
  removing: Record<string, number>,
  vnfcs: ReadonlyArray<Pick<Vnfc, 'id' | 'vduId' | 'metadata'>>,
  nfv: NfvParameter,
): { indexes: VduIndexes; nfv: NfvParameter; removed: Record<string, number[]> } {
  const created = (v: Pick<Vnfc, 'metadata'>) => String((v.metadata as { creationTime?: unknown } | undefined)?.creationTime ?? '');
  const all: VduIndexes = clone(indexes);
  const removed: Record<string, number[]> = {};
  const patch: Json = { VDU: {}, CP: {} };
  for (const [vduId, count] of Object.entries(removing)) {
    if (count <= 0) continue;
    const newest = vnfcs
      .filter((v) => v.vduId === vduId)
      .map((v) => ({ v, index: indexOfVnfc(v) }))
      .sort((a, b) => created(b.v).localeCompare(created(a.v)) || b.index - a.index)
      .slice(0, count);
    removed[vduId] = newest.map((n) => n.index);
    all[vduId] = (all[vduId] ?? []).filter((i) => !removed[vduId]!.includes(i));
    for (const index of removed[vduId]) {
      (patch['VDU'] as Json)[withIndex(vduId, index)] = null;
      for (const storage of flavour.vdus[vduId]?.requirements.virtualStorage ?? []) (patch['VDU'] as Json)[withIndex(storage, index)] = null;
      for (const cp of Object.values(flavour.cps).filter((c) => c.vdu === vduId)) (patch['CP'] as Json)[withIndex(cp.nodeName, index)] = null;
    }
  }
  return { indexes: all, nfv: asNfv(jsonMergePatch(nfv, patch)), removed };
}

/**
 * What a change of external connectivity sends: the `CP` values, per index,
 * of the connection points the request names (StandardUserData
 * `change_ext_conn`), merged by the caller over the stack's.
 */
export function standardExtConnCps(hot: HeatTemplates, flavour: Flavour, indexes: VduIndexes, extVirtualLinks: unknown[]): NfvParameter['CP'] {
  const { top, vdus } = splitTop(hot, flavour);
  const nfv = initNfvDict(withVdus(top, vdus, indexes));
  const links = linksOf(extVirtualLinks);
  const out: NfvParameter['CP'] = {};
  for (const [name, value] of Object.entries(isObject(nfv['CP']) ? nfv['CP'] : {})) {
    if (!isObject(value)) continue;
    const cp = withoutIndex(name);
    if ('network' in value) {
      const network = networkOf(cp, links);
      if (network === null) continue;
      out[name] = { ...out[name], network: network as string };
    }
    const given = 'fixed_ips' in value ? fixedIpsOf(cp, links) : undefined;
    if (given) {
      const wanted = isObject(value['fixed_ips']) ? value['fixed_ips'] : {};
      const list: Json[] = [];
      for (let i = 0; i < given.length && isObject(wanted[String(i)]); i++) {
        const entry = { ...(wanted[String(i)] as Json) };
        if ('subnet' in entry) entry['subnet'] = given[i]!['subnet'] ?? null;
        if ('ip_address' in entry) entry['ip_address'] = given[i]!['ip_address'] ?? null;
        list.push(entry);
      }
      out[name] = { ...out[name], fixed_ips: list as never };
    }
  }
  return out;
}

/** nfvReads of StandardUserData templates with the indexes taken off the VDU names (`[VDU, VDU1-0, vcImageId]` → `[VDU, VDU1, vcImageId]`). */
export function unindexedReads(reads: NfvReads, flavour: Flavour): NfvReads {
  return reads.map((p) => {
    const node = p[0] === 'VDU' && typeof p[1] === 'string' ? withoutIndex(p[1]) : '';
    return node && (flavour.vdus[node] || flavour.storages[node]) ? [p[0]!, node, ...p.slice(2)] : p;
  });
}
