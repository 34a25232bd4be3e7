import type { Db } from './database.js';

/** A server's SSH host key, pinned on first use (the shape of mgmt/ssh's PinnedHostKey). */
export interface HostKeyRecord {
  serverId: string;
  address: string;
  fingerprint: string;
  keyType: string;
  pinnedAt: string;
}

interface HostKeyRow {
  server_id: string;
  address: string;
  key_type: string;
  fingerprint: string;
  pinned_at: string;
}

function toRecord(r: HostKeyRow): HostKeyRecord {
  return { serverId: r.server_id, address: r.address, fingerprint: r.fingerprint, keyType: r.key_type, pinnedAt: r.pinned_at };
}

/** The pinned SSH host keys of the servers management drivers log in to. */
export class HostKeyRepository {
  constructor(private readonly db: Db) {}

  async get(serverId: string): Promise<HostKeyRecord | undefined> {
    const row = (await this.db.prepare('SELECT * FROM ssh_host_keys WHERE server_id = ?').get(serverId)) as HostKeyRow | undefined;
    return row && toRecord(row);
  }

  async list(): Promise<HostKeyRecord[]> {
    return ((await this.db.prepare('SELECT * FROM ssh_host_keys ORDER BY server_id').all()) as HostKeyRow[]).map(toRecord);
  }

  /** Pins a key, replacing the one pinned for the server before. */
  async pin(key: HostKeyRecord): Promise<void> {
    await this.db
      .prepare(
        `INSERT INTO ssh_host_keys (server_id, address, key_type, fingerprint, pinned_at)
         VALUES (@serverId, @address, @keyType, @fingerprint, @pinnedAt)
         ON CONFLICT (server_id) DO UPDATE SET
           address = excluded.address, key_type = excluded.key_type, fingerprint = excluded.fingerprint, pinned_at = excluded.pinned_at`,
      )
      .run({ serverId: key.serverId, address: key.address, keyType: key.keyType, fingerprint: key.fingerprint, pinnedAt: key.pinnedAt });
  }

  /** Forgets the keys of servers that are gone (a terminated instance's). */
  async forget(serverIds: readonly string[]): Promise<void> {
    if (serverIds.length === 0) return;
    const del = this.db.prepare('DELETE FROM ssh_host_keys WHERE server_id = ?');
    await this.db
      .transaction(async () => {
        for (const id of serverIds) await del.run(id);
      })
      .immediate();
  }
}
