/**
 * The store: one SQLite file under VNFM_HOME, or a PostgreSQL database
 * shared by a team (VNFM_DATABASE_URL), with a repository per aggregate.
 * Secrets reach it only as Fernet tokens.
 */
import { join } from 'node:path';
import { DATABASE_FILE, openSqliteStore, type Db } from './database.js';
import { migrations } from './migrations/index.js';
import { DEFAULT_LEASE_TIMEOUT_MS, LeasedLcmOpOccRepository } from './operation-leases.js';
import type { PostgresDb } from './postgres/database.js';
import { HostKeyRepository } from './host-key-repository.js';
import { LcmOpOccRepository } from './lcm-op-occ-repository.js';
import { PackageRepository } from './package-repository.js';
import { PackageContentRepository } from './package-content-repository.js';
import { ROTATION_LOCK, SecretRepository, type Resealer, type StoreLockHolder } from './secret-repository.js';
import { VimRepository } from './vim-repository.js';
import { VnfInstanceRepository } from './vnf-instance-repository.js';

export { DATABASE_FILE, ensurePrivateDir } from './database.js';
export type { SealedSecrets } from './vim-repository.js';
export type { VnfLock } from './lcm-op-occ-repository.js';
export type { LeasedVnfLock } from './operation-leases.js';
export { DEFAULT_LEASE_TIMEOUT_MS } from './operation-leases.js';
export type { PackageFilter } from './package-repository.js';
export { PackageContentRepository, type ContentUpload, type PackageContentInfo } from './package-content-repository.js';
export type { ListRead, VnfInstanceFilter } from './vnf-instance-repository.js';
export type { OpOccFilter as StoreOpOccFilter } from './lcm-op-occ-repository.js';
export { RawJson, readingRawJson } from './lazy-json.js';
export type { HostKeyRecord } from './host-key-repository.js';
export type { Resealer, SecretRewrite, StoreLockHolder, StoredSecret } from './secret-repository.js';
export { ROTATION_LOCK } from './secret-repository.js';
export { HostKeyRepository, LcmOpOccRepository, PackageRepository, SecretRepository, VimRepository, VnfInstanceRepository };

export interface Store {
  readonly db: Db;
  /** Where the state lives: `sqlite` (a file under VNFM_HOME) or `postgres` (shared). */
  readonly backend: 'sqlite' | 'postgres';
  /** The database file, or the database URL with its password masked. */
  readonly location: string;
  readonly vims: VimRepository;
  readonly packages: PackageRepository;
  /** Onboarded packages' zips, on the shared store only: on SQLite the package directory under VNFM_HOME is the only copy. */
  readonly packageContents: PackageContentRepository | undefined;
  readonly instances: VnfInstanceRepository;
  readonly opOccs: LeasedLcmOpOccRepository;
  /** SSH host keys pinned per server (management drivers). */
  readonly hostKeys: HostKeyRepository;
  /** Every sealed secret wherever it rests (key rotation), and the rotation lock. */
  readonly secrets: SecretRepository;
  /** What `store-info` shows: backend, where, schema version, who holds locks. */
  info(): Promise<StoreInfo>;
  /**
   * The command was stopped (Ctrl-C, SIGTERM, --timeout; `reason` is that
   * error): a wait for the shared store's write lock ends after a grace with
   * the same kind of error instead of outlasting the command. SQLite: nothing
   * (its statements never wait on the event loop).
   */
  interruptWaits(reason: Error): void;
  close(): Promise<void>;
}

/** Who holds a lock, and its lease where it has one. */
export interface LockInfo {
  /** `vnf/<instance id>` for an operation's lock, `store/<name>` for a store lock (a key rotation's). */
  lock: string;
  /** The occurrence holding an instance's lock. */
  opId?: string;
  pid: number;
  hostName?: string;
  since: string;
  heartbeatAt?: string;
  leaseExpiresAt?: string;
}

export interface StoreInfo {
  backend: 'sqlite' | 'postgres';
  location: string;
  /** The schema version the store is at, and the newest this vnfm knows (the same after opening). */
  schemaVersion: number;
  knownSchemaVersion: number;
  /** The SQLite library's or the PostgreSQL server's version. */
  engineVersion: string;
  locks: LockInfo[];
}

export interface OpenStoreOptions {
  /**
   * Seals a secret again under the store's active master key when a writer
   * holds one sealed under a key a rotation has since retired. Without it
   * such a secret is written as it is.
   */
  resealer?: Resealer;
  /** Whether the holder of a store lock still runs (lcm/lock-holder.ts); without it every holder counts as running. */
  isHolderAlive?: (holder: StoreLockHolder) => boolean;
  /** The shared store on PostgreSQL, opened (connectStore), instead of the SQLite file under `home`. */
  shared?: PostgresDb;
  /** How long an operation's lease on its instance lasts without a heartbeat (store/operation-leases.ts). */
  leaseTimeoutMs?: number;
}

/**
 * Opens the store a command works on: the shared one on PostgreSQL when
 * `databaseUrl` is given (its code is loaded only then), else the SQLite
 * file under `home`.
 */
export async function connectStore(home: string, opts: OpenStoreOptions & { databaseUrl?: string | undefined } = {}): Promise<Store> {
  const { databaseUrl, ...rest } = opts;
  if (!databaseUrl) return openStore(home, rest);
  const { openPostgres } = await import('./postgres/database.js');
  return openStore(home, { ...rest, shared: await openPostgres(databaseUrl, migrations) });
}

export function openStore(home: string, opts: OpenStoreOptions = {}): Store {
  const pg = opts.shared;
  const db: Db = pg ?? openSqliteStore(home);
  const secrets = new SecretRepository(db, opts.resealer, opts.isHolderAlive, opts.leaseTimeoutMs ?? DEFAULT_LEASE_TIMEOUT_MS);
  const opOccs = new LeasedLcmOpOccRepository(db, secrets, opts.leaseTimeoutMs);
  return {
    db,
    backend: pg ? 'postgres' : 'sqlite',
    location: pg ? pg.display : join(home, DATABASE_FILE),
    vims: new VimRepository(db, secrets),
    packages: new PackageRepository(db),
    packageContents: pg ? new PackageContentRepository(db) : undefined,
    instances: new VnfInstanceRepository(db, secrets),
    opOccs,
    secrets,
    hostKeys: new HostKeyRepository(db),
    info: async () => ({
      backend: pg ? 'postgres' : 'sqlite',
      location: pg ? pg.display : join(home, DATABASE_FILE),
      schemaVersion: pg ? await pg.schemaVersion() : ((await db.prepare('PRAGMA user_version').pluck().get()) as number),
      knownSchemaVersion: migrations.reduce((max, m) => Math.max(max, m.version), 0),
      engineVersion: pg ? `PostgreSQL ${await pg.serverVersion()}` : `SQLite ${(await db.prepare('SELECT sqlite_version()').pluck().get()) as string}`,
      locks: await lockInfo(opOccs, secrets),
    }),
    interruptWaits: (reason) => pg?.interruptWaits(reason),
    close: async () => {
      opOccs.stopHeartbeats();
      secrets.stopHeartbeats();
      await db.close();
    },
  };
}

async function lockInfo(opOccs: LeasedLcmOpOccRepository, secrets: SecretRepository): Promise<LockInfo[]> {
  const out: LockInfo[] = [];
  for (const id of await opOccs.lockedInstances()) {
    const l = await opOccs.lock(id);
    if (!l) continue;
    out.push({
      lock: `vnf/${id}`,
      opId: l.opId,
      pid: l.pid,
      ...(l.hostName ? { hostName: l.hostName } : {}),
      since: l.acquiredAt,
      ...(l.heartbeatAt ? { heartbeatAt: l.heartbeatAt } : {}),
      ...(l.leaseExpiresAt ? { leaseExpiresAt: l.leaseExpiresAt } : {}),
    });
  }
  const rotation = await secrets.lockHolder(ROTATION_LOCK);
  if (rotation) {
    out.push({
      lock: `store/${ROTATION_LOCK}`,
      pid: rotation.pid,
      ...(rotation.hostName ? { hostName: rotation.hostName } : {}),
      since: rotation.acquiredAt,
      ...(rotation.heartbeatAt ? { heartbeatAt: rotation.heartbeatAt } : {}),
      ...(rotation.leaseExpiresAt ? { leaseExpiresAt: rotation.leaseExpiresAt } : {}),
    });
  }
  return out;
}
