/**
 * A stand-in for the Cluster API controllers (core, kubeadm control plane,
 * an infrastructure provider) on a real API server that has none. No
 * machine boots: it drives the API objects through the states the real
 * controllers report, taking time as they do, so that what reads them —
 * vnfm's readiness, scale, heal and credentials hand-off — meets a real
 * server's answers with a management cluster's timing.
 *
 * It works over the real API only, for whatever kinds the served CRDs
 * define in the Cluster API groups, level-triggered: every `resyncMs` it
 * lists those kinds and moves each object one step on.
 *
 * - Every object it acts on has no status at all until `stepMs` after it
 *   first saw it (the time a controller takes to reach a new object); then
 *   each step takes `stepMs` again.
 * - Infrastructure and bootstrap objects (not `…Template`s): `status.ready`.
 * - MachineDeployment → one MachineSet per template (`machine-template-hash`),
 *   the old sets deleted once the new one is ready → Machines per
 *   `spec.replicas` (controller owner references, so the real garbage
 *   collector removes them with their set; newest, or annotated
 *   `cluster.x-k8s.io/delete-machine`, first on scale-in), Pending →
 *   Provisioning → Provisioned → Running; a deleted Machine holds its
 *   finalizer for a step and is replaced. Sets and deployments report
 *   `replicas`, `readyReplicas`, `updatedReplicas`, `observedGeneration`,
 *   `selector`, `phase`, conditions.
 * - Control planes: with a machine template (KubeadmControlPlane) they own
 *   Machines as a set does, a version change replacing them one at a time;
 *   without (KamajiControlPlane) they report their replicas ready after a step.
 * - Cluster: Pending (a referenced object missing) → Provisioning →
 *   Provisioned once its infrastructure is ready and its control plane
 *   initialised; it owns both. It then gets a workload endpoint: a port of its own on
 *   127.0.0.1 that passes TLS through to the same API server, and a
 *   ServiceAccount token for it; the Secret `<cluster>-kubeconfig` (key
 *   `value`, label `cluster.x-k8s.io/cluster-name`, owned by the Cluster)
 *   holds a kubeconfig for that endpoint. Deleting the Cluster deletes its
 *   machines, sets, deployments, control plane and infrastructure, closes
 *   the endpoint and revokes its account before the finalizer goes.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { kubeRequest, type KubeEndpoint } from './kube-http.js';

export interface StandInCapiOptions {
  /** How long each controller step takes, the first one included; default 300 ms. */
  stepMs?: number;
  /** How often the objects are listed and moved on; default 200 ms. */
  resyncMs?: number;
  /** How often the served Cluster API kinds are looked up again (new CRDs); default 1 s. */
  rediscoverMs?: number;
  /** Told of failures the loop survives (an API error on one object); default: ignored. */
  onError?: (err: Error) => void;
}

/** A workload cluster's API endpoint, as the kubeconfig Secret names it. */
export interface StandInWorkloadCluster {
  namespace: string;
  name: string;
  server: string;
}

export interface StandInCapi {
  /** The workload endpoints open now. */
  workloadClusters(): StandInWorkloadCluster[];
  /** Stops reconciling and closes every workload endpoint; the objects stay as they are. */
  stop(): Promise<void>;
}

const CAPI = 'cluster.x-k8s.io';
const CONTROL_PLANE = 'controlplane.cluster.x-k8s.io';
const INFRASTRUCTURE = 'infrastructure.cluster.x-k8s.io';
const BOOTSTRAP = 'bootstrap.cluster.x-k8s.io';
const GROUPS = [CAPI, CONTROL_PLANE, INFRASTRUCTURE, BOOTSTRAP];

const CLUSTER_NAME = 'cluster.x-k8s.io/cluster-name';
const DEPLOYMENT_NAME = 'cluster.x-k8s.io/deployment-name';
const SET_NAME = 'cluster.x-k8s.io/set-name';
const CONTROL_PLANE_LABEL = 'cluster.x-k8s.io/control-plane';
const CONTROL_PLANE_NAME = 'cluster.x-k8s.io/control-plane-name';
const TEMPLATE_HASH = 'machine-template-hash';
const DELETE_MACHINE = 'cluster.x-k8s.io/delete-machine';
const CLUSTER_FINALIZER = 'cluster.cluster.x-k8s.io';
const MACHINE_FINALIZER = 'machine.cluster.x-k8s.io';
/** Where the workload clusters' ServiceAccounts live. */
const ACCOUNTS_NAMESPACE = 'stand-in-capi';

type Obj = Record<string, any>;

/** A served kind: where its objects are. */
interface Kind {
  group: string;
  version: string;
  kind: string;
  plural: string;
}

interface Endpoint {
  server: Server;
  sockets: Set<Socket>;
  url: string;
  token: string;
  account: string;
}

const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const statusOf = (o: Obj | undefined): Obj => o?.status ?? {};
const specOf = (o: Obj | undefined): Obj => o?.spec ?? {};
const apiVersionOf = (k: Kind): string => `${k.group}/${k.version}`;
const deleting = (o: Obj): boolean => Boolean(o.metadata.deletionTimestamp);

/** The controller owner reference's uid, if any. */
function controllerUid(o: Obj): string | undefined {
  return (o.metadata.ownerReferences ?? []).find((r: Obj) => r.controller)?.uid;
}

function ownerRef(owner: Obj, kind: Kind): Obj {
  return { apiVersion: apiVersionOf(kind), kind: kind.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true };
}

/** The group a reference names (v1beta1 `apiVersion`, v1beta2 `apiGroup`). */
function refGroup(ref: Obj): string {
  if (typeof ref.apiGroup === 'string') return ref.apiGroup;
  const apiVersion = String(ref.apiVersion ?? '');
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
}

function selectorString(matchLabels: Record<string, string>): string {
  return Object.entries(matchLabels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** Conditions as both API versions read them: type, status, reason, severity when False, observedGeneration. */
function conditions(o: Obj, list: Array<[type: string, ok: boolean, reason: string]>): Obj[] {
  const previous: Obj[] = statusOf(o).conditions ?? [];
  return list.map(([type, ok, reason]) => {
    const old = previous.find((c) => c.type === type);
    const status = ok ? 'True' : 'False';
    return {
      type,
      status,
      reason,
      ...(ok ? {} : { severity: 'Info' }),
      lastTransitionTime: old && old.status === status ? old.lastTransitionTime : now(),
      ...(o.metadata.generation !== undefined ? { observedGeneration: o.metadata.generation } : {}),
    };
  });
}

/** Starts reconciling; resolves once the first pass ran. */
export async function startStandInCapi(endpoint: KubeEndpoint, opts: StandInCapiOptions = {}): Promise<StandInCapi> {
  const stepMs = opts.stepMs ?? 300;
  const resyncMs = opts.resyncMs ?? 200;
  const rediscoverMs = opts.rediscoverMs ?? 1000;
  const onError = opts.onError ?? (() => {});
  /** When each object (uid) or object state (`uid/state`) was first seen. */
  const seen = new Map<string, number>();
  const endpoints = new Map<string, Endpoint>();
  let kinds = new Map<string, Kind>();
  let discoveredAt = -Infinity;
  let objects = new Map<string, Obj[]>();
  let stopped = false;

  async function api(method: string, path: string, body?: unknown, contentType?: string, accept: number[] = []): Promise<Obj | undefined> {
    const r = await kubeRequest(endpoint, method, path, body, contentType);
    if (r.status < 300) return r.json;
    if (accept.includes(r.status)) return undefined;
    throw new Error(`${method} ${path}: HTTP ${r.status}: ${r.text.slice(0, 300)}`);
  }

  const kindOf = (group: string, kind: string): Kind | undefined => kinds.get(`${group}/${kind}`);
  const list = (group: string, kind: string): Obj[] => objects.get(`${group}/${kind}`) ?? [];

  function collection(k: Kind, namespace: string): string {
    return `/apis/${k.group}/${k.version}/namespaces/${namespace}/${k.plural}`;
  }

  function pathOf(k: Kind, o: Obj): string {
    return `${collection(k, o.metadata.namespace)}/${o.metadata.name}`;
  }

  /** True once `stepMs` passed since `key` was first asked about. */
  function after(key: string, ms = stepMs): boolean {
    const t = seen.get(key);
    if (t === undefined) {
      seen.set(key, Date.now());
      return ms <= 0;
    }
    return Date.now() - t >= ms;
  }

  /** A controller has reached the object: it may write to it. */
  const reached = (o: Obj): boolean => deleting(o) || Object.keys(statusOf(o)).length > 0 || after(o.metadata.uid);

  async function writeStatus(k: Kind, o: Obj, status: Obj): Promise<void> {
    const next = { ...statusOf(o), ...status };
    if (JSON.stringify(next) === JSON.stringify(statusOf(o))) return;
    await api('PATCH', `${pathOf(k, o)}/status`, { status: next }, 'application/merge-patch+json', [404, 409]);
  }

  async function setFinalizers(k: Kind, o: Obj, finalizers: string[]): Promise<void> {
    await api('PATCH', pathOf(k, o), { metadata: { finalizers, resourceVersion: o.metadata.resourceVersion } }, 'application/merge-patch+json', [404, 409]);
  }

  async function addFinalizer(k: Kind, o: Obj, finalizer: string): Promise<void> {
    const current: string[] = o.metadata.finalizers ?? [];
    if (!current.includes(finalizer)) await setFinalizers(k, o, [...current, finalizer]);
  }

  async function removeFinalizer(k: Kind, o: Obj, finalizer: string): Promise<void> {
    const current: string[] = o.metadata.finalizers ?? [];
    if (current.includes(finalizer))
      await setFinalizers(
        k,
        o,
        current.filter((f) => f !== finalizer),
      );
  }

  async function remove(k: Kind, o: Obj): Promise<void> {
    if (deleting(o)) return;
    await api('DELETE', pathOf(k, o), { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' }, undefined, [404, 409]);
  }

  function find(namespace: string, ref: Obj | undefined): { kind: Kind; obj: Obj | undefined } | undefined {
    if (!ref?.kind || !ref.name) return undefined;
    const kind = kindOf(refGroup(ref), ref.kind);
    if (!kind) return undefined;
    return { kind, obj: list(kind.group, kind.kind).find((o) => o.metadata.namespace === (ref.namespace ?? namespace) && o.metadata.name === ref.name) };
  }

  // ---- discovery and listing ----

  async function discover(): Promise<void> {
    const groups = (await api('GET', '/apis'))?.groups ?? [];
    const next = new Map<string, Kind>();
    for (const g of groups) {
      if (!GROUPS.includes(g.name)) continue;
      // The preferred version first: a kind served in several versions is used in that one.
      const versions: string[] = [g.preferredVersion?.version, ...g.versions.map((v: Obj) => v.version)].filter(Boolean);
      for (const version of new Set(versions)) {
        const resources = (await api('GET', `/apis/${g.name}/${version}`, undefined, undefined, [404]))?.resources ?? [];
        for (const r of resources) {
          if (r.name.includes('/') || !r.namespaced) continue;
          const key = `${g.name}/${r.kind}`;
          if (!next.has(key)) next.set(key, { group: g.name, version, kind: r.kind, plural: r.name });
        }
      }
    }
    kinds = next;
  }

  async function listAll(): Promise<void> {
    const next = new Map<string, Obj[]>();
    for (const [key, k] of kinds) {
      const items = (await api('GET', `/apis/${k.group}/${k.version}/${k.plural}`, undefined, undefined, [404]))?.items ?? [];
      next.set(key, items);
    }
    objects = next;
  }

  // ---- Machines ----

  const running = (m: Obj): boolean => statusOf(m).phase === 'Running';

  function machinesOwnedBy(owner: Obj): Obj[] {
    return list(CAPI, 'Machine').filter((m) => m.metadata.namespace === owner.metadata.namespace && controllerUid(m) === owner.metadata.uid);
  }

  /** Scale-in order: annotated machines, then the newest. */
  function deletionOrder(machines: Obj[]): Obj[] {
    const marked = (m: Obj): number => (m.metadata.annotations?.[DELETE_MACHINE] !== undefined ? 0 : 1);
    return [...machines].sort(
      (a, b) => marked(a) - marked(b) || String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp)) || b.metadata.name.localeCompare(a.metadata.name),
    );
  }

  async function createMachine(owner: Obj, ownerKind: Kind, labels: Record<string, string>, annotations: Record<string, string> | undefined, spec: Obj): Promise<void> {
    const machine = kindOf(CAPI, 'Machine');
    if (!machine) return;
    const metadata: Obj = {
      name: `${owner.metadata.name}-${randomBytes(3).toString('hex')}`,
      namespace: owner.metadata.namespace,
      labels,
      ownerReferences: [ownerRef(owner, ownerKind)],
    };
    if (annotations && Object.keys(annotations).length > 0) metadata.annotations = annotations;
    await api('POST', collection(machine, owner.metadata.namespace), { apiVersion: apiVersionOf(machine), kind: 'Machine', metadata, spec });
  }

  async function reconcileMachine(k: Kind, m: Obj): Promise<void> {
    const uid = m.metadata.uid;
    if (deleting(m)) {
      if (!(m.metadata.finalizers ?? []).includes(MACHINE_FINALIZER)) return;
      if (statusOf(m).phase !== 'Deleting') await writeStatus(k, m, { phase: 'Deleting' });
      if (after(`${uid}/Deleting`)) await removeFinalizer(k, m, MACHINE_FINALIZER);
      return;
    }
    await addFinalizer(k, m, MACHINE_FINALIZER);
    const phase = statusOf(m).phase as string | undefined;
    const base = { observedGeneration: m.metadata.generation, lastUpdated: now() };
    if (!phase) {
      await writeStatus(k, m, {
        ...base,
        phase: 'Pending',
        bootstrapReady: false,
        infrastructureReady: false,
        conditions: conditions(m, [
          ['BootstrapReady', false, 'WaitingForBootstrapData'],
          ['InfrastructureReady', false, 'WaitingForInfrastructure'],
          ['Ready', false, 'WaitingForInfrastructure'],
        ]),
      });
    } else if (phase === 'Pending' && after(`${uid}/Pending`)) {
      await writeStatus(k, m, {
        ...base,
        phase: 'Provisioning',
        bootstrapReady: true,
        conditions: conditions(m, [
          ['BootstrapReady', true, 'Ready'],
          ['InfrastructureReady', false, 'WaitingForInfrastructure'],
          ['Ready', false, 'WaitingForInfrastructure'],
        ]),
      });
    } else if (phase === 'Provisioning' && after(`${uid}/Provisioning`)) {
      const octet = parseInt(createHash('sha256').update(uid).digest('hex').slice(0, 4), 16);
      const addresses = [
        { type: 'InternalIP', address: `10.${(octet >> 8) % 250}.${octet % 250}.10` },
        { type: 'Hostname', address: m.metadata.name },
      ];
      await writeStatus(k, m, {
        ...base,
        phase: 'Provisioned',
        infrastructureReady: true,
        addresses,
        conditions: conditions(m, [
          ['BootstrapReady', true, 'Ready'],
          ['InfrastructureReady', true, 'Ready'],
          ['Ready', false, 'WaitingForNodeRef'],
        ]),
      });
    } else if (phase === 'Provisioned' && after(`${uid}/Provisioned`)) {
      await writeStatus(k, m, {
        ...base,
        phase: 'Running',
        nodeRef: { apiVersion: 'v1', kind: 'Node', name: m.metadata.name },
        conditions: conditions(m, [
          ['BootstrapReady', true, 'Ready'],
          ['InfrastructureReady', true, 'Ready'],
          ['NodeHealthy', true, 'NodeHealthy'],
          ['Ready', true, 'Ready'],
        ]),
      });
    }
  }

  // ---- MachineSet ----

  async function reconcileMachineSet(k: Kind, ms: Obj): Promise<void> {
    if (deleting(ms)) return;
    const spec = specOf(ms);
    const desired = Number(spec.replicas ?? 1);
    const template: Obj = spec.template ?? {};
    const clusterName = String(spec.clusterName ?? ms.metadata.labels?.[CLUSTER_NAME] ?? '');
    const active = machinesOwnedBy(ms).filter((m) => !deleting(m));
    if (active.length < desired) {
      const labels: Record<string, string> = {
        ...(template.metadata?.labels ?? {}),
        ...(spec.selector?.matchLabels ?? {}),
        [CLUSTER_NAME]: clusterName,
        [SET_NAME]: ms.metadata.name,
      };
      const deployment = ms.metadata.labels?.[DEPLOYMENT_NAME];
      if (deployment) labels[DEPLOYMENT_NAME] = deployment;
      for (let i = active.length; i < desired; i++) await createMachine(ms, k, labels, template.metadata?.annotations, { ...(template.spec ?? {}), clusterName });
    } else if (active.length > desired) {
      for (const m of deletionOrder(active).slice(0, active.length - desired)) await remove(kindOf(CAPI, 'Machine')!, m);
    }
    const kept = active.length > desired ? deletionOrder(active).slice(active.length - desired) : active;
    const ready = kept.filter(running).length;
    await writeStatus(k, ms, {
      replicas: kept.length,
      fullyLabeledReplicas: kept.length,
      readyReplicas: ready,
      availableReplicas: ready,
      observedGeneration: ms.metadata.generation,
      selector: selectorString(spec.selector?.matchLabels ?? {}),
      conditions: conditions(ms, [
        ['Ready', ready === desired && kept.length === desired, ready === desired ? 'Ready' : 'ScalingUp'],
        ['MachinesCreated', true, 'MachinesCreated'],
      ]),
    });
  }

  // ---- MachineDeployment ----

  async function reconcileMachineDeployment(k: Kind, md: Obj): Promise<void> {
    const setKind = kindOf(CAPI, 'MachineSet');
    if (deleting(md) || !setKind) return;
    const spec = specOf(md);
    const desired = Number(spec.replicas ?? 1);
    const clusterName = String(spec.clusterName ?? md.metadata.labels?.[CLUSTER_NAME] ?? '');
    const template: Obj = structuredClone(spec.template ?? {});
    const hash = createHash('sha256')
      .update(JSON.stringify({ labels: template.metadata?.labels ?? {}, spec: template.spec ?? {} }))
      .digest('hex')
      .slice(0, 10);
    const selectorLabels = { ...(spec.selector?.matchLabels ?? {}), [CLUSTER_NAME]: clusterName, [DEPLOYMENT_NAME]: md.metadata.name };
    const owned = list(CAPI, 'MachineSet').filter((ms) => ms.metadata.namespace === md.metadata.namespace && controllerUid(ms) === md.metadata.uid);
    const current = owned.find((ms) => ms.metadata.labels?.[TEMPLATE_HASH] === hash && !deleting(ms));
    const old = owned.filter((ms) => ms !== current);
    if (!current) {
      const labels = { ...selectorLabels, [TEMPLATE_HASH]: hash };
      template.metadata = { ...(template.metadata ?? {}), labels: { ...(template.metadata?.labels ?? {}), ...labels } };
      template.spec = { ...(template.spec ?? {}), clusterName };
      await api(
        'POST',
        collection(setKind, md.metadata.namespace),
        {
          apiVersion: apiVersionOf(setKind),
          kind: 'MachineSet',
          metadata: { name: `${md.metadata.name}-${hash.slice(0, 5)}`, namespace: md.metadata.namespace, labels, ownerReferences: [ownerRef(md, k)] },
          spec: { clusterName, replicas: desired, selector: { matchLabels: labels }, template },
        },
        undefined,
        [409],
      );
    } else if (Number(specOf(current).replicas ?? 1) !== desired) {
      await api('PATCH', pathOf(setKind, current), { spec: { replicas: desired } }, 'application/merge-patch+json', [404]);
    }
    // The new set grows to the whole count; the old ones go once it is ready.
    const currentReady = current !== undefined && Number(statusOf(current).readyReplicas ?? 0) >= desired && Number(specOf(current).replicas ?? 1) === desired;
    if (currentReady) for (const ms of old) await remove(setKind, ms);
    const live = owned.filter((ms) => !deleting(ms));
    const sum = (field: string): number => live.reduce((n, ms) => n + Number(statusOf(ms)[field] ?? 0), 0);
    const replicas = sum('replicas');
    const ready = sum('readyReplicas');
    const updated = current ? Number(statusOf(current).replicas ?? 0) : 0;
    const phase = replicas < desired || ready < desired ? 'ScalingUp' : replicas > desired ? 'ScalingDown' : 'Running';
    const ok = phase === 'Running';
    await writeStatus(k, md, {
      replicas,
      readyReplicas: ready,
      availableReplicas: ready,
      updatedReplicas: updated,
      unavailableReplicas: Math.max(0, desired - ready),
      phase,
      selector: selectorString(selectorLabels),
      observedGeneration: md.metadata.generation,
      conditions: conditions(md, [
        ['Ready', ok, ok ? 'Ready' : phase],
        ['Available', ready >= desired, ready >= desired ? 'Available' : 'WaitingForAvailableMachines'],
      ]),
    });
  }

  // ---- Control planes ----

  function clusterReferencing(namespace: string, kind: string, name: string): Obj | undefined {
    return list(CAPI, 'Cluster').find((c) => c.metadata.namespace === namespace && specOf(c).controlPlaneRef?.kind === kind && specOf(c).controlPlaneRef?.name === name);
  }

  async function reconcileControlPlane(k: Kind, cp: Obj): Promise<void> {
    if (deleting(cp)) return;
    const clusterName = clusterReferencing(cp.metadata.namespace, k.kind, cp.metadata.name)?.metadata.name ?? cp.metadata.labels?.[CLUSTER_NAME];
    // Like the real controllers: nothing happens until a Cluster claims it.
    if (!clusterName) return;
    const spec = specOf(cp);
    const desired = Number(spec.replicas ?? 1);
    const version = spec.version as string | undefined;
    const infraRef = spec.machineTemplate?.infrastructureRef ?? spec.machineTemplate?.spec?.infrastructureRef;
    let replicas = desired;
    let ready = 0;
    let upToDate = desired;
    if (infraRef) {
      const active = machinesOwnedBy(cp).filter((m) => !deleting(m));
      const outdated = active.filter((m) => specOf(m).version !== version);
      const labels = { [CLUSTER_NAME]: clusterName, [CONTROL_PLANE_LABEL]: '', [CONTROL_PLANE_NAME]: cp.metadata.name };
      const machineSpec: Obj = {
        clusterName,
        bootstrap: { dataSecretName: `${cp.metadata.name}-bootstrap` },
        infrastructureRef: structuredClone(infraRef),
        ...(version ? { version } : {}),
      };
      if (active.length < desired) await createMachine(cp, k, labels, undefined, machineSpec);
      else if (active.length > desired) await remove(kindOf(CAPI, 'Machine')!, deletionOrder(outdated.length > 0 ? outdated : active)[0]!);
      // One at a time, the new machine first: the control plane keeps its quorum.
      else if (outdated.length > 0 && active.every(running)) await createMachine(cp, k, labels, undefined, machineSpec);
      replicas = active.length;
      ready = active.filter(running).length;
      upToDate = active.length - outdated.length;
    } else {
      ready = after(`${cp.metadata.uid}/Scaling/${desired}`) ? desired : 0;
    }
    const initialized = statusOf(cp).initialized === true || ready > 0;
    await writeStatus(k, cp, {
      replicas,
      readyReplicas: ready,
      updatedReplicas: upToDate,
      unavailableReplicas: Math.max(0, replicas - ready),
      initialized,
      ready: ready > 0,
      ...(version ? { version } : {}),
      selector: `${CLUSTER_NAME}=${clusterName},${CONTROL_PLANE_LABEL}`,
      observedGeneration: cp.metadata.generation,
      conditions: conditions(cp, [
        ['Available', ready > 0, ready > 0 ? 'Available' : 'WaitingForMachines'],
        ['Ready', ready === desired && upToDate === desired, ready === desired ? 'Ready' : 'ScalingUp'],
      ]),
    });
  }

  // ---- Infrastructure and bootstrap objects ----

  async function reconcileProvider(k: Kind, o: Obj): Promise<void> {
    if (deleting(o) || statusOf(o).ready === true || !after(`${o.metadata.uid}/Provisioning`)) return;
    await writeStatus(k, o, {
      ready: true,
      conditions: conditions(o, [['Ready', true, 'Ready']]),
      ...(k.group === BOOTSTRAP ? { dataSecretName: `${o.metadata.name}-bootstrap` } : {}),
    });
  }

  // ---- Cluster ----

  /** A port of its own on 127.0.0.1 passing TLS through to the API server, and a token of its own. */
  async function openEndpoint(cluster: Obj): Promise<Endpoint> {
    const account = `${cluster.metadata.namespace}-${cluster.metadata.name}`.slice(0, 63);
    await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ACCOUNTS_NAMESPACE } }, undefined, [409]);
    await api('POST', `/api/v1/namespaces/${ACCOUNTS_NAMESPACE}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: account } }, undefined, [409]);
    await api(
      'POST',
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `${ACCOUNTS_NAMESPACE}-${account}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', name: account, namespace: ACCOUNTS_NAMESPACE }],
      },
      undefined,
      [409],
    );
    const issued = await api('POST', `/api/v1/namespaces/${ACCOUNTS_NAMESPACE}/serviceaccounts/${account}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 86400 },
    });
    const target = new URL(endpoint.server);
    const sockets = new Set<Socket>();
    const server = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => server.listen(0, '127.0.0.1', resolve).on('error', reject));
    const port = (server.address() as { port: number }).port;
    return { server, sockets, url: `https://127.0.0.1:${port}`, token: issued!.status.token, account };
  }

  async function closeEndpoint(uid: string): Promise<void> {
    const e = endpoints.get(uid);
    if (!e) return;
    endpoints.delete(uid);
    for (const s of e.sockets) s.destroy();
    await new Promise<void>((resolve) => e.server.close(() => resolve()));
    if (stopped) return;
    await api('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${ACCOUNTS_NAMESPACE}-${e.account}`, undefined, undefined, [404]);
    await api('DELETE', `/api/v1/namespaces/${ACCOUNTS_NAMESPACE}/serviceaccounts/${e.account}`, undefined, undefined, [404]);
  }

  function kubeconfig(cluster: Obj, e: Endpoint): string {
    const name = cluster.metadata.name;
    const ca = Buffer.from(endpoint.caPem).toString('base64');
    return [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `- name: ${name}\n  cluster:\n    server: ${e.url}\n    certificate-authority-data: ${ca}`,
      'users:',
      `- name: ${name}-admin\n  user:\n    token: ${e.token}`,
      'contexts:',
      `- name: ${name}-admin@${name}\n  context:\n    cluster: ${name}\n    user: ${name}-admin`,
      `current-context: ${name}-admin@${name}`,
      '',
    ].join('\n');
  }

  async function ensureKubeconfigSecret(k: Kind, cluster: Obj, e: Endpoint): Promise<void> {
    const path = `/api/v1/namespaces/${cluster.metadata.namespace}/secrets`;
    const name = `${cluster.metadata.name}-kubeconfig`;
    const value = Buffer.from(kubeconfig(cluster, e)).toString('base64');
    const existing = await api('GET', `${path}/${name}`, undefined, undefined, [404]);
    if (existing?.data?.value === value) return;
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: cluster.metadata.namespace, labels: { [CLUSTER_NAME]: cluster.metadata.name }, ownerReferences: [ownerRef(cluster, k)] },
      type: 'cluster.x-k8s.io/secret',
      data: { value },
    };
    if (existing) await api('PUT', `${path}/${name}`, { ...secret, metadata: { ...secret.metadata, resourceVersion: existing.metadata.resourceVersion } }, undefined, [409]);
    else await api('POST', path, secret, undefined, [409]);
  }

  /** The Cluster owns its infrastructure and control plane (not as their controller). */
  async function ensureOwnedBy(k: Kind, cluster: Obj, kind: Kind, obj: Obj): Promise<void> {
    const refs: Obj[] = obj.metadata.ownerReferences ?? [];
    if (deleting(obj) || refs.some((r) => r.uid === cluster.metadata.uid)) return;
    const ref = { apiVersion: apiVersionOf(k), kind: 'Cluster', name: cluster.metadata.name, uid: cluster.metadata.uid };
    await api(
      'PATCH',
      pathOf(kind, obj),
      { metadata: { ownerReferences: [...refs, ref], resourceVersion: obj.metadata.resourceVersion } },
      'application/merge-patch+json',
      [404, 409],
    );
  }

  /** What a Cluster's deletion removes first. */
  function descendants(cluster: Obj): Array<{ kind: Kind; obj: Obj }> {
    const found: Array<{ kind: Kind; obj: Obj }> = [];
    const ns = cluster.metadata.namespace;
    for (const name of ['MachineDeployment', 'MachineSet', 'Machine']) {
      const kind = kindOf(CAPI, name);
      if (!kind) continue;
      for (const obj of list(CAPI, name)) {
        if (obj.metadata.namespace === ns && (obj.metadata.labels?.[CLUSTER_NAME] === cluster.metadata.name || specOf(obj).clusterName === cluster.metadata.name))
          found.push({ kind, obj });
      }
    }
    for (const field of ['controlPlaneRef', 'infrastructureRef']) {
      const r = find(ns, specOf(cluster)[field]);
      if (r?.obj) found.push({ kind: r.kind, obj: r.obj });
    }
    return found;
  }

  async function reconcileCluster(k: Kind, observed: Obj): Promise<void> {
    let cluster = observed;
    const uid = cluster.metadata.uid;
    const ns = cluster.metadata.namespace;
    if (deleting(cluster)) {
      await closeEndpoint(uid);
      const rest = descendants(cluster);
      for (const d of rest) await remove(d.kind, d.obj);
      if (rest.length === 0) await removeFinalizer(k, cluster, CLUSTER_FINALIZER);
      else if (statusOf(cluster).phase !== 'Deleting') await writeStatus(k, cluster, { phase: 'Deleting' });
      return;
    }
    await addFinalizer(k, cluster, CLUSTER_FINALIZER);
    const spec = specOf(cluster);
    const infra = find(ns, spec.infrastructureRef);
    const cp = find(ns, spec.controlPlaneRef);
    for (const r of [infra, cp]) if (r?.obj) await ensureOwnedBy(k, cluster, r.kind, r.obj);
    const infraReady = spec.infrastructureRef ? statusOf(infra?.obj).ready === true : true;
    const cpInitialized = spec.controlPlaneRef ? cp?.obj !== undefined && (statusOf(cp.obj).initialized === true || statusOf(cp.obj).ready === true) : infraReady;
    const cpReady = spec.controlPlaneRef ? cp?.obj !== undefined && statusOf(cp.obj).ready === true : infraReady;
    let e = endpoints.get(uid);
    if (infraReady && cpInitialized && !e) {
      e = await openEndpoint(cluster);
      endpoints.set(uid, e);
    }
    if (e) {
      await ensureKubeconfigSecret(k, cluster, e);
      if (!spec.controlPlaneEndpoint?.host) {
        const url = new URL(e.url);
        // The status written next observes the generation this change makes.
        cluster =
          (await api('PATCH', pathOf(k, cluster), { spec: { controlPlaneEndpoint: { host: url.hostname, port: Number(url.port) } } }, 'application/merge-patch+json', [404])) ??
          cluster;
      }
    }
    const missing = (spec.infrastructureRef && !infra?.obj) || (spec.controlPlaneRef && !cp?.obj);
    const provisioned = e !== undefined;
    const ready = provisioned && cpReady;
    await writeStatus(k, cluster, {
      phase: provisioned ? 'Provisioned' : missing ? 'Pending' : 'Provisioning',
      infrastructureReady: infraReady,
      controlPlaneReady: ready,
      observedGeneration: cluster.metadata.generation,
      conditions: conditions(cluster, [
        ['InfrastructureReady', infraReady, infraReady ? 'Ready' : 'WaitingForInfrastructure'],
        ['ControlPlaneInitialized', provisioned, provisioned ? 'Initialized' : 'WaitingForControlPlane'],
        ['ControlPlaneReady', ready, ready ? 'Ready' : 'WaitingForControlPlane'],
        ['ControlPlaneAvailable', ready, ready ? 'Available' : 'WaitingForControlPlane'],
        ['Ready', ready, ready ? 'Ready' : 'NotReady'],
      ]),
    });
  }

  // ---- the loop ----

  async function pass(): Promise<void> {
    // Kinds change only when CRDs do: looked up again every rediscoverMs, not on every pass.
    if (Date.now() - discoveredAt >= rediscoverMs) {
      await discover();
      discoveredAt = Date.now();
    }
    await listAll();
    for (const [key, k] of kinds) {
      for (const o of objects.get(key) ?? []) {
        if (stopped) return;
        if (!reached(o)) continue;
        try {
          if (k.group === CAPI) {
            if (k.kind === 'Cluster') await reconcileCluster(k, o);
            else if (k.kind === 'MachineDeployment') await reconcileMachineDeployment(k, o);
            else if (k.kind === 'MachineSet') await reconcileMachineSet(k, o);
            else if (k.kind === 'Machine') await reconcileMachine(k, o);
          } else if (k.group === CONTROL_PLANE) {
            await reconcileControlPlane(k, o);
          } else if (!k.kind.endsWith('Template')) {
            await reconcileProvider(k, o);
          }
        } catch (err) {
          onError(err as Error);
        }
      }
    }
    // Forget what is gone.
    const live = new Set([...objects.values()].flat().map((o) => o.metadata.uid as string));
    for (const key of seen.keys()) if (!live.has(key.split('/')[0]!)) seen.delete(key);
    for (const uid of endpoints.keys()) if (!live.has(uid)) await closeEndpoint(uid);
  }

  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  const loop = (): void => {
    if (stopped) return;
    inFlight = pass()
      .catch((err: Error) => onError(err))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, resyncMs);
      });
  };
  await pass().catch((err: Error) => onError(err));
  timer = setTimeout(loop, resyncMs);

  return {
    workloadClusters() {
      const out: StandInWorkloadCluster[] = [];
      for (const c of list(CAPI, 'Cluster')) {
        const e = endpoints.get(c.metadata.uid);
        if (e) out.push({ namespace: c.metadata.namespace, name: c.metadata.name, server: e.url });
      }
      return out;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
      await Promise.all([...endpoints.keys()].map((uid) => closeEndpoint(uid)));
    },
  };
}
