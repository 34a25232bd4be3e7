/**
 * The in-process controllers and what a fresh cluster holds besides its
 * namespaces: two Ready nodes (`sandbox-node-1`, `-2`), the `kubernetes`
 * Service with its Endpoints, a default StorageClass `standard`, and the
 * two system PriorityClasses.
 */
import type { KubeObject } from '../resources.js';
import type { ControllerContext, Controller, ControllerOptions } from './base.js';
import { startDaemonSetController, startJobController } from './daemonset-job.js';
import { startGarbageCollector } from './garbage-collector.js';
import { startPodLifecycle } from './pods.js';
import { DEFAULT_CLASS_ANNOTATION, startEndpointsController, startVolumeController } from './services-storage.js';
import { startStatefulSetController } from './statefulset.js';
import { startDeploymentController, startReplicaSetController } from './workloads.js';

export type { ControllerOptions } from './base.js';

/** The emulated nodes every sandbox starts with. */
export const SANDBOX_NODES = ['sandbox-node-1', 'sandbox-node-2'];

/** Creates the objects a fresh cluster has (nodes, the kubernetes Service, a default StorageClass). */
export function bootstrapCluster(ctx: Pick<ControllerContext, 'api'>, apiPort: number): void {
  const { api } = ctx;
  const create = (group: string, resource: string, obj: object): KubeObject => api.create(api.type(group, resource), obj as KubeObject, { manager: 'kube-apiserver' });
  const nodes = api.type('', 'nodes');
  SANDBOX_NODES.forEach((name, i) => {
    const node = create('', 'nodes', {
      metadata: {
        name,
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          'beta.kubernetes.io/os': 'linux',
          'beta.kubernetes.io/arch': 'amd64',
        },
      },
      spec: { podCIDR: `10.244.${i + 1}.0/24`, podCIDRs: [`10.244.${i + 1}.0/24`] },
    });
    const t = node.metadata.creationTimestamp;
    api.update(
      nodes,
      {
        ...node,
        status: {
          capacity: { cpu: '8', memory: '16Gi', pods: '110', 'ephemeral-storage': '100Gi' },
          allocatable: { cpu: '8', memory: '16Gi', pods: '110', 'ephemeral-storage': '100Gi' },
          conditions: [
            {
              type: 'MemoryPressure',
              status: 'False',
              reason: 'KubeletHasSufficientMemory',
              message: 'kubelet has sufficient memory available',
              lastHeartbeatTime: t,
              lastTransitionTime: t,
            },
            { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure', lastHeartbeatTime: t, lastTransitionTime: t },
            {
              type: 'PIDPressure',
              status: 'False',
              reason: 'KubeletHasSufficientPID',
              message: 'kubelet has sufficient PID available',
              lastHeartbeatTime: t,
              lastTransitionTime: t,
            },
            { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: t, lastTransitionTime: t },
          ],
          addresses: [
            { type: 'InternalIP', address: `172.18.0.${i + 2}` },
            { type: 'Hostname', address: name },
          ],
          nodeInfo: {
            kubeletVersion: 'v1.32.0',
            kubeProxyVersion: 'v1.32.0',
            containerRuntimeVersion: 'containerd://1.7.0',
            operatingSystem: 'linux',
            architecture: 'amd64',
            osImage: 'vnfm sandbox (no containers run)',
            kernelVersion: '',
            machineID: '',
            systemUUID: '',
            bootID: '',
          },
          daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        },
      },
      { subresource: 'status', manager: 'kubelet' },
    );
  });
  create('', 'services', {
    metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: { clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: apiPort }] },
  });
  create('', 'endpoints', {
    metadata: { name: 'kubernetes', namespace: 'default', labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } },
    subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: apiPort, protocol: 'TCP' }] }],
  });
  create('storage.k8s.io', 'storageclasses', {
    metadata: { name: 'standard', annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } },
    provisioner: 'sandbox.vnfm.io/hostpath',
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
  });
  for (const [name, value] of [
    ['system-cluster-critical', 2000000000],
    ['system-node-critical', 2000001000],
  ] as const) {
    create('scheduling.k8s.io', 'priorityclasses', {
      metadata: { name },
      value,
      description: `Used for ${name.replace('system-', 'system ').replace('-critical', ' critical')} pods that must not be moved from their current node.`,
    });
  }
}

/** Starts the controllers; garbage collection always runs, the workload controllers unless disabled. */
export function startControllers(ctx: ControllerContext, opts: ControllerOptions): Controller {
  const controllers: Controller[] = [startGarbageCollector(ctx)];
  if (opts.enabled !== false) {
    controllers.push(
      startPodLifecycle(ctx),
      startReplicaSetController(ctx),
      startDeploymentController(ctx),
      startStatefulSetController(ctx),
      startDaemonSetController(ctx),
      startJobController(ctx),
      startEndpointsController(ctx),
      startVolumeController(ctx),
    );
  }
  return {
    stop() {
      for (const c of controllers) c.stop();
    },
  };
}
