/**
 * Creation order of the Kubernetes driver, the namespace/label/replica rules
 * applied to manifests, and label selectors built from workload selectors.
 */
import { describe, expect, it } from 'vitest';
import { INSTANCE_LABEL, type KubeObject } from '../../src/infra/kubernetes/driver-contract.js';
import { parseResourceList } from '../../src/infra/kubernetes/discovery.js';
import { checkDuplicates, checkOwnership, controlledBy, prepareObject, selectorString } from '../../src/infra/kubernetes/objects.js';
import { creationRank, forEachLimited, groupByRank, isClusterApiCluster, removalGroups, removalPhases, removalPropagation } from '../../src/infra/kubernetes/order.js';
import { ConflictError, UsageError } from '../../src/errors.js';

const obj = (kind: string, name: string, extra: Partial<KubeObject> = {}): KubeObject => ({ apiVersion: 'v1', kind, metadata: { name }, ...extra });

describe('creation order', () => {
  it('ranks namespaces, CRDs, storage, RBAC, config, services, workloads, then the rest', () => {
    const kinds = ['Namespace', 'CustomResourceDefinition', 'PersistentVolumeClaim', 'ServiceAccount', 'ConfigMap', 'Service', 'Deployment', 'HorizontalPodAutoscaler'];
    const ranks = kinds.map(creationRank);
    expect([...ranks].sort((a, b) => a - b)).toEqual(ranks);
    expect(new Set(ranks).size).toBe(kinds.length);
    expect(creationRank('MachineDeployment')).toBe(creationRank('HorizontalPodAutoscaler'));
    expect(creationRank('Secret')).toBe(creationRank('ConfigMap'));
    expect(creationRank('StatefulSet')).toBe(creationRank('Pod'));
  });

  it('groups by rank in creation order, keeping the input order inside a rank', () => {
    const input = ['Deployment/a', 'ConfigMap/b', 'Namespace/n', 'Deployment/c', 'Widget/w', 'Service/s', 'ConfigMap/d'];
    const groups = groupByRank(input, (s) => s.split('/')[0]!);
    expect(groups).toEqual([['Namespace/n'], ['ConfigMap/b', 'ConfigMap/d'], ['Service/s'], ['Deployment/a', 'Deployment/c'], ['Widget/w']]);
  });

  it('removes in the reverse order', () => {
    const created = ['Namespace/n', 'ConfigMap/b', 'ConfigMap/d', 'Service/s', 'Deployment/a', 'Deployment/c'];
    expect(removalGroups(created, (s) => s.split('/')[0]!)).toEqual([['Deployment/c', 'Deployment/a'], ['Service/s'], ['ConfigMap/d', 'ConfigMap/b'], ['Namespace/n']]);
  });

  it('terminates in two phases: what is ranked after workloads, then everything else, each in the reverse order', () => {
    const kind = (s: string) => s.split('/')[0]!;
    const created = ['Namespace/n', 'CustomResourceDefinition/c', 'ConfigMap/b', 'Service/s', 'Deployment/a', 'Cluster/x', 'ValidatingWebhookConfiguration/v'];
    expect(removalPhases(created, kind)).toEqual([
      ['ValidatingWebhookConfiguration/v', 'Cluster/x'],
      ['Deployment/a', 'Service/s', 'ConfigMap/b', 'CustomResourceDefinition/c', 'Namespace/n'],
    ]);
    // Without custom resources (or without anything else) there is one phase: every delete is sent before any wait.
    expect(removalPhases(['ConfigMap/b', 'Deployment/a'], kind)).toEqual([['Deployment/a', 'ConfigMap/b']]);
    expect(removalPhases(['Cluster/x'], kind)).toEqual([['Cluster/x']]);
    expect(removalPhases([], kind)).toEqual([]);
  });

  it('deletes a Cluster API Cluster first, on its own, then the rest of the Cluster API objects with the other custom resources', () => {
    type Ref = { apiVersion: string; kind: string; name: string };
    const ref = (apiVersion: string, kind: string, name: string): Ref => ({ apiVersion, kind, name });
    const created = [
      ref('v1', 'Secret', 'cloud'),
      ref('cluster.x-k8s.io/v1beta1', 'Cluster', 'wc'),
      ref('infrastructure.cluster.x-k8s.io/v1beta1', 'DockerCluster', 'wc'),
      ref('controlplane.cluster.x-k8s.io/v1beta1', 'KubeadmControlPlane', 'wc-cp'),
      ref('cluster.x-k8s.io/v1beta1', 'MachineDeployment', 'wc-md'),
      // Another group's kind named Cluster is a custom resource like the rest.
      ref('example.com/v1', 'Cluster', 'other'),
    ];
    const names = (phases: Ref[][]) => phases.map((p) => p.map((r) => `${r.kind}/${r.name}`));
    expect(
      names(
        removalPhases(
          created,
          (r) => r.kind,
          (r) => isClusterApiCluster(r.apiVersion, r.kind),
        ),
      ),
    ).toEqual([['Cluster/wc'], ['Cluster/other', 'MachineDeployment/wc-md', 'KubeadmControlPlane/wc-cp', 'DockerCluster/wc'], ['Secret/cloud']]);
    expect(isClusterApiCluster('cluster.x-k8s.io/v1beta2', 'Cluster')).toBe(true);
    expect(isClusterApiCluster('cluster.x-k8s.io/v1beta1', 'Machine')).toBe(false);
  });

  it('deletes workloads and custom resources in the foreground, every other built-in kind in the background', () => {
    const foreground = [
      ['apps/v1', 'Deployment'],
      ['apps/v1', 'StatefulSet'],
      ['apps/v1', 'DaemonSet'],
      ['apps/v1', 'ReplicaSet'],
      ['batch/v1', 'Job'],
      ['batch/v1', 'CronJob'],
      ['cluster.x-k8s.io/v1beta1', 'Cluster'],
      ['cluster.x-k8s.io/v1beta1', 'MachineDeployment'],
      ['example.com/v1', 'Widget'],
    ];
    for (const [apiVersion, kind] of foreground) expect(removalPropagation(apiVersion!, kind!), kind).toBe('Foreground');
    const background = [
      ['v1', 'Namespace'],
      ['apiextensions.k8s.io/v1', 'CustomResourceDefinition'],
      ['v1', 'PersistentVolumeClaim'],
      ['v1', 'ServiceAccount'],
      ['rbac.authorization.k8s.io/v1', 'RoleBinding'],
      ['v1', 'ConfigMap'],
      ['v1', 'Secret'],
      ['v1', 'Service'],
      ['v1', 'Pod'],
      ['autoscaling/v2', 'HorizontalPodAutoscaler'],
      ['coordination.k8s.io/v1', 'Lease'],
      ['admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration'],
    ];
    for (const [apiVersion, kind] of background) expect(removalPropagation(apiVersion!, kind!), kind).toBe('Background');
  });
});

describe('forEachLimited', () => {
  it('never runs more than the limit at once and keeps result order', async () => {
    let running = 0;
    let peak = 0;
    const gates: Array<() => void> = [];
    const run = forEachLimited([1, 2, 3, 4, 5], 2, async (n) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise<void>((r) => gates.push(r));
      running--;
      return n * 10;
    });
    while (gates.length > 0 || running > 0) {
      await Promise.resolve();
      gates.shift()?.();
      await new Promise((r) => setImmediate(r));
    }
    expect(await run).toEqual([10, 20, 30, 40, 50]);
    expect(peak).toBe(2);
  });

  it('starts nothing new after a failure and rethrows it once the running calls end', async () => {
    const started: number[] = [];
    await expect(
      forEachLimited([1, 2, 3, 4], 1, async (n) => {
        started.push(n);
        if (n === 2) throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(started).toEqual([1, 2]);
  });
});

describe('prepareObject', () => {
  const input = { instanceId: 'inst-1', namespace: 'cnf', replicas: { 'Deployment/vdu1': 3 } };

  it('puts namespaced objects without a namespace in the instance namespace and labels them and their pods', () => {
    const dep = obj('Deployment', 'vdu1', {
      apiVersion: 'apps/v1',
      spec: { replicas: 1, template: { metadata: { labels: { app: 'x' } }, spec: {} } },
    });
    const out = prepareObject(dep, true, input);
    expect(out.metadata.namespace).toBe('cnf');
    expect(out.metadata.labels).toEqual({ [INSTANCE_LABEL]: 'inst-1' });
    expect((out.spec as { replicas: number }).replicas).toBe(3);
    expect((out.spec as { template: { metadata: { labels: object } } }).template.metadata.labels).toEqual({ app: 'x', [INSTANCE_LABEL]: 'inst-1' });
    expect(dep.metadata.labels).toBeUndefined();
  });

  it('keeps a namespace the manifest gives, drops it from cluster-scoped kinds, and labels CronJob pods', () => {
    expect(prepareObject(obj('ConfigMap', 'c', { metadata: { name: 'c', namespace: 'other' } }), true, input).metadata.namespace).toBe('other');
    expect(prepareObject(obj('ClusterRole', 'r', { metadata: { name: 'r', namespace: 'other' } }), false, input).metadata.namespace).toBeUndefined();
    const cron = prepareObject(obj('CronJob', 'j', { apiVersion: 'batch/v1', spec: { jobTemplate: { spec: { template: { spec: {} } } } } }), true, input);
    expect(cron.spec).toMatchObject({ jobTemplate: { spec: { template: { metadata: { labels: { [INSTANCE_LABEL]: 'inst-1' } } } } } });
  });

  it('drops server-owned metadata and status so a recorded object can be sent again', () => {
    const pod = obj('Pod', 'p', { metadata: { name: 'p', uid: 'u', resourceVersion: '5', creationTimestamp: 'x' }, status: { phase: 'Running' } });
    const out = prepareObject(pod, true, input);
    expect(out.metadata).toEqual({ name: 'p', namespace: 'cnf', labels: { [INSTANCE_LABEL]: 'inst-1' } });
    expect(out.status).toBeUndefined();
  });
});

describe('ownership and duplicates', () => {
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'c', namespace: 'cnf' };

  it('accepts an object labelled with the instance and refuses any other, naming it', () => {
    expect(() => checkOwnership(obj('ConfigMap', 'c', { metadata: { name: 'c', labels: { [INSTANCE_LABEL]: 'inst-1' } } }), ref, 'inst-1')).not.toThrow();
    expect(() => checkOwnership(obj('ConfigMap', 'c'), ref, 'inst-1')).toThrow(ConflictError);
    expect(() => checkOwnership(obj('ConfigMap', 'c'), ref, 'inst-1')).toThrow(/ConfigMap c in namespace cnf already exists and belongs to someone else/);
    expect(() => checkOwnership(obj('ConfigMap', 'c', { metadata: { name: 'c', labels: { [INSTANCE_LABEL]: 'inst-2' } } }), ref, 'inst-1')).toThrow(/VNF instance inst-2/);
  });

  it('refuses two manifests naming one object', () => {
    const a = { ...obj('ConfigMap', 'c'), metadata: { name: 'c', namespace: 'n' } };
    expect(() => checkDuplicates([a, structuredClone(a)])).toThrow(UsageError);
    expect(() => checkDuplicates([a, { ...a, metadata: { name: 'c', namespace: 'm' } }])).not.toThrow();
  });
});

describe('selectors and owners', () => {
  it('turns a LabelSelector into the query syntax', () => {
    expect(
      selectorString({
        matchLabels: { app: 'web', tier: 'front' },
        matchExpressions: [
          { key: 'env', operator: 'In', values: ['a', 'b'] },
          { key: 'x', operator: 'NotIn', values: ['c'] },
          { key: 'y', operator: 'Exists' },
          { key: 'z', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('app=web,tier=front,env in (a,b),x notin (c),y,!z');
    expect(selectorString(undefined)).toBeUndefined();
  });

  it('follows controller owner references by uid', () => {
    const pod = obj('Pod', 'p', { metadata: { name: 'p', ownerReferences: [{ uid: 'rs-1', controller: true }] } });
    expect(controlledBy(pod, new Set(['rs-1']))).toBe(true);
    expect(controlledBy(pod, new Set(['rs-2']))).toBe(false);
  });
});

describe('discovery lists', () => {
  it('folds subresources into their resource and indexes by kind', () => {
    const kinds = parseResourceList('apps/v1', {
      resources: [
        { name: 'deployments', kind: 'Deployment', namespaced: true, verbs: ['create', 'get', 'patch'] },
        { name: 'deployments/scale', kind: 'Scale', namespaced: true },
        { name: 'deployments/status', kind: 'Deployment', namespaced: true },
      ],
    });
    const dep = kinds.get('Deployment')!;
    expect(dep).toMatchObject({ group: 'apps', version: 'v1', plural: 'deployments', namespaced: true });
    expect([...dep.subresources].sort()).toEqual(['scale', 'status']);
    expect(kinds.has('Scale')).toBe(false);
  });
});
