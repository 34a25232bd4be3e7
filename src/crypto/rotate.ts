/**
 * Master key rotation: re-encrypt every stored secret under a new key and
 * retire the old ones, so that a kill at any moment leaves every secret
 * readable with the keys on disk.
 */
import { ConflictError, SecretKeyError, UsageError } from '../errors.js';
import { InvalidFernetKey, generateFernetKey, parseFernetKey } from './fernet.js';
import {
  MASTER_KEY_ENV,
  type KeySource,
  type Keyring,
  createKeyring,
  keyFilePath,
  keyIdOf,
  keysFromEnv,
  loadKeyring,
  readKeyFile,
  writeKeyFile,
} from './keyring.js';

/** One encrypted secret as the store keeps it. */
export interface StoredSecret {
  /** The store's name for the secret (for example `vim/<id>/password`). */
  ref: string;
  token: string;
  /** Fingerprint of the key the token was made with (`Keyring.keyIds`). */
  keyId: string;
}

/** Implemented by the store: every encrypted secret it holds. */
export interface SecretStore {
  listSecrets(): StoredSecret[];
  /** Replace all tokens in one transaction. */
  replaceSecrets(updates: StoredSecret[]): void;
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
   * with `VNFM_MASTER_KEY` the operator can now remove them from it.
   */
  retiredKeyIds: string[];
}

/** How many times re-encryption is repeated for secrets written meanwhile. */
const MAX_PASSES = 3;

/**
 * Rotates the master key.
 *
 * Key file: (1) the file becomes [new, old...], (2) every secret is
 * re-encrypted under the new key in one transaction, (3) the file becomes
 * [new]. Each write is atomic, so whichever step a kill interrupts, the file
 * holds a key for every secret. Running the rotation again after a kill
 * finishes the job.
 *
 * `VNFM_MASTER_KEY`: vnfm cannot change the environment, so the operator puts
 * the new key first (`VNFM_MASTER_KEY=<new>,<old>`) and the rotation
 * re-encrypts every secret under that first key in one transaction.
 *
 * The caller keeps other vnfm processes from writing secrets meanwhile (the
 * store's write lock): a secret written under an old key after step (3)
 * could no longer be read.
 */
export function rotateMasterKey(opts: RotateMasterKeyOptions): RotationResult {
  const envKeys = keysFromEnv(opts.env);
  return envKeys ? rotateEnvKeys(envKeys, opts) : rotateKeyFile(opts);
}

function rotateEnvKeys(envKeys: string[], opts: RotateMasterKeyOptions): RotationResult {
  if (opts.newKey !== undefined) {
    throw new UsageError(`cannot rotate to a given key while the keys come from ${MASTER_KEY_ENV}`, {
      hint: `put the new key first in ${MASTER_KEY_ENV} (${MASTER_KEY_ENV}=<new>,<old>) and rotate again; make one with: vnfm key-generate`,
    });
  }
  const keyring = createKeyring(envKeys, 'env');
  const rotated = reencryptAll(keyring, opts.secrets);
  return { rotated, keyId: keyring.primaryKeyId, source: 'env', retiredKeyIds: keyring.keyIds.slice(1) };
}

function rotateKeyFile(opts: RotateMasterKeyOptions): RotationResult {
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

  const stored = opts.secrets.listSecrets();
  const current = loadKeyring({ home: opts.home, env: {}, createIfMissing: stored.length === 0 });
  // Read everything before the key file changes: a store that cannot be read
  // already stops the rotation here, with nothing touched.
  for (const secret of stored) current.decrypt(secret.token, secret.keyId);

  const oldKeys = readKeyFile(file);
  if (!oldKeys) throw new SecretKeyError(`the key file ${file} vanished during the rotation`);
  const newKeyId = keyIdOf(newKey);

  writeKeyFile(file, [newKey, ...oldKeys.filter((key) => key !== newKey)]);
  opts.afterStep?.('key-file-extended');

  const extended = createKeyring([newKey, ...oldKeys], 'file', file);
  const rotated = reencryptAll(extended, opts.secrets);
  opts.afterStep?.('re-encrypted');

  writeKeyFile(file, [newKey]);
  opts.afterStep?.('key-file-replaced');

  const retiredKeyIds = [...new Set(oldKeys.map(keyIdOf))].filter((id) => id !== newKeyId);
  return { rotated, keyId: newKeyId, source: 'file', path: file, retiredKeyIds };
}

/**
 * Re-encrypts every secret not yet under the keyring's primary key, one
 * transaction per pass, and checks afterwards that none was written under
 * another key in the meantime.
 */
function reencryptAll(keyring: Keyring, secrets: SecretStore): number {
  let rotated = 0;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const stale = secrets.listSecrets().filter((s) => s.keyId !== keyring.primaryKeyId);
    if (stale.length === 0) return rotated;
    const updates = stale.map((s) => ({ ref: s.ref, ...keyring.encrypt(keyring.decrypt(s.token, s.keyId)) }));
    secrets.replaceSecrets(updates);
    rotated += updates.length;
  }
  throw new ConflictError(`secrets are still being written under an old master key after ${MAX_PASSES} re-encryption passes`, {
    hint: 'stop the other vnfm processes and run the rotation again; every secret is still readable meanwhile',
  });
}
