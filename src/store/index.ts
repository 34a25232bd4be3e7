/**
 * The store: one SQLite file under VNFM_HOME, with a repository per
 * aggregate. Secrets reach it only as Fernet tokens.
 */
import { openDatabase, type Db } from './database.js';
import { HostKeyRepository } from './host-key-repository.js';
import { LcmOpOccRepository } from './lcm-op-occ-repository.js';
import { PackageRepository } from './package-repository.js';
import { VimRepository } from './vim-repository.js';
import { VnfInstanceRepository } from './vnf-instance-repository.js';

export { DATABASE_FILE, ensurePrivateDir } from './database.js';
export type { SealedSecrets } from './vim-repository.js';
export type { VnfLock } from './lcm-op-occ-repository.js';
export type { HostKeyRecord } from './host-key-repository.js';
export { HostKeyRepository, LcmOpOccRepository, PackageRepository, VimRepository, VnfInstanceRepository };

export interface Store {
  readonly db: Db;
  readonly vims: VimRepository;
  readonly packages: PackageRepository;
  readonly instances: VnfInstanceRepository;
  readonly opOccs: LcmOpOccRepository;
  /** SSH host keys pinned per server (management drivers). */
  readonly hostKeys: HostKeyRepository;
  close(): void;
}

export function openStore(home: string): Store {
  const db = openDatabase(home);
  return {
    db,
    vims: new VimRepository(db),
    packages: new PackageRepository(db),
    instances: new VnfInstanceRepository(db),
    opOccs: new LcmOpOccRepository(db),
    hostKeys: new HostKeyRepository(db),
    close: () => db.close(),
  };
}
