/**
 * The rest of the built-in kinds a real API server serves: core
 * ReplicationController and PodTemplate, IngressClass, RuntimeClass, the
 * CSI kinds, CertificateSigningRequest, the webhook configurations,
 * flowcontrol, events.k8s.io Events and APIService — stored and served by
 * the generic handlers with the defaults and checks clients notice. The
 * review kinds, answered and never stored, are in review-kinds.ts.
 */
import type { FieldError } from '../status.js';
import type { KubeObject, ResourceType, SubresourceType } from '../resources.js';
import { defaultPodSpec } from './defaults.js';
import { ALL_VERBS, ownFields, templateColumns } from './kind-def.js';
import { nameProblems } from '../validation.js';
import { SANDBOX_USER } from './review-kinds.js';

type Obj = Record<string, any>;

const STATUS: SubresourceType = { name: 'status', verbs: ['get', 'patch', 'update'] };

const spec = (o: Obj): Obj => (o.spec as Obj | undefined) ?? {};
const status = (o: Obj): Obj => (o.status as Obj | undefined) ?? {};
const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

interface Def {
  group: string;
  version: string;
  kind: string;
  plural?: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  status?: boolean;
  extraSubresources?: SubresourceType[];
}

function kind(def: Def, more: Partial<ResourceType> = {}): ResourceType {
  const type: ResourceType = {
    group: def.group,
    version: def.version,
    kind: def.kind,
    listKind: `${def.kind}List`,
    plural: def.plural ?? `${def.kind.toLowerCase()}s`,
    singular: def.kind.toLowerCase(),
    namespaced: def.namespaced,
    verbs: ALL_VERBS,
    nameRule: 'dns1123-subdomain',
    strategicMerge: true,
    ...more,
  };
  if (def.shortNames) type.shortNames = def.shortNames;
  if (def.categories) type.categories = def.categories;
  const subresources = [...(def.status ? [STATUS] : []), ...(def.extraSubresources ?? [])];
  if (subresources.length) type.subresources = subresources;
  return type;
}

function required(field: string): FieldError {
  return { type: 'FieldValueRequired', field, detail: '' };
}

const replicationControllers = kind(
  {
    group: '',
    version: 'v1',
    kind: 'ReplicationController',
    namespaced: true,
    shortNames: ['rc'],
    categories: ['all'],
    status: true,
    extraSubresources: [{ name: 'scale', verbs: ['get', 'patch', 'update'], responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' } }],
  },
  {
    generation: true,
    returnDeletedObject: true,
    scale: {
      specReplicasPath: 'spec.replicas',
      statusReplicasPath: 'status.replicas',
      labelSelector: (o) =>
        Object.entries((spec(o).selector as Record<string, string> | undefined) ?? {})
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([k, v]) => `${k}=${v}`)
          .join(','),
    },
    selectableFields: ownFields({ 'status.replicas': (o) => String(status(o).replicas ?? 0) }),
    columns: [
      { name: 'Desired', type: 'integer', description: 'Number of desired pods', priority: 0, cell: (o) => spec(o).replicas ?? 0 },
      { name: 'Current', type: 'integer', description: 'Number of actually running pods', priority: 0, cell: (o) => status(o).replicas ?? 0 },
      { name: 'Ready', type: 'integer', description: 'Number of ready pods', priority: 0, cell: (o) => status(o).readyReplicas ?? 0 },
      ...templateColumns(true),
    ],
    strategy: {
      applyDefaults(o) {
        const s = (o.spec ??= {}) as Obj;
        const template = s.template as Obj | undefined;
        const labels = template?.metadata?.labels as Record<string, string> | undefined;
        if (labels && (!s.selector || Object.keys(s.selector as object).length === 0)) s.selector = { ...labels };
        if (labels && !o.metadata.labels) o.metadata.labels = { ...labels };
        s.replicas ??= 1;
        s.minReadySeconds ??= 0;
        if (template) defaultPodSpec((template.spec ??= {}) as Obj);
      },
      prepareForCreate(o) {
        o.status = { replicas: 0 };
      },
      validate(o) {
        const s = spec(o);
        const selector = (s.selector as Record<string, string> | undefined) ?? {};
        const errors: FieldError[] = [];
        if (Object.keys(selector).length === 0) errors.push(required('spec.selector'));
        const labels = ((s.template as Obj | undefined)?.metadata?.labels as Record<string, string> | undefined) ?? {};
        if (s.template && Object.entries(selector).some(([k, v]) => labels[k] !== v)) {
          errors.push({ type: 'FieldValueInvalid', field: 'spec.template.metadata.labels', value: labels, detail: '`selector` does not match template `labels`' });
        }
        if (!s.template) errors.push(required('spec.template'));
        return errors;
      },
    },
  },
);

const podTemplates = kind(
  { group: '', version: 'v1', kind: 'PodTemplate', namespaced: true },
  {
    returnDeletedObject: true,
    strategy: {
      applyDefaults(o) {
        const template = (o.template ??= {}) as Obj;
        defaultPodSpec((template.spec ??= {}) as Obj);
      },
    },
  },
);

const ingressClasses = kind(
  { group: 'networking.k8s.io', version: 'v1', kind: 'IngressClass', plural: 'ingressclasses', namespaced: false },
  {
    columns: [
      { name: 'Controller', type: 'string', description: 'Controller that is responsible for handling this class', priority: 0, cell: (o) => spec(o).controller ?? '' },
      {
        name: 'Parameters',
        type: 'string',
        description: 'A reference to a resource with additional parameters',
        priority: 0,
        cell: (o) => (spec(o).parameters ? `${spec(o).parameters.kind}/${spec(o).parameters.name}` : '<none>'),
      },
    ],
    strategy: {
      validate(o) {
        const controller = spec(o).controller;
        if (typeof controller !== 'string' || controller === '') return [required('spec.controller')];
        return [];
      },
    },
  },
);

const runtimeClasses = kind(
  { group: 'node.k8s.io', version: 'v1', kind: 'RuntimeClass', plural: 'runtimeclasses', namespaced: false },
  {
    columns: [
      {
        name: 'Handler',
        type: 'string',
        description: 'Handler specifies the underlying runtime and configuration that the CRI implementation will use to handle pods of this class.',
        priority: 0,
        cell: (o) => o.handler ?? '',
      },
    ],
    strategy: {
      validate(o) {
        const handler = typeof o.handler === 'string' ? o.handler : '';
        return nameProblems('dns1123-label', handler).map((detail) => ({ type: 'FieldValueInvalid', field: 'handler', value: handler, detail }) as FieldError);
      },
    },
  },
);

const csiDrivers = kind(
  { group: 'storage.k8s.io', version: 'v1', kind: 'CSIDriver', namespaced: false },
  {
    returnDeletedObject: true,
    strategy: {
      applyDefaults(o) {
        const s = (o.spec ??= {}) as Obj;
        s.attachRequired ??= true;
        s.podInfoOnMount ??= false;
        s.volumeLifecycleModes ??= ['Persistent'];
        s.storageCapacity ??= false;
        s.fsGroupPolicy ??= 'ReadWriteOnceWithFSType';
        s.requiresRepublish ??= false;
      },
    },
  },
);

const csiNodes = kind(
  { group: 'storage.k8s.io', version: 'v1', kind: 'CSINode', namespaced: false },
  {
    returnDeletedObject: true,
    strategy: {
      validate(o) {
        return Array.isArray(spec(o).drivers) ? [] : [required('spec.drivers')];
      },
    },
  },
);

const volumeAttachments = kind(
  { group: 'storage.k8s.io', version: 'v1', kind: 'VolumeAttachment', namespaced: false, status: true },
  {
    returnDeletedObject: true,
    strategy: {
      validate(o) {
        const s = spec(o);
        const errors: FieldError[] = [];
        if (!s.attacher) errors.push(required('spec.attacher'));
        if (!s.nodeName) errors.push(required('spec.nodeName'));
        if (!s.source?.persistentVolumeName && !s.source?.inlineVolumeSpec)
          errors.push({ type: 'FieldValueRequired', field: 'spec.source', detail: 'must specify exactly one of persistentVolumeName and inlineVolumeSpec' });
        return errors;
      },
    },
  },
);

const csiStorageCapacities = kind({ group: 'storage.k8s.io', version: 'v1', kind: 'CSIStorageCapacity', plural: 'csistoragecapacities', namespaced: true });

const CSR_PEM = /^-----BEGIN CERTIFICATE REQUEST-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE REQUEST-----\s*$/;

const certificateSigningRequests = kind(
  {
    group: 'certificates.k8s.io',
    version: 'v1',
    kind: 'CertificateSigningRequest',
    namespaced: false,
    shortNames: ['csr'],
    status: true,
    extraSubresources: [{ name: 'approval', verbs: ['get', 'patch', 'update'] }],
  },
  {
    selectableFields: ownFields({ 'spec.signerName': (o) => str(spec(o).signerName) }, { clusterScoped: true }),
    columns: [
      { name: 'SignerName', type: 'string', description: 'Name of the signer', priority: 0, cell: (o) => spec(o).signerName ?? '' },
      { name: 'Requestor', type: 'string', description: 'Name of the requestor', priority: 0, cell: (o) => spec(o).username ?? '' },
      {
        name: 'Condition',
        type: 'string',
        description: 'Condition of the request',
        priority: 0,
        cell: (o) => ((status(o).conditions as Obj[] | undefined) ?? []).map((c) => c.type).join(',') || 'Pending',
      },
    ],
    strategy: {
      prepareForCreate(o) {
        const s = (o.spec ??= {}) as Obj;
        // The requesting user, as the API server records it: the sandbox's one token is its administrator.
        s.username = SANDBOX_USER.username;
        s.uid = SANDBOX_USER.uid;
        s.groups = [...SANDBOX_USER.groups];
        delete s.extra;
        delete o.status;
      },
      prepareForUpdate(o, old) {
        o.spec = old.spec;
      },
      applyDefaults(o) {
        const s = (o.spec ??= {}) as Obj;
        s.usages ??= ['digital signature', 'key encipherment'];
      },
      validate(o) {
        const s = spec(o);
        const errors: FieldError[] = [];
        const request = typeof s.request === 'string' ? Buffer.from(s.request, 'base64').toString('utf8') : '';
        if (!CSR_PEM.test(request)) errors.push({ type: 'FieldValueInvalid', field: 'spec.request', value: [], detail: 'PEM block type must be CERTIFICATE REQUEST' });
        if (!s.signerName) errors.push(required('spec.signerName'));
        return errors;
      },
    },
  },
);

const webhookKind = (kindName: string): ResourceType =>
  kind(
    { group: 'admissionregistration.k8s.io', version: 'v1', kind: kindName, namespaced: false, categories: ['api-extensions'] },
    {
      columns: [
        {
          name: 'Webhooks',
          type: 'integer',
          description: 'Webhooks indicates the number of webhooks in the configuration',
          priority: 0,
          cell: (o) => ((o.webhooks as unknown[] | undefined) ?? []).length,
        },
      ],
      strategy: {
        applyDefaults(o) {
          for (const w of (o.webhooks as Obj[] | undefined) ?? []) {
            w.failurePolicy ??= 'Fail';
            w.matchPolicy ??= 'Equivalent';
            w.namespaceSelector ??= {};
            w.objectSelector ??= {};
            w.timeoutSeconds ??= 10;
            if (kindName === 'MutatingWebhookConfiguration') w.reinvocationPolicy ??= 'Never';
            for (const r of (w.rules as Obj[] | undefined) ?? []) r.scope ??= '*';
            const svc = w.clientConfig?.service as Obj | undefined;
            if (svc) svc.port ??= 443;
          }
        },
        validate(o) {
          const errors: FieldError[] = [];
          ((o.webhooks as Obj[] | undefined) ?? []).forEach((w, i) => {
            if (!w.sideEffects) errors.push({ type: 'FieldValueRequired', field: `webhooks[${i}].sideEffects`, detail: 'must specify one of None, NoneOnDryRun' });
            if (!Array.isArray(w.admissionReviewVersions) || w.admissionReviewVersions.length === 0) {
              errors.push({ type: 'FieldValueRequired', field: `webhooks[${i}].admissionReviewVersions`, detail: 'must specify one of v1, v1beta1' });
            }
          });
          return errors;
        },
      },
    },
  );

function flowcontrol(version: string): ResourceType[] {
  return [
    kind(
      { group: 'flowcontrol.apiserver.k8s.io', version, kind: 'FlowSchema', namespaced: false, status: true },
      {
        generation: true,
        strategy: {
          applyDefaults(o) {
            const s = (o.spec ??= {}) as Obj;
            s.matchingPrecedence ??= 1000;
          },
          prepareForCreate(o) {
            delete o.status;
          },
          validate(o) {
            return spec(o).priorityLevelConfiguration?.name ? [] : [required('spec.priorityLevelConfiguration.name')];
          },
        },
      },
    ),
    kind(
      { group: 'flowcontrol.apiserver.k8s.io', version, kind: 'PriorityLevelConfiguration', namespaced: false, status: true },
      {
        generation: true,
        strategy: {
          applyDefaults(o) {
            const s = (o.spec ??= {}) as Obj;
            const limited = s.limited as Obj | undefined;
            if (limited) {
              limited.lendablePercent ??= 0;
              const response = (limited.limitResponse ??= { type: 'Reject' }) as Obj;
              if (response.type === 'Queue') {
                const q = (response.queuing ??= {}) as Obj;
                q.queues ??= 64;
                q.handSize ??= 8;
                q.queueLengthLimit ??= 50;
              }
            }
          },
          prepareForCreate(o) {
            delete o.status;
          },
          validate(o) {
            const type = spec(o).type;
            if (type !== 'Limited' && type !== 'Exempt')
              return [{ type: 'FieldValueNotSupported', field: 'spec.type', value: type ?? '', detail: 'supported values: "Exempt", "Limited"' }];
            return [];
          },
        },
      },
    ),
  ];
}

const eventsV1 = kind(
  { group: 'events.k8s.io', version: 'v1', kind: 'Event', namespaced: true, shortNames: ['ev'] },
  {
    validatedAs: { kind: 'Event', group: '' },
    selectableFields: ownFields({
      ...Object.fromEntries(
        ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'].map((f) => [
          `regarding.${f}`,
          (o: KubeObject) => str((o.regarding as Obj | undefined)?.[f]),
        ]),
      ),
      reason: (o) => str(o.reason),
      reportingController: (o) => str(o.reportingController),
      type: (o) => str(o.type),
    }),
    strategy: {
      validate(o) {
        // Checked as the core Event it is stored as: hence `involvedObject` in the field path.
        const errors: FieldError[] = [];
        const regarding = (o.regarding as Obj | undefined)?.namespace ?? '';
        const namespace = o.metadata.namespace ?? '';
        if (regarding !== namespace && !(regarding === '' && namespace === 'default')) {
          errors.push({ type: 'FieldValueInvalid', field: 'involvedObject.namespace', value: regarding, detail: 'does not match event.namespace' });
        }
        if (!o.eventTime) errors.push(required('eventTime'));
        if (o.type !== 'Normal' && o.type !== 'Warning') errors.push({ type: 'FieldValueInvalid', field: 'type', value: '', detail: `has invalid value: ${str(o.type)}` });
        return errors;
      },
    },
  },
);

const apiServices = kind(
  { group: 'apiregistration.k8s.io', version: 'v1', kind: 'APIService', namespaced: false, status: true, categories: ['api-extensions'] },
  {
    nameRule: 'path-segment',
    columns: [
      {
        name: 'Service',
        type: 'string',
        description: 'The reference to the service that hosts this API endpoint.',
        priority: 0,
        cell: (o) => (spec(o).service ? `${spec(o).service.namespace}/${spec(o).service.name}` : 'Local'),
      },
      {
        name: 'Available',
        type: 'string',
        description: 'Whether this service is available.',
        priority: 0,
        cell: (o) => {
          const c = ((status(o).conditions as Obj[] | undefined) ?? []).find((x) => x.type === 'Available');
          return c ? (c.status === 'True' ? 'True' : `${c.status} (${c.reason})`) : 'Unknown';
        },
      },
    ],
    strategy: {
      applyDefaults(o) {
        const svc = spec(o).service as Obj | undefined;
        if (svc) svc.port ??= 443;
      },
      validate(o) {
        const s = spec(o);
        const errors: FieldError[] = [];
        const expected = s.group ? `${s.version}.${s.group}` : `${s.version}.`;
        if (o.metadata.name !== expected) {
          errors.push({ type: 'FieldValueInvalid', field: 'metadata.name', value: o.metadata.name, detail: `must be ${expected}` });
        }
        if (!s.version) errors.push(required('spec.version'));
        if (typeof s.groupPriorityMinimum !== 'number' || s.groupPriorityMinimum <= 0 || s.groupPriorityMinimum > 20000) {
          errors.push({ type: 'FieldValueInvalid', field: 'spec.groupPriorityMinimum', value: s.groupPriorityMinimum ?? 0, detail: 'must be positive and less than 20000' });
        }
        if (typeof s.versionPriority !== 'number' || s.versionPriority <= 0 || s.versionPriority > 1000) {
          errors.push({ type: 'FieldValueInvalid', field: 'spec.versionPriority', value: s.versionPriority ?? 0, detail: 'must be positive and less than 1000' });
        }
        return errors;
      },
    },
  },
);

/** The stored kinds of this file. */
export function moreKinds(): ResourceType[] {
  return [
    replicationControllers,
    podTemplates,
    ingressClasses,
    runtimeClasses,
    csiDrivers,
    csiNodes,
    volumeAttachments,
    csiStorageCapacities,
    certificateSigningRequests,
    webhookKind('MutatingWebhookConfiguration'),
    webhookKind('ValidatingWebhookConfiguration'),
    ...flowcontrol('v1'),
    ...flowcontrol('v1beta3'),
    eventsV1,
    apiServices,
  ];
}
