/**
 * The master keyring: the Fernet keys that encrypt every secret in the store.
 * The keys never live in the database. They come from `VNFM_MASTER_KEY`
 * (comma-separated, primary first), else from what `VNFM_MASTER_KEY_COMMAND`
 * prints (the same form), else from the key file `<home>/master.key` (one
 * key per line, primary first), which only its owner may read.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { SecretKeyError } from '../errors.js';
import { Fernet, InvalidFernetKey, InvalidFernetToken, generateFernetKey, parseFernetKey } from './fernet.js';
import { MASTER_KEY_COMMAND_ENV, keyCommandOf, runKeyCommand } from './key-command.js';

export const MASTER_KEY_ENV = 'VNFM_MASTER_KEY';
export const KEY_FILE_NAME = 'master.key';

/** Where the keys came from: `VNFM_MASTER_KEY`, `VNFM_MASTER_KEY_COMMAND`'s output, or the key file. */
export type KeySource = 'env' | 'command' | 'file';

/**
 * The keys that protect the store's secrets. New secrets are encrypted with
 * the primary key; older keys stay only to read what was written before a
 * rotation.
 */
export interface Keyring {
  source: KeySource;
  /** The key file, when `source` is `file`. */
  path?: string;
  /** Fingerprint of the key that new secrets are encrypted with. */
  primaryKeyId: string;
  /** Fingerprints of every key, primary first. */
  keyIds: string[];
  /**
   * Encrypts under the primary key, or under the key `keyId` when given
   * (it must be in the keyring); the key's id is stored beside the token.
   */
  encrypt(plain: string, keyId?: string): { token: string; keyId: string };
  /**
   * Decrypts with the key named by `keyId` first, then with every other key.
   * Throws `SecretKeyError` when none of them opens the token.
   */
  decrypt(token: string, keyId?: string): string;
}

export interface LoadKeyringOptions {
  /** vnfm's state directory (`VNFM_HOME`). */
  home: string;
  env: Record<string, string | undefined>;
  /**
   * Create `<home>/master.key` if it is missing. The store passes `true` only
   * while it holds no secret, so a lost key file is never silently replaced by
   * a new key that cannot read the old secrets.
   */
  createIfMissing: boolean;
}

const KEY_ID_LABEL = 'vnfm master key id v1\0';

/**
 * A short fingerprint that names a key in the database and in messages
 * without revealing it: SHA-256 over a fixed label and the key's bytes.
 */
export function keyIdOf(key: string): string {
  const { signingKey, encryptionKey } = parseFernetKey(key);
  return createHash('sha256').update(KEY_ID_LABEL).update(signingKey).update(encryptionKey).digest('hex').slice(0, 16);
}

export function keyFilePath(home: string): string {
  return path.join(home, KEY_FILE_NAME);
}

/** Where the keys are, for the messages that talk about them. */
function describeSource(source: KeySource, file?: string): string {
  if (source === 'env') return `the ${MASTER_KEY_ENV} environment variable`;
  return source === 'command' ? `the output of ${MASTER_KEY_COMMAND_ENV}` : `the key file ${file}`;
}

/** Where the operator adds a key the keyring lacks, for hints. */
function addKeyHint(source: KeySource, keyId: string, file?: string): string {
  if (source === 'env') return `add the key with id ${keyId} to ${MASTER_KEY_ENV} (comma-separated, primary first)`;
  if (source === 'command') return `make ${MASTER_KEY_COMMAND_ENV} print the key with id ${keyId} too (comma-separated, primary first)`;
  return `restore the key with id ${keyId} as a line of ${file}, or set ${MASTER_KEY_ENV} to the keys the store was encrypted with`;
}

class MasterKeyring implements Keyring {
  readonly primaryKeyId: string;
  readonly keyIds: string[];
  readonly #fernets: Map<string, Fernet>;

  constructor(
    readonly source: KeySource,
    keys: readonly string[],
    readonly path?: string,
  ) {
    // Only Fernet objects are kept, so that logging or serialising a keyring
    // can never print a key.
    this.#fernets = new Map(keys.map((key) => [keyIdOf(key), new Fernet(key)]));
    this.keyIds = [...this.#fernets.keys()];
    this.primaryKeyId = this.keyIds[0]!;
  }

  encrypt(plain: string, keyId = this.primaryKeyId): { token: string; keyId: string } {
    const fernet = this.#fernets.get(keyId);
    if (!fernet) throw new SecretKeyError(`key ${keyId} is not in the keyring (${describeSource(this.source, this.path)}; it holds ${this.keyIds.join(', ')})`);
    return { token: fernet.encrypt(plain), keyId };
  }

  decrypt(token: string, keyId?: string): string {
    const order = keyId && this.#fernets.has(keyId) ? [keyId, ...this.keyIds.filter((id) => id !== keyId)] : this.keyIds;
    for (const id of order) {
      try {
        return this.#fernets.get(id)!.decrypt(token).toString('utf8');
      } catch (err) {
        if (!(err instanceof InvalidFernetToken)) throw err;
      }
    }
    const where = describeSource(this.source, this.path);
    if (keyId && !this.#fernets.has(keyId)) {
      throw new SecretKeyError(`the secret was encrypted with key ${keyId}, which is not in the keyring (${where}; it holds ${this.keyIds.join(', ')})`, {
        hint: addKeyHint(this.source, keyId, this.path),
      });
    }
    throw new SecretKeyError(
      keyId ? `the secret encrypted with key ${keyId} could not be decrypted: the stored token is corrupt or was altered` : `no key in the keyring (${where}) decrypts the secret`,
      { hint: 're-enter the secret (for a VIM: vnfm vim-update), or restore the database from a backup' },
    );
  }
}

/** Builds a keyring from keys already in hand, primary first. */
export function createKeyring(keys: readonly string[], source: KeySource, file?: string): Keyring {
  const unique = [...new Set(keys)];
  if (unique.length === 0) throw new SecretKeyError(`${describeSource(source, file)} holds no key`);
  return new MasterKeyring(source, unique, file);
}

/** The keys in `VNFM_MASTER_KEY`, or `undefined` when it is unset or empty. */
export function keysFromEnv(env: Record<string, string | undefined>): string[] | undefined {
  const value = env[MASTER_KEY_ENV];
  if (value === undefined || value.trim() === '') return undefined;
  const keys = value
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');
  keys.forEach((key, i) => checkKey(key, `key ${i + 1} of ${MASTER_KEY_ENV}`));
  return keys;
}

/** The keys a command printed, per environment object and command: it runs once per vnfm process. */
const commandKeys = new WeakMap<object, Map<string, string[]>>();

/**
 * The keys kept outside `VNFM_HOME`: `VNFM_MASTER_KEY`, else the output of
 * `VNFM_MASTER_KEY_COMMAND` (run here, the first time only), else `undefined`.
 */
export function keysFromEnvOrCommand(env: Record<string, string | undefined>): { keys: string[]; source: 'env' | 'command' } | undefined {
  const fromEnv = keysFromEnv(env);
  if (fromEnv) return { keys: fromEnv, source: 'env' };
  const command = keyCommandOf(env);
  if (command === undefined) return undefined;
  let byCommand = commandKeys.get(env);
  if (!byCommand) commandKeys.set(env, (byCommand = new Map()));
  let keys = byCommand.get(command);
  if (!keys) {
    keys = runKeyCommand(command, env)
      .split(/[,\n]/)
      .map((k) => k.trim())
      .filter((k) => k !== '');
    keys.forEach((key, i) => checkKey(key, `key ${i + 1} of the output of ${MASTER_KEY_COMMAND_ENV}`));
    byCommand.set(command, keys);
  }
  return { keys, source: 'command' };
}

function checkKey(key: string, where: string): void {
  try {
    parseFernetKey(key);
  } catch (err) {
    if (!(err instanceof InvalidFernetKey)) throw err;
    throw new SecretKeyError(`${where} is not a Fernet key (32 bytes in URL-safe base64, 44 characters)`, {
      hint: 'generate one with: vnfm key-generate',
    });
  }
}

/**
 * Reads and checks the key file: owned by the current user, no access for
 * group or others, at least one well-formed key. `undefined` when missing.
 */
export function readKeyFile(file: string): string[] | undefined {
  let fd: number;
  try {
    // Non-blocking, so that a FIFO put in the key file's place is refused
    // below instead of blocking the open until someone writes to it.
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SecretKeyError(`cannot read the key file ${file}: ${(err as Error).message}`, { cause: err });
  }
  try {
    // fstat on the opened descriptor: what is checked is what is read.
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new SecretKeyError(`the key file ${file} is not a regular file`);
    const uid = process.getuid?.();
    if (uid !== undefined && st.uid !== uid) {
      throw new SecretKeyError(`the key file ${file} is owned by uid ${st.uid}, not by the current user (uid ${uid})`, {
        hint: `chown ${uid} ${file} && chmod 600 ${file}`,
      });
    }
    if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
      throw new SecretKeyError(`the key file ${file} is accessible to other users (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')})`, {
        hint: `chmod 600 ${file}`,
      });
    }
    const keys = parseKeyFile(fs.readFileSync(fd, 'utf8'), file);
    if (keys.length === 0) {
      throw new SecretKeyError(`the key file ${file} holds no key`, {
        hint: `restore the key file from a backup, or set ${MASTER_KEY_ENV}`,
      });
    }
    return keys;
  } finally {
    fs.closeSync(fd);
  }
}

function parseKeyFile(text: string, file: string): string[] {
  const keys: string[] = [];
  text.split('\n').forEach((line, i) => {
    const key = line.trim();
    if (key === '' || key.startsWith('#')) return;
    checkKey(key, `line ${i + 1} of ${file}`);
    keys.push(key);
  });
  return keys;
}

function keyFileText(keys: readonly string[]): string {
  return `${keys.join('\n')}\n`;
}

function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch (err) {
    // Some platforms cannot open or sync a directory; the rename itself is
    // still atomic there, only its durability across power loss is weaker.
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EBADF') throw err;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Writes a 0600 temp file beside `file`, synced to disk, and returns its path. */
function writeTempBeside(file: string, text: string): string {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = fs.openSync(temp, 'wx', 0o600);
  try {
    fs.fchmodSync(fd, 0o600);
    fs.writeFileSync(fd, text);
    fs.fsyncSync(fd);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw err;
  } finally {
    fs.closeSync(fd);
  }
  return temp;
}

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the temp files a killed writer left beside `file`
 * (`.master.key.<pid>.<random>.tmp`): they hold keys, retired ones after a
 * killed rotation. A file whose writer still runs is left to it.
 */
export function removeStaleKeyTempFiles(file: string): void {
  const dir = path.dirname(file);
  const pattern = new RegExp(`^\\.${path.basename(file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(\\d+)\\.[0-9a-f]+\\.tmp$`);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = pattern.exec(name)?.[1];
    if (pid !== undefined && Number(pid) !== process.pid && !processRuns(Number(pid))) fs.rmSync(path.join(dir, name), { force: true });
  }
}

/**
 * Replaces the key file atomically: readers see either the old keys or the
 * new ones, never a partial file, even if the process is killed midway.
 */
export function writeKeyFile(file: string, keys: readonly string[]): void {
  keys.forEach((key, i) => checkKey(key, `key ${i + 1} to be written to ${file}`));
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = writeTempBeside(file, keyFileText(keys));
  try {
    fs.renameSync(temp, file);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw err;
  }
  fsyncDir(path.dirname(file));
}

/**
 * Creates the key file with a new key unless it already exists. The file is
 * written in full under a temporary name and then hard-linked into place:
 * `link` fails with EEXIST like an exclusive (`wx`) create, yet no other
 * process can ever see the file empty or half written. Two processes racing
 * here both end up reading the one key that won.
 */
function createKeyFile(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = writeTempBeside(file, keyFileText([generateFernetKey()]));
  try {
    fs.linkSync(temp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(temp, { force: true });
  }
  fsyncDir(path.dirname(file));
}

/**
 * Loads the master keyring. With `VNFM_MASTER_KEY` or `VNFM_MASTER_KEY_COMMAND`
 * set the key file is never read or written.
 */
export function loadKeyring(opts: LoadKeyringOptions): Keyring {
  const outside = keysFromEnvOrCommand(opts.env);
  if (outside) return createKeyring(outside.keys, outside.source);

  const file = keyFilePath(opts.home);
  removeStaleKeyTempFiles(file);
  let keys = readKeyFile(file);
  if (!keys) {
    if (!opts.createIfMissing) {
      throw new SecretKeyError(`the store holds encrypted secrets but ${file} is missing`, {
        hint: `restore the key file from a backup (mode 0600), or set ${MASTER_KEY_ENV} to the key the secrets were encrypted with`,
      });
    }
    createKeyFile(file);
    keys = readKeyFile(file);
    if (!keys) throw new SecretKeyError(`the key file ${file} vanished right after it was created`);
  }
  return createKeyring(keys, 'file', file);
}

/**
 * Checks the master key's form without loading it for use: a malformed
 * `VNFM_MASTER_KEY`, or a key file that is malformed, not private or not a
 * file, is refused (SecretKeyError) by every command that opens the store,
 * not only by those that open secrets. A missing key file is fine here.
 * `VNFM_MASTER_KEY_COMMAND` is not run here: only commands that open or
 * seal a secret run it (and refuse what it prints when malformed).
 */
export function checkMasterKeyForm(home: string, env: Record<string, string | undefined>): void {
  if (keysFromEnv(env) || keyCommandOf(env) !== undefined) return;
  readKeyFile(keyFilePath(home));
}

/**
 * Seals a token again under the key `toKeyId`: opened with any of `keyrings`
 * (the keys a process loaded earlier, and those on disk now), encrypted with
 * the first that holds `toKeyId`. `undefined` when none opens the token;
 * SecretKeyError when none holds `toKeyId`.
 */
export function resealToken(keyrings: readonly Keyring[], token: string, fromKeyId: string, toKeyId: string): { token: string; keyId: string } | undefined {
  let plain: string | undefined;
  for (const ring of keyrings) {
    try {
      plain = ring.decrypt(token, fromKeyId);
      break;
    } catch (err) {
      if (!(err instanceof SecretKeyError)) throw err;
    }
  }
  if (plain === undefined) return undefined;
  const target = keyrings.find((ring) => ring.keyIds.includes(toKeyId));
  if (!target) {
    const where = keyrings[0] ? describeSource(keyrings[0].source, keyrings[0].path) : 'the keyring';
    throw new SecretKeyError(
      `the store's secrets are sealed under master key ${toKeyId} since a key rotation, which ${where} does not hold (it has ${keyrings.flatMap((r) => r.keyIds).join(', ')})`,
      {
        hint: `use the store's current master key (${MASTER_KEY_ENV}=<new key> after a rotation of keys kept in the environment); nothing was written`,
      },
    );
  }
  return target.encrypt(plain, toKeyId);
}
