/**
 * When is an object ready? One predicate per kind the API server gives a
 * status to, the way `kubectl rollout status` and `kubectl wait` judge
 * them, and a generic one for everything else (custom resources): their
 * `Ready`/`Available` condition, `observedGeneration`, or `phase`. Kinds
 * without a status (ConfigMap, Secret, RBAC …) are ready once they exist.
 * Pure functions of the object, so the watch loop just re-evaluates each
 * event.
 */
import type { KubeObject } from './driver-contract.js';
import { ruleFor, valueAt, type ReadinessOverrides, type ReadinessRule } from './readiness-rules.js';

export interface Readiness {
  ready: boolean;
  /** What the object waits for, or "ready". */
  message: string;
  /** Set when the object can no longer become ready by waiting (a failed Job or Pod). */
  failed?: string;
}

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

type Status = Record<string, unknown> & { conditions?: Condition[]; observedGeneration?: number; phase?: string };

const READY: Readiness = { ready: true, message: 'ready' };
const waiting = (message: string): Readiness => ({ ready: false, message });

function statusOf(obj: KubeObject): Status {
  return (obj.status ?? {}) as Status;
}

function specOf(obj: KubeObject): Record<string, unknown> {
  return (obj.spec ?? {}) as Record<string, unknown>;
}

function num(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

function condition(status: Status, type: string): Condition | undefined {
  return status.conditions?.find((c) => c.type === type);
}

/** The controller has seen the latest spec (generation); otherwise its status describes an older one. */
function generationObserved(obj: KubeObject): Readiness | undefined {
  const generation = (obj.metadata as { generation?: number }).generation;
  const observed = statusOf(obj).observedGeneration;
  if (generation !== undefined && (observed === undefined || observed < generation)) {
    return waiting(`waiting for the controller to observe generation ${generation}`);
  }
  return undefined;
}

function replicasMessage(ready: number, want: number, what = 'ready'): Readiness {
  return waiting(`waiting for ${ready}/${want} replicas ${what}`);
}

function deployment(obj: KubeObject): Readiness {
  const pending = generationObserved(obj);
  if (pending) return pending;
  const st = statusOf(obj);
  const progressing = condition(st, 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') {
    return { ready: false, message: 'rollout stuck', failed: `its rollout exceeded its progress deadline: ${progressing.message ?? ''}`.trim() };
  }
  const want = specOf(obj).replicas === undefined ? 1 : num(specOf(obj).replicas);
  if (num(st.updatedReplicas) < want) return replicasMessage(num(st.updatedReplicas), want, 'updated');
  if (num(st.replicas) > num(st.updatedReplicas)) return waiting(`waiting for ${num(st.replicas) - num(st.updatedReplicas)} old replicas to go`);
  if (num(st.readyReplicas) < want) return replicasMessage(num(st.readyReplicas), want);
  if (num(st.availableReplicas) < want) return replicasMessage(num(st.availableReplicas), want, 'available');
  if (num(st.replicas) !== want) return waiting(`waiting for ${num(st.replicas)} replicas to become ${want}`);
  return READY;
}

function replicaSet(obj: KubeObject): Readiness {
  const pending = generationObserved(obj);
  if (pending) return pending;
  const st = statusOf(obj);
  const want = specOf(obj).replicas === undefined ? 1 : num(specOf(obj).replicas);
  if (num(st.readyReplicas) < want) return replicasMessage(num(st.readyReplicas), want);
  if (st.availableReplicas !== undefined && num(st.availableReplicas) < want) return replicasMessage(num(st.availableReplicas), want, 'available');
  if (num(st.replicas) !== want) return waiting(`waiting for ${num(st.replicas)} replicas to become ${want}`);
  return READY;
}

function statefulSet(obj: KubeObject): Readiness {
  const pending = generationObserved(obj);
  if (pending) return pending;
  const st = statusOf(obj);
  const spec = specOf(obj);
  const want = spec.replicas === undefined ? 1 : num(spec.replicas);
  const onDelete = (spec.updateStrategy as { type?: string } | undefined)?.type === 'OnDelete';
  if (num(st.readyReplicas) < want) return replicasMessage(num(st.readyReplicas), want);
  if (num(st.replicas) !== want) return waiting(`waiting for ${num(st.replicas)} replicas to become ${want}`);
  if (!onDelete && st.updatedReplicas !== undefined && num(st.updatedReplicas) < want) return replicasMessage(num(st.updatedReplicas), want, 'updated');
  if (!onDelete && st.updateRevision && st.currentRevision && st.updateRevision !== st.currentRevision) return waiting('waiting for the rolling update to finish');
  return READY;
}

function daemonSet(obj: KubeObject): Readiness {
  const pending = generationObserved(obj);
  if (pending) return pending;
  const st = statusOf(obj);
  const desired = num(st.desiredNumberScheduled);
  if (st.updatedNumberScheduled !== undefined && num(st.updatedNumberScheduled) < desired) {
    return waiting(`waiting for ${num(st.updatedNumberScheduled)}/${desired} pods updated`);
  }
  if (num(st.numberReady) < desired) return waiting(`waiting for ${num(st.numberReady)}/${desired} pods ready`);
  if (st.numberAvailable !== undefined && num(st.numberAvailable) < desired) return waiting(`waiting for ${num(st.numberAvailable)}/${desired} pods available`);
  return READY;
}

export function podReady(obj: KubeObject): boolean {
  const st = statusOf(obj);
  return st.phase === 'Running' && condition(st, 'Ready')?.status === 'True';
}

/** The reasons a container waits while nothing is wrong: being created, or its init containers running. */
const ROUTINE_WAITS = new Set(['ContainerCreating', 'PodInitializing']);

/**
 * What the first container held back says, as `kubectl get pods` shows it
 * in STATUS: `container web ImagePullBackOff: Back-off pulling image "…"`
 * (init containers first); undefined when none waits for a reason of note.
 */
function containerWait(st: Record<string, unknown>): string | undefined {
  type Status = { name?: string; state?: { waiting?: { reason?: string; message?: string } } };
  const all = [...((st.initContainerStatuses as Status[] | undefined) ?? []), ...((st.containerStatuses as Status[] | undefined) ?? [])];
  const held = all.find((c) => c.state?.waiting?.reason && !ROUTINE_WAITS.has(c.state.waiting.reason));
  if (!held) return undefined;
  const w = held.state!.waiting!;
  const message = w.message ? `: ${w.message.replace(/\s+/g, ' ').slice(0, 160)}` : '';
  return `container ${held.name ?? '?'} ${w.reason}${message}`;
}

function pod(obj: KubeObject): Readiness {
  const st = statusOf(obj);
  if (st.phase === 'Failed')
    return { ready: false, message: 'failed', failed: `the pod failed${st.reason ? ` (${String(st.reason)})` : ''}${st.message ? `: ${String(st.message)}` : ''}` };
  if (st.phase === 'Succeeded') return READY;
  if (podReady(obj)) return READY;
  const held = containerWait(st);
  if (st.phase === 'Running') return waiting(`waiting for the pod to be ready${held ? ` (${held})` : ''}`);
  return waiting(`waiting for the pod to run (phase ${st.phase ?? 'Pending'}${held ? `; ${held}` : ''})`);
}

function job(obj: KubeObject): Readiness {
  const st = statusOf(obj);
  const failed = condition(st, 'Failed');
  if (failed?.status === 'True')
    return { ready: false, message: 'failed', failed: `the job failed${failed.reason ? ` (${failed.reason})` : ''}${failed.message ? `: ${failed.message}` : ''}` };
  if (condition(st, 'Complete')?.status === 'True') return READY;
  const completions = specOf(obj).completions === undefined ? 1 : num(specOf(obj).completions);
  return waiting(`waiting for ${num(st.succeeded)}/${completions} completions`);
}

function pvc(obj: KubeObject): Readiness {
  const phase = statusOf(obj).phase;
  if (phase === 'Bound') return READY;
  if (phase === 'Lost') return { ready: false, message: 'lost', failed: 'the claim lost its volume' };
  return waiting(`waiting for the claim to be bound (phase ${phase ?? 'Pending'})`);
}

function persistentVolume(obj: KubeObject): Readiness {
  const phase = statusOf(obj).phase;
  if (phase === 'Failed') return { ready: false, message: 'failed', failed: 'the volume failed' };
  return phase === undefined || phase === 'Pending' ? waiting('waiting for the volume to be available') : READY;
}

function service(obj: KubeObject): Readiness {
  const spec = specOf(obj);
  if (spec.type === 'ExternalName') return READY;
  if (!spec.clusterIP) return waiting('waiting for a cluster IP');
  return READY;
}

function crd(obj: KubeObject): Readiness {
  const st = statusOf(obj);
  const names = condition(st, 'NamesAccepted');
  if (names?.status === 'False') return { ready: false, message: 'names not accepted', failed: `its names were not accepted: ${names.message ?? names.reason ?? ''}` };
  if (condition(st, 'Established')?.status === 'True') return READY;
  return waiting('waiting for the definition to be established');
}

function namespace(obj: KubeObject): Readiness {
  const phase = statusOf(obj).phase;
  if (phase === 'Terminating') return waiting('waiting for the namespace to finish terminating');
  return phase === 'Active' ? READY : waiting('waiting for the namespace to be active');
}

const READY_PHASES = new Set(['Running', 'Ready', 'Active', 'Available', 'Bound', 'Provisioned', 'Succeeded', 'Complete', 'Completed', 'Established', 'Healthy']);
const FAILED_PHASES = new Set(['Failed', 'Error']);

/** What the driver knows of an object's kind beyond the object itself. */
export interface KindFacts {
  /**
   * A custom resource whose kind has a status subresource: a controller
   * reports on it, so it is ready only once that report says so — not
   * while `status` is still absent (the controller has not reached it).
   */
  reportsStatus?: boolean;
}

/** Custom resources and kinds without a predicate of their own. */
function generic(obj: KubeObject, facts: KindFacts): Readiness {
  const st = obj.status as Status | undefined;
  const reported = st !== undefined && typeof st === 'object' && Object.keys(st).length > 0;
  if (!reported) return facts.reportsStatus ? waiting('waiting for its controller to report a status') : READY;
  const generation = (obj.metadata as { generation?: number }).generation;
  if (facts.reportsStatus) {
    const rollout = replicasRollout(obj, st);
    if (rollout) return rollout;
  }
  const ready = condition(st, 'Ready') ?? condition(st, 'Available');
  if (ready) {
    const observed = ready.observedGeneration ?? st.observedGeneration;
    if (generation !== undefined && observed !== undefined && observed < generation) {
      return waiting(`waiting for the controller to observe generation ${generation}`);
    }
    if (ready.status === 'True') return READY;
    return waiting(`waiting for ${ready.type}${ready.reason ? ` (${ready.reason}${ready.message ? `: ${ready.message}` : ''})` : ''}`);
  }
  if (generation !== undefined && st.observedGeneration !== undefined && st.observedGeneration < generation) {
    return waiting(`waiting for the controller to observe generation ${generation}`);
  }
  if (typeof st.phase === 'string') {
    if (FAILED_PHASES.has(st.phase)) return { ready: false, message: 'failed', failed: `its phase is ${st.phase}` };
    return READY_PHASES.has(st.phase) ? READY : waiting(`waiting in phase ${st.phase}`);
  }
  // Cluster API providers (OpenStackCluster, KubevirtCluster …) report a bare boolean.
  if (typeof st.ready === 'boolean') return st.ready ? READY : waiting('waiting for status.ready to be true');
  return READY;
}

/**
 * A scalable custom resource (MachineDeployment, a control plane) that
 * counts its replicas as a Deployment does: not ready while it reports fewer
 * updated or ready replicas than asked for, or old ones still to go — its
 * Ready condition may already be True half-way through a rollout. Counts it
 * does not report are not judged.
 */
function replicasRollout(obj: KubeObject, st: Status): Readiness | undefined {
  const want = specOf(obj).replicas;
  if (typeof want !== 'number') return undefined;
  const generation = (obj.metadata as { generation?: number }).generation;
  if (generation !== undefined && typeof st.observedGeneration === 'number' && st.observedGeneration < generation) {
    return waiting(`waiting for the controller to observe generation ${generation}`);
  }
  const updated = typeof st.upToDateReplicas === 'number' ? st.upToDateReplicas : st.updatedReplicas;
  if (typeof updated === 'number' && updated < want) return replicasMessage(updated, want, 'updated');
  if (typeof st.replicas === 'number' && st.replicas > want) return waiting(`waiting for ${st.replicas - want} old replicas to go`);
  if (typeof st.readyReplicas === 'number' && st.readyReplicas < want) return replicasMessage(st.readyReplicas, want);
  return undefined;
}

/** Readiness by an operator's rule (additionalParams.vnfm_readiness). */
function byRule(obj: KubeObject, rule: ReadinessRule): Readiness {
  if (rule.present) return READY;
  if (rule.condition !== undefined) {
    const st = statusOf(obj);
    const c = condition(st, rule.condition);
    const generation = (obj.metadata as { generation?: number }).generation;
    const observed = c?.observedGeneration ?? st.observedGeneration;
    if (c && generation !== undefined && observed !== undefined && observed < generation) {
      return waiting(`waiting for the controller to observe generation ${generation}`);
    }
    if (c?.status === 'True') return READY;
    return waiting(`waiting for condition ${rule.condition}${c ? ` (now ${c.status}${c.reason ? `, ${c.reason}` : ''})` : ''}`);
  }
  const path = rule.jsonPath!;
  const value = valueAt(obj, path);
  if (rule.failedValues?.includes(value as string)) return { ready: false, message: 'failed', failed: `${path} is ${JSON.stringify(value)}` };
  if ((rule.values ?? [true]).includes(value as string)) return READY;
  return waiting(`waiting for ${path} to be ${(rule.values ?? [true]).map((v) => JSON.stringify(v)).join(' or ')} (now ${value === undefined ? 'unset' : JSON.stringify(value)})`);
}

const PREDICATES: Record<string, (obj: KubeObject) => Readiness> = {
  Deployment: deployment,
  ReplicaSet: replicaSet,
  ReplicationController: replicaSet,
  StatefulSet: statefulSet,
  DaemonSet: daemonSet,
  Pod: pod,
  Job: job,
  PersistentVolumeClaim: pvc,
  PersistentVolume: persistentVolume,
  Service: service,
  CustomResourceDefinition: crd,
  Namespace: namespace,
  // Ready once created, as in Tacker: without a metrics server its status never says more.
  HorizontalPodAutoscaler: () => READY,
};

/**
 * Kinds whose status the API server or a controller fills; anything else is
 * judged generically. An operator's rule for the kind (`overrides`) wins.
 */
export function assessReadiness(obj: KubeObject, overrides?: ReadinessOverrides, facts: KindFacts = {}): Readiness {
  if ((obj.metadata as { deletionTimestamp?: string }).deletionTimestamp) return waiting('being deleted');
  const rule = ruleFor(overrides, obj);
  if (rule) return byRule(obj, rule);
  const predicate = PREDICATES[obj.kind];
  return predicate ? predicate(obj) : generic(obj, facts);
}
