/**
 * The one module that loads node-ssh (and with it ssh2): it connects to a
 * node, retrying with back-off while the node's sshd is not up yet, checks the
 * node's host key against the pinned one, and hands out a session. index.ts
 * imports it only when a driver connects.
 */
import { NodeSSH, type Config } from 'node-ssh';
import type { ErrorDetails } from '../../errors.js';
import { DEFAULT_READY_TIMEOUT_MS, nextRetryDelay, sshRetryOf } from './backoff.js';
import { SshAuthError, SshConnectError } from './errors.js';
import { hostKeyChangedError, hostKeyFingerprint, hostKeyType, judgeHostKey, recordHostKey, type HostKeyVerdict, type PresentedHostKey } from './host-key.js';
import { createSessionRedactor, sessionSecrets } from './redact.js';
import { formatMs, NodeSshSession } from './session.js';
import type { SshConnectOptions, SshSession, SshTarget } from './types.js';
import { sleep } from '../../clock.js';

/** Socket errors of a node that is booting, or whose network is not there yet. */
const NOT_UP_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'EHOSTDOWN', 'EAI_AGAIN']);
/** ssh2's words for a handshake that did not finish (sshd starting, or closing on us). */
const NOT_UP_MESSAGES = /Timed out while waiting for handshake|Connection lost before handshake|No response from server|kex_exchange_identification/i;

type Attempt =
  { ok: true; ssh: NodeSSH; presented: PresentedHostKey; verdict: HostKeyVerdict } | { ok: false; error: unknown; verdict?: HostKeyVerdict; presented?: PresentedHostKey };

/** `VDU1 (10.0.0.5)` → `VDU1 (10.0.0.5:22)`: where vnfm connects, for messages. */
export function whereOf(target: SshTarget): string {
  const hostPort = `${target.host}:${target.port ?? 22}`;
  if (target.label.includes(`(${target.host})`)) return target.label.replace(`(${target.host})`, `(${hostPort})`);
  return target.label.includes(target.host) ? target.label : `${target.label} (${hostPort})`;
}

export async function connectNow(target: SshTarget, opts: SshConnectOptions): Promise<SshSession> {
  const retry = sshRetryOf(opts.retry);
  const where = whereOf(target);
  const redact = createSessionRedactor(sessionSecrets(target, opts.secrets));
  const { signal } = opts;
  const start = Date.now();
  let last: string | undefined;
  const gaveUp = (why: string, details: ErrorDetails) =>
    new SshConnectError(target.label, `gave up connecting to ${where}${why}: ${last ? `last error ${last}` : 'no attempt had finished'}`, details);
  const interrupted = () => gaveUp('', { cause: signal.reason });
  for (let n = 0; ; n++) {
    if (signal.aborted) throw interrupted();
    const a = await attempt(target, opts);
    if (a.ok) {
      try {
        await recordHostKey(target, a.presented, a.verdict, opts.hostKeys, new Date().toISOString(), (line) => {
          opts.log(line);
          if (a.verdict.kind === 'accepted') opts.report?.(line);
        });
      } catch (err) {
        a.ssh.dispose();
        throw err;
      }
      return new NodeSshSession(target, a.ssh, opts);
    }
    if (signal.aborted) throw interrupted();
    if (a.verdict?.kind === 'changed' && a.presented) throw hostKeyChangedError(target, a.verdict.pinned, a.presented);
    const err = a.error as Error & { level?: string; code?: string };
    const message = redact(err instanceof Error ? err.message : String(err));
    if (err.level === 'client-authentication') {
      const how = target.privateKey && target.password ? 'private key or password' : target.privateKey ? 'private key' : 'password';
      throw new SshAuthError(target.label, target.username, `${where}: user ${target.username} was refused (${how})`, {
        hint: `check the user name and the ${how} given for this node`,
      });
    }
    if (/Cannot parse privateKey/i.test(message)) {
      throw new SshAuthError(
        target.label,
        target.username,
        `${where}: the private key for user ${target.username} cannot be used: ${message.replace(/^Cannot parse privateKey:\s*/i, '')}`,
        {
          hint: 'give the key in OpenSSH or PEM format, with its passphrase when it has one',
        },
      );
    }
    const code = typeof err.code === 'string' ? err.code : undefined;
    const notUp = (code !== undefined && NOT_UP_CODES.has(code)) || err.level === 'client-timeout' || NOT_UP_MESSAGES.test(message);
    if (!notUp) throw new SshConnectError(target.label, `cannot connect to ${where}: ${message}`, { cause: err });
    last =
      err.level === 'client-timeout'
        ? `no SSH answer within ${formatMs(opts.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS)}`
        : code && !NOT_UP_MESSAGES.test(message)
          ? code
          : message;
    const delay = nextRetryDelay(n, Date.now() - start, retry);
    if (delay === undefined) {
      throw gaveUp(` after ${formatMs(Date.now() - start)}`, {
        hint: `check that the server booted, that sshd listens on port ${target.port ?? 22} at ${target.host} and that this host can reach that address; then retry the operation (vnfm op-retry)`,
      });
    }
    opts.report?.(`waiting for sshd on ${where}: ${last}; trying again in ${formatMs(delay)}`);
    try {
      await (opts.sleep ?? sleep)(delay, signal);
    } catch {
      throw interrupted();
    }
  }
}

/** One TCP connection and SSH handshake; the host key is judged during the handshake. */
async function attempt(target: SshTarget, opts: SshConnectOptions): Promise<Attempt> {
  const ssh = new NodeSSH();
  let presented: PresentedHostKey | undefined;
  let verdict: HostKeyVerdict | undefined;
  const pinned = await opts.hostKeys.get(target.serverId);
  const config: Config = {
    host: target.host,
    port: target.port ?? 22,
    username: target.username,
    readyTimeout: opts.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
    keepaliveInterval: 15_000,
    keepaliveCountMax: 4,
    ...(target.password === undefined ? {} : { password: target.password, tryKeyboard: true }),
    ...(target.privateKey === undefined ? {} : { privateKey: target.privateKey }),
    ...(target.passphrase === undefined ? {} : { passphrase: target.passphrase }),
    hostVerifier: (key: Buffer) => {
      presented = { fingerprint: hostKeyFingerprint(key), keyType: hostKeyType(key) };
      verdict = judgeHostKey(target, presented, pinned, opts.acceptHostKeys ?? []);
      return verdict.kind !== 'changed';
    },
  };
  const onAbort = () => ssh.connection?.destroy();
  opts.signal.addEventListener('abort', onAbort, { once: true });
  try {
    await ssh.connect(config);
    // After login, ssh2 emits connection errors (a reset) on the client; without
    // a listener they would end the process. The session's channels fail instead.
    ssh.connection?.on('error', () => undefined);
    if (!presented || !verdict) {
      ssh.dispose();
      return { ok: false, error: new Error('the server presented no host key') };
    }
    return { ok: true, ssh, presented, verdict };
  } catch (error) {
    ssh.dispose();
    return { ok: false, error, ...(verdict ? { verdict } : {}), ...(presented ? { presented } : {}) };
  } finally {
    opts.signal.removeEventListener('abort', onAbort);
  }
}
