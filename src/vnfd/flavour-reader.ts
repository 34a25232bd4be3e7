/**
 * Reads one deployment flavour's nodes (VDUs, storage, connection points,
 * virtual links), its policies and its LCM hooks into the model; the checks
 * that its references land are flavour-references.ts.
 */
import type {
  AffinityRule,
  ConnectionPoint,
  Flavour,
  HookImplementation,
  InstantiationLevel,
  LcmHook,
  SwImage,
  Vdu,
  VirtualCompute,
  VirtualLink,
  VirtualStorage,
} from '../model/vnfd.js';
import { LCM_HOOKS } from '../model/vnfd.js';
import { isMapping } from '../yaml.js';
import { checkFlavourReferences, type FlavourPolicies } from './flavour-references.js';
import { POLICY } from './sol001-types.js';
import { entriesOf, isCount, type Mapping, mappingOf, resolveMember, type SourceFile, stringList, stringOf, type VnfdReading, type VnfNode } from './tosca-values.js';
import { lineOf } from './yaml-source.js';

const SW_IMAGE_ARTIFACT = 'tosca.artifacts.nfv.SwImage';

/** Reads one flavour's VDUs and policies and checks that every reference among them lands. */
export class FlavourReader {
  private readonly nodes: Mapping;
  /** Policy names by kind, for locating lines. */
  private readonly aspectPolicy = new Map<string, string>();
  private readonly policies: FlavourPolicies = { deltaPolicies: [], vduLevelPolicies: [], initialDeltaPolicies: [] };

  constructor(
    private readonly loader: VnfdReading,
    private readonly source: SourceFile,
    private readonly flavour: Flavour,
  ) {
    this.nodes = mappingOf(mappingOf(source.doc.topology_template).node_templates);
  }

  private line(path: readonly string[]): number | undefined {
    return lineOf(this.source.text, ['topology_template', ...path]);
  }

  private add(code: string, path: readonly string[], message: string, hint: string): void {
    this.loader.add({ code, file: this.source.path, line: this.line(path), message, hint });
  }

  readVdu(name: string, type: string, tmpl: Mapping): Vdu {
    const props = mappingOf(tmpl.properties);
    const at = ['node_templates', name, 'properties'];
    const vduName = stringOf(props.name);
    if (vduName === undefined) {
      this.add(
        'vdu-name-missing',
        ['node_templates', name],
        `VDU ${name} has no properties.name`,
        `add "name:" under ${name}.properties; for a CNF it must equal the metadata.name of the Kubernetes workload that realises the VDU`,
      );
    }
    const profile = mappingOf(props.vdu_profile);
    const min = profile.min_number_of_instances;
    const max = profile.max_number_of_instances;
    if (!isCount(min) || !isCount(max)) {
      this.add(
        'vdu-profile-invalid',
        isMapping(props.vdu_profile) ? [...at, 'vdu_profile'] : ['node_templates', name],
        `VDU ${name} needs vdu_profile.min_number_of_instances and max_number_of_instances as whole numbers ≥ 0 (found ${String(min)} and ${String(max)})`,
        'write e.g. "vdu_profile: {min_number_of_instances: 1, max_number_of_instances: 3}"',
      );
    } else if (min > max) {
      this.add(
        'vdu-profile-invalid',
        [...at, 'vdu_profile', 'min_number_of_instances'],
        `VDU ${name} has min_number_of_instances ${min} greater than max_number_of_instances ${max}`,
        'lower the minimum or raise the maximum',
      );
    }
    const requirements: Vdu['requirements'] = { virtualStorage: [], other: [] };
    for (const [req, target] of entriesOf(tmpl.requirements)) {
      const t = typeof target === 'string' ? target : stringOf(mappingOf(target).node);
      if (t === undefined) continue;
      if (req === 'virtual_storage') requirements.virtualStorage.push(t);
      else requirements.other.push({ name: req, target: t });
    }
    for (const storage of requirements.virtualStorage) {
      if (!(storage in this.nodes)) {
        this.add(
          'requirement-target-missing',
          ['node_templates', name, 'requirements', 'virtual_storage'],
          `VDU ${name} requires virtual_storage ${storage}, which is not a node template of flavour ${this.flavour.id}`,
          `define ${storage} (a tosca.nodes.nfv.Vdu.VirtualBlockStorage) in this file, or fix the name`,
        );
      }
    }
    return {
      nodeName: name,
      name: vduName ?? name,
      type,
      description: stringOf(props.description),
      vduProfile: { minNumberOfInstances: isCount(min) ? min : 0, maxNumberOfInstances: isCount(max) ? max : 0 },
      swImage: this.readSwImage(name, tmpl),
      virtualCompute: readVirtualCompute(tmpl),
      requirements,
      isComputeNode: true,
    };
  }

  readStorage(name: string, type: string, tmpl: Mapping): VirtualStorage {
    const props = mappingOf(tmpl.properties);
    const data = mappingOf(props.virtual_block_storage_data ?? props.virtual_object_storage_data ?? props.virtual_file_storage_data);
    const size = data.size_of_storage ?? data.max_size_of_storage;
    return {
      nodeName: name,
      type,
      swImage: this.readSwImage(name, tmpl),
      sizeOfStorage: size === undefined ? undefined : String(size),
      isComputeNode: false,
    };
  }

  /**
   * `sw_image_data` and its image artifact: the one named `sw_image`, else
   * the node's artifact of type tosca.artifacts.nfv.SwImage (Tacker takes
   * the artifact by its type, whatever its name).
   */
  private readSwImage(node: string, tmpl: Mapping): SwImage | undefined {
    const data = mappingOf(mappingOf(tmpl.properties).sw_image_data);
    const artifacts = entriesOf(tmpl.artifacts);
    const [artifactName, artifactValue] =
      artifacts.find(([name]) => name === 'sw_image') ?? artifacts.find(([, a]) => this.loader.types.isA(stringOf(mappingOf(a).type), SW_IMAGE_ARTIFACT)) ?? [];
    // The short form `sw_image: ../Files/images/x.img` names the file alone.
    const fileRef = typeof artifactValue === 'string' ? artifactValue : stringOf(mappingOf(artifactValue).file);
    let file: string | undefined;
    let url: string | undefined;
    if (fileRef !== undefined && /^[a-z][a-z0-9+.-]*:\/\//i.test(fileRef)) url = fileRef;
    else if (fileRef !== undefined) {
      file = this.resolveArtifact(this.source.path, fileRef);
      if (file === undefined) {
        this.add(
          'artifact-file-missing',
          ['node_templates', node, 'artifacts', artifactName!, 'file'],
          `the ${artifactName} artifact of ${node} names ${fileRef}, which is not in the package`,
          'add the image under Files/images/ and give its path relative to this file (e.g. ../Files/images/<image>) or to the package root; or drop the artifact to use an image already in the VIM',
        );
      }
    }
    if (Object.keys(data).length === 0) {
      if (artifactName !== undefined) {
        this.add(
          'sw-image-data-missing',
          ['node_templates', node, 'artifacts', artifactName],
          `${node} has the image artifact ${artifactName} but no properties.sw_image_data, which says what the image is (as Tacker, vnfm refuses such a package)`,
          `add sw_image_data to ${node}: name, version, checksum {algorithm, hash}, container_format, disk_format, min_disk, size`,
        );
      }
      return undefined;
    }
    const checksum = mappingOf(data.checksum);
    const at = ['node_templates', node, 'properties', 'sw_image_data'];
    return {
      name: stringOf(data.name) ?? node,
      version: stringOf(data.version),
      checksum: typeof checksum.algorithm === 'string' && typeof checksum.hash === 'string' ? { algorithm: checksum.algorithm, hash: checksum.hash } : undefined,
      containerFormat: stringOf(data.container_format),
      diskFormat: stringOf(data.disk_format),
      minDisk: stringOf(data.min_disk),
      minRam: stringOf(data.min_ram),
      size: stringOf(data.size),
      file,
      ...(url !== undefined ? { url } : {}),
      source: { file: this.source.path, line: this.line([...at, 'checksum', 'hash']) ?? this.line(at) },
    };
  }

  readPolicies(policies: Array<[string, unknown]>): void {
    const byType = (base: string) => policies.filter(([, p]) => isMapping(p) && this.loader.types.isA(stringOf(p.type), base)) as Array<[string, Mapping]>;
    const f = this.flavour;

    for (const [name, p] of byType(POLICY.scalingAspects)) {
      for (const [aspectId, a] of entriesOf(mappingOf(p.properties).aspects)) {
        const aspect = mappingOf(a);
        const max = aspect.max_scale_level;
        if (!isCount(max)) {
          this.add(
            'aspect-invalid',
            ['policies', name, 'properties', 'aspects', aspectId],
            `scaling aspect ${aspectId} has max_scale_level ${String(max)}, not a whole number ≥ 0`,
            'set max_scale_level to the number of steps the aspect may scale out, e.g. 2',
          );
        }
        f.aspects[aspectId] = {
          id: aspectId,
          name: stringOf(aspect.name) ?? aspectId,
          description: stringOf(aspect.description),
          maxScaleLevel: isCount(max) ? max : 0,
          stepDeltas: stringList(aspect.step_deltas),
          vduDeltas: {},
        };
        this.aspectPolicy.set(aspectId, name);
      }
    }
    for (const [name, p] of byType(POLICY.vduInitialDelta)) {
      const targets = stringList(p.targets);
      const n = mappingOf(mappingOf(p.properties).initial_delta).number_of_instances;
      if (!isCount(n)) {
        this.add(
          'vnfd-structure',
          ['policies', name, 'properties'],
          `VduInitialDelta ${name} has initial_delta.number_of_instances ${String(n)}, not a whole number ≥ 0`,
          'write "initial_delta: {number_of_instances: 1}"',
        );
      }
      for (const t of targets) f.initialDeltas[t] = isCount(n) ? n : 0;
      this.policies.initialDeltaPolicies.push({ name, targets });
    }
    for (const [name, p] of byType(POLICY.vduScalingAspectDeltas)) {
      const props = mappingOf(p.properties);
      const deltas: Record<string, number> = {};
      for (const [deltaId, d] of entriesOf(props.deltas)) {
        const n = mappingOf(d).number_of_instances;
        if (isCount(n)) deltas[deltaId] = n;
        else
          this.add(
            'vnfd-structure',
            ['policies', name, 'properties', 'deltas', deltaId],
            `delta ${deltaId} of ${name} has number_of_instances ${String(n)}, not a whole number ≥ 0`,
            `write "${deltaId}: {number_of_instances: 1}"`,
          );
      }
      const targets = stringList(p.targets);
      const aspect = stringOf(props.aspect);
      this.policies.deltaPolicies.push({ name, aspect, deltas, targets });
      const target = aspect !== undefined ? f.aspects[aspect] : undefined;
      if (target) for (const t of targets) target.vduDeltas[t] = { ...(target.vduDeltas[t] ?? {}), ...deltas };
    }
    for (const [name, p] of byType(POLICY.instantiationLevels)) {
      const props = mappingOf(p.properties);
      this.policies.levelsPolicy = name;
      for (const [levelId, l] of entriesOf(props.levels)) {
        const level = mappingOf(l);
        const scaleInfo: InstantiationLevel['scaleInfo'] = {};
        for (const [aspectId, s] of entriesOf(level.scale_info)) {
          const sl = mappingOf(s).scale_level;
          scaleInfo[aspectId] = { scaleLevel: typeof sl === 'number' ? sl : Number.NaN };
        }
        f.instantiationLevels[levelId] = { id: levelId, description: stringOf(level.description), scaleInfo, vduInstances: {} };
      }
      f.defaultLevel = stringOf(props.default_level);
    }
    for (const [name, p] of byType(POLICY.vduInstantiationLevels)) {
      const levels: Record<string, number> = {};
      for (const [levelId, l] of entriesOf(mappingOf(p.properties).levels)) {
        const n = mappingOf(l).number_of_instances;
        if (isCount(n)) levels[levelId] = n;
        else
          this.add(
            'vnfd-structure',
            ['policies', name, 'properties', 'levels', levelId],
            `level ${levelId} of ${name} has number_of_instances ${String(n)}, not a whole number ≥ 0`,
            `write "${levelId}: {number_of_instances: 1}"`,
          );
      }
      const targets = stringList(p.targets);
      this.policies.vduLevelPolicies.push({ name, levels, targets });
      for (const [levelId, n] of Object.entries(levels)) {
        const level = f.instantiationLevels[levelId];
        if (level) for (const t of targets) level.vduInstances[t] = n;
      }
    }
    for (const [kind, base] of [
      ['affinity', POLICY.affinity],
      ['anti-affinity', POLICY.antiAffinity],
    ] as const) {
      for (const [name, p] of byType(base)) {
        const rule: AffinityRule = { policyName: name, kind, scope: stringOf(mappingOf(p.properties).scope), targets: stringList(p.targets) };
        f.affinityRules.push(rule);
      }
    }
  }

  readHooks(node: VnfNode): void {
    const lcm = mappingOf(mappingOf(node.template.interfaces).Vnflcm);
    const artifacts = mappingOf(node.template.artifacts);
    const nodeText = this.loader.text(node.file);
    const at = (...rest: string[]) => lineOf(nodeText, ['topology_template', 'node_templates', node.name, ...rest]);
    for (const hook of LCM_HOOKS) {
      const op = lcm[hook];
      if (op === undefined || op === null || (Array.isArray(op) && op.length === 0)) continue;
      const implRaw = isMapping(op) ? op.implementation : op;
      const impl = typeof implRaw === 'string' ? implRaw : stringOf(mappingOf(implRaw).primary);
      if (impl === undefined) {
        this.loader.add({
          code: 'hook-artifact-missing',
          file: node.file,
          line: at('interfaces', 'Vnflcm', hook),
          message: `hook ${hook} of ${node.name} has no implementation`,
          hint: `write "${hook}: {implementation: <artifact name>}" naming an entry of ${node.name}.artifacts, or "${hook}: []" for no hook`,
        });
        continue;
      }
      const hookImpl: HookImplementation = { implementation: impl };
      const artifact = artifacts[impl];
      if (!isMapping(artifact)) {
        this.loader.add({
          code: 'hook-artifact-missing',
          file: node.file,
          line: at('interfaces', 'Vnflcm', hook, 'implementation') ?? at('interfaces', 'Vnflcm', hook),
          message: `hook ${hook} names implementation ${impl}, but ${node.name} has no artifact of that name`,
          hint: `add "artifacts: {${impl}: {type: tosca.artifacts.Implementation.Python, file: Scripts/<driver>.py}}" to ${node.name}, or name an existing artifact${Object.keys(artifacts).length ? ` (${Object.keys(artifacts).join(', ')})` : ''}`,
        });
      } else {
        hookImpl.artifactType = stringOf(artifact.type);
        const fileRef = stringOf(artifact.file);
        const file = fileRef === undefined ? undefined : this.resolveArtifact(node.file, fileRef);
        if (file === undefined) {
          this.loader.add({
            code: 'hook-artifact-file-missing',
            file: node.file,
            line: at('artifacts', impl, 'file') ?? at('artifacts', impl),
            message:
              fileRef === undefined ? `artifact ${impl} (used by ${hook}) has no file` : `artifact ${impl} (used by ${hook}) names file ${fileRef}, which is not in the package`,
            hint: 'put the script in the package (e.g. Scripts/) and give its path relative to the package root or to this file; paths on a Tacker host (/usr/...) mean nothing to vnfm',
          });
        } else {
          hookImpl.artifactFile = file;
        }
      }
      this.flavour.hooks[hook as LcmHook] = hookImpl;
    }
  }

  /** An artifact path: relative to the defining file (TOSCA), else to the package root (as Tacker's samples also write). */
  private resolveArtifact(from: string, ref: string): string | undefined {
    for (const candidate of [resolveMember(from, ref), resolveMember('', ref)]) {
      if (candidate !== undefined && this.loader.has(candidate)) return candidate;
    }
    return undefined;
  }

  /** After the nodes, groups and policies: every reference among them must land. */
  checkReferences(): void {
    checkFlavourReferences(
      {
        add: (code, path, message, hint) => this.add(code, path, message, hint),
        warn: (code, path, message, hint) => this.loader.add({ severity: 'warning', code, file: this.source.path, line: this.line(path), message, hint }),
      },
      this.flavour,
      this.policies,
    );
  }
}

export function readCp(name: string, type: string, tmpl: Mapping): ConnectionPoint {
  const props = mappingOf(tmpl.properties);
  let vdu: string | undefined;
  let virtualLink: string | undefined;
  for (const [req, target] of entriesOf(tmpl.requirements)) {
    const t = typeof target === 'string' ? target : stringOf(mappingOf(target).node);
    if (req === 'virtual_binding') vdu = t;
    else if (req === 'virtual_link' || req === 'internal_virtual_link') virtualLink = t;
  }
  return {
    nodeName: name,
    type,
    vdu,
    virtualLink,
    order: typeof props.order === 'number' ? props.order : undefined,
    layerProtocols: stringList(props.layer_protocols),
    ...(stringOf(props.vnic_type) !== undefined ? { vnicType: stringOf(props.vnic_type) } : {}),
  };
}

export function readVirtualLink(name: string, type: string, tmpl: Mapping): VirtualLink {
  const props = mappingOf(tmpl.properties);
  const protocolData = mappingOf(props.vl_profile).virtual_link_protocol_data;
  const bitrate = mappingOf(mappingOf(props.vl_profile).max_bitrate_requirements);
  const rate = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const maxBitrate = { ...(rate(bitrate.root) !== undefined ? { root: rate(bitrate.root) } : {}), ...(rate(bitrate.leaf) !== undefined ? { leaf: rate(bitrate.leaf) } : {}) };
  return {
    nodeName: name,
    type,
    description: stringOf(props.description),
    layerProtocols: stringList(mappingOf(props.connectivity_type).layer_protocols),
    l3: (Array.isArray(protocolData) ? protocolData : [])
      .map((d) => mappingOf(mappingOf(d).l3_protocol_data))
      .filter((l3) => Object.keys(l3).length > 0)
      .map((l3) => ({ ipVersion: stringOf(l3.ip_version), cidr: stringOf(l3.cidr), name: stringOf(l3.name) })),
    ...(Object.keys(maxBitrate).length ? { maxBitrate } : {}),
  };
}

function readVirtualCompute(tmpl: Mapping): VirtualCompute | undefined {
  const vc = mappingOf(mappingOf(mappingOf(tmpl.capabilities).virtual_compute).properties);
  if (Object.keys(vc).length === 0) return undefined;
  let flavorName: string | undefined;
  for (const [, cap] of entriesOf(vc.requested_additional_capabilities)) {
    flavorName ??= stringOf(mappingOf(cap).requested_additional_capability_name);
  }
  const cpus = mappingOf(vc.virtual_cpu).num_virtual_cpu;
  const storage = Array.isArray(vc.virtual_local_storage) ? vc.virtual_local_storage : [];
  return {
    flavorName,
    numVirtualCpu: typeof cpus === 'number' ? cpus : undefined,
    virtualMemSize: stringOf(mappingOf(vc.virtual_memory).virtual_mem_size),
    localStorageSizes: storage.map((s) => stringOf(mappingOf(s).size_of_storage)).filter((s): s is string => s !== undefined),
  };
}
