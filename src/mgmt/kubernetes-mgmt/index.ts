/**
 * The `kubernetes-mgmt` built-in driver: a Kubernetes cluster installed with
 * kubeadm on the VNF's VMs (driver.ts), its record and topology
 * (topology.ts), its parameters (params.ts), what it runs on a node
 * (cluster.ts) and the nodes' private registry connections
 * (registry-connections.ts).
 */
export { createKubernetesMgmtDriver } from './driver.js';
export { ADMIN_MANIFEST_PATH, type KubernetesMgmtRecord } from './topology.js';
