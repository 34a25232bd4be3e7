/**
 * Host keys pinned on first use, per server: the first connection to a
 * server records its key; later ones must present the same key, unless the
 * operator accepted a new one (`--accept-host-key`).
 */
import { createHash } from 'node:crypto';
import { HostKeyChangedError } from './errors.js';
import type { HostKeyStore, PinnedHostKey, SshTarget } from './types.js';

/** The fingerprint of a host key blob as `ssh-keygen -lf` prints it: `SHA256:<base64 without padding>`. */
export function hostKeyFingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** The key type a blob starts with (`ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`). */
export function hostKeyType(blob: Buffer): string {
  if (blob.length < 4) return 'unknown';
  const n = blob.readUInt32BE(0);
  return n > 0 && n <= 64 && blob.length >= 4 + n ? blob.subarray(4, 4 + n).toString('latin1') : 'unknown';
}

export interface PresentedHostKey {
  fingerprint: string;
  keyType: string;
}

/** What to do with the key a server presented. */
export type HostKeyVerdict = { kind: 'known' } | { kind: 'first-use' } | { kind: 'accepted'; pinned: PinnedHostKey } | { kind: 'changed'; pinned: PinnedHostKey };

/** `pinned`: the key the store has pinned for the server (read before the handshake, which judges it). */
export function judgeHostKey(target: SshTarget, presented: PresentedHostKey, pinned: PinnedHostKey | undefined, accepted: readonly string[]): HostKeyVerdict {
  if (!pinned) return { kind: 'first-use' };
  if (pinned.fingerprint === presented.fingerprint) return { kind: 'known' };
  if (accepted.includes(target.serverId) || accepted.includes(target.host)) return { kind: 'accepted', pinned };
  return { kind: 'changed', pinned };
}

export function hostKeyChangedError(target: SshTarget, pinned: PinnedHostKey, presented: PresentedHostKey): HostKeyChangedError {
  return new HostKeyChangedError(target.label, target.serverId, target.host, pinned.fingerprint, presented.fingerprint);
}

/**
 * After a successful login: pins the key on first use or when accepted (and
 * says so), and follows a known server to a new address.
 */
export async function recordHostKey(
  target: SshTarget,
  presented: PresentedHostKey,
  verdict: HostKeyVerdict,
  store: HostKeyStore,
  now: string,
  say: (line: string) => void,
): Promise<void> {
  const key: PinnedHostKey = { serverId: target.serverId, address: target.host, fingerprint: presented.fingerprint, keyType: presented.keyType, pinnedAt: now };
  switch (verdict.kind) {
    case 'first-use':
      await store.pin(key);
      say(`${target.label}: pinned host key ${presented.keyType} ${presented.fingerprint} of server ${target.serverId}`);
      return;
    case 'accepted':
      await store.pin(key);
      say(
        `${target.label}: accepted the new host key of server ${target.serverId} as asked (--accept-host-key): ` +
          `${verdict.pinned.fingerprint} replaced by ${presented.keyType} ${presented.fingerprint}`,
      );
      return;
    case 'known': {
      const pinned = await store.get(target.serverId);
      if (pinned && pinned.address !== target.host) await store.pin({ ...pinned, address: target.host });
      return;
    }
    case 'changed':
      throw hostKeyChangedError(target, verdict.pinned, presented);
  }
}
