/**
 * What goes wrong between vnfm and a node, as typed errors: each names the
 * node (its label), what was attempted and what to do. Messages never carry
 * a password, passphrase or key; command lines and output are redacted
 * before they reach an error.
 */
import { ExitCode, VnfmError, type ErrorDetails, type ExitCodeValue } from '../../errors.js';

/** The node's sshd was not reached (or the attempt was interrupted). */
export class SshConnectError extends VnfmError {
  constructor(
    readonly node: string,
    message: string,
    details: ErrorDetails = {},
  ) {
    super(message, details);
  }
}

/** The node refused the user's password or key, or the key cannot be read. */
export class SshAuthError extends VnfmError {
  constructor(
    readonly node: string,
    readonly username: string,
    message: string,
    details: ErrorDetails = {},
  ) {
    super(message, details);
  }
}

/** The node presented another host key than the one pinned for its server. */
export class HostKeyChangedError extends VnfmError {
  constructor(
    readonly node: string,
    readonly serverId: string,
    readonly address: string,
    readonly pinnedFingerprint: string,
    readonly presentedFingerprint: string,
  ) {
    super(
      `${node}: the SSH host key of server ${serverId} at ${address} changed: pinned ${pinnedFingerprint}, now ${presentedFingerprint}; ` +
        'vnfm did not log in (someone may be intercepting the connection, or the server was rebuilt)',
      {
        hint: `if the server was rebuilt on purpose, accept its new key: add --accept-host-key ${serverId} to the command (or op-retry)`,
      },
    );
  }
}

/** A command failed on a node: non-zero exit, killed, timed out or interrupted. */
export class SshCommandError extends VnfmError {
  constructor(
    readonly node: string,
    /** The command line, redacted. */
    readonly command: string,
    /** The exit code; null when the command was killed or never finished. */
    readonly code: number | null,
    /** The last lines of its output (stdout and stderr as they came), redacted. */
    readonly output: string,
    readonly timedOut: boolean,
    problem: string,
    details: ErrorDetails = {},
  ) {
    super(`${node}: \`${command}\` ${problem}${output ? `; its last output:\n${output}` : ''}`, details);
  }
}

export interface NodeFailure {
  /** The node's label. */
  node: string;
  error: unknown;
}

/**
 * Some nodes of a parallel step failed (the others ran to their end). The
 * message lists each failed node with its error; the hint is the first
 * failure's hint; the exit code is the failures' common one.
 */
export class NodesFailedError extends VnfmError {
  override readonly exitCode: ExitCodeValue;
  constructor(
    readonly failures: readonly NodeFailure[],
    readonly total: number,
  ) {
    const lines = failures.map((f) => `- ${f.node}: ${messageOf(f.error)}`);
    const errors = failures.map((f) => f.error);
    const hint = errors.map((e) => (e instanceof VnfmError ? e.hint : undefined)).find((h) => h !== undefined);
    super(`${failures.length} of ${total} node${total === 1 ? '' : 's'} failed:\n${lines.join('\n')}`, {
      ...(hint ? { hint } : {}),
      cause: sharedCause(errors) ?? errors[0],
    });
    const codes = new Set(errors.map((e) => (e instanceof VnfmError ? e.exitCode : undefined)));
    const [only] = codes;
    this.exitCode = codes.size === 1 && only !== undefined ? only : ExitCode.failed;
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * When every node stopped for the same reason (the operation's signal), that
 * reason is the cause, so the engine recognises an interrupted or timed-out
 * operation and keeps this account of what each node was doing.
 */
function sharedCause(errors: readonly unknown[]): unknown {
  const causes = new Set(errors.map((e) => (e instanceof Error ? e.cause : undefined)));
  const [only] = causes;
  return causes.size === 1 ? only : undefined;
}
