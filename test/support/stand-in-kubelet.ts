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
 * Seen through the API server it behaves as a kubelet does: it posts the
 * core/v1 Events a kubelet posts (source.component `kubelet`, the Pod's
 * uid, the container's fieldPath): Pulling/Pulled, Created, Started, and
 * Killing on deletion; the Scheduled event of the scheduler (events.k8s.io).
 * An image it cannot pull (by default one from a registry under `.invalid`,
 * a name no resolver answers) leaves the Pod Pending with the container
 * Waiting in ErrImagePull, then ImagePullBackOff, and the Warning `Failed`
 * and Normal `BackOff` events a kubelet posts for it.
 *
 * With `tls`, each Node is registered with a loopback InternalIP and the
 * port of an HTTPS server (status.daemonEndpoints.kubeletEndpoint) that
 * answers `GET /containerLogs/NS/POD/CONTAINER` as a kubelet does, for the
 * API server's `pods/log` (its --kubelet-* flags: it verifies this
 * server's certificate, this server verifies its client certificate).
 * Since no container runs, a container's log holds lines standing in for
 * its output (it started; it is ready; one a `logLineIntervalMs` while a
 * client follows), and what tests had it print ({@link printInPods});
 * `tailLines`, `sinceSeconds`, `sinceTime`, `timestamps`, `limitBytes`,
 * `follow` and `previous` are honoured.
 *
 * Tests can hold workloads back from becoming ready, from any process,
 * through the API: {@link holdPods} records a hold in a ConfigMap the
 * stand-in watches; the Pods of a held workload are bound but never
 * started (as while their images are pulled: `as: 'pulling'`), or started
 * but failing their readiness probe (`as: 'unready'`: the Warning
 * `Unhealthy` event), until the hold is lifted.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { makeSignedCert } from './openssl-pki.js';
import { kubeRequest, kubeWatch, type KubeEndpoint, type KubeWatch } from './kube-http.js';

export interface StandInKubeletOptions {
  /** Names of the Nodes to register; default `stand-in-node-1`, `stand-in-node-2`. */
  nodes?: string[];
  /** Told of failures the loop survives (an API error on one Pod); default: ignored. */
  onError?: (err: Error) => void;
  /** How often a Pod that cannot be bound yet is looked at again; default 500 ms. */
  retryMs?: number;
  /**
   * The CA whose key signs each kubelet's serving certificate and that
   * signed the API server's client certificate, and a directory for the
   * certificates: each Node then serves containers' logs over HTTPS.
   */
  tls?: { caCertPath: string; caKeyPath: string; dir: string };
  /** How often a followed log gets a line; default 1000 ms. */
  logLineIntervalMs?: number;
  /** Whether an image cannot be pulled; default: its registry's host is under `.invalid`. */
  cannotPull?: (image: string) => boolean;
}

export interface StandInKubelet {
  /** The registered Node names. */
  readonly nodes: readonly string[];
  /** Stops watching and serving; the Nodes and Pods stay as they are. */
  stop(): Promise<void>;
}

interface NodeInfo {
  name: string;
  labels: Record<string, string>;
  index: number;
  nextIp: number;
  /** The port of its kubelet's HTTPS server (0: none). */
  port: number;
}

const DEFAULT_SCHEDULER = 'default-scheduler';

/** The ConfigMap whose data holds the holds and the printed output, one JSON {@link PodHold} or {@link PodOutput} per key. */
export const HOLDS_CONFIGMAP = { namespace: 'kube-system', name: 'stand-in-kubelet-holds' } as const;

/**
 * Which Pods not to start: those of which the Pod itself or one of its
 * controlling owners (ReplicaSet, then Deployment; StatefulSet; DaemonSet;
 * Job) has this kind and name (and namespace, when given). `as`: how they
 * are held: bound and not started, as while images are pulled (`pulling`,
 * the default), or started with a readiness probe that fails (`unready`).
 */
export interface PodHold {
  kind: string;
  name: string;
  namespace?: string;
  as?: 'pulling' | 'unready';
}

/**
 * What the containers of the matching Pods print (a container of that name
 * only, when given): `output`, or the bytes of `outputBase64` (which need
 * not be UTF-8), lines ended by newlines.
 */
export interface PodOutput {
  kind: string;
  name: string;
  namespace?: string;
  container?: string;
  output?: string;
  outputBase64?: string;
}

const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
/** RFC 3339 with nanoseconds, as a kubelet stamps log lines. */
const nanoTime = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
/** RFC 3339 with microseconds (MicroTime), as events.k8s.io's eventTime. */
const microTime = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** A registry host under `.invalid` (RFC 6761): no resolver answers for it, so no kubelet can pull from it. */
const invalidRegistry = (image: string): boolean => {
  const first = image.split('/')[0]!;
  return image.includes('/') && /\.invalid(:\d+)?$/.test(first);
};

interface LogLine {
  at: Date;
  text: string | Buffer;
}

/** What this kubelet runs of one Pod: each container's state and log. */
interface PodRuntime {
  pod: any;
  node: NodeInfo;
  /** Held by an `unready` hold: running, its readiness probe failing. */
  unready: boolean;
  containers: Map<string, { state: 'running' | 'terminated' | 'waiting'; reason?: string; log: LogLine[] }>;
  /** Responses following its logs, ended when it goes. */
  followers: Set<() => void>;
}

/** The body of a Status error as a kubelet's HTTP server (go-restful) writes one: the error's text. */
function kubeletError(res: ServerResponse, code: number, message: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(message);
}

/** Registers the Nodes and starts binding and running Pods. */
export async function startStandInKubelet(endpoint: KubeEndpoint, opts: StandInKubeletOptions = {}): Promise<StandInKubelet> {
  const names = opts.nodes ?? ['stand-in-node-1', 'stand-in-node-2'];
  const onError = opts.onError ?? (() => {});
  const retryMs = opts.retryMs ?? 500;
  const lineEveryMs = opts.logLineIntervalMs ?? 1000;
  const cannotPull = opts.cannotPull ?? invalidRegistry;
  const nodes: NodeInfo[] = [];
  const servers: HttpsServer[] = [];
  for (const [i, name] of names.entries()) {
    const node: NodeInfo = { name, labels: {}, index: i + 1, nextIp: 2, port: 0 };
    if (opts.tls) {
      const server = kubeletServer(node, opts.tls);
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, nodeAddress(node), () => resolve());
      });
      node.port = (server.address() as { port: number }).port;
    }
    nodes.push(await registerNode(endpoint, node));
  }

  let stopped = false;
  let roundRobin = 0;
  const retries = new Map<string, NodeJS.Timeout>();
  /** One chain of work per Pod, so that events of a Pod are handled in order. */
  const chains = new Map<string, Promise<void>>();
  /** The Pods whose containers were started (or whose images failed), by UID. */
  const runtimes = new Map<string, PodRuntime>();
  /** UIDs of held Pods whose Pulling events were posted. */
  const pulling = new Set<string>();
  /** Images pulled on each node already (IfNotPresent finds them there). */
  const pulled = new Map<string, Set<string>>();
  let holds: PodHold[] = [];
  let outputs: PodOutput[] = [];
  /** Pods held back (bound, or running unready), by UID: looked at again when the holds change. */
  const held = new Map<string, any>();
  /** Our Pods, by namespace/name, as the watch last told. */
  const byName = new Map<string, any>();
  const watches = new Set<KubeWatch>();
  let eventSeq = 0;

  const key = (pod: any): string => `${pod.metadata.namespace}/${pod.metadata.name}`;
  const podPath = (pod: any): string => `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`;

  function enqueue(pod: any): void {
    if (pod.spec?.nodeName) byName.set(key(pod), pod);
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

  /** Posts a core/v1 Event about `pod` as the kubelet of `node` does (about one container with `container`). */
  async function postEvent(pod: any, node: NodeInfo, type: 'Normal' | 'Warning', reason: string, message: string, container?: { name: string; init?: boolean }): Promise<void> {
    const at = new Date();
    const nanos = BigInt(at.getTime()) * 1_000_000n + BigInt(eventSeq++ % 1_000_000);
    const stamp = now();
    const reply = await kubeRequest(endpoint, 'POST', `/api/v1/namespaces/${pod.metadata.namespace}/events`, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${pod.metadata.name}.${nanos.toString(16)}`, namespace: pod.metadata.namespace },
      involvedObject: {
        apiVersion: 'v1',
        kind: 'Pod',
        name: pod.metadata.name,
        namespace: pod.metadata.namespace,
        uid: pod.metadata.uid,
        resourceVersion: pod.metadata.resourceVersion,
        ...(container ? { fieldPath: `spec.${container.init ? 'initContainers' : 'containers'}{${container.name}}` } : {}),
      },
      reason,
      message,
      source: { component: 'kubelet', host: node.name },
      firstTimestamp: stamp,
      lastTimestamp: stamp,
      count: 1,
      type,
      eventTime: null,
      reportingComponent: 'kubelet',
      reportingInstance: node.name,
    });
    // 403: the namespace is being deleted; 404: it is gone. A kubelet drops the event then too.
    if (reply.status >= 300 && reply.status !== 403 && reply.status !== 404) throw new Error(`event ${reason} of ${key(pod)}: HTTP ${reply.status}: ${reply.text}`);
  }

  /** The scheduler's Scheduled event, through events.k8s.io as kube-scheduler posts it. */
  async function postScheduled(pod: any, node: NodeInfo): Promise<void> {
    const at = new Date();
    const nanos = BigInt(at.getTime()) * 1_000_000n + BigInt(eventSeq++ % 1_000_000);
    const reply = await kubeRequest(endpoint, 'POST', `/apis/events.k8s.io/v1/namespaces/${pod.metadata.namespace}/events`, {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: `${pod.metadata.name}.${nanos.toString(16)}`, namespace: pod.metadata.namespace },
      eventTime: microTime(at),
      reportingController: DEFAULT_SCHEDULER,
      reportingInstance: `${DEFAULT_SCHEDULER}-stand-in`,
      action: 'Binding',
      reason: 'Scheduled',
      regarding: {
        apiVersion: 'v1',
        kind: 'Pod',
        name: pod.metadata.name,
        namespace: pod.metadata.namespace,
        uid: pod.metadata.uid,
        resourceVersion: pod.metadata.resourceVersion,
      },
      note: `Successfully assigned ${pod.metadata.namespace}/${pod.metadata.name} to ${node.name}`,
      type: 'Normal',
    });
    if (reply.status >= 300 && reply.status !== 403 && reply.status !== 404) throw new Error(`event Scheduled of ${key(pod)}: HTTP ${reply.status}: ${reply.text}`);
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
      if (bound.status < 300) await postScheduled(pod, node);
      return;
    }
    const node = nodes.find((n) => n.name === pod.spec.nodeName);
    if (!node) return; // bound to a node that is not ours
    const running = runtimes.get(pod.metadata.uid);
    if (running) {
      running.pod = pod;
      // Started: only an unready hold lifted changes it (running Pods stay as they are when a hold comes).
      if (running.unready && !(holds.length && (await holdOf(pod))?.as === 'unready')) await becomeReady(running);
      return;
    }
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed' || phase === 'Running') return;
    const hold = holds.length ? await holdOf(pod) : undefined;
    if (hold && (hold.as ?? 'pulling') === 'pulling') {
      held.set(pod.metadata.uid, pod);
      if (!pulling.has(pod.metadata.uid)) {
        pulling.add(pod.metadata.uid);
        for (const c of pod.spec.containers) await postEvent(pod, node, 'Normal', 'Pulling', `Pulling image "${c.image}"`, { name: c.name });
      }
      return;
    }
    if (hold) held.set(pod.metadata.uid, pod);
    else held.delete(pod.metadata.uid);
    await runPod(pod, node, Boolean(hold));
  }

  /** The hold on the Pod or on one of its controlling owners. */
  async function holdOf(pod: any): Promise<PodHold | undefined> {
    return matching(pod, holds);
  }

  /** The entries whose kind, name (and namespace) are those of the Pod or of one of its controlling owners; the first one, or all with `all`. */
  async function matching<T extends { kind: string; name: string; namespace?: string }>(pod: any, entries: T[]): Promise<T | undefined>;
  async function matching<T extends { kind: string; name: string; namespace?: string }>(pod: any, entries: T[], all: true): Promise<T[]>;
  async function matching<T extends { kind: string; name: string; namespace?: string }>(pod: any, entries: T[], all = false): Promise<T | T[] | undefined> {
    const found: T[] = [];
    let obj = { kind: 'Pod', ...pod };
    for (let depth = 0; obj && depth < 4; depth++) {
      const o = obj;
      const here = entries.filter((h) => h.kind === o.kind && h.name === o.metadata.name && (!h.namespace || h.namespace === o.metadata.namespace));
      if (here.length && !all) return here[0];
      found.push(...here);
      const owner = (o.metadata.ownerReferences ?? []).find((r: any) => r.controller);
      if (!owner) break;
      const [group, version] = owner.apiVersion.includes('/') ? owner.apiVersion.split('/') : ['', owner.apiVersion];
      const plural = `${owner.kind.toLowerCase()}s`;
      const path = group
        ? `/apis/${group}/${version}/namespaces/${o.metadata.namespace}/${plural}/${owner.name}`
        : `/api/${version}/namespaces/${o.metadata.namespace}/${plural}/${owner.name}`;
      const got = await kubeRequest(endpoint, 'GET', path);
      // An owner of a kind this cannot name by its plural: compare by reference.
      obj = got.status === 200 ? { kind: owner.kind, ...got.json } : { kind: owner.kind, metadata: { name: owner.name, namespace: o.metadata.namespace } };
    }
    return all ? found : undefined;
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

  /** The Pulling/Pulled events of a container's image, as its pull policy and the node's images have it. */
  async function pullImage(pod: any, node: NodeInfo, c: any, init: boolean): Promise<void> {
    const images = pulled.get(node.name) ?? new Set<string>();
    pulled.set(node.name, images);
    const policy = c.imagePullPolicy ?? (/:latest$|^[^:@]*(\/[^:@]*)*$/.test(c.image) ? 'Always' : 'IfNotPresent');
    if (policy !== 'Always' && images.has(c.image)) {
      await postEvent(pod, node, 'Normal', 'Pulled', `Container image "${c.image}" already present on machine`, { name: c.name, init });
      return;
    }
    await postEvent(pod, node, 'Normal', 'Pulling', `Pulling image "${c.image}"`, { name: c.name, init });
    images.add(c.image);
    const ms = 200 + Math.floor(Math.random() * 800);
    await postEvent(pod, node, 'Normal', 'Pulled', `Successfully pulled image "${c.image}" in ${ms}ms (${ms}ms including waiting)`, { name: c.name, init });
  }

  /** The failed pull of a container's image: the events a kubelet posts, first ErrImagePull, then ImagePullBackOff. */
  async function failPull(pod: any, node: NodeInfo, c: any, init: boolean): Promise<void> {
    const host = c.image.split('/')[0];
    const ref = c.image.slice(host.length + 1).replace(/[:@]([^:@/]+)$/, '');
    const tag = /[:@]([^:@/]+)$/.exec(c.image)?.[1] ?? 'latest';
    const at = { name: c.name, init };
    await postEvent(pod, node, 'Normal', 'Pulling', `Pulling image "${c.image}"`, at);
    await postEvent(
      pod,
      node,
      'Warning',
      'Failed',
      `Failed to pull image "${c.image}": rpc error: code = Unknown desc = failed to pull and unpack image "${c.image}": failed to resolve reference "${c.image}": failed to do request: Head "https://${host}/v2/${ref}/manifests/${tag}": dial tcp: lookup ${host.replace(/:\d+$/, '')}: no such host`,
      at,
    );
    await postEvent(pod, node, 'Warning', 'Failed', 'Error: ErrImagePull', at);
  }

  async function runPod(pod: any, node: NodeInfo, unready: boolean): Promise<void> {
    const rt: PodRuntime = { pod, node, unready, containers: new Map(), followers: new Set() };
    runtimes.set(pod.metadata.uid, rt);
    const startedAt = now();
    const startedDate = new Date();
    const ownedByJob = (pod.metadata.ownerReferences ?? []).some((o: any) => o.kind === 'Job');
    const startLines = (name: string): LogLine[] => [
      { at: startedDate, text: `${name}: started on ${node.name} (the stand-in kubelet runs no container: these lines stand in for its output)` },
    ];
    // Init containers run to completion one after the other, then the containers start.
    const failedImages = new Set<string>();
    for (const c of pod.spec.initContainers ?? []) {
      if (cannotPull(c.image)) {
        await failPull(pod, node, c, true);
        failedImages.add(c.name);
        break;
      }
      await pullImage(pod, node, c, true);
      await postEvent(pod, node, 'Normal', 'Created', `Created container ${c.name}`, { name: c.name, init: true });
      await postEvent(pod, node, 'Normal', 'Started', `Started container ${c.name}`, { name: c.name, init: true });
      rt.containers.set(c.name, { state: 'terminated', log: [...startLines(c.name), { at: startedDate, text: `${c.name}: exited with code 0` }] });
    }
    const initFailed = failedImages.size > 0;
    if (!initFailed) {
      for (const c of pod.spec.containers) {
        if (cannotPull(c.image)) {
          await failPull(pod, node, c, false);
          failedImages.add(c.name);
          rt.containers.set(c.name, { state: 'waiting', reason: 'ErrImagePull', log: [] });
          continue;
        }
        await pullImage(pod, node, c, false);
        await postEvent(pod, node, 'Normal', 'Created', `Created container ${c.name}`, { name: c.name });
        await postEvent(pod, node, 'Normal', 'Started', `Started container ${c.name}`, { name: c.name });
        const log = startLines(c.name);
        if (ownedByJob) log.push({ at: startedDate, text: `${c.name}: exited with code 0` });
        else if (!unready) log.push({ at: startedDate, text: `${c.name}: ready` });
        rt.containers.set(c.name, { state: ownedByJob ? 'terminated' : 'running', log });
      }
    }
    const imageWaiting = (c: any, reason: string): any => ({
      name: c.name,
      image: c.image,
      imageID: '',
      ready: false,
      started: false,
      restartCount: 0,
      state: { waiting: { reason, ...(reason === 'ImagePullBackOff' ? { message: `Back-off pulling image "${c.image}"` } : { message: 'failed to pull image' }) } },
      lastState: {},
    });
    const waiting = (c: any, reason: string): any => ({
      name: c.name,
      image: c.image,
      imageID: '',
      ready: false,
      started: false,
      restartCount: 0,
      state: { waiting: { reason } },
      lastState: {},
    });
    const containerStatus = (c: any, done: boolean, ready: boolean): any => ({
      name: c.name,
      image: c.image,
      imageID: `${c.image}@sha256:${randomBytes(32).toString('hex')}`,
      containerID: `containerd://${randomBytes(32).toString('hex')}`,
      ready: !done && ready,
      started: !done,
      restartCount: 0,
      state: done ? { terminated: { exitCode: 0, reason: 'Completed', startedAt, finishedAt: startedAt } } : { running: { startedAt } },
      lastState: {},
    });
    // Node i's pods get 10.244.i.2-255, then 10.244.(i+16).0-255 and so on: a long run (a 500-object CNF, again and again) never makes an invalid address.
    const n = node.nextIp++;
    const podIp = `10.244.${node.index + 16 * Math.floor(n / 256)}.${n % 256}`;
    rt.pod = { ...pod, status: { ...pod.status, podIP: podIp } };
    const condition = (type: string, status = 'True', reason?: string, message?: string): any => ({
      type,
      status,
      lastProbeTime: null,
      lastTransitionTime: startedAt,
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
    });
    const statusWith = (pullReason: string): any => {
      const notReady = [
        ...(initFailed ? pod.spec.containers.map((c: any) => c.name) : [...failedImages]),
        ...(unready && !ownedByJob ? pod.spec.containers.map((c: any) => c.name) : []),
      ];
      const ready = !ownedByJob && notReady.length === 0;
      const unreadyText = `containers with unready status: [${[...new Set(notReady)].join(' ')}]`;
      return {
        phase: failedImages.size ? 'Pending' : ownedByJob ? 'Succeeded' : 'Running',
        hostIP: nodeAddress(node),
        hostIPs: [{ ip: nodeAddress(node) }],
        podIP: podIp,
        podIPs: [{ ip: podIp }],
        startTime: startedAt,
        conditions: [
          condition('PodReadyToStartContainers'),
          initFailed
            ? condition('Initialized', 'False', 'ContainersNotInitialized', `containers with incomplete status: [${[...failedImages].join(' ')}]`)
            : condition('Initialized'),
          ownedByJob ? condition('Ready', 'False', 'PodCompleted') : ready ? condition('Ready') : condition('Ready', 'False', 'ContainersNotReady', unreadyText),
          ownedByJob
            ? condition('ContainersReady', 'False', 'PodCompleted')
            : ready
              ? condition('ContainersReady')
              : condition('ContainersReady', 'False', 'ContainersNotReady', unreadyText),
          condition('PodScheduled'),
        ],
        ...(pod.spec.initContainers?.length
          ? {
              initContainerStatuses: pod.spec.initContainers.map((c: any) =>
                failedImages.has(c.name) ? imageWaiting(c, pullReason) : rt.containers.has(c.name) ? containerStatus(c, true, false) : waiting(c, 'PodInitializing'),
              ),
            }
          : {}),
        containerStatuses: pod.spec.containers.map((c: any) =>
          initFailed ? waiting(c, 'PodInitializing') : failedImages.has(c.name) ? imageWaiting(c, pullReason) : containerStatus(c, ownedByJob, !unready),
        ),
      };
    };
    await patchStatus(pod, statusWith('ErrImagePull'));
    if (failedImages.size) {
      // The next attempt backs off: the kubelet says so, and the status waits in ImagePullBackOff.
      for (const name of failedImages) {
        const c = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].find((x: any) => x.name === name);
        const at = { name, init: (pod.spec.initContainers ?? []).some((x: any) => x.name === name) };
        await postEvent(pod, node, 'Normal', 'BackOff', `Back-off pulling image "${c.image}"`, at);
        await postEvent(pod, node, 'Warning', 'Failed', 'Error: ImagePullBackOff', at);
      }
      for (const name of failedImages) {
        const c = rt.containers.get(name);
        if (c) c.reason = 'ImagePullBackOff';
      }
      await patchStatus(pod, statusWith('ImagePullBackOff'));
      return;
    }
    if (unready) await failReadiness(rt);
  }

  /** The Warning a kubelet posts when the readiness probe of a container fails. */
  async function failReadiness(rt: PodRuntime): Promise<void> {
    const c = rt.pod.spec.containers.find((x: any) => x.readinessProbe) ?? rt.pod.spec.containers[0];
    const probe = c.readinessProbe ?? {};
    const ip = rt.pod.status?.podIP ?? '10.244.0.1';
    const portOf = (p: unknown): string => String((typeof p === 'string' ? (c.ports ?? []).find((x: any) => x.name === p)?.containerPort : p) ?? 80);
    const message = probe.httpGet
      ? `Readiness probe failed: Get "${(probe.httpGet.scheme ?? 'HTTP').toLowerCase()}://${ip}:${portOf(probe.httpGet.port)}${probe.httpGet.path ?? '/'}": dial tcp ${ip}:${portOf(probe.httpGet.port)}: connect: connection refused`
      : probe.tcpSocket
        ? `Readiness probe failed: dial tcp ${ip}:${portOf(probe.tcpSocket.port)}: connect: connection refused`
        : `Readiness probe failed: the stand-in kubelet holds this pod not ready`;
    await postEvent(rt.pod, rt.node, 'Warning', 'Unhealthy', message, { name: c.name });
  }

  /** A running Pod whose unready hold was lifted: its probes pass, it is Ready. */
  async function becomeReady(rt: PodRuntime): Promise<void> {
    rt.unready = false;
    held.delete(rt.pod.metadata.uid);
    const at = now();
    const fresh = await kubeRequest(endpoint, 'GET', podPath(rt.pod));
    if (fresh.status !== 200 || fresh.json.metadata.uid !== rt.pod.metadata.uid) return;
    rt.pod = fresh.json;
    const current = rt.pod.status ?? {};
    const conditions = (current.conditions ?? []).map((c: any) =>
      c.type === 'Ready' || c.type === 'ContainersReady' ? { type: c.type, status: 'True', lastProbeTime: null, lastTransitionTime: at } : c,
    );
    const containerStatuses = (current.containerStatuses ?? []).map((s: any) => ({ ...s, ready: true }));
    for (const [name, c] of rt.containers) if (c.state === 'running') c.log.push({ at: new Date(), text: `${name}: ready` });
    await patchStatus(rt.pod, { conditions, containerStatuses });
  }

  async function patchStatus(pod: any, status: any): Promise<void> {
    // A merge patch replaces the lists (conditions, podIPs) whole; the uid makes it a precondition.
    const reply = await kubeRequest(endpoint, 'PATCH', `${podPath(pod)}/status`, { metadata: { uid: pod.metadata.uid }, status }, 'application/merge-patch+json');
    if (reply.status >= 300 && reply.status !== 404 && reply.status !== 409) throw new Error(`status of ${key(pod)}: HTTP ${reply.status}: ${reply.text}`);
  }

  async function finishDeletion(pod: any): Promise<void> {
    const rt = runtimes.get(pod.metadata.uid);
    if (rt && !rt.pod.metadata.deletionTimestamp) {
      rt.pod = pod;
      for (const [name, c] of rt.containers) {
        const init = (pod.spec.initContainers ?? []).some((x: any) => x.name === name);
        if (c.state === 'running') await postEvent(pod, rt.node, 'Normal', 'Killing', `Stopping container ${name}`, { name, init });
      }
    }
    const reply = await kubeRequest(endpoint, 'DELETE', podPath(pod), {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      gracePeriodSeconds: 0,
      preconditions: { uid: pod.metadata.uid },
    });
    if (reply.status >= 300 && reply.status !== 404 && reply.status !== 409) throw new Error(`delete ${key(pod)}: HTTP ${reply.status}: ${reply.text}`);
  }

  function forget(pod: any): void {
    const rt = runtimes.get(pod.metadata.uid);
    if (rt) for (const end of rt.followers) end();
    runtimes.delete(pod.metadata.uid);
    held.delete(pod.metadata.uid);
    pulling.delete(pod.metadata.uid);
    if (byName.get(key(pod))?.metadata.uid === pod.metadata.uid) byName.delete(key(pod));
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
    const nextHolds: PodHold[] = [];
    const nextOutputs: PodOutput[] = [];
    for (const v of Object.values<string>(configMap?.data ?? {})) {
      try {
        const entry = JSON.parse(v) as PodHold | PodOutput;
        if ('output' in entry || 'outputBase64' in entry) nextOutputs.push(entry);
        else nextHolds.push(entry);
      } catch {
        onError(new Error(`${HOLDS_CONFIGMAP.namespace}/${HOLDS_CONFIGMAP.name}: not a JSON hold: ${v}`));
      }
    }
    holds = nextHolds;
    outputs = nextOutputs;
    for (const pod of held.values()) enqueue(pod);
  }

  /** The kubelet of `node`: its HTTPS server, answering the API server's log requests. */
  function kubeletServer(node: NodeInfo, tls: NonNullable<StandInKubeletOptions['tls']>): HttpsServer {
    const serving = makeSignedCert(tls.dir, tls, `kubelet-${node.name}`, {
      cn: `system:node:${node.name}`,
      org: 'system:nodes',
      usage: 'serverAuth',
      ips: [nodeAddress(node)],
      dns: [node.name],
    });
    // As a kubelet with --client-ca-file: only a client whose certificate the cluster's CA signed (the API server's) is answered.
    return createHttpsServer({ key: serving.key, cert: serving.cert, ca: readFileSync(tls.caCertPath, 'utf8'), requestCert: true, rejectUnauthorized: true }, (req, res) => {
      serveKubelet(node, req, res).catch((err: Error) => {
        onError(err);
        if (!res.headersSent) kubeletError(res, 500, err.message);
        else res.end();
      });
    });
  }

  async function serveKubelet(node: NodeInfo, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    if (url.pathname === '/healthz') return void res.end('ok');
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]*)$/.exec(url.pathname);
    if (!m || (req.method !== 'GET' && req.method !== 'HEAD')) return kubeletError(res, 404, '404 page not found');
    const [namespace, podName, container] = m.slice(1).map(decodeURIComponent) as [string, string, string];
    if (!container) return kubeletError(res, 400, 'Missing container name.');
    const pod = byName.get(`${namespace}/${podName}`);
    if (!pod || pod.spec.nodeName !== node.name) return kubeletError(res, 404, `pod "${podName}" does not exist`);
    const spec = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].find((c: any) => c.name === container);
    if (!spec) return kubeletError(res, 404, `container "${container}" not found in pod "${podName}"`);
    const q = url.searchParams;
    const flag = (k: string): boolean => /^(1|t|true)$/i.test(q.get(k) ?? '');
    const int = (k: string): number | undefined => (q.has(k) ? Number(q.get(k)) : undefined);
    const rt = runtimes.get(pod.metadata.uid);
    const c = rt?.containers.get(container);
    if (flag('previous')) return kubeletError(res, 400, `previous terminated container "${container}" in pod "${podName}" not found`);
    if (!rt || !c || c.state === 'waiting') {
      const reason = c?.reason ?? rt?.pod.status?.containerStatuses?.find((s: any) => s.name === container)?.state?.waiting?.reason ?? 'ContainerCreating';
      const why = reason === 'ErrImagePull' ? "image can't be pulled" : reason === 'ImagePullBackOff' ? 'trying and failing to pull image' : reason;
      return kubeletError(res, 400, `container "${container}" in pod "${podName}" is waiting to start: ${why}`);
    }
    const printed = await matching(pod, outputs, true);
    const lines: LogLine[] = [...c.log];
    const at = c.log[0]?.at ?? new Date();
    for (const o of printed) {
      if (o.container && o.container !== container) continue;
      const bytes = o.outputBase64 !== undefined ? Buffer.from(o.outputBase64, 'base64') : Buffer.from(o.output ?? '');
      for (let from = 0; from < bytes.length;) {
        const nl = bytes.indexOf(0x0a, from);
        lines.push({ at, text: bytes.subarray(from, nl < 0 ? bytes.length : nl) });
        from = nl < 0 ? bytes.length : nl + 1;
      }
    }
    lines.sort((a, b) => a.at.getTime() - b.at.getTime());
    const sinceSeconds = int('sinceSeconds');
    const sinceTime = q.get('sinceTime');
    const since = sinceSeconds !== undefined ? Date.now() - sinceSeconds * 1000 : sinceTime ? Date.parse(sinceTime) : undefined;
    let shown = since !== undefined ? lines.filter((l) => l.at.getTime() >= since) : lines;
    const tail = int('tailLines');
    if (tail !== undefined && tail >= 0) shown = tail === 0 ? [] : shown.slice(-tail);
    const stamps = flag('timestamps');
    let budget = int('limitBytes') ?? Infinity;
    const format = (l: LogLine): Buffer => Buffer.concat([Buffer.from(stamps ? `${nanoTime(l.at)} ` : ''), Buffer.from(l.text), Buffer.from('\n')]);
    /** Writes within limitBytes; false once the limit is reached. */
    const write = (b: Buffer): boolean => {
      if (budget <= 0) return false;
      const part = b.length > budget ? b.subarray(0, budget) : b;
      budget -= part.length;
      res.write(part);
      return budget > 0;
    };
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
    if (req.method === 'HEAD') return void res.end();
    let open = true;
    for (const l of shown) if (!(open = write(format(l)))) break;
    if (!open || !flag('follow') || c.state !== 'running') return void res.end();
    // Following: a line a lineEveryMs (the container is alive), until the client goes or the Pod does.
    let n = 0;
    const timer = setInterval(() => {
      const line = { at: new Date(), text: `${container}: alive (${++n})` };
      if (!write(format(line))) end();
    }, lineEveryMs);
    const end = (): void => {
      clearInterval(timer);
      rt.followers.delete(end);
      res.end();
    };
    rt.followers.add(end);
    res.on('close', end);
  }

  const holdsPath = `/api/v1/namespaces/${HOLDS_CONFIGMAP.namespace}/configmaps`;
  const initialHolds = await kubeRequest(endpoint, 'GET', `${holdsPath}/${HOLDS_CONFIGMAP.name}`);
  if (initialHolds.status === 200) setHolds(initialHolds.json);
  const running = Promise.all([
    listWatch(holdsPath, { fieldSelector: `metadata.name=${HOLDS_CONFIGMAP.name}` }, setHolds, () => setHolds(undefined)),
    listWatch('/api/v1/pods', {}, enqueue, forget),
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
      for (const rt of runtimes.values()) for (const end of rt.followers) end();
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeAllConnections();
            }),
        ),
      );
      await running;
      await Promise.allSettled([...chains.values()]);
    },
  };
}

/** A Node's InternalIP: a loopback address of its own, where its kubelet listens. */
function nodeAddress(node: { index: number }): string {
  return `127.0.0.${node.index + 10}`;
}

/** Creates (or takes over) a Node, reports it Ready (with its kubelet's port) and lifts the not-ready taint the API server put on it. */
async function registerNode(endpoint: KubeEndpoint, node: NodeInfo): Promise<NodeInfo> {
  const name = node.name;
  const labels = {
    'kubernetes.io/hostname': name,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'beta.kubernetes.io/arch': 'amd64',
  };
  node.labels = labels;
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
        daemonEndpoints: { kubeletEndpoint: { Port: node.port } },
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
 * Holds the Pods of a workload back from starting (or, `as: 'unready'`,
 * from becoming ready), through the stand-in kubelet of the cluster at
 * `endpoint` (whichever process runs it); resolves once the hold is
 * recorded, with a function that lifts it. Pods already running stay so.
 */
export function holdPods(endpoint: KubeEndpoint, hold: PodHold): Promise<() => Promise<void>> {
  return record(endpoint, 'hold', hold);
}

/**
 * Has the containers of a workload's Pods print `output` (lines), through
 * the stand-in kubelet of the cluster at `endpoint`: their logs hold it
 * after the line saying they started. Resolves once recorded, with a
 * function that takes it back.
 */
export function printInPods(endpoint: KubeEndpoint, output: PodOutput): Promise<() => Promise<void>> {
  return record(endpoint, 'output', output);
}

/** Adds an entry to the ConfigMap the stand-in kubelet watches; resolves with a function that removes it. */
async function record(endpoint: KubeEndpoint, prefix: string, entry: PodHold | PodOutput): Promise<() => Promise<void>> {
  const path = `/api/v1/namespaces/${HOLDS_CONFIGMAP.namespace}/configmaps`;
  const key = `${prefix}-${randomBytes(4).toString('hex')}`;
  const value = JSON.stringify(entry);
  const created = await kubeRequest(endpoint, 'POST', path, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: HOLDS_CONFIGMAP.name }, data: { [key]: value } });
  if (created.status === 409) {
    const added = await kubeRequest(endpoint, 'PATCH', `${path}/${HOLDS_CONFIGMAP.name}`, { data: { [key]: value } }, 'application/merge-patch+json');
    if (added.status !== 200) throw new Error(`${prefix} ${value}: HTTP ${added.status}: ${added.text}`);
  } else if (created.status !== 201) {
    throw new Error(`${prefix} ${value}: HTTP ${created.status}: ${created.text}`);
  }
  return async () => {
    const lifted = await kubeRequest(endpoint, 'PATCH', `${path}/${HOLDS_CONFIGMAP.name}`, { data: { [key]: null } }, 'application/merge-patch+json');
    if (lifted.status !== 200) throw new Error(`remove ${prefix} ${value}: HTTP ${lifted.status}: ${lifted.text}`);
  };
}
