/**
 * The registry of built-in management drivers. A hook's artifact names its
 * driver by the file's base name (`Scripts/capi_credentials.py` →
 * `capi-credentials`), so a package written for Tacker, which runs the
 * script, carries the same hooks for vnfm, which runs its own driver. A
 * declared hook that names no built-in driver is a package script: run as a
 * subprocess (package-script.ts) once the operator consented, asked before
 * the operation starts.
 */
import { UsageError, ValidationError } from '../errors.js';
import type { SecretReader } from '../infra/kubernetes/secrets.js';
import type { LcmRequest, VimConnection } from '../model/lcm.js';
import type { Vim } from '../model/vim.js';
import type { HookImplementation, LcmHook } from '../model/vnfd.js';
import { createCapiCredentialsDriver } from './capi-credentials.js';
import { createContainerUpdateDriver } from './container-update.js';
import { createKubernetesMgmtDriver } from './kubernetes-mgmt/index.js';
import { createPrivateRegistryDriver } from './private-registry.js';
import type { HookContext, HookOutcome, ManagementDriver, PrepareInput } from './index.js';
import { builtinDriverName, packageScriptRefusal, packageScriptsOf } from './hook-scripts.js';
import { checkPackageScripts, runPackageScript } from './package-script.js';
import type { ScriptIsolation } from './script-isolation.js';
import { runUserDataClass } from './user-data-class.js';
import type { SealedValue } from './sealed.js';
import type { SendOptions } from './receiver.js';
import type { HostKeyStore, SshConnector, SshRetry } from './ssh/types.js';

export type { SealedValue } from './sealed.js';
export { BUILTIN_DRIVERS, builtinDriverName, packageScriptRefusal, packageScriptsOf } from './hook-scripts.js';

/** How the built-in drivers reach vnfm's own VIM store (the cli wires the VIM use cases in). */
export interface WorkloadVimRegistry {
  find(ref: string): Promise<Vim | undefined>;
  /** Registers a Kubernetes VIM from a kubeconfig, checking that its API server answers; secrets sealed. */
  register(input: { name: string; description: string; isDefault: boolean; kubeconfig: string; origin: string; extra: Record<string, string> }): Promise<Vim>;
  /** Replaces the credentials of a VIM this driver registered earlier (checked again). */
  update(id: string, input: { kubeconfig: string; origin: string; isDefault: boolean; extra: Record<string, string> }): Promise<Vim>;
  /** Names (or ids) of the VNF instances that run on the VIM. */
  usedBy(id: string): Promise<string[]>;
  remove(id: string): Promise<void>;
}

/** What the built-in drivers need from outside; supplied by the cli wiring. */
export interface ManagementServices {
  /** Reads Secrets on a VIM (the instance's, for Cluster API the management cluster). */
  secrets(vim: VimConnection): Promise<SecretReader>;
  /** Absent: `vnfm_register_vim` is refused. */
  vims?: WorkloadVimRegistry;
  seal(plain: string): Promise<SealedValue>;
  open(value: SealedValue): Promise<string>;
  /** Back-off of the credentials receiver; tests shorten it. */
  receiver?: Omit<SendOptions, 'signal' | 'onRetry'>;
  /** Connects to nodes over SSH (src/mgmt/ssh). */
  ssh?: SshConnector;
  /** Where SSH host keys are pinned, per server. */
  hostKeys?: HostKeyStore;
  /** SSH connection retry and timeouts; tests shorten them. */
  sshRetry?: Partial<SshRetry>;
  /** How many nodes are configured at once (default 10). */
  sshConcurrency?: number;
  /**
   * Whom package scripts run as and what they cannot see
   * (script-isolation.ts); throws for a setting that cannot work. Absent:
   * as vnfm's own user.
   */
  scriptIsolation?(): ScriptIsolation;
}

/** One built-in driver. */
export interface BuiltinDriver {
  name: string;
  /** The hooks it acts on; declared on other hooks it does nothing (with a notice). */
  hooks: readonly LcmHook[];
  prepare?(input: PrepareInput): Promise<LcmRequest>;
  runHook(ctx: HookContext): Promise<void | HookOutcome>;
}

export function createManagementDriver(services: ManagementServices): ManagementDriver {
  const drivers = new Map<string, BuiltinDriver>([
    ['capi-credentials', createCapiCredentialsDriver(services)],
    ['private-registry-mgmt', createPrivateRegistryDriver(services)],
    ['kubernetes-mgmt', createKubernetesMgmtDriver(services)],
    ['container-update-mgmt-v2', createContainerUpdateDriver('container-update-mgmt-v2')],
    ['container-update-mgmt', createContainerUpdateDriver('container-update-mgmt')],
  ]);
  const driverFor = (impl: HookImplementation): BuiltinDriver | undefined => {
    const name = builtinDriverName(impl);
    return name ? drivers.get(name) : undefined;
  };
  return {
    async prepare(input) {
      const scripts = packageScriptsOf(input.hooks, input.implementations);
      for (const s of scripts) {
        if (!s.file)
          throw new ValidationError(input.source, `hook ${s.hook}`, `artifact ${s.artifact} of the VNFD names no file`, {
            hint: 'give the artifact a file of the package, e.g. file: ../Scripts/configure.sh',
          });
      }
      checkPackageScripts(input.source, input.packageDir, scripts);
      if (scripts.length && !(await input.allowPackageScripts(scripts))) throw packageScriptRefusal(input.source, scripts);
      // A script user that cannot work is refused before the operation starts.
      if (scripts.length) services.scriptIsolation?.();
      const used = new Set<BuiltinDriver>();
      for (const hook of input.hooks) {
        const impl = input.implementations[hook];
        const driver = impl ? driverFor(impl) : undefined;
        if (driver) used.add(driver);
      }
      let request = input.request;
      for (const d of used) if (d.prepare) request = await d.prepare({ ...input, request });
      return request;
    },
    async runHook(ctx) {
      const impl = ctx.implementation;
      if (!impl) return;
      const driver = driverFor(impl);
      if (!driver) {
        if (!ctx.allowPackageScripts) throw packageScriptRefusal(`vnf instance ${ctx.vnfInstanceId}`, packageScriptsOf([ctx.hook], { [ctx.hook]: impl }));
        const isolation = services.scriptIsolation?.();
        return runPackageScript(ctx, impl, { open: services.open, ...(isolation ? { isolation } : {}) });
      }
      if (!driver.hooks.includes(ctx.hook)) {
        ctx.report(`${ctx.hook}: the ${driver.name} driver has nothing to do at this hook`);
        return;
      }
      return driver.runHook(ctx);
    },
    async runUserData(run) {
      const isolation = services.scriptIsolation?.();
      return runUserDataClass(run, isolation ? { isolation } : {});
    },
  };
}
