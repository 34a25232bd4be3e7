/**
 * OpenAPI schemas of the built-in kinds small enough to describe whole:
 * ConfigMap, Secret and ServiceAccount, and the ObjectMeta every kind
 * shares. Each names every field of the kind with its type, and each list
 * its merge key, patch strategy and list type, as the API's Go types
 * declare them: kubectl reads a served schema for `explain` and, finding
 * one, takes the merge keys of its strategic merge patches from it alone,
 * so a kind is described whole or not at all (openapi.ts serves none for
 * the others, and kubectl falls back on the merge keys compiled into it).
 */

const str = (description: string, format?: string): object => ({ type: 'string', description, ...(format ? { format } : {}) });
const bool = (description: string): object => ({ type: 'boolean', description });
const stringMap = (description: string, format?: string): object => ({
  type: 'object',
  description,
  additionalProperties: format ? { type: 'string', format } : { type: 'string', default: '' },
});

const ownerReference = {
  type: 'object',
  description: 'An object this one depends on: it is deleted with its owners, or keeps them (blockOwnerDeletion) while it exists.',
  required: ['apiVersion', 'kind', 'name', 'uid'],
  properties: {
    apiVersion: str('API version of the owner.'),
    blockOwnerDeletion: bool('Whether a foreground deletion of the owner waits for this object to be gone.'),
    controller: bool('Whether the owner is the managing controller of this object.'),
    kind: str('Kind of the owner.'),
    name: str('Name of the owner.'),
    uid: str('UID of the owner.'),
  },
  'x-kubernetes-map-type': 'atomic',
};

const managedFieldsEntry = {
  type: 'object',
  description: 'The fields one manager owns, for one operation and API version.',
  properties: {
    apiVersion: str('API version of the fields, as the manager wrote them.'),
    fieldsType: str('Format of fieldsV1: always FieldsV1.'),
    fieldsV1: { type: 'object', description: 'The set of owned fields.' },
    manager: str('Name of the manager.'),
    operation: str('Apply or Update.'),
    subresource: str('The subresource the fields were written through, if any.'),
    time: str('When the manager last changed its fields.', 'date-time'),
  },
};

/** `io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`, every field. */
export const OBJECT_META_SCHEMA = {
  description: 'ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.',
  type: 'object',
  properties: {
    annotations: stringMap('Arbitrary metadata, not queryable, set by tools and users.'),
    creationTimestamp: str('When the server created the object.', 'date-time'),
    deletionGracePeriodSeconds: { type: 'integer', format: 'int64', description: 'Seconds the object has left to stop gracefully once deletionTimestamp is set.' },
    deletionTimestamp: str('When the object will be deleted; set by the server on a graceful delete.', 'date-time'),
    finalizers: {
      type: 'array',
      description: 'Must be empty before the object is deleted from the registry.',
      items: { type: 'string', default: '' },
      'x-kubernetes-list-type': 'set',
      'x-kubernetes-patch-strategy': 'merge',
    },
    generateName: str('A prefix from which the server generates a unique name when name is not given.'),
    generation: { type: 'integer', format: 'int64', description: 'A sequence number of the desired state, set by the server.' },
    labels: stringMap('Keys and values that organise and select objects.'),
    managedFields: { type: 'array', description: 'Which manager owns which fields (server-side apply).', items: managedFieldsEntry },
    name: str('Name must be unique within a namespace.'),
    namespace: str('Namespace defines the space within which each name must be unique.'),
    ownerReferences: {
      type: 'array',
      description: 'List of objects depended by this object.',
      items: ownerReference,
      'x-kubernetes-list-map-keys': ['uid'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'uid',
      'x-kubernetes-patch-strategy': 'merge',
    },
    resourceVersion: str('An opaque value that represents the internal version of this object.'),
    selfLink: str('Deprecated: not set by the server.'),
    uid: str('UID is the unique in time and space value for this object.'),
  },
};

const objectReference = {
  type: 'object',
  description: 'A reference to an object.',
  properties: {
    apiVersion: str('API version of the referent.'),
    fieldPath: str('A field of the referent, when the reference is to a part of it.'),
    kind: str('Kind of the referent.'),
    name: str('Name of the referent.'),
    namespace: str('Namespace of the referent.'),
    resourceVersion: str('Version of the referent this reference was made to.'),
    uid: str('UID of the referent.'),
  },
  'x-kubernetes-map-type': 'atomic',
};

const localObjectReference = {
  type: 'object',
  description: 'A reference to an object in the same namespace.',
  properties: { name: str('Name of the referent.') },
  'x-kubernetes-map-type': 'atomic',
};

/** The schema of each kind described here, keyed `group/version/Kind` (the core group empty). */
export const BUILTIN_SCHEMAS: Record<string, object> = {
  '/v1/ConfigMap': {
    type: 'object',
    description: 'ConfigMap holds configuration data for pods to consume.',
    properties: {
      binaryData: stringMap('Binary values (base64 in JSON), keyed as data is; no key may be in both.', 'byte'),
      data: stringMap('UTF-8 values; no key may also be in binaryData.'),
      immutable: bool('When true, data and binaryData can no longer change.'),
    },
  },
  '/v1/Secret': {
    type: 'object',
    description: 'Secret holds secret data of a certain type.',
    properties: {
      data: stringMap('The secret values (base64 in JSON).', 'byte'),
      immutable: bool('When true, data can no longer change.'),
      stringData: stringMap('Write-only values in plain text, merged into data by the server.'),
      type: str('Used to facilitate programmatic handling of secret data (Opaque by default).'),
    },
  },
  '/v1/ServiceAccount': {
    type: 'object',
    description: 'ServiceAccount binds together a name for pods to run as, the secrets they use and the image pull secrets.',
    properties: {
      automountServiceAccountToken: bool("Whether pods running as this account get its API token mounted (a pod's own setting wins)."),
      imagePullSecrets: { type: 'array', description: 'Secrets pods running as this account pull their images with.', items: localObjectReference },
      secrets: {
        type: 'array',
        description: 'Secrets pods running as this account may use.',
        items: objectReference,
        'x-kubernetes-patch-merge-key': 'name',
        'x-kubernetes-patch-strategy': 'merge',
      },
    },
  },
};
