/**
 * `labelSelector` and `fieldSelector` query parameters, with the syntax the
 * API server accepts: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`,
 * `k notin (a,b)` for labels; `metadata.name` and `metadata.namespace` with
 * `=`, `==`, `!=` for fields (the fields every kind supports).
 */
import { badRequest } from './status.js';
import type { KubeObject } from './resources.js';

export type Matcher = (obj: KubeObject) => boolean;

function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      terms.push(current.trim());
      current = '';
    } else {
      current += ch;
    }
  }
  if (current.trim()) terms.push(current.trim());
  return terms.filter((t) => t !== '');
}

function labelTerm(term: string): Matcher {
  const setMatch = /^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
  if (setMatch) {
    const [, key, op, list] = setMatch as unknown as [string, string, string, string];
    const values = list.split(',').map((v) => v.trim());
    return (obj) => {
      const value = obj.metadata.labels?.[key];
      return op === 'in' ? value !== undefined && values.includes(value) : value === undefined || !values.includes(value);
    };
  }
  const cmp = /^([^\s!=]+)\s*(==|=|!=)\s*([^\s]*)$/.exec(term);
  if (cmp) {
    const [, key, op, expected] = cmp as unknown as [string, string, string, string];
    return (obj) => {
      const value = obj.metadata.labels?.[key];
      return op === '!=' ? value !== expected : value === expected;
    };
  }
  const exists = /^(!?)([^\s!=()]+)$/.exec(term);
  if (exists) {
    const [, not, key] = exists as unknown as [string, string, string];
    return (obj) => (obj.metadata.labels?.[key] !== undefined) !== (not === '!');
  }
  throw badRequest(`unable to parse requirement: found '${term}', expected: a valid label selector`);
}

export function parseLabelSelector(selector: string | null): Matcher {
  if (!selector) return () => true;
  const matchers = splitTerms(selector).map(labelTerm);
  return (obj) => matchers.every((m) => m(obj));
}

const FIELDS: Record<string, (obj: KubeObject) => string | undefined> = {
  'metadata.name': (obj) => obj.metadata.name,
  'metadata.namespace': (obj) => obj.metadata.namespace ?? '',
};

export function parseFieldSelector(selector: string | null): Matcher {
  if (!selector) return () => true;
  const matchers = splitTerms(selector).map((term): Matcher => {
    const cmp = /^([^\s!=]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!cmp) throw badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
    const [, field, op, expected] = cmp as unknown as [string, string, string, string];
    const get = FIELDS[field];
    if (!get) throw badRequest(`field label not supported: ${field}`);
    return (obj) => (op === '!=' ? get(obj) !== expected : get(obj) === expected);
  });
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
