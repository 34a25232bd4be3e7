/**
 * Per-kind readiness chosen by the operator, for kinds whose status says
 * "ready" in a way the generic rule does not read (a Cluster API control
 * plane that reports `status.initialized`, an operator's own condition
 * name). The rules come from the request's `additionalParams.vnfm_readiness`:
 *
 * ```json
 * "vnfm_readiness": {
 *   "cluster.x-k8s.io/Cluster": { "jsonPath": ".status.phase", "values": ["Provisioned"] },
 *   "controlplane.cluster.x-k8s.io/KubeadmControlPlane": { "condition": "Available" },
 *   "infrastructure.cluster.x-k8s.io/OpenStackCluster": { "jsonPath": ".status.ready" },
 *   "example.com/Widget": { "present": true }
 * }
 * ```
 *
 * A key is `<group>/<Kind>` (`<Kind>` alone for the core group, or for that
 * kind in any group). A rule is exactly one of `condition` (that condition's
 * status is `True`, with its observedGeneration current), `jsonPath` (the
 * value there is one of `values`, default `[true]`; `failedValues` end the
 * wait with an error) or `present: true` (ready once it exists).
 */
import type { KubeObject } from './driver-contract.js';
import type { ReadinessOverrides, ReadinessRule } from '../../model/readiness.js';

export type { ReadinessOverrides, ReadinessRule } from '../../model/readiness.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): v is string | number | boolean => ['string', 'number', 'boolean'].includes(typeof v);

const KEY = /^(?:[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Z][A-Za-z0-9]*$/;
const PATH = /^\{?\.?[A-Za-z0-9_-]+(\[\d+\])?(\.[A-Za-z0-9_-]+(\[\d+\])?)*\}?$/;

/**
 * Checks the shape of `vnfm_readiness`; returns the problems as
 * `[field, problem]` pairs (empty when it is fine), the field relative to
 * `vnfm_readiness`.
 */
export function readinessOverrideProblems(value: unknown): Array<[string, string]> {
  if (!isObject(value)) return [['', 'must be an object: {"<group>/<Kind>": {"condition": "Ready"}}']];
  const problems: Array<[string, string]> = [];
  for (const [key, rule] of Object.entries(value)) {
    const field = `["${key}"]`;
    if (!KEY.test(key)) problems.push([field, `"${key}" is not <group>/<Kind> (for example cluster.x-k8s.io/Cluster) or <Kind>`]);
    if (!isObject(rule)) {
      problems.push([field, 'must be an object with one of condition, jsonPath or present']);
      continue;
    }
    const unknown = Object.keys(rule).filter((k) => !['condition', 'jsonPath', 'values', 'failedValues', 'present'].includes(k));
    if (unknown.length) problems.push([field, `has unknown field ${unknown.join(', ')} (known: condition, jsonPath, values, failedValues, present)`]);
    const kinds = ['condition', 'jsonPath', 'present'].filter((k) => rule[k] !== undefined);
    if (kinds.length !== 1) problems.push([field, `needs exactly one of condition, jsonPath or present (it has ${kinds.length ? kinds.join(' and ') : 'none'})`]);
    if (rule.condition !== undefined && (typeof rule.condition !== 'string' || rule.condition === ''))
      problems.push([`${field}.condition`, 'must be a condition type, e.g. "Ready"']);
    if (rule.present !== undefined && rule.present !== true) problems.push([`${field}.present`, 'must be true']);
    if (rule.jsonPath !== undefined && (typeof rule.jsonPath !== 'string' || !PATH.test(rule.jsonPath))) {
      problems.push([`${field}.jsonPath`, `${JSON.stringify(rule.jsonPath)} is not a field path such as ".status.phase" or ".status.conditions[0].status"`]);
    }
    for (const list of ['values', 'failedValues'] as const) {
      const v = rule[list];
      if (v === undefined) continue;
      if (rule.jsonPath === undefined) problems.push([`${field}.${list}`, 'applies to jsonPath only']);
      if (!Array.isArray(v) || v.length === 0 || !v.every(isScalar)) problems.push([`${field}.${list}`, 'must be a non-empty list of strings, numbers or booleans']);
    }
  }
  return problems;
}

/** The rule for an object, by `<group>/<Kind>`, else by `<Kind>`. */
export function ruleFor(overrides: ReadinessOverrides | undefined, obj: Pick<KubeObject, 'apiVersion' | 'kind'>): ReadinessRule | undefined {
  if (!overrides) return undefined;
  const slash = obj.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : obj.apiVersion.slice(0, slash);
  return (group ? overrides[`${group}/${obj.kind}`] : undefined) ?? overrides[obj.kind];
}

/** The value at a simple field path, undefined when any step is missing. */
export function valueAt(obj: unknown, path: string): unknown {
  const steps = path.replace(/^\{/, '').replace(/\}$/, '').replace(/^\./, '').split('.');
  let cur: unknown = obj;
  for (const step of steps) {
    const m = /^([^[]+)(?:\[(\d+)\])?$/.exec(step);
    if (!m || !isObject(cur)) return undefined;
    cur = cur[m[1]!];
    if (m[2] !== undefined) cur = Array.isArray(cur) ? cur[Number(m[2])] : undefined;
  }
  return cur;
}
