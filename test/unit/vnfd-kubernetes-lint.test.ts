import { resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { findRemovedApi, lintKubernetesDefinitions, loadVnfd, type Vnfd } from '../../src/vnfd/index.js';
import { memoryPackage, readDirectoryTree } from '../support/memory-package.js';

const CNF = resolve(import.meta.dirname, '../fixtures/vnfd/cnf');
const TOP = 'Definitions/sample_cnf_top.vnfd.yaml';
const DF = 'Definitions/sample_cnf_df_simple.yaml';
const WEB = 'Files/kubernetes/web.yaml';
const CACHE = 'Files/kubernetes/cache.yaml';

async function cnf(): Promise<{ members: Record<string, string>; vnfd: Vnfd }> {
  const members = await readDirectoryTree(CNF);
  const { vnfd } = await loadVnfd(memoryPackage(members), TOP);
  return { members, vnfd: vnfd! };
}

const line = (text: string, marker: string) => text.split('\n').findIndex((l) => l.includes(marker)) + 1;

/** The Kuryr controller and CNI manifests as the seed article shows them: apiVersions from before Kubernetes 1.16. */
const KURYR_OLD = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: kuryr-controller
  namespace: kube-system
---
apiVersion: apps/v1beta1
kind: Deployment
metadata:
  name: kuryr-controller
  namespace: kube-system
spec:
  replicas: 1
  template:
    metadata:
      labels:
        name: kuryr-controller
    spec:
      serviceAccountName: kuryr-controller
      containers:
        - name: controller
          image: kuryr/controller:latest
---
apiVersion: extensions/v1beta1
kind: DaemonSet
metadata:
  name: kuryr-cni
  namespace: kube-system
spec:
  template:
    metadata:
      labels:
        name: kuryr-cni
    spec:
      hostNetwork: true
      serviceAccountName: kuryr-controller
      containers:
        - name: kuryr-cni
          image: kuryr/cni:latest
`;

describe('lintKubernetesDefinitions', () => {
  test('clean manifests whose workloads match every VDU', async () => {
    const { members, vnfd } = await cnf();
    expect(await lintKubernetesDefinitions(memoryPackage(members), [WEB, CACHE], vnfd)).toEqual([]);
  });

  test('the Kuryr manifests of the seed article: each removed apiVersion with its replacement and release', async () => {
    const pkg = memoryPackage({ 'Files/kubernetes/kuryr.yaml': KURYR_OLD });
    const findings = await lintKubernetesDefinitions(pkg, ['Files/kubernetes/kuryr.yaml']);
    expect(findings).toEqual([
      {
        severity: 'error',
        code: 'removed-api-version',
        file: 'Files/kubernetes/kuryr.yaml',
        line: line(KURYR_OLD, 'apps/v1beta1'),
        message: 'Deployment kuryr-controller uses apiVersion apps/v1beta1, which Kubernetes stopped serving in v1.16; its replacement is apps/v1',
        hint: expect.stringMatching(/^change it to "apiVersion: apps\/v1"; .*spec.selector/),
      },
      {
        severity: 'error',
        code: 'removed-api-version',
        file: 'Files/kubernetes/kuryr.yaml',
        line: line(KURYR_OLD, 'extensions/v1beta1'),
        message: 'DaemonSet kuryr-cni uses apiVersion extensions/v1beta1, which Kubernetes stopped serving in v1.16; its replacement is apps/v1',
        hint: expect.stringContaining('apiVersion: apps/v1'),
      },
    ]);
  });

  test.each([
    ['extensions/v1beta1', 'Deployment', 'apps/v1', '1.16'],
    ['extensions/v1beta1', 'ReplicaSet', 'apps/v1', '1.16'],
    ['extensions/v1beta1', 'NetworkPolicy', 'networking.k8s.io/v1', '1.16'],
    ['extensions/v1beta1', 'Ingress', 'networking.k8s.io/v1', '1.22'],
    ['networking.k8s.io/v1beta1', 'Ingress', 'networking.k8s.io/v1', '1.22'],
    ['networking.k8s.io/v1beta1', 'IngressClass', 'networking.k8s.io/v1', '1.22'],
    ['apps/v1beta1', 'StatefulSet', 'apps/v1', '1.16'],
    ['apps/v1beta2', 'DaemonSet', 'apps/v1', '1.16'],
    ['apps/v1beta2', 'ReplicaSet', 'apps/v1', '1.16'],
    ['batch/v1beta1', 'CronJob', 'batch/v1', '1.25'],
    ['policy/v1beta1', 'PodDisruptionBudget', 'policy/v1', '1.25'],
    ['rbac.authorization.k8s.io/v1beta1', 'ClusterRoleBinding', 'rbac.authorization.k8s.io/v1', '1.22'],
    ['apiextensions.k8s.io/v1beta1', 'CustomResourceDefinition', 'apiextensions.k8s.io/v1', '1.22'],
    ['admissionregistration.k8s.io/v1beta1', 'ValidatingWebhookConfiguration', 'admissionregistration.k8s.io/v1', '1.22'],
    ['autoscaling/v2beta1', 'HorizontalPodAutoscaler', 'autoscaling/v2', '1.25'],
    ['autoscaling/v2beta2', 'HorizontalPodAutoscaler', 'autoscaling/v2', '1.26'],
    ['storage.k8s.io/v1beta1', 'StorageClass', 'storage.k8s.io/v1', '1.22'],
    ['storage.k8s.io/v1beta1', 'CSIStorageCapacity', 'storage.k8s.io/v1', '1.27'],
    ['flowcontrol.apiserver.k8s.io/v1beta1', 'FlowSchema', 'flowcontrol.apiserver.k8s.io/v1', '1.26'],
    ['flowcontrol.apiserver.k8s.io/v1beta2', 'PriorityLevelConfiguration', 'flowcontrol.apiserver.k8s.io/v1', '1.29'],
    ['discovery.k8s.io/v1beta1', 'EndpointSlice', 'discovery.k8s.io/v1', '1.25'],
    ['events.k8s.io/v1beta1', 'Event', 'events.k8s.io/v1', '1.25'],
    ['node.k8s.io/v1beta1', 'RuntimeClass', 'node.k8s.io/v1', '1.25'],
    ['scheduling.k8s.io/v1beta1', 'PriorityClass', 'scheduling.k8s.io/v1', '1.22'],
    ['coordination.k8s.io/v1beta1', 'Lease', 'coordination.k8s.io/v1', '1.22'],
    ['certificates.k8s.io/v1beta1', 'CertificateSigningRequest', 'certificates.k8s.io/v1', '1.22'],
  ])('%s %s → %s (removed in %s)', async (apiVersion, kind, replacement, release) => {
    expect(findRemovedApi(apiVersion, kind)).toMatchObject({ replacement, removedIn: release });
    const text = `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: x\n`;
    const [finding] = await lintKubernetesDefinitions(memoryPackage({ 'm.yaml': text }), ['m.yaml']);
    expect(finding).toMatchObject({ code: 'removed-api-version', file: 'm.yaml', line: 1 });
    expect(finding!.message).toContain(`v${release}`);
    expect(finding!.hint).toContain(`apiVersion: ${replacement}`);
  });

  test('PodSecurityPolicy: removed with no replacement API', async () => {
    const text = 'apiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata:\n  name: restricted\n';
    const [finding] = await lintKubernetesDefinitions(memoryPackage({ 'psp.yaml': text }), ['psp.yaml']);
    expect(finding).toMatchObject({
      code: 'removed-api-version',
      message: expect.stringMatching(/v1\.25, with no replacement/),
      hint: expect.stringContaining('Pod Security Admission'),
    });
  });

  test('current apiVersions pass', () => {
    for (const [v, k] of [
      ['apps/v1', 'Deployment'],
      ['policy/v1', 'PodDisruptionBudget'],
      ['networking.k8s.io/v1', 'Ingress'],
      ['cluster.x-k8s.io/v1beta1', 'MachineDeployment'],
    ]) {
      expect(findRemovedApi(v!, k!)).toBeUndefined();
    }
  });

  test('a listed file missing from the package', async () => {
    const { members, vnfd } = await cnf();
    const findings = await lintKubernetesDefinitions(memoryPackage(members), [WEB, CACHE, 'Files/kubernetes/gone.yaml'], vnfd);
    expect(findings).toEqual([
      expect.objectContaining({ code: 'kubernetes-file-missing', file: 'Files/kubernetes/gone.yaml', hint: expect.stringContaining('lcm-kubernetes-def-files') }),
    ]);
  });

  test('a syntax error in the second document is reported at its line, and the first document is still checked', async () => {
    const text = 'apiVersion: apps/v1beta2\nkind: Deployment\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  name: c\n';
    const findings = await lintKubernetesDefinitions(memoryPackage({ 'm.yaml': text }), ['m.yaml']);
    expect(findings.map((f) => [f.code, f.line])).toEqual([
      ['removed-api-version', 1],
      ['yaml-syntax', 10],
    ]);
  });

  test('objects without apiVersion, kind or metadata.name', async () => {
    const text = '# leading comment\n---\nkind: Deployment\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: Service\nmetadata:\n  generateName: svc-\n---\n- just\n- a list\n';
    const findings = await lintKubernetesDefinitions(memoryPackage({ 'm.yaml': text }), ['m.yaml']);
    expect(findings.map((f) => [f.code, f.line, f.message])).toEqual([
      ['kubernetes-object-invalid', 3, 'the object starting here has no apiVersion'],
      ['kubernetes-object-invalid', 7, 'the object starting here has no metadata.name'],
      ['kubernetes-object-invalid', 12, 'a document here is not a Kubernetes object (a mapping)'],
    ]);
  });

  test('an empty file holds no object', async () => {
    const [finding] = await lintKubernetesDefinitions(memoryPackage({ 'e.yaml': '# nothing\n' }), ['e.yaml']);
    expect(finding).toMatchObject({ code: 'kubernetes-object-invalid', file: 'e.yaml', hint: expect.stringContaining('apiVersion, kind, metadata.name') });
  });

  test('a VDU with no workload of its name is a note (a request may deploy part of a flavour, as in Tacker)', async () => {
    const { members, vnfd } = await cnf();
    members[WEB] = members[WEB]!.replace('kind: Deployment\nmetadata:\n  name: web\n', 'kind: Deployment\nmetadata:\n  name: web-server\n');
    members[WEB] = members[WEB]!.replace('kind: Service\nmetadata:\n  name: web\n', 'kind: Service\nmetadata:\n  name: web-svc\n');
    const findings = await lintKubernetesDefinitions(memoryPackage(members), [WEB, CACHE], vnfd);
    expect(findings).toEqual([
      {
        severity: 'info',
        code: 'vdu-resource-missing',
        file: DF,
        line: line(members[DF]!, 'name: web'),
        message:
          'VDU VDU1 of flavour simple is named web, and no object in the Kubernetes definition files has that metadata.name, so an instance of this package runs without VDU1',
        hint: expect.stringContaining('workloads found: Deployment web-server, StatefulSet cache'),
      },
    ]);
  });

  test('a VDU named after a Service only is not matched (a note)', async () => {
    const { members, vnfd } = await cnf();
    members[WEB] = members[WEB]!.replace('kind: Deployment\nmetadata:\n  name: web\n', 'kind: Deployment\nmetadata:\n  name: web-server\n');
    const findings = await lintKubernetesDefinitions(memoryPackage(members), [WEB, CACHE], vnfd);
    expect(findings).toEqual([expect.objectContaining({ severity: 'info', code: 'vdu-resource-missing', message: expect.stringContaining('only a Service') })]);
  });

  test('create-only kinds (access and token reviews) need no metadata.name', async () => {
    const reviews = [
      'apiVersion: authorization.k8s.io/v1\nkind: SubjectAccessReview\nspec:\n  user: alice\n  resourceAttributes: {verb: get, resource: pods}\n',
      'apiVersion: authorization.k8s.io/v1\nkind: LocalSubjectAccessReview\nmetadata:\n  namespace: team-a\nspec:\n  user: bob\n  resourceAttributes: {verb: list, resource: pods, namespace: team-a}\n',
      'apiVersion: authorization.k8s.io/v1\nkind: SelfSubjectAccessReview\nspec:\n  resourceAttributes: {verb: create, resource: configmaps}\n',
      'apiVersion: authorization.k8s.io/v1\nkind: SelfSubjectRulesReview\nspec:\n  namespace: team-a\n',
      'apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec:\n  token: not-a-real-token\n',
      'apiVersion: authentication.k8s.io/v1\nkind: SelfSubjectReview\n',
    ].join('---\n');
    expect(await lintKubernetesDefinitions(memoryPackage({ 'r.yaml': reviews }), ['r.yaml'])).toEqual([]);
    // Any other kind still needs its name, and a review still needs a kind the API serves.
    const findings = await lintKubernetesDefinitions(
      memoryPackage({ 'r.yaml': 'apiVersion: v1\nkind: ConfigMap\ndata: {}\n---\napiVersion: authorization.k8s.io/v1beta1\nkind: SubjectAccessReview\nspec: {user: carol}\n' }),
      ['r.yaml'],
    );
    expect(findings.map((f) => [f.severity, f.code])).toEqual([
      ['error', 'kubernetes-object-invalid'],
      ['error', 'removed-api-version'],
    ]);
  });

  test('a custom resource may stand for a VDU', async () => {
    const { members, vnfd } = await cnf();
    members[WEB] = ['apiVersion: cluster.x-k8s.io/v1beta1', 'kind: MachineDeployment', 'metadata:', '  name: web', 'spec:', '  replicas: 1', ''].join('\n');
    expect(await lintKubernetesDefinitions(memoryPackage(members), [WEB, CACHE], vnfd)).toEqual([]);
  });

  test('a custom resource whose CRD in the package has no /scale cannot stand for a VDU', async () => {
    const { members, vnfd } = await cnf();
    const crd = (scale: boolean) =>
      [
        'apiVersion: apiextensions.k8s.io/v1',
        'kind: CustomResourceDefinition',
        'metadata:',
        '  name: widgets.example.com',
        'spec:',
        '  group: example.com',
        '  scope: Namespaced',
        '  names: { kind: Widget, plural: widgets }',
        '  versions:',
        '    - name: v1',
        '      served: true',
        '      storage: true',
        `      subresources: { status: {}${scale ? ', scale: { specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas }' : ''} }`,
        '      schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }',
        '---',
        'apiVersion: example.com/v1',
        'kind: Widget',
        'metadata:',
        '  name: web',
        '',
      ].join('\n');
    members[WEB] = crd(false);
    const findings = await lintKubernetesDefinitions(memoryPackage(members), [WEB, CACHE], vnfd);
    expect(findings).toEqual([
      expect.objectContaining({
        code: 'vdu-resource-not-scalable',
        file: DF,
        message: `VDU VDU1 of flavour simple is named web, which only Widget (${WEB}:19) is called, and the package's CRD gives that kind no /scale subresource`,
      }),
    ]);
    members[WEB] = crd(true);
    expect(await lintKubernetesDefinitions(memoryPackage(members), [WEB, CACHE], vnfd)).toEqual([]);
  });

  test('the same object in two files: alternatives, a note', async () => {
    const { members, vnfd } = await cnf();
    members['Files/kubernetes/again.yaml'] = members[CACHE]!;
    const findings = await lintKubernetesDefinitions(memoryPackage(members), [WEB, CACHE, 'Files/kubernetes/again.yaml'], vnfd);
    expect(findings.map((f) => [f.severity, f.code, f.file])).toEqual([
      ['info', 'kubernetes-object-alternative', 'Files/kubernetes/again.yaml'],
      ['info', 'kubernetes-object-alternative', 'Files/kubernetes/again.yaml'],
    ]);
    expect(findings[0]!.message).toContain(`also defined in ${CACHE}:4`);
  });

  test('the same object twice in one file is an error', async () => {
    const { members, vnfd } = await cnf();
    members[CACHE] = `${members[CACHE]!.trimEnd()}\n---\n${members[CACHE]!}`;
    const findings = await lintKubernetesDefinitions(memoryPackage(members), [WEB, CACHE], vnfd);
    expect(findings.length).toBeGreaterThan(0);
    expect(findings.every((f) => f.severity === 'error' && f.code === 'kubernetes-object-duplicate' && f.file === CACHE)).toBe(true);
    expect(findings[0]!.message).toMatch(/is defined twice in this file \(first at line 4\)/);
  });

  test('no VDU check without manifests (a VM-based VNF)', async () => {
    const { members, vnfd } = await cnf();
    expect(await lintKubernetesDefinitions(memoryPackage(members), [], vnfd)).toEqual([]);
  });
});
