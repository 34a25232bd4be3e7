/**
 * The Kubernetes infra-driver: reaching a cluster with a VIM's credentials,
 * and running a CNF's objects on it (any kind the cluster serves, found
 * through discovery).
 */
export { checkKubernetesAccess, type KubeAccess, type KubeCheckResult, type KubeTransport } from './kube-api.js';
export { fetchOidcIdToken, type OidcPasswordGrant } from './oidc.js';
export { createKubernetesDriver, type KubernetesDriver, type KubernetesDriverOptions } from './driver.js';
export { KubeApiError, type RetryPolicy } from './client.js';
export * from './driver-contract.js';
export { readinessOverrideProblems, type ReadinessOverrides, type ReadinessRule } from './readiness-rules.js';
export { sourceKey } from './package-kinds.js';
