/**
 * What the VNFD readers share: the shapes of a read definitions file and of
 * the VNF node, what the flavour readers ask of the loader, and the lenient
 * readers of TOSCA values (a section may be a mapping or a list of
 * single-entry mappings; a scalar may be written as a number).
 */
import { posix } from 'node:path';
import type { Finding } from '../model/package-files.js';
import { isMapping } from '../yaml.js';
import type { TypeTable } from './sol001-types.js';

export type Mapping = Record<string, unknown>;

/** One definitions file of the VNFD, read and parsed. */
export interface SourceFile {
  path: string;
  text: string;
  doc: Mapping;
}

/** A node template whose type derives from tosca.nodes.nfv.VNF, with the inputs of its file. */
export interface VnfNode {
  file: string;
  name: string;
  type: string;
  template: Mapping;
  inputs: Mapping;
}

/** A finding whose severity defaults to error. */
export type NewFinding = Omit<Finding, 'severity'> & { severity?: Finding['severity'] };

/** What the flavour readers ask of the loader: the files read, the types, and where findings go. */
export interface VnfdReading {
  readonly sources: ReadonlyMap<string, SourceFile>;
  readonly types: TypeTable;
  add(f: NewFinding): void;
  /** The text of a definitions file ('' for one not read). */
  text(path: string): string;
  /** Whether the package holds `path`. */
  has(path: string): boolean;
  /** The definition of `prop` on node type `type` or its nearest package-defined ancestor. */
  propertyDef(type: string, prop: string): Mapping | undefined;
  /** The VNF node's value for `prop`, with inputs' and the type's defaults. */
  vnfProperty(node: VnfNode, prop: string): unknown;
  /** The file that defines node type `type`, when the package does. */
  nodeTypeFile(type: string): string | undefined;
}

/** `ref` resolved against the directory of `from` as a package path; undefined when it leaves the package. */
export function resolveMember(from: string, ref: string): string | undefined {
  if (ref.startsWith('/') || /^[a-zA-Z]:[\\/]/.test(ref) || ref.includes('\\')) return undefined;
  const joined = posix.normalize(posix.join(posix.dirname(from || '.'), ref));
  if (joined === '..' || joined.startsWith('../') || joined.startsWith('/')) return undefined;
  return joined.replace(/^\.\//, '');
}

/** Named entries of a TOSCA section that may be a mapping or a list of single-entry mappings. */
export function entriesOf(value: unknown): Array<[string, unknown]> {
  if (isMapping(value)) return Object.entries(value);
  if (Array.isArray(value)) return value.flatMap((item) => (isMapping(item) ? Object.entries(item) : []));
  return [];
}

export function mappingOf(value: unknown): Mapping {
  return isMapping(value) ? value : {};
}

export function stringOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

export function stringList(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** `valid_values` (or `equal`) constraints of a property definition, as strings. */
export function allowedValues(def: Mapping | undefined): string[] | undefined {
  if (!def) return undefined;
  for (const c of Array.isArray(def.constraints) ? def.constraints : []) {
    if (!isMapping(c)) continue;
    if (Array.isArray(c.valid_values)) return c.valid_values.map(String);
    if (c.equal !== undefined) return [String(c.equal)];
  }
  return undefined;
}
