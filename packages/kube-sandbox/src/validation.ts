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
const LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/** How a kind's names are checked. */
export type NameRule = 'dns1123-label' | 'dns1123-subdomain' | 'path-segment';

function regexError(msg: string, fmt: string, examples: string[]): string {
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

/** Problems with `value` as a name under `rule`; empty when it is valid. */
export function nameProblems(rule: NameRule, value: string): string[] {
  const problems: string[] = [];
  if (rule === 'path-segment') {
    if (value === '.' || value === '..') problems.push(`may not be '${value}'`);
    for (const bad of ['/', '%']) if (value.includes(bad)) problems.push(`may not contain '${bad}'`);
    return problems;
  }
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

const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME_RE = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const QUALIFIED_NAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);
const LABEL_VALUE_MSG = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** Largest total size of an object's annotations (keys and values), in bytes. */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/**
 * Problems with a label or annotation key: an optional DNS subdomain
 * prefix and `/`, then a name of at most 63 characters
 * (validation.IsQualifiedName).
 */
export function qualifiedNameProblems(value: string): string[] {
  const problems: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) problems.push('prefix part must be non-empty');
    else for (const p of nameProblems('dns1123-subdomain', prefix)) problems.push(`prefix part ${p}`);
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, ['MyName', 'my.name', '123-abc'])} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) problems.push('name part must be non-empty');
  else if (name.length > 63) problems.push('name part must be no more than 63 characters');
  if (!QUALIFIED_NAME_RE.test(name)) problems.push(`name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, ['MyName', 'my.name', '123-abc'])}`);
  return problems;
}

/** Problems with a label value: empty, or at most 63 characters of a restricted alphabet (validation.IsValidLabelValue). */
export function labelValueProblems(value: string): string[] {
  const problems: string[] = [];
  if (value.length > 63) problems.push('must be no more than 63 characters');
  if (!LABEL_VALUE_RE.test(value)) problems.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, ['MyValue', 'my_value', '12345']));
  return problems;
}

/** A map's entries in a stable order (the API server walks a Go map; tests should not depend on its order). */
function sortedEntries(map: Record<string, unknown>): [string, unknown][] {
  return Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
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
    let size = 0;
    for (const [key, value] of sortedEntries(map as Record<string, unknown>)) {
      if (typeof value !== 'string') {
        errors.push({ type: 'FieldValueInvalid', field: `metadata.${field}.${key}`, value, detail: 'must be a string' });
        continue;
      }
      if (field === 'labels') {
        for (const problem of qualifiedNameProblems(key)) errors.push({ type: 'FieldValueInvalid', field: 'metadata.labels', value: key, detail: problem });
        for (const problem of labelValueProblems(value)) errors.push({ type: 'FieldValueInvalid', field: 'metadata.labels', value, detail: problem });
      } else {
        for (const problem of qualifiedNameProblems(key.toLowerCase())) errors.push({ type: 'FieldValueInvalid', field: 'metadata.annotations', value: key, detail: problem });
        size += key.length + Buffer.byteLength(value);
      }
    }
    if (size > TOTAL_ANNOTATION_SIZE_LIMIT) {
      errors.push({ type: 'FieldValueTooLong', field: 'metadata.annotations', detail: `must have at most ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes` });
    }
  }
  return errors;
}
