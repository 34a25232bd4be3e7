/**
 * Management drivers: the hooks (`instantiate_start`, `scale_end`, …) the
 * operation engine calls around the infra-driver, to configure what it
 * created. A declared hook runs a built-in driver chosen by its artifact's
 * file name (README.md); any other artifact is a package script, run as a
 * subprocess once the operator consented.
 */
import type { LcmOperation, LcmRequest, VimConnection, VnfInstance } from '../model/lcm.js';
import type { HookImplementation, LcmHook } from '../model/vnfd.js';
import type { UserDataClassRun } from './user-data-class.js';

/** What a hook is told about the operation it runs in. */
export interface HookContext {
  hook: LcmHook;
  vnfInstanceId: string;
  operation: string;
  /** The operation's request body, as recorded on the occurrence (secrets sealed by `prepare`). */
  request: unknown;
  /** The hook's implementation declared in the VNFD's flavour; absent when the VNFD declares none. */
  implementation?: HookImplementation;
  /**
   * The onboarded package's members, unpacked from its zip into a work
   * directory for the command (where scripts and artifacts are); '' for a
   * hook the flavour does not implement.
   */
  packageDir: string;
  /** When the operation moves the instance to another package (modify with a new vnfdId): that package's members (Tacker scripts get it as `new_csar_dir`). */
  newPackageDir?: string;
  signal: AbortSignal;
  report(message: string): void;
  /** The VIM the operation runs on, secrets opened. */
  vim: VimConnection;
  /** The instance as stored before the operation. */
  instance: VnfInstance;
  /** End hooks only: the instance as the infra-driver left it, stored when the operation completes. */
  result?: VnfInstance;
  /**
   * The operation's log (`vnfm op-log OP`): commands run on nodes, their exit
   * codes and output. Callers redact secrets before writing.
   */
  log(line: string): void;
  /** Scale: how many VNFCs of each VDU the infra-driver removes, the newest first (see `scaleInVictims`). */
  removing?: Record<string, number>;
  /** Server ids or addresses whose changed SSH host key the operator accepted (`--accept-host-key`). */
  acceptHostKeys: readonly string[];
  /** The operator allowed package scripts for this operation (`--allow-package-scripts` or the prompt). */
  allowPackageScripts: boolean;
}

/** What a hook hands back to the engine. */
export interface HookOutcome {
  /**
   * Facts to keep with the instance, merged into
   * `instantiatedVnfInfo.metadata.mgmt` when the operation completes (a key
   * set to null is removed). Drivers use their own name as the key.
   */
  record?: Record<string, unknown>;
  /**
   * SOL003 fields of the instance the hook changed (a Tacker v2 script's
   * `vnf_instance`), set on the instance when the operation completes.
   */
  instanceFields?: InstanceFields;
}

/** The fields of a VNF instance a hook may change, as Tacker lets a management script change them. */
export interface InstanceFields {
  vnfInstanceName?: string;
  vnfInstanceDescription?: string;
  metadata?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
  vnfConfigurableProperties?: Record<string, unknown>;
}

/** What `prepare` is shown before an operation starts. */
export interface PrepareInput {
  operation: LcmOperation;
  /** The operation's start and end hooks. */
  hooks: readonly LcmHook[];
  /** The hooks the VNFD's flavour declares. */
  implementations: Partial<Record<LcmHook, HookImplementation>>;
  /** The checked request, about to be recorded on the occurrence. */
  request: LcmRequest;
  /** Where the request came from, for messages (the request file). */
  source: string;
  /** The package's unpacked members (to check files a request names, e.g. image_path). */
  packageDir: string;
  /**
   * Asks the operator's consent to run the package scripts listed (the
   * `--allow-package-scripts` flag, or a prompt on a terminal). Resolves
   * false when neither gave it.
   */
  allowPackageScripts(scripts: readonly PackageScriptUse[]): Promise<boolean>;
}

/** A hook implemented by a script of the package, as shown to the operator before it runs. */
export interface PackageScriptUse {
  hook: LcmHook;
  artifact: string;
  /** The file, relative to the package root. */
  file: string;
  /** The artifact's TOSCA type: with a `*.py` file, `tosca.artifacts.Implementation.Python` selects Tacker's contract (tacker-script.ts). */
  artifactType?: string;
  /** Not a hook's script: the package's LCM user-data class of that name in `file`, which computes the Heat stack's parameters. */
  userDataClass?: string;
}

/**
 * Runs hooks. `runHook` is called for every hook of an operation; a driver
 * does nothing for hooks the VNFD does not declare. Throwing fails the
 * operation (FAILED_TEMP), like an infra-driver failure, and retry calls the
 * hook again: drivers are idempotent.
 */
export interface ManagementDriver {
  /**
   * Called before the operation starts (nothing has changed yet): throws for
   * a declared hook it cannot run or parameters it cannot use, and returns
   * the request to record, with the secrets it will need sealed.
   */
  prepare?(input: PrepareInput): Promise<LcmRequest>;
  runHook(ctx: HookContext): Promise<void | HookOutcome>;
  /**
   * Runs a package's own LCM user-data class (user-data-class.ts) under the
   * package scripts' isolation, once the operator consented; returns what it
   * returned (a dict). Absent: this vnfm runs none.
   */
  runUserData?(run: UserDataClassRun): Promise<Record<string, unknown>>;
}

export { noopManagementDriver } from './noop.js';
export {
  builtinDriverName,
  createManagementDriver,
  packageScriptsOf,
  packageScriptRefusal,
  BUILTIN_DRIVERS,
  type BuiltinDriver,
  type ManagementServices,
  type WorkloadVimRegistry,
  type SealedValue,
} from './builtin.js';
export { parseReceiver, sendCredentials, displayUrl, type CredentialsReceiver, type CredentialsPayload, type SendOptions } from './receiver.js';
export { parseWorkloadKubeconfig, type WorkloadCredentials } from './workload-credentials.js';
export { isSealed, openSealed, redactSecrets, sealedStrings, sealFields, type Open, type Seal } from './sealed.js';
export { runUserDataClass, USER_DATA_TIMEOUT_MS, type UserDataClassRun } from './user-data-class.js';
export { runPackageScript, type PackageScriptOptions, type PackageScriptPayload } from './package-script.js';
export { resolveScriptIsolation, describeIsolation, DEFAULT_SCRIPT_USER, SCRIPT_USER_ENV, type ScriptIsolation, type ScriptUser } from './script-isolation.js';
