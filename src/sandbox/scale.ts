/**
 * The `scale` subresource: an autoscaling/v1 Scale read from, and written
 * to, the replica fields the kind names (`ResourceType.scale`).
 */
import type { ObjectApi } from './objects.js';
import type { ResourceRequest } from './request-info.js';
import type { KubeObject, ResourceType } from './resources.js';
import { badRequest, invalid, notFound } from './status.js';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function getPath(obj: unknown, path: string): unknown {
  let node = obj;
  for (const p of path.split('.')) node = isObject(node) ? node[p] : undefined;
  return node;
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = obj;
  for (const p of parts.slice(0, -1)) {
    if (!isObject(node[p])) node[p] = {};
    node = node[p] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]!] = value;
}

/** The kinds whose scale handler names a missing object as `<plural>/scale` in a group of its own when it is read. */
const SCALE_NOT_FOUND_GROUP: Record<string, string> = {
  'apps/deployments': 'apps',
  'apps/replicasets': 'apps',
  '/replicationcontrollers': 'autoscaling',
};

/**
 * The object behind a `/scale` request. The scale handlers of
 * Deployments, ReplicaSets and ReplicationControllers name a missing one
 * as their own resource when asked for it (`deployments/scale.apps`,
 * `replicationcontrollers/scale.autoscaling`); an update of it, and the
 * other kinds, name the object itself.
 */
export function scaledObject(api: ObjectApi, type: ResourceType, req: ResourceRequest): KubeObject {
  const obj = api.find(type, req.namespace, req.name!);
  if (obj) return obj;
  const scaleGroup = SCALE_NOT_FOUND_GROUP[`${type.group}/${type.plural}`];
  if (req.verb === 'get' && scaleGroup !== undefined) throw notFound({ group: scaleGroup, resource: `${type.plural}/scale`, name: req.name! });
  throw notFound(api.target(type, req.name!));
}

/** The autoscaling/v1 Scale of an object whose kind has a scale subresource. */
export function scaleOf(type: ResourceType, obj: KubeObject): KubeObject {
  const spec = type.scale!;
  const selector = typeof spec.labelSelector === 'function' ? spec.labelSelector(obj) : spec.labelSelector ? getPath(obj, spec.labelSelector) : undefined;
  const status: Record<string, unknown> = { replicas: Number(getPath(obj, spec.statusReplicasPath) ?? 0) };
  if (typeof selector === 'string' && selector) status.selector = selector;
  const meta: Record<string, unknown> = {
    name: obj.metadata.name,
    namespace: obj.metadata.namespace,
    uid: obj.metadata.uid,
    resourceVersion: obj.metadata.resourceVersion,
    creationTimestamp: obj.metadata.creationTimestamp,
  };
  if (!type.namespaced) delete meta.namespace;
  // ScaleSpec.replicas is omitempty: zero replicas are an empty spec.
  const replicas = Number(getPath(obj, spec.specReplicasPath) ?? 0);
  return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: meta, spec: replicas ? { replicas } : {}, status } as unknown as KubeObject;
}

/** PUT or PATCH of `/scale`: the new replica count written to the object; answers its Scale. */
export function writeScale(api: ObjectApi, type: ResourceType, req: ResourceRequest, body: unknown, dryRun: boolean, manager: string): KubeObject {
  if (!isObject(body)) throw badRequest('the body of the request was not a JSON or YAML object');
  if (body.kind !== undefined && body.kind !== 'Scale') throw badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (Scale)`);
  const meta = (isObject(body.metadata) ? body.metadata : {}) as Record<string, unknown>;
  if (meta.name !== undefined && meta.name !== req.name) {
    throw badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${req.name})`);
  }
  // An absent (omitempty) replicas field is zero.
  const replicas = (body.spec as Record<string, unknown> | undefined)?.replicas ?? 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas)) {
    throw badRequest(`json: cannot unmarshal ${typeof replicas === 'number' ? `number ${replicas}` : typeof replicas} into Go struct field ScaleSpec.spec.replicas of type int32`);
  }
  if (replicas < 0) {
    throw invalid('Scale', 'autoscaling', req.name!, [
      { type: 'FieldValueInvalid', field: 'spec.replicas', goValue: String(replicas), detail: 'must be greater than or equal to 0' },
    ]);
  }
  const live = scaledObject(api, type, req);
  if (typeof meta.resourceVersion === 'string' && meta.resourceVersion) live.metadata.resourceVersion = meta.resourceVersion;
  setPath(live, type.scale!.specReplicasPath, replicas);
  const updated = api.update(type, live, { dryRun, manager, subresource: 'scale' });
  return scaleOf(type, updated);
}
