/**
 * The Kubernetes infra-driver. For now: reaching a cluster with a VIM's
 * credentials.
 */
export { checkKubernetesAccess, type KubeAccess, type KubeCheckResult } from './kube-api.js';
export { fetchOidcIdToken, type OidcPasswordGrant } from './oidc.js';
