/**
 * What a command needs, created lazily: `--help` and `--version` never open
 * the store or read a key.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { now } from '../clock.js';
import type { Keyring } from '../crypto/index.js';
import { SecretKeyError, UsageError } from '../errors.js';
import type { Store } from '../store/index.js';
import type { IO } from './io.js';
// Imported statically: what every command that opens the store uses stays in the main bundle, outside the domain's
// chunk (scripts/bundle.mjs).
import { holderStatus } from '../lcm/lock-holder.js';

export interface Context {
  readonly io: IO;
  readonly env: Record<string, string | undefined>;
  readonly cwd: string;
  /** vnfm's state directory: VNFM_HOME, else ~/.vnfm. */
  readonly home: string;
  now(): Date;
  store(): Promise<Store>;
  /** The shared store to open instead of VNFM_DATABASE_URL's (`--database-url`), before the store is first opened. */
  useDatabaseUrl(url: string): void;
  /**
   * Where the store opened by `store()` was named: `--database-url`,
   * `VNFM_DATABASE_URL`, `<home>/config.yaml`, or `default` (the SQLite file
   * under VNFM_HOME); `undefined` before the store is opened.
   */
  databaseOrigin(): string | undefined;
  /** The master keyring, checked against the keys the store's secrets are under. */
  keyring(): Promise<Keyring>;
  close(): Promise<void>;
}

export function resolveHome(env: Record<string, string | undefined>, cwd: string): string {
  const fromEnv = env['VNFM_HOME'];
  return fromEnv ? resolve(cwd, fromEnv) : join(env['HOME'] || homedir(), '.vnfm');
}

/**
 * VNFM_LEASE_TIMEOUT: seconds an operation's lease on its instance lasts
 * without a heartbeat (docs/shared-store.md); the store's default without it.
 */
function leaseTimeoutMs(env: Record<string, string | undefined>): number | undefined {
  const text = env['VNFM_LEASE_TIMEOUT'];
  if (!text) return undefined;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new UsageError(`VNFM_LEASE_TIMEOUT is "${text}"`, { hint: 'give the lease timeout in seconds, e.g. VNFM_LEASE_TIMEOUT=60' });
  }
  return seconds * 1000;
}

/**
 * The environment variables that hold the master keys or the command that
 * prints them; see crypto/keyring.ts and crypto/key-command.ts.
 */
const MASTER_KEY_ENV = 'VNFM_MASTER_KEY';
const MASTER_KEY_COMMAND_ENV = 'VNFM_MASTER_KEY_COMMAND';

/**
 * `env` is the process's environment (or a test's stand-in). The master key
 * is taken out of it at once, and so is the command that prints it: a
 * process vnfm starts, whatever starts it, never inherits the key nor the
 * way to fetch it. The context keeps its own copy of the environment,
 * read by the keyring (and key rotation) alone when a command needs them.
 *
 * This does not change what `/proc/<vnfm's pid>/environ` shows: that is the
 * environment vnfm was started with. Package scripts therefore run as
 * another user when vnfm runs as root (mgmt/script-isolation.ts).
 */
export function createContext(io: IO, processEnv: Record<string, string | undefined>, cwd: string): Context {
  const env = { ...processEnv };
  delete processEnv[MASTER_KEY_ENV];
  delete processEnv[MASTER_KEY_COMMAND_ENV];
  const home = resolveHome(env, cwd);
  let store: Store | undefined;
  let keyring: Keyring | undefined;
  let flagUrl: string | undefined;
  let origin: string | undefined;
  /** The shared store's URL and where it was given: the flag, then the environment, then config.yaml; none: SQLite. */
  const resolveDatabase = async (): Promise<{ url?: string; origin: string }> => {
    if (flagUrl) return { url: flagUrl, origin: '--database-url' };
    if (env['VNFM_DATABASE_URL']) return { url: env['VNFM_DATABASE_URL'], origin: 'VNFM_DATABASE_URL' };
    const { readHomeConfig } = await import('./home-config.js');
    const config = await readHomeConfig(home);
    return config?.database ? { url: config.database, origin: config.path } : { origin: 'default' };
  };
  const ctx: Context = {
    io,
    env,
    cwd,
    home,
    now,
    async store() {
      if (!store) {
        const [{ connectStore }, crypto] = await Promise.all([import('../store/index.js'), import('../crypto/index.js')]);
        // Every command that opens the store refuses a malformed master key, not only those that open secrets.
        crypto.checkMasterKeyForm(home, env);
        const database = await resolveDatabase();
        const onDisk = (): Keyring[] => {
          try {
            return [crypto.loadKeyring({ home, env, createIfMissing: false })];
          } catch (err) {
            if (err instanceof SecretKeyError) return [];
            throw err;
          }
        };
        store = await connectStore(home, {
          // The shared store on PostgreSQL (docs/shared-store.md); without it, the SQLite file under VNFM_HOME.
          databaseUrl: database.url,
          leaseTimeoutMs: leaseTimeoutMs(env),
          // A secret this process sealed before a rotation committed is sealed again under the store's
          // active key when it is written: opened with the keys loaded then, sealed with those on disk now.
          resealer: (token, fromKeyId, toKeyId) => crypto.resealToken([...(keyring ? [keyring] : []), ...onDisk()], token, fromKeyId, toKeyId),
          isHolderAlive: (holder) => holderStatus(holder).state !== 'gone',
        });
        origin = database.origin;
      }
      return store;
    },
    useDatabaseUrl(url) {
      flagUrl = url || undefined;
    },
    databaseOrigin: () => origin,
    async keyring() {
      if (keyring) return keyring;
      const s = await ctx.store();
      const { loadKeyring } = await import('../crypto/index.js');
      const stored = await s.vims.secretKeyIds();
      const kr = loadKeyring({ home, env, createIfMissing: stored.length === 0 });
      const unknown = stored.filter((id) => !kr.keyIds.includes(id));
      if (unknown.length > 0) {
        const where = kr.source === 'env' ? MASTER_KEY_ENV : kr.source === 'command' ? `the output of ${MASTER_KEY_COMMAND_ENV}` : kr.path;
        throw new SecretKeyError(`the store's secrets are encrypted with key ${unknown.join(', ')}, which ${where} does not hold (it has ${kr.keyIds.join(', ')})`, {
          hint: `use the master key this store was made with (${join(home, 'master.key')}, ${MASTER_KEY_ENV} or ${MASTER_KEY_COMMAND_ENV})`,
        });
      }
      keyring = kr;
      return kr;
    },
    async close() {
      await store?.close();
      store = undefined;
    },
  };
  return ctx;
}
