/**
 * The registry of built-in management drivers. A hook's artifact names its
 * driver by the file's base name (`Scripts/capi_credentials.py` →
 * `capi-credentials`), so a package written for Tacker, which runs the
 * script, carries the same hooks for vnfm, which runs its own driver. A
 * declared hook that names no built-in driver is a package script: refused
 * before the operation starts, since vnfm cannot run those yet.
 */
import { posix } from 'node:path';
import { UsageError } from '../errors.js';
import type { SecretReader } from '../infra/kubernetes/secrets.js';
import type { LcmRequest, VimConnection } from '../lcm/model.js';
import type { Vim } from '../vim/model.js';
import type { HookImplementation, LcmHook } from '../vnfd/index.js';
import { createCapiCredentialsDriver } from './capi-credentials.js';
import { createKubernetesMgmtDriver } from './kubernetes-mgmt/index.js';
import { createPrivateRegistryDriver } from './private-registry.js';
import type { HookContext, HookOutcome, ManagementDriver, PrepareInput } from './index.js';
import type { SendOptions } from './receiver.js';
import type { HostKeyStore, SshConnector, SshRetry } from './ssh/types.js';

/** A secret kept in a request or on the instance, encrypted with vnfm's keyring (Fernet). */
export interface SealedValue {
  sealed: string;
  keyId: string;
}

/** How the built-in drivers reach vnfm's own VIM store (the cli wires the VIM use cases in). */
export interface WorkloadVimRegistry {
  find(ref: string): Vim | undefined;
  /** Registers a Kubernetes VIM from a kubeconfig, checking that its API server answers; secrets sealed. */
  register(input: { name: string; description: string; isDefault: boolean; kubeconfig: string; origin: string; extra: Record<string, string> }): Promise<Vim>;
  /** Replaces the credentials of a VIM this driver registered earlier (checked again). */
  update(id: string, input: { kubeconfig: string; origin: string; isDefault: boolean; extra: Record<string, string> }): Promise<Vim>;
  /** Names (or ids) of the VNF instances that run on the VIM. */
  usedBy(id: string): string[];
  remove(id: string): void;
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
}

/** One built-in driver. */
export interface BuiltinDriver {
  name: string;
  /** The hooks it acts on; declared on other hooks it does nothing (with a notice). */
  hooks: readonly LcmHook[];
  prepare?(input: PrepareInput): Promise<LcmRequest>;
  runHook(ctx: HookContext): Promise<void | HookOutcome>;
}

/** Built-in driver names, as the artifact file names them (`capi_credentials` → `capi-credentials`). */
export const BUILTIN_DRIVERS = ['capi-credentials', 'private-registry-mgmt', 'kubernetes-mgmt'] as const;

/** The built-in driver a hook's artifact names, or undefined for a package script. */
export function builtinDriverName(impl: HookImplementation): string | undefined {
  if (!impl.artifactFile) return undefined;
  const base = posix.basename(impl.artifactFile.replace(/\\/g, '/'));
  const name = base.replace(/\.[^.]*$/, '').replace(/_/g, '-').toLowerCase();
  return (BUILTIN_DRIVERS as readonly string[]).includes(name) ? name : undefined;
}

function packageScriptError(source: string, hook: LcmHook, impl: HookImplementation): UsageError {
  const file = impl.artifactFile ? `file ${impl.artifactFile}` : 'no file';
  return new UsageError(
    `${source}: the VNFD declares hook ${hook} implemented by artifact ${impl.implementation} (${file}), a package script; vnfm does not run package scripts yet`,
    {
      hint: `built-in drivers are chosen by the artifact's file name: ${BUILTIN_DRIVERS.map((n) => `Scripts/${n.replace(/-/g, '_')}.py (${n})`).join(', ')}; use one of them, or remove the hook from the VNFD ("${hook}: []")`,
    },
  );
}

export function createManagementDriver(services: ManagementServices): ManagementDriver {
  const drivers = new Map<string, BuiltinDriver>([
    ['capi-credentials', createCapiCredentialsDriver(services)],
    ['private-registry-mgmt', createPrivateRegistryDriver(services)],
    ['kubernetes-mgmt', createKubernetesMgmtDriver(services)],
  ]);
  const driverFor = (hook: LcmHook, impl: HookImplementation, source: string): BuiltinDriver => {
    const name = builtinDriverName(impl);
    const driver = name ? drivers.get(name) : undefined;
    if (!driver) throw packageScriptError(source, hook, impl);
    return driver;
  };
  return {
    async prepare(input) {
      const used = new Set<BuiltinDriver>();
      for (const hook of input.hooks) {
        const impl = input.implementations[hook];
        if (impl) used.add(driverFor(hook, impl, input.source));
      }
      let request = input.request;
      for (const d of used) if (d.prepare) request = await d.prepare({ ...input, request });
      return request;
    },
    async runHook(ctx) {
      if (!ctx.implementation) return;
      const driver = driverFor(ctx.hook, ctx.implementation, `vnf instance ${ctx.vnfInstanceId}`);
      if (!driver.hooks.includes(ctx.hook)) {
        ctx.report(`${ctx.hook}: the ${driver.name} driver has nothing to do at this hook`);
        return;
      }
      return driver.runHook(ctx);
    },
  };
}
