/**
 * What the operation engine asks of the OpenStack infra-driver. A VNF is one
 * Heat stack, `vnf-<instance id>`; the engine has already read the package's
 * BaseHOT, the Heat environments and the VNFD, and built the `nfv` parameter.
 */
import type { LiveNode } from '../../model/live.js';
import type { DriverContext, ResourceRef, Vnfc } from '../driver.js';

/** The stack's name for an instance, as Tacker names it. */
export const stackNameOf = (instanceId: string): string => `vnf-${instanceId}`;

/** The `nfv` JSON parameter every Tacker-style BaseHOT takes. */
export interface NfvParameter {
  VDU: Record<string, { desired_capacity?: number; computeFlavourId?: string; vcImageId?: string; locationConstraints?: string; [key: string]: unknown }>;
  CP: Record<string, { network?: string; port?: string; fixed_ips?: Array<{ ip_address?: string; subnet?: string }>; [key: string]: unknown }>;
  [key: string]: unknown;
}

/** A stack's templates and environments, ready for Heat. */
export interface HeatTemplates {
  /** The package path of the top template (`BaseHOT/<flavour>/<name>.yaml`), named in Heat's errors. */
  templatePath: string;
  /** The top template as YAML text. */
  template: string;
  /** Nested templates (by file name, as the templates reference them), provider templates and environment files. */
  files: Record<string, string>;
  /** Keys of `files` that are environments, merged in this order. */
  environmentFiles: string[];
  /** Where each key of `files` came from (a package path or a local file), for messages. */
  sources: Record<string, string>;
}

export interface OpenStackDeployInput {
  instanceId: string;
  templates: HeatTemplates;
  nfv: NfvParameter;
}

export interface OpenStackScaleInput {
  instanceId: string;
  nfv: NfvParameter;
  /**
   * VDUs that lose members, and how many: the newest members of each are
   * marked unhealthy first, so Heat removes those and not the oldest.
   */
  remove: Record<string, number>;
  /** New environments to apply with the update; the stack's own are kept when absent. */
  environments?: Pick<HeatTemplates, 'files' | 'environmentFiles' | 'sources'>;
}

export interface OpenStackHealInput {
  instanceId: string;
  /** The VNFCs whose servers are rebuilt (marked unhealthy, then the stack updated). */
  vnfcs: Vnfc[];
  /** The whole stack deleted and created again (Tacker's `additionalParams.all: true`). */
  all: boolean;
  /** What to create the stack from again when `all`; also sent with the update otherwise. */
  templates: HeatTemplates;
  nfv: NfvParameter;
  cause?: string;
}

export interface OpenStackRemoveInput {
  instanceId: string;
  /** Seconds to leave the VNF before deleting its stack (GRACEFUL termination); 0 or absent for none. */
  gracePeriodSeconds?: number;
}

export interface OpenStackChangePackageInput {
  instanceId: string;
  templates: HeatTemplates;
  nfv: NfvParameter;
}

/** The servers to report as VNFCs: each VDU and the connection points whose addresses to record. */
export interface OpenStackVnfcQuery {
  instanceId: string;
  /** VDU id (the server resource's name in its template) → its connection point names (the port resources' names). */
  vdus: Record<string, string[]>;
}

/**
 * The OpenStack infra-driver. Every method waits, following the stack's
 * events, until Heat has finished (or ctx.signal aborts), records each step
 * in ctx.journal before taking it, and is safe to call again after a
 * failure: deploy updates a stack `vnf-<id>` that already exists instead of
 * creating a second one. A failure names Heat's `stack_status_reason` and
 * the failed resources.
 *
 * VNFC metadata (in `Vnfc.metadata`): `stack` ({name, id} of the stack the
 * server is in), `resourceName`, `addresses` (connection point → IPs, the
 * floating IP first when one is attached), `creationTime`.
 */
export interface OpenStackInfraDriver {
  /** Creates the stack (or updates the one a failed attempt left); returns it. */
  deploy(ctx: DriverContext, input: OpenStackDeployInput): Promise<ResourceRef[]>;
  /** Updates the `nfv` parameter (its desired_capacity values) with a PATCH. */
  scale(ctx: DriverContext, input: OpenStackScaleInput): Promise<void>;
  heal(ctx: DriverContext, input: OpenStackHealInput): Promise<void>;
  /** Deletes the stack and waits for DELETE_COMPLETE; a stack already gone counts as deleted. */
  remove(ctx: DriverContext, input: OpenStackRemoveInput): Promise<void>;
  /** Replaces the stack's templates and parameters (PUT) with the new package's. */
  changePackage(ctx: DriverContext, input: OpenStackChangePackageInput): Promise<ResourceRef[]>;
  /** One VNFC per server (`OS::Nova::Server` resources named after a VDU, at any depth). */
  listVnfcs(ctx: DriverContext, query: OpenStackVnfcQuery): Promise<Vnfc[]>;
  /**
   * The instance's stack and its resources as a tree (nested stacks under
   * the resource that made them; describe.ts), or undefined when there is no
   * stack; writes nothing. Optional: a driver without it cannot describe.
   */
  describe?(instanceId: string, signal?: AbortSignal): Promise<{ stack: { name: string; id: string; status: string; statusReason: string }; resources: LiveNode[] } | undefined>;
}
