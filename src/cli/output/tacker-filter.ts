/**
 * `--filter`: the attribute-based filter of ETSI SOL013 5.2 as Tacker's API
 * takes it, over the JSON form of each item: `(eq,vnfInstanceName,web)`,
 * `(in,instantiationState,INSTANTIATED,NOT_INSTANTIATED)`,
 * `(cont,vnfProductName,cnf)`, joined with `;` (all must hold). Attributes
 * are `/`-separated paths (`instantiatedVnfInfo/flavourId`); a value with a
 * comma or a parenthesis is single-quoted (`'a,b'`, `''` for a quote); in
 * attribute names `~1` is `/`, `~a` `,`, `~b` `@`, `~0` `~`. An attribute
 * that is a list matches when any element does; a missing one never matches.
 */
import { UsageError } from '../../errors.js';

const ONE_VALUE = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte'];
const MANY_VALUES = ['in', 'nin', 'cont', 'ncont'];

export interface FilterTerm {
  op: string;
  attr: string[];
  values: string[];
}

function bad(expr: string, why: string): UsageError {
  return new UsageError(`--filter ${JSON.stringify(expr)}: ${why}`, {
    hint: `write (OP,ATTRIBUTE,VALUE[,VALUE...]) joined with ";", e.g. --filter "(eq,instantiationState,INSTANTIATED);(cont,vnfInstanceName,web)"; OP is one of ${[...ONE_VALUE, ...MANY_VALUES].join(', ')}`,
  });
}

function unescapeName(part: string): string {
  return part.replace(/~([1ab])/g, (_, c: string) => ({ '1': '/', a: ',', b: '@' })[c]!).replace(/~0/g, '~');
}

export function parseTackerFilter(expr: string): FilterTerm[] {
  const terms: FilterTerm[] = [];
  let i = 0;
  for (;;) {
    const head = /^\(([a-z]+),([^,()]+)/.exec(expr.slice(i));
    if (!head) throw bad(expr, `expected "(OP,ATTRIBUTE,..." at character ${i + 1}`);
    const op = head[1]!;
    if (!ONE_VALUE.includes(op) && !MANY_VALUES.includes(op)) throw bad(expr, `unknown operator "${op}"`);
    i += head[0].length;
    const values: string[] = [];
    while (expr[i] === ',') {
      i++;
      const v = /^('(?:[^']|'')*'|[^',)]+)/.exec(expr.slice(i));
      if (!v) throw bad(expr, `a value is missing at character ${i + 1}`);
      values.push(v[0].startsWith("'") ? v[0].slice(1, -1).replace(/''/g, "'") : v[0]);
      i += v[0].length;
    }
    if (expr[i] !== ')') throw bad(expr, `expected "," or ")" at character ${i + 1}`);
    i++;
    if (values.length === 0) throw bad(expr, `"${op}" needs a value`);
    if (values.length > 1 && ONE_VALUE.includes(op)) throw bad(expr, `"${op}" takes one value; use "in" for several`);
    terms.push({ op, attr: head[2]!.split('/').map(unescapeName), values });
    if (i === expr.length) return terms;
    if (expr[i] !== ';') throw bad(expr, `expected ";" between expressions at character ${i + 1}`);
    i++;
  }
}

/** The filter's strings read as the attribute's type: numbers, booleans, or text. */
function typed(values: string[], like: unknown): unknown[] {
  if (typeof like === 'number') return values.map(Number);
  if (typeof like === 'boolean') return values.map((v) => v === 'true');
  return values;
}

function matchOne(op: string, val: unknown, values: unknown[]): boolean {
  const first = values[0] as string | number;
  switch (op) {
    case 'eq':
      return val === first;
    case 'neq':
      return val !== first;
    case 'in':
      return values.includes(val);
    case 'nin':
      return !values.includes(val);
    case 'gt':
      return (val as string | number) > first;
    case 'gte':
      return (val as string | number) >= first;
    case 'lt':
      return (val as string | number) < first;
    case 'lte':
      return (val as string | number) <= first;
    case 'cont':
      return typeof val === 'string' && values.some((v) => val.includes(String(v)));
    default: // ncont
      return !(typeof val === 'string' && values.some((v) => val.includes(String(v))));
  }
}

/** The values at `path`; a list on the way is walked element by element (SOL013 5.2: any element may match). */
function valuesAt(data: unknown, path: string[]): unknown[] {
  let current = [data];
  for (const key of path) {
    const next: unknown[] = [];
    for (const v of current.flatMap((c) => (Array.isArray(c) ? c : [c]))) {
      if (v !== null && typeof v === 'object' && key in v) next.push((v as Record<string, unknown>)[key]);
    }
    current = next;
  }
  return current.flatMap((c) => (Array.isArray(c) ? c : [c]));
}

function matchTerm(term: FilterTerm, data: unknown): boolean {
  const candidates = valuesAt(data, term.attr);
  // A negative operator on a missing attribute matches nothing, as in Tacker.
  if (term.op === 'neq' || term.op === 'nin' || term.op === 'ncont') return candidates.length > 0 && candidates.some((v) => matchOne(term.op, v, typed(term.values, v)));
  return candidates.some((v) => matchOne(term.op, v, typed(term.values, v)));
}

export function matchesTackerFilter(terms: FilterTerm[], data: unknown): boolean {
  return terms.every((t) => matchTerm(t, data));
}
