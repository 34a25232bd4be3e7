/**
 * What the operation engine asks of the OpenStack infra-driver. A VNF is one
 * Heat stack, `vnf-<instance id>`; the engine has already read the package's
 * BaseHOT, the Heat environments and the VNFD, and built the `nfv` parameter.
 */
import type { Readable } from 'node:stream';
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

/**
 * A scaling group of the top template and the members it has to have when
 * the operation ends. A group sized by OS::Heat::ScalingPolicy signals
 * (desired_capacity written in the template) gets this size written into
 * every template sent for it; after the operation the driver reads each
 * group's member count from Heat and fails when it differs.
 */
export interface ScalingGroupSize {
  /** The OS::Heat::AutoScalingGroup resource's name. */
  group: string;
  members: number;
  /** The VDU whose VNFCs the members are, for messages. */
  vduId?: string;
}

/**
 * Tacker v1's scaling: the OS::Heat::ScalingPolicy `<aspect>_scale_out` or
 * `<aspect>_scale_in` signalled once per step, each signal waited for (its
 * group's resize) and its group's member count checked before the next.
 * A retry signals only the steps Heat has not taken yet.
 */
export interface ScalingPolicySignal {
  /** The policy resource signalled. */
  policy: string;
  /** The group it adjusts. */
  group: string;
  /** The VDU whose VNFCs the members are, for messages. */
  vduId?: string;
  /** The group's members before the first step, as recorded. */
  from: number;
  /** Its members after each step, in order. */
  steps: number[];
}

export interface OpenStackDeployInput {
  instanceId: string;
  templates: HeatTemplates;
  nfv: NfvParameter;
  /** The scaling groups' sizes (see ScalingGroupSize); none checked when absent. */
  groups?: ScalingGroupSize[];
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
  /**
   * Scale by signalling a scaling policy instead of updating the stack (no
   * update is sent unless `environments` are given).
   */
  signal?: ScalingPolicySignal;
  /**
   * The groups' sizes after the scale. Groups sized by signals that are not
   * named keep the size they have when the stack is updated.
   */
  groups?: ScalingGroupSize[];
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
  /** The scaling groups' sizes, kept through the update (or the new stack) and checked after. */
  groups?: ScalingGroupSize[];
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
  /** The new templates' scaling groups and their sizes (see ScalingGroupSize). */
  groups?: ScalingGroupSize[];
}

/**
 * A software image of the package that an instance's templates take from
 * the nfv parameter: uploaded to Glance once per instance (images.ts).
 */
export interface OpenStackPackageImage {
  /** The VNFD nodes (VDUs, virtual storages) whose image it is. */
  nodes: string[];
  /** sw_image_data.name: the Glance image's name. */
  name: string;
  diskFormat?: string;
  containerFormat?: string;
  /** sw_image_data.min_disk in GB and min_ram in MB, as Tacker converts them. */
  minDisk: number;
  minRam: number;
  /** The package member, for messages. */
  file: string;
  /** Its bytes. */
  size: number;
  /** The checksum the package was checked against at onboarding (`sha512`, `sha256`, `md5`…, hex in lower case), compared with the one Glance computes. */
  checksum?: { algorithm: string; hash: string };
  /** What the content is: an image the instance already has with the same key is used instead of a new upload (a retry, a new package with the same image). */
  key: string;
  /** The member's bytes, read from the stored package. */
  open(): Promise<Readable>;
}

/**
 * The instance's images in the VIM's Glance, each tagged with the instance
 * id (as Tacker v2 tags them) and carrying vnfm's `vnfm_image_key`; an image
 * is made for one instance and deleted with it.
 */
export interface OpenStackImageService {
  /** Whether the VIM's catalog has an image service (Glance). */
  available(signal: AbortSignal): Promise<boolean>;
  /**
   * Each image created private, its bytes streamed from the package, waited
   * for until active and its checksum compared with Glance's; an active
   * image of the instance with the same key is used again. Returns node →
   * image id.
   */
  upload(ctx: DriverContext, input: { instanceId: string; packageId: string; images: OpenStackPackageImage[] }): Promise<Record<string, string>>;
  /** Deletes every image vnfm uploaded for the instance; how many there were. None when the VIM has no Glance. */
  removeAll(ctx: DriverContext, instanceId: string): Promise<number>;
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
  /**
   * Updates the `nfv` parameter (its desired_capacity values) with a PATCH,
   * or signals a scaling policy once per step (`input.signal`). Any update
   * keeps the size of each group sized by signals (the one `groups` gives,
   * else the one it has).
   */
  scale(ctx: DriverContext, input: OpenStackScaleInput): Promise<void>;
  heal(ctx: DriverContext, input: OpenStackHealInput): Promise<void>;
  /** Deletes the stack and waits for DELETE_COMPLETE; a stack already gone counts as deleted. */
  remove(ctx: DriverContext, input: OpenStackRemoveInput): Promise<void>;
  /** Replaces the stack's templates and parameters (PUT) with the new package's. */
  changePackage(ctx: DriverContext, input: OpenStackChangePackageInput): Promise<ResourceRef[]>;
  /** One VNFC per server (`OS::Nova::Server` resources named after a VDU, at any depth). */
  listVnfcs(ctx: DriverContext, query: OpenStackVnfcQuery): Promise<Vnfc[]>;
  /** The package's software images in Glance. Optional: without it, the templates get each image by its name, which must exist in the VIM. */
  images?: OpenStackImageService;
  /**
   * The instance's stack and its resources as a tree (nested stacks under
   * the resource that made them; describe.ts), or undefined when there is no
   * stack; writes nothing. Optional: a driver without it cannot describe.
   */
  describe?(instanceId: string, signal?: AbortSignal): Promise<{ stack: { name: string; id: string; status: string; statusReason: string }; resources: LiveNode[] } | undefined>;
  /**
   * The console log of a server (Nova's os-getConsoleOutput): its last
   * `tailLines` lines, all when absent; writes nothing. Optional: a driver
   * without it cannot read console logs.
   */
  consoleLog?(serverId: string, tailLines: number | undefined, signal?: AbortSignal): Promise<string>;
  /**
   * Adoption: a stack another VNF manager made, by name or id, as Heat shows
   * it (its status and parameters), or undefined when there is none; writes
   * nothing. Optional: a driver without it cannot adopt.
   */
  findStack?(nameOrId: string, signal?: AbortSignal): Promise<{ name: string; id: string; status: string; statusReason: string; parameters: Record<string, unknown> } | undefined>;
}
