/**
 * The file each object of a package's definition files came from, which the
 * Kubernetes driver names when the API server refuses the object; a review
 * (TokenReview, the access reviews) has no name and is known by its spec.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceKey } from '../../src/infra/kubernetes/package-kinds.js';
import { readPackageObjects } from '../../src/lcm/package-content.js';

describe('package sources', () => {
  it('map named objects by kind and name, unnamed reviews by kind and spec, each to its file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vnfm-sources-'));
    mkdirSync(join(dir, 'Files/kubernetes'), { recursive: true });
    writeFileSync(join(dir, 'Files/kubernetes/config.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: "1"\n');
    writeFileSync(
      join(dir, 'Files/kubernetes/reviews.yaml'),
      [
        'apiVersion: authorization.k8s.io/v1\nkind: SubjectAccessReview\nspec:\n  user: alice\n  resourceAttributes:\n    verb: get\n    resource: pods\n',
        'apiVersion: authorization.k8s.io/v1\nkind: SubjectAccessReview\nspec:\n  user: bob\n  resourceAttributes:\n    verb: list\n    resource: pods\n',
      ].join('---\n'),
    );
    writeFileSync(join(dir, 'Files/kubernetes/token.yaml'), 'apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec:\n  token: not-a-real-token\n');
    const { objects, sources } = await readPackageObjects(dir, ['Files/kubernetes/config.yaml', 'Files/kubernetes/reviews.yaml', 'Files/kubernetes/token.yaml']);
    expect(objects.map((o) => o.kind)).toEqual(['ConfigMap', 'SubjectAccessReview', 'SubjectAccessReview', 'TokenReview']);
    expect(objects.map((o) => sources[sourceKey(o)])).toEqual([
      'Files/kubernetes/config.yaml',
      'Files/kubernetes/reviews.yaml',
      'Files/kubernetes/reviews.yaml',
      'Files/kubernetes/token.yaml',
    ]);
    // Two reviews of one kind are told apart by their specs.
    expect(sourceKey(objects[1]!)).not.toBe(sourceKey(objects[2]!));
    expect(sourceKey(objects[0]!)).toBe('/ConfigMap/settings');
  });
});
