/**
 * The Kubernetes infra-driver: reaching a cluster with a VIM's credentials,
 * and running a CNF's objects on it (any kind the cluster serves, found
 * through discovery).
 */
// The access check and the driver speak to the API server over kube-wire.ts (plain HTTPS).
export type { KubeAccess, KubeCheckResult } from './kube-api.js';
export type { KubeTransport } from './kube-wire.js';
export { fetchOidcIdToken, type OidcPasswordGrant } from './oidc.js';
export { createKubernetesDriver, type KubernetesDriver, type KubernetesDriverOptions } from './driver.js';
export { KubeApiError, type RetryPolicy } from './client.js';
export * from './driver-contract.js';
export { readinessOverrideProblems, type ReadinessOverrides, type ReadinessRule } from './readiness-rules.js';
export { sourceKey } from './package-kinds.js';
