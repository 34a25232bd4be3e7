import { describe, expect, test } from 'vitest';
import { lineOf, parseYaml, splitYamlDocuments } from '../../src/vnfd/yaml-source.js';

const DOC = `tosca_definitions_version: tosca_simple_yaml_1_2
# a comment with name: inside
topology_template:
  node_templates:
    VNF:
      type: x.VNF
      properties:
        name: not-this-one
    VDU1:
      type: tosca.nodes.nfv.Vdu.Compute
      properties:
        description: first
        name: web
  policies:
  - scaling_aspects:
      type: tosca.policies.nfv.ScalingAspects
  -   "quoted_policy":
        targets: [ VDU1 ]
        type: t
`;

describe('lineOf', () => {
  test.each([
    [['topology_template'], 3],
    [['topology_template', 'node_templates', 'VDU1'], 9],
    [['topology_template', 'node_templates', 'VDU1', 'properties', 'name'], 13],
    [['topology_template', 'node_templates', 'VNF', 'properties', 'name'], 8],
    // List items are stepped through, at the parent's column or deeper, quoted or not.
    [['topology_template', 'policies', 'scaling_aspects', 'type'], 16],
    [['topology_template', 'policies', 'quoted_policy', 'targets'], 18],
    [['topology_template', 'policies', 'quoted_policy', 'type'], 19],
    // Missing tails fall back to the deepest ancestor found; a missing head finds nothing.
    [['topology_template', 'node_templates', 'VDU1', 'artifacts'], 9],
    [['nope'], undefined],
  ] as const)('%j → %s', (path, expected) => {
    expect(lineOf(DOC, path)).toBe(expected);
  });

  test('a grandchild with the sought name is not taken for the child', () => {
    const text = 'a:\n  b:\n    c: 1\n  c: 2\n';
    expect(lineOf(text, ['a', 'c'])).toBe(4);
  });

  test('the search stays inside the parent block', () => {
    const text = 'a:\n  x: 1\nb:\n  c: 2\n';
    expect(lineOf(text, ['a', 'c'])).toBe(1);
  });
});

describe('splitYamlDocuments', () => {
  test('keeps each document with the file line it starts on', () => {
    const text = 'a: 1\n---\n# only a comment\n---\n\nb: 2\n...\n--- \nc: 3\n';
    expect(splitYamlDocuments(text).map((d) => [d.startLine, d.firstLine, parseYaml(d.text, 'f').ok])).toEqual([
      [1, 1, true],
      [4, 6, true],
      [8, 9, true],
    ]);
  });
});

describe('parseYaml', () => {
  test('a syntax error carries the line, shifted by the offset', () => {
    const r = parseYaml('a: 1\nb: [\n', 'x.yaml', 10);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.finding).toMatchObject({ code: 'yaml-syntax', file: 'x.yaml', line: expect.any(Number) });
    if (!r.ok) expect(r.finding.line).toBeGreaterThan(10);
  });

  test('deep nesting is a bounds finding, not a crash', () => {
    const r = parseYaml('['.repeat(200_000), 'deep.yaml');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(['yaml-bounds', 'yaml-syntax']).toContain(r.finding.code);
  });
});
