/**
 * crypto: Fernet tokens, the master keyring that encrypts the store's
 * secrets (key file, `VNFM_MASTER_KEY` or `VNFM_MASTER_KEY_COMMAND`), and
 * master key rotation.
 */
export { Fernet, InvalidFernetKey, InvalidFernetToken, generateFernetKey } from './fernet.js';
export type { FernetDecryptOptions, FernetEncryptOptions } from './fernet.js';
export { KEY_COMMAND_TIMEOUT_MS, MASTER_KEY_COMMAND_ENV } from './key-command.js';
export { KEY_FILE_NAME, MASTER_KEY_ENV, checkMasterKeyForm, keyFilePath, keyIdOf, loadKeyring, removeStaleKeyTempFiles, resealToken } from './keyring.js';
export type { KeySource, Keyring, LoadKeyringOptions } from './keyring.js';
export { rotateMasterKey } from './rotate.js';
export type { RotateMasterKeyOptions, RotationLock, RotationResult, RotationStep, SecretStore, StoredSecret } from './rotate.js';
