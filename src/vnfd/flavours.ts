/**
 * The deployment flavours of a VNFD: which files define them (their
 * substitution_mappings and flavour_id, checked against the VNF node and its
 * type), and each flavour's nodes, groups, policies and hooks read through a
 * FlavourReader.
 */
import type { Flavour } from '../model/vnfd.js';
import { isMapping } from '../yaml.js';
import { FlavourReader, readCp, readVirtualLink } from './flavour-reader.js';
import { GROUP_PLACEMENT, NODE_CP, NODE_VDU_COMPUTE, NODE_VDU_STORAGE, NODE_VIRTUAL_LINK, NODE_VNF, type TypeTable } from './sol001-types.js';
import { allowedValues, entriesOf, mappingOf, type SourceFile, stringList, stringOf, type VnfdReading, type VnfNode } from './tosca-values.js';
import { lineOf } from './yaml-source.js';

/** The deployment flavours of the VNFD, by flavour_id: one per file with substitution_mappings, or the single-file VNFD's own. */
export function readFlavours(r: VnfdReading, vnfNode: VnfNode | undefined): Record<string, Flavour> {
  const flavours: Record<string, Flavour> = {};
  const allowed = vnfNode ? allowedValues(r.propertyDef(vnfNode.type, 'flavour_id')) : undefined;
  for (const source of r.sources.values()) {
    const tt = source.doc.topology_template;
    if (!isMapping(tt) || !isMapping(tt.substitution_mappings)) continue;
    const sm = tt.substitution_mappings;
    const smPath = ['topology_template', 'substitution_mappings'];
    if (typeof sm.node_type !== 'string' || !r.types.isA(sm.node_type, NODE_VNF)) {
      r.add({
        code: 'flavour-node-type',
        file: source.path,
        line: lineOf(source.text, [...smPath, 'node_type']) ?? lineOf(source.text, smPath),
        message: `substitution_mappings.node_type ${String(sm.node_type ?? '(missing)')} is not a node type derived from tosca.nodes.nfv.VNF`,
        hint: vnfNode ? `set node_type: ${vnfNode.type}` : 'set node_type to the VNF node type defined in the types file',
      });
    }
    const localVnf = vnfTemplateIn(r.types, source);
    const smId = mappingOf(sm.properties).flavour_id;
    const localId = localVnf ? mappingOf(localVnf.template.properties).flavour_id : undefined;
    const id = typeof smId === 'string' ? smId : typeof localId === 'string' ? localId : undefined;
    const idLine = lineOf(source.text, [...smPath, 'properties', 'flavour_id']) ?? lineOf(source.text, smPath);
    if (id === undefined) {
      r.add({
        code: 'flavour-id-missing',
        file: source.path,
        line: idLine,
        message: 'substitution_mappings has no properties.flavour_id, so this deployment flavour has no id',
        hint: 'add "properties: {flavour_id: simple}" (or the flavour\'s id) under substitution_mappings',
      });
      continue;
    }
    if (typeof smId === 'string' && typeof localId === 'string' && localId !== smId) {
      r.add({
        code: 'flavour-id-mismatch',
        file: source.path,
        line: lineOf(source.text, ['topology_template', 'node_templates', localVnf!.name, 'properties', 'flavour_id']),
        message: `the VNF node says flavour_id ${localId} but substitution_mappings says ${smId}`,
        hint: 'use the same flavour_id in both places, or drop it from the VNF node in the flavour file',
      });
    }
    const notAllowed = allowed && !allowed.includes(id);
    if (notAllowed) {
      // Tacker onboards such a package and instantiates the flavour (its own v1 test_cnf names a flavour vdumap its type does not list).
      r.add({
        severity: 'warning',
        code: 'flavour-id-not-allowed',
        file: source.path,
        line: idLine,
        message: `flavour ${id} is not one of the flavour_id values node type ${vnfNode!.type} allows (${allowed.join(', ')}); vnfm, as Tacker, onboards the package and instantiates flavour ${id} when a request names it`,
        hint: `to make the VNFD consistent, add ${id} to the flavour_id valid_values in ${r.nodeTypeFile(vnfNode!.type) ?? 'the types file'}, or fix the flavour_id here`,
      });
    }
    if (flavours[id]) {
      r.add({
        code: 'flavour-id-duplicate',
        file: source.path,
        line: idLine,
        message: `flavour ${id} is also defined in ${flavours[id]!.file}`,
        hint: 'give each deployment flavour file its own flavour_id',
      });
      continue;
    }
    const flavour = readFlavour(r, source, id, localVnf, vnfNode);
    if (notAllowed) flavour.typeAllowsOnly = allowed;
    flavours[id] = flavour;
  }

  // A single-file VNFD may omit substitution_mappings and carry its topology beside the VNF node.
  if (Object.keys(flavours).length === 0 && vnfNode) {
    const id = mappingOf(vnfNode.template.properties).flavour_id;
    const source = r.sources.get(vnfNode.file)!;
    const nodes = entriesOf(mappingOf(source.doc.topology_template).node_templates);
    if (typeof id === 'string' && nodes.length > 1) flavours[id] = readFlavour(r, source, id, vnfNode, vnfNode);
  }

  if (Object.keys(flavours).length === 0) {
    const top = r.sources.values().next().value as SourceFile | undefined;
    r.add({
      code: 'flavour-missing',
      file: top?.path,
      message: 'the VNFD defines no deployment flavour',
      hint: 'add a flavour file (e.g. Definitions/<name>_df_simple.yaml) whose topology_template has substitution_mappings with node_type and properties.flavour_id, and import it from the top VNFD',
    });
  } else if (vnfNode) {
    const topId = mappingOf(vnfNode.template.properties).flavour_id;
    if (typeof topId === 'string' && !flavours[topId]) {
      r.add({
        code: 'flavour-id-mismatch',
        file: vnfNode.file,
        line: lineOf(r.text(vnfNode.file), ['topology_template', 'node_templates', vnfNode.name, 'properties', 'flavour_id']),
        message: `the VNF node names flavour_id ${topId}, but the flavours defined are ${Object.keys(flavours).join(', ')}`,
        hint: 'use "flavour_id: {get_input: selected_flavour}" in the top VNFD, or one of the defined flavour ids',
      });
    }
  }
  return flavours;
}

/** The first node template of `source` whose type derives from tosca.nodes.nfv.VNF. */
export function vnfTemplateIn(types: TypeTable, source: SourceFile): VnfNode | undefined {
  const tt = mappingOf(source.doc.topology_template);
  for (const [name, tmpl] of entriesOf(tt.node_templates)) {
    if (isMapping(tmpl) && typeof tmpl.type === 'string' && types.isA(tmpl.type, NODE_VNF)) {
      return { file: source.path, name, type: tmpl.type, template: tmpl, inputs: mappingOf(tt.inputs) };
    }
  }
  return undefined;
}

function readFlavour(r: VnfdReading, source: SourceFile, id: string, localVnf: VnfNode | undefined, vnfNode: VnfNode | undefined): Flavour {
  const tt = mappingOf(source.doc.topology_template);
  const description = localVnf ? stringOf(mappingOf(localVnf.template.properties).flavour_description) : undefined;
  const flavour: Flavour = {
    id,
    description: description ?? (vnfNode ? stringOf(r.vnfProperty(vnfNode, 'flavour_description')) : undefined),
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
  const reader = new FlavourReader(r, source, flavour);
  for (const [name, tmpl] of entriesOf(tt.node_templates)) {
    if (!isMapping(tmpl) || typeof tmpl.type !== 'string') continue;
    const type = tmpl.type;
    if (r.types.isA(type, NODE_VDU_COMPUTE)) flavour.vdus[name] = reader.readVdu(name, type, tmpl);
    else if (r.types.isAnyOf(type, NODE_VDU_STORAGE)) flavour.storages[name] = reader.readStorage(name, type, tmpl);
    else if (r.types.isA(type, NODE_CP)) flavour.cps[name] = readCp(name, type, tmpl);
    else if (r.types.isA(type, NODE_VIRTUAL_LINK)) flavour.virtualLinks[name] = readVirtualLink(name, type, tmpl);
  }
  for (const [name, group] of entriesOf(tt.groups)) {
    if (isMapping(group) && r.types.isA(stringOf(group.type), GROUP_PLACEMENT)) {
      flavour.placementGroups[name] = stringList(group.members);
    }
  }
  reader.readPolicies(entriesOf(tt.policies));
  // Hooks live on the flavour's VNF node, as Tacker reads them; a single-file VNFD has just the one.
  const hookNode = localVnf ?? (vnfNode && vnfNode.file === source.path ? vnfNode : undefined);
  const hookSource = hookNode && hasVnflcm(hookNode) ? hookNode : vnfNode && hasVnflcm(vnfNode) ? vnfNode : undefined;
  if (hookSource) reader.readHooks(hookSource);
  reader.checkReferences();
  return flavour;
}

function hasVnflcm(node: VnfNode): boolean {
  return isMapping(mappingOf(node.template.interfaces).Vnflcm);
}
