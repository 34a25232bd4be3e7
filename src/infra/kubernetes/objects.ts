/**
 * Turning a package's manifests into what the driver sends: the namespace
 * rule, the instance label (on the object and on the pods it makes), the
 * replica counts from the instantiation level, and the refs the journal
 * records.
 */
import { ConflictError, UsageError } from '../../errors.js';
import type { ResourceRef } from '../driver.js';
import { INSTANCE_LABEL, type KubeObject } from './driver-contract.js';
import { describeRef } from './discovery.js';

export function refOf(obj: KubeObject): ResourceRef {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: obj.metadata.name,
    ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
  };
}

export function refKey(ref: ResourceRef): string {
  const group = ref.apiVersion.includes('/') ? ref.apiVersion.slice(0, ref.apiVersion.indexOf('/')) : '';
  return `${group}/${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function labelTemplate(template: unknown, instanceId: string): void {
  if (!isRecord(template)) return;
  const meta = isRecord(template.metadata) ? template.metadata : (template.metadata = {});
  meta.labels = { ...(isRecord(meta.labels) ? meta.labels : {}), [INSTANCE_LABEL]: instanceId };
}

/**
 * The built-in kinds whose pod template vnfm labels, by `<group>/<Kind>`,
 * and where that template is. A custom resource's `spec.template` is not a
 * pod template: its kind's schema decides whether it has metadata at all
 * (Cluster API's OpenStackMachineTemplate has none, and a server-side
 * apply of an undeclared field is refused).
 */
const POD_TEMPLATES: Record<string, 'spec.template' | 'spec.jobTemplate.spec.template'> = {
  'apps/Deployment': 'spec.template',
  'apps/StatefulSet': 'spec.template',
  'apps/DaemonSet': 'spec.template',
  'apps/ReplicaSet': 'spec.template',
  '/ReplicationController': 'spec.template',
  'batch/Job': 'spec.template',
  'batch/CronJob': 'spec.jobTemplate.spec.template',
};

/** Where vnfm puts the instance label besides the object's own metadata: a built-in kind's pod template, or none. */
export function podTemplatePath(obj: Pick<KubeObject, 'apiVersion' | 'kind'>): string | undefined {
  const slash = obj.apiVersion.indexOf('/');
  return POD_TEMPLATES[`${slash < 0 ? '' : obj.apiVersion.slice(0, slash)}/${obj.kind}`];
}

export interface PrepareInput {
  instanceId: string;
  namespace: string;
  replicas: Record<string, number>;
}

export interface PrepareOptions {
  /** The kind is a custom resource whose schema declares `spec.template.metadata.labels` (a MachineDeployment): label it too. */
  templateLabels?: boolean;
}

/**
 * The object as the driver creates it. Namespaced kinds without a namespace
 * get the instance's; cluster-scoped kinds lose any namespace the manifest
 * gave (the API server ignores it too). Server-owned metadata is dropped so
 * a recorded object can be sent again.
 */
export function prepareObject(obj: KubeObject, namespaced: boolean, input: PrepareInput, opts: PrepareOptions = {}): KubeObject {
  const out = structuredClone(obj);
  const meta = out.metadata;
  if (namespaced) meta.namespace = meta.namespace || input.namespace;
  else delete meta.namespace;
  for (const serverOwned of ['uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields', 'deletionTimestamp', 'selfLink']) {
    delete meta[serverOwned];
  }
  delete out.status;
  meta.labels = { ...(meta.labels ?? {}), [INSTANCE_LABEL]: input.instanceId };
  if (isRecord(out.spec)) {
    // Pods carry the label too, so they can be traced to the instance; a custom resource's template only where its schema has the field.
    const path = podTemplatePath(out) ?? (opts.templateLabels ? 'spec.template' : undefined);
    if (path === 'spec.template') labelTemplate(out.spec.template, input.instanceId);
    const jobTemplate = out.spec.jobTemplate;
    if (path === 'spec.jobTemplate.spec.template' && isRecord(jobTemplate) && isRecord(jobTemplate.spec)) labelTemplate(jobTemplate.spec.template, input.instanceId);
    const replicas = input.replicas[`${out.kind}/${meta.name}`];
    if (replicas !== undefined) out.spec.replicas = replicas;
  }
  return out;
}

/** Refuses two manifests that name the same object. */
export function checkDuplicates(objects: readonly KubeObject[]): void {
  const seen = new Set<string>();
  for (const obj of objects) {
    const key = refKey(refOf(obj));
    if (seen.has(key)) {
      throw new UsageError(`${describeRef(refOf(obj))} is defined twice in the package's manifests`, {
        hint: 'remove one of them from lcm-kubernetes-def-files',
      });
    }
    seen.add(key);
  }
}

/** An object already in the cluster is ours only if it carries our instance label. */
export function checkOwnership(existing: KubeObject, ref: ResourceRef, instanceId: string): void {
  const owner = existing.metadata.labels?.[INSTANCE_LABEL];
  if (owner === instanceId) return;
  throw new ConflictError(
    `${describeRef(ref)} already exists and belongs to someone else (${owner ? `it is labelled for VNF instance ${owner}` : `it has no ${INSTANCE_LABEL} label`}); vnfm does not take over objects it did not create`,
    { hint: 'delete or rename that object, or instantiate into another namespace (additionalParams.namespace)' },
  );
}

/** A LabelSelector (matchLabels + matchExpressions) in the query syntax. */
export function selectorString(selector: unknown): string | undefined {
  if (!isRecord(selector)) return undefined;
  const terms: string[] = [];
  if (isRecord(selector.matchLabels)) for (const [k, v] of Object.entries(selector.matchLabels)) terms.push(`${k}=${String(v)}`);
  if (Array.isArray(selector.matchExpressions)) {
    for (const e of selector.matchExpressions as Array<{ key: string; operator: string; values?: string[] }>) {
      const values = (e.values ?? []).join(',');
      if (e.operator === 'In') terms.push(`${e.key} in (${values})`);
      else if (e.operator === 'NotIn') terms.push(`${e.key} notin (${values})`);
      else if (e.operator === 'Exists') terms.push(e.key);
      else if (e.operator === 'DoesNotExist') terms.push(`!${e.key}`);
    }
  }
  return terms.join(',');
}

/** True when `obj` is controlled by one of `uids` (its controller ownerReference). */
export function controlledBy(obj: KubeObject, uids: ReadonlySet<string>): boolean {
  const refs = (obj.metadata.ownerReferences ?? []) as Array<{ uid?: string; controller?: boolean }>;
  return refs.some((r) => r.controller !== false && r.uid !== undefined && uids.has(r.uid));
}
