/**
 * Which of a VNFD's hooks run vnfm's built-in management drivers and which
 * run the package's own scripts, and the refusal when the operator did not
 * allow those: what the use cases need before an operation starts, kept
 * apart from the drivers so it costs the main bundle nothing of theirs.
 */
import { posix } from 'node:path';
import { UsageError } from '../errors.js';
import type { HookImplementation, LcmHook } from '../model/vnfd.js';
import type { PackageScriptUse } from './index.js';

/** Built-in driver names, as the artifact file names them (`capi_credentials` → `capi-credentials`). */
export const BUILTIN_DRIVERS = ['capi-credentials', 'private-registry-mgmt', 'kubernetes-mgmt', 'container-update-mgmt-v2', 'container-update-mgmt'] as const;

/** The built-in driver a hook's artifact names, or undefined for a package script. */
export function builtinDriverName(impl: HookImplementation): string | undefined {
  if (!impl.artifactFile) return undefined;
  const base = posix.basename(impl.artifactFile.replace(/\\/g, '/'));
  const name = base
    .replace(/\.[^.]*$/, '')
    .replace(/_/g, '-')
    .toLowerCase();
  return (BUILTIN_DRIVERS as readonly string[]).includes(name) ? name : undefined;
}

/** The hooks of `hooks` that the VNFD implements with package scripts (not built-in drivers), in order. */
export function packageScriptsOf(hooks: readonly LcmHook[], implementations: Partial<Record<LcmHook, HookImplementation>>): PackageScriptUse[] {
  const out: PackageScriptUse[] = [];
  for (const hook of hooks) {
    const impl = implementations[hook];
    if (impl && !builtinDriverName(impl))
      out.push({ hook, artifact: impl.implementation, file: impl.artifactFile ?? '', ...(impl.artifactType ? { artifactType: impl.artifactType } : {}) });
  }
  return out;
}

const CONSENT_HINT = 'review the script, then run again with --allow-package-scripts';

function describeScripts(scripts: readonly PackageScriptUse[]): string {
  return scripts.map((s) => `hook ${s.hook} runs ${s.file} (artifact ${s.artifact})`).join(', ');
}

/** The operator did not allow the package scripts this operation would run. */
export function packageScriptRefusal(what: string, scripts: readonly PackageScriptUse[]): UsageError {
  return new UsageError(`${what}: package scripts were not allowed: ${describeScripts(scripts)}`, { hint: CONSENT_HINT });
}
