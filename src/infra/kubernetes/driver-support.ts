/**
 * What the Kubernetes driver's operations share outside its classes: the
 * plan of one object, its live state, delete options, and the small pure
 * helpers (review answers, StatefulSet claims, server-set fields, the first
 * failure of parallel writes).
 */
import { ConflictError, InterruptedError, NotFoundError, TimeoutError, UsageError, VimCheckError } from '../../errors.js';
import type { ResourceRef } from '../driver.js';
import { abortError, KubeApiError } from './client.js';
import { describeRef, type ApiResource } from './discovery.js';
import { type KubeObject } from './driver-contract.js';
import { isBuiltinGroup } from './package-kinds.js';
import { type KindFacts } from './readiness.js';

export const FIELD_MANAGER = 'vnfm';
export const APPLY_PATCH = 'application/apply-patch+yaml';
/** Kinds the next rank cannot do without: a namespace to live in, the definitions of custom kinds. */
export const GATE_KINDS = new Set(['Namespace', 'CustomResourceDefinition']);
/** Workloads whose pods the driver follows for scale and heal. */
export const POD_OWNERS = new Set(['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'ReplicationController', 'Job']);
export const MAX_WRITE_ATTEMPTS = 5;

export interface Planned {
  obj: KubeObject;
  ref: ResourceRef;
  /** The package file it came from, when the engine said. */
  file?: string;
  /**
   * A kind the cluster serves for create only (TokenReview, the access
   * reviews): posted, its answer read and reported, nothing kept, awaited
   * or deleted later, as Tacker does with them. It may have no name.
   */
  createOnly?: boolean;
}

/** A kind the cluster serves for create only, as it serves the review kinds. */
export function isCreateOnly(res: Pick<ApiResource, 'verbs'>): boolean {
  return res.verbs.includes('create') && !res.verbs.includes('get');
}

/** What the API server answered to a review, in a few words. */
export function reviewAnswer(answer: KubeObject | undefined): string {
  const status = (answer?.status ?? {}) as Record<string, unknown>;
  const reason = typeof status.reason === 'string' && status.reason ? `: ${status.reason}` : '';
  const error = typeof status.evaluationError === 'string' && status.evaluationError ? ` (${status.evaluationError})` : '';
  if (typeof status.allowed === 'boolean') return `answered: ${status.denied === true ? 'denied' : status.allowed ? 'allowed' : 'not allowed'}${reason}${error}`;
  if (typeof status.authenticated === 'boolean' || typeof status.error === 'string' || typeof status.user === 'object') {
    const user = (status.user as { username?: unknown } | undefined)?.username;
    return `answered: ${status.authenticated ? `authenticated${typeof user === 'string' ? ` as ${user}` : ''}` : `not authenticated${typeof status.error === 'string' && status.error ? ` (${status.error})` : ''}`}`;
  }
  if (Array.isArray(status.resourceRules)) return `answered: ${status.resourceRules.length} resource rules${status.incomplete === true ? ' (incomplete)' : ''}${error}`;
  const user = (status.userInfo as { username?: unknown } | undefined)?.username;
  if (typeof user === 'string') return `answered: user ${user}`;
  return 'answered';
}

export interface Live {
  ref: ResourceRef;
  res: ApiResource;
  obj: KubeObject;
}

/** The answers to DELETE with Foreground propagation and the instance's grace period. */
export function deleteOptions(gracePeriodSeconds: number | undefined, uid: string | undefined, propagationPolicy = 'Foreground'): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    propagationPolicy,
    ...(gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds }),
    ...(uid ? { preconditions: { uid } } : {}),
  };
}

export function objectKey(ref: Pick<ResourceRef, 'name' | 'namespace'>): string {
  return `${ref.namespace ?? ''}/${ref.name}`;
}

/**
 * What readiness needs to know of a kind: whether a controller reports a
 * status on it. A template (Cluster API's `…MachineTemplate`,
 * `KubeadmConfigTemplate`) is cloned by its users, not reconciled: whatever
 * status subresource its CRD declares, nothing reports it ready.
 */
/** An object of a Helm release carries Helm's release annotation (meta.helm.sh/release-name); another is not the release's to heal. */
export function checkRelease(obj: KubeObject, ref: ResourceRef, release: string): void {
  const annotations = (obj.metadata.annotations ?? {}) as Record<string, string>;
  if (annotations['meta.helm.sh/release-name'] !== release) {
    throw new ConflictError(
      `${describeRef(ref)} is not an object of Helm release ${release} (its meta.helm.sh/release-name annotation is ${annotations['meta.helm.sh/release-name'] ? `"${annotations['meta.helm.sh/release-name']}"` : 'missing'})`,
      {
        hint: "vnfm heals only the workloads of the instance's own release",
      },
    );
  }
}

export function kindFacts(res: ApiResource): KindFacts {
  return { reportsStatus: !isBuiltinGroup(res.group) && res.subresources.has('status') && !res.kind.endsWith('Template') };
}

/** Built-in workloads and bare pods have pods as VNFCs; any other scalable kind is a custom resource. */
export function ownsPods(res: ApiResource): boolean {
  return isBuiltinGroup(res.group) && (POD_OWNERS.has(res.kind) || res.kind === 'Pod');
}

/**
 * The abort's reason, made precise: a timeout or an interruption that came
 * while objects were still awaited names them (and what each last said),
 * with the reason as its cause.
 */
export function stoppedWaiting(signal: AbortSignal, awaited: Array<{ ref: ResourceRef; said?: string }>): Error {
  const reason = abortError(signal);
  if (awaited.length === 0 || !(reason instanceof TimeoutError || reason instanceof InterruptedError)) return reason;
  const shown = awaited.slice(0, 5).map((a) => `${describeRef(a.ref)}${a.said ? ` (${a.said})` : ''}`);
  const more = awaited.length > shown.length ? ` and ${awaited.length - shown.length} more` : '';
  const message = `${reason.message} while waiting for ${shown.join(', ')}${more}`;
  const details = { ...(reason.hint ? { hint: reason.hint } : {}), cause: reason };
  return reason instanceof TimeoutError ? new TimeoutError(message, details) : new InterruptedError(message, details);
}

/**
 * Preflight's verdict in the terms of a request check: what the package
 * asks for and the cluster lacks is bad input (exit 2); a cluster that does
 * not answer discovery is a VIM problem (exit 6). Nothing was recorded, so
 * neither hint mentions retry or rollback.
 */
export function preflightError(err: unknown, signal: AbortSignal, server: string): unknown {
  if (signal.aborted) return abortError(signal);
  if (err instanceof UsageError) return err;
  if (err instanceof NotFoundError) return new UsageError(err.message, { hint: err.hint, cause: err });
  if (err instanceof KubeApiError) {
    return new VimCheckError(`cannot check the package against the cluster at ${server}: ${err.message}`, {
      hint: err.status === 0 ? 'check that the API server is running and reachable (vnfm vim-show, vim-update), then run the command again' : err.hint,
      cause: err,
    });
  }
  return err;
}

/**
 * A 400/422 from the API server (or a 500 that states an error of the
 * object, such as a field its schema does not declare) names the field;
 * this adds the object and the package file it came from.
 */
/** The names of a StatefulSet's volumeClaimTemplates. */
export function claimTemplates(sts: KubeObject): string[] {
  return ((sts.spec as { volumeClaimTemplates?: Array<{ metadata?: { name?: unknown } }> } | undefined)?.volumeClaimTemplates ?? [])
    .map((t) => t.metadata?.name)
    .filter((n): n is string => typeof n === 'string' && n !== '');
}

/** Whether a claim is named `<template>-<statefulset>-<ordinal>` for one of the templates, as the StatefulSet controller names them. */
export function statefulSetClaim(claim: string, templates: readonly string[], statefulSet: string): boolean {
  return templates.some((t) => {
    const prefix = `${t}-${statefulSet}-`;
    return claim.startsWith(prefix) && /^\d+$/.test(claim.slice(prefix.length));
  });
}

export function rejectedFrom(err: unknown, p: Planned): never {
  if (err instanceof KubeApiError && (err.status === 422 || err.status === 400 || (err.status === 500 && !err.transient))) {
    // A review has no name; the file is what finds it.
    const named = typeof p.obj.metadata?.name === 'string';
    const what = named ? describeRef(p.ref) : p.ref.kind;
    const where = p.file && !err.message.includes(p.file) ? ` (${what}, from ${p.file})` : '';
    throw new KubeApiError(`${err.message}${where}`, err.status, err.reason, {
      hint: `fix ${named ? `${p.ref.kind} ${p.ref.name}` : `the ${p.ref.kind}`}${p.file ? ` in ${p.file}` : ''} as the API server says, rebuild and onboard the package, then roll back or retry the operation`,
      cause: err,
      transient: err.transient,
    });
  }
  throw err;
}

/** The object without explicit nulls (in maps; list items stay). */
export function dropNulls<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => dropNulls(v)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = dropNulls(v);
  return out as T;
}

/** For a replace: fields the server filled in and would refuse to see cleared. */
export function keepServerSetFields(desired: KubeObject, existing: KubeObject): KubeObject {
  const out = structuredClone(desired);
  if (desired.kind === 'Service') {
    const spec = (out.spec ??= {}) as Record<string, unknown>;
    const old = (existing.spec ?? {}) as Record<string, unknown>;
    for (const field of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy', 'healthCheckNodePort']) {
      if (spec[field] === undefined && old[field] !== undefined) spec[field] = old[field];
    }
  }
  return out;
}

/** Waits for all; on the first failure stops the others (through `abort`) and rethrows it. */
export async function firstFailure(promises: Promise<unknown>[], abort: AbortController): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    let left = promises.length;
    if (left === 0) resolve();
    for (const p of promises) {
      p.then(
        () => {
          if (--left === 0) resolve();
        },
        (err) => {
          abort.abort();
          reject(err);
        },
      );
    }
  });
}
