/**
 * The HOT vnfm makes from a flavour of the VNFD when the package has no Base
 * HOT for it, as Tacker v1 does: its OpenStack driver, given no user data,
 * translates the VNFD (infra_drivers/openstack/openstack.py `create` →
 * translate_template.py `TOSCAToHOT` → heat-translator's
 * translator/hot/tosca/etsi_nfv/). The same resources, under the same names:
 *  - Vdu.Compute `X` → OS::Nova::Server `X` (name: properties.name), with an
 *    OS::Nova::Flavor `X_flavor` made from virtual_compute (vcpus, ram in MiB,
 *    disk in GiB); a VDU that gives no size but names a flavor
 *    (requested_additional_capability_name) uses that flavor;
 *  - VduCp `C` → OS::Neutron::Port `C`, in the server's networks by `order`
 *    (binding:vnic_type from vnic_type);
 *  - VnfVirtualLink `L` → OS::Neutron::Net `L` and OS::Neutron::Subnet
 *    `L_subnet` (ip_version and cidr from l3_protocol_data), with
 *    OS::Neutron::QoSPolicy `L_qospolicy` and QoSBandwidthLimitRule
 *    `L_bandwidth` when max_bitrate_requirements has a leaf;
 *  - Vdu.VirtualBlockStorage `S` → OS::Cinder::Volume `S` (size in GiB,
 *    image), attached through the server's block_device_mapping_v2;
 *  - a scaling aspect `A` → OS::Heat::AutoScalingGroup `A` holding its VDUs,
 *    their ports and volumes in the nested template `A.hot.yaml` (flavors,
 *    networks and server groups stay in the top template and are passed in as
 *    `X_flavor_id`, `L_id`, `P_group_id`), with OS::Heat::ScalingPolicy
 *    `A_scale_out` / `A_scale_in` adjusting it by the aspect's delta (min_size
 *    the initial delta, max_size at max_scale_level, desired_capacity at the
 *    instantiation level);
 *  - an AffinityRule / AntiAffinityRule `P` of scope nfvi_node →
 *    OS::Nova::ServerGroup `P_group` named in its servers' scheduler_hints.
 * Where Tacker writes the request's values into the template (the network of
 * an external connection point, its fixed addresses, the images it made in
 * Glance), the template reads them from the `nfv` parameter in Tacker v1's
 * user-data shape instead, which heat-nfv.ts fills from the VNFD and the
 * request: nfv.VDU.<vdu>.flavor.{vcpus,ram,disk} (or .flavor, a name),
 * nfv.VDU.<vdu or storage>.image, nfv.CP.<cp>.network and .fixed_ips.
 * Tacker v2 has no translation: it refuses a flavour without a Base HOT.
 */
import yaml from 'js-yaml';
import { UsageError } from '../errors.js';
import type { Flavour, ScalingAspect, Vdu } from '../vnfd/index.js';
import { buildNfvParameter, cpsByVdu } from './heat-nfv.js';
import { aspectDelta, levelReplicas } from './replicas.js';

type Hot = Record<string, unknown>;

/** The top template, the nested templates by the name the top one uses, and what was left untranslated. */
export interface TranslatedHot {
  template: Hot;
  files: Record<string, Hot>;
  /** One line per node or policy not translated (as Tacker leaves it out too). */
  notes: string[];
}

export interface TranslateOptions {
  /** The level whose sizes the scaling groups' desired_capacity takes: the flavour's default_level when absent. */
  instantiationLevelId?: string;
  /** Named in the template's description. */
  vnfdId?: string;
}

/** Tacker's generated templates' version (translate_template.py HEAT_TEMPLATE_BASE). */
export const HOT_VERSION = '2013-05-23';
const BLOCK_STORAGE = 'tosca.nodes.nfv.Vdu.VirtualBlockStorage';
const IP_VERSIONS: Record<string, number> = { ipv4: 4, ipv6: 6 };

const nfv = (...path: string[]) => ({ get_param: ['nfv', ...path] });
const resource = (name: string) => ({ get_resource: name });
const param = (name: string) => ({ get_param: name });

/** Bytes per unit of a TOSCA scalar-unit.size, as heat-translator's MemoryUnit has them. */
const UNIT_BYTES: Record<string, number> = { B: 1, kB: 1e3, KiB: 1024, MB: 1e6, MiB: 1024 ** 2, GB: 1e9, GiB: 1024 ** 3, TB: 1e12, TiB: 1024 ** 4 };

/**
 * A size (`30 GiB`, `500 MB`) in whole GiB, as heat-translator converts a
 * volume's size_of_storage (MemoryUnit.convert_unit_size_to_num: the unit
 * matched exactly, else regardless of case; the whole number below);
 * undefined when it is not a size.
 */
export function sizeInGiB(size: string | undefined): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*$/.exec(size ?? '');
  if (!m) return undefined;
  const unit = UNIT_BYTES[m[2]!] ?? Object.entries(UNIT_BYTES).find(([k]) => k.toUpperCase() === m[2]!.toUpperCase())?.[1];
  return unit === undefined ? undefined : Math.trunc((Number(m[1]) * unit) / UNIT_BYTES['GiB']!);
}

/**
 * Where each VDU's server goes: the top template, a scaling aspect's group
 * (signalled as Tacker v1 scales), or a group of its own sized by
 * nfv.VDU.<vdu>.desired_capacity for a VDU with more (or fewer) than one
 * instance and no aspect (Tacker's translation would make it one server).
 */
interface Placement {
  kind: 'top' | 'aspect' | 'fixed';
  /** The group's resource name and the nested template's `<name>.hot.yaml`. */
  group?: string;
}

/** One template being written: its resources, and (nested) its parameters with what the top template passes for each. */
class TemplateParts {
  readonly resources: Hot = {};
  readonly parameters: Record<string, { type: string }> = {};
  readonly passed: Hot = {};

  constructor(readonly nested: boolean) {}

  /** `value` as this template reads it: itself at the top, a parameter of the nested template passed `value`. */
  input(name: string, value: unknown, type = 'string'): unknown {
    if (!this.nested) return value;
    this.parameters[name] = { type };
    this.passed[name] = value;
    return param(name);
  }
}

/**
 * The HOT of `flavour`, as Tacker v1 translates a VNFD without a Base HOT.
 * UsageError (exit 2) listing every part that cannot become a resource Heat
 * accepts (a VDU with no flavor, a network with no CIDR...), with the fix.
 */
export function translateFlavour(flavour: Flavour, opts: TranslateOptions = {}): TranslatedHot {
  return new Translation(flavour, opts).run();
}

class Translation {
  private readonly problems: string[] = [];
  private readonly notes: string[] = [];
  private readonly top = new TemplateParts(false);
  private readonly nested = new Map<string, TemplateParts>();
  private readonly placement: Record<string, Placement> = {};
  /** VDU → the server group resource its scheduler_hints name. */
  private readonly serverGroup: Record<string, string> = {};
  /** Virtual storage → the VDU whose volume it is. */
  private readonly storageOwner: Record<string, string> = {};
  private readonly names = new Set<string>();
  /** VDUs with neither a size nor a flavor name. */
  private readonly unsized: string[] = [];

  constructor(
    private readonly flavour: Flavour,
    private readonly opts: TranslateOptions,
  ) {}

  run(): TranslatedHot {
    this.place();
    this.serverGroups();
    for (const vl of Object.values(this.flavour.virtualLinks)) this.virtualLink(vl.nodeName);
    for (const vdu of Object.values(this.flavour.vdus)) this.vdu(vdu);
    this.unboundNodes();
    this.groups();
    if (this.unsized.length > 0) {
      const [which, has] = this.unsized.length === 1 ? [`VDU ${this.unsized[0]}`, 'has'] : [`VDUs ${this.unsized.join(', ')}`, 'have'];
      this.problems.unshift(
        `${which} ${has} no virtual_compute size (virtual_cpu.num_virtual_cpu, virtual_memory.virtual_mem_size) nor a flavor name (requested_additional_capabilities): Nova needs a flavor`,
      );
    }
    if (this.problems.length > 0) {
      // VDUs without any virtual_compute are a CNF's, as a rule.
      const cnf = this.unsized.some((v) => !this.flavour.vdus[v]!.virtualCompute);
      throw new UsageError(`the HOT of flavour ${this.flavour.id} cannot be made from its VNFD (${this.flavour.file}): ${this.problems.join('; ')}`, {
        hint: `fix the VNFD as said, or give the package a Base HOT (BaseHOT/${this.flavour.id}/<name>.yaml, nested templates in BaseHOT/${this.flavour.id}/nested/)${cnf ? "; a CNF's VDUs are Kubernetes workloads: instantiate it on a Kubernetes VIM" : ''}`,
      });
    }
    const description = `Generated by vnfm from flavour ${this.flavour.id} of ${this.opts.vnfdId ? `VNFD ${this.opts.vnfdId} ` : 'the VNFD '}(${this.flavour.file}), as Tacker translates a VNFD without a Base HOT`;
    const files: Record<string, Hot> = {};
    for (const [group, parts] of this.nested) {
      files[`${group}.hot.yaml`] = {
        heat_template_version: HOT_VERSION,
        description: `The members of ${group}: ${Object.keys(parts.resources).join(', ')}`,
        ...(Object.keys(parts.parameters).length ? { parameters: parts.parameters } : {}),
        resources: parts.resources,
      };
    }
    return {
      template: { heat_template_version: HOT_VERSION, description, parameters: { nfv: { type: 'json' } }, resources: this.top.resources },
      files,
      notes: this.notes,
    };
  }

  /** The template a VDU's server, ports and volumes go in. */
  private partsOf(vduId: string): TemplateParts {
    const group = this.placement[vduId]?.group;
    if (group === undefined) return this.top;
    let parts = this.nested.get(group);
    if (!parts) this.nested.set(group, (parts = new TemplateParts(true)));
    return parts;
  }

  /** Each VDU's template: its aspect's group, a fixed-size group, or the top. */
  private place(): void {
    const f = this.flavour;
    const levels = [undefined, ...Object.keys(f.instantiationLevels)];
    for (const aspect of Object.values(f.aspects)) {
      const vdus = Object.keys(aspect.vduDeltas).filter((v) => f.vdus[v]);
      if (vdus.length === 0) {
        this.notes.push(`scaling aspect ${aspect.id} scales no VDU of flavour ${f.id}: no scaling group is made for it`);
        continue;
      }
      for (const vduId of vdus) {
        const other = this.placement[vduId];
        if (other) this.problems.push(`VDU ${vduId} is scaled by two aspects (${other.group} and ${aspect.id}); one scaling group can hold it`);
        else this.placement[vduId] = { kind: 'aspect', group: aspect.id };
        this.checkSteps(aspect, vduId);
      }
      const counts = (vduId: string) => levels.map((l) => levelReplicas(f, l).replicas[vduId]).join(',');
      if (vdus.some((v) => counts(v) !== counts(vdus[0]!))) {
        this.problems.push(
          `scaling aspect ${aspect.id} scales ${vdus.join(' and ')}, which have different numbers of instances: one scaling group holds them all, one member each`,
        );
      }
    }
    for (const vduId of Object.keys(f.vdus)) {
      if (this.placement[vduId]) continue;
      const single = levels.every((l) => levelReplicas(f, l).replicas[vduId] === 1);
      this.placement[vduId] = single ? { kind: 'top' } : { kind: 'fixed', group: `${vduId}_group` };
    }
  }

  /** A ScalingPolicy adjusts by one number: every step of the aspect must add the same instances. */
  private checkSteps(aspect: ScalingAspect, vduId: string): void {
    const steps = Array.from({ length: aspect.maxScaleLevel }, (_, k) => aspectDelta(aspect, vduId, k, k + 1));
    if (new Set(steps).size > 1) {
      this.problems.push(
        `the steps of scaling aspect ${aspect.id} add ${steps.join(', ')} instances of ${vduId}: an OS::Heat::ScalingPolicy adjusts its group by one number (Tacker's translation uses the first delta for every step)`,
      );
    }
  }

  /** OS::Nova::ServerGroup for each affinity rule of scope nfvi_node over VDUs (heat-translator's ToscaNfvCommonAffinityRule). */
  private serverGroups(): void {
    for (const rule of this.flavour.affinityRules) {
      const vdus = rule.targets.filter((t) => this.flavour.vdus[t]);
      const others = rule.targets.filter((t) => !this.flavour.vdus[t]);
      if (rule.scope !== 'nfvi_node' || vdus.length === 0) {
        this.notes.push(`${rule.kind} rule ${rule.policyName} (scope ${rule.scope ?? 'none'}) is not translated: only a rule of scope nfvi_node over VDUs becomes a server group`);
        continue;
      }
      if (others.length) this.notes.push(`${rule.kind} rule ${rule.policyName}: its targets ${others.join(', ')} are not VDUs and are left out`);
      const name = `${rule.policyName}_group`;
      this.put(this.top, name, { type: 'OS::Nova::ServerGroup', properties: { name, policies: [rule.kind] } });
      for (const vduId of vdus) {
        const before = this.serverGroup[vduId];
        if (before) this.notes.push(`VDU ${vduId} is in the server groups ${before} and ${name}: a server is in one, ${name}`);
        this.serverGroup[vduId] = name;
      }
    }
  }

  /** OS::Neutron::Net, and for an IP network its Subnet, and for a leaf bit rate its QoS policy and bandwidth rule. */
  private virtualLink(name: string): void {
    const vl = this.flavour.virtualLinks[name]!;
    const l3 = vl.l3[0];
    const protocol = l3?.ipVersion ?? vl.layerProtocols.find((p) => IP_VERSIONS[p] !== undefined);
    const leaf = vl.maxBitrate?.leaf;
    this.put(this.top, name, { type: 'OS::Neutron::Net', ...(leaf !== undefined ? { properties: { qos_policy: resource(`${name}_qospolicy`) } } : {}) });
    if (protocol === undefined) {
      this.notes.push(`virtual link ${name} carries no IP (layer_protocols ${vl.layerProtocols.join(', ') || 'none'}): a network without a subnet`);
    } else if (IP_VERSIONS[protocol] === undefined) {
      this.problems.push(`virtual link ${name} has ip_version ${protocol}: write ipv4 or ipv6`);
    } else if (!l3?.cidr) {
      this.problems.push(`virtual link ${name} has no vl_profile.virtual_link_protocol_data[0].l3_protocol_data.cidr: Neutron needs one for its subnet`);
    } else {
      this.put(this.top, `${name}_subnet`, { type: 'OS::Neutron::Subnet', properties: { network: resource(name), ip_version: IP_VERSIONS[protocol], cidr: l3.cidr } });
    }
    if (leaf !== undefined) {
      this.put(this.top, `${name}_qospolicy`, { type: 'OS::Neutron::QoSPolicy' });
      // heat-translator's unit: the bit rate divided by 1024, a whole number for Heat's Integer.
      this.put(this.top, `${name}_bandwidth`, {
        type: 'OS::Neutron::QoSBandwidthLimitRule',
        properties: { max_kbps: Math.trunc(leaf / 1024), policy: resource(`${name}_qospolicy`) },
      });
    }
  }

  private vdu(vdu: Vdu): void {
    const id = vdu.nodeName;
    const parts = this.partsOf(id);
    const flavor = this.flavor(vdu, parts);
    const ports = (cpsByVdu(this.flavour)[id] ?? []).map((cp) => this.port(cp, parts));
    const volumes = vdu.requirements.virtualStorage.flatMap((s) => this.volume(s, id, parts));
    const group = this.serverGroup[id];
    this.put(parts, id, {
      type: 'OS::Nova::Server',
      properties: {
        ...(flavor !== undefined ? { flavor } : {}),
        name: vdu.name,
        ...(vdu.swImage ? { image: parts.input(`${id}_image`, nfv('VDU', id, 'image')) } : {}),
        ...(ports.length ? { networks: ports.map((p) => ({ port: resource(p) })) } : {}),
        // A server with its own image boots from it, its volumes are data disks; else the first volume is the boot disk (Nova takes one of each).
        ...(volumes.length ? { block_device_mapping_v2: volumes.map((v, i) => ({ volume_id: resource(v), boot_index: !vdu.swImage && i === 0 ? 0 : -1 })) } : {}),
        ...(group ? { scheduler_hints: { group: parts.input(`${group}_id`, resource(group)) } } : {}),
      },
    });
  }

  /** The server's flavor: an OS::Nova::Flavor of the VDU's size (in the top template), else the flavor it names. */
  private flavor(vdu: Vdu, parts: TemplateParts): unknown {
    const id = vdu.nodeName;
    const vc = vdu.virtualCompute;
    const sized = vc && (vc.numVirtualCpu !== undefined || vc.virtualMemSize !== undefined);
    if (!sized) {
      if (vc?.flavorName) return parts.input(`${id}_flavor`, nfv('VDU', id, 'flavor'));
      this.unsized.push(id);
      return undefined;
    }
    // The sizes as the nfv parameter will carry them: what it cannot convert would reach Heat as ''.
    const disk = vc.localStorageSizes[0];
    const keys = ['vcpus', 'ram', ...(disk !== undefined ? ['disk'] : [])];
    const built = buildNfvParameter(this.flavour, {}, { reads: keys.map((k) => ['VDU', id, 'flavor', k]) }).VDU[id]?.flavor;
    const size = (typeof built === 'object' && built !== null ? built : {}) as Record<string, number | undefined>;
    if (!Number.isInteger(size['vcpus']) || size['vcpus']! < 1) {
      this.problems.push(`VDU ${id} has virtual_cpu.num_virtual_cpu ${String(vc.numVirtualCpu)}: Nova needs a whole number of at least 1`);
    }
    if (size['ram'] === undefined || size['ram'] < 1) {
      this.problems.push(
        `VDU ${id} has virtual_memory.virtual_mem_size ${String(vc.virtualMemSize)}, which is ${size['ram'] ?? 'not a size'} in whole MiB: Nova needs at least 1 (write e.g. 512 MiB)`,
      );
    }
    if (disk !== undefined && size['disk'] === undefined) this.problems.push(`VDU ${id} has virtual_local_storage size_of_storage ${disk}, which is not a size (write e.g. 1 GiB)`);
    const name = `${id}_flavor`;
    this.put(this.top, name, {
      type: 'OS::Nova::Flavor',
      properties: { ram: nfv('VDU', id, 'flavor', 'ram'), vcpus: nfv('VDU', id, 'flavor', 'vcpus'), ...(disk !== undefined ? { disk: nfv('VDU', id, 'flavor', 'disk') } : {}) },
    });
    return parts.input(`${name}_id`, resource(name));
  }

  /** OS::Neutron::Port on the internal virtual link, else on the network the request gives the external connection point. */
  private port(cpId: string, parts: TemplateParts): string {
    const cp = this.flavour.cps[cpId]!;
    const vl = cp.virtualLink !== undefined ? this.flavour.virtualLinks[cp.virtualLink] : undefined;
    if (cp.virtualLink !== undefined && !vl) this.problems.push(`connection point ${cpId} links to ${cp.virtualLink}, which is not a virtual link of flavour ${this.flavour.id}`);
    const properties: Hot = vl
      ? { network: parts.input(`${vl.nodeName}_id`, resource(vl.nodeName)) }
      : { network: parts.input(`${cpId}_network`, nfv('CP', cpId, 'network')), fixed_ips: parts.input(`${cpId}_fixed_ips`, nfv('CP', cpId, 'fixed_ips'), 'json') };
    if (cp.vnicType) properties['binding:vnic_type'] = cp.vnicType;
    this.put(parts, cpId, { type: 'OS::Neutron::Port', properties });
    return cpId;
  }

  /** OS::Cinder::Volume of a VirtualBlockStorage the VDU requires; [] for the storage types Tacker leaves out. */
  private volume(storageId: string, vduId: string, parts: TemplateParts): string[] {
    const s = this.flavour.storages[storageId];
    if (!s) return [];
    if (s.type !== BLOCK_STORAGE) {
      this.notes.push(`${storageId} (${s.type}) required by ${vduId} is not translated: only ${BLOCK_STORAGE} becomes a volume`);
      return [];
    }
    const owner = this.storageOwner[storageId];
    if (owner !== undefined) {
      this.problems.push(`virtual storage ${storageId} is required by ${owner} and ${vduId}: a volume is attached to one server, each VDU needs its own`);
      return [];
    }
    this.storageOwner[storageId] = vduId;
    const size = sizeInGiB(s.sizeOfStorage);
    if (size === undefined || size < 1) {
      this.problems.push(
        `virtual storage ${storageId} has size_of_storage ${s.sizeOfStorage ?? '(none)'}, which is ${size ?? 'not a size'} in whole GiB: Cinder needs at least 1 (write e.g. 1 GiB)`,
      );
    }
    this.put(parts, storageId, {
      type: 'OS::Cinder::Volume',
      properties: { size: size ?? 0, ...(s.swImage ? { image: parts.input(`${storageId}_image`, nfv('VDU', storageId, 'image')) } : {}) },
    });
    return [storageId];
  }

  /** Block storage no VDU requires: a volume of its own in the top template, as heat-translator makes every storage node; other nodes noted. */
  private unboundNodes(): void {
    const required = new Set(Object.values(this.flavour.vdus).flatMap((v) => v.requirements.virtualStorage));
    for (const s of Object.values(this.flavour.storages)) {
      if (required.has(s.nodeName)) continue;
      if (s.type === BLOCK_STORAGE) this.volume(s.nodeName, '(no VDU)', this.top);
      else this.notes.push(`${s.nodeName} (${s.type}) is not translated: only ${BLOCK_STORAGE} becomes a volume`);
    }
    for (const cp of Object.values(this.flavour.cps)) {
      if (!cp.vdu || !this.flavour.vdus[cp.vdu])
        this.notes.push(`connection point ${cp.nodeName} (${cp.type}) binds to no VDU of flavour ${this.flavour.id}: no port is made for it`);
    }
  }

  /** The scaling groups (with their policies) and the fixed-size groups, in the top template. */
  private groups(): void {
    const replicas = levelReplicas(this.flavour, this.opts.instantiationLevelId).replicas;
    for (const [group, parts] of this.nested) {
      const vduIds = Object.keys(this.placement).filter((v) => this.placement[v]!.group === group);
      const vduId = vduIds[0]!;
      const member = { type: `${group}.hot.yaml`, ...(Object.keys(parts.passed).length ? { properties: parts.passed } : {}) };
      const aspect = this.placement[vduId]!.kind === 'aspect' ? this.flavour.aspects[group] : undefined;
      if (!aspect) {
        // No aspect scales it: sized by nfv.VDU.<vdu>.desired_capacity, within its vdu_profile.
        const profile = this.flavour.vdus[vduId]!.vduProfile;
        this.put(this.top, group, {
          type: 'OS::Heat::AutoScalingGroup',
          properties: { min_size: profile.minNumberOfInstances, max_size: profile.maxNumberOfInstances, desired_capacity: nfv('VDU', vduId, 'desired_capacity'), resource: member },
        });
        continue;
      }
      // As heat-translator: min_size the initial delta, max_size that and every step up to max_scale_level.
      const vdu = this.flavour.vdus[vduId]!;
      const min = this.flavour.initialDeltas[vduId] ?? vdu.vduProfile.minNumberOfInstances;
      const delta = aspectDelta(aspect, vduId, 0, 1);
      this.put(this.top, group, {
        type: 'OS::Heat::AutoScalingGroup',
        properties: { min_size: min, max_size: min + aspectDelta(aspect, vduId, 0, aspect.maxScaleLevel), desired_capacity: replicas[vduId] ?? min, resource: member },
      });
      for (const [suffix, adjustment] of [
        ['scale_out', delta],
        ['scale_in', -delta],
      ] as const) {
        this.put(this.top, `${group}_${suffix}`, {
          type: 'OS::Heat::ScalingPolicy',
          properties: { adjustment_type: 'change_in_capacity', auto_scaling_group_id: resource(group), scaling_adjustment: adjustment },
        });
      }
    }
  }

  /**
   * Adds a resource. The names made from node names (`X_flavor`, `L_subnet`,
   * `A_scale_out`...) may meet a node's own: one resource per name in all
   * the templates, as the VNFCs are found by their servers' names.
   */
  private put(parts: TemplateParts, name: string, value: Hot): void {
    if (this.names.has(name)) {
      this.problems.push(`two resources would be named ${name}: rename the node ${name}, or the one whose name it is made from`);
      return;
    }
    this.names.add(name);
    parts.resources[name] = value;
  }
}

const FUNCTIONS = new Set(['get_param', 'get_resource', 'get_attr', 'get_file']);
const isFunction = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 1 && FUNCTIONS.has(Object.keys(v)[0]!);

/**
 * A template as YAML text, written as Heat's templates are: block mappings
 * and lists, intrinsic functions on one line (`{ get_param: [ nfv, VDU, X, image ] }`).
 */
export function hotText(template: Hot): string {
  const flow = (v: unknown) => yaml.dump(v, { flowLevel: 0, lineWidth: -1 }).trim();
  const lines: string[] = [];
  const emit = (value: unknown, indent: string, lead: string): void => {
    if (Array.isArray(value) && value.length > 0) {
      lines.push(lead);
      for (const item of value) emitItem(item, indent);
    } else if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length > 0 && !isFunction(value)) {
      lines.push(lead);
      for (const [k, v] of Object.entries(value)) emit(v, `${indent}  `, `${indent}  ${flow(k)}:`);
    } else lines.push(`${lead} ${flow(value)}`);
  };
  const emitItem = (item: unknown, indent: string): void => {
    if (typeof item === 'object' && item !== null && !Array.isArray(item) && Object.keys(item).length > 0 && !isFunction(item)) {
      // The first key on the dash's line, the others under it.
      const [first, ...rest] = Object.entries(item);
      const at = lines.length;
      emit(first![1], `${indent}  `, `${indent}  ${flow(first![0])}:`);
      lines[at] = `${indent}- ${lines[at]!.slice(indent.length + 2)}`;
      for (const [k, v] of rest) emit(v, `${indent}  `, `${indent}  ${flow(k)}:`);
    } else emit(item, `${indent}  `, `${indent}-`);
  };
  for (const [k, v] of Object.entries(template)) emit(v, '', `${flow(k)}:`);
  return `${lines.join('\n')}\n`;
}
