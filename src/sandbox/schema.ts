/**
 * Structural schemas of CustomResourceDefinitions (`openAPIV3Schema`), as
 * the API server applies them to custom resources: nulls of non-nullable
 * fields dropped, then defaults filled in, then unknown fields pruned (kept
 * under `x-kubernetes-preserve-unknown-fields`), then validation with the
 * server's wording (`spec.replicas in body must be of type integer:
 * "string"`). CEL rules (`x-kubernetes-validations`), `format`, and the
 * logical junctors (`allOf`/`anyOf`/`oneOf`/`not`) are not evaluated.
 */
import type { FieldError } from './status.js';

/** The parts of an OpenAPI v3 schema the sandbox acts on. */
export interface StructuralSchema {
  type?: string;
  properties?: Record<string, StructuralSchema>;
  additionalProperties?: StructuralSchema | boolean;
  items?: StructuralSchema;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
}

type Json = unknown;
type JsonObject = Record<string, Json>;

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The object keys a root schema never prunes: the server owns their shape. */
const ROOT_KEEP = new Set(['apiVersion', 'kind', 'metadata']);

function childSchema(schema: StructuralSchema, key: string): StructuralSchema | undefined {
  const byName = schema.properties?.[key];
  if (byName) return byName;
  return isObject(schema.additionalProperties) ? (schema.additionalProperties as StructuralSchema) : undefined;
}

/**
 * Drops nulls the schema does not allow (so that a default can take their
 * place) and fills defaults, depth first, as the decoder of a custom
 * resource does before anything else sees it.
 */
export function applySchemaDefaults(schema: StructuralSchema, value: Json): void {
  if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      const child = childSchema(schema, k);
      if (v === null && child && !child.nullable) delete value[k];
    }
    for (const [k, child] of Object.entries(schema.properties ?? {})) {
      if (value[k] === undefined && child.default !== undefined) value[k] = structuredClone(child.default);
    }
    for (const [k, v] of Object.entries(value)) {
      const child = childSchema(schema, k);
      if (child) applySchemaDefaults(child, v);
    }
  } else if (Array.isArray(value) && schema.items) {
    for (let i = value.length - 1; i >= 0; i--) {
      if (value[i] === null && !schema.items.nullable && schema.items.default !== undefined) value[i] = structuredClone(schema.items.default);
    }
    for (const item of value) applySchemaDefaults(schema.items, item);
  }
}

/** Removes the fields the schema does not know. `root` keeps apiVersion, kind and metadata. */
export function pruneUnknownFields(schema: StructuralSchema, value: Json, root = false): void {
  if (isObject(value)) {
    const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
    const embedded = root || schema['x-kubernetes-embedded-resource'] === true;
    for (const [k, v] of Object.entries(value)) {
      if (embedded && ROOT_KEEP.has(k)) continue;
      const child = childSchema(schema, k);
      if (child) pruneUnknownFields(child, v);
      else if (!preserve && schema.additionalProperties !== true) delete value[k];
    }
  } else if (Array.isArray(value) && schema.items) {
    for (const item of value) pruneUnknownFields(schema.items, item);
  }
}

/**
 * The paths (`.spec.color`) of fields the schema does not declare — what
 * server-side apply refuses to build a typed object from, where a create or
 * an update would prune them silently.
 */
export function undeclaredFields(schema: StructuralSchema, value: Json, root = false, path = ''): string[] {
  const found: string[] = [];
  if (isObject(value)) {
    const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
    const embedded = root || schema['x-kubernetes-embedded-resource'] === true;
    for (const [k, v] of Object.entries(value)) {
      if (embedded && ROOT_KEEP.has(k)) continue;
      const child = childSchema(schema, k);
      if (child) found.push(...undeclaredFields(child, v, false, `${path}.${k}`));
      else if (!preserve && schema.additionalProperties !== true) found.push(`${path}.${k}`);
    }
  } else if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => found.push(...undeclaredFields(schema.items!, item, false, `${path}[${i}]`)));
  }
  return found;
}

function jsonType(value: Json): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(schema: StructuralSchema, value: Json): boolean {
  if (schema['x-kubernetes-int-or-string']) return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));
  const actual = jsonType(value);
  switch (schema.type) {
    case undefined:
      return true;
    case 'number':
      return actual === 'number' || actual === 'integer';
    default:
      return actual === schema.type;
  }
}

function fieldPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

/** Validates `value` against `schema`; `path` names it as field errors do (`spec.replicas`). */
export function validateAgainstSchema(schema: StructuralSchema, value: Json, path = ''): FieldError[] {
  const errors: FieldError[] = [];
  const name = path || '<root>';
  if (value === null) {
    if (!schema.nullable && schema.type !== undefined) {
      errors.push({ type: 'FieldValueTypeInvalid', field: path, value: 'null', detail: `${name} in body must be of type ${schema.type}: "null"` });
    }
    return errors;
  }
  if (!typeMatches(schema, value)) {
    const wanted = schema['x-kubernetes-int-or-string'] ? 'integer,string' : schema.type;
    errors.push({ type: 'FieldValueTypeInvalid', field: path, value: jsonType(value), detail: `${name} in body must be of type ${wanted}: "${jsonType(value)}"` });
    return errors;
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum)) {
      errors.push({
        type: 'FieldValueInvalid',
        field: path,
        value,
        detail: `${name} in body should be greater than ${schema.exclusiveMinimum ? '' : 'or equal to '}${schema.minimum}`,
      });
    }
    if (schema.maximum !== undefined && (schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum)) {
      errors.push({
        type: 'FieldValueInvalid',
        field: path,
        value,
        detail: `${name} in body should be less than ${schema.exclusiveMaximum ? '' : 'or equal to '}${schema.maximum}`,
      });
    }
  }
  // A string reports its first failure only (length, then pattern), as the server's string validator returns on it.
  if (typeof value === 'string') {
    if (schema.maxLength !== undefined && [...value].length > schema.maxLength) {
      errors.push({ type: 'FieldValueTooLong', field: path, value, detail: `may not be more than ${schema.maxLength} bytes` });
    } else if (schema.minLength !== undefined && [...value].length < schema.minLength) {
      errors.push({ type: 'FieldValueInvalid', field: path, value, detail: `${name} in body should be at least ${schema.minLength} chars long` });
    } else if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) {
      errors.push({ type: 'FieldValueInvalid', field: path, value, detail: `${name} in body should match '${schema.pattern}'` });
    }
  }
  if (Array.isArray(value)) {
    if (schema.items) value.forEach((item, i) => errors.push(...validateAgainstSchema(schema.items!, item, fieldPath(path, i))));
    if (schema.minItems !== undefined && value.length < schema.minItems) {
      errors.push({ type: 'FieldValueInvalid', field: path, value: value.length, detail: `${name} in body should have at least ${schema.minItems} items` });
    }
    if (schema.maxItems !== undefined && value.length > schema.maxItems) {
      errors.push({ type: 'FieldValueTooMany', field: path, value: value.length, detail: `must have at most ${schema.maxItems} items` });
    }
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    errors.push({ type: 'FieldValueNotSupported', field: path, value, detail: `supported values: ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}` });
  }
  if (isObject(value)) errors.push(...validateObject(schema, value, path, name));
  return errors;
}

/**
 * An object's own rules, then its fields, then its required ones. The
 * server walks the declared properties in the order of a Go map built
 * from the stored CRD (whose keys are sorted), starting at a random one:
 * every answer is a rotation of the sorted order, and the sandbox gives
 * the one that starts at the first.
 */
function validateObject(schema: StructuralSchema, value: JsonObject, path: string, name: string): FieldError[] {
  const errors: FieldError[] = [];
  const count = Object.keys(value).length;
  if (schema.minProperties !== undefined && count < schema.minProperties) {
    errors.push({ type: 'FieldValueInvalid', field: path, value: count, detail: `${name} in body should have at least ${schema.minProperties} properties` });
  }
  if (schema.maxProperties !== undefined && count > schema.maxProperties) {
    errors.push({ type: 'FieldValueTooMany', field: path, value: count, detail: `must have at most ${schema.maxProperties} items` });
  }
  const declared = Object.keys(schema.properties ?? {}).sort();
  const others = Object.keys(value)
    .filter((k) => !schema.properties?.[k])
    .sort();
  for (const k of [...declared, ...others]) {
    if (value[k] === undefined || (path === '' && ROOT_KEEP.has(k))) continue;
    const child = childSchema(schema, k);
    if (child) errors.push(...validateAgainstSchema(child, value[k], fieldPath(path, k)));
  }
  for (const req of schema.required ?? []) {
    if (value[req] === undefined) errors.push({ type: 'FieldValueRequired', field: fieldPath(path, req), detail: '' });
  }
  return errors;
}
