/**
 * What the operation engine asks of the Kubernetes infra-driver. Inputs are
 * concrete Kubernetes objects and targets: the engine has already read the
 * VNFD, the request and the package.
 */
import type { DriverContext, ResourceRef, Vnfc } from '../driver.js';
import type { ReadinessOverrides } from './readiness-rules.js';
import type { DescribeInput, LiveObject } from './describe.js';

/** A Kubernetes object as read from a package's definition files. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [key: string]: unknown };
  [key: string]: unknown;
}

/** The label every object of a VNF instance carries; an object without our value is someone else's. */
export const INSTANCE_LABEL = 'vnfm/vnf-instance-id';

/** A VDU's workload (Deployment, StatefulSet, ReplicaSet, DaemonSet, Pod, or a custom resource with /scale). */
export interface VduTarget {
  vduId: string;
  resource: ResourceRef;
}

/** What every operation may add: the operator's readiness rules and where each object came from. */
export interface OperationExtras {
  /** Per-kind readiness from additionalParams.vnfm_readiness (readiness-rules.ts). */
  readiness?: ReadinessOverrides;
  /** The package file of each object, `<group>/<Kind>/<name>` → path, for messages. */
  sources?: Record<string, string>;
  /** The VDUs' workloads: checked at plan time to be scalable (a workload kind or one with /scale). */
  vdus?: VduTarget[];
}

export interface DeployInput extends OperationExtras {
  instanceId: string;
  /** Objects without a namespace of their own go here (namespaced kinds only). */
  namespace: string;
  objects: KubeObject[];
  /** Replicas to set, by VDU workload: `${kind}/${name}` → replicas (from the instantiation level). */
  replicas: Record<string, number>;
  /**
   * Create the namespaces the objects go to when the cluster lacks them (the
   * request's additionalParams.vnfm_create_namespace). They are not the
   * instance's: terminate leaves them, as Helm leaves a --create-namespace one.
   */
  createNamespace?: boolean;
}

/** What preflight checks: the objects an instantiate or a change of package would write (DeployInput and ChangePackageInput both fit). */
export type CheckInput = Pick<DeployInput, 'instanceId' | 'namespace' | 'objects' | 'replicas' | 'readiness' | 'sources' | 'vdus' | 'createNamespace'>;

export interface ScaleInput {
  resource: ResourceRef;
  readiness?: ReadinessOverrides;
  replicas: number;
}

export interface HealInput {
  instanceId: string;
  readiness?: ReadinessOverrides;
  /** The VNFCs to replace (their pods or Machines are deleted and replacements awaited). */
  vnfcs: Vnfc[];
  /** Specs of bare Pods as deployed, to recreate them: `${namespace}/${name}` → object. */
  barePods: Record<string, KubeObject>;
  /** The workloads are a Helm release's: owned by that release (Helm's annotation), not labelled with the instance. */
  release?: string;
}

export interface RemoveInput {
  instanceId: string;
  /** In creation order; removed in reverse. */
  resources: ResourceRef[];
  /** Graceful termination period for pods; 0 for FORCEFUL. */
  gracePeriodSeconds?: number;
}

export interface ChangePackageInput extends OperationExtras {
  instanceId: string;
  namespace: string;
  /** The new package's objects, applied with server-side apply (field manager "vnfm"). */
  objects: KubeObject[];
  /** What the instance has now; anything not in `objects` is deleted. */
  current: ResourceRef[];
  replicas: Record<string, number>;
}

/** What an adoption compares and takes over: the package's objects as another VNF manager (Tacker) created them. */
export interface AdoptInput {
  instanceId: string;
  /** Objects without a namespace of their own are in this one (namespaced kinds only). */
  namespace: string;
  /** The package's objects, as its definition files give them (their namespace set as the instance's). */
  objects: KubeObject[];
  /** The package file of each object, `<group>/<Kind>/<name>` → path, for messages. */
  sources?: Record<string, string>;
  /** The VDUs' workloads: their pods are labelled too, and their replicas read. */
  vdus: VduTarget[];
}

/** What an adoption found at the VIM, read only. */
export interface AdoptionFindings {
  /** Each way the cluster differs from the package (an object missing, another image, another owner); empty when it may be adopted. */
  differences: string[];
  /** The package's objects as the cluster scopes them, in the order an instantiate would have created them. */
  resources: ResourceRef[];
  /** Each VDU workload's spec.replicas now (VDU id → replicas); a bare Pod or DaemonSet counts its pods. */
  replicas: Record<string, number>;
}

/** Objects another tool wrote (the objects of a Helm release's manifest), for the driver to watch. */
export interface AwaitInput {
  /** In manifest order; an object of a namespaced kind without a namespace is in `namespace`. */
  resources: ResourceRef[];
  namespace: string;
  readiness?: ReadinessOverrides;
  /** Workloads whose pods must also settle: exactly their replicas, all ready, none terminating (after a scale or an upgrade). */
  vdus?: VduTarget[];
}

/**
 * The Kubernetes infra-driver. Every method waits by watching until the VIM
 * has reached what was asked (or ctx.signal aborts), records each step in
 * ctx.journal before taking it, and is safe to call again after a failure
 * (retry): objects already labelled with the instance id are updated, not
 * created twice.
 */
export interface KubernetesInfraDriver {
  /**
   * Preflight, run before the operation's occurrence is recorded: discovery
   * and the package checks deploy and changePackage make at plan time (kinds
   * neither served nor defined by a package CRD, versions a package CRD does
   * not serve, VDUs whose kind has no /scale), and that every namespace the
   * objects go to exists (or is created by the package, or `createNamespace`
   * is set) and is not being deleted, writing nothing. Throws a UsageError or
   * ValidationError (naming the object and its file) for a package problem,
   * a VimCheckError when the cluster cannot be asked or lacks a namespace,
   * and the signal's reason when it aborts.
   */
  check(input: CheckInput, signal?: AbortSignal): Promise<void>;
  /** Creates every object in dependency order, independent ones in parallel; returns them in creation order. */
  deploy(ctx: DriverContext, input: DeployInput): Promise<ResourceRef[]>;
  /** Sets replicas through the /scale subresource and waits for the workload to settle. */
  scale(ctx: DriverContext, input: ScaleInput): Promise<void>;
  heal(ctx: DriverContext, input: HealInput): Promise<void>;
  /** Deletes in reverse order with foreground propagation and waits until all are gone; 404 counts as deleted. */
  remove(ctx: DriverContext, input: RemoveInput): Promise<void>;
  changePackage(ctx: DriverContext, input: ChangePackageInput): Promise<ResourceRef[]>;
  /**
   * Watches objects written by another tool (Helm) until each is ready, with
   * the same readiness rules and progress as deploy, then the VDUs' pods and
   * Services' endpoints; writes nothing. Returns the objects with their
   * namespaces as the cluster scopes them.
   */
  awaitReady(ctx: DriverContext, input: AwaitInput): Promise<ResourceRef[]>;
  /** Watches until every object is gone (another tool deletes them); gone already counts. Writes nothing. */
  awaitGone(ctx: DriverContext, input: { resources: ResourceRef[] }): Promise<void>;
  /**
   * The current VNFCs of each VDU workload, Tacker's ids `<vduId>-<name>`:
   * pods of a workload, Cluster API Machines of a custom resource with /scale.
   */
  listVnfcs(ctx: DriverContext, targets: VduTarget[]): Promise<Vnfc[]>;
  /**
   * The recorded objects as they are now, each with what it owns, its
   * readiness, the last events of those not ready and its drift (describe.ts);
   * writes nothing. Optional: a driver without it cannot describe.
   */
  describe?(input: DescribeInput, signal?: AbortSignal): Promise<LiveObject[]>;
  /**
   * Adoption's check, before anything is recorded: reads each of the
   * package's objects where it should be and says how the cluster differs
   * from the package (missing, another container image, labelled for another
   * instance, being deleted). Writes nothing. Optional: a driver without it cannot adopt.
   */
  inspectAdoption?(input: AdoptInput, signal?: AbortSignal): Promise<AdoptionFindings>;
  /**
   * Takes the objects (and the VDUs' pods) over as the instance's: a
   * server-side apply, field manager vnfm, of the instance label alone, so no
   * spec changes and no pod restarts. Returns the objects in creation order.
   */
  adopt?(ctx: DriverContext, input: AdoptInput): Promise<ResourceRef[]>;
}
