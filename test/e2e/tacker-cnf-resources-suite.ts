/**
 * A package in the shape of Tacker v2's test_instantiate_cnf_resources with
 * everything its largest request deploys, through the real program:
 * workloads of every kind, a StatefulSet whose volumeClaimTemplates claim
 * PersistentVolumes of a local StorageClass (no provisioner), a claim with
 * its own class and volume in one file, HorizontalPodAutoscalers in
 * autoscaling/v1 and v2, a PodTemplate, and the create-only reviews
 * (token, subject, local subject, self subject access and rules) without
 * names. Instantiate creates every object (the reviews answered, the claims
 * Bound to the volumes made for them), scale out adds a claim, terminate
 * removes everything, the StatefulSet's claims included.
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { newHome, vnfm } from '../support/cli.js';

const SHAPE = resolve(import.meta.dirname, '../fixtures/tacker-shapes/v2-instantiate-cnf-resources');
const work = mkdtempSync(join(tmpdir(), 'vnfm-tacker-cnf-resources-'));

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The shape's package with the storage, autoscaling and review files added, TOSCA.meta listing every file's hash. */
export function buildPackage(ns: string, tag: string): string {
  const dir = mkdtempSync(join(work, 'stack-'));
  cpSync(SHAPE, dir, { recursive: true });
  const k = (name: string, text: string) => writeFileSync(join(dir, 'Files/kubernetes', name), text);
  k(
    'storage-class.yaml',
    `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: ${tag}-local
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
reclaimPolicy: Retain
`,
  );
  for (const i of [0, 1]) {
    k(
      `persistent-volume-${i}.yaml`,
      `apiVersion: v1
kind: PersistentVolume
metadata:
  name: ${tag}-pv-${i}
spec:
  capacity:
    storage: 1Gi
  accessModes:
    - ReadWriteOnce
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ${tag}-local
  hostPath:
    path: /tmp/${tag}-pv-${i}
`,
    );
  }
  // The shape's StatefulSet, now with a claim per pod.
  k(
    'statefulset.yaml',
    `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: stack-e
spec:
  replicas: 1
  serviceName: stack-e
  selector:
    matchLabels:
      app: stack-e
  template:
    metadata:
      labels:
        app: stack-e
    spec:
      containers:
        - name: main
          image: registry.example.test/stack-e:1.1
          volumeMounts:
            - name: data
              mountPath: /data
  volumeClaimTemplates:
    - metadata:
        name: data
      spec:
        accessModes:
          - ReadWriteOnce
        storageClassName: ${tag}-local
        resources:
          requests:
            storage: 1Gi
`,
  );
  k(
    'storage-class_pv_pvc.yaml',
    `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: ${tag}-claimed
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: stack-claim
spec:
  accessModes:
    - ReadWriteOnce
  storageClassName: ${tag}-claimed
  resources:
    requests:
      storage: 512Mi
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: ${tag}-pv-claimed
spec:
  capacity:
    storage: 1Gi
  accessModes:
    - ReadWriteOnce
  storageClassName: ${tag}-claimed
  hostPath:
    path: /tmp/${tag}-pv-claimed
`,
  );
  k(
    'horizontal-pod-autoscaler.yaml',
    `apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata:
  name: stack-b-hpa
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: stack-b
  minReplicas: 1
  maxReplicas: 3
  targetCPUUtilizationPercentage: 50
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: stack-c-hpa
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: ReplicaSet
    name: stack-c
  maxReplicas: 3
  metrics:
    - type: Resource
      resource:
        name: memory
        target:
          type: AverageValue
          averageValue: 200Mi
`,
  );
  k(
    'pod-template.yaml',
    `apiVersion: v1
kind: PodTemplate
metadata:
  name: stack-template
template:
  metadata:
    labels:
      app: stack-template
  spec:
    containers:
      - name: main
        image: registry.example.test/stack-template:1.1
`,
  );
  k(
    'subject-access-review.yaml',
    `apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: stack-operator
  resourceAttributes:
    namespace: ${ns}
    verb: get
    resource: pods
`,
  );
  k(
    'local-subject-access-review.yaml',
    `apiVersion: authorization.k8s.io/v1
kind: LocalSubjectAccessReview
metadata:
  namespace: ${ns}
spec:
  user: stack-operator
  resourceAttributes:
    namespace: ${ns}
    verb: list
    resource: deployments
    group: apps
`,
  );
  const metaPath = join(dir, 'TOSCA-Metadata/TOSCA.meta');
  const head = readFileSync(metaPath, 'utf8').split('\n\n')[0]!;
  const entries = filesUnder(join(dir, 'Files')).map((path) => {
    const hash = createHash('sha256').update(readFileSync(path)).digest('hex');
    return `Name: ${relative(dir, path)}\nContent-Type: test-data\nAlgorithm: SHA-256\nHash: ${hash}\n`;
  });
  writeFileSync(metaPath, `${head}\n\n${entries.join('\n')}`);
  return dir;
}

const FILES = [
  'Files/kubernetes/daemon-set.yaml',
  'Files/kubernetes/deployment.yaml',
  'Files/kubernetes/horizontal-pod-autoscaler.yaml',
  'Files/kubernetes/local-subject-access-review.yaml',
  'Files/kubernetes/persistent-volume-0.yaml',
  'Files/kubernetes/persistent-volume-1.yaml',
  'Files/kubernetes/pod.yaml',
  'Files/kubernetes/pod-template.yaml',
  'Files/kubernetes/replicaset_service_secret.yaml',
  'Files/kubernetes/self-subject-access-review_and_self-subject-rule-review.yaml',
  'Files/kubernetes/statefulset.yaml',
  'Files/kubernetes/storage-class.yaml',
  'Files/kubernetes/storage-class_pv_pvc.yaml',
  'Files/kubernetes/subject-access-review.yaml',
  'Files/kubernetes/token-review.yaml',
];

/** The suite, on the sandbox (test/e2e/tacker-cnf-resources.test.ts) or the real tier's cluster (test/real/tacker-cnf-resources.test.ts). */
export function describeTackerCnfResources(): void {
  describe('Tacker v2 test_instantiate_cnf_resources shape: every kind through instantiate, scale and terminate', () => {
    let cluster: E2eCluster;
    let home: string;
    let tag: string;

    const ok = async (args: string[]) => {
      const r = await vnfm(args, { home });
      if (r.code !== 0) throw new Error(`vnfm ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
      return r;
    };
    const get = async (path: string) => cluster.request('GET', path);

    beforeAll(async () => {
      cluster = await e2eCluster('e2e-cnf-resources', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
      home = newHome();
      tag = `stack-${cluster.namespace}`;
      const vimConfig = join(work, 'vim-config.yaml');
      cluster.writeVimConfig(vimConfig, cluster.namespace);
      await ok(['vim-register', '--config-file', vimConfig, 'edge']);
      await ok(['vnfpkg-onboard', buildPackage(cluster.namespace, tag), '--name', 'stack']);
    });

    afterAll(async () => {
      await cluster?.close();
    });

    it('instantiates every kind, scales the StatefulSet with its claims, and terminate leaves nothing', { timeout: 240_000 }, async () => {
      const ns = cluster.namespace;
      await ok(['vnf-create', '--package', 'stack', '--name', 'stack-max']);
      const body = {
        flavourId: 'simple',
        instantiationLevelId: 'instantiation_level_1',
        vimConnectionInfo: { vim1: { vimId: 'edge', vimType: 'kubernetes' } },
        additionalParams: { 'lcm-kubernetes-def-files': FILES, namespace: ns },
      };
      const requestFile = join(work, 'max_sample_instantiate.json');
      writeFileSync(requestFile, JSON.stringify(body, null, 2));
      const inst = await vnfm(['vnf-instantiate', 'stack-max', requestFile, '--allow-package-scripts', '-o', 'json'], { home });
      expect(inst.code, inst.stderr).toBe(0);
      expect(JSON.parse(inst.stdout)).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED' });

      // Every review was posted and answered; none is kept with the instance.
      for (const kind of ['TokenReview', 'SubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectAccessReview', 'SelfSubjectRulesReview']) {
        expect(inst.stderr).toMatch(new RegExp(`${kind}\\b.*answered`));
      }
      const shown = JSON.parse((await ok(['vnf-show', 'stack-max', '-o', 'json'])).stdout);
      const kinds = new Set((shown.instantiatedVnfInfo.resources as { kind: string }[]).map((r) => r.kind));
      expect([...kinds].filter((k) => k.endsWith('Review'))).toEqual([]);
      for (const kind of [
        'StorageClass',
        'PersistentVolume',
        'PersistentVolumeClaim',
        'HorizontalPodAutoscaler',
        'PodTemplate',
        'StatefulSet',
        'Deployment',
        'ReplicaSet',
        'DaemonSet',
        'Pod',
        'Service',
        'Secret',
      ]) {
        expect(kinds.has(kind), kind).toBe(true);
      }

      // Every object is there, the claims Bound to the volumes made for them.
      const objects = [
        `/apis/storage.k8s.io/v1/storageclasses/${tag}-local`,
        `/apis/storage.k8s.io/v1/storageclasses/${tag}-claimed`,
        `/api/v1/persistentvolumes/${tag}-pv-0`,
        `/api/v1/persistentvolumes/${tag}-pv-1`,
        `/api/v1/persistentvolumes/${tag}-pv-claimed`,
        `/api/v1/namespaces/${ns}/persistentvolumeclaims/stack-claim`,
        `/api/v1/namespaces/${ns}/persistentvolumeclaims/data-stack-e-0`,
        `/apis/autoscaling/v1/namespaces/${ns}/horizontalpodautoscalers/stack-b-hpa`,
        `/apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers/stack-c-hpa`,
        `/api/v1/namespaces/${ns}/podtemplates/stack-template`,
        `/apis/apps/v1/namespaces/${ns}/statefulsets/stack-e`,
        `/apis/apps/v1/namespaces/${ns}/deployments/stack-b`,
        `/apis/apps/v1/namespaces/${ns}/replicasets/stack-c`,
        `/apis/apps/v1/namespaces/${ns}/daemonsets/stack-f`,
        `/api/v1/namespaces/${ns}/pods/stack-a`,
        `/api/v1/namespaces/${ns}/services/stack-c-svc`,
        `/api/v1/namespaces/${ns}/secrets/stack-c-secret`,
      ];
      for (const path of objects) expect((await get(path)).status, path).toBe(200);
      const claim = (await get(`/api/v1/namespaces/${ns}/persistentvolumeclaims/stack-claim`)).json as { spec: { volumeName: string }; status: { phase: string } };
      expect(claim).toMatchObject({ spec: { volumeName: `${tag}-pv-claimed` }, status: { phase: 'Bound' } });
      const stsClaim = (await get(`/api/v1/namespaces/${ns}/persistentvolumeclaims/data-stack-e-0`)).json as { spec: { volumeName: string }; status: { phase: string } };
      expect(stsClaim.status.phase).toBe('Bound');
      expect([`${tag}-pv-0`, `${tag}-pv-1`]).toContain(stsClaim.spec.volumeName);
      // The v1 HPA reads as v2 too.
      const hpa = (await get(`/apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers/stack-b-hpa`)).json as { spec: { metrics: unknown[] } };
      expect(hpa.spec.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }]);

      // Scale out: a second pod, a second claim on the other volume.
      await ok(['vnf-scale', 'stack-max', '--type', 'SCALE_OUT', '--aspect-id', 'e_aspect', '--allow-package-scripts']);
      const second = (await get(`/api/v1/namespaces/${ns}/persistentvolumeclaims/data-stack-e-1`)).json as { spec: { volumeName: string }; status: { phase: string } };
      expect(second.status.phase).toBe('Bound');
      expect(second.spec.volumeName).not.toBe(stsClaim.spec.volumeName);
      // Scale in keeps the claim, as Kubernetes does.
      await ok(['vnf-scale', 'stack-max', '--type', 'SCALE_IN', '--aspect-id', 'e_aspect', '--allow-package-scripts']);
      expect((await get(`/api/v1/namespaces/${ns}/persistentvolumeclaims/data-stack-e-1`)).status).toBe(200);

      const term = await vnfm(['vnf-terminate', 'stack-max', '--yes', '--allow-package-scripts'], { home });
      expect(term.code, term.stderr).toBe(0);
      expect(term.stderr).toMatch(/data-stack-e-0.*claim of StatefulSet stack-e/);
      for (const path of [...objects, `/api/v1/namespaces/${ns}/persistentvolumeclaims/data-stack-e-1`]) expect((await get(path)).status, path).toBe(404);
      const left = (await get(`/api/v1/namespaces/${ns}/persistentvolumeclaims`)).json as { items: unknown[] };
      expect(left.items).toEqual([]);
      expect(JSON.parse((await ok(['vnf-show', 'stack-max', '-o', 'json'])).stdout).instantiationState).toBe('NOT_INSTANTIATED');
    });
  });
}
