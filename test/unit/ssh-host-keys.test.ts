/** Host key fingerprints as ssh-keygen prints them, and the store that pins them. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostKeyFingerprint, hostKeyType, HostKeyChangedError } from '../../src/mgmt/ssh/index.js';
import { judgeHostKey, recordHostKey } from '../../src/mgmt/ssh/host-key.js';
import { openStore } from '../../src/store/index.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'vnfm-ssh-hostkey-'));

describe('host key fingerprint', () => {
  it.each(['ed25519', 'ecdsa', 'rsa'])('is what ssh-keygen -lf prints for an %s key, with its type', (type) => {
    const dir = tmp();
    execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-f', join(dir, 'k')]);
    const [keyType, base64] = readFileSync(join(dir, 'k.pub'), 'utf8').split(' ');
    const blob = Buffer.from(base64!, 'base64');
    const printed = execFileSync('ssh-keygen', ['-lf', join(dir, 'k.pub')], { encoding: 'utf8' }).split(' ')[1];
    expect(hostKeyFingerprint(blob)).toBe(printed);
    expect(hostKeyFingerprint(blob)).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(hostKeyType(blob)).toBe(keyType);
  });
});

describe('host key store', () => {
  const key = (over = {}) => ({ serverId: 'srv-1', address: '10.0.0.5', fingerprint: 'SHA256:aaa', keyType: 'ssh-ed25519', pinnedAt: '2026-01-01T00:00:00.000Z', ...over });

  it('pins, replaces and forgets keys per server, surviving a reopen', async () => {
    const home = join(tmp(), 'home');
    let store = openStore(home);
    expect(await store.hostKeys.get('srv-1')).toBeUndefined();
    await store.hostKeys.pin(key());
    await store.hostKeys.pin(key({ serverId: 'srv-2', address: '10.0.0.6' }));
    await store.hostKeys.pin(key({ fingerprint: 'SHA256:bbb', address: '10.0.0.7', pinnedAt: '2026-01-02T00:00:00.000Z' }));
    await store.close();
    store = openStore(home);
    try {
      expect(await store.hostKeys.get('srv-1')).toEqual(key({ fingerprint: 'SHA256:bbb', address: '10.0.0.7', pinnedAt: '2026-01-02T00:00:00.000Z' }));
      await store.hostKeys.forget(['srv-1', 'unknown']);
      expect(await store.hostKeys.get('srv-1')).toBeUndefined();
      expect((await store.hostKeys.list()).map((k) => k.serverId)).toEqual(['srv-2']);
    } finally {
      await store.close();
    }
  });

  it('judges a presented key: first use, known, changed, accepted by server id or address', async () => {
    const store = openStore(join(tmp(), 'home'));
    try {
      const target = { host: '10.0.0.5', username: 'u', serverId: 'srv-1', label: 'VDU1 (10.0.0.5)' };
      const presented = { fingerprint: 'SHA256:new', keyType: 'ssh-ed25519' };
      const said: string[] = [];
      expect(judgeHostKey(target, presented, await store.hostKeys.get(target.serverId), [])).toEqual({ kind: 'first-use' });
      await recordHostKey(target, presented, { kind: 'first-use' }, store.hostKeys, 'now', (l) => said.push(l));
      expect(await store.hostKeys.get('srv-1')).toMatchObject({ fingerprint: 'SHA256:new', address: '10.0.0.5' });
      expect(judgeHostKey(target, presented, await store.hostKeys.get(target.serverId), [])).toEqual({ kind: 'known' });
      const other = { fingerprint: 'SHA256:other', keyType: 'ssh-ed25519' };
      const changed = judgeHostKey(target, other, await store.hostKeys.get(target.serverId), ['srv-9', '10.0.0.9']);
      expect(changed.kind).toBe('changed');
      await expect(recordHostKey(target, other, changed, store.hostKeys, 'later', () => undefined)).rejects.toThrow(HostKeyChangedError);
      expect(judgeHostKey(target, other, await store.hostKeys.get(target.serverId), ['srv-1']).kind).toBe('accepted');
      const byAddress = judgeHostKey(target, other, await store.hostKeys.get(target.serverId), ['10.0.0.5']);
      expect(byAddress.kind).toBe('accepted');
      await recordHostKey(target, other, byAddress, store.hostKeys, 'later', (l) => said.push(l));
      expect(await store.hostKeys.get('srv-1')).toMatchObject({ fingerprint: 'SHA256:other', pinnedAt: 'later' });
      expect(said).toEqual([
        'VDU1 (10.0.0.5): pinned host key ssh-ed25519 SHA256:new of server srv-1',
        'VDU1 (10.0.0.5): accepted the new host key of server srv-1 as asked (--accept-host-key): SHA256:new replaced by ssh-ed25519 SHA256:other',
      ]);
    } finally {
      await store.close();
    }
  });

  it('says what changed and how to accept it', () => {
    const e = new HostKeyChangedError('VDU1 (10.0.0.5)', 'srv-1', '10.0.0.5', 'SHA256:old', 'SHA256:new');
    expect(e.message).toContain('VDU1 (10.0.0.5): the SSH host key of server srv-1 at 10.0.0.5 changed: pinned SHA256:old, now SHA256:new');
    expect(e.hint).toBe('if the server was rebuilt on purpose, accept its new key: add --accept-host-key srv-1 to the command (or op-retry)');
  });
});
