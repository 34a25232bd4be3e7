/**
 * Object-name and metadata checks with the API server's wording
 * (k8s.io/apimachinery/pkg/util/validation), so that a 422 from the
 * sandbox reads like one from a real cluster.
 */
import type { FieldError } from './status.js';

const LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const SUBDOMAIN_FMT = `${LABEL_FMT}(\\.${LABEL_FMT})*`;
const LABEL_RE = new RegExp(`^${LABEL_FMT}$`);
const SUBDOMAIN_RE = new RegExp(`^${SUBDOMAIN_FMT}$`);
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/** How a kind's names are checked. */
export type NameRule = 'dns1123-label' | 'dns1123-subdomain';

function regexError(msg: string, fmt: string, examples: string[]): string {
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

/** Problems with `value` as a name under `rule`; empty when it is valid. */
export function nameProblems(rule: NameRule, value: string): string[] {
  const problems: string[] = [];
  if (rule === 'dns1123-label') {
    if (value.length > 63) problems.push('must be no more than 63 characters');
    if (!LABEL_RE.test(value)) {
      problems.push(SUBDOMAIN_RE.test(value) ? 'must not contain dots' : regexError(LABEL_MSG, LABEL_FMT, ['my-name', '123-abc']));
    }
  } else {
    if (value.length > 253) problems.push('must be no more than 253 characters');
    if (!SUBDOMAIN_RE.test(value)) problems.push(regexError(SUBDOMAIN_MSG, SUBDOMAIN_FMT, ['example.com']));
  }
  return problems;
}

/** The checks every object's metadata gets on create and update. */
export function validateObjectMeta(meta: Record<string, unknown>, rule: NameRule, namespaced: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const name = meta.name;
  if (typeof name !== 'string' || name === '') {
    errors.push({ type: 'FieldValueRequired', field: 'metadata.name', detail: 'name or generateName is required' });
  } else {
    for (const problem of nameProblems(rule, name)) {
      errors.push({ type: 'FieldValueInvalid', field: 'metadata.name', value: name, detail: problem });
    }
  }
  if (namespaced && (typeof meta.namespace !== 'string' || meta.namespace === '')) {
    errors.push({ type: 'FieldValueRequired', field: 'metadata.namespace', detail: '' });
  }
  for (const field of ['labels', 'annotations'] as const) {
    const map = meta[field];
    if (map === undefined || map === null) continue;
    if (typeof map !== 'object' || Array.isArray(map)) {
      errors.push({ type: 'FieldValueInvalid', field: `metadata.${field}`, value: map, detail: 'must be a map of string keys to string values' });
      continue;
    }
    for (const [key, value] of Object.entries(map as Record<string, unknown>)) {
      if (typeof value !== 'string') {
        errors.push({ type: 'FieldValueInvalid', field: `metadata.${field}.${key}`, value, detail: 'must be a string' });
      }
    }
  }
  return errors;
}
