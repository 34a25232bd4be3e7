/**
 * Typed errors shared by every room. Each carries the exit code the program
 * ends with and, where one exists, a hint that tells the user what to do.
 * Only `cli/main.ts` turns them into text and an exit status.
 */

/** Documented exit codes (README, "Exit codes"). */
export const ExitCode = {
  ok: 0,
  failed: 1,
  usage: 2,
  notFound: 3,
  conflict: 4,
  secretKey: 5,
  vimCheck: 6,
  timeout: 124,
  interrupted: 130,
  terminated: 143,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export interface ErrorDetails {
  hint?: string;
  cause?: unknown;
}

export class VnfmError extends Error {
  readonly exitCode: ExitCodeValue = ExitCode.failed;
  readonly hint?: string;
  constructor(message: string, details: ErrorDetails = {}) {
    // Values are clipped where they are echoed; this bounds whatever a message still carries.
    super(clip(message, MAX_MESSAGE_CHARS), details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.hint = details.hint === undefined ? undefined : clip(details.hint, MAX_MESSAGE_CHARS);
  }
}

/** Longest value echoed in a message: an input's 10 MB field is shown by its start. */
export const MAX_ECHOED_CHARS = 200;
/** Longest message or hint an error carries. */
export const MAX_MESSAGE_CHARS = 2000;

/** `value`, or its first `max` characters and `… (N more characters)`. */
export function clip(value: string, max = MAX_ECHOED_CHARS): string {
  return value.length <= max ? value : `${value.slice(0, max)}… (${value.length - max} more characters)`;
}

/** A value as JSON for a message (`"web"`, `42`, `{"a":1}`), clipped. */
export function echo(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  return clip(text ?? String(value));
}

/** Wrong flags, arguments or input files: nothing was changed. */
export class UsageError extends VnfmError {
  override readonly exitCode = ExitCode.usage;
}

/**
 * An input file failed validation. The message names the file and the field;
 * the hint says how to fix it.
 */
export class ValidationError extends UsageError {
  constructor(
    readonly file: string,
    readonly field: string | undefined,
    problem: string,
    details: ErrorDetails = {},
  ) {
    super(`${file}${field ? `: ${field}` : ''}: ${problem}`, details);
  }
}

export class NotFoundError extends VnfmError {
  override readonly exitCode = ExitCode.notFound;
}

export class ConflictError extends VnfmError {
  override readonly exitCode = ExitCode.conflict;
}

/** The master key is missing, malformed or not the one the store was encrypted with. */
export class SecretKeyError extends VnfmError {
  override readonly exitCode = ExitCode.secretKey;
}

/** A VIM did not answer, or rejected the credentials, during a reachability check. */
export class VimCheckError extends VnfmError {
  override readonly exitCode = ExitCode.vimCheck;
}

/** A VIM answered with a TLS certificate that the CA given (or the system's trusted CAs) does not verify. */
export class TlsVerifyError extends VimCheckError {}

/** The shared store's database (VNFM_DATABASE_URL) did not answer, refused the login or failed TLS verification: nothing was changed. */
export class StoreUnreachableError extends VnfmError {
  override readonly exitCode = ExitCode.vimCheck;
}

export class TimeoutError extends VnfmError {
  override readonly exitCode = ExitCode.timeout;
}

/** Ctrl-C (SIGINT). */
export class InterruptedError extends VnfmError {
  override readonly exitCode: ExitCodeValue = ExitCode.interrupted;
}

/**
 * A question on the terminal was answered with Ctrl-C: the command stopped
 * before changing anything. Exit code 130, as for any Ctrl-C.
 */
export class CancelledError extends InterruptedError {
  constructor(message = 'cancelled, nothing changed') {
    super(message);
  }
}

/** SIGTERM: stopped as by Ctrl-C (an InterruptedError to everything that checks), with its own exit code. */
export class TerminatedError extends InterruptedError {
  override readonly exitCode: ExitCodeValue = ExitCode.terminated;
}
