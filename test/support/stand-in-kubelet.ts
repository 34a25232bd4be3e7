/**
 * A stand-in for the scheduler and the kubelets of a real API server that
 * has neither: it registers a few fake Nodes (Ready, untainted), binds each
 * Pending Pod to one of them through `pods/binding`, reports it Running and
 * Ready (podIP, containerStatuses) as a kubelet would once its containers
 * started, and finishes graceful deletions (delete with grace 0).
 *
 * No container runs: this only drives the API objects, so that the real
 * controllers of kube-controller-manager (Deployments, ReplicaSets,
 * StatefulSets, DaemonSets, Jobs, endpoints, garbage collection) see their
 * Pods come up and go away. It schedules as simply as the tests need:
 * only Pods of the `default-scheduler` are bound; `nodeName`, `nodeSelector`
 * and required node affinity (which the DaemonSet controller uses to pin
 * each Pod to its node) are honoured, and a Pod whose
 * PersistentVolumeClaims are not all Bound waits (there is no provisioner:
 * tests create their PersistentVolumes). Taints, resources and pod
 * affinity are not considered.
 *
 * Tests can hold workloads back from becoming ready, from any process,
 * through the API: {@link holdPods} records a hold in a ConfigMap the
 * stand-in watches; the Pods of a held workload are bound but never
 * started (as while their images are pulled) until the hold is lifted.
 */
import { randomBytes } from 'node:crypto';
import { kubeRequest, kubeWatch, type KubeEndpoint, type KubeWatch } from './kube-http.js';

export interface StandInKubeletOptions {
  /** Names of the Nodes to register; default `stand-in-node-1`, `stand-in-node-2`. */
  nodes?: string[];
  /** Told of failures the loop survives (an API error on one Pod); default: ignored. */
  onError?: (err: Error) => void;
  /** How often a Pod that cannot be bound yet is looked at again; default 500 ms. */
  retryMs?: number;
}

export interface StandInKubelet {
  /** The registered Node names. */
  readonly nodes: readonly string[];
  /** Stops watching; the Nodes and Pods stay as they are. */
  stop(): Promise<void>;
}

interface NodeInfo {
  name: string;
  labels: Record<string, string>;
  index: number;
  nextIp: number;
}

const DEFAULT_SCHEDULER = 'default-scheduler';

/** The ConfigMap whose data holds the holds, one JSON {@link PodHold} per key. */
export const HOLDS_CONFIGMAP = { namespace: 'kube-system', name: 'stand-in-kubelet-holds' } as const;

/**
 * Which Pods not to start: those of which the Pod itself or one of its
 * controlling owners (ReplicaSet, then Deployment; StatefulSet; DaemonSet;
 * Job) has this kind and name (and namespace, when given).
 */
export interface PodHold {
  kind: string;
  name: string;
  namespace?: string;
}

const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/** Registers the Nodes and starts binding and running Pods. */
export async function startStandInKubelet(endpoint: KubeEndpoint, opts: StandInKubeletOptions = {}): Promise<StandInKubelet> {
  const names = opts.nodes ?? ['stand-in-node-1', 'stand-in-node-2'];
  const onError = opts.onError ?? (() => {});
  const retryMs = opts.retryMs ?? 500;
  const nodes: NodeInfo[] = [];
  for (const [i, name] of names.entries()) nodes.push(await registerNode(endpoint, name, i + 1));

  let stopped = false;
  let roundRobin = 0;
  const retries = new Map<string, NodeJS.Timeout>();
  /** One chain of work per Pod, so that events of a Pod are handled in order. */
  const chains = new Map<string, Promise<void>>();
  /** UIDs of the Pods whose containers were reported started. */
  const started = new Set<string>();
  let holds: PodHold[] = [];
  /** Pods bound but not started because of a hold, by UID: looked at again when the holds change. */
  const held = new Map<string, any>();
  const watches = new Set<KubeWatch>();

  const key = (pod: any): string => `${pod.metadata.namespace}/${pod.metadata.name}`;
  const podPath = (pod: any): string => `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`;

  function enqueue(pod: any): void {
    const k = key(pod);
    const previous = chains.get(k) ?? Promise.resolve();
    const next = previous.then(() => (stopped ? undefined : handle(pod))).catch((err: Error) => onError(err));
    chains.set(k, next);
    void next.then(() => {
      if (chains.get(k) === next) chains.delete(k);
    });
  }

  function retryLater(pod: any): void {
    const k = key(pod);
    if (stopped || retries.has(k)) return;
    retries.set(
      k,
      setTimeout(async () => {
        retries.delete(k);
        const fresh = await kubeRequest(endpoint, 'GET', podPath(pod)).catch(() => undefined);
        if (fresh?.status === 200) enqueue(fresh.json);
      }, retryMs),
    );
  }

  async function handle(pod: any): Promise<void> {
    if (pod.metadata.deletionTimestamp) {
      if (pod.spec.nodeName) await finishDeletion(pod);
      return;
    }
    if (!pod.spec.nodeName) {
      // Pods for another scheduler wait for it, as with a real default scheduler.
      if ((pod.spec.schedulerName ?? DEFAULT_SCHEDULER) !== DEFAULT_SCHEDULER) return;
      const node = await pickNode(pod);
      if (!node) return retryLater(pod);
      const bound = await kubeRequest(endpoint, 'POST', `${podPath(pod)}/binding`, {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: pod.metadata.name, uid: pod.metadata.uid },
        target: { apiVersion: 'v1', kind: 'Node', name: node.name },
      });
      // 409: bound meanwhile; 404: deleted meanwhile. The next event tells.
      if (bound.status >= 300 && bound.status !== 409 && bound.status !== 404) throw new Error(`bind ${key(pod)}: HTTP ${bound.status}: ${bound.text}`);
      return;
    }
    const node = nodes.find((n) => n.name === pod.spec.nodeName);
    if (!node) return; // bound to a node that is not ours
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed' || phase === 'Running') return;
    // Events that left before the status did would start it twice.
    if (started.has(pod.metadata.uid)) return;
    if (holds.length && (await isHeld(pod))) {
      held.set(pod.metadata.uid, pod);
      return;
    }
    held.delete(pod.metadata.uid);
    started.add(pod.metadata.uid);
    await runPod(pod, node);
  }

  /** Whether the Pod or one of its controlling owners is held. */
  async function isHeld(pod: any): Promise<boolean> {
    let obj = pod;
    for (let depth = 0; obj && depth < 4; depth++) {
      const o = obj;
      if (holds.some((h) => h.kind === o.kind && h.name === o.metadata.name && (!h.namespace || h.namespace === o.metadata.namespace))) return true;
      const owner = (o.metadata.ownerReferences ?? []).find((r: any) => r.controller);
      if (!owner) return false;
      const [group, version] = owner.apiVersion.includes('/') ? owner.apiVersion.split('/') : ['', owner.apiVersion];
      const plural = `${owner.kind.toLowerCase()}s`;
      const path = group
        ? `/apis/${group}/${version}/namespaces/${o.metadata.namespace}/${plural}/${owner.name}`
        : `/api/${version}/namespaces/${o.metadata.namespace}/${plural}/${owner.name}`;
      const got = await kubeRequest(endpoint, 'GET', path);
      // An owner of a kind this cannot name by its plural: compare by reference.
      obj = got.status === 200 ? got.json : { kind: owner.kind, metadata: { name: owner.name, namespace: o.metadata.namespace } };
    }
    return false;
  }

  async function pickNode(pod: any): Promise<NodeInfo | undefined> {
    const candidates = nodes.filter((n) => nodeFits(pod, n));
    if (candidates.length === 0) return undefined;
    for (const v of pod.spec.volumes ?? []) {
      const claim = v.persistentVolumeClaim?.claimName;
      if (!claim) continue;
      const pvc = await kubeRequest(endpoint, 'GET', `/api/v1/namespaces/${pod.metadata.namespace}/persistentvolumeclaims/${claim}`);
      if (pvc.status !== 200 || pvc.json.status?.phase !== 'Bound') return undefined;
    }
    return candidates[roundRobin++ % candidates.length];
  }

  async function runPod(pod: any, node: NodeInfo): Promise<void> {
    const startedAt = now();
    const ownedByJob = (pod.metadata.ownerReferences ?? []).some((o: any) => o.kind === 'Job');
    const containerStatus = (c: any, done: boolean): any => ({
      name: c.name,
      image: c.image,
      imageID: `${c.image}@sha256:${randomBytes(32).toString('hex')}`,
      containerID: `containerd://${randomBytes(32).toString('hex')}`,
      ready: !done,
      started: !done,
      restartCount: 0,
      state: done ? { terminated: { exitCode: 0, reason: 'Completed', startedAt, finishedAt: startedAt } } : { running: { startedAt } },
    });
    // Node i's pods get 10.244.i.2-255, then 10.244.(i+16).0-255 and so on: a long run (a 500-object CNF, again and again) never makes an invalid address.
    const n = node.nextIp++;
    const podIp = `10.244.${node.index + 16 * Math.floor(n / 256)}.${n % 256}`;
    const condition = (type: string, status = 'True'): any => ({ type, status, lastProbeTime: null, lastTransitionTime: startedAt });
    const status = {
      phase: ownedByJob ? 'Succeeded' : 'Running',
      hostIP: nodeAddress(node),
      podIP: podIp,
      podIPs: [{ ip: podIp }],
      startTime: startedAt,
      conditions: [
        condition('Initialized'),
        condition('Ready', ownedByJob ? 'False' : 'True'),
        condition('ContainersReady', ownedByJob ? 'False' : 'True'),
        condition('PodScheduled'),
      ],
      ...(pod.spec.initContainers?.length ? { initContainerStatuses: pod.spec.initContainers.map((c: any) => containerStatus(c, true)) } : {}),
      containerStatuses: pod.spec.containers.map((c: any) => containerStatus(c, ownedByJob)),
    };
    // A merge patch replaces the lists (conditions, podIPs) whole; the uid makes it a precondition.
    const reply = await kubeRequest(endpoint, 'PATCH', `${podPath(pod)}/status`, { metadata: { uid: pod.metadata.uid }, status }, 'application/merge-patch+json');
    if (reply.status >= 300 && reply.status !== 404 && reply.status !== 409) throw new Error(`status of ${key(pod)}: HTTP ${reply.status}: ${reply.text}`);
  }

  async function finishDeletion(pod: any): Promise<void> {
    const reply = await kubeRequest(endpoint, 'DELETE', podPath(pod), {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      gracePeriodSeconds: 0,
      preconditions: { uid: pod.metadata.uid },
    });
    if (reply.status >= 300 && reply.status !== 404 && reply.status !== 409) throw new Error(`delete ${key(pod)}: HTTP ${reply.status}: ${reply.text}`);
  }

  /**
   * Lists `collection` (with `query`), hands each object to `onObject`, then
   * watches from there; lists again when the watch's resourceVersion expired.
   */
  async function listWatch(collection: string, query: Record<string, string>, onObject: (obj: any) => void, onDeleted: (obj: any) => void): Promise<void> {
    const qs = new URLSearchParams(query).toString();
    while (!stopped) {
      const list = await kubeRequest(endpoint, 'GET', qs ? `${collection}?${qs}` : collection);
      if (list.status !== 200) throw new Error(`list ${collection}: HTTP ${list.status}: ${list.text}`);
      // List items carry no kind of their own; watch events' objects do.
      const kind = String(list.json.kind).replace(/List$/, '');
      for (const obj of list.json.items) onObject({ kind, ...obj });
      let rv: string = list.json.metadata.resourceVersion;
      let expired = false;
      while (!stopped && !expired) {
        const w = kubeWatch(endpoint, collection, { ...query, resourceVersion: rv, timeoutSeconds: '300' }, (e) => {
          if (e.type === 'ERROR') {
            expired = true;
            return;
          }
          rv = e.object.metadata.resourceVersion;
          if (e.type === 'ADDED' || e.type === 'MODIFIED') onObject(e.object);
          else if (e.type === 'DELETED') onDeleted(e.object);
        });
        watches.add(w);
        await w.done.catch((err: Error) => {
          if (!stopped) onError(err);
          expired = true;
        });
        watches.delete(w);
      }
    }
  }

  function setHolds(configMap: any | undefined): void {
    const next: PodHold[] = [];
    for (const v of Object.values<string>(configMap?.data ?? {})) {
      try {
        next.push(JSON.parse(v) as PodHold);
      } catch {
        onError(new Error(`${HOLDS_CONFIGMAP.namespace}/${HOLDS_CONFIGMAP.name}: not a JSON hold: ${v}`));
      }
    }
    holds = next;
    for (const pod of held.values()) enqueue(pod);
  }

  const holdsPath = `/api/v1/namespaces/${HOLDS_CONFIGMAP.namespace}/configmaps`;
  const initialHolds = await kubeRequest(endpoint, 'GET', `${holdsPath}/${HOLDS_CONFIGMAP.name}`);
  if (initialHolds.status === 200) setHolds(initialHolds.json);
  const running = Promise.all([
    listWatch(holdsPath, { fieldSelector: `metadata.name=${HOLDS_CONFIGMAP.name}` }, setHolds, () => setHolds(undefined)),
    listWatch('/api/v1/pods', {}, enqueue, (pod) => {
      started.delete(pod.metadata.uid);
      held.delete(pod.metadata.uid);
    }),
  ]).catch((err: Error) => {
    if (!stopped) onError(err);
  });

  return {
    nodes: names,
    async stop() {
      stopped = true;
      for (const w of watches) w.stop();
      for (const t of retries.values()) clearTimeout(t);
      retries.clear();
      await running;
      await Promise.allSettled([...chains.values()]);
    },
  };
}

function nodeAddress(node: NodeInfo): string {
  return `10.0.0.${node.index + 10}`;
}

/** Creates (or takes over) a Node, reports it Ready and lifts the not-ready taint the API server put on it. */
async function registerNode(endpoint: KubeEndpoint, name: string, index: number): Promise<NodeInfo> {
  const labels = {
    'kubernetes.io/hostname': name,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'beta.kubernetes.io/arch': 'amd64',
  };
  const node: NodeInfo = { name, labels, index, nextIp: 2 };
  const created = await kubeRequest(endpoint, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels } });
  if (created.status !== 201 && created.status !== 409) throw new Error(`register node ${name}: HTTP ${created.status}: ${created.text}`);
  const at = now();
  const resources = { cpu: '8', memory: '32Gi', pods: '110', 'ephemeral-storage': '100Gi' };
  const condition = (type: string, status: string, reason: string): any => ({ type, status, reason, message: reason, lastHeartbeatTime: at, lastTransitionTime: at });
  const status = await kubeRequest(
    endpoint,
    'PATCH',
    `/api/v1/nodes/${name}/status`,
    {
      status: {
        capacity: resources,
        allocatable: resources,
        addresses: [
          { type: 'InternalIP', address: nodeAddress(node) },
          { type: 'Hostname', address: name },
        ],
        conditions: [
          condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory'),
          condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure'),
          condition('PIDPressure', 'False', 'KubeletHasSufficientPID'),
          condition('Ready', 'True', 'KubeletReady'),
        ],
        nodeInfo: {
          machineID: randomBytes(16).toString('hex'),
          systemUUID: randomBytes(16).toString('hex'),
          bootID: randomBytes(16).toString('hex'),
          kernelVersion: '6.1.0',
          osImage: 'stand-in',
          containerRuntimeVersion: 'containerd://stand-in',
          kubeletVersion: 'v0.0.0-stand-in',
          kubeProxyVersion: 'v0.0.0-stand-in',
          operatingSystem: 'linux',
          architecture: 'amd64',
        },
      },
    },
    'application/strategic-merge-patch+json',
  );
  if (status.status !== 200) throw new Error(`status of node ${name}: HTTP ${status.status}: ${status.text}`);
  const untainted = await kubeRequest(endpoint, 'PATCH', `/api/v1/nodes/${name}`, { spec: { taints: null } }, 'application/merge-patch+json');
  if (untainted.status !== 200) throw new Error(`untaint node ${name}: HTTP ${untainted.status}: ${untainted.text}`);
  return node;
}

/** Whether `pod` may run on `node` by its nodeSelector and required node affinity. */
export function nodeFits(pod: any, node: { name: string; labels: Record<string, string> }): boolean {
  for (const [k, v] of Object.entries<string>(pod.spec.nodeSelector ?? {})) if (node.labels[k] !== v) return false;
  const terms: any[] | undefined = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms || terms.length === 0) return true;
  const matches = (req: any, value: string | undefined): boolean => {
    switch (req.operator) {
      case 'In':
        return value !== undefined && (req.values ?? []).includes(value);
      case 'NotIn':
        return value === undefined || !(req.values ?? []).includes(value);
      case 'Exists':
        return value !== undefined;
      case 'DoesNotExist':
        return value === undefined;
      default:
        return false; // Gt, Lt: no numeric labels here
    }
  };
  return terms.some(
    (t) =>
      (t.matchExpressions ?? []).every((r: any) => matches(r, node.labels[r.key])) && (t.matchFields ?? []).every((r: any) => r.key === 'metadata.name' && matches(r, node.name)),
  );
}

/**
 * Holds the Pods of a workload back from starting, through the stand-in
 * kubelet of the cluster at `endpoint` (whichever process runs it); resolves
 * once the hold is recorded, with a function that lifts it. Pods already
 * running stay so.
 */
export async function holdPods(endpoint: KubeEndpoint, hold: PodHold): Promise<() => Promise<void>> {
  const path = `/api/v1/namespaces/${HOLDS_CONFIGMAP.namespace}/configmaps`;
  const key = `hold-${randomBytes(4).toString('hex')}`;
  const value = JSON.stringify(hold);
  const created = await kubeRequest(endpoint, 'POST', path, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: HOLDS_CONFIGMAP.name }, data: { [key]: value } });
  if (created.status === 409) {
    const added = await kubeRequest(endpoint, 'PATCH', `${path}/${HOLDS_CONFIGMAP.name}`, { data: { [key]: value } }, 'application/merge-patch+json');
    if (added.status !== 200) throw new Error(`hold ${value}: HTTP ${added.status}: ${added.text}`);
  } else if (created.status !== 201) {
    throw new Error(`hold ${value}: HTTP ${created.status}: ${created.text}`);
  }
  return async () => {
    const lifted = await kubeRequest(endpoint, 'PATCH', `${path}/${HOLDS_CONFIGMAP.name}`, { data: { [key]: null } }, 'application/merge-patch+json');
    if (lifted.status !== 200) throw new Error(`lift hold ${value}: HTTP ${lifted.status}: ${lifted.text}`);
  };
}
