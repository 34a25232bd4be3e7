/**
 * The defaults the API server fills in for the built-in kinds the sandbox
 * serves (k8s.io/kubernetes pkg/apis/<group>/v1/defaults.go), limited to the
 * fields clients and the sandbox's controllers read. Every function is
 * idempotent: it runs on create and again on each update.
 */
import type { KubeObject } from '../resources.js';

type Obj = Record<string, any>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function obj(parent: Obj, key: string): Obj {
  if (!isObj(parent[key])) parent[key] = {};
  return parent[key] as Obj;
}

function defaultContainer(c: Obj): void {
  const image = typeof c.image === 'string' ? c.image : '';
  const lastPart = image.split('/').pop() ?? '';
  const tagged = lastPart.includes(':') && !lastPart.endsWith(':latest');
  c.imagePullPolicy ??= image.includes('@') || tagged ? 'IfNotPresent' : 'Always';
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  c.resources ??= {};
  for (const p of (c.ports as Obj[] | undefined) ?? []) if (isObj(p)) p.protocol ??= 'TCP';
}

/** Pod spec defaults, for pods and for the templates inside workloads. */
export function defaultPodSpec(spec: Obj): void {
  for (const key of ['containers', 'initContainers'] as const) {
    for (const c of (spec[key] as Obj[] | undefined) ?? []) if (isObj(c)) defaultContainer(c);
  }
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.securityContext ??= {};
  spec.schedulerName ??= 'default-scheduler';
  spec.enableServiceLinks ??= true;
}

function defaultTemplate(spec: Obj): void {
  const template = obj(spec, 'template');
  defaultPodSpec(obj(template, 'spec'));
}

export function defaultPod(o: KubeObject): void {
  const spec = obj(o, 'spec');
  defaultPodSpec(spec);
  spec.serviceAccountName ??= 'default';
  // Set by the Priority admission plugin on pods, not on templates.
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
  spec.priority ??= 0;
  spec.serviceAccount ??= spec.serviceAccountName;
  if (!Array.isArray(spec.tolerations)) {
    spec.tolerations = [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ];
  }
}

export function defaultDeployment(o: KubeObject): void {
  const spec = obj(o, 'spec');
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  spec.progressDeadlineSeconds ??= 600;
  const strategy = obj(spec, 'strategy');
  strategy.type ??= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = obj(strategy, 'rollingUpdate');
    ru.maxSurge ??= '25%';
    ru.maxUnavailable ??= '25%';
  }
  defaultTemplate(spec);
}

export function defaultReplicaSet(o: KubeObject): void {
  const spec = obj(o, 'spec');
  spec.replicas ??= 1;
  defaultTemplate(spec);
}

export function defaultStatefulSet(o: KubeObject): void {
  const spec = obj(o, 'spec');
  spec.replicas ??= 1;
  spec.podManagementPolicy ??= 'OrderedReady';
  spec.revisionHistoryLimit ??= 10;
  const strategy = obj(spec, 'updateStrategy');
  strategy.type ??= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') obj(strategy, 'rollingUpdate').partition ??= 0;
  const retention = obj(spec, 'persistentVolumeClaimRetentionPolicy');
  retention.whenDeleted ??= 'Retain';
  retention.whenScaled ??= 'Retain';
  for (const claim of (spec.volumeClaimTemplates as Obj[] | undefined) ?? []) {
    if (!isObj(claim)) continue;
    claim.apiVersion ??= 'v1';
    claim.kind ??= 'PersistentVolumeClaim';
    obj(claim, 'spec').volumeMode ??= 'Filesystem';
  }
  defaultTemplate(spec);
}

export function defaultDaemonSet(o: KubeObject): void {
  const spec = obj(o, 'spec');
  spec.revisionHistoryLimit ??= 10;
  const strategy = obj(spec, 'updateStrategy');
  strategy.type ??= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = obj(strategy, 'rollingUpdate');
    ru.maxUnavailable ??= 1;
    ru.maxSurge ??= 0;
  }
  defaultTemplate(spec);
}

export function defaultJob(o: KubeObject): void {
  const spec = obj(o, 'spec');
  if (spec.completions === undefined && spec.parallelism === undefined) spec.completions = 1;
  spec.parallelism ??= 1;
  spec.backoffLimit ??= 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  spec.podReplacementPolicy ??= 'TerminatingOrFailed';
  defaultTemplate(spec);
}

export function defaultCronJob(o: KubeObject): void {
  const spec = obj(o, 'spec');
  spec.concurrencyPolicy ??= 'Allow';
  spec.suspend ??= false;
  spec.successfulJobsHistoryLimit ??= 3;
  spec.failedJobsHistoryLimit ??= 1;
  const jobTemplate = obj(spec, 'jobTemplate');
  const jobSpec = obj(jobTemplate, 'spec');
  jobSpec.backoffLimit ??= 6;
  jobSpec.completionMode ??= 'NonIndexed';
  jobSpec.suspend ??= false;
  defaultTemplate(jobSpec);
}

export function defaultService(o: KubeObject): void {
  const spec = obj(o, 'spec');
  spec.type ??= 'ClusterIP';
  if (spec.type === 'ExternalName') return;
  spec.sessionAffinity ??= 'None';
  spec.internalTrafficPolicy ??= 'Cluster';
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') spec.externalTrafficPolicy ??= 'Cluster';
  for (const p of (spec.ports as Obj[] | undefined) ?? []) {
    if (!isObj(p)) continue;
    p.protocol ??= 'TCP';
    p.targetPort ??= p.port;
  }
}

export function defaultPersistentVolumeClaim(o: KubeObject): void {
  obj(o, 'spec').volumeMode ??= 'Filesystem';
}

export function defaultPersistentVolume(o: KubeObject): void {
  const spec = obj(o, 'spec');
  spec.persistentVolumeReclaimPolicy ??= 'Retain';
  spec.volumeMode ??= 'Filesystem';
}

export function defaultStorageClass(o: KubeObject): void {
  o.reclaimPolicy ??= 'Delete';
  o.volumeBindingMode ??= 'Immediate';
}

export function defaultNetworkPolicy(o: KubeObject): void {
  const spec = obj(o, 'spec');
  spec.podSelector ??= {};
  if (!Array.isArray(spec.policyTypes)) spec.policyTypes = Array.isArray(spec.egress) ? ['Ingress', 'Egress'] : ['Ingress'];
}

export function defaultPriorityClass(o: KubeObject): void {
  o.preemptionPolicy ??= 'PreemptLowerPriority';
}
