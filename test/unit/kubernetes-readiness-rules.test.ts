/**
 * Readiness of custom resources: the generic rule (conditions, phase,
 * status.ready, presence) and the operator's per-kind rules from
 * additionalParams.vnfm_readiness, with the checks of their shape.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/infra/kubernetes/driver-contract.js';
import { kindsDefinedBy } from '../../src/infra/kubernetes/package-kinds.js';
import { assessReadiness } from '../../src/infra/kubernetes/readiness.js';
import { readinessOverrideProblems, ruleFor, valueAt, type ReadinessOverrides } from '../../src/infra/kubernetes/readiness-rules.js';

const cr = (kind: string, status: unknown, generation = 1, apiVersion = 'cluster.x-k8s.io/v1beta1'): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name: 'c', generation },
  ...(status === undefined ? {} : { status }),
});

describe('generic readiness of custom resources', () => {
  it.each<[string, KubeObject, boolean, RegExp]>([
    ['no status: present is ready', cr('OpenStackMachineTemplate', undefined), true, /ready/],
    ['Ready condition True', cr('Cluster', { conditions: [{ type: 'Ready', status: 'True' }], observedGeneration: 1 }), true, /ready/],
    ['Ready condition True for an old generation', cr('Cluster', { conditions: [{ type: 'Ready', status: 'True' }], observedGeneration: 1 }, 2), false, /generation 2/],
    [
      'Available False with a reason',
      cr('MachineDeployment', { conditions: [{ type: 'Available', status: 'False', reason: 'WaitingForAvailableMachines' }] }),
      false,
      /Available \(WaitingForAvailableMachines/,
    ],
    ['phase Provisioning', cr('Cluster', { phase: 'Provisioning' }), false, /phase Provisioning/],
    ['phase Provisioned', cr('Cluster', { phase: 'Provisioned' }), true, /ready/],
    ['phase Failed', cr('Machine', { phase: 'Failed' }), false, /failed/],
    ['status.ready false', cr('OpenStackCluster', { ready: false }), false, /status.ready/],
    ['status.ready true', cr('OpenStackCluster', { ready: true }), true, /ready/],
  ])('%s', (_name, obj, ready, message) => {
    const r = assessReadiness(obj);
    expect(r.ready).toBe(ready);
    expect(r.message).toMatch(message);
  });
});

describe('per-kind rules', () => {
  const rules: ReadinessOverrides = {
    'cluster.x-k8s.io/Cluster': { jsonPath: '.status.phase', values: ['Provisioned'], failedValues: ['Failed'] },
    'controlplane.cluster.x-k8s.io/KubeadmControlPlane': { condition: 'Available' },
    KubevirtCluster: { present: true },
    'infrastructure.cluster.x-k8s.io/OpenStackCluster': { jsonPath: '{.status.ready}' },
  };

  it('picks the rule by group/Kind, else by Kind', () => {
    expect(ruleFor(rules, cr('Cluster', {}))).toEqual(rules['cluster.x-k8s.io/Cluster']);
    expect(ruleFor(rules, cr('Cluster', {}, 1, 'other.example.com/v1'))).toBeUndefined();
    expect(ruleFor(rules, cr('KubevirtCluster', {}, 1, 'infrastructure.cluster.x-k8s.io/v1alpha1'))).toEqual({ present: true });
  });

  it('reads a field path, a condition, or presence, and overrides the generic rule', () => {
    // Generically ready (Ready True), but the rule wants phase Provisioned.
    const provisioning = cr('Cluster', { phase: 'Provisioning', conditions: [{ type: 'Ready', status: 'True' }] });
    expect(assessReadiness(provisioning, rules)).toMatchObject({ ready: false, message: 'waiting for .status.phase to be "Provisioned" (now "Provisioning")' });
    expect(assessReadiness(cr('Cluster', { phase: 'Provisioned' }), rules).ready).toBe(true);
    expect(assessReadiness(cr('Cluster', { phase: 'Failed' }), rules).failed).toMatch(/.status.phase is "Failed"/);
    const kcp = (status: string, observed = 1) =>
      cr('KubeadmControlPlane', { conditions: [{ type: 'Available', status, observedGeneration: observed }] }, 1, 'controlplane.cluster.x-k8s.io/v1beta1');
    expect(assessReadiness(kcp('False'), rules).message).toBe('waiting for condition Available (now False)');
    expect(assessReadiness(kcp('True'), rules).ready).toBe(true);
    expect(assessReadiness({ ...kcp('True'), metadata: { name: 'c', generation: 2 } }, rules).message).toMatch(/generation 2/);
    expect(assessReadiness(cr('KubevirtCluster', { phase: 'Pending' }, 1, 'infrastructure.cluster.x-k8s.io/v1alpha1'), rules).ready).toBe(true);
    expect(assessReadiness(cr('OpenStackCluster', { ready: true }, 1, 'infrastructure.cluster.x-k8s.io/v1beta1'), rules).ready).toBe(true);
  });

  it('follows list indexes in paths', () => {
    expect(valueAt({ status: { conditions: [{ status: 'True' }] } }, '.status.conditions[0].status')).toBe('True');
    expect(valueAt({ status: {} }, 'status.conditions[3].status')).toBeUndefined();
  });

  it.each<[string, unknown, RegExp]>([
    ['not an object', ['Ready'], /must be an object/],
    ['a bad key', { 'cluster.x-k8s.io/cluster': { present: true } }, /is not <group>\/<Kind>/],
    ['two kinds of rule', { Cluster: { condition: 'Ready', present: true } }, /exactly one of condition, jsonPath or present \(it has condition and present\)/],
    ['no rule', { Cluster: {} }, /exactly one .* \(it has none\)/],
    ['an unknown field', { Cluster: { condition: 'Ready', status: 'True' } }, /unknown field status/],
    ['a bad path', { Cluster: { jsonPath: 'status..phase' } }, /is not a field path/],
    ['values without jsonPath', { Cluster: { condition: 'Ready', values: ['x'] } }, /applies to jsonPath only/],
    ['empty values', { Cluster: { jsonPath: '.status.phase', values: [] } }, /non-empty list/],
  ])('refuses %s', (_name, value, problem) => {
    const problems = readinessOverrideProblems(value);
    expect(problems.map(([, p]) => p).join('\n')).toMatch(problem);
  });

  it('accepts the documented shapes', () => {
    expect(readinessOverrideProblems(rules)).toEqual([]);
  });
});

describe('kinds a package defines', () => {
  it('reads group, kind, scope, served versions and the scale subresource from CRDs', () => {
    const crd: KubeObject = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'machinedeployments.cluster.x-k8s.io' },
      spec: {
        group: 'cluster.x-k8s.io',
        scope: 'Namespaced',
        names: { kind: 'MachineDeployment', plural: 'machinedeployments' },
        versions: [
          { name: 'v1alpha4', served: false, storage: false },
          { name: 'v1beta1', served: true, storage: true, subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } } },
        ],
      },
    };
    const kinds = kindsDefinedBy([crd]);
    const md = kinds.get('cluster.x-k8s.io/MachineDeployment')!;
    expect(md).toMatchObject({ crdName: 'machinedeployments.cluster.x-k8s.io', plural: 'machinedeployments', namespaced: true });
    expect(md.versions.get('v1beta1')).toEqual({ served: true, storage: true, scale: true, templateLabels: false });
    expect(md.versions.get('v1alpha4')).toEqual({ served: false, storage: false, scale: false, templateLabels: false });
  });

  it('says which versions declare spec.template.metadata.labels (a MachineDeployment does, an OpenStackMachineTemplate does not)', () => {
    const props = (p: Record<string, unknown>) => ({ type: 'object', properties: p });
    const version = (name: string, template: unknown) => ({ name, served: true, storage: name === 'v1beta1', schema: { openAPIV3Schema: props({ spec: props({ template }) }) } });
    const crd: KubeObject = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'Widget', plural: 'widgets' },
        versions: [
          version('v1beta1', props({ metadata: props({ labels: { type: 'object', additionalProperties: { type: 'string' } } }), spec: props({}) })),
          version('v1alpha1', props({ spec: props({ flavor: { type: 'string' } }) })),
          version('v1alpha2', props({ metadata: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } })),
        ],
      },
    };
    const versions = kindsDefinedBy([crd]).get('example.com/Widget')!.versions;
    expect(versions.get('v1beta1')!.templateLabels).toBe(true);
    expect(versions.get('v1alpha1')!.templateLabels).toBe(false);
    expect(versions.get('v1alpha2')!.templateLabels).toBe(false);
  });
});
