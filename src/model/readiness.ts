/**
 * Per-kind readiness rules an operator gives in a request
 * (`additionalParams.vnfm_readiness`); infra/kubernetes/readiness-rules.ts
 * reads and applies them.
 */

/** How one kind says it is ready; exactly one of condition, jsonPath or present. */
export interface ReadinessRule {
  /** A `status.conditions[]` type whose status must be `True`. */
  condition?: string;
  /** A path into the object: `.status.phase`, `status.ready`, `{.status.conditions[0].status}`. */
  jsonPath?: string;
  /** Values at `jsonPath` that mean ready (default `[true]`). */
  values?: Array<string | number | boolean>;
  /** Values at `jsonPath` that mean it never will be (the operation fails instead of waiting). */
  failedValues?: Array<string | number | boolean>;
  /** Ready as soon as the object exists. */
  present?: true;
}

/** `<group>/<Kind>` or `<Kind>` → rule. */
export type ReadinessOverrides = Record<string, ReadinessRule>;
