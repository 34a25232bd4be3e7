/**
 * Readiness per kind, as the Kubernetes driver judges it on each watch event.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/infra/kubernetes/driver-contract.js';
import { assessReadiness } from '../../src/infra/kubernetes/readiness.js';

const o = (kind: string, spec: unknown, status: unknown, generation?: number, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'x/v1',
  kind,
  metadata: { name: 'n', ...(generation === undefined ? {} : { generation }), ...extra },
  ...(spec === undefined ? {} : { spec }),
  ...(status === undefined ? {} : { status }),
});

const cond = (type: string, status: string, more: Record<string, unknown> = {}) => ({ type, status, ...more });

type Case = [string, KubeObject, boolean, string | RegExp];

const cases: Case[] = [
  ['Deployment before the controller saw it', o('Deployment', { replicas: 2 }, {}, 1), false, 'waiting for the controller to observe generation 1'],
  [
    'Deployment with 1 of 2 ready',
    o('Deployment', { replicas: 2 }, { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 1, availableReplicas: 1 }, 1),
    false,
    'waiting for 1/2 replicas ready',
  ],
  [
    'Deployment mid-rollout with old pods',
    o('Deployment', { replicas: 2 }, { observedGeneration: 2, replicas: 3, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 }, 2),
    false,
    'waiting for 1 old replicas to go',
  ],
  ['Deployment ready', o('Deployment', { replicas: 2 }, { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 }, 1), true, 'ready'],
  ['Deployment scaled to 0', o('Deployment', { replicas: 0 }, { observedGeneration: 3 }, 3), true, 'ready'],
  [
    'Deployment with an old observed generation',
    o('Deployment', { replicas: 1 }, { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 }, 2),
    false,
    /generation 2/,
  ],
  ['StatefulSet 2/3', o('StatefulSet', { replicas: 3 }, { observedGeneration: 1, replicas: 2, readyReplicas: 2 }, 1), false, 'waiting for 2/3 replicas ready'],
  [
    'StatefulSet ready',
    o('StatefulSet', { replicas: 3 }, { observedGeneration: 1, replicas: 3, readyReplicas: 3, updatedReplicas: 3, currentRevision: 'a', updateRevision: 'a' }, 1),
    true,
    'ready',
  ],
  [
    'StatefulSet mid-update',
    o('StatefulSet', { replicas: 1 }, { observedGeneration: 2, replicas: 1, readyReplicas: 1, updatedReplicas: 1, currentRevision: 'a', updateRevision: 'b' }, 2),
    false,
    /rolling update/,
  ],
  ['ReplicaSet ready', o('ReplicaSet', { replicas: 2 }, { observedGeneration: 1, replicas: 2, readyReplicas: 2, availableReplicas: 2 }, 1), true, 'ready'],
  ['ReplicaSet surplus', o('ReplicaSet', { replicas: 1 }, { observedGeneration: 1, replicas: 2, readyReplicas: 2, availableReplicas: 2 }, 1), false, /2 replicas to become 1/],
  ['DaemonSet 1/2', o('DaemonSet', {}, { observedGeneration: 1, desiredNumberScheduled: 2, numberReady: 1, updatedNumberScheduled: 2 }, 1), false, 'waiting for 1/2 pods ready'],
  ['DaemonSet ready', o('DaemonSet', {}, { observedGeneration: 1, desiredNumberScheduled: 2, numberReady: 2, updatedNumberScheduled: 2, numberAvailable: 2 }, 1), true, 'ready'],
  ['Pod pending', o('Pod', {}, { phase: 'Pending' }), false, 'waiting for the pod to run (phase Pending)'],
  ['Pod running, not ready', o('Pod', {}, { phase: 'Running', conditions: [cond('Ready', 'False')] }), false, 'waiting for the pod to be ready'],
  [
    'Pod pending, its image not pulled',
    o('Pod', {}, { phase: 'Pending', containerStatuses: [{ name: 'web', state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "r.invalid/a:1"' } } }] }),
    false,
    'waiting for the pod to run (phase Pending; container web ImagePullBackOff: Back-off pulling image "r.invalid/a:1")',
  ],
  [
    'Pod pending, its containers being created',
    o('Pod', {}, { phase: 'Pending', containerStatuses: [{ name: 'web', state: { waiting: { reason: 'ContainerCreating' } } }] }),
    false,
    'waiting for the pod to run (phase Pending)',
  ],
  [
    'Pod pending on an init container that cannot start',
    o(
      'Pod',
      {},
      {
        phase: 'Pending',
        initContainerStatuses: [{ name: 'setup', state: { waiting: { reason: 'CreateContainerConfigError', message: 'configmap "cfg" not found' } } }],
        containerStatuses: [{ name: 'web', state: { waiting: { reason: 'PodInitializing' } } }],
      },
    ),
    false,
    'waiting for the pod to run (phase Pending; container setup CreateContainerConfigError: configmap "cfg" not found)',
  ],
  [
    'Pod running, a container crash-looping',
    o(
      'Pod',
      {},
      {
        phase: 'Running',
        conditions: [cond('Ready', 'False')],
        containerStatuses: [{ name: 'side', state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container=side' } } }],
      },
    ),
    false,
    'waiting for the pod to be ready (container side CrashLoopBackOff: back-off 40s restarting failed container=side)',
  ],
  ['Pod ready', o('Pod', {}, { phase: 'Running', conditions: [cond('Ready', 'True')] }), true, 'ready'],
  ['Job running', o('Job', { completions: 2 }, { succeeded: 1 }), false, 'waiting for 1/2 completions'],
  ['Job complete', o('Job', {}, { conditions: [cond('Complete', 'True')] }), true, 'ready'],
  ['PVC pending', o('PersistentVolumeClaim', {}, { phase: 'Pending' }), false, /bound/],
  ['PVC bound', o('PersistentVolumeClaim', {}, { phase: 'Bound' }), true, 'ready'],
  ['Service without an IP', o('Service', { type: 'ClusterIP' }, {}), false, 'waiting for a cluster IP'],
  ['Service with an IP', o('Service', { type: 'ClusterIP', clusterIP: '10.96.0.10' }, {}), true, 'ready'],
  ['headless Service', o('Service', { clusterIP: 'None' }, {}), true, 'ready'],
  ['ExternalName Service', o('Service', { type: 'ExternalName', externalName: 'x.example' }, {}), true, 'ready'],
  ['CRD not established', o('CustomResourceDefinition', {}, { conditions: [cond('NamesAccepted', 'True')] }), false, /established/],
  ['CRD established', o('CustomResourceDefinition', {}, { conditions: [cond('Established', 'True')] }), true, 'ready'],
  ['Namespace active', o('Namespace', {}, { phase: 'Active' }), true, 'ready'],
  ['Namespace terminating', o('Namespace', {}, { phase: 'Terminating' }), false, /terminating/],
  ['ConfigMap (no status)', o('ConfigMap', undefined, undefined), true, 'ready'],
  ['custom resource, Ready False', o('Widget', {}, { conditions: [cond('Ready', 'False', { reason: 'Provisioning' })] }, 1), false, 'waiting for Ready (Provisioning)'],
  ['custom resource, Ready True but stale', o('Widget', {}, { observedGeneration: 1, conditions: [cond('Ready', 'True')] }, 2), false, /generation 2/],
  ['custom resource, Available True', o('Widget', {}, { conditions: [cond('Available', 'True', { observedGeneration: 2 })] }, 2), true, 'ready'],
  ['custom resource in phase Provisioning', o('Cluster', {}, { phase: 'Provisioning' }), false, 'waiting in phase Provisioning'],
  ['custom resource in phase Provisioned', o('Cluster', {}, { phase: 'Provisioned' }), true, 'ready'],
  ['custom resource without status (its kind has none)', o('Widget', {}, undefined), true, 'ready'],
  ['an object being deleted', o('ConfigMap', undefined, undefined, undefined, { deletionTimestamp: '2025-01-01T00:00:00Z' }), false, 'being deleted'],
];

describe('assessReadiness', () => {
  it.each(cases)('%s', (_name, obj, ready, message) => {
    const r = assessReadiness(obj);
    expect(r.ready).toBe(ready);
    expect(r.failed).toBeUndefined();
    if (typeof message === 'string') expect(r.message).toBe(message);
    else expect(r.message).toMatch(message);
  });

  it.each<[string, KubeObject, RegExp]>([
    [
      'a failed Job',
      o('Job', {}, { conditions: [cond('Failed', 'True', { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' })] }),
      /job failed \(BackoffLimitExceeded\): Job has reached/,
    ],
    ['a failed Pod', o('Pod', {}, { phase: 'Failed', reason: 'Evicted' }), /pod failed \(Evicted\)/],
    [
      'a stuck Deployment',
      o(
        'Deployment',
        { replicas: 1 },
        { observedGeneration: 1, conditions: [cond('Progressing', 'False', { reason: 'ProgressDeadlineExceeded', message: 'ReplicaSet "x" has timed out progressing.' })] },
        1,
      ),
      /progress deadline/,
    ],
    ['a CRD whose names clash', o('CustomResourceDefinition', {}, { conditions: [cond('NamesAccepted', 'False', { message: 'the plural is already in use' })] }), /already in use/],
    ['a custom resource in phase Failed', o('Machine', {}, { phase: 'Failed' }), /phase is Failed/],
  ])('%s cannot become ready by waiting', (_name, obj, failed) => {
    const r = assessReadiness(obj);
    expect(r.ready).toBe(false);
    expect(r.failed).toMatch(failed);
  });
});

describe('a custom resource whose kind has a status subresource', () => {
  const facts = { reportsStatus: true };

  it.each<Case>([
    ['no status yet: its controller has not reached it', o('MachineDeployment', { replicas: 1 }, undefined, 1), false, 'waiting for its controller to report a status'],
    ['an empty status', o('Cluster', {}, {}, 1), false, 'waiting for its controller to report a status'],
    ['a status for an older generation', o('MachineDeployment', { replicas: 1 }, { observedGeneration: 1, readyReplicas: 1 }, 2), false, /generation 2/],
    ['fewer ready replicas than asked for', o('KamajiControlPlane', { replicas: 2 }, { observedGeneration: 1, readyReplicas: 1 }, 1), false, 'waiting for 1/2 replicas ready'],
    ['all replicas ready at the current generation', o('KamajiControlPlane', { replicas: 2 }, { observedGeneration: 1, readyReplicas: 2 }, 1), true, 'ready'],
    [
      'Ready condition True half-way through a rollout',
      o('MachineDeployment', { replicas: 2 }, { observedGeneration: 2, replicas: 2, updatedReplicas: 0, readyReplicas: 2, conditions: [cond('Ready', 'True')] }, 2),
      false,
      'waiting for 0/2 replicas updated',
    ],
    [
      'old replicas still to go (v1beta2 counts)',
      o('MachineDeployment', { replicas: 2 }, { observedGeneration: 2, replicas: 3, upToDateReplicas: 2, readyReplicas: 3 }, 2),
      false,
      'waiting for 1 old replicas to go',
    ],
    ['Ready condition True', o('MachineDeployment', { replicas: 1 }, { observedGeneration: 1, conditions: [cond('Ready', 'True')] }, 1), true, 'ready'],
    ['a provider object that says ready', o('OpenStackCluster', {}, { ready: true }, 1), true, 'ready'],
  ])('%s', (_name, obj, ready, message) => {
    const r = assessReadiness(obj, undefined, facts);
    expect(r.ready).toBe(ready);
    if (typeof message === 'string') expect(r.message).toBe(message);
    else expect(r.message).toMatch(message);
  });

  it('an operator rule still decides (present: true is ready without a status)', () => {
    expect(assessReadiness(o('Widget', {}, undefined, 1), { Widget: { present: true } }, facts).ready).toBe(true);
  });

  it('a built-in kind keeps its own predicate', () => {
    expect(
      assessReadiness(o('Deployment', { replicas: 1 }, { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 }, 1), undefined, facts)
        .ready,
    ).toBe(true);
  });
});
