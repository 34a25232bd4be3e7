/**
 * The VNFD room: the TOSCA/SOL001 descriptor of a package as a typed model,
 * every reference in it checked, and the lint of a CNF's Kubernetes manifests.
 */
export type {
  AffinityRule,
  ConnectionPoint,
  Flavour,
  HookImplementation,
  InstantiationLevel,
  LcmHook,
  ScalingAspect,
  SwImage,
  Vdu,
  VduProfile,
  VirtualCompute,
  VirtualLink,
  VirtualStorage,
  Vnfd,
  VnfdImport,
} from '../model/vnfd.js';
export { LCM_HOOKS } from '../model/vnfd.js';
export { loadVnfd, MAX_DEFINITION_FILES, MAX_IMPORT_DEPTH, type LoadVnfdResult } from './load.js';
export {
  lintKubernetesDefinitions,
  lintRenderedChart,
  findRemovedApi,
  CREATE_ONLY_KINDS,
  REMOVED_APIS,
  WORKLOAD_KINDS,
  type RemovedApi,
  type RenderedReach,
} from './kubernetes-lint.js';
export { CLUSTER_SCOPED_KINDS, reachBeyond, reachHint, type Reach, type ReachObject } from './kubernetes-reach.js';
export { SOL001_VERSION, isSol001TypeFile } from './sol001-types.js';
export { aspectDelta, outsideProfile, vduInstancesAt, type VduInstances } from './vdu-instances.js';
