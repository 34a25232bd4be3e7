/**
 * An operation's lock on an instance as a lease, so that it holds across
 * machines sharing one store: the holder records a heartbeat while the
 * operation runs and moves the lease's expiry on with it. A holder on
 * another machine cannot be checked by its pid; once its lease has expired
 * (the machine is gone, the process was killed with -9, the network to the
 * database is down), any client takes it for gone (lcm/lock-holder.ts), so
 * its occurrence becomes FAILED_TEMP and can be retried or rolled back from
 * anywhere.
 *
 * The heartbeat runs on a timer while the lock is held by this process. A
 * holder that finds its lease taken over by another client (after it had
 * stalled past the expiry) records nothing more for that occurrence: its
 * state change is refused (ConflictError), and the write that goes with it
 * in the same transaction is rolled back, so the new holder's work is not
 * overwritten.
 */
import { ConflictError } from '../errors.js';
import type { Db } from './database.js';
import { LcmOpOccRepository, type VnfLock } from './lcm-op-occ-repository.js';
import type { SecretRepository } from './secret-repository.js';

/** How long a lease lasts without a heartbeat, unless the store is opened with another (VNFM_LEASE_TIMEOUT). */
export const DEFAULT_LEASE_TIMEOUT_MS = 60_000;

/** A lock with its lease: the last heartbeat and when the lease runs out (ISO 8601, the holder's clock). */
export type LeasedVnfLock = VnfLock & { heartbeatAt?: string; leaseExpiresAt?: string };

interface Held {
  lock: VnfLock;
  timer: ReturnType<typeof setInterval>;
}

export class LeasedLcmOpOccRepository extends LcmOpOccRepository {
  readonly #db: Db;
  readonly #leaseMs: number;
  readonly #held = new Map<string, Held>();

  constructor(db: Db, secrets: SecretRepository | undefined, leaseTimeoutMs = DEFAULT_LEASE_TIMEOUT_MS) {
    super(db, secrets);
    this.#db = db;
    this.#leaseMs = leaseTimeoutMs;
  }

  /** How long a lease lasts without a heartbeat. */
  get leaseTimeoutMs(): number {
    return this.#leaseMs;
  }

  override async lock(vnfInstanceId: string): Promise<LeasedVnfLock | undefined> {
    const lock = await super.lock(vnfInstanceId);
    if (!lock) return undefined;
    const row = (await this.#db.prepare('SELECT heartbeat_at, lease_expires_at FROM vnf_locks WHERE vnf_instance_id = ?').get(vnfInstanceId)) as
      { heartbeat_at: string | null; lease_expires_at: string | null } | undefined;
    return {
      ...lock,
      ...(row?.heartbeat_at ? { heartbeatAt: row.heartbeat_at } : {}),
      ...(row?.lease_expires_at ? { leaseExpiresAt: row.lease_expires_at } : {}),
    };
  }

  /** Takes the lock as a lease and keeps it alive until it is released (or this process ends). */
  override async takeLock(lock: VnfLock): Promise<void> {
    await super.takeLock(lock);
    await this.renew(lock);
    this.#stop(lock.vnfInstanceId);
    let beating = false;
    const timer = setInterval(
      () => {
        // One beat at a time: a beat that waits on the database is not joined by the next.
        if (beating) return;
        beating = true;
        this.renew(lock)
          .catch(() => {
            // The database is out of reach for now: the next beat tries again; the lease runs out if it stays so.
            return false;
          })
          .finally(() => (beating = false));
      },
      Math.max(50, Math.floor(this.#leaseMs / 4)),
    );
    // The heartbeat never keeps a finished command alive.
    timer.unref();
    this.#held.set(lock.vnfInstanceId, { lock, timer });
  }

  override async releaseLock(vnfInstanceId: string, opId: string): Promise<void> {
    await super.releaseLock(vnfInstanceId, opId);
    if (this.#held.get(vnfInstanceId)?.lock.opId === opId) this.#stop(vnfInstanceId);
  }

  /**
   * Refuses to move an occurrence this process holds a lease for when the
   * lease is no longer its own: another client took it over after it ran out.
   */
  override async setState(...args: Parameters<LcmOpOccRepository['setState']>): ReturnType<LcmOpOccRepository['setState']> {
    const [id] = args;
    for (const [vnfInstanceId, held] of this.#held) {
      if (held.lock.opId !== id) continue;
      if (!(await this.#stillHeld(held.lock))) {
        this.#stop(vnfInstanceId);
        const now = await super.lock(vnfInstanceId);
        throw new ConflictError(
          `the lease of this vnfm on vnf instance ${vnfInstanceId} ran out and ${now ? `vnfm pid ${now.pid} on host ${now.hostName ?? '(not recorded)'} holds it since ${now.acquiredAt}` : 'another client released it'}: occurrence ${id} is left as that client recorded it`,
          { hint: `see it with: vnfm op-show ${id}; a longer VNFM_LEASE_TIMEOUT keeps a slow or suspended client its lease` },
        );
      }
    }
    return super.setState(...args);
  }

  /** Moves the lease on: a heartbeat now, the expiry a lease timeout from now. False when the lock is no longer this holder's. */
  async renew(lock: VnfLock): Promise<boolean> {
    const now = Date.now();
    // Only this holder's own row, by every field of its identity: no write lock, so another client's long write transaction does not stall the heartbeat.
    const r = await this.#db.runUnlocked(
      'UPDATE vnf_locks SET heartbeat_at = ?, lease_expires_at = ? WHERE vnf_instance_id = ? AND op_id = ? AND pid = ? AND host_id IS NOT DISTINCT FROM ? AND start_time IS NOT DISTINCT FROM ?',
      new Date(now).toISOString(),
      new Date(now + this.#leaseMs).toISOString(),
      lock.vnfInstanceId,
      lock.opId,
      lock.pid,
      lock.hostId ?? null,
      lock.startTime ?? null,
    );
    return r.changes > 0;
  }

  async #stillHeld(lock: VnfLock): Promise<boolean> {
    return (
      (await this.#db
        .prepare('SELECT 1 FROM vnf_locks WHERE vnf_instance_id = ? AND op_id = ? AND pid = ? AND host_id IS NOT DISTINCT FROM ? AND start_time IS NOT DISTINCT FROM ?')
        .get(lock.vnfInstanceId, lock.opId, lock.pid, lock.hostId ?? null, lock.startTime ?? null)) !== undefined
    );
  }

  #stop(vnfInstanceId: string): void {
    const held = this.#held.get(vnfInstanceId);
    if (held) clearInterval(held.timer);
    this.#held.delete(vnfInstanceId);
  }

  /** Stops every heartbeat (the store is closing). */
  stopHeartbeats(): void {
    for (const id of [...this.#held.keys()]) this.#stop(id);
  }
}
