/**
 * The built-in workload, networking, storage, RBAC and policy kinds, all
 * served by the generic handlers. What a real API server does for a kind on
 * its own — defaults, a few validations, the Service IP allocator — lives
 * in the kind's strategy here; what controllers do lives in controllers/.
 */
import type { KubeObject, ResourceType } from '../resources.js';
import * as d from './defaults.js';
import { hpaStrategy, hpaV1 } from './autoscaling.js';
import { col, createdAt, define, ownFields, spec, status, str, templateColumns, type KindDef, type Obj } from './kind-def.js';
import {
  keepSelector,
  validateClaimUpdate,
  validateContainers,
  validateJobUpdate,
  validatePodUpdate,
  validateSelectorTemplate,
  validateStatefulSetUpdate,
} from './builtin-validation.js';
import { serviceStrategy, type Allocators } from './service-allocation.js';

const ready = (o: Obj): string => `${status(o).readyReplicas ?? 0}/${spec(o).replicas ?? 0}`;

function podReady(o: Obj): string {
  const statuses = (status(o).containerStatuses as Obj[] | undefined) ?? [];
  const total = ((spec(o).containers as Obj[] | undefined) ?? []).length;
  return `${statuses.filter((c) => c.ready).length}/${total}`;
}

function podPhase(o: Obj): string {
  if (o.metadata?.deletionTimestamp) return 'Terminating';
  const waiting = ((status(o).containerStatuses as Obj[] | undefined) ?? []).find((c) => c.state?.waiting?.reason);
  return waiting?.state.waiting.reason ?? status(o).reason ?? status(o).phase ?? 'Pending';
}
/** The kinds beyond namespaces, configmaps, secrets and leases. */
export function builtinKinds(alloc: Allocators): ResourceType[] {
  const kinds = builtinKindsOnce(alloc);
  // autoscaling/v1 serves the same HorizontalPodAutoscalers as v2, converted.
  const hpa = kinds.find((t) => t.group === 'autoscaling' && t.kind === 'HorizontalPodAutoscaler')!;
  kinds.splice(kinds.indexOf(hpa) + 1, 0, hpaV1(hpa));
  return kinds;
}

type Def = Omit<KindDef, 'group' | 'version'>;
const core = (def: Def): ResourceType => define({ group: '', version: 'v1', ...def });
const apps = (def: Def): ResourceType => define({ group: 'apps', version: 'v1', ...def });

function builtinKindsOnce(alloc: Allocators): ResourceType[] {
  return [...podAndServiceKinds(alloc), ...coreKinds(), ...appsKinds(), ...batchKinds(), ...rbacNetworkingAndPolicyKinds()];
}

/** Pods, Services and Endpoints. */
function podAndServiceKinds(alloc: Allocators): ResourceType[] {
  return [
    core({
      kind: 'Pod',
      namespaced: true,
      returnDeletedObject: true,
      // What a scheduler posts to bind a pod to a node (rest.ts).
      extraSubresources: [
        { name: 'binding', verbs: ['create'], responseKind: { group: '', version: 'v1', kind: 'Binding' } },
        // The containers' output (pod-logs.ts), served by the server before the REST handler.
        { name: 'log', verbs: ['get'], responseKind: { group: '', version: 'v1', kind: 'Pod' } },
      ],
      fields: ownFields({
        'spec.nodeName': (o) => str(spec(o).nodeName),
        'spec.restartPolicy': (o) => str(spec(o).restartPolicy),
        'spec.schedulerName': (o) => str(spec(o).schedulerName),
        'spec.serviceAccountName': (o) => str(spec(o).serviceAccountName),
        'status.phase': (o) => str(status(o).phase),
        'status.podIP': (o) => str(status(o).podIP),
        // The field set holds the first IP of each family; the sandbox's pods have one.
        'status.podIPs': (o) => str(((status(o).podIPs as Obj[] | undefined) ?? [])[0]?.ip),
        'status.nominatedNodeName': (o) => str(status(o).nominatedNodeName),
      }),
      shortNames: ['po'],
      categories: ['all'],
      status: true,
      columns: [
        col('Ready', podReady),
        col('Status', podPhase),
        col('Restarts', (o) => String(((status(o).containerStatuses as Obj[] | undefined) ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0))),
        col('IP', (o) => status(o).podIP ?? '<none>', 'string', 1),
        col('Node', (o) => spec(o).nodeName ?? '<none>', 'string', 1),
        col('Nominated Node', (o) => status(o).nominatedNodeName ?? '<none>', 'string', 1),
        col(
          'Readiness Gates',
          (o) => {
            const gates = (spec(o).readinessGates as Obj[] | undefined) ?? [];
            if (!gates.length) return '<none>';
            const conds = (status(o).conditions as Obj[] | undefined) ?? [];
            return `${gates.filter((g) => conds.some((c) => c.type === g.conditionType && c.status === 'True')).length}/${gates.length}`;
          },
          'string',
          1,
        ),
      ],
      strategy: {
        applyDefaults: d.defaultPod,
        prepareForCreate(o) {
          o.status = { phase: 'Pending', qosClass: 'BestEffort' };
        },
        validate: (o) => validateContainers(spec(o), 'spec'),
        validateUpdate: validatePodUpdate,
      },
    }),
    core({
      kind: 'Service',
      returnDeletedObject: true,
      namespaced: true,
      shortNames: ['svc'],
      categories: ['all'],
      status: true,
      columns: [
        col('Type', (o) => spec(o).type),
        col('Cluster-IP', (o) => spec(o).clusterIP ?? '<none>'),
        col(
          'External-IP',
          (o) =>
            spec(o).externalName ??
            ((status(o).loadBalancer?.ingress as Obj[] | undefined)?.map((i) => i.ip).join(',') || (spec(o).type === 'LoadBalancer' ? '<pending>' : '<none>')),
        ),
        col('Port(s)', (o) => ((spec(o).ports as Obj[] | undefined) ?? []).map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol}`).join(',') || '<none>'),
        col(
          'Selector',
          (o) =>
            Object.entries((spec(o).selector as Record<string, string> | undefined) ?? {})
              .map(([k, v]) => `${k}=${v}`)
              .join(',') || '<none>',
          'string',
          1,
        ),
      ],
      strategy: serviceStrategy(alloc),
    }),
    core({
      kind: 'Endpoints',
      plural: 'endpoints',
      namespaced: true,
      shortNames: ['ep'],
      columns: [
        col(
          'Endpoints',
          (o) =>
            ((o.subsets as Obj[] | undefined) ?? [])
              .flatMap((s) => ((s.addresses as Obj[] | undefined) ?? []).flatMap((a) => ((s.ports as Obj[] | undefined) ?? [{}]).map((p) => (p.port ? `${a.ip}:${p.port}` : a.ip))))
              .join(',') || '<none>',
        ),
      ],
    }),
  ];
}

/** The other core kinds: accounts, claims and volumes, limits, quotas, events, nodes. */
function coreKinds(): ResourceType[] {
  return [
    core({ kind: 'ServiceAccount', namespaced: true, shortNames: ['sa'], returnDeletedObject: true }),
    core({
      kind: 'PersistentVolumeClaim',
      returnDeletedObject: true,
      namespaced: true,
      shortNames: ['pvc'],
      status: true,
      columns: [
        col('Status', (o) => status(o).phase ?? 'Pending'),
        col('Volume', (o) => spec(o).volumeName ?? ''),
        col('Capacity', (o) => status(o).capacity?.storage ?? ''),
        col('Access Modes', (o) =>
          ((status(o).accessModes as string[] | undefined) ?? [])
            .map((m) => ({ ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' })[m] ?? m)
            .join(','),
        ),
        col('StorageClass', (o) => spec(o).storageClassName ?? '<unset>'),
      ],
      strategy: {
        applyDefaults: d.defaultPersistentVolumeClaim,
        prepareForCreate(o) {
          o.status = { phase: 'Pending' };
        },
        validateUpdate: validateClaimUpdate,
      },
    }),
    core({
      kind: 'PersistentVolume',
      returnDeletedObject: true,
      namespaced: false,
      shortNames: ['pv'],
      status: true,
      columns: [
        col('Capacity', (o) => spec(o).capacity?.storage ?? ''),
        col('Reclaim Policy', (o) => spec(o).persistentVolumeReclaimPolicy),
        col('Status', (o) => status(o).phase ?? 'Pending'),
        col('Claim', (o) => (spec(o).claimRef ? `${spec(o).claimRef.namespace}/${spec(o).claimRef.name}` : '')),
      ],
      strategy: {
        applyDefaults: d.defaultPersistentVolume,
        prepareForCreate(o) {
          o.status = { phase: 'Pending' };
        },
      },
    }),
    core({ kind: 'LimitRange', namespaced: true, shortNames: ['limits'], columns: [createdAt], noAgeColumn: true }),
    core({ kind: 'ResourceQuota', namespaced: true, shortNames: ['quota'], status: true, returnDeletedObject: true }),
    core({
      kind: 'Event',
      namespaced: true,
      fields: ownFields({
        ...Object.fromEntries(
          ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'].map((f) => [
            `involvedObject.${f}`,
            (o: KubeObject) => str((o.involvedObject as Obj | undefined)?.[f]),
          ]),
        ),
        reason: (o) => str(o.reason),
        reportingComponent: (o) => str(o.reportingComponent),
        source: (o) => str((o.source as Obj | undefined)?.component ?? o.reportingComponent),
        type: (o) => str(o.type),
      }),
      shortNames: ['ev'],
      columns: [col('Type', (o) => o.type ?? ''), col('Reason', (o) => o.reason ?? ''), col('Message', (o) => o.message ?? '')],
    }),
    core({
      kind: 'Node',
      namespaced: false,
      fields: ownFields({ 'spec.unschedulable': (o) => String(spec(o).unschedulable === true) }, { clusterScoped: true }),
      shortNames: ['no'],
      status: true,
      columns: [
        col('Status', (o) => (((status(o).conditions as Obj[] | undefined) ?? []).find((c) => c.type === 'Ready')?.status === 'True' ? 'Ready' : 'NotReady')),
        col('Roles', () => '<none>'),
        { ...col('Version', (o) => status(o).nodeInfo?.kubeletVersion ?? ''), afterAge: true },
        col('Internal-IP', (o) => ((status(o).addresses as Obj[] | undefined) ?? []).find((a) => a.type === 'InternalIP')?.address ?? '<none>', 'string', 1),
        col('External-IP', (o) => ((status(o).addresses as Obj[] | undefined) ?? []).find((a) => a.type === 'ExternalIP')?.address ?? '<none>', 'string', 1),
        col('OS-Image', (o) => status(o).nodeInfo?.osImage ?? '<unknown>', 'string', 1),
        col('Kernel-Version', (o) => status(o).nodeInfo?.kernelVersion ?? '<unknown>', 'string', 1),
        col('Container-Runtime', (o) => status(o).nodeInfo?.containerRuntimeVersion ?? '<unknown>', 'string', 1),
      ],
    }),
  ];
}

/** apps/v1. */
function appsKinds(): ResourceType[] {
  return [
    apps({
      kind: 'Deployment',
      namespaced: true,
      shortNames: ['deploy'],
      categories: ['all'],
      status: true,
      scale: true,
      generation: true,
      columns: [col('Ready', ready), col('Up-to-date', (o) => status(o).updatedReplicas ?? 0), col('Available', (o) => status(o).availableReplicas ?? 0), ...templateColumns(true)],
      strategy: { applyDefaults: d.defaultDeployment, validate: (o) => validateSelectorTemplate(o, 'deployment'), prepareForUpdate: keepSelector('Deployment', 'apps') },
    }),
    apps({
      kind: 'ReplicaSet',
      namespaced: true,
      shortNames: ['rs'],
      categories: ['all'],
      status: true,
      scale: true,
      generation: true,
      columns: [
        col('Desired', (o) => spec(o).replicas ?? 0, 'integer'),
        col('Current', (o) => status(o).replicas ?? 0, 'integer'),
        col('Ready', (o) => status(o).readyReplicas ?? 0, 'integer'),
        ...templateColumns(true),
      ],
      strategy: { applyDefaults: d.defaultReplicaSet, validate: (o) => validateSelectorTemplate(o, 'replicaset'), prepareForUpdate: keepSelector('ReplicaSet', 'apps') },
    }),
    apps({
      kind: 'StatefulSet',
      namespaced: true,
      shortNames: ['sts'],
      categories: ['all'],
      status: true,
      scale: true,
      generation: true,
      columns: [col('Ready', ready), ...templateColumns(false)],
      strategy: {
        applyDefaults: d.defaultStatefulSet,
        validate: (o) => validateSelectorTemplate(o, 'statefulset'),
        prepareForUpdate: keepSelector('StatefulSet', 'apps'),
        validateUpdate: validateStatefulSetUpdate,
      },
    }),
    apps({
      kind: 'DaemonSet',
      namespaced: true,
      shortNames: ['ds'],
      categories: ['all'],
      status: true,
      generation: true,
      columns: [
        col('Desired', (o) => status(o).desiredNumberScheduled ?? 0, 'integer'),
        col('Current', (o) => status(o).currentNumberScheduled ?? 0, 'integer'),
        col('Ready', (o) => status(o).numberReady ?? 0, 'integer'),
        col('Up-to-date', (o) => status(o).updatedNumberScheduled ?? 0, 'integer'),
        col('Available', (o) => status(o).numberAvailable ?? 0, 'integer'),
        col(
          'Node Selector',
          (o) =>
            Object.entries(((spec(o).template as Obj | undefined)?.spec?.nodeSelector as Record<string, string> | undefined) ?? {})
              .map(([k, v]) => `${k}=${v}`)
              .join(',') || '<none>',
        ),
        ...templateColumns(true),
      ],
      strategy: { applyDefaults: d.defaultDaemonSet, validate: (o) => validateSelectorTemplate(o, 'daemonset'), prepareForUpdate: keepSelector('DaemonSet', 'apps') },
    }),
    apps({ kind: 'ControllerRevision', namespaced: true, columns: [col('Revision', (o) => o.revision ?? 0, 'integer')] }),
  ];
}

/** batch/v1. */
function batchKinds(): ResourceType[] {
  return [
    define({
      group: 'batch',
      version: 'v1',
      kind: 'Job',
      namespaced: true,
      returnDeletedObject: true,
      fields: ownFields({ 'status.successful': (o) => String(status(o).succeeded ?? 0) }, { unsupported: (f) => `field label "${f}" not supported for Job` }),
      categories: ['all'],
      status: true,
      generation: true,
      columns: [
        col('Status', (o) => {
          const conds = (status(o).conditions as Obj[] | undefined) ?? [];
          const done = conds.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
          return done ? done.type : 'Running';
        }),
        col('Completions', (o) => `${status(o).succeeded ?? 0}/${spec(o).completions ?? 1}`),
        ...templateColumns(true),
      ],
      strategy: {
        applyDefaults: d.defaultJob,
        validateUpdate: validateJobUpdate,
        prepareForCreate(o) {
          // The API server generates the selector and the pod labels that tie pods to this Job's uid.
          const s = spec(o);
          if (s.manualSelector) return;
          const uid = o.metadata.uid as string | undefined;
          if (!uid) return;
          s.selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
          const template = (s.template ??= {}) as Obj;
          const meta = (template.metadata ??= {}) as Obj;
          meta.labels = {
            ...meta.labels,
            'batch.kubernetes.io/controller-uid': uid,
            'batch.kubernetes.io/job-name': o.metadata.name,
            'controller-uid': uid,
            'job-name': o.metadata.name,
          };
        },
        validate(o) {
          const errors = validateContainers(((spec(o).template as Obj | undefined)?.spec as Obj | undefined) ?? {}, 'spec.template.spec');
          const policy = ((spec(o).template as Obj | undefined)?.spec as Obj | undefined)?.restartPolicy;
          if (policy !== 'Never' && policy !== 'OnFailure') {
            errors.push({ type: 'FieldValueNotSupported', field: 'spec.template.spec.restartPolicy', value: policy ?? 'Always', detail: 'supported values: "OnFailure", "Never"' });
          }
          return errors;
        },
      },
    }),
    define({
      group: 'batch',
      version: 'v1',
      kind: 'CronJob',
      namespaced: true,
      shortNames: ['cj'],
      categories: ['all'],
      status: true,
      generation: true,
      columns: [
        col('Schedule', (o) => spec(o).schedule ?? ''),
        col('Suspend', (o) => spec(o).suspend ?? false, 'boolean'),
        col('Active', (o) => ((status(o).active as unknown[] | undefined) ?? []).length, 'integer'),
        col('Last Schedule', (o) => status(o).lastScheduleTime ?? '<none>'),
        ...templateColumns(true, (o) => (spec(o).jobTemplate as Obj | undefined)?.spec?.template as Obj | undefined),
      ],
      strategy: { applyDefaults: d.defaultCronJob },
    }),
  ];
}

/** RBAC, networking, autoscaling, policy, storage classes, priority classes and EndpointSlices. */
function rbacNetworkingAndPolicyKinds(): ResourceType[] {
  return [
    ...['Role', 'ClusterRole'].map((kind) =>
      define({ group: 'rbac.authorization.k8s.io', version: 'v1', kind, namespaced: kind === 'Role', columns: [createdAt], noAgeColumn: true }),
    ),
    ...['RoleBinding', 'ClusterRoleBinding'].map((kind) =>
      define({
        group: 'rbac.authorization.k8s.io',
        version: 'v1',
        kind,
        namespaced: kind === 'RoleBinding',
        columns: [
          col('Role', (o) => `${o.roleRef?.kind ?? ''}/${o.roleRef?.name ?? ''}`),
          ...(['User', 'Group', 'ServiceAccount'] as const).map((k) =>
            col(
              `${k === 'ServiceAccount' ? 'ServiceAccounts' : `${k}s`}`,
              (o) =>
                ((o.subjects as Obj[] | undefined) ?? [])
                  .filter((x) => x.kind === k)
                  .map((x) => (k === 'ServiceAccount' ? `${x.namespace ?? ''}/${x.name}` : x.name))
                  .join(', '),
              'string',
              1,
            ),
          ),
        ],
      }),
    ),
    define({
      group: 'networking.k8s.io',
      version: 'v1',
      kind: 'NetworkPolicy',
      plural: 'networkpolicies',
      namespaced: true,
      shortNames: ['netpol'],
      generation: true,
      strategy: { applyDefaults: d.defaultNetworkPolicy },
    }),
    define({ group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', plural: 'ingresses', namespaced: true, shortNames: ['ing'], status: true, generation: true }),
    define({
      group: 'autoscaling',
      version: 'v2',
      kind: 'HorizontalPodAutoscaler',
      namespaced: true,
      shortNames: ['hpa'],
      categories: ['all'],
      status: true,
      generation: true,
      columns: [
        col('Reference', (o) => `${spec(o).scaleTargetRef?.kind ?? ''}/${spec(o).scaleTargetRef?.name ?? ''}`),
        col('MinPods', (o) => spec(o).minReplicas ?? 1, 'integer'),
        col('MaxPods', (o) => spec(o).maxReplicas ?? 0, 'integer'),
      ],
      strategy: hpaStrategy,
    }),
    define({ group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', namespaced: true, shortNames: ['pdb'], status: true, generation: true }),
    define({
      group: 'storage.k8s.io',
      version: 'v1',
      kind: 'StorageClass',
      plural: 'storageclasses',
      returnDeletedObject: true,
      namespaced: false,
      shortNames: ['sc'],
      columns: [col('Provisioner', (o) => o.provisioner ?? ''), col('ReclaimPolicy', (o) => o.reclaimPolicy ?? ''), col('VolumeBindingMode', (o) => o.volumeBindingMode ?? '')],
      strategy: { applyDefaults: d.defaultStorageClass },
    }),
    define({
      group: 'scheduling.k8s.io',
      version: 'v1',
      kind: 'PriorityClass',
      plural: 'priorityclasses',
      namespaced: false,
      shortNames: ['pc'],
      columns: [col('Value', (o) => o.value ?? 0, 'integer'), col('Global-Default', (o) => String(o.globalDefault ?? false), 'boolean')],
      strategy: { applyDefaults: d.defaultPriorityClass },
    }),
    define({
      group: 'discovery.k8s.io',
      version: 'v1',
      kind: 'EndpointSlice',
      namespaced: true,
      columns: [col('AddressType', (o) => o.addressType ?? ''), col('Ports', (o) => ((o.ports as Obj[] | undefined) ?? []).map((p) => p.port).join(',') || '<unset>')],
    }),
  ];
}
