/**
 * The store: one SQLite file under VNFM_HOME, with a repository per
 * aggregate. Secrets reach it only as Fernet tokens.
 */
import { openDatabase, type Db } from './database.js';
import { PackageRepository } from './package-repository.js';
import { VimRepository } from './vim-repository.js';

export { DATABASE_FILE, ensurePrivateDir } from './database.js';
export type { SealedSecrets } from './vim-repository.js';
export { PackageRepository, VimRepository };

export interface Store {
  readonly db: Db;
  readonly vims: VimRepository;
  readonly packages: PackageRepository;
  close(): void;
}

export function openStore(home: string): Store {
  const db = openDatabase(home);
  return { db, vims: new VimRepository(db), packages: new PackageRepository(db), close: () => db.close() };
}
