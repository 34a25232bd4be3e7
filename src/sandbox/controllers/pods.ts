/**
 * The scheduler and the kubelets of the emulated nodes, for pods: an
 * unscheduled pod is bound to a Ready node (round robin, honouring
 * `nodeName`, `nodeSelector` and the node-name affinity DaemonSets use);
 * after the ready delay it is Running with a pod IP and Ready (Job pods then
 * succeed after the same delay again); a pod deleted with a grace period
 * stays Terminating for the termination delay, then goes. A pod held not
 * ready (faults.neverReady) gets the Warning event a kubelet posts for a
 * failing readiness probe. No container runs.
 */
import type { KubeObject } from '../resources.js';
import type { Described } from '../faults.js';
import { controllerOf, isEvent, key, spec, splitKey, status, WorkQueue, type Controller, type ControllerContext } from './base.js';

type Obj = Record<string, any>;

type RunState = 'running' | 'succeeded' | 'failed';

/** The pod and its owners up the controller chain, for fault rules. */
function controllerChain(api: ControllerContext['api'], pod: KubeObject): Described[] {
  const out: Described[] = [{ kind: 'Pod', object: pod }];
  let current = pod;
  for (let depth = 0; depth < 5; depth++) {
    const ref = controllerOf(current);
    const owner = ref && api.store.peekByUid(ref.uid);
    if (!ref || !owner) break;
    out.push({ kind: ref.kind, object: owner.object });
    current = owner.object;
  }
  return out;
}

/** Whether the pod's node selector and required node affinity admit `n`. */
function nodeFits(n: KubeObject, s: Obj): boolean {
  for (const [k, v] of Object.entries((s.nodeSelector as Record<string, string> | undefined) ?? {})) if (n.metadata.labels?.[k] !== v) return false;
  const terms = (s.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms as Obj[] | undefined) ?? [];
  if (terms.length === 0) return true;
  return terms.some(
    (t) =>
      ((t.matchFields as Obj[] | undefined) ?? []).every((f) => f.key !== 'metadata.name' || (f.operator === 'In' && (f.values as string[]).includes(n.metadata.name))) &&
      ((t.matchExpressions as Obj[] | undefined) ?? []).every((e) => {
        const v = n.metadata.labels?.[e.key as string];
        if (e.operator === 'In') return v !== undefined && (e.values as string[]).includes(v);
        if (e.operator === 'NotIn') return v === undefined || !(e.values as string[]).includes(v);
        if (e.operator === 'Exists') return v !== undefined;
        if (e.operator === 'DoesNotExist') return v === undefined;
        return true;
      }),
  );
}

function containerStatuses(pod: KubeObject, state: RunState, ready: boolean, now: () => string): Obj[] {
  return ((spec(pod).containers as Obj[] | undefined) ?? []).map((c) => ({
    name: c.name,
    image: c.image,
    imageID: `${c.image}@sha256:${'0'.repeat(64)}`,
    containerID: `containerd://${Buffer.from(`${pod.metadata.uid}/${c.name}`).toString('hex').slice(0, 64)}`,
    ready,
    started: state === 'running',
    restartCount: 0,
    state:
      state === 'running'
        ? { running: { startedAt: now() } }
        : { terminated: { exitCode: state === 'succeeded' ? 0 : 1, reason: state === 'succeeded' ? 'Completed' : 'Error', startedAt: now(), finishedAt: now() } },
    lastState: {},
  }));
}

/** Where pods go: round robin over the Ready, schedulable nodes they fit; and their IPs, a range per node. */
class Placement {
  private nextNode = 0;
  private readonly ipCounters = new Map<string, number>();

  pickNode(nodes: KubeObject[], pod: KubeObject): KubeObject | undefined {
    const ready = nodes.filter((n) => ((status(n).conditions as Obj[] | undefined) ?? []).some((c) => c.type === 'Ready' && c.status === 'True') && !spec(n).unschedulable);
    const candidates = ready.filter((n) => nodeFits(n, spec(pod)));
    if (candidates.length === 0) return undefined;
    return candidates[this.nextNode++ % candidates.length];
  }

  podIp(nodes: KubeObject[], nodeName: string): string {
    const nodeIndex =
      Math.max(
        0,
        nodes.findIndex((n) => n.metadata.name === nodeName),
      ) + 1;
    const n = (this.ipCounters.get(nodeName) ?? 1) + 1;
    this.ipCounters.set(nodeName, n);
    return `10.244.${nodeIndex}.${n}`;
  }
}

/** The status a kubelet reports for a pod in `state`; `podIp` allocates an address when the pod has none. */
function runStatus(pod: KubeObject, node: KubeObject | undefined, state: RunState, ready: boolean, now: () => string, podIp: () => string): Obj {
  const s = status(pod);
  const t = now();
  const cond = (type: string, ok: boolean, reason?: string): Obj => ({
    type,
    status: ok ? 'True' : 'False',
    lastProbeTime: null,
    lastTransitionTime: ((s.conditions as Obj[] | undefined) ?? []).find((c) => c.type === type && c.status === (ok ? 'True' : 'False'))?.lastTransitionTime ?? t,
    ...(reason ? { reason } : {}),
  });
  const running = state === 'running';
  const next: Obj = {
    ...s,
    phase: running ? 'Running' : state === 'succeeded' ? 'Succeeded' : 'Failed',
    conditions: [
      cond('PodReadyToStartContainers', running),
      cond('Initialized', true, state === 'succeeded' ? 'PodCompleted' : undefined),
      cond('Ready', ready, ready ? undefined : state === 'succeeded' ? 'PodCompleted' : 'ContainersNotReady'),
      cond('ContainersReady', ready, ready ? undefined : state === 'succeeded' ? 'PodCompleted' : 'ContainersNotReady'),
      cond('PodScheduled', true),
    ],
    hostIP: s.hostIP ?? (node?.status as Obj | undefined)?.addresses?.[0]?.address ?? '172.18.0.2',
    podIP: s.podIP ?? podIp(),
    startTime: s.startTime ?? t,
    containerStatuses: containerStatuses(pod, state, ready, now),
  };
  next.hostIPs = [{ ip: next.hostIP }];
  next.podIPs = [{ ip: next.podIP }];
  if (state === 'failed') next.reason = 'Error';
  return next;
}

/** The Event of a failed readiness probe of `pod`, as a kubelet posts it. */
function unhealthyEvent(pod: KubeObject, at: string): KubeObject {
  const container = ((spec(pod).containers as Obj[] | undefined) ?? [])[0]?.name as string | undefined;
  const node = spec(pod).nodeName as string;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${pod.metadata.name}.unhealthy`, namespace: pod.metadata.namespace },
    involvedObject: {
      apiVersion: 'v1',
      kind: 'Pod',
      name: pod.metadata.name,
      namespace: pod.metadata.namespace,
      uid: pod.metadata.uid,
      ...(container ? { fieldPath: `spec.containers{${container}}` } : {}),
    },
    type: 'Warning',
    reason: 'Unhealthy',
    message: 'Readiness probe failed: the sandbox holds this pod not ready (faults.neverReady)',
    count: 1,
    firstTimestamp: at,
    lastTimestamp: at,
    source: { component: 'kubelet', host: node },
    reportingComponent: 'kubelet',
    reportingInstance: node,
  } as KubeObject;
}

/** A Terminating pod whose grace period is over goes. */
function killPod(api: ControllerContext['api'], podKey: string): void {
  const pods = api.type('', 'pods');
  const { namespace, name } = splitKey(podKey);
  const pod = api.peek(pods, namespace, name);
  if (pod?.metadata.deletionTimestamp) api.delete(pods, namespace, name, { gracePeriodSeconds: 0 });
}

function isJobPod(pod: KubeObject): boolean {
  return controllerOf(pod)?.kind === 'Job';
}

export function startPodLifecycle(ctx: ControllerContext): Controller {
  const { api } = ctx;
  const pods = api.type('', 'pods');
  const nodes = api.type('', 'nodes');
  const events = api.type('', 'events');
  const started = new Map<string, string>(); // pod key → uid whose start is scheduled
  const terminating = new Set<string>();
  const placement = new Placement();
  const now = (): string =>
    api
      .now()
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z');

  const chain = (pod: KubeObject): Described[] => controllerChain(api, pod);

  function schedule(pod: KubeObject): void {
    const node = placement.pickNode(api.scan(nodes), pod);
    if (!node) return; // Stays Pending, as without a fitting node.
    const next = structuredClone(pod);
    (next.spec as Obj).nodeName = node.metadata.name;
    // Through the binding subresource, as a scheduler binds: a client's update may not set spec.nodeName.
    api.update(pods, next, { manager: 'kube-scheduler', subresource: 'binding' });
    const bound = api.getShared(pods, pod.metadata.namespace, pod.metadata.name);
    const conditions = [{ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: now() }];
    api.update(pods, { ...bound, status: { ...status(bound), conditions } }, { subresource: 'status', manager: 'kube-scheduler' });
  }

  function setRunState(pod: KubeObject, state: RunState): void {
    const node = api.peek(nodes, undefined, spec(pod).nodeName as string);
    const ready = state === 'running' && !ctx.faults.neverReady(chain(pod));
    const next = runStatus(pod, node, state, ready, now, () => placement.podIp(api.scan(nodes), spec(pod).nodeName as string));
    api.update(pods, { ...pod, status: next }, { subresource: 'status', manager: 'kubelet' });
    // A pod held not ready gets the Warning a kubelet posts for a failing readiness probe (one, as a first probe's).
    const warning = state === 'running' && !ready ? unhealthyEvent(pod, now()) : undefined;
    if (warning && !api.peek(events, pod.metadata.namespace, warning.metadata.name)) api.create(events, warning, { manager: 'kubelet' });
  }

  function reconcile(k: string): void {
    const { namespace, name } = splitKey(k);
    const pod = api.peek(pods, namespace, name);
    if (!pod) {
      started.delete(k);
      terminating.delete(k);
      return;
    }
    const s = spec(pod);
    if (pod.metadata.deletionTimestamp) {
      const grace = Number(pod.metadata.deletionGracePeriodSeconds ?? 0);
      if (grace > 0 && !terminating.has(k)) {
        terminating.add(k);
        queue.addAfter(`kill:${k}`, Math.min(grace * 1000, ctx.terminationDelayMs));
      }
      return;
    }
    if (!s.nodeName) {
      // Only the default scheduler runs here; a pod naming another stays Pending, unbound.
      if ((s.schedulerName ?? 'default-scheduler') === 'default-scheduler') schedule(pod);
      return;
    }
    const phase = status(pod).phase ?? 'Pending';
    if (phase === 'Succeeded' || phase === 'Failed') return;
    if (ctx.faults.failPod(chain(pod))) {
      setRunState(pod, 'failed');
      return;
    }
    if (phase === 'Pending') {
      if (started.get(k) !== pod.metadata.uid) {
        started.set(k, pod.metadata.uid!);
        queue.addAfter(`start:${k}`, ctx.readyDelayMs);
      }
      return;
    }
    // Running: readiness follows the fault rules, which may have changed.
    const ready = ((status(pod).conditions as Obj[] | undefined) ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    if (ready === ctx.faults.neverReady(chain(pod))) setRunState(pod, 'running');
  }

  const queue = new WorkQueue((k) => {
    if (k.startsWith('kill:')) {
      terminating.delete(k.slice(5));
      killPod(api, k.slice(5));
      return;
    }
    if (k.startsWith('start:')) {
      const podKey = k.slice(6);
      const { namespace, name } = splitKey(podKey);
      const pod = api.peek(pods, namespace, name);
      if (!pod || pod.metadata.deletionTimestamp || (status(pod).phase ?? 'Pending') !== 'Pending') return;
      if (ctx.faults.failPod(chain(pod))) {
        setRunState(pod, 'failed');
        return;
      }
      setRunState(pod, 'running');
      if (isJobPod(pod)) queue.addAfter(`finish:${podKey}`, ctx.readyDelayMs);
      return;
    }
    if (k.startsWith('finish:')) {
      const { namespace, name } = splitKey(k.slice(7));
      const pod = api.peek(pods, namespace, name);
      if (pod && !pod.metadata.deletionTimestamp && status(pod).phase === 'Running') setRunState(pod, 'succeeded');
      return;
    }
    reconcile(k);
  });

  const unsubscribe = api.store.subscribe((event) => {
    if (isEvent(event, '', 'pods')) queue.add(key(event.object));
    else if (isEvent(event, '', 'nodes')) for (const p of api.scan(pods)) if (!spec(p).nodeName) queue.add(key(p));
  });
  const previous = ctx.faults.onChange;
  ctx.faults.onChange = () => {
    previous();
    for (const p of api.scan(pods)) queue.add(key(p));
  };

  return {
    stop() {
      unsubscribe();
      queue.stop();
    },
  };
}
