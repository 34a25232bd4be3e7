/**
 * Reads a package's VNFD: the Entry-Definitions file and everything it
 * imports, into the typed model, checking every reference on the way.
 * Problems are findings (all of them, not the first), each naming the file,
 * the line where it can, and what to change; a model is still returned when
 * the VNF node was found, so `vnfpkg-show` can describe a package that has
 * warnings.
 */
import { posix } from 'node:path';
import type { Finding, PackageFiles } from '../model/package-files.js';
import { isMapping } from '../yaml.js';
import type {
  AffinityRule,
  ConnectionPoint,
  Flavour,
  HookImplementation,
  InstantiationLevel,
  LcmHook,
  ScalingAspect,
  SwImage,
  Vdu,
  VirtualCompute,
  VirtualLink,
  VirtualStorage,
  Vnfd,
  VnfdImport,
} from '../model/vnfd.js';
import { LCM_HOOKS } from '../model/vnfd.js';
import {
  GROUP_PLACEMENT,
  isSol001TypeFile,
  NODE_CP,
  NODE_VDU_COMPUTE,
  NODE_VDU_STORAGE,
  NODE_VIRTUAL_LINK,
  NODE_VNF,
  POLICY,
  SOL001_VERSION,
  TypeTable,
  VNF_REQUIRED_PROPERTIES,
} from './sol001-types.js';
import { lineOf, parseYaml } from './yaml-source.js';

/** Most definitions files one VNFD may pull in through imports. */
export const MAX_DEFINITION_FILES = 64;
/** Deepest chain of imports followed. */
export const MAX_IMPORT_DEPTH = 16;

type Mapping = Record<string, unknown>;

interface SourceFile {
  path: string;
  text: string;
  doc: Mapping;
}

const TYPE_SECTIONS = [
  'node_types',
  'policy_types',
  'group_types',
  'data_types',
  'capability_types',
  'interface_types',
  'artifact_types',
  'relationship_types',
] as const;

export interface LoadVnfdResult {
  vnfd?: Vnfd;
  findings: Finding[];
}

/** Reads the VNFD whose top file is `entryDefinitions` (a package path, as TOSCA.meta gives it). */
export async function loadVnfd(files: PackageFiles, entryDefinitions: string): Promise<LoadVnfdResult> {
  return new VnfdLoader(files).load(entryDefinitions);
}

class VnfdLoader {
  private readonly findings: Finding[] = [];
  private readonly sources = new Map<string, SourceFile>();
  private readonly imports: VnfdImport[] = [];
  private readonly types = new TypeTable();
  /** name → { file, definition } for the types the package defines, for property defaults. */
  private readonly nodeTypeDefs = new Map<string, { file: string; def: Mapping }>();

  constructor(private readonly pkg: PackageFiles) {}

  async load(entry: string): Promise<LoadVnfdResult> {
    if (!this.pkg.has(entry)) {
      this.add({
        code: 'entry-definitions-missing',
        file: entry,
        message: `the VNFD top file ${entry} is not in the package`,
        hint: 'set Entry-Definitions in TOSCA-Metadata/TOSCA.meta to the path of the top VNFD, e.g. Definitions/<name>_top.vnfd.yaml',
      });
      return { findings: this.findings };
    }
    await this.readAll(entry);
    const top = this.sources.get(entry);
    if (!top) return { findings: this.findings };
    this.registerTypes();
    this.checkNodeTemplateTypes();

    const vnfNode = this.findVnfNode(entry);
    if (!vnfNode) {
      this.add({
        code: 'vnf-node-missing',
        file: entry,
        line: lineOf(top.text, ['topology_template', 'node_templates']),
        message: 'no node template derived from tosca.nodes.nfv.VNF was found in the VNFD',
        hint: 'add a VNF node (e.g. "VNF: {type: company.provider.VNF}") whose node type derives from tosca.nodes.nfv.VNF in node_types, and import the file that defines that type',
      });
    }
    const flavours = this.readFlavours(vnfNode);
    if (!vnfNode) return { findings: this.findings };

    const value = (prop: string) => this.vnfProperty(vnfNode, prop);
    for (const prop of VNF_REQUIRED_PROPERTIES) {
      const v = value(prop);
      if (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)) {
        this.add({
          code: 'vnf-property-missing',
          file: vnfNode.file,
          line: lineOf(this.text(vnfNode.file), ['topology_template', 'node_templates', vnfNode.name]),
          message: `the VNF node ${vnfNode.name} has no ${prop}`,
          hint: `set properties.${prop} on the VNF node, or give the property a default in node type ${vnfNode.type}`,
        });
      }
    }
    const vnfmInfo = value('vnfm_info');
    const vnfd: Vnfd = {
      id: stringOf(value('descriptor_id')) ?? '',
      provider: stringOf(value('provider')) ?? '',
      productName: stringOf(value('product_name')) ?? '',
      softwareVersion: stringOf(value('software_version')) ?? '',
      descriptorVersion: stringOf(value('descriptor_version')) ?? '',
      vnfmInfo: Array.isArray(vnfmInfo) ? vnfmInfo.map(String) : typeof vnfmInfo === 'string' ? [vnfmInfo] : [],
      vnfNodeType: vnfNode.type,
      flavours,
      topFile: entry,
      imports: this.imports,
      files: [...this.sources.keys()],
    };
    return { vnfd, findings: this.findings };
  }

  // ---- reading files and imports -------------------------------------------------------------

  private async readAll(entry: string): Promise<void> {
    const queue: Array<{ path: string; depth: number }> = [{ path: entry, depth: 0 }];
    const seen = new Set<string>([entry]);
    let limitReported = false;
    while (queue.length > 0) {
      const { path, depth } = queue.shift()!;
      const source = await this.readSource(path);
      if (!source) continue;
      for (const { ref, line } of importRefs(source)) {
        const imp: VnfdImport = { from: path, ref };
        this.imports.push(imp);
        const target = this.resolveImport(source, ref, line, imp);
        if (!target || seen.has(target)) continue;
        if (depth + 1 > MAX_IMPORT_DEPTH || seen.size >= MAX_DEFINITION_FILES) {
          if (!limitReported) {
            limitReported = true;
            this.add({
              code: 'import-limit',
              file: path,
              line,
              message: `imports go deeper than ${MAX_IMPORT_DEPTH} levels or reach more than ${MAX_DEFINITION_FILES} files; ${ref} and any further imports were not read`,
              hint: 'flatten the import chain: the top VNFD usually imports the types file and the flavour files directly',
            });
          }
          continue;
        }
        seen.add(target);
        queue.push({ path: target, depth: depth + 1 });
      }
    }
  }

  private async readSource(path: string): Promise<SourceFile | undefined> {
    let text: string;
    try {
      text = await this.pkg.readText(path);
    } catch (err) {
      this.add({
        code: 'definitions-unreadable',
        file: path,
        message: `cannot be read: ${err instanceof Error ? err.message : String(err)}`,
        hint: 'VNFD files are small YAML text files; check that this member is the descriptor you meant',
      });
      return undefined;
    }
    const parsed = parseYaml(text, path);
    if (!parsed.ok) {
      this.findings.push(parsed.finding);
      return undefined;
    }
    if (!isMapping(parsed.doc)) {
      this.add({
        code: 'vnfd-structure',
        file: path,
        line: 1,
        message: 'is not a TOSCA service template (expected a mapping with tosca_definitions_version)',
        hint: 'start the file with "tosca_definitions_version: tosca_simple_yaml_1_2"',
      });
      return undefined;
    }
    const doc = parsed.doc;
    if (typeof doc.tosca_definitions_version !== 'string') {
      this.add({
        code: 'tosca-version-missing',
        file: path,
        line: 1,
        message: 'has no tosca_definitions_version',
        hint: 'add "tosca_definitions_version: tosca_simple_yaml_1_2" (the version SOL001 and Tacker use)',
      });
    }
    const source = { path, text, doc };
    this.sources.set(path, source);
    return source;
  }

  /** Returns the package path to read next, or undefined when there is nothing (more) to read. */
  private resolveImport(source: SourceFile, ref: string, line: number | undefined, imp: VnfdImport): string | undefined {
    const isUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(ref);
    const local = isUrl ? undefined : resolveMember(source.path, ref);
    if (local && this.pkg.has(local)) {
      imp.resolved = local;
      return local;
    }
    if (isSol001TypeFile(ref)) {
      imp.builtin = true;
      return undefined;
    }
    if (!isUrl && local === undefined) {
      this.add({
        code: 'import-escapes-package',
        file: source.path,
        line,
        message: `import ${ref} points outside the package`,
        hint: 'imports are resolved relative to the importing file and must stay inside the package; copy the file into Definitions/ and import it by its relative path',
      });
      return undefined;
    }
    this.add({
      code: 'import-unresolved',
      file: source.path,
      line,
      message: isUrl
        ? `import ${ref} is a URL, and vnfm never fetches anything while reading a package`
        : `import ${ref} resolves to ${local}, which is not in the package`,
      hint: isUrl
        ? `ship the file inside the package and import it by relative path (only the ETSI SOL001 type files, v${SOL001_VERSION} and later, are supplied by vnfm)`
        : 'add the file to the package, or fix the path: imports are relative to the importing file',
    });
    return undefined;
  }

  // ---- types ------------------------------------------------------------------------------

  private registerTypes(): void {
    for (const source of this.sources.values()) {
      for (const section of TYPE_SECTIONS) {
        const defs = source.doc[section];
        if (!isMapping(defs)) continue;
        for (const [name, def] of Object.entries(defs)) {
          const parent = isMapping(def) && typeof def.derived_from === 'string' ? def.derived_from : undefined;
          this.types.define(name, parent);
          if (section === 'node_types' && isMapping(def)) this.nodeTypeDefs.set(name, { file: source.path, def });
        }
      }
    }
  }

  private checkNodeTemplateTypes(): void {
    for (const source of this.sources.values()) {
      const tt = source.doc.topology_template;
      if (!isMapping(tt)) continue;
      for (const [section, kind] of [
        ['node_templates', 'node'],
        ['policies', 'policy'],
        ['groups', 'group'],
      ] as const) {
        for (const [name, tmpl] of entriesOf(tt[section])) {
          const type = isMapping(tmpl) ? tmpl.type : undefined;
          const path = ['topology_template', section, name, 'type'];
          if (typeof type !== 'string') {
            this.add({
              code: 'vnfd-structure',
              file: source.path,
              line: lineOf(source.text, path),
              message: `${kind} template ${name} has no type`,
              hint: `give ${name} a "type:" naming a SOL001 type or one defined in the package`,
            });
          } else if (!this.types.has(type)) {
            // Tacker's TOSCA parser refuses a template of a type it cannot resolve, referenced
            // by a policy or not, so vnfm does too; a tosca.* name is most likely a misspelt SOL001 type.
            const standard = type.startsWith('tosca.');
            this.add({
              code: 'type-unknown',
              file: source.path,
              line: lineOf(source.text, path),
              message: standard
                ? `${kind} template ${name} has type ${type}, which is neither a TOSCA or ETSI SOL001 type nor defined in the package's imports`
                : `${kind} template ${name} has type ${type}, which is neither a SOL001 type nor defined in the package's imports`,
              hint: standard
                ? `check the spelling against ETSI SOL001 (e.g. ${kind === 'node' ? 'tosca.nodes.nfv.Vdu.Compute' : kind === 'policy' ? 'tosca.policies.nfv.ScalingAspects' : 'tosca.groups.nfv.PlacementGroup'}), or import the definitions file that declares the type`
                : 'check the spelling, or import the definitions file that declares the type',
            });
          }
        }
      }
    }
  }

  // ---- the VNF node -------------------------------------------------------------------------

  private findVnfNode(entry: string): VnfNode | undefined {
    const ordered = [entry, ...[...this.sources.keys()].filter((p) => p !== entry)];
    for (const path of ordered) {
      const tt = this.sources.get(path)?.doc.topology_template;
      if (!isMapping(tt)) continue;
      for (const [name, tmpl] of entriesOf(tt.node_templates)) {
        if (isMapping(tmpl) && typeof tmpl.type === 'string' && this.types.isA(tmpl.type, NODE_VNF)) {
          return { file: path, name, type: tmpl.type, template: tmpl, inputs: mappingOf(tt.inputs) };
        }
      }
    }
    return undefined;
  }

  /** The definition of `prop` on the VNF's node type or the nearest package-defined ancestor. */
  private propertyDef(type: string, prop: string): Mapping | undefined {
    let current: string | undefined = type;
    for (let hops = 0; current !== undefined && hops < 64; hops++) {
      const def = this.nodeTypeDefs.get(current)?.def;
      const p = def && isMapping(def.properties) ? def.properties[prop] : undefined;
      if (isMapping(p)) return p;
      current = this.types.parentOf(current);
    }
    return undefined;
  }

  /** The VNF node's value for `prop`: written, then via get_input's default, then the type's default or single allowed value. */
  private vnfProperty(node: VnfNode, prop: string): unknown {
    let v = mappingOf(node.template.properties)[prop];
    if (isMapping(v) && typeof v.get_input === 'string') v = mappingOf(node.inputs[v.get_input]).default;
    if (v !== undefined) return v;
    const def = this.propertyDef(node.type, prop);
    if (!def) return undefined;
    if (def.default !== undefined) return def.default;
    const allowed = allowedValues(def);
    return allowed?.length === 1 ? allowed[0] : undefined;
  }

  // ---- flavours -----------------------------------------------------------------------------

  private readFlavours(vnfNode: VnfNode | undefined): Record<string, Flavour> {
    const flavours: Record<string, Flavour> = {};
    const allowed = vnfNode ? allowedValues(this.propertyDef(vnfNode.type, 'flavour_id')) : undefined;
    for (const source of this.sources.values()) {
      const tt = source.doc.topology_template;
      if (!isMapping(tt) || !isMapping(tt.substitution_mappings)) continue;
      const sm = tt.substitution_mappings;
      const smPath = ['topology_template', 'substitution_mappings'];
      if (typeof sm.node_type !== 'string' || !this.types.isA(sm.node_type, NODE_VNF)) {
        this.add({
          code: 'flavour-node-type',
          file: source.path,
          line: lineOf(source.text, [...smPath, 'node_type']) ?? lineOf(source.text, smPath),
          message: `substitution_mappings.node_type ${String(sm.node_type ?? '(missing)')} is not a node type derived from tosca.nodes.nfv.VNF`,
          hint: vnfNode ? `set node_type: ${vnfNode.type}` : 'set node_type to the VNF node type defined in the types file',
        });
      }
      const localVnf = this.vnfTemplateIn(source);
      const smId = mappingOf(sm.properties).flavour_id;
      const localId = localVnf ? mappingOf(localVnf.template.properties).flavour_id : undefined;
      const id = typeof smId === 'string' ? smId : typeof localId === 'string' ? localId : undefined;
      const idLine = lineOf(source.text, [...smPath, 'properties', 'flavour_id']) ?? lineOf(source.text, smPath);
      if (id === undefined) {
        this.add({
          code: 'flavour-id-missing',
          file: source.path,
          line: idLine,
          message: 'substitution_mappings has no properties.flavour_id, so this deployment flavour has no id',
          hint: 'add "properties: {flavour_id: simple}" (or the flavour\'s id) under substitution_mappings',
        });
        continue;
      }
      if (typeof smId === 'string' && typeof localId === 'string' && localId !== smId) {
        this.add({
          code: 'flavour-id-mismatch',
          file: source.path,
          line: lineOf(source.text, ['topology_template', 'node_templates', localVnf!.name, 'properties', 'flavour_id']),
          message: `the VNF node says flavour_id ${localId} but substitution_mappings says ${smId}`,
          hint: 'use the same flavour_id in both places, or drop it from the VNF node in the flavour file',
        });
      }
      if (allowed && !allowed.includes(id)) {
        this.add({
          code: 'flavour-id-mismatch',
          file: source.path,
          line: idLine,
          message: `flavour ${id} is not one of the flavour_id values node type ${vnfNode!.type} allows (${allowed.join(', ')})`,
          hint: `add ${id} to the flavour_id valid_values in ${this.nodeTypeDefs.get(vnfNode!.type)?.file ?? 'the types file'}, or fix the flavour_id here`,
        });
      }
      if (flavours[id]) {
        this.add({
          code: 'flavour-id-duplicate',
          file: source.path,
          line: idLine,
          message: `flavour ${id} is also defined in ${flavours[id]!.file}`,
          hint: 'give each deployment flavour file its own flavour_id',
        });
        continue;
      }
      flavours[id] = this.readFlavour(source, id, localVnf, vnfNode);
    }

    // A single-file VNFD may omit substitution_mappings and carry its topology beside the VNF node.
    if (Object.keys(flavours).length === 0 && vnfNode) {
      const id = mappingOf(vnfNode.template.properties).flavour_id;
      const source = this.sources.get(vnfNode.file)!;
      const nodes = entriesOf(mappingOf(source.doc.topology_template).node_templates);
      if (typeof id === 'string' && nodes.length > 1) flavours[id] = this.readFlavour(source, id, vnfNode, vnfNode);
    }

    if (Object.keys(flavours).length === 0) {
      const top = this.sources.values().next().value as SourceFile | undefined;
      this.add({
        code: 'flavour-missing',
        file: top?.path,
        message: 'the VNFD defines no deployment flavour',
        hint: 'add a flavour file (e.g. Definitions/<name>_df_simple.yaml) whose topology_template has substitution_mappings with node_type and properties.flavour_id, and import it from the top VNFD',
      });
    } else if (vnfNode) {
      const topId = mappingOf(vnfNode.template.properties).flavour_id;
      if (typeof topId === 'string' && !flavours[topId]) {
        this.add({
          code: 'flavour-id-mismatch',
          file: vnfNode.file,
          line: lineOf(this.text(vnfNode.file), ['topology_template', 'node_templates', vnfNode.name, 'properties', 'flavour_id']),
          message: `the VNF node names flavour_id ${topId}, but the flavours defined are ${Object.keys(flavours).join(', ')}`,
          hint: 'use "flavour_id: {get_input: selected_flavour}" in the top VNFD, or one of the defined flavour ids',
        });
      }
    }
    return flavours;
  }

  private vnfTemplateIn(source: SourceFile): VnfNode | undefined {
    const tt = mappingOf(source.doc.topology_template);
    for (const [name, tmpl] of entriesOf(tt.node_templates)) {
      if (isMapping(tmpl) && typeof tmpl.type === 'string' && this.types.isA(tmpl.type, NODE_VNF)) {
        return { file: source.path, name, type: tmpl.type, template: tmpl, inputs: mappingOf(tt.inputs) };
      }
    }
    return undefined;
  }

  private readFlavour(source: SourceFile, id: string, localVnf: VnfNode | undefined, vnfNode: VnfNode | undefined): Flavour {
    const tt = mappingOf(source.doc.topology_template);
    const description = localVnf ? stringOf(mappingOf(localVnf.template.properties).flavour_description) : undefined;
    const flavour: Flavour = {
      id,
      description: description ?? (vnfNode ? stringOf(this.vnfProperty(vnfNode, 'flavour_description')) : undefined),
      file: source.path,
      vdus: {},
      storages: {},
      cps: {},
      virtualLinks: {},
      aspects: {},
      initialDeltas: {},
      instantiationLevels: {},
      affinityRules: [],
      placementGroups: {},
      hooks: {},
    };
    const ctx = new FlavourContext(this, source, flavour);
    for (const [name, tmpl] of entriesOf(tt.node_templates)) {
      if (!isMapping(tmpl) || typeof tmpl.type !== 'string') continue;
      const type = tmpl.type;
      if (this.types.isA(type, NODE_VDU_COMPUTE)) flavour.vdus[name] = ctx.readVdu(name, type, tmpl);
      else if (this.types.isAnyOf(type, NODE_VDU_STORAGE)) flavour.storages[name] = ctx.readStorage(name, type, tmpl);
      else if (this.types.isA(type, NODE_CP)) flavour.cps[name] = readCp(name, type, tmpl);
      else if (this.types.isA(type, NODE_VIRTUAL_LINK)) flavour.virtualLinks[name] = readVirtualLink(name, type, tmpl);
    }
    for (const [name, group] of entriesOf(tt.groups)) {
      if (isMapping(group) && this.types.isA(stringOf(group.type), GROUP_PLACEMENT)) {
        flavour.placementGroups[name] = stringList(group.members);
      }
    }
    ctx.readPolicies(entriesOf(tt.policies));
    // Hooks live on the flavour's VNF node, as Tacker reads them; a single-file VNFD has just the one.
    const hookNode = localVnf ?? (vnfNode && vnfNode.file === source.path ? vnfNode : undefined);
    const hookSource = hookNode && this.hasVnflcm(hookNode) ? hookNode : vnfNode && this.hasVnflcm(vnfNode) ? vnfNode : undefined;
    if (hookSource) ctx.readHooks(hookSource);
    ctx.checkReferences();
    return flavour;
  }

  private hasVnflcm(node: VnfNode): boolean {
    return isMapping(mappingOf(node.template.interfaces).Vnflcm);
  }

  // ---- helpers shared with FlavourContext ---------------------------------------------------------

  add(f: Omit<Finding, 'severity'> & { severity?: Finding['severity'] }): void {
    this.findings.push({ severity: 'error', ...f });
  }

  text(path: string): string {
    return this.sources.get(path)?.text ?? '';
  }

  isA(type: string | undefined, base: string): boolean {
    return this.types.isA(type, base);
  }

  has(path: string): boolean {
    return this.pkg.has(path);
  }
}

interface VnfNode {
  file: string;
  name: string;
  type: string;
  template: Mapping;
  inputs: Mapping;
}

/** Reads one flavour's VDUs and policies and checks that every reference among them lands. */
class FlavourContext {
  private readonly nodes: Mapping;
  /** Policy names by kind, for locating lines. */
  private readonly aspectPolicy = new Map<string, string>();
  private readonly deltaPolicies: Array<{ name: string; aspect?: string; deltas: Record<string, number>; targets: string[] }> = [];
  private readonly vduLevelPolicies: Array<{ name: string; levels: Record<string, number>; targets: string[] }> = [];
  private readonly initialDeltaPolicies: Array<{ name: string; targets: string[] }> = [];
  private levelsPolicy?: string;

  constructor(
    private readonly loader: VnfdLoader,
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
      this.add('vdu-name-missing', ['node_templates', name], `VDU ${name} has no properties.name`, `add "name:" under ${name}.properties; for a CNF it must equal the metadata.name of the Kubernetes workload that realises the VDU`);
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
        this.add('requirement-target-missing', ['node_templates', name, 'requirements', 'virtual_storage'], `VDU ${name} requires virtual_storage ${storage}, which is not a node template of flavour ${this.flavour.id}`, `define ${storage} (a tosca.nodes.nfv.Vdu.VirtualBlockStorage) in this file, or fix the name`);
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

  private readSwImage(node: string, tmpl: Mapping): SwImage | undefined {
    const data = mappingOf(mappingOf(tmpl.properties).sw_image_data);
    const artifact = mappingOf(mappingOf(tmpl.artifacts).sw_image);
    const fileRef = stringOf(artifact.file);
    let file: string | undefined;
    if (fileRef !== undefined && !/^[a-z][a-z0-9+.-]*:\/\//i.test(fileRef)) {
      file = this.resolveArtifact(fileRef);
      if (file === undefined) {
        this.add('artifact-file-missing', ['node_templates', node, 'artifacts', 'sw_image', 'file'], `the sw_image artifact of ${node} names ${fileRef}, which is not in the package`, 'add the image under Files/images/ and give its path relative to this file (e.g. ../Files/images/<image>) or to the package root; or drop the artifact to use an image already in the VIM');
      }
    }
    if (Object.keys(data).length === 0) return undefined;
    const checksum = mappingOf(data.checksum);
    return {
      name: stringOf(data.name) ?? node,
      version: stringOf(data.version),
      checksum:
        typeof checksum.algorithm === 'string' && typeof checksum.hash === 'string'
          ? { algorithm: checksum.algorithm, hash: checksum.hash }
          : undefined,
      containerFormat: stringOf(data.container_format),
      diskFormat: stringOf(data.disk_format),
      minDisk: stringOf(data.min_disk),
      minRam: stringOf(data.min_ram),
      size: stringOf(data.size),
      file,
    };
  }

  /** An artifact path: relative to the defining file (TOSCA), else to the package root (as Tacker's samples also write). */
  private resolveArtifact(ref: string): string | undefined {
    for (const candidate of [resolveMember(this.source.path, ref), resolveMember('', ref)]) {
      if (candidate !== undefined && this.loader.has(candidate)) return candidate;
    }
    return undefined;
  }

  readPolicies(policies: Array<[string, unknown]>): void {
    const byType = (base: string) =>
      policies.filter(([, p]) => isMapping(p) && this.loader.isA(stringOf(p.type), base)) as Array<[string, Mapping]>;
    const f = this.flavour;

    for (const [name, p] of byType(POLICY.scalingAspects)) {
      for (const [aspectId, a] of entriesOf(mappingOf(p.properties).aspects)) {
        const aspect = mappingOf(a);
        const max = aspect.max_scale_level;
        if (!isCount(max)) {
          this.add('aspect-invalid', ['policies', name, 'properties', 'aspects', aspectId], `scaling aspect ${aspectId} has max_scale_level ${String(max)}, not a whole number ≥ 0`, 'set max_scale_level to the number of steps the aspect may scale out, e.g. 2');
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
        this.add('vnfd-structure', ['policies', name, 'properties'], `VduInitialDelta ${name} has initial_delta.number_of_instances ${String(n)}, not a whole number ≥ 0`, 'write "initial_delta: {number_of_instances: 1}"');
      }
      for (const t of targets) f.initialDeltas[t] = isCount(n) ? n : 0;
      this.initialDeltaPolicies.push({ name, targets });
    }
    for (const [name, p] of byType(POLICY.vduScalingAspectDeltas)) {
      const props = mappingOf(p.properties);
      const deltas: Record<string, number> = {};
      for (const [deltaId, d] of entriesOf(props.deltas)) {
        const n = mappingOf(d).number_of_instances;
        if (isCount(n)) deltas[deltaId] = n;
        else this.add('vnfd-structure', ['policies', name, 'properties', 'deltas', deltaId], `delta ${deltaId} of ${name} has number_of_instances ${String(n)}, not a whole number ≥ 0`, `write "${deltaId}: {number_of_instances: 1}"`);
      }
      const targets = stringList(p.targets);
      const aspect = stringOf(props.aspect);
      this.deltaPolicies.push({ name, aspect, deltas, targets });
      const target = aspect !== undefined ? f.aspects[aspect] : undefined;
      if (target) for (const t of targets) target.vduDeltas[t] = { ...(target.vduDeltas[t] ?? {}), ...deltas };
    }
    for (const [name, p] of byType(POLICY.instantiationLevels)) {
      const props = mappingOf(p.properties);
      this.levelsPolicy = name;
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
        else this.add('vnfd-structure', ['policies', name, 'properties', 'levels', levelId], `level ${levelId} of ${name} has number_of_instances ${String(n)}, not a whole number ≥ 0`, `write "${levelId}: {number_of_instances: 1}"`);
      }
      const targets = stringList(p.targets);
      this.vduLevelPolicies.push({ name, levels, targets });
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
        const file = fileRef === undefined ? undefined : this.resolveArtifactFrom(node.file, fileRef);
        if (file === undefined) {
          this.loader.add({
            code: 'hook-artifact-file-missing',
            file: node.file,
            line: at('artifacts', impl, 'file') ?? at('artifacts', impl),
            message:
              fileRef === undefined
                ? `artifact ${impl} (used by ${hook}) has no file`
                : `artifact ${impl} (used by ${hook}) names file ${fileRef}, which is not in the package`,
            hint: 'put the script in the package (e.g. Scripts/) and give its path relative to the package root or to this file; paths on a Tacker host (/usr/...) mean nothing to vnfm',
          });
        } else {
          hookImpl.artifactFile = file;
        }
      }
      this.flavour.hooks[hook as LcmHook] = hookImpl;
    }
  }

  private resolveArtifactFrom(from: string, ref: string): string | undefined {
    for (const candidate of [resolveMember(from, ref), resolveMember('', ref)]) {
      if (candidate !== undefined && this.loader.has(candidate)) return candidate;
    }
    return undefined;
  }

  checkReferences(): void {
    const f = this.flavour;
    const vduList = Object.keys(f.vdus).join(', ') || 'none';
    const checkVduTargets = (policy: string, targets: string[]) => {
      for (const t of targets) {
        if (!f.vdus[t]) {
          this.add('policy-target-missing', ['policies', policy, 'targets'], `policy ${policy} targets ${t}, which is not a VDU of flavour ${f.id}`, `target a tosca.nodes.nfv.Vdu.Compute node of this flavour (${vduList})`);
        }
      }
    };
    for (const p of this.initialDeltaPolicies) checkVduTargets(p.name, p.targets);
    for (const p of this.deltaPolicies) checkVduTargets(p.name, p.targets);
    for (const p of this.vduLevelPolicies) checkVduTargets(p.name, p.targets);

    const placeable = (t: string) => Boolean(f.vdus[t] || f.virtualLinks[t] || f.placementGroups[t]);
    for (const rule of f.affinityRules) {
      for (const t of rule.targets) {
        if (!placeable(t)) {
          this.add('policy-target-missing', ['policies', rule.policyName, 'targets'], `${rule.kind} rule ${rule.policyName} targets ${t}, which is not a VDU, virtual link or placement group of flavour ${f.id}`, `target one of: ${vduList}`);
        }
      }
    }
    for (const [group, members] of Object.entries(f.placementGroups)) {
      for (const m of members) {
        if (!f.vdus[m] && !f.virtualLinks[m]) {
          this.add('group-member-missing', ['groups', group, 'members'], `placement group ${group} lists ${m}, which is not a VDU or virtual link of flavour ${f.id}`, `list VDUs (${vduList}) or virtual links only`);
        }
      }
    }

    const aspectList = Object.keys(f.aspects).join(', ') || 'none';
    for (const p of this.deltaPolicies) {
      const aspect = p.aspect === undefined ? undefined : f.aspects[p.aspect];
      if (!aspect) {
        this.add('aspect-missing', ['policies', p.name, 'properties', 'aspect'], `VduScalingAspectDeltas ${p.name} is for aspect ${p.aspect ?? '(none given)'}, which no ScalingAspects policy of flavour ${f.id} defines`, `name one of the aspects (${aspectList}), or add the aspect to the ScalingAspects policy`);
        continue;
      }
      for (const deltaId of Object.keys(p.deltas)) {
        if (!aspect.stepDeltas.includes(deltaId)) {
          this.add('delta-unknown', ['policies', p.name, 'properties', 'deltas', deltaId], `delta ${deltaId} of ${p.name} is not a step delta of aspect ${aspect.id} (step_deltas: ${aspect.stepDeltas.join(', ') || 'none'})`, `add ${deltaId} to step_deltas of ${aspect.id}, or rename the delta`);
        }
      }
      for (const step of aspect.stepDeltas) {
        if (!(step in p.deltas)) {
          this.add('delta-missing', ['policies', p.name, 'properties', 'deltas'], `aspect ${aspect.id} steps by delta ${step}, but ${p.name} gives no number_of_instances for it`, `add "${step}: {number_of_instances: 1}" under deltas of ${p.name}`);
        }
      }
    }

    for (const level of Object.values(f.instantiationLevels)) {
      for (const [aspectId, { scaleLevel }] of Object.entries(level.scaleInfo)) {
        const path = ['policies', this.levelsPolicy ?? '', 'properties', 'levels', level.id, 'scale_info', aspectId];
        const aspect = f.aspects[aspectId];
        if (!aspect) {
          this.add('aspect-missing', path, `instantiation level ${level.id} scales aspect ${aspectId}, which no ScalingAspects policy of flavour ${f.id} defines`, `use one of the aspects (${aspectList})`);
        } else if (!Number.isInteger(scaleLevel) || scaleLevel < 0 || scaleLevel > aspect.maxScaleLevel) {
          this.add('scale-level-out-of-range', [...path, 'scale_level'], `instantiation level ${level.id} puts aspect ${aspectId} at scale level ${String(scaleLevel)}, outside 0..${aspect.maxScaleLevel} (max_scale_level)`, `use a scale_level between 0 and ${aspect.maxScaleLevel}, or raise max_scale_level of ${aspectId}`);
        }
      }
    }
    const levelIds = Object.keys(f.instantiationLevels);
    if (f.defaultLevel !== undefined && !f.instantiationLevels[f.defaultLevel]) {
      this.add('default-level-missing', ['policies', this.levelsPolicy ?? '', 'properties', 'default_level'], `default_level ${f.defaultLevel} is not one of the instantiation levels (${levelIds.join(', ') || 'none'})`, 'name one of the levels defined under levels');
    } else if (f.defaultLevel === undefined && levelIds.length > 1) {
      this.loader.add({
        severity: 'warning',
        code: 'default-level-missing',
        file: this.source.path,
        line: this.line(['policies', this.levelsPolicy ?? '', 'properties']),
        message: `flavour ${f.id} has ${levelIds.length} instantiation levels and no default_level`,
        hint: 'add default_level naming the level an instantiate request without instantiationLevelId gets',
      });
    }
    for (const p of this.vduLevelPolicies) {
      for (const [levelId, n] of Object.entries(p.levels)) {
        if (this.levelsPolicy !== undefined && !f.instantiationLevels[levelId]) {
          this.add('level-missing', ['policies', p.name, 'properties', 'levels', levelId], `VduInstantiationLevels ${p.name} sets level ${levelId}, which InstantiationLevels does not define`, `use one of the levels (${levelIds.join(', ')})`);
        }
        for (const t of p.targets) {
          const vdu = f.vdus[t];
          if (vdu && (n < vdu.vduProfile.minNumberOfInstances || n > vdu.vduProfile.maxNumberOfInstances)) {
            this.add('level-instances-out-of-range', ['policies', p.name, 'properties', 'levels', levelId, 'number_of_instances'], `level ${levelId} gives ${t} ${n} instances, outside its vdu_profile ${vdu.vduProfile.minNumberOfInstances}..${vdu.vduProfile.maxNumberOfInstances}`, `use a number between ${vdu.vduProfile.minNumberOfInstances} and ${vdu.vduProfile.maxNumberOfInstances}, or widen the vdu_profile of ${t}`);
          }
        }
      }
    }
    for (const p of this.initialDeltaPolicies) {
      for (const t of p.targets) {
        const vdu = f.vdus[t];
        const n = f.initialDeltas[t];
        if (vdu && n !== undefined && (n < vdu.vduProfile.minNumberOfInstances || n > vdu.vduProfile.maxNumberOfInstances)) {
          this.add('level-instances-out-of-range', ['policies', p.name, 'properties', 'initial_delta'], `initial delta ${p.name} gives ${t} ${n} instances, outside its vdu_profile ${vdu.vduProfile.minNumberOfInstances}..${vdu.vduProfile.maxNumberOfInstances}`, `use a number between ${vdu.vduProfile.minNumberOfInstances} and ${vdu.vduProfile.maxNumberOfInstances}`);
        }
      }
    }
    for (const [name, cp] of Object.entries(f.cps)) {
      if (cp.vdu !== undefined && !f.vdus[cp.vdu]) {
        this.add('requirement-target-missing', ['node_templates', name, 'requirements', 'virtual_binding'], `connection point ${name} binds to ${cp.vdu}, which is not a VDU of flavour ${f.id}`, `set virtual_binding to one of: ${vduList}`);
      }
      if (cp.virtualLink !== undefined && !f.virtualLinks[cp.virtualLink]) {
        this.add('requirement-target-missing', ['node_templates', name, 'requirements', 'virtual_link'], `connection point ${name} links to ${cp.virtualLink}, which is not a virtual link of flavour ${f.id}`, `define ${cp.virtualLink} as a tosca.nodes.nfv.VnfVirtualLink, or fix the name`);
      }
    }
  }
}

function readCp(name: string, type: string, tmpl: Mapping): ConnectionPoint {
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
  };
}

function readVirtualLink(name: string, type: string, tmpl: Mapping): VirtualLink {
  const props = mappingOf(tmpl.properties);
  const protocolData = mappingOf(props.vl_profile).virtual_link_protocol_data;
  return {
    nodeName: name,
    type,
    description: stringOf(props.description),
    layerProtocols: stringList(mappingOf(props.connectivity_type).layer_protocols),
    l3: (Array.isArray(protocolData) ? protocolData : [])
      .map((d) => mappingOf(mappingOf(d).l3_protocol_data))
      .filter((l3) => Object.keys(l3).length > 0)
      .map((l3) => ({ ipVersion: stringOf(l3.ip_version), cidr: stringOf(l3.cidr), name: stringOf(l3.name) })),
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

/** `imports:` entries as written: strings, `{file: x}`, or TOSCA 1.2's `{name: {file: x}}`. */
function importRefs(source: SourceFile): Array<{ ref: string; line?: number }> {
  const raw = source.doc.imports;
  if (raw === undefined || raw === null) return [];
  const items = Array.isArray(raw) ? raw : [raw];
  const refs: Array<{ ref: string; line?: number }> = [];
  const lines = source.text.split(/\r?\n/);
  const importsLine = lineOf(source.text, ['imports']);
  for (const item of items) {
    let ref: string | undefined;
    if (typeof item === 'string') ref = item;
    else if (isMapping(item)) {
      if (typeof item.file === 'string') ref = item.file;
      else {
        const inner = Object.values(item)[0];
        ref = isMapping(inner) && typeof inner.file === 'string' ? inner.file : undefined;
      }
    }
    if (ref === undefined) continue;
    const idx = lines.findIndex((l, i) => i + 1 >= (importsLine ?? 1) && l.includes(ref));
    refs.push({ ref, line: idx >= 0 ? idx + 1 : importsLine });
  }
  return refs;
}

/** `ref` resolved against the directory of `from` as a package path; undefined when it leaves the package. */
function resolveMember(from: string, ref: string): string | undefined {
  if (ref.startsWith('/') || /^[a-zA-Z]:[\\/]/.test(ref) || ref.includes('\\')) return undefined;
  const joined = posix.normalize(posix.join(posix.dirname(from || '.'), ref));
  if (joined === '..' || joined.startsWith('../') || joined.startsWith('/')) return undefined;
  return joined.replace(/^\.\//, '');
}

/** Named entries of a TOSCA section that may be a mapping or a list of single-entry mappings. */
function entriesOf(value: unknown): Array<[string, unknown]> {
  if (isMapping(value)) return Object.entries(value);
  if (Array.isArray(value)) return value.flatMap((item) => (isMapping(item) ? Object.entries(item) : []));
  return [];
}

function mappingOf(value: unknown): Mapping {
  return isMapping(value) ? value : {};
}

function stringOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function stringList(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** `valid_values` (or `equal`) constraints of a property definition, as strings. */
function allowedValues(def: Mapping | undefined): string[] | undefined {
  if (!def) return undefined;
  for (const c of Array.isArray(def.constraints) ? def.constraints : []) {
    if (!isMapping(c)) continue;
    if (Array.isArray(c.valid_values)) return c.valid_values.map(String);
    if (c.equal !== undefined) return [String(c.equal)];
  }
  return undefined;
}
