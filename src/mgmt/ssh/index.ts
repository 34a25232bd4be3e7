/**
 * SSH to the nodes a management driver configures: connect (with retries
 * while a new VM boots, host keys pinned per server), run commands, copy
 * files, several nodes at once. Importing this module does not load the SSH
 * library: `connectSsh` loads it on the first connection, so commands that
 * never reach a node do not pay for it.
 */
import type { SshConnector } from './types.js';

export type * from './types.js';
export { DEFAULT_READY_TIMEOUT_MS, DEFAULT_SSH_RETRY, nextRetryDelay, retryDelay, retrySchedule, sshRetryOf } from './backoff.js';
export { HostKeyChangedError, NodesFailedError, SshAuthError, SshCommandError, SshConnectError, type NodeFailure } from './errors.js';
export { hostKeyFingerprint, hostKeyType } from './host-key.js';
export { forEachNode } from './parallel.js';
export { createRedactor } from './redact.js';
export { shellQuote } from './quote.js';

/**
 * Connects to a node as `target` says, retrying with back-off while its sshd
 * is not up (refused, unreachable, timed out, reset), and checks its host key
 * against the one pinned for `target.serverId` (pinning it on first use).
 * Throws SshAuthError (refused login, at once), HostKeyChangedError,
 * SshConnectError (gave up, or interrupted: then its cause is the signal's
 * reason).
 */
export const connectSsh: SshConnector = async (target, opts) => {
  const { connectNow } = await import('./client.js');
  return connectNow(target, opts);
};
