/**
 * Cluster API, emulated the way the sandbox emulates a kubelet: no
 * machines boot, but the objects move through the phases and carry the
 * status that the real controllers (core, kubeadm control plane, an
 * infrastructure provider) would write, so that what reads them — vnfm's
 * readiness, scale, heal and credentials hand-off — meets the real shapes.
 *
 * It is keyed on API groups, kinds and field paths, never on a particular
 * CRD file, and acts only on kinds some CRD makes served:
 *
 * - `cluster.x-k8s.io` Cluster: Pending → Provisioning → Provisioned once
 *   its infrastructure is ready and its control plane initialised; then a
 *   second sandbox API server is started for it and the Secret
 *   `<cluster>-kubeconfig` (key `value`) holds a kubeconfig for it; deleting
 *   the Cluster deletes what belongs to it and stops that server.
 * - MachineDeployment → MachineSet (one per template; a changed template
 *   rolls to a new one) → Machines (Pending → Provisioning → Provisioned →
 *   Running), following `spec.replicas`; a deleted Machine is replaced.
 * - `controlplane.cluster.x-k8s.io` kinds: with a machine template
 *   (KubeadmControlPlane) they own Machines as a MachineSet does (a version
 *   change replaces them one by one); others (KamajiControlPlane) are ready
 *   with their replicas after the delay.
 * - `infrastructure.` and `bootstrap.cluster.x-k8s.io` kinds other than
 *   templates: `status.ready: true` after the delay.
 *
 * Like the real controllers, they reach a new object only after a while:
 * for `readyDelayMs` it has no status at all (what a client must not take
 * for "ready"), then each step takes `readyDelayMs` again.
 *
 * Status is written with both the v1beta1 fields (`controlPlaneReady`,
 * `readyReplicas`, conditions with severity) and the v1beta2 ones
 * (`initialization`, `upToDateReplicas`, conditions with reason and
 * observedGeneration): the CRD's schema prunes what its version lacks.
 */
import yaml from 'js-yaml';
import { generateNameSuffix } from '../objects.js';
import { rfc3339, type KubeObject, type ResourceType } from '../resources.js';
import { formatSelector } from '../selectors.js';
import { ApiError } from '../status.js';
import type { StoreEvent } from '../store.js';
import { controllerRef, isControlledBy, ownerRefs, setCondition, spec, status, templateHash, WorkQueue, type Controller, type ControllerContext } from './base.js';

export const CAPI_GROUP = 'cluster.x-k8s.io';
export const CONTROL_PLANE_GROUP = 'controlplane.cluster.x-k8s.io';
export const INFRASTRUCTURE_GROUP = 'infrastructure.cluster.x-k8s.io';
export const BOOTSTRAP_GROUP = 'bootstrap.cluster.x-k8s.io';

export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
export const DEPLOYMENT_NAME_LABEL = 'cluster.x-k8s.io/deployment-name';
export const SET_NAME_LABEL = 'cluster.x-k8s.io/set-name';
export const CONTROL_PLANE_LABEL = 'cluster.x-k8s.io/control-plane';
export const CONTROL_PLANE_NAME_LABEL = 'cluster.x-k8s.io/control-plane-name';
export const TEMPLATE_HASH_LABEL = 'machine-template-hash';
/** Machines marked with this annotation go first when their owner scales in. */
export const DELETE_MACHINE_ANNOTATION = 'cluster.x-k8s.io/delete-machine';
const CLUSTER_FINALIZER = 'cluster.cluster.x-k8s.io';
const MACHINE_FINALIZER = 'machine.cluster.x-k8s.io';
const MANAGER = 'cluster-api-controller';

type Obj = Record<string, any>;

/** A sandbox API server started for a workload cluster. */
export interface WorkloadServer {
  url: string;
  caPem: string;
  token: string;
  close(): Promise<void>;
}

/** A workload cluster's API server, as tests see it. */
export interface WorkloadClusterEndpoint {
  namespace: string;
  /** The Cluster's name. */
  name: string;
  url: string;
  caPem: string;
  token: string;
}

export interface ClusterApiController extends Controller {
  /** The workload clusters whose API servers are running now. */
  workloadClusters(): WorkloadClusterEndpoint[];
  /** Stops every workload cluster's API server. */
  close(): Promise<void>;
}

interface ServerEntry {
  namespace: string;
  name: string;
  starting: Promise<WorkloadServer | undefined>;
  server?: WorkloadServer;
}

const CAPI_GROUPS = new Set([CAPI_GROUP, CONTROL_PLANE_GROUP, INFRASTRUCTURE_GROUP, BOOTSTRAP_GROUP]);

const isTrue = (obj: KubeObject | undefined, type: string): boolean =>
  ((status(obj ?? ({} as KubeObject)).conditions as Obj[] | undefined) ?? []).some((c) => c.type === type && c.status === 'True');

/** The group a reference names (v1beta1 `apiVersion`, v1beta2 `apiGroup`). */
function refGroup(ref: Obj): string {
  if (typeof ref.apiGroup === 'string') return ref.apiGroup;
  const apiVersion = String(ref.apiVersion ?? '');
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
}

export function startClusterApiController(ctx: ControllerContext, startWorkloadServer: () => Promise<WorkloadServer>): ClusterApiController {
  const { api } = ctx;
  const store = api.store;
  const servers = new Map<string, ServerEntry>();
  /** When an object may leave its current phase: `uid/phase` → epoch ms. */
  const readyAt = new Map<string, number>();
  /** Infrastructure objects marked ready whose schema may have pruned the mark. */
  const provisioned = new Set<string>();
  let stopped = false;

  /** The served type of `group`/`kind`, through the CRD's storage version when there is a choice. */
  function typeOf(group: string, kind: string): ResourceType | undefined {
    const types = api.registry.all().filter((t) => t.group === group && t.kind === kind);
    return types.find((t) => t.custom?.storageVersion === t.version) ?? types[0];
  }

  function kindOf(group: string, plural: string): string | undefined {
    return api.registry.all().find((t) => t.group === group && t.plural === plural)?.kind;
  }

  const keyOf = (group: string, kind: string, namespace: string | undefined, name: string): string => `${group}|${kind}|${namespace ?? ''}|${name}`;

  function now(): string {
    return rfc3339(api.now());
  }

  /** True once `delayMs` has passed since the object entered `phase`; schedules the check otherwise. */
  function elapsed(key: string, obj: KubeObject, phase: string, delayMs = ctx.readyDelayMs): boolean {
    const k = `${obj.metadata.uid}/${phase}`;
    const at = readyAt.get(k);
    const t = Date.now();
    if (at === undefined) {
      readyAt.set(k, t + delayMs);
      if (delayMs <= 0) return true;
      queue.addAfter(key, delayMs);
      return false;
    }
    if (t >= at) return true;
    queue.addAfter(key, at - t);
    return false;
  }

  function conditions(obj: KubeObject, list: [type: string, ok: boolean, reason: string, message?: string][]): Obj[] {
    let out = (status(obj).conditions as Obj[] | undefined) ?? [];
    const generation = obj.metadata.generation;
    for (const [type, ok, reason, message] of list) {
      const c: Obj = { type, status: ok ? 'True' : 'False', reason, message: message ?? '' };
      if (!ok) c.severity = 'Info';
      if (generation !== undefined) c.observedGeneration = generation;
      out = setCondition(out, c, now());
    }
    return out;
  }

  function writeStatus(type: ResourceType, obj: KubeObject, next: Obj): KubeObject {
    if (JSON.stringify(next) === JSON.stringify(obj.status ?? {})) return obj;
    return api.update(type, { ...obj, status: next }, { subresource: 'status', manager: MANAGER });
  }

  function addFinalizer(type: ResourceType, obj: KubeObject, finalizer: string): KubeObject {
    if (obj.metadata.finalizers?.includes(finalizer)) return obj;
    return api.update(type, { ...obj, metadata: { ...obj.metadata, finalizers: [...(obj.metadata.finalizers ?? []), finalizer] } }, { manager: MANAGER });
  }

  function removeFinalizer(type: ResourceType, obj: KubeObject, finalizer: string): void {
    if (!obj.metadata.finalizers?.includes(finalizer)) return;
    api.update(type, { ...obj, metadata: { ...obj.metadata, finalizers: obj.metadata.finalizers.filter((f) => f !== finalizer) } }, { manager: MANAGER });
  }

  function resolve(namespace: string | undefined, ref: Obj | undefined): { type: ResourceType; obj: KubeObject | undefined } | undefined {
    if (!ref?.kind || !ref.name) return undefined;
    const type = typeOf(refGroup(ref), ref.kind);
    if (!type) return undefined;
    return { type, obj: api.find(type, ref.namespace ?? namespace, ref.name) };
  }

  function tryDelete(type: ResourceType, obj: KubeObject): void {
    if (obj.metadata.deletionTimestamp) return;
    try {
      api.delete(type, obj.metadata.namespace, obj.metadata.name, { propagationPolicy: 'Background' });
    } catch {
      // Gone already.
    }
  }

  // ---- Machines, for MachineSets and control planes alike ----

  const isRunning = (m: KubeObject): boolean => status(m).phase === 'Running';

  function ownedMachines(owner: KubeObject): KubeObject[] {
    const type = typeOf(CAPI_GROUP, 'Machine');
    if (!type) return [];
    return api.list(type, owner.metadata.namespace).filter((m) => isControlledBy(m, owner));
  }

  /** Which machines go first on scale-in: marked ones, then the newest. */
  function deletionOrder(machines: KubeObject[]): KubeObject[] {
    const marked = (m: KubeObject): number => (m.metadata.annotations?.[DELETE_MACHINE_ANNOTATION] !== undefined ? 0 : 1);
    return [...machines].sort((a, b) => marked(a) - marked(b) || String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp)) || b.metadata.name.localeCompare(a.metadata.name));
  }

  function createMachine(owner: KubeObject, ownerType: ResourceType, labels: Record<string, string>, annotations: Record<string, string> | undefined, machineSpec: Obj): void {
    const type = typeOf(CAPI_GROUP, 'Machine');
    if (!type) return;
    const metadata: Obj = { name: `${owner.metadata.name}-${generateNameSuffix()}`, namespace: owner.metadata.namespace, labels, ownerReferences: [controllerRef(owner, ownerType)] };
    if (annotations && Object.keys(annotations).length) metadata.annotations = annotations;
    api.create(type, { metadata, spec: machineSpec } as unknown as KubeObject, { manager: MANAGER });
  }

  function reconcileMachine(key: string, type: ResourceType, m: KubeObject): void {
    const s = status(m);
    if (m.metadata.deletionTimestamp) {
      if (!m.metadata.finalizers?.includes(MACHINE_FINALIZER)) return;
      m = writeStatus(type, m, { ...s, phase: 'Deleting', conditions: conditions(m, [['Deleting', true, 'Deleting']]) });
      if (elapsed(key, m, 'Deleting', ctx.terminationDelayMs)) removeFinalizer(type, m, MACHINE_FINALIZER);
      return;
    }
    m = addFinalizer(type, m, MACHINE_FINALIZER);
    const base: Obj = { ...status(m), observedGeneration: m.metadata.generation, lastUpdated: now() };
    const phase = status(m).phase as string | undefined;
    if (!phase) {
      writeStatus(type, m, { ...base, phase: 'Pending', bootstrapReady: false, infrastructureReady: false, conditions: conditions(m, [['BootstrapReady', false, 'WaitingForBootstrapData'], ['InfrastructureReady', false, 'WaitingForInfrastructure'], ['Ready', false, 'WaitingForInfrastructure']]) });
      elapsed(key, m, 'Pending');
      return;
    }
    if (phase === 'Pending' && elapsed(key, m, 'Pending')) {
      writeStatus(type, m, { ...base, phase: 'Provisioning', bootstrapReady: true, initialization: { bootstrapDataSecretCreated: true }, conditions: conditions(m, [['BootstrapReady', true, 'Ready']]) });
      return;
    }
    if (phase === 'Provisioning' && elapsed(key, m, 'Provisioning')) {
      const addresses = [{ type: 'InternalIP', address: `10.0.${(m.metadata.uid!.charCodeAt(0) % 200) + 1}.${(m.metadata.uid!.charCodeAt(1) % 250) + 2}` }, { type: 'Hostname', address: m.metadata.name }];
      writeStatus(type, m, { ...base, phase: 'Provisioned', infrastructureReady: true, initialization: { ...base.initialization, infrastructureProvisioned: true }, addresses, conditions: conditions(m, [['InfrastructureReady', true, 'Ready']]) });
      return;
    }
    if (phase === 'Provisioned' && elapsed(key, m, 'Provisioned')) {
      writeStatus(type, m, {
        ...base,
        phase: 'Running',
        nodeRef: { apiVersion: 'v1', kind: 'Node', name: m.metadata.name, uid: m.metadata.uid },
        nodeInfo: { kubeletVersion: spec(m).version ?? '', operatingSystem: 'linux', architecture: 'amd64' },
        conditions: conditions(m, [['NodeHealthy', true, 'NodeHealthy'], ['Ready', true, 'Ready'], ['Available', true, 'Available'], ['UpToDate', true, 'UpToDate']]),
      });
    }
  }

  // ---- MachineSet ----

  function reconcileMachineSet(type: ResourceType, ms: KubeObject): void {
    if (ms.metadata.deletionTimestamp) return;
    const desired = Number(spec(ms).replicas ?? 1);
    const template = (spec(ms).template as Obj | undefined) ?? {};
    const machines = ownedMachines(ms);
    const active = machines.filter((m) => !m.metadata.deletionTimestamp);
    const clusterName = String(spec(ms).clusterName ?? ms.metadata.labels?.[CLUSTER_NAME_LABEL] ?? '');
    if (active.length < desired) {
      const labels = { ...(template.metadata?.labels ?? {}), ...(spec(ms).selector?.matchLabels ?? {}), [CLUSTER_NAME_LABEL]: clusterName, [SET_NAME_LABEL]: ms.metadata.name };
      const deployment = ms.metadata.labels?.[DEPLOYMENT_NAME_LABEL];
      if (deployment) labels[DEPLOYMENT_NAME_LABEL] = deployment;
      for (let i = active.length; i < desired; i++) createMachine(ms, type, labels, template.metadata?.annotations, { ...(template.spec ?? {}), clusterName });
    } else if (active.length > desired) {
      for (const m of deletionOrder(active).slice(0, active.length - desired)) tryDelete(typeOf(CAPI_GROUP, 'Machine')!, m);
    }
    const current = ownedMachines(ms).filter((m) => !m.metadata.deletionTimestamp);
    const ready = current.filter(isRunning).length;
    writeStatus(type, ms, {
      ...status(ms),
      replicas: current.length,
      fullyLabeledReplicas: current.length,
      readyReplicas: ready,
      availableReplicas: ready,
      upToDateReplicas: current.length,
      selector: formatSelector(spec(ms).selector),
      observedGeneration: ms.metadata.generation,
      conditions: conditions(ms, [['Ready', ready === desired && current.length === desired, ready === desired ? 'Ready' : 'ScalingUp'], ['MachinesCreated', true, 'MachinesCreated']]),
    });
  }

  // ---- MachineDeployment ----

  function reconcileMachineDeployment(type: ResourceType, md: KubeObject): void {
    if (md.metadata.deletionTimestamp) return;
    const msType = typeOf(CAPI_GROUP, 'MachineSet');
    if (!msType) return;
    const s = spec(md);
    const desired = Number(s.replicas ?? 1);
    const clusterName = String(s.clusterName ?? md.metadata.labels?.[CLUSTER_NAME_LABEL] ?? '');
    const template = structuredClone((s.template as Obj | undefined) ?? {});
    const hash = templateHash({ labels: template.metadata?.labels ?? {}, spec: template.spec ?? {} });
    const selectorLabels = { ...(s.selector?.matchLabels ?? {}), [CLUSTER_NAME_LABEL]: clusterName, [DEPLOYMENT_NAME_LABEL]: md.metadata.name };
    const owned = api.list(msType, md.metadata.namespace).filter((ms) => isControlledBy(ms, md));
    let current = owned.find((ms) => ms.metadata.labels?.[TEMPLATE_HASH_LABEL] === hash);
    const old = owned.filter((ms) => ms !== current);
    if (!current) {
      const labels = { ...selectorLabels, [TEMPLATE_HASH_LABEL]: hash };
      template.metadata = { ...(template.metadata ?? {}), labels: { ...(template.metadata?.labels ?? {}), ...labels } };
      template.spec = { ...(template.spec ?? {}), clusterName };
      current = api.create(
        msType,
        {
          metadata: { name: `${md.metadata.name}-${hash.slice(0, 5)}`, namespace: md.metadata.namespace, labels, ownerReferences: [controllerRef(md, type)] },
          spec: { clusterName, replicas: desired, selector: { matchLabels: labels }, template, ...(s.deletePolicy ? { deletePolicy: s.deletePolicy } : {}) },
        } as unknown as KubeObject,
        { manager: MANAGER },
      );
    } else if (Number(spec(current).replicas ?? 1) !== desired) {
      current = api.update(msType, { ...current, spec: { ...spec(current), replicas: desired } }, { manager: MANAGER });
    }
    // The new set surges to the whole count; the old ones go once it is ready.
    if (old.length > 0 && Number(status(current).readyReplicas ?? 0) >= desired) for (const ms of old) tryDelete(msType, ms);

    const sets = api.list(msType, md.metadata.namespace).filter((ms) => isControlledBy(ms, md) && !ms.metadata.deletionTimestamp);
    const sum = (field: string): number => sets.reduce((n, ms) => n + Number(status(ms)[field] ?? 0), 0);
    const replicas = sum('replicas');
    const ready = sum('readyReplicas');
    const updated = Number(status(api.find(msType, md.metadata.namespace, current.metadata.name) ?? current).replicas ?? 0);
    const phase = replicas < desired || ready < desired ? 'ScalingUp' : replicas > desired ? 'ScalingDown' : 'Running';
    const running = phase === 'Running';
    writeStatus(type, md, {
      ...status(md),
      replicas,
      readyReplicas: ready,
      availableReplicas: ready,
      updatedReplicas: updated,
      upToDateReplicas: updated,
      unavailableReplicas: Math.max(0, desired - ready),
      phase,
      selector: formatSelector({ matchLabels: selectorLabels }),
      observedGeneration: md.metadata.generation,
      conditions: conditions(md, [['Ready', running, running ? 'Ready' : phase], ['Available', running, running ? 'Available' : 'WaitingForAvailableMachines'], ['MachineSetReady', running, running ? 'Ready' : phase]]),
    });
  }

  // ---- Control planes ----

  function clusterReferencing(namespace: string | undefined, kind: string, name: string, field: 'controlPlaneRef' | 'infrastructureRef'): KubeObject | undefined {
    const type = typeOf(CAPI_GROUP, 'Cluster');
    if (!type) return undefined;
    return api.list(type, namespace).find((c) => {
      const ref = spec(c)[field] as Obj | undefined;
      return ref?.name === name && ref?.kind === kind;
    });
  }

  function machineTemplateRef(cp: KubeObject): Obj | undefined {
    const t = spec(cp).machineTemplate as Obj | undefined;
    return (t?.infrastructureRef ?? t?.spec?.infrastructureRef) as Obj | undefined;
  }

  function reconcileControlPlane(key: string, type: ResourceType, cp: KubeObject): void {
    if (cp.metadata.deletionTimestamp) return;
    const cluster = clusterReferencing(cp.metadata.namespace, type.kind, cp.metadata.name, 'controlPlaneRef');
    const clusterName = cluster?.metadata.name ?? cp.metadata.labels?.[CLUSTER_NAME_LABEL];
    if (!clusterName) return; // Like the real controllers: nothing happens until a Cluster claims it.
    const desired = Number(spec(cp).replicas ?? 1);
    const version = spec(cp).version as string | undefined;
    const selector = `${CLUSTER_NAME_LABEL}=${clusterName},${CONTROL_PLANE_LABEL}`;
    const infraRef = machineTemplateRef(cp);
    let replicas = desired;
    let ready = 0;
    let upToDate = desired;
    if (infraRef) {
      const active = ownedMachines(cp).filter((m) => !m.metadata.deletionTimestamp);
      const outdated = active.filter((m) => spec(m).version !== version);
      const labels = { [CLUSTER_NAME_LABEL]: clusterName, [CONTROL_PLANE_LABEL]: '', [CONTROL_PLANE_NAME_LABEL]: cp.metadata.name };
      const machineSpec: Obj = { clusterName, bootstrap: { dataSecretName: `${cp.metadata.name}-bootstrap` }, infrastructureRef: structuredClone(infraRef) };
      if (version) machineSpec.version = version;
      const allReady = active.every(isRunning);
      if (active.length < desired) {
        createMachine(cp, type, labels, undefined, machineSpec);
      } else if (active.length > desired) {
        tryDelete(typeOf(CAPI_GROUP, 'Machine')!, deletionOrder(outdated.length ? outdated : active)[0]!);
      } else if (outdated.length > 0 && allReady) {
        // One at a time, a new machine first: the control plane keeps its quorum.
        createMachine(cp, type, labels, undefined, machineSpec);
      }
      const current = ownedMachines(cp).filter((m) => !m.metadata.deletionTimestamp);
      replicas = current.length;
      ready = current.filter(isRunning).length;
      upToDate = current.filter((m) => spec(m).version === version).length;
    } else if (elapsed(key, cp, 'Scaling')) {
      ready = desired;
    } else {
      ready = 0;
    }
    const initialized = status(cp).initialized === true || ready > 0;
    writeStatus(type, cp, {
      ...status(cp),
      replicas,
      readyReplicas: ready,
      updatedReplicas: upToDate,
      upToDateReplicas: upToDate,
      availableReplicas: ready,
      unavailableReplicas: Math.max(0, replicas - ready),
      initialized,
      ready: ready > 0,
      initialization: { controlPlaneInitialized: initialized },
      ...(version ? { version } : {}),
      selector,
      observedGeneration: cp.metadata.generation,
      conditions: conditions(cp, [['Available', ready > 0, ready > 0 ? 'Available' : 'WaitingForMachines'], ['Initialized', initialized, initialized ? 'Initialized' : 'WaitingForMachines'], ['Ready', ready === desired, ready === desired ? 'Ready' : 'ScalingUp']]),
    });
  }

  // ---- Infrastructure and bootstrap objects ----

  function reconcileProviderObject(key: string, type: ResourceType, obj: KubeObject): void {
    if (obj.metadata.deletionTimestamp || status(obj).ready === true) return;
    if (!elapsed(key, obj, 'Provisioning')) return;
    provisioned.add(obj.metadata.uid!);
    const next: Obj = { ...status(obj), ready: true, initialization: { provisioned: true }, conditions: conditions(obj, [['Ready', true, 'Ready']]) };
    if (type.group === BOOTSTRAP_GROUP) next.dataSecretName = `${obj.metadata.name}-bootstrap`;
    writeStatus(type, obj, next);
  }

  const providerReady = (obj: KubeObject | undefined): boolean =>
    obj !== undefined && (status(obj).ready === true || status(obj).initialization?.provisioned === true || isTrue(obj, 'Ready') || provisioned.has(obj.metadata.uid!));

  const controlPlaneInitialized = (obj: KubeObject | undefined): boolean =>
    obj !== undefined && (status(obj).initialized === true || status(obj).initialization?.controlPlaneInitialized === true || status(obj).ready === true);

  // ---- Cluster ----

  function kubeconfig(cluster: KubeObject, server: WorkloadServer): string {
    const name = cluster.metadata.name;
    const user = `${name}-admin`;
    const context = `${user}@${name}`;
    return yaml.dump(
      {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name, cluster: { server: server.url, 'certificate-authority-data': Buffer.from(server.caPem).toString('base64') } }],
        users: [{ name: user, user: { token: server.token } }],
        contexts: [{ name: context, context: { cluster: name, user } }],
        'current-context': context,
        preferences: {},
      },
      { lineWidth: -1 },
    );
  }

  function ensureKubeconfigSecret(clusterType: ResourceType, cluster: KubeObject, server: WorkloadServer): void {
    const secrets = api.type('', 'secrets');
    const name = `${cluster.metadata.name}-kubeconfig`;
    const data = { value: Buffer.from(kubeconfig(cluster, server)).toString('base64') };
    const existing = api.find(secrets, cluster.metadata.namespace, name);
    if (existing) {
      if ((existing.data as Obj | undefined)?.value !== data.value) api.update(secrets, { ...existing, data }, { manager: MANAGER });
      return;
    }
    api.create(
      secrets,
      {
        metadata: { name, namespace: cluster.metadata.namespace, labels: { [CLUSTER_NAME_LABEL]: cluster.metadata.name }, ownerReferences: [controllerRef(cluster, clusterType)] },
        type: 'cluster.x-k8s.io/secret',
        data,
      } as unknown as KubeObject,
      { manager: MANAGER },
    );
  }

  function serverFor(key: string, cluster: KubeObject): WorkloadServer | undefined {
    const uid = cluster.metadata.uid!;
    const entry = servers.get(uid);
    if (entry) return entry.server;
    const started: ServerEntry = {
      namespace: cluster.metadata.namespace ?? '',
      name: cluster.metadata.name,
      starting: startWorkloadServer().then(
        async (server) => {
          if (stopped || servers.get(uid) !== started) {
            await server.close();
            return undefined;
          }
          started.server = server;
          queue.add(key);
          return server;
        },
        () => {
          servers.delete(uid);
          queue.addAfter(key, 1000);
          return undefined;
        },
      ),
    };
    servers.set(uid, started);
    return undefined;
  }

  async function stopServer(uid: string): Promise<void> {
    const entry = servers.get(uid);
    if (!entry) return;
    servers.delete(uid);
    const server = entry.server ?? (await entry.starting);
    await server?.close();
  }

  function ensureOwnedBy(cluster: KubeObject, clusterType: ResourceType, target: { type: ResourceType; obj: KubeObject | undefined } | undefined): void {
    const obj = target?.obj;
    if (!obj || obj.metadata.deletionTimestamp || ownerRefs(obj).some((r) => r.uid === cluster.metadata.uid)) return;
    const ref = { apiVersion: `${clusterType.group}/${clusterType.version}`, kind: 'Cluster', name: cluster.metadata.name, uid: cluster.metadata.uid! };
    api.update(target.type, { ...obj, metadata: { ...obj.metadata, ownerReferences: [...ownerRefs(obj), ref] } }, { manager: MANAGER });
  }

  /** What a Cluster's deletion removes first: its machines, sets, deployments, control plane and infrastructure. */
  function descendants(cluster: KubeObject): { type: ResourceType; obj: KubeObject }[] {
    const found: { type: ResourceType; obj: KubeObject }[] = [];
    for (const kind of ['MachineDeployment', 'MachineSet', 'Machine']) {
      const type = typeOf(CAPI_GROUP, kind);
      if (!type) continue;
      for (const obj of api.list(type, cluster.metadata.namespace)) {
        if (obj.metadata.labels?.[CLUSTER_NAME_LABEL] === cluster.metadata.name || spec(obj).clusterName === cluster.metadata.name) found.push({ type, obj });
      }
    }
    for (const field of ['controlPlaneRef', 'infrastructureRef']) {
      const r = resolve(cluster.metadata.namespace, spec(cluster)[field]);
      if (r?.obj) found.push({ type: r.type, obj: r.obj });
    }
    return found;
  }

  function reconcileCluster(key: string, type: ResourceType, cluster: KubeObject): void {
    if (cluster.metadata.deletionTimestamp) {
      void stopServer(cluster.metadata.uid!);
      const rest = descendants(cluster);
      for (const d of rest) tryDelete(d.type, d.obj);
      if (rest.length === 0) removeFinalizer(type, cluster, CLUSTER_FINALIZER);
      else if (status(cluster).phase !== 'Deleting') writeStatus(type, cluster, { ...status(cluster), phase: 'Deleting' });
      return;
    }
    cluster = addFinalizer(type, cluster, CLUSTER_FINALIZER);
    const infra = resolve(cluster.metadata.namespace, spec(cluster).infrastructureRef);
    const cp = resolve(cluster.metadata.namespace, spec(cluster).controlPlaneRef);
    ensureOwnedBy(cluster, type, infra);
    ensureOwnedBy(cluster, type, cp);
    const hasInfraRef = spec(cluster).infrastructureRef !== undefined;
    const hasCpRef = spec(cluster).controlPlaneRef !== undefined;
    const infraReady = hasInfraRef ? providerReady(infra?.obj) : true;
    // Without a control plane object the machines with the control-plane label are the control plane.
    const cpInitialized = hasCpRef ? controlPlaneInitialized(cp?.obj) : infraReady;
    const cpReady = hasCpRef ? cp?.obj !== undefined && (status(cp.obj).ready === true || isTrue(cp.obj, 'Available')) : infraReady;
    const server = infraReady && cpInitialized ? serverFor(key, cluster) : undefined;
    if (server) {
      ensureKubeconfigSecret(type, cluster, server);
      const endpoint = spec(cluster).controlPlaneEndpoint as Obj | undefined;
      if (!endpoint?.host) {
        const url = new URL(server.url);
        cluster = api.update(type, { ...cluster, spec: { ...spec(cluster), controlPlaneEndpoint: { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port) } } }, { manager: MANAGER });
      }
    }
    const missingRefs = (hasInfraRef && !infra?.obj) || (hasCpRef && !cp?.obj);
    const provisionedNow = infraReady && cpInitialized && server !== undefined;
    const phase = provisionedNow ? 'Provisioned' : missingRefs ? 'Pending' : 'Provisioning';
    const workers = typeOf(CAPI_GROUP, 'Machine') ? api.list(typeOf(CAPI_GROUP, 'Machine')!, cluster.metadata.namespace).filter((m) => m.metadata.labels?.[CLUSTER_NAME_LABEL] === cluster.metadata.name && m.metadata.labels?.[CONTROL_PLANE_LABEL] === undefined) : [];
    const ready = provisionedNow && cpReady;
    writeStatus(type, cluster, {
      ...status(cluster),
      phase,
      infrastructureReady: infraReady,
      controlPlaneReady: cpReady && provisionedNow,
      initialization: { infrastructureProvisioned: infraReady, controlPlaneInitialized: cpInitialized && provisionedNow },
      workers: { desiredReplicas: workers.length, replicas: workers.length, readyReplicas: workers.filter(isRunning).length },
      observedGeneration: cluster.metadata.generation,
      conditions: conditions(cluster, [
        ['InfrastructureReady', infraReady, infraReady ? 'Ready' : 'WaitingForInfrastructure'],
        ['ControlPlaneInitialized', cpInitialized && provisionedNow, cpInitialized ? 'Initialized' : 'WaitingForControlPlane'],
        ['ControlPlaneReady', cpReady && provisionedNow, cpReady ? 'Ready' : 'WaitingForControlPlane'],
        ['ControlPlaneAvailable', cpReady && provisionedNow, cpReady ? 'Available' : 'WaitingForControlPlane'],
        ['Available', ready, ready ? 'Available' : 'NotAvailable'],
        ['Ready', ready, ready ? 'Ready' : 'NotReady'],
      ]),
    });
  }

  // ---- Dispatch ----

  function reconcile(key: string): void {
    const [group, kind, namespace, name] = key.split('|') as [string, string, string, string];
    const type = typeOf(group, kind);
    if (!type) return;
    const obj = api.find(type, namespace || undefined, name);
    if (!obj) return;
    // A real controller reaches a new object some time after it is created: until then it has no status at all.
    if (!obj.metadata.deletionTimestamp && Object.keys(status(obj)).length === 0 && !elapsed(key, obj, 'Unobserved')) return;
    try {
      if (group === CAPI_GROUP) {
        if (kind === 'Cluster') reconcileCluster(key, type, obj);
        else if (kind === 'MachineDeployment') reconcileMachineDeployment(type, obj);
        else if (kind === 'MachineSet') reconcileMachineSet(type, obj);
        else if (kind === 'Machine') reconcileMachine(key, type, obj);
      } else if (group === CONTROL_PLANE_GROUP) {
        reconcileControlPlane(key, type, obj);
      } else {
        reconcileProviderObject(key, type, obj);
      }
    } catch (err) {
      // A schema that rejects what the emulation writes would fail the same way on every retry: wait for the next change instead.
      if (err instanceof ApiError && err.status.code === 422) return;
      throw err;
    }
  }

  const queue = new WorkQueue(reconcile);

  function enqueueClustersIn(namespace: string | undefined): void {
    const type = typeOf(CAPI_GROUP, 'Cluster');
    if (!type) return;
    for (const c of api.list(type, namespace)) queue.add(keyOf(CAPI_GROUP, 'Cluster', c.metadata.namespace, c.metadata.name));
  }

  function onEvent(event: StoreEvent): void {
    if (!CAPI_GROUPS.has(event.group)) return;
    const kind = kindOf(event.group, event.resource);
    if (!kind || (event.group !== CAPI_GROUP && kind.endsWith('Template'))) return;
    const obj = event.object;
    if (event.type !== 'DELETED') queue.add(keyOf(event.group, kind, obj.metadata.namespace, obj.metadata.name));
    else for (const k of [...readyAt.keys()]) if (k.startsWith(`${obj.metadata.uid}/`)) readyAt.delete(k);
    for (const ref of ownerRefs(obj)) {
      const group = refGroup(ref as Obj);
      if (CAPI_GROUPS.has(group)) queue.add(keyOf(group, ref.kind, obj.metadata.namespace, ref.name));
    }
    // Clusters follow their control plane, infrastructure, machines and what their deletion waits for.
    if (event.group !== CAPI_GROUP || kind === 'Machine' || kind === 'MachineDeployment' || kind === 'MachineSet') enqueueClustersIn(obj.metadata.namespace);
    if (kind === 'Cluster' && event.type !== 'DELETED') {
      for (const field of ['controlPlaneRef', 'infrastructureRef']) {
        const ref = spec(obj)[field] as Obj | undefined;
        if (ref?.kind && ref.name) queue.add(keyOf(refGroup(ref), ref.kind, obj.metadata.namespace, ref.name));
      }
    }
    if (kind === 'Cluster' && event.type === 'DELETED') void stopServer(obj.metadata.uid!);
  }

  const unsubscribe = store.subscribe(onEvent);

  return {
    stop() {
      stopped = true;
      unsubscribe();
      queue.stop();
    },
    workloadClusters() {
      return [...servers.values()].filter((e) => e.server).map((e) => ({ namespace: e.namespace, name: e.name, url: e.server!.url, caPem: e.server!.caPem, token: e.server!.token }));
    },
    async close() {
      await Promise.all([...servers.keys()].map((uid) => stopServer(uid)));
    },
  };
}
