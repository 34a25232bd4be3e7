/**
 * Fault switches for tests: objects that never become ready, CRDs never
 * Established, pods that fail, API requests answered 500/503/429 (or cut
 * off), and watches dropped. Tests reach them through `sandbox.faults`; the controllers and
 * the HTTP server consult the rules here.
 */
import { parseLabelSelector } from './selectors.js';
import type { KubeObject } from './resources.js';

/** Which objects a fault applies to; every given field must match. */
export interface ObjectMatch {
  /** Kind, as in the object's `kind` (`Deployment`, `Pod`, `PersistentVolumeClaim`). */
  kind?: string;
  namespace?: string;
  name?: string;
  /** A label selector, in the `labelSelector=` syntax. */
  labelSelector?: string;
}

/** A rule for failing API requests. */
export interface RequestFault {
  /** The answer: an HTTP error status, or `reset` to drop the connection without one. */
  status: 500 | 503 | 429 | 'reset';
  /** How many matching requests fail (default: until removed). */
  count?: number;
  /** Only requests whose path starts with this string (or matches this pattern). */
  path?: string | RegExp;
  /** Only requests with this method (`GET`, `PATCH`...). */
  method?: string;
  /** For 429 and 503: the Retry-After seconds (default 1). */
  retryAfterSeconds?: number;
}

/** The in-process fault API of a running sandbox. */
export interface SandboxFaults {
  /**
   * Objects matching never become ready: pods stay Running but not Ready (a
   * workload matches through its pods' owners), PVCs stay Pending. Returns
   * a function that lifts the fault.
   */
  neverReady(match: ObjectMatch): () => void;
  /**
   * CustomResourceDefinitions matching (by name or labels) that are not yet
   * Established stay so: their names are accepted but the Established
   * condition never comes and their kinds are not served. Deleting one
   * still works. Returns a function that lifts the fault.
   */
  neverEstablished(match: ObjectMatch): () => void;
  /** Pods matching (directly or through their owners) go to phase Failed, now and when created. */
  failPods(match: ObjectMatch): () => void;
  /** API requests matching are answered with an error instead of being served. */
  failRequests(fault: RequestFault): () => void;
  /** Ends every open watch (`abrupt`: destroys the connection instead of ending the stream); returns how many. */
  dropWatches(opts?: { abrupt?: boolean }): number;
  /** Lifts every fault. */
  clear(): void;
}

/** An object with what a match needs to know about it. */
export interface Described {
  kind: string;
  object: KubeObject;
}

interface ObjectRule {
  match: ObjectMatch;
  matches: (d: Described) => boolean;
}

function compile(match: ObjectMatch): ObjectRule {
  const byLabel = parseLabelSelector(match.labelSelector ?? null);
  return {
    match,
    matches: ({ kind, object }) =>
      (match.kind === undefined || match.kind.toLowerCase() === kind.toLowerCase()) &&
      (match.namespace === undefined || match.namespace === object.metadata.namespace) &&
      (match.name === undefined || match.name === object.metadata.name) &&
      byLabel(object),
  };
}

/** The fault rules the sandbox's server and controllers consult. */
export class FaultRules {
  private readonly neverReadyRules = new Set<ObjectRule>();
  private readonly failPodRules = new Set<ObjectRule>();
  private readonly neverEstablishedRules = new Set<ObjectRule>();
  private readonly requestRules = new Set<RequestFault & { remaining: number }>();
  /** Called when a rule about objects changes, so controllers look again. */
  onChange: () => void = () => {};

  addNeverReady(match: ObjectMatch): () => void {
    const rule = compile(match);
    this.neverReadyRules.add(rule);
    this.onChange();
    return () => {
      this.neverReadyRules.delete(rule);
      this.onChange();
    };
  }

  addFailPods(match: ObjectMatch): () => void {
    const rule = compile(match);
    this.failPodRules.add(rule);
    this.onChange();
    return () => {
      this.failPodRules.delete(rule);
      this.onChange();
    };
  }

  addNeverEstablished(match: ObjectMatch): () => void {
    const rule = compile(match);
    this.neverEstablishedRules.add(rule);
    this.onChange();
    return () => {
      this.neverEstablishedRules.delete(rule);
      this.onChange();
    };
  }

  addRequestFault(fault: RequestFault): () => void {
    const rule = { ...fault, remaining: fault.count ?? Number.POSITIVE_INFINITY };
    this.requestRules.add(rule);
    return () => this.requestRules.delete(rule);
  }

  /** Whether any of `chain` (an object and its owners) is under a never-ready rule. */
  neverReady(chain: Described[]): boolean {
    return [...this.neverReadyRules].some((r) => chain.some((d) => r.matches(d)));
  }

  /** Whether a CustomResourceDefinition is held back from being Established. */
  neverEstablished(crd: KubeObject): boolean {
    return [...this.neverEstablishedRules].some((r) => r.matches({ kind: 'CustomResourceDefinition', object: crd }));
  }

  failPod(chain: Described[]): boolean {
    return [...this.failPodRules].some((r) => chain.some((d) => r.matches(d)));
  }

  /** The fault a request meets, if any (counting it against the rule). */
  requestFault(method: string, path: string): RequestFault | undefined {
    for (const rule of this.requestRules) {
      if (rule.method && rule.method.toUpperCase() !== method) continue;
      if (typeof rule.path === 'string' && !path.startsWith(rule.path)) continue;
      if (rule.path instanceof RegExp && !rule.path.test(path)) continue;
      rule.remaining -= 1;
      if (rule.remaining <= 0) this.requestRules.delete(rule);
      return rule;
    }
    return undefined;
  }

  clear(): void {
    this.neverReadyRules.clear();
    this.failPodRules.clear();
    this.neverEstablishedRules.clear();
    this.requestRules.clear();
    this.onChange();
  }
}
