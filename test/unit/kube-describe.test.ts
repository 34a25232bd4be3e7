/**
 * "Changed by hand" as vnf-describe reads it from metadata.managedFields
 * (infra/kubernetes/describe.ts handChanges): fields outside metadata and
 * status owned by a manager other than the instance's own.
 */
import { describe, expect, it } from 'vitest';
import { handChanges } from '../../src/infra/kubernetes/describe.js';
import type { KubeObject } from '../../src/infra/kubernetes/driver-contract.js';

const withFields = (managedFields: unknown[]): KubeObject => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'vdu1', managedFields } });
const spec = (...keys: string[]) => ({ 'f:spec': Object.fromEntries(keys.map((k) => [`f:${k}`, {}])) });

describe('handChanges', () => {
  it("ignores the instance's own managers, status writers and metadata-only writers", () => {
    const obj = withFields([
      { manager: 'vnfm', operation: 'Update', time: 'T0', fieldsV1: spec('replicas', 'template') },
      { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status', time: 'T1', fieldsV1: { 'f:status': { 'f:replicas': {} } } },
      { manager: 'kube-controller-manager', operation: 'Update', time: 'T1', fieldsV1: { 'f:metadata': { 'f:annotations': {} } } },
    ]);
    expect(handChanges(obj, new Set(['vnfm']))).toEqual([]);
  });

  it('leaves a scale (spec.replicas alone) to the replica check', () => {
    const obj = withFields([{ manager: 'kubectl', operation: 'Update', subresource: 'scale', time: 'T2', fieldsV1: spec('replicas') }]);
    expect(handChanges(obj, new Set(['vnfm']))).toEqual([]);
  });

  it('names the manager, the time and the fields of any other write', () => {
    const obj = withFields([
      { manager: 'kubectl-edit', operation: 'Update', time: '2026-03-01T10:00:00Z', fieldsV1: { ...spec('replicas', 'template'), 'f:metadata': { 'f:labels': {} } } },
      { manager: 'kubectl-client-side-apply', operation: 'Update', time: 'T3', fieldsV1: spec('a', 'b', 'c', 'd', 'e') },
      { manager: 'helm', operation: 'Update', time: 'T4', fieldsV1: spec('template') },
    ]);
    expect(handChanges(obj, new Set(['vnfm']))).toEqual([
      'changed by kubectl-edit at 2026-03-01T10:00:00Z: spec.template',
      'changed by kubectl-client-side-apply at T3: spec.a, spec.b, spec.c, +2 more',
      'changed by helm at T4: spec.template',
    ]);
    expect(handChanges(obj, new Set(['vnfm', 'helm']))).toHaveLength(2);
  });
});
