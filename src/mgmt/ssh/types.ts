/**
 * The SSH seam of the management drivers: how a driver reaches a VM (a
 * VNFC's address), runs commands on it and copies files to it. One
 * implementation (node-ssh over ssh2); the drivers see only these types.
 */
import type { Sleep } from '../../clock.js';

/** Where to connect and as whom. Secrets are plain here, in memory only. */
export interface SshTarget {
  host: string;
  port?: number;
  username: string;
  password?: string;
  /** PEM/OpenSSH private key text (from a file or the request, opened from its seal). */
  privateKey?: string;
  passphrase?: string;
  /**
   * What the host key is pinned to: the server's identity at the VIM (the
   * VNFC's resource id). A new server at an old address (heal) is a first
   * use; the same server with another key is a changed key.
   */
  serverId: string;
  /** For messages and logs: `VDU1 (10.0.0.5)`. */
  label: string;
}

/** A pinned host key. */
export interface PinnedHostKey {
  serverId: string;
  address: string;
  /** `SHA256:<base64>` as ssh-keygen -lf prints it. */
  fingerprint: string;
  keyType: string;
  pinnedAt: string;
}

/** Where host keys are pinned (vnfm's store). */
export interface HostKeyStore {
  get(serverId: string): Promise<PinnedHostKey | undefined>;
  pin(key: PinnedHostKey): Promise<void>;
  /** Forgets keys (the servers of a terminated instance). */
  forget(serverIds: readonly string[]): Promise<void>;
}

export interface SshRetry {
  /** Give up connecting after this long (a VM whose sshd never comes up). Default 300 000. */
  totalMs: number;
  /** First pause between attempts; doubles up to maxMs. Defaults 1 000 / 15 000. */
  minMs: number;
  maxMs: number;
}

export interface SshConnectOptions {
  hostKeys: HostKeyStore;
  /** Server ids or addresses whose changed host key the operator accepted (`--accept-host-key`). */
  acceptHostKeys?: readonly string[];
  retry?: Partial<SshRetry>;
  /** The pause between connection attempts (clock.ts's sleep by default); tests give their own. */
  sleep?: Sleep;
  /** Per attempt (TCP + handshake). Default 20 000. */
  readyTimeoutMs?: number;
  signal: AbortSignal;
  /** The operation's log: every command, its exit code and output, redacted. */
  log(line: string): void;
  /** Short progress lines (connecting, retrying…). */
  report?(message: string): void;
  /** Values never to appear in logs or errors (passwords, tokens); the target's secrets are added. */
  secrets?: readonly string[];
}

export interface ExecOptions {
  /** Run through `sudo` (with the target's password on stdin when sudo asks for one). */
  sudo?: boolean;
  /** Default 600 000; the command is killed and the call fails when it runs longer. */
  timeoutMs?: number;
  /** Text to the command's stdin. */
  stdin?: string;
  /** A non-zero exit returns instead of throwing. */
  allowFailure?: boolean;
  /** Environment for the command (e.g. http_proxy), exported before it runs; values redacted in logs. */
  env?: Record<string, string>;
  /**
   * Keeps the command's output out of the log and out of the error (it is a
   * file's content or a credential); the command line and exit code are still
   * logged.
   */
  quiet?: boolean;
}

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface SshSession {
  readonly target: SshTarget;
  /**
   * Runs a shell command line on the node (`sh -c`, under the node's `timeout`, which kills the
   * command's process group when it runs too long). Throws SshCommandError on a non-zero exit
   * unless allowFailure.
   */
  exec(command: string, opts?: ExecOptions): Promise<ExecResult>;
  /** Streams a local file to the node over SFTP (memory stays flat for a multi-GB tar). */
  upload(localPath: string, remotePath: string, opts?: { mode?: number }): Promise<void>;
  /** Writes content to a file on the node (through sudo when asked: written to a temp file, then installed). */
  writeFile(remotePath: string, content: string | Buffer, opts?: { sudo?: boolean; mode?: number }): Promise<void>;
  /** Reads a file on the node; undefined when it does not exist. */
  readFile(remotePath: string, opts?: { sudo?: boolean }): Promise<string | undefined>;
  close(): void;
}

/** Connects (with retries and back-off while the node's sshd is not up) and checks the host key. */
export type SshConnector = (target: SshTarget, opts: SshConnectOptions) => Promise<SshSession>;
