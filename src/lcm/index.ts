/**
 * The lifecycle room: VNF instances, LCM operation occurrences and the
 * engine that runs INSTANTIATE, SCALE, HEAL, TERMINATE, CHANGE_VNFPKG and MODIFY_INFO
 * through the infra-driver, with locks, a journal, retry, rollback and fail.
 */
export type * from '../model/lcm.js';
export type { LcmDeps, LcmEvent, OperationOptions, OperationResult } from './engine.js';
export { isProcessAlive, holderOf, holderStatus, thisHost, type LockHolder, type HolderStatus, type HostFacts } from './lock-holder.js';
export {
  createVnf,
  listVnfs,
  readVnfs,
  readOpOccs,
  getVnf,
  resolveVnfs,
  deleteVnf,
  deleteVnfs,
  listOpOccs,
  getOpOcc,
  failOpOcc,
  failTarget,
  type FailOptions,
  type FailTarget,
  type CreateVnfOptions,
  type OpOccFilter,
} from './instances.js';
export { instantiateVnf, scaleVnf, healVnf, terminateVnf, changeVnfPackage } from './operations.js';
export { modifyVnfInfo, retryOpOcc, rollbackOpOcc } from './modify.js';
export { changeExtConn } from './ext-conn.js';
export { createAndInstantiateVnf, type CreateAndInstantiateOptions } from './create-instantiate.js';
export { levelReplicas, scaledReplicas, aspectDelta } from './replicas.js';
export { getWorkloadKubeconfig, type WorkloadKubeconfig, type WorkloadKubeconfigOptions } from './cluster-kubeconfig.js';
