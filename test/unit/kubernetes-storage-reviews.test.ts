/**
 * What Tacker's sample CNFs use, on the Kubernetes driver's side: volumes
 * and classes before the claims that bind to them (and after them on
 * removal), claims ready when Bound, HorizontalPodAutoscalers ready once
 * created, a StatefulSet's claims found by the controller's naming, and the
 * answer of a review put in a few words.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/infra/kubernetes/driver-contract.js';
import { creationRank, groupByRank, removalGroups } from '../../src/infra/kubernetes/order.js';
import { assessReadiness } from '../../src/infra/kubernetes/readiness.js';
import { reviewAnswer, statefulSetClaim } from '../../src/infra/kubernetes/driver.js';

const obj = (apiVersion: string, kind: string, extra: Partial<KubeObject> = {}): KubeObject => ({ apiVersion, kind, metadata: { name: 'x' }, ...extra });

describe('storage order', () => {
  it('creates StorageClasses and PersistentVolumes before the claims, the claims before workloads', () => {
    expect(creationRank('StorageClass')).toBeLessThan(creationRank('PersistentVolumeClaim'));
    expect(creationRank('PersistentVolume')).toBeLessThan(creationRank('PersistentVolumeClaim'));
    expect(creationRank('PersistentVolumeClaim')).toBeLessThan(creationRank('StatefulSet'));
    // In a package's order the claim may come first; it is still created after its volume and class.
    const groups = groupByRank(
      ['PersistentVolumeClaim/data', 'StatefulSet/db', 'PersistentVolume/pv0', 'StorageClass/local', 'HorizontalPodAutoscaler/hpa'],
      (s) => s.split('/')[0]!,
    );
    expect(groups).toEqual([['PersistentVolume/pv0', 'StorageClass/local'], ['PersistentVolumeClaim/data'], ['StatefulSet/db'], ['HorizontalPodAutoscaler/hpa']]);
  });

  it('removes the claims before the volumes and classes they bound to', () => {
    const created = ['StorageClass/local', 'PersistentVolume/pv0', 'PersistentVolumeClaim/data', 'StatefulSet/db'];
    expect(removalGroups(created, (s) => s.split('/')[0]!)).toEqual([['StatefulSet/db'], ['PersistentVolumeClaim/data'], ['PersistentVolume/pv0', 'StorageClass/local']]);
  });
});

describe('readiness of storage and autoscalers', () => {
  it('a claim is ready when Bound, waits while Pending, fails when Lost', () => {
    expect(assessReadiness(obj('v1', 'PersistentVolumeClaim', { status: { phase: 'Pending' } })).ready).toBe(false);
    expect(assessReadiness(obj('v1', 'PersistentVolumeClaim')).message).toMatch(/bound \(phase Pending\)/);
    expect(assessReadiness(obj('v1', 'PersistentVolumeClaim', { status: { phase: 'Bound' } })).ready).toBe(true);
    expect(assessReadiness(obj('v1', 'PersistentVolumeClaim', { status: { phase: 'Lost' } })).failed).toMatch(/lost its volume/);
  });

  it('a volume is ready when Available or Bound (as Tacker v2 judges it)', () => {
    expect(assessReadiness(obj('v1', 'PersistentVolume', { status: { phase: 'Pending' } })).ready).toBe(false);
    expect(assessReadiness(obj('v1', 'PersistentVolume', { status: { phase: 'Available' } })).ready).toBe(true);
    expect(assessReadiness(obj('v1', 'PersistentVolume', { status: { phase: 'Bound' } })).ready).toBe(true);
  });

  it('an HPA is ready once created, in either version, whatever its metrics say', () => {
    const noMetrics = {
      currentReplicas: 1,
      desiredReplicas: 0,
      conditions: [
        { type: 'AbleToScale', status: 'True', reason: 'SucceededGetScale' },
        { type: 'ScalingActive', status: 'False', reason: 'FailedGetResourceMetric' },
      ],
    };
    expect(
      assessReadiness(obj('autoscaling/v2', 'HorizontalPodAutoscaler', { metadata: { name: 'h', generation: 2 }, status: { ...noMetrics, observedGeneration: 1 } })).ready,
    ).toBe(true);
    expect(assessReadiness(obj('autoscaling/v1', 'HorizontalPodAutoscaler')).ready).toBe(true);
  });
});

describe('a StatefulSet’s claims', () => {
  it('are <template>-<statefulset>-<ordinal>, nothing else', () => {
    expect(statefulSetClaim('data-db-0', ['data'], 'db')).toBe(true);
    expect(statefulSetClaim('data-db-12', ['logs', 'data'], 'db')).toBe(true);
    expect(statefulSetClaim('data-db-x', ['data'], 'db')).toBe(false);
    expect(statefulSetClaim('data-db-', ['data'], 'db')).toBe(false);
    expect(statefulSetClaim('data-dbx-0', ['data'], 'db')).toBe(false);
    expect(statefulSetClaim('data-db-0', ['logs'], 'db')).toBe(false);
    // Another StatefulSet whose name extends this one's: its claims are not this one's.
    expect(statefulSetClaim('data-db-cache-0', ['data'], 'db')).toBe(false);
  });
});

describe('review answers', () => {
  it('say what the API server answered', () => {
    const review = (status: unknown) => obj('authorization.k8s.io/v1', 'SubjectAccessReview', { status } as Partial<KubeObject>);
    expect(reviewAnswer(review({ allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding' }))).toBe('answered: allowed: RBAC: allowed by ClusterRoleBinding');
    expect(reviewAnswer(review({ allowed: false }))).toBe('answered: not allowed');
    expect(reviewAnswer(review({ allowed: false, denied: true }))).toBe('answered: denied');
    expect(reviewAnswer(review({ authenticated: true, user: { username: 'admin' } }))).toBe('answered: authenticated as admin');
    expect(reviewAnswer(review({ user: {}, error: 'invalid bearer token' }))).toBe('answered: not authenticated (invalid bearer token)');
    expect(reviewAnswer(review({ resourceRules: [{}, {}], nonResourceRules: [], incomplete: false }))).toBe('answered: 2 resource rules');
    expect(reviewAnswer(review({ userInfo: { username: 'admin' } }))).toBe('answered: user admin');
    expect(reviewAnswer(review(undefined))).toBe('answered');
  });
});
