/**
 * `labelSelector` and `fieldSelector` query parameters, with the syntax and
 * the 400 messages of the API server: `k=v`, `k==v`, `k!=v`, `k`, `!k`,
 * `k in (a,b)`, `k notin (a,b)`, `k>1`, `k<1` for labels (keys and values
 * validated as on objects); for fields `=`, `==`, `!=` on the fields each
 * kind supports (metadata.name and metadata.namespace for every kind, more
 * for pods, events, secrets...: `selectableFields` of its ResourceType).
 */
import { badRequest } from './status.js';
import { labelValueProblems, qualifiedNameProblems } from './validation.js';
import type { KubeObject } from './resources.js';

export type Matcher = (obj: KubeObject) => boolean;

// ---- label selectors: the grammar and messages of apimachinery's labels parser ----

type Tok = 'id' | 'end' | '(' | ')' | ',' | '=' | '==' | '!=' | '!' | 'in' | 'notin' | '>' | '<' | 'error';
interface Scanned {
  tok: Tok;
  lit: string;
}

const SPECIAL = new Set(['=', '!', '(', ')', ',', '>', '<']);
const SYMBOLS: Record<string, Tok> = { '(': '(', ')': ')', ',': ',', '=': '=', '==': '==', '!=': '!=', '!': '!', '>': '>', '<': '<' };
const isSpace = (ch: string): boolean => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';

function lex(input: string): Scanned[] {
  const out: Scanned[] = [];
  let i = 0;
  for (;;) {
    while (i < input.length && isSpace(input[i]!)) i++;
    if (i >= input.length) {
      out.push({ tok: 'end', lit: '' });
      return out;
    }
    const ch = input[i]!;
    if (SPECIAL.has(ch)) {
      let buffer = '';
      let last: Scanned | undefined;
      while (i < input.length && SPECIAL.has(input[i]!)) {
        buffer += input[i];
        const tok = SYMBOLS[buffer];
        if (tok) last = { tok, lit: buffer };
        else if (last) break;
        i++;
      }
      out.push(last ?? { tok: 'error', lit: `error expected: keyword found '${buffer}'` });
      if (!last) {
        out.push({ tok: 'end', lit: '' });
        return out;
      }
      continue;
    }
    let word = '';
    while (i < input.length && !isSpace(input[i]!) && !SPECIAL.has(input[i]!)) word += input[i++];
    out.push({ tok: word === 'in' ? 'in' : word === 'notin' ? 'notin' : 'id', lit: word });
  }
}

type Operator = 'in' | 'notin' | '=' | '==' | '!=' | 'gt' | 'lt' | 'exists' | '!';

interface Requirement {
  key: string;
  op: Operator;
  values: string[];
}

class SelectorSyntaxError extends Error {}

/** A field error as `field.Error.Error()` prints it: `path: Invalid value: "v": detail`. */
function invalidValue(path: string, value: unknown, detail: string): string {
  const shown = typeof value === 'string' ? JSON.stringify(value) : Array.isArray(value) ? `[]string{${value.map((v) => JSON.stringify(v)).join(', ')}}` : String(value);
  return `${path}: Invalid value: ${shown}: ${detail}`;
}

function newRequirement(key: string, op: Operator, values: string[]): Requirement {
  const errors: string[] = [];
  const keyProblems = qualifiedNameProblems(key);
  if (keyProblems.length) errors.push(invalidValue('key', key, keyProblems.join('; ')));
  if ((op === 'in' || op === 'notin') && values.length === 0) errors.push(invalidValue('values', values, "for 'in', 'notin' operators, values set can't be empty"));
  if ((op === '=' || op === '==' || op === '!=') && values.length !== 1) errors.push(invalidValue('values', values, 'exact-match compatibility requires one single value'));
  if (op === 'gt' || op === 'lt') {
    if (values.length !== 1) errors.push(invalidValue('values', values, "for 'Gt', 'Lt' operators, exactly one value is required"));
    values.forEach((v, i) => {
      if (!/^[+-]?[0-9]+$/.test(v)) errors.push(invalidValue(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
    });
  }
  values.forEach((v, i) => {
    const problems = labelValueProblems(v);
    if (problems.length) errors.push(invalidValue(`values[${i}][${key}]`, v, problems.join('; ')));
  });
  if (errors.length === 1) throw new SelectorSyntaxError(errors[0]);
  if (errors.length > 1) throw new SelectorSyntaxError(`[${errors.join(', ')}]`);
  return { key, op, values };
}

class LabelParser {
  private pos = 0;
  constructor(private readonly items: Scanned[]) {}

  /** In a value position the keywords `in` and `notin` are plain identifiers. */
  private look(values: boolean): Scanned {
    const it = this.items[this.pos]!;
    return values && (it.tok === 'in' || it.tok === 'notin') ? { tok: 'id', lit: it.lit } : it;
  }

  private next(values: boolean): Scanned {
    const it = this.look(values);
    if (this.pos < this.items.length - 1) this.pos++;
    return it;
  }

  parse(): Requirement[] {
    const out: Requirement[] = [];
    for (;;) {
      const { tok, lit } = this.look(true);
      if (tok === 'id' || tok === '!') {
        try {
          out.push(this.requirement());
        } catch (err) {
          throw new SelectorSyntaxError(`unable to parse requirement: ${(err as Error).message}`);
        }
        const after = this.next(true);
        if (after.tok === 'end') return out;
        if (after.tok === ',') {
          const n = this.look(true);
          if (n.tok !== 'id' && n.tok !== '!') throw new SelectorSyntaxError(`found '${n.lit}', expected: identifier after ','`);
          continue;
        }
        throw new SelectorSyntaxError(`found '${after.lit}', expected: ',' or 'end of string'`);
      }
      if (tok === 'end') return out;
      throw new SelectorSyntaxError(`found '${lit}', expected: !, identifier, or 'end of string'`);
    }
  }

  private requirement(): Requirement {
    let op: Operator | undefined;
    let t = this.next(true);
    if (t.tok === '!') {
      op = '!';
      t = this.next(true);
    }
    if (t.tok !== 'id') throw new SelectorSyntaxError(`found '${t.lit}', expected: identifier`);
    const key = t.lit;
    const keyProblems = qualifiedNameProblems(key);
    if (keyProblems.length) throw new SelectorSyntaxError(invalidValue('<nil>', key, keyProblems.join('; ')));
    const n = this.look(true).tok;
    // `!key` is complete whatever follows; what follows is then the parser's to reject.
    if (op === '!' || n === 'end' || n === ',') return newRequirement(key, op ?? 'exists', []);
    const o = this.next(false);
    const ops: Partial<Record<Tok, Operator>> = { in: 'in', notin: 'notin', '=': '=', '==': '==', '!=': '!=', '>': 'gt', '<': 'lt' };
    const binary = ops[o.tok];
    if (!binary) throw new SelectorSyntaxError(`found '${o.lit}', expected: in, notin, =, ==, !=, gt, lt`);
    const values = binary === 'in' || binary === 'notin' ? this.setValues() : this.exactValue();
    return newRequirement(key, binary, [...new Set(values)].sort());
  }

  private setValues(): string[] {
    const open = this.next(true);
    if (open.tok !== '(') throw new SelectorSyntaxError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.look(true);
    if (tok === ')') {
      this.next(true);
      return [''];
    }
    if (tok !== 'id' && tok !== ',') throw new SelectorSyntaxError(`found '${lit}', expected: ',', ')' or identifier`);
    const values = this.identifiers();
    if (this.next(true).tok !== ')') throw new SelectorSyntaxError(`found '${lit}', expected: ')'`);
    return values;
  }

  private identifiers(): string[] {
    const values = new Set<string>();
    for (;;) {
      const t = this.next(true);
      if (t.tok === 'id') {
        values.add(t.lit);
        const n = this.look(true);
        if (n.tok === ',') continue;
        if (n.tok === ')') return [...values];
        throw new SelectorSyntaxError(`found '${n.lit}', expected: ',' or ')'`);
      }
      if (t.tok === ',') {
        if (values.size === 0) values.add('');
        const n = this.look(true);
        if (n.tok === ')') {
          values.add('');
          return [...values];
        }
        if (n.tok === ',') {
          this.next(true);
          values.add('');
        }
        continue;
      }
      throw new SelectorSyntaxError(`found '${t.lit}', expected: ',', or identifier`);
    }
  }

  private exactValue(): string[] {
    const n = this.look(true);
    if (n.tok === 'end' || n.tok === ',') return [''];
    const t = this.next(true);
    if (t.tok === 'id') return [t.lit];
    throw new SelectorSyntaxError(`found '${t.lit}', expected: identifier`);
  }
}

function requirementMatcher(r: Requirement): Matcher {
  return (obj) => {
    const labels = obj.metadata.labels ?? {};
    const has = Object.hasOwn(labels, r.key);
    const value = labels[r.key];
    switch (r.op) {
      case 'in':
      case '=':
      case '==':
        return has && r.values.includes(value!);
      case 'notin':
      case '!=':
        return !has || !r.values.includes(value!);
      case 'exists':
        return has;
      case '!':
        return !has;
      case 'gt':
      case 'lt': {
        if (!has || !/^[+-]?[0-9]+$/.test(value!)) return false;
        const n = Number(value);
        return r.op === 'gt' ? n > Number(r.values[0]) : n < Number(r.values[0]);
      }
    }
  };
}

/** Parses a `labelSelector` query parameter; a malformed one is a 400 worded as the API server words it. */
export function parseLabelSelector(selector: string | null): Matcher {
  return parseLabelSelectorParts(selector).matches;
}

/** A parsed label selector: its matcher, and the `key=value` labels every match must carry (for the store's label index). */
export interface LabelSelection {
  matches: Matcher;
  /** The requirements `k=v`, `k==v` and `k in (v)` as labels; the matcher still decides. */
  equalities: Record<string, string>;
}

export function parseLabelSelectorParts(selector: string | null): LabelSelection {
  if (!selector) return { matches: () => true, equalities: {} };
  let requirements: Requirement[];
  try {
    requirements = new LabelParser(lex(selector)).parse();
  } catch (err) {
    if (err instanceof SelectorSyntaxError) throw badRequest(err.message);
    throw err;
  }
  const matchers = requirements.map(requirementMatcher);
  const equalities: Record<string, string> = {};
  for (const r of requirements) {
    if ((r.op === '=' || r.op === '==' || r.op === 'in') && r.values.length === 1 && !Object.hasOwn(equalities, r.key)) equalities[r.key] = r.values[0]!;
  }
  return { matches: (obj) => matchers.every((m) => m(obj)), equalities };
}

// ---- field selectors ----

/** How a field selector reads one field of an object: as the string the API server's field set holds. */
export type FieldGetter = (obj: KubeObject) => string;

/**
 * The fields a kind can be selected by. Kinds with a field-label
 * conversion of their own answer `field label not supported: X` for
 * others (or their own wording); the rest answer with the generic
 * `"X" is not a known field selector` message.
 */
export interface SelectableFields {
  fields: Record<string, FieldGetter>;
  /** The 400 message for a field the kind does not support. */
  unsupported?: (field: string) => string;
}

export const METADATA_FIELDS: Record<string, FieldGetter> = {
  'metadata.name': (obj) => obj.metadata.name,
  'metadata.namespace': (obj) => obj.metadata.namespace ?? '',
};

const DEFAULT_FIELDS: SelectableFields = {
  fields: METADATA_FIELDS,
  unsupported: (field) => `"${field}" is not a known field selector: only "metadata.name", "metadata.namespace"`,
};

/** The message of kinds with their own field-label conversion. */
export const fieldLabelNotSupported = (field: string): string => `field label not supported: ${field}`;

/** Splits at unescaped commas (fields.splitTerms). */
function splitFieldTerms(selector: string): string[] {
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (escaped) escaped = false;
    else if (c === '\\') escaped = true;
    else if (c === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

function unescapeFieldValue(value: string): string {
  return value.replace(/\\([\\,=!])/g, '$1');
}

/** Parses a `fieldSelector` for a kind whose selectable fields are `selectable` (metadata.name/namespace by default). */
export function parseFieldSelector(selector: string | null, selectable: SelectableFields = DEFAULT_FIELDS): Matcher {
  if (!selector) return () => true;
  const matchers: Matcher[] = [];
  for (const term of splitFieldTerms(selector).sort()) {
    if (term === '') continue;
    let split: [string, string, string] | undefined;
    for (let i = 0; i < term.length && !split; i++) {
      for (const op of ['!=', '==', '=']) {
        if (term.startsWith(op, i)) {
          split = [term.slice(0, i), op, term.slice(i + op.length)];
          break;
        }
      }
    }
    if (!split) throw badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
    const [field, op, raw] = split;
    const expected = unescapeFieldValue(raw);
    const get = selectable.fields[field];
    if (!get) throw badRequest((selectable.unsupported ?? DEFAULT_FIELDS.unsupported!)(field));
    matchers.push((obj) => (op === '!=' ? get(obj) !== expected : get(obj) === expected));
  }
  return (obj) => matchers.every((m) => m(obj));
}

/** A `metav1.LabelSelector` object (`matchLabels`, `matchExpressions`). */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

/**
 * Whether `labels` match a LabelSelector object. An empty selector matches
 * everything; a missing one (undefined) matches nothing, as for workloads.
 */
export function matchesSelector(selector: LabelSelectorObject | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(l, e.key);
    const value = l[e.key];
    const values = e.values ?? [];
    if (e.operator === 'In' && !(has && values.includes(value!))) return false;
    if (e.operator === 'NotIn' && has && values.includes(value!)) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

/** A LabelSelector object as the string form (`a=b,c in (d)`), as metav1.FormatLabelSelector writes it. */
export function formatSelector(selector: LabelSelectorObject | undefined): string {
  if (!selector) return '';
  const terms: string[] = [];
  for (const [k, v] of Object.entries(selector.matchLabels ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) terms.push(`${k}=${v}`);
  for (const e of selector.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(',');
    if (e.operator === 'In') terms.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') terms.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') terms.push(e.key);
    else terms.push(`!${e.key}`);
  }
  return terms.join(',');
}
