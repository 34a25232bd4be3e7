/**
 * Errors of the Helm seam: a missing executable (exit 2, naming VNFM_HELM
 * and PATH), and a failed helm command carrying Helm's own message.
 */
import { ExitCode, type ExitCodeValue, UsageError, VnfmError } from '../../errors.js';
import type { HelmFailureReason } from './contract.js';

/** No helm to run: VNFM_HELM unset or wrong, and none on PATH. */
export class HelmNotFoundError extends UsageError {}

/** A helm command exited non-zero; `stderr` is Helm's message (it never carries credentials: they are in files Helm reads). */
export class HelmError extends VnfmError {
  override readonly exitCode: ExitCodeValue;

  constructor(
    /** The subcommand, e.g. `install`, `get manifest`. */
    readonly command: string,
    readonly reason: HelmFailureReason,
    /** Helm's stderr, trimmed (`Error: ...`). */
    readonly stderr: string,
    message: string,
    details: { hint?: string; cause?: unknown } = {},
  ) {
    super(message, details);
    this.exitCode = EXIT_CODES[reason];
  }
}

const EXIT_CODES: Record<HelmFailureReason, ExitCodeValue> = {
  'not-found': ExitCode.notFound,
  'name-in-use': ExitCode.conflict,
  ownership: ExitCode.conflict,
  'in-progress': ExitCode.conflict,
  render: ExitCode.usage,
  unauthorized: ExitCode.vimCheck,
  other: ExitCode.failed,
};

/** Reads Helm's error text for what went wrong (Helm 3's messages, stable across 3.x). */
export function failureReason(stderr: string): HelmFailureReason {
  if (/cannot re-use a name that is still in use/i.test(stderr)) return 'name-in-use';
  if (/another operation \(install\/upgrade\/rollback\) is in progress/i.test(stderr)) return 'in-progress';
  if (/invalid ownership metadata|exists and cannot be imported into the current release/i.test(stderr)) return 'ownership';
  if (/release: not found|release not loaded|has no deployed releases|release ".*" not found|revision .* not found/i.test(stderr)) return 'not-found';
  if (/Unauthorized|You must be logged in to the server|asked for the client to provide credentials|x509:|tls: failed to verify/i.test(stderr)) return 'unauthorized';
  if (
    /parse error|template: |execution error|YAML parse error|chart metadata|Chart\.yaml file is missing|validation: chart|unable to build kubernetes objects|error converting YAML to JSON|path .* not found|no such file or directory/i.test(
      stderr,
    )
  )
    return 'render';
  return 'other';
}
