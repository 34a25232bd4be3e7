/**
 * Reads a package's VNFD: the Entry-Definitions file and everything it
 * imports, into the typed model, checking every reference on the way.
 * Problems are findings (all of them, not the first), each naming the file,
 * the line where it can, and what to change; a model is still returned when
 * the VNF node was found, so `vnfpkg-show` can describe a package that has
 * warnings.
 */
import type { Finding, PackageFiles } from '../model/package-files.js';
import type { Vnfd } from '../model/vnfd.js';
import { isMapping } from '../yaml.js';
import { DefinitionFiles } from './definitions.js';
import { readFlavours, vnfTemplateIn } from './flavours.js';
import { TypeTable, VNF_REQUIRED_PROPERTIES } from './sol001-types.js';
import { allowedValues, entriesOf, type Mapping, mappingOf, type NewFinding, type SourceFile, stringOf, type VnfdReading, type VnfNode } from './tosca-values.js';
import { lineOf } from './yaml-source.js';

export { MAX_DEFINITION_FILES, MAX_IMPORT_DEPTH } from './definitions.js';

const TYPE_SECTIONS = ['node_types', 'policy_types', 'group_types', 'data_types', 'capability_types', 'interface_types', 'artifact_types', 'relationship_types'] as const;

export interface LoadVnfdResult {
  vnfd?: Vnfd;
  findings: Finding[];
}

/** Reads the VNFD whose top file is `entryDefinitions` (a package path, as TOSCA.meta gives it). */
export async function loadVnfd(files: PackageFiles, entryDefinitions: string): Promise<LoadVnfdResult> {
  return new VnfdLoader(files).load(entryDefinitions);
}

class VnfdLoader implements VnfdReading {
  private readonly findings: Finding[] = [];
  private readonly files: DefinitionFiles;
  readonly types = new TypeTable();
  /** name → { file, definition } for the types the package defines, for property defaults. */
  private readonly nodeTypeDefs = new Map<string, { file: string; def: Mapping }>();

  constructor(private readonly pkg: PackageFiles) {
    this.files = new DefinitionFiles(pkg, this.findings);
  }

  get sources(): ReadonlyMap<string, SourceFile> {
    return this.files.sources;
  }

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
    await this.files.readAll(entry);
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
    const flavours = readFlavours(this, vnfNode);
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
      imports: this.files.imports,
      files: [...this.sources.keys()],
    };
    return { vnfd, findings: this.findings };
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
      const source = this.sources.get(path);
      if (!source || !isMapping(source.doc.topology_template)) continue;
      const node = vnfTemplateIn(this.types, source);
      if (node) return node;
    }
    return undefined;
  }

  /** The definition of `prop` on the VNF's node type or the nearest package-defined ancestor. */
  propertyDef(type: string, prop: string): Mapping | undefined {
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
  vnfProperty(node: VnfNode, prop: string): unknown {
    let v = mappingOf(node.template.properties)[prop];
    if (isMapping(v) && typeof v.get_input === 'string') v = mappingOf(node.inputs[v.get_input]).default;
    if (v !== undefined) return v;
    const def = this.propertyDef(node.type, prop);
    if (!def) return undefined;
    if (def.default !== undefined) return def.default;
    const allowed = allowedValues(def);
    return allowed?.length === 1 ? allowed[0] : undefined;
  }

  nodeTypeFile(type: string): string | undefined {
    return this.nodeTypeDefs.get(type)?.file;
  }

  add(f: NewFinding): void {
    this.findings.push({ severity: 'error', ...f });
  }

  text(path: string): string {
    return this.sources.get(path)?.text ?? '';
  }

  has(path: string): boolean {
    return this.pkg.has(path);
  }
}
