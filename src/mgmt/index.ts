/**
 * Management drivers: the hooks (`instantiate_start`, `scale_end`, …) the
 * operation engine calls around the infra-driver, to configure what it
 * created. For now only the no-op driver; the SSH-based drivers arrive later.
 */
import type { HookImplementation, LcmHook } from '../vnfd/index.js';

/** What a hook is told about the operation it runs in. */
export interface HookContext {
  hook: LcmHook;
  vnfInstanceId: string;
  operation: string;
  /** The operation's request body, as recorded on the occurrence. */
  request: unknown;
  /** The hook's implementation declared in the VNFD's flavour; absent when the VNFD declares none. */
  implementation?: HookImplementation;
  /** The onboarded package's unpacked members, where scripts and artifacts are. */
  packageDir: string;
  signal: AbortSignal;
  report(message: string): void;
}

/**
 * Runs a hook. Called for every hook of an operation; a driver does nothing
 * for hooks the VNFD does not declare. Throwing fails the operation
 * (FAILED_TEMP), like an infra-driver failure.
 */
export interface ManagementDriver {
  runHook(ctx: HookContext): Promise<void>;
}

export { noopManagementDriver } from './noop.js';
