/**
 * The sandbox's one error: a failure its user can act on (a state directory
 * it cannot use, a config file it cannot write), with a hint saying what to
 * do. A program embedding the sandbox turns it into its own error and exit
 * code (vnfm's `sandbox` and `demo` commands: a failure, exit 1).
 */
export interface SandboxErrorDetails {
  hint?: string;
  cause?: unknown;
}

export class SandboxError extends Error {
  readonly hint?: string;
  constructor(message: string, details: SandboxErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.hint = details.hint;
  }
}
