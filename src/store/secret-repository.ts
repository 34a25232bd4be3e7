/**
 * Every secret the store holds, wherever it rests: the VIMs' sealed
 * credentials (their own columns) and the sealed values (`{sealed, keyId}`)
 * that management drivers put into requests, operation records and instance
 * metadata. Those live in JSON columns whose shape the store does not own,
 * so they are found by walking every JSON text column of every table: a new
 * place a driver seals into is covered without a change here.
 *
 * Also the store-wide lock a master key rotation holds, and the id of the
 * key new secrets must be sealed under.
 */
import { ConflictError } from '../errors.js';
import type { Db } from './database.js';

/**
 * Who holds a store lock: the process (pid, start time), its boot and its
 * host, as lcm/lock-holder.ts records them for operation locks.
 */
export interface StoreLockHolder {
  pid: number;
  hostName?: string;
  hostId?: string;
  bootId?: string;
  startTime?: string;
  /** The lease a holder keeps with its heartbeat (operation-leases.ts): when it runs out, and the last beat. */
  leaseExpiresAt?: string;
  heartbeatAt?: string;
}

function describeHolder(h: StoreLockHolder): string {
  return `pid ${h.pid}${h.hostName ? ` on ${h.hostName}` : ''}`;
}

/** A lock row; columns a store has not got yet (vnf_locks before migration 6) read as undefined. */
interface LockRow {
  pid: number;
  host_name?: string | null;
  host_id?: string | null;
  boot_id?: string | null;
  start_time?: string | null;
  lease_expires_at?: string | null;
  heartbeat_at?: string | null;
}

function holderOfRow(row: LockRow): StoreLockHolder {
  return {
    pid: row.pid,
    ...(row.host_name == null ? {} : { hostName: row.host_name }),
    ...(row.host_id == null ? {} : { hostId: row.host_id }),
    ...(row.boot_id == null ? {} : { bootId: row.boot_id }),
    ...(row.start_time == null ? {} : { startTime: row.start_time }),
    ...(row.lease_expires_at == null ? {} : { leaseExpiresAt: row.lease_expires_at }),
    ...(row.heartbeat_at == null ? {} : { heartbeatAt: row.heartbeat_at }),
  };
}

/** One encrypted secret as the store keeps it. */
export interface StoredSecret {
  /** Where it is, for messages: `vim/<id>` or `<table>/<rowid>/<column>:<json path>`. */
  ref: string;
  token: string;
  /** Fingerprint of the master key the token was made with. */
  keyId: string;
}

/** A new token for a secret, or `undefined` to leave it as it is. */
export type SecretRewrite = (secret: StoredSecret) => { token: string; keyId: string } | undefined;

/**
 * Re-encrypts a token under the key `toKeyId`; `undefined` when no key at
 * hand opens it (it is then left as it is). Throws when the key `toKeyId`
 * is not at hand.
 */
export type Resealer = (token: string, fromKeyId: string, toKeyId: string) => { token: string; keyId: string } | undefined;

/** The store lock a master key rotation holds. */
export const ROTATION_LOCK = 'master-key-rotation';
const ACTIVE_KEY_SETTING = 'master_key_id';
const LOCK_LABELS: Record<string, string> = { [ROTATION_LOCK]: 'a master key rotation is' };

/**
 * A sealed value at rest: exactly `sealed` and `keyId`, both strings (the
 * shape the management drivers' `SealedValue` has; the store recognises it
 * without depending on them).
 */
function isSealedValue(value: unknown): value is { sealed: string; keyId: string } {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return typeof v['sealed'] === 'string' && typeof v['keyId'] === 'string' && Object.keys(v).length === 2;
}

/**
 * A copy of `value` with each sealed value passed to `fn` (with its JSON
 * path) and replaced by what it returns; the same object when nothing changed.
 */
function mapSealed(value: unknown, fn: (v: { sealed: string; keyId: string }, path: string) => { sealed: string; keyId: string } | undefined, path = '$'): unknown {
  if (isSealedValue(value)) return fn(value, path) ?? value;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((x, i) => {
      const y = mapSealed(x, fn, `${path}[${i}]`);
      changed ||= y !== x;
      return y;
    });
    return changed ? out : value;
  }
  if (value && typeof value === 'object') {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(value as Record<string, unknown>)) {
      const y = mapSealed(x, fn, `${path}.${k}`);
      changed ||= y !== x;
      out[k] = y;
    }
    return changed ? out : value;
  }
  return value;
}

/**
 * The sealed values in a JSON value (a column's text, parsed), with their
 * JSON paths: what a rotation finds there (store-import checks each opens
 * before it writes).
 */
export function sealedValuesIn(value: unknown): { path: string; token: string; keyId: string }[] {
  const found: { path: string; token: string; keyId: string }[] = [];
  mapSealed(value, (v, path) => {
    found.push({ path, token: v.sealed, keyId: v.keyId });
    return undefined;
  });
  return found;
}

interface JsonColumn {
  table: string;
  column: string;
}

/** Tables that hold no sealed value (the VIMs' own secret columns are read apart, below). */
// The lists' kept JSON items (migration 13) are text made from other rows' simple attributes, which hold no secret.
const NOT_WALKED = new Set(['store_locks', 'store_settings', 'vnf_instance_json_items', 'lcm_op_occ_json_items']);

export class SecretRepository {
  #columns: JsonColumn[] | undefined;
  /** Heartbeats of the store locks this process holds, by name. */
  readonly #beats = new Map<string, ReturnType<typeof setInterval>>();

  constructor(
    private readonly db: Db,
    private readonly resealer?: Resealer,
    /** Whether a lock's holder still runs; without it every holder counts as running. */
    private readonly isHolderAlive: (h: StoreLockHolder) => boolean = () => true,
    /** How long a store lock's lease lasts without a heartbeat; none without it. */
    private readonly leaseTimeoutMs?: number,
  ) {}

  /** Every text column of every table: where a JSON value with sealed values may rest. */
  private async jsonColumns(): Promise<JsonColumn[]> {
    if (this.#columns) return this.#columns;
    const tables = (await this.db.prepare(this.db.dialect.tables).pluck().all()) as string[];
    const columns: JsonColumn[] = [];
    for (const table of tables.filter((t) => !NOT_WALKED.has(t))) {
      const info = (await this.db.prepare(this.db.dialect.columns(table)).all()) as { name: string; type: string }[];
      for (const c of info) if (/TEXT/i.test(c.type) && !(table === 'vims' && c.name.startsWith('secrets_'))) columns.push({ table, column: c.name });
    }
    this.#columns = columns;
    return columns;
  }

  /** Runs `fn` over every JSON value holding a sealed value; writes back what it changes. */
  private async eachJson(visit: (secret: StoredSecret) => { token: string; keyId: string } | undefined, write: boolean): Promise<number> {
    let changed = 0;
    for (const { table, column } of await this.jsonColumns()) {
      const rows = (await this.db.prepare(`SELECT rowid AS r, "${column}" AS v FROM "${table}" WHERE "${column}" LIKE '%"sealed"%'`).all()) as { r: number; v: string }[];
      for (const row of rows) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(row.v);
        } catch {
          continue;
        }
        const next = mapSealed(parsed, (v, path) => {
          const out = visit({ ref: `${table}/${row.r}/${column}:${path}`, token: v.sealed, keyId: v.keyId });
          if (!out) return undefined;
          changed++;
          return { sealed: out.token, keyId: out.keyId };
        });
        if (write && next !== parsed) await this.db.prepare(`UPDATE "${table}" SET "${column}" = ? WHERE rowid = ?`).run(JSON.stringify(next), row.r);
      }
    }
    return changed;
  }

  /** Every secret in the store, read in one snapshot. */
  listSecrets(): Promise<StoredSecret[]> {
    return this.db
      .transaction(async () => {
        const all = (await this.db
          .prepare(`SELECT 'vim/' || id AS ref, secrets_token AS token, secrets_key_id AS "keyId" FROM vims WHERE secrets_token IS NOT NULL`)
          .all()) as StoredSecret[];
        await this.eachJson((s) => {
          all.push(s);
          return undefined;
        }, false);
        return all;
      })
      .deferred();
  }

  /**
   * In one write transaction: passes every secret to `rewrite` and stores
   * the new token it returns in its place; records `activeKeyId` as the key
   * new secrets are sealed under. Returns how many secrets changed.
   */
  rewriteSecrets(rewrite: SecretRewrite, activeKeyId?: string): Promise<number> {
    return this.db
      .transaction(async () => {
        let changed = 0;
        const vims = (await this.db
          .prepare(`SELECT id, 'vim/' || id AS ref, secrets_token AS token, secrets_key_id AS "keyId" FROM vims WHERE secrets_token IS NOT NULL`)
          .all()) as (StoredSecret & { id: string })[];
        const update = this.db.prepare('UPDATE vims SET secrets_token = ?, secrets_key_id = ? WHERE id = ?');
        for (const v of vims) {
          const out = rewrite(v);
          if (!out) continue;
          await update.run(out.token, out.keyId, v.id);
          changed++;
        }
        changed += await this.eachJson(rewrite, true);
        if (activeKeyId !== undefined) await this.setActiveKeyId(activeKeyId);
        return changed;
      })
      .immediate();
  }

  /** The key new secrets are sealed under since the last rotation; `undefined` before any. */
  async activeKeyId(): Promise<string | undefined> {
    return ((await this.db.prepare('SELECT value FROM store_settings WHERE name = ?').pluck().get(ACTIVE_KEY_SETTING)) as string | undefined) ?? undefined;
  }

  private async setActiveKeyId(keyId: string): Promise<void> {
    await this.db.prepare('INSERT INTO store_settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value').run(ACTIVE_KEY_SETTING, keyId);
  }

  /**
   * Called by every writer of a secret inside its write transaction, just
   * before the write: a secret sealed under another key than the store's
   * active one (a rotation committed since this process read its keys) is
   * sealed again under the active key, so no secret is ever written under a
   * key a rotation has retired. Rotation records the active key in the same
   * transaction that re-encrypts, and SQLite serialises write transactions,
   * so each write lands either before the re-encryption (which then covers
   * it) or after it (and is sealed under the new key here).
   */
  async sealForWrite<T>(value: T): Promise<T> {
    const active = await this.activeKeyId();
    if (active === undefined) return value;
    const reseal = (token: string, keyId: string) => (keyId === active || !this.resealer ? undefined : this.resealer(token, keyId, active));
    return mapSealed(value, (v) => {
      const out = reseal(v.sealed, v.keyId);
      return out && { sealed: out.token, keyId: out.keyId };
    }) as T;
  }

  /** `sealForWrite` for a VIM's token, kept in columns of its own. */
  async sealTokenForWrite<T extends { token: string; keyId: string } | undefined | null>(sealed: T): Promise<T> {
    if (!sealed) return sealed;
    const out = await this.sealForWrite({ sealed: sealed.token, keyId: sealed.keyId });
    return { token: out.sealed, keyId: out.keyId } as T;
  }

  /** Who holds the lock `name`, if anyone. */
  async lockHolder(name: string): Promise<(StoreLockHolder & { acquiredAt: string }) | undefined> {
    const row = (await this.db.prepare('SELECT * FROM store_locks WHERE name = ?').get(name)) as (LockRow & { acquired_at: string }) | undefined;
    return row && { ...holderOfRow(row), acquiredAt: row.acquired_at };
  }

  /**
   * Takes the store lock `name` in an exclusive transaction. A lock whose
   * holder no longer runs is taken over (its holder is returned); one held
   * by a live process is refused with a ConflictError. `check` runs in the
   * same transaction, to refuse for other reasons.
   */
  acquireLock(
    name: string,
    holder: StoreLockHolder,
    now: string,
    isAlive: (h: StoreLockHolder) => boolean,
    check?: () => void | Promise<void>,
  ): Promise<{ staleHolder?: StoreLockHolder & { acquiredAt: string } }> {
    return this.db
      .transaction(async () => {
        const held = await this.lockHolder(name);
        if (held && isAlive(held)) {
          throw new ConflictError(`${LOCK_LABELS[name] ?? name} in progress by ${describeHolder(held)} since ${held.acquiredAt}`, {
            hint: 'wait for it to end and run the command again',
          });
        }
        await check?.();
        await this.db.prepare('DELETE FROM store_locks WHERE name = ?').run(name);
        await this.db
          .prepare('INSERT INTO store_locks (name, pid, host_name, host_id, boot_id, start_time, acquired_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
          .run(name, holder.pid, holder.hostName ?? null, holder.hostId ?? null, holder.bootId ?? null, holder.startTime ?? null, now);
        await this.keepLease(name, holder);
        return held ? { staleHolder: held } : {};
      })
      .immediate();
  }

  /** Moves the lock's lease on now and, while this process holds it, every quarter of the lease timeout. */
  private async keepLease(name: string, holder: StoreLockHolder): Promise<void> {
    const ms = this.leaseTimeoutMs;
    if (ms === undefined) return;
    const renew = async () => {
      const t = Date.now();
      // This holder's own row only: no write lock (operation-leases.ts).
      await this.db.runUnlocked(
        'UPDATE store_locks SET heartbeat_at = ?, lease_expires_at = ? WHERE name = ? AND pid = ? AND start_time IS NOT DISTINCT FROM ?',
        new Date(t).toISOString(),
        new Date(t + ms).toISOString(),
        name,
        holder.pid,
        holder.startTime ?? null,
      );
    };
    await renew();
    this.stopLease(name);
    let beating = false;
    const timer = setInterval(
      () => {
        if (beating) return;
        beating = true;
        renew()
          .catch(() => {
            // The database is out of reach for now: the lease runs out if it stays so.
          })
          .finally(() => (beating = false));
      },
      Math.max(50, Math.floor(ms / 4)),
    );
    timer.unref();
    this.#beats.set(name, timer);
  }

  private stopLease(name: string): void {
    clearInterval(this.#beats.get(name));
    this.#beats.delete(name);
  }

  /** Stops every heartbeat (the store is closing). */
  stopHeartbeats(): void {
    for (const name of [...this.#beats.keys()]) this.stopLease(name);
  }

  /**
   * Refuses (ConflictError) while a master key rotation runs: operations on
   * instances and rotations exclude each other.
   */
  async assertNoRotation(): Promise<void> {
    const held = await this.lockHolder(ROTATION_LOCK);
    if (held && this.isHolderAlive(held)) {
      throw new ConflictError(`a master key rotation is in progress by ${describeHolder(held)} since ${held.acquiredAt}`, {
        hint: 'run the operation again once vnfm key-rotate has ended',
      });
    }
  }

  /** Releases the lock if `holder` (same pid and start time) still holds it. */
  async releaseLock(name: string, holder: StoreLockHolder): Promise<void> {
    this.stopLease(name);
    await this.db.prepare('DELETE FROM store_locks WHERE name = ? AND pid = ? AND start_time IS NOT DISTINCT FROM ?').run(name, holder.pid, holder.startTime ?? null);
  }

  /**
   * Holders of operation locks on instances: operations in progress, or
   * left by killed processes. Columns a store has not got yet read as absent.
   */
  async operationLockHolders(): Promise<(StoreLockHolder & { vnfInstanceId: string })[]> {
    const rows = (await this.db.prepare('SELECT * FROM vnf_locks').all()) as (LockRow & { vnf_instance_id: string })[];
    return rows.map((r) => ({ ...holderOfRow(r), vnfInstanceId: r.vnf_instance_id }));
  }
}
