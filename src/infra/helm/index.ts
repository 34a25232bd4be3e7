/**
 * The Helm seam: the Helm 3 CLI (`helm` from VNFM_HELM or PATH) bound to a
 * Kubernetes VIM, and offline chart checks. The one place that runs helm.
 */
export * from './contract.js';
export { createHelmChartTool, createHelmClient, type HelmSpawnObserver } from './client.js';
export { HelmError, HelmNotFoundError } from './errors.js';
export { findHelm } from './executable.js';
