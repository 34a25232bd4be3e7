import { describe, expect, it } from 'vitest';
import { applySchemaDefaults, pruneUnknownFields, validateAgainstSchema, type StructuralSchema } from '../../src/sandbox/schema.js';

const schema: StructuralSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer', default: 1 },
        selector: { type: 'object', nullable: false, properties: { matchLabels: { type: 'object', additionalProperties: { type: 'string' } } } },
        ports: {
          type: 'array',
          maxItems: 2,
          items: { type: 'object', properties: { port: { type: 'integer', 'x-kubernetes-int-or-string': true }, protocol: { type: 'string', default: 'TCP' } } },
        },
        raw: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        empty: { type: 'object' },
        name: { type: 'string', maxLength: 3, minLength: 1 },
      },
    },
  },
};

describe('structural schemas', () => {
  it('drops non-nullable nulls, defaults (also in list items), prunes unknown fields', () => {
    const obj: any = {
      apiVersion: 'x/v1',
      kind: 'X',
      metadata: { name: 'a', whatever: 1 },
      spec: { selector: null, ports: [{ port: 'http' }], raw: { a: { b: 1 } }, empty: { gone: 1 }, bogus: 1 },
      top: 1,
    };
    applySchemaDefaults(schema, obj);
    pruneUnknownFields(schema, obj, true);
    expect(obj).toEqual({
      apiVersion: 'x/v1',
      kind: 'X',
      metadata: { name: 'a', whatever: 1 },
      spec: { replicas: 1, ports: [{ port: 'http', protocol: 'TCP' }], raw: { a: { b: 1 } }, empty: {} },
    });
  });

  it('validates types, int-or-string, lengths and item counts with the API server wording', () => {
    const errors = validateAgainstSchema(schema, { spec: { replicas: 1.5, ports: [{ port: true }, {}, {}], name: 'long' } });
    const text = errors.map((e) => `${e.field}|${e.type}|${e.detail}`);
    // The declared fields in sorted order; a list's items before its own count.
    expect(text).toEqual([
      'spec.name|FieldValueTooLong|may not be more than 3 bytes',
      'spec.ports[0].port|FieldValueTypeInvalid|spec.ports[0].port in body must be of type integer,string: "boolean"',
      'spec.ports|FieldValueTooMany|must have at most 2 items',
      'spec.replicas|FieldValueTypeInvalid|spec.replicas in body must be of type integer: "number"',
    ]);
    expect(validateAgainstSchema(schema, { spec: { replicas: 2, ports: [{ port: 80 }, { port: 'http' }] } })).toEqual([]);
  });

  it('reports every broken rule as the API server orders them: a string its first failure, an enum after the value rules, required fields last', () => {
    const rules: StructuralSchema = {
      type: 'object',
      required: ['zone'],
      properties: {
        zone: { type: 'string' },
        mode: { type: 'string', enum: ['slow'], minLength: 5 },
        label: { type: 'string', minLength: 12, pattern: '^[a-z]+$' },
        count: { type: 'integer', minimum: 1, maximum: -1 },
        owner: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
      },
    };
    const errors = validateAgainstSchema(rules, { mode: 'fast', label: 'Bad_1', count: 0, owner: {} }, 'spec');
    expect(errors.map((e) => `${e.field}|${e.type}|${e.detail}`)).toEqual([
      'spec.count|FieldValueInvalid|spec.count in body should be greater than or equal to 1',
      'spec.count|FieldValueInvalid|spec.count in body should be less than or equal to -1',
      'spec.label|FieldValueInvalid|spec.label in body should be at least 12 chars long',
      'spec.mode|FieldValueInvalid|spec.mode in body should be at least 5 chars long',
      'spec.mode|FieldValueNotSupported|supported values: "slow"',
      'spec.owner.name|FieldValueRequired|',
      'spec.zone|FieldValueRequired|',
    ]);
  });
});
