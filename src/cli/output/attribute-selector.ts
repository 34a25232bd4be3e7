/**
 * SOL013 clause 5.3 attribute selectors for the JSON and YAML of a list, as
 * Tacker's API applies them to its lists: by default a list leaves out the
 * complex attributes (instance info, operation parameters...), and
 * `--all-fields`, `--fields`, `--exclude-fields` and `--exclude-default`
 * choose otherwise. An attribute SOL003 makes mandatory (cardinality 1) stays
 * whatever is asked. A path with `/` names a nested attribute
 * (`instantiatedVnfInfo/vnfState`).
 */
import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import { RawJson } from '../../store/lazy-json.js';

/** The four options as commander parses them. */
export interface SelectorFlags {
  allFields?: boolean;
  fields?: string;
  excludeFields?: string;
  excludeDefault?: boolean;
}

/** What a resource's list leaves out by default, and what it always keeps. */
export interface AttributeRules {
  /** The command that prints one whole: "vnf-show". */
  show: string;
  defaultExclude: readonly string[];
  /** Attributes (and nested paths) of cardinality 1: never left out. */
  mandatory: readonly string[];
}

/**
 * SOL003 VnfInstance: Tacker's default exclusions. vnfPkgId is mandatory in
 * the SOL003 version vnfm's records follow (2.6.1).
 */
export const VNF_INSTANCE_ATTRIBUTES: AttributeRules = {
  show: 'vnf-show',
  defaultExclude: ['vnfConfigurableProperties', 'vimConnectionInfo', 'instantiatedVnfInfo', 'metadata', 'extensions'],
  mandatory: [
    'id',
    'vnfdId',
    'vnfPkgId',
    'vnfProvider',
    'vnfProductName',
    'vnfSoftwareVersion',
    'vnfdVersion',
    'instantiationState',
    'instantiatedVnfInfo/flavourId',
    'instantiatedVnfInfo/vnfState',
  ],
};

/**
 * SOL003 VnfLcmOpOcc: Tacker's default exclusions, and vnfm's own complex
 * attribute, the journal of driver steps (op-show prints it).
 */
export const LCM_OP_OCC_ATTRIBUTES: AttributeRules = {
  show: 'op-show',
  defaultExclude: ['operationParams', 'error', 'resourceChanges', 'changedInfo', 'changedExtConnectivity', 'journal'],
  mandatory: ['id', 'operationState', 'stateEnteredTime', 'startTime', 'vnfInstanceId', 'operation', 'isAutomaticInvocation', 'isCancelPending'],
};

/** A checked selection. */
export interface AttributeSelector {
  /** Every attribute (--all-fields). */
  all: boolean;
  /** Paths to keep (--fields), each split at `/`. */
  fields: string[][];
  /** Paths to leave out (--exclude-fields, or the default ones). */
  exclude: string[][];
  /** One of the four options was given (else the default applies). */
  explicit: boolean;
  /** It keeps what the default keeps: every simple attribute and no complex one. */
  simpleOnly: boolean;
  /** The paths never left out, split at `/`. */
  mandatory: string[][];
}

export function addSelectorOptions(cmd: Command, rules: AttributeRules): Command {
  return cmd
    .option('--all-fields', `-o json/yaml: every attribute, as ${rules.show} prints each (by default the complex ones are left out)`)
    .option('--fields <names>', '-o json/yaml: the mandatory attributes and these (comma-separated; a/b for a nested one)')
    .option('--exclude-fields <names>', '-o json/yaml: every attribute but these (comma-separated; a/b for a nested one)')
    .option('--exclude-default', `-o json/yaml: leave out ${rules.defaultExclude.join(', ')} (the default); with --fields, the default and the attributes named`);
}

const pathsOf = (flag: string, value: string): string[][] =>
  value.split(',').map((name) => {
    const keys = name.trim().split('/');
    if (keys.some((k) => k === '')) throw new UsageError(`${flag} "${value}": "${name}" is not an attribute name`, { hint: `e.g. ${flag} instantiatedVnfInfo,metadata/owner` });
    return keys;
  });

/**
 * The selection the options ask for, with Tacker's combination rules:
 * --all-fields alone; --fields not with --exclude-fields; --exclude-fields
 * not with --exclude-default. `format`: they apply to json and yaml only.
 */
export function attributeSelector(flags: SelectorFlags, rules: AttributeRules, format: string): AttributeSelector {
  const given = (['allFields', 'fields', 'excludeFields', 'excludeDefault'] as const).filter((k) => flags[k] !== undefined && flags[k] !== false);
  const flag = (k: (typeof given)[number]) => '--' + k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
  const mandatory = rules.mandatory.map((m) => m.split('/'));
  const base = { explicit: given.length > 0, mandatory, simpleOnly: false };
  if (given.length && format !== 'json' && format !== 'yaml') {
    throw new UsageError(`${flag(given[0]!)} chooses the attributes of -o json and -o yaml, not of -o ${format}`, {
      hint: 'add -o json (or -o yaml); a table chooses its columns with -c',
    });
  }
  if (flags.allFields) {
    const other = given.find((k) => k !== 'allFields');
    if (other)
      throw new UsageError(`--all-fields and ${flag(other)} cannot be used together`, { hint: `--all-fields prints every attribute: drop ${flag(other)}, or drop --all-fields` });
    return { ...base, all: true, fields: [], exclude: [] };
  }
  if (flags.fields !== undefined) {
    if (flags.excludeFields !== undefined) {
      throw new UsageError('--fields and --exclude-fields cannot be used together', {
        hint: 'keep attributes with --fields (add --exclude-default to keep the simple ones too), or leave some out of all of them with --exclude-fields alone',
      });
    }
    const fields = pathsOf('--fields', flags.fields);
    const named = new Set(fields.map((f) => f.join('/')));
    const exclude = flags.excludeDefault ? rules.defaultExclude.filter((d) => !named.has(d)).map((d) => d.split('/')) : [];
    return { ...base, all: false, fields, exclude };
  }
  if (flags.excludeFields !== undefined) {
    if (flags.excludeDefault) {
      throw new UsageError('--exclude-fields and --exclude-default cannot be used together', {
        hint: `--exclude-default leaves out ${rules.defaultExclude.join(', ')}; --exclude-fields alone starts from all attributes and leaves out those it names`,
      });
    }
    return { ...base, all: false, fields: [], exclude: pathsOf('--exclude-fields', flags.excludeFields) };
  }
  return { ...base, all: false, fields: [], exclude: rules.defaultExclude.map((d) => d.split('/')), simpleOnly: true };
}

const samePath = (a: string[], b: string[]) => a.length === b.length && a.every((k, i) => k === b[i]);

/**
 * The top-level paths applySelector leaves out of `keys`: the excluded ones, or,
 * with --fields alone, every key not named whole by a field (a nested field
 * puts its part back afterwards), as Tacker's AttributeSelector does.
 */
function excludedPaths(sel: AttributeSelector, keys: Iterable<string>): string[][] {
  if (sel.exclude.length) return sel.exclude;
  if (!sel.fields.length) return [];
  const whole = new Set(sel.fields.map((f) => f.join('/')));
  return [...keys].filter((k) => !whole.has(k)).map((k) => [k]);
}

/**
 * Whether applySelector may keep some of the top-level attribute `name`: a list
 * reads the stored JSON columns of those alone.
 */
export function keepsAttribute(sel: AttributeSelector, name: string): boolean {
  if (sel.all) return true;
  if (sel.fields.some((f) => f[0] === name) || sel.mandatory.some((m) => m.length === 1 && m[0] === name)) return true;
  return !excludedPaths(sel, [name]).some((p) => p.length === 1 && p[0] === name);
}

/** An object's copy to change, a stored JSON text parsed (by `open`: masking its secrets) on the way. */
const objectOf = (v: unknown, open: (raw: RawJson) => unknown): Record<string, unknown> | undefined => {
  const o = v instanceof RawJson ? open(v) : v;
  return o !== null && typeof o === 'object' && !Array.isArray(o) ? (o as Record<string, unknown>) : undefined;
};

const NOTHING = Symbol('nothing');

/** `data` without the attribute at `path` (copied along it), and the value taken out. */
function takeOut(data: Record<string, unknown>, path: string[], open: (raw: RawJson) => unknown): [Record<string, unknown>, unknown] {
  const [key, ...rest] = path as [string, ...string[]];
  if (!(key in data) || data[key] === undefined) return [data, NOTHING];
  if (rest.length === 0) {
    const { [key]: taken, ...kept } = data;
    return [kept, taken];
  }
  const inner = objectOf(data[key], open);
  if (!inner) return [data, NOTHING];
  const [changed, taken] = takeOut(inner, rest, open);
  return taken === NOTHING ? [data, NOTHING] : [{ ...data, [key]: changed }, taken];
}

/** `data` with `value` at `path`, objects made on the way (copied along it). */
function putBack(data: Record<string, unknown>, path: string[], value: unknown, open: (raw: RawJson) => unknown): Record<string, unknown> {
  const [key, ...rest] = path as [string, ...string[]];
  if (rest.length === 0) return { ...data, [key]: value };
  return { ...data, [key]: putBack(objectOf(data[key], open) ?? {}, rest, value, open) };
}

function valueAt(v: unknown, path: string[], open: (raw: RawJson) => unknown): unknown {
  let at = v;
  for (const key of path) {
    const o = objectOf(at, open);
    if (!o || !(key in o)) return NOTHING;
    at = o[key];
  }
  return at;
}

/**
 * One item's attributes as the selection keeps them, in their order; a
 * nested field put back into its parent's place. `data` is not changed.
 * `open` turns a stored JSON text into its value where a nested path goes
 * into it.
 */
export function applySelector(sel: AttributeSelector, data: Record<string, unknown>, open: (raw: RawJson) => unknown = (raw) => JSON.parse(raw.text)): Record<string, unknown> {
  if (sel.all) return data;
  const excluded = excludedPaths(sel, Object.keys(data));
  if (!excluded.length) return data;
  let out = data;
  const taken: [string[], unknown][] = [];
  for (const path of excluded) {
    if (sel.mandatory.some((m) => samePath(m, path))) continue;
    const [rest, value] = takeOut(out, path, open);
    if (value === NOTHING) continue;
    out = rest;
    taken.push([path, value]);
  }
  if (!taken.length) return data;
  let putAny = false;
  for (const field of sel.fields) {
    // The part of a taken attribute the field names: all of it, or a path inside it.
    for (const [path, value] of taken) {
      if (path.length > field.length || !path.every((k, i) => k === field[i])) continue;
      const part = valueAt(value, field.slice(path.length), open);
      if (part === NOTHING) continue;
      out = putBack(out, field, part, open);
      putAny = true;
    }
  }
  if (!putAny) return out;
  // A field put back takes the place it had: the data's order, not the order of the fields.
  return Object.fromEntries(Object.keys(data).flatMap((k) => (k in out ? [[k, out[k]]] : [])));
}
