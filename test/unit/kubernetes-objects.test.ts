/**
 * What the driver sends: the instance label goes on the object, and on a
 * pod template only where the kind has one — the built-in workloads, or a
 * custom resource whose schema declares spec.template.metadata.labels.
 */
import { describe, expect, it } from 'vitest';
import { INSTANCE_LABEL, type KubeObject } from '../../src/infra/kubernetes/driver-contract.js';
import { podTemplatePath, prepareObject } from '../../src/infra/kubernetes/objects.js';

const input = { instanceId: 'inst-1', namespace: 'ns', replicas: {} };
const podTemplate = () => ({ metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'i' }] } });

describe('prepareObject', () => {
  it.each<[string, string]>([
    ['apps/v1', 'Deployment'],
    ['apps/v1', 'StatefulSet'],
    ['apps/v1', 'DaemonSet'],
    ['apps/v1', 'ReplicaSet'],
    ['batch/v1', 'Job'],
    ['v1', 'ReplicationController'],
  ])('labels the pod template of %s %s', (apiVersion, kind) => {
    const out = prepareObject({ apiVersion, kind, metadata: { name: 'w' }, spec: { template: podTemplate() } }, true, input);
    expect(out.metadata.labels).toEqual({ [INSTANCE_LABEL]: 'inst-1' });
    expect((out.spec as any).template.metadata.labels).toEqual({ app: 'a', [INSTANCE_LABEL]: 'inst-1' });
  });

  it("labels a CronJob's job template's pod template", () => {
    const out = prepareObject(
      { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cj' }, spec: { schedule: '* * * * *', jobTemplate: { spec: { template: podTemplate() } } } },
      true,
      input,
    );
    expect((out.spec as any).jobTemplate.spec.template.metadata.labels[INSTANCE_LABEL]).toBe('inst-1');
    expect((out.spec as any).jobTemplate.metadata).toBeUndefined();
  });

  it("leaves a custom resource's spec.template alone unless its schema declares the labels (OpenStackMachineTemplate has no template metadata)", () => {
    const omt: KubeObject = {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackMachineTemplate',
      metadata: { name: 'cp' },
      spec: { template: { spec: { flavor: 'm1.medium' } } },
    };
    const out = prepareObject(omt, true, input);
    expect(out.spec).toEqual({ template: { spec: { flavor: 'm1.medium' } } });
    expect(out.metadata.labels).toEqual({ [INSTANCE_LABEL]: 'inst-1' });
    // The input is not changed either.
    expect(omt.metadata.labels).toBeUndefined();
  });

  it('labels the template of a custom resource whose schema declares spec.template.metadata.labels (MachineDeployment)', () => {
    const md: KubeObject = {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'MachineDeployment',
      metadata: { name: 'md' },
      spec: { replicas: 1, template: { spec: { version: 'v1.31.6' } } },
    };
    const out = prepareObject(md, true, { ...input, replicas: { 'MachineDeployment/md': 3 } }, { templateLabels: true });
    expect((out.spec as any).template.metadata.labels).toEqual({ [INSTANCE_LABEL]: 'inst-1' });
    expect((out.spec as any).replicas).toBe(3);
  });

  it('does not take a kind of another group for a built-in workload', () => {
    expect(podTemplatePath({ apiVersion: 'example.com/v1', kind: 'Deployment' })).toBeUndefined();
    expect(podTemplatePath({ apiVersion: 'apps/v1', kind: 'Deployment' })).toBe('spec.template');
    expect(podTemplatePath({ apiVersion: 'v1', kind: 'PodTemplate' })).toBeUndefined();
  });
});
