/**
 * The emulated Cluster controller: a Cluster is Provisioned once its
 * infrastructure is ready and its control plane initialised; then a second
 * sandbox API server runs for it and the Secret `<cluster>-kubeconfig`
 * (key `value`) holds a kubeconfig for it. Deleting the Cluster deletes what
 * belongs to it first, then stops that server.
 */
import yaml from 'js-yaml';
import type { KubeObject, ResourceType } from '../resources.js';
import { controllerRef, ownerRefs, spec, status, type WorkQueue } from './base.js';
import { CAPI_GROUP, CLUSTER_FINALIZER, CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL, isRunning, isTrue, MANAGER, type CapiKit, type Obj, type Resolved } from './cluster-api-kit.js';
import { controlPlaneInitialized, providerReady } from './cluster-api-control-plane.js';

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

interface ServerEntry {
  namespace: string;
  name: string;
  starting: Promise<WorkloadServer | undefined>;
  server?: WorkloadServer;
}

/** The workload clusters' API servers, by Cluster uid. */
export class WorkloadServers {
  private readonly servers = new Map<string, ServerEntry>();
  stopped = false;

  constructor(
    private readonly startWorkloadServer: () => Promise<WorkloadServer>,
    private readonly queue: WorkQueue,
  ) {}

  /** The cluster's running server; starts one (and requeues `key` once it listens) when there is none. */
  serverFor(key: string, cluster: KubeObject): WorkloadServer | undefined {
    const uid = cluster.metadata.uid!;
    const entry = this.servers.get(uid);
    if (entry) return entry.server;
    const started: ServerEntry = {
      namespace: cluster.metadata.namespace ?? '',
      name: cluster.metadata.name,
      starting: this.startWorkloadServer().then(
        async (server) => {
          if (this.stopped || this.servers.get(uid) !== started) {
            await server.close();
            return undefined;
          }
          started.server = server;
          this.queue.add(key);
          return server;
        },
        () => {
          this.servers.delete(uid);
          this.queue.addAfter(key, 1000);
          return undefined;
        },
      ),
    };
    this.servers.set(uid, started);
    return undefined;
  }

  async stop(uid: string): Promise<void> {
    const entry = this.servers.get(uid);
    if (!entry) return;
    this.servers.delete(uid);
    const server = entry.server ?? (await entry.starting);
    await server?.close();
  }

  endpoints(): WorkloadClusterEndpoint[] {
    return [...this.servers.values()]
      .filter((e) => e.server)
      .map((e) => ({ namespace: e.namespace, name: e.name, url: e.server!.url, caPem: e.server!.caPem, token: e.server!.token }));
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.servers.keys()].map((uid) => this.stop(uid)));
  }
}

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

function ensureKubeconfigSecret(k: CapiKit, clusterType: ResourceType, cluster: KubeObject, server: WorkloadServer): void {
  const secrets = k.api.type('', 'secrets');
  const name = `${cluster.metadata.name}-kubeconfig`;
  const data = { value: Buffer.from(kubeconfig(cluster, server)).toString('base64') };
  const existing = k.api.find(secrets, cluster.metadata.namespace, name);
  if (existing) {
    if ((existing.data as Obj | undefined)?.value !== data.value) k.api.update(secrets, { ...existing, data }, { manager: MANAGER });
    return;
  }
  k.api.create(
    secrets,
    {
      metadata: { name, namespace: cluster.metadata.namespace, labels: { [CLUSTER_NAME_LABEL]: cluster.metadata.name }, ownerReferences: [controllerRef(cluster, clusterType)] },
      type: 'cluster.x-k8s.io/secret',
      data,
    } as unknown as KubeObject,
    { manager: MANAGER },
  );
}

function ensureOwnedBy(k: CapiKit, cluster: KubeObject, clusterType: ResourceType, target: Resolved | undefined): void {
  const obj = target?.obj;
  if (!obj || obj.metadata.deletionTimestamp || ownerRefs(obj).some((r) => r.uid === cluster.metadata.uid)) return;
  const ref = { apiVersion: `${clusterType.group}/${clusterType.version}`, kind: 'Cluster', name: cluster.metadata.name, uid: cluster.metadata.uid! };
  k.api.update(target.type, { ...obj, metadata: { ...obj.metadata, ownerReferences: [...ownerRefs(obj), ref] } }, { manager: MANAGER });
}

/** What a Cluster's deletion removes first: its machines, sets, deployments, control plane and infrastructure. */
function descendants(k: CapiKit, cluster: KubeObject): { type: ResourceType; obj: KubeObject }[] {
  const found: { type: ResourceType; obj: KubeObject }[] = [];
  for (const kind of ['MachineDeployment', 'MachineSet', 'Machine']) {
    const type = k.typeOf(CAPI_GROUP, kind);
    if (!type) continue;
    for (const obj of k.api.list(type, cluster.metadata.namespace)) {
      if (obj.metadata.labels?.[CLUSTER_NAME_LABEL] === cluster.metadata.name || spec(obj).clusterName === cluster.metadata.name) found.push({ type, obj });
    }
  }
  for (const field of ['controlPlaneRef', 'infrastructureRef']) {
    const r = k.resolve(cluster.metadata.namespace, spec(cluster)[field]);
    if (r?.obj) found.push({ type: r.type, obj: r.obj });
  }
  return found;
}

/** A deleted Cluster: its server stops, what belongs to it goes, then its finalizer. */
function finalizeCluster(k: CapiKit, servers: WorkloadServers, type: ResourceType, cluster: KubeObject): void {
  void servers.stop(cluster.metadata.uid!);
  const rest = descendants(k, cluster);
  for (const d of rest) k.tryDelete(d.type, d.obj);
  if (rest.length === 0) k.removeFinalizer(type, cluster, CLUSTER_FINALIZER);
  else if (status(cluster).phase !== 'Deleting') k.writeStatus(type, cluster, { ...status(cluster), phase: 'Deleting' });
}

export function reconcileCluster(k: CapiKit, servers: WorkloadServers, key: string, type: ResourceType, cluster: KubeObject): void {
  if (cluster.metadata.deletionTimestamp) {
    finalizeCluster(k, servers, type, cluster);
    return;
  }
  cluster = k.addFinalizer(type, cluster, CLUSTER_FINALIZER);
  const infra = k.resolve(cluster.metadata.namespace, spec(cluster).infrastructureRef);
  const cp = k.resolve(cluster.metadata.namespace, spec(cluster).controlPlaneRef);
  ensureOwnedBy(k, cluster, type, infra);
  ensureOwnedBy(k, cluster, type, cp);
  const hasInfraRef = spec(cluster).infrastructureRef !== undefined;
  const hasCpRef = spec(cluster).controlPlaneRef !== undefined;
  const infraReady = hasInfraRef ? providerReady(k, infra?.obj) : true;
  // Without a control plane object the machines with the control-plane label are the control plane.
  const cpInitialized = hasCpRef ? controlPlaneInitialized(cp?.obj) : infraReady;
  const cpReady = hasCpRef ? cp?.obj !== undefined && (status(cp.obj).ready === true || isTrue(cp.obj, 'Available')) : infraReady;
  const server = infraReady && cpInitialized ? servers.serverFor(key, cluster) : undefined;
  if (server) {
    ensureKubeconfigSecret(k, type, cluster, server);
    const endpoint = spec(cluster).controlPlaneEndpoint as Obj | undefined;
    if (!endpoint?.host) {
      const url = new URL(server.url);
      cluster = k.api.update(
        type,
        { ...cluster, spec: { ...spec(cluster), controlPlaneEndpoint: { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port) } } },
        { manager: MANAGER },
      );
    }
  }
  const missingRefs = (hasInfraRef && !infra?.obj) || (hasCpRef && !cp?.obj);
  const provisionedNow = infraReady && cpInitialized && server !== undefined;
  const phase = provisionedNow ? 'Provisioned' : missingRefs ? 'Pending' : 'Provisioning';
  const machineType = k.typeOf(CAPI_GROUP, 'Machine');
  const workers = machineType
    ? k.api
        .list(machineType, cluster.metadata.namespace)
        .filter((m) => m.metadata.labels?.[CLUSTER_NAME_LABEL] === cluster.metadata.name && m.metadata.labels?.[CONTROL_PLANE_LABEL] === undefined)
    : [];
  const ready = provisionedNow && cpReady;
  k.writeStatus(type, cluster, {
    ...status(cluster),
    phase,
    infrastructureReady: infraReady,
    controlPlaneReady: cpReady && provisionedNow,
    initialization: { infrastructureProvisioned: infraReady, controlPlaneInitialized: cpInitialized && provisionedNow },
    workers: { desiredReplicas: workers.length, replicas: workers.length, readyReplicas: workers.filter(isRunning).length },
    observedGeneration: cluster.metadata.generation,
    conditions: k.conditions(cluster, [
      ['InfrastructureReady', infraReady, infraReady ? 'Ready' : 'WaitingForInfrastructure'],
      ['ControlPlaneInitialized', cpInitialized && provisionedNow, cpInitialized ? 'Initialized' : 'WaitingForControlPlane'],
      ['ControlPlaneReady', cpReady && provisionedNow, cpReady ? 'Ready' : 'WaitingForControlPlane'],
      ['ControlPlaneAvailable', cpReady && provisionedNow, cpReady ? 'Available' : 'WaitingForControlPlane'],
      ['Available', ready, ready ? 'Available' : 'NotAvailable'],
      ['Ready', ready, ready ? 'Ready' : 'NotReady'],
    ]),
  });
}
