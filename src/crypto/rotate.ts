/**
 * Master key rotation: re-encrypt every stored secret under a new key and
 * retire the old ones, so that a kill at any moment leaves every secret
 * readable with the keys on disk.
 */
import { ConflictError, SecretKeyError, UsageError } from '../errors.js';
import { InvalidFernetKey, generateFernetKey, parseFernetKey } from './fernet.js';
import { MASTER_KEY_COMMAND_ENV } from './key-command.js';
import {
  MASTER_KEY_ENV,
  type KeySource,
  type Keyring,
  createKeyring,
  keyFilePath,
  keyIdOf,
  keysFromEnvOrCommand,
  loadKeyring,
  readKeyFile,
  removeStaleKeyTempFiles,
  writeKeyFile,
} from './keyring.js';

/** One encrypted secret as the store keeps it. */
export interface StoredSecret {
  /** Where the store keeps it, for messages (for example `vim/<id>`). */
  ref: string;
  token: string;
  /** Fingerprint of the key the token was made with (`Keyring.keyIds`). */
  keyId: string;
}

/** Implemented by the store: every encrypted secret it holds, wherever it rests. */
export interface SecretStore {
  /** Every secret, read in one snapshot. */
  listSecrets(): Promise<StoredSecret[]>;
  /**
   * In one write transaction: offers every secret to `rewrite`, stores the
   * token it returns in its place (none: unchanged) and records
   * `activeKeyId` as the key writers must seal under from now on. Returns
   * how many secrets changed. Listing and rewriting in the same transaction
   * means no secret written meanwhile can be missed.
   */
  rewriteSecrets(rewrite: (secret: StoredSecret) => { token: string; keyId: string } | undefined, activeKeyId?: string): Promise<number>;
}

/** The store's exclusive rotation lock (a row in the database, so it holds for every process sharing the store). */
export interface RotationLock {
  /** Takes the lock, or throws a ConflictError naming who holds it. */
  acquire(): Promise<void>;
  release(): Promise<void>;
}

/**
 * The points between which a rotation of the key file can be interrupted;
 * the secrets are readable from the keys on disk at each of them.
 */
export type RotationStep =
  /** The key file holds the new key first, then the old ones. */
  | 'key-file-extended'
  /** Every secret is encrypted under the new key (one transaction). */
  | 're-encrypted'
  /** Every secret was checked to open with the new key alone. */
  | 'verified'
  /** The key file holds the new key alone. */
  | 'key-file-replaced';

export interface RotateMasterKeyOptions {
  /** vnfm's state directory (`VNFM_HOME`). */
  home: string;
  env: Record<string, string | undefined>;
  secrets: SecretStore;
  /** The key to rotate to (key file only); a fresh key by default. */
  newKey?: string;
  /** Called after each step; tests use it to stop a rotation midway. */
  afterStep?: (step: RotationStep) => void;
  /** Held for the whole rotation, so that two rotations never interleave. */
  lock?: RotationLock;
}

export interface RotationResult {
  /** How many secrets were re-encrypted. */
  rotated: number;
  /** The primary key's fingerprint after the rotation. */
  keyId: string;
  source: KeySource;
  /** The key file, when `source` is `file`. */
  path?: string;
  /**
   * Keys no secret needs any more. With the key file they are already gone;
   * with `VNFM_MASTER_KEY` (or what `VNFM_MASTER_KEY_COMMAND` prints) the
   * operator can now remove them from it.
   */
  retiredKeyIds: string[];
  /**
   * Secrets (outside the VIMs) that no key opened before the rotation:
   * sealed under a key lost earlier. They are left as they are.
   */
  unreadable: string[];
}

/**
 * Rotates the master key.
 *
 * Key file: (1) the file becomes [new, old...], (2) every secret is
 * re-encrypted under the new key in one transaction, which also records the
 * new key as the store's active key, (3) every secret is checked to open
 * with the new key alone, (4) the file becomes [new]. Each write is atomic,
 * so whichever step a kill interrupts, the file holds a key for every
 * secret. Running the rotation again after a kill finishes the job.
 *
 * `VNFM_MASTER_KEY`: vnfm cannot change the environment, so the operator puts
 * the new key first (`VNFM_MASTER_KEY=<new>,<old>`) and the rotation
 * re-encrypts every secret under that first key in one transaction.
 * `VNFM_MASTER_KEY_COMMAND` likewise: vnfm cannot write to the secret manager
 * the command reads, so the operator stores NEW,OLD there, rotates, then
 * stores NEW alone.
 *
 * Other vnfm processes may write secrets meanwhile: each seals, inside its
 * own write transaction, under the store's active key (the store's
 * `sealForWrite`), so its write lands either before step (2), which then
 * re-encrypts it, or after it, under the new key. Step (3) checks that this
 * held before the old keys are dropped. Two rotations exclude each other by
 * the store's lock (`lock`).
 */
export async function rotateMasterKey(opts: RotateMasterKeyOptions): Promise<RotationResult> {
  const outside = keysFromEnvOrCommand(opts.env);
  if (outside && opts.newKey !== undefined) {
    const where = outside.source === 'env' ? `${MASTER_KEY_ENV} (${MASTER_KEY_ENV}=<new>,<old>)` : `what ${MASTER_KEY_COMMAND_ENV} prints (<new>,<old>)`;
    throw new UsageError(`cannot rotate to a given key while the keys come from ${outside.source === 'env' ? MASTER_KEY_ENV : MASTER_KEY_COMMAND_ENV}`, {
      hint: `put the new key first in ${where} and rotate again; make one with: vnfm key-generate`,
    });
  }
  await opts.lock?.acquire();
  try {
    return await (outside ? rotateEnvKeys(outside.keys, outside.source, opts) : rotateKeyFile(opts));
  } finally {
    await opts.lock?.release();
  }
}

/** Keys from `VNFM_MASTER_KEY` or `VNFM_MASTER_KEY_COMMAND`: re-encrypts under the first; nothing is written outside the store. */
async function rotateEnvKeys(envKeys: string[], source: KeySource, opts: RotateMasterKeyOptions): Promise<RotationResult> {
  const keyring = createKeyring(envKeys, source);
  const unreadable = unreadableSecrets(keyring, await opts.secrets.listSecrets());
  const rotated = await reencryptAll(keyring, opts.secrets, unreadable);
  await verifyAll(createKeyring([envKeys[0]!], source), opts.secrets, unreadable);
  return { rotated, keyId: keyring.primaryKeyId, source, retiredKeyIds: keyring.keyIds.slice(1), unreadable: [...unreadable.values()] };
}

async function rotateKeyFile(opts: RotateMasterKeyOptions): Promise<RotationResult> {
  const file = keyFilePath(opts.home);
  const newKey = opts.newKey ?? generateFernetKey();
  try {
    parseFernetKey(newKey);
  } catch (err) {
    if (!(err instanceof InvalidFernetKey)) throw err;
    throw new UsageError('the new master key is not a Fernet key (32 bytes in URL-safe base64, 44 characters)', {
      hint: 'make one with: vnfm key-generate',
    });
  }

  // Temp files of earlier rotations that were killed hold retired keys.
  removeStaleKeyTempFiles(file);
  const stored = await opts.secrets.listSecrets();
  const current = loadKeyring({ home: opts.home, env: {}, createIfMissing: stored.length === 0 });
  // Read everything before the key file changes: a store that cannot be read
  // already stops the rotation here, with nothing touched.
  const unreadable = unreadableSecrets(current, stored);

  const oldKeys = readKeyFile(file);
  if (!oldKeys) throw new SecretKeyError(`the key file ${file} vanished during the rotation`);
  const newKeyId = keyIdOf(newKey);

  writeKeyFile(file, [newKey, ...oldKeys.filter((key) => key !== newKey)]);
  opts.afterStep?.('key-file-extended');

  const extended = createKeyring([newKey, ...oldKeys], 'file', file);
  const rotated = await reencryptAll(extended, opts.secrets, unreadable);
  opts.afterStep?.('re-encrypted');

  await verifyAll(createKeyring([newKey], 'file', file), opts.secrets, unreadable);
  opts.afterStep?.('verified');

  writeKeyFile(file, [newKey]);
  opts.afterStep?.('key-file-replaced');

  const retiredKeyIds = [...new Set(oldKeys.map(keyIdOf))].filter((id) => id !== newKeyId);
  return { rotated, keyId: newKeyId, source: 'file', path: file, retiredKeyIds, unreadable: [...unreadable.values()] };
}

/**
 * The tokens no key of `keyring` opens, by token (their refs as values).
 * A VIM's secrets must open: the rotation stops (nothing touched) when
 * one does not. Sealed values elsewhere that no key opens were sealed under
 * a key lost before; they cannot be rotated and are left as they are.
 */
function unreadableSecrets(keyring: Keyring, stored: StoredSecret[]): Map<string, string> {
  const unreadable = new Map<string, string>();
  for (const secret of stored) {
    try {
      keyring.decrypt(secret.token, secret.keyId);
    } catch (err) {
      if (!(err instanceof SecretKeyError) || secret.ref.startsWith('vim/')) throw err;
      unreadable.set(secret.token, secret.ref);
    }
  }
  return unreadable;
}

/** Re-encrypts every secret not yet under the keyring's primary key, in one transaction. */
function reencryptAll(keyring: Keyring, secrets: SecretStore, unreadable: Map<string, string>): Promise<number> {
  return secrets.rewriteSecrets((s) => {
    if (s.keyId === keyring.primaryKeyId || unreadable.has(s.token)) return undefined;
    return keyring.encrypt(keyring.decrypt(s.token, s.keyId));
  }, keyring.primaryKeyId);
}

/**
 * Checks that every secret opens with `only` (the key about to remain):
 * otherwise the old keys must stay, and the rotation stops here.
 */
async function verifyAll(only: Keyring, secrets: SecretStore, unreadable: Map<string, string>): Promise<void> {
  const failed: string[] = [];
  for (const s of await secrets.listSecrets()) {
    if (unreadable.has(s.token)) continue;
    try {
      only.decrypt(s.token, s.keyId);
    } catch (err) {
      if (!(err instanceof SecretKeyError)) throw err;
      failed.push(s.ref);
    }
  }
  if (failed.length > 0) {
    throw new ConflictError(
      `${failed.length} secret(s) do not open with the new master key ${only.primaryKeyId} (${failed.slice(0, 5).join(', ')}${failed.length > 5 ? ', ...' : ''}): the old keys are kept`,
      {
        hint: 'every secret is still readable; run vnfm key-rotate again to finish the rotation',
      },
    );
  }
}
