import type { VnfPackage } from '../model/package.js';
import { ConflictError, NotFoundError, UsageError } from '../errors.js';
import type { Db } from './database.js';
import { byIdPrefix } from './id-prefix.js';

interface PackageRow {
  id: string;
  name: string | null;
  vnfd_id: string;
  vnf_provider: string;
  vnf_product_name: string;
  vnf_software_version: string;
  vnfd_version: string;
  onboarding_state: VnfPackage['onboardingState'];
  operational_state: VnfPackage['operationalState'];
  usage_state: VnfPackage['usageState'];
  user_defined_data: string;
  checksum_algorithm: 'SHA-256';
  checksum_hash: string;
  size_bytes: number;
  summary: string;
  created_at: string;
  updated_at: string;
}

function toPackage(r: PackageRow): VnfPackage {
  return {
    id: r.id,
    ...(r.name === null ? {} : { name: r.name }),
    vnfdId: r.vnfd_id,
    vnfProvider: r.vnf_provider,
    vnfProductName: r.vnf_product_name,
    vnfSoftwareVersion: r.vnf_software_version,
    vnfdVersion: r.vnfd_version,
    onboardingState: r.onboarding_state,
    operationalState: r.operational_state,
    usageState: r.usage_state,
    userDefinedData: JSON.parse(r.user_defined_data) as Record<string, string>,
    checksum: { algorithm: r.checksum_algorithm, hash: r.checksum_hash },
    sizeBytes: r.size_bytes,
    summary: JSON.parse(r.summary) as VnfPackage['summary'],
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toRow(p: VnfPackage): PackageRow {
  return {
    id: p.id,
    name: p.name ?? null,
    vnfd_id: p.vnfdId,
    vnf_provider: p.vnfProvider,
    vnf_product_name: p.vnfProductName,
    vnf_software_version: p.vnfSoftwareVersion,
    vnfd_version: p.vnfdVersion,
    onboarding_state: p.onboardingState,
    operational_state: p.operationalState,
    usage_state: p.usageState,
    user_defined_data: JSON.stringify(p.userDefinedData),
    checksum_algorithm: p.checksum.algorithm,
    checksum_hash: p.checksum.hash,
    size_bytes: p.sizeBytes,
    summary: JSON.stringify(p.summary),
    created_at: p.createdAt,
    updated_at: p.updatedAt,
  };
}

const COLUMNS: (keyof PackageRow)[] = [
  'id',
  'name',
  'vnfd_id',
  'vnf_provider',
  'vnf_product_name',
  'vnf_software_version',
  'vnfd_version',
  'onboarding_state',
  'operational_state',
  'usage_state',
  'user_defined_data',
  'checksum_algorithm',
  'checksum_hash',
  'size_bytes',
  'summary',
  'created_at',
  'updated_at',
];

/** What vnfpkg-list narrows to. */
export interface PackageFilter {
  onboardingState?: VnfPackage['onboardingState'];
  operationalState?: VnfPackage['operationalState'];
  usageState?: VnfPackage['usageState'];
  vnfdId?: string;
  provider?: string;
}

export class PackageRepository {
  constructor(private readonly db: Db) {}

  async list(filter: PackageFilter = {}): Promise<VnfPackage[]> {
    const where: string[] = [];
    if (filter.onboardingState) where.push('onboarding_state = @onboardingState');
    if (filter.operationalState) where.push('operational_state = @operationalState');
    if (filter.usageState) where.push('usage_state = @usageState');
    if (filter.vnfdId) where.push('vnfd_id = @vnfdId');
    if (filter.provider) where.push('vnf_provider = @provider');
    const sql = `SELECT * FROM vnf_packages ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY created_at, id`;
    return ((await this.db.prepare(sql).all(filter)) as PackageRow[]).map(toPackage);
  }

  /** Each package's name (its product name when it has none) by id: for tables that name them. */
  async names(): Promise<Map<string, string>> {
    const rows = (await this.db.prepare('SELECT id, name, vnf_product_name FROM vnf_packages').all()) as { id: string; name: string | null; vnf_product_name: string }[];
    return new Map(rows.map((r) => [r.id, r.name ?? r.vnf_product_name]));
  }

  /** Finds a package by id, vnfdId or name; an ambiguous reference is an error. */
  async find(ref: string): Promise<VnfPackage | undefined> {
    const rows = (await this.db.prepare('SELECT * FROM vnf_packages WHERE id = ? OR vnfd_id = ? OR name = ?').all(ref, ref, ref)) as PackageRow[];
    const exact = rows.find((r) => r.id === ref);
    if (exact) return toPackage(exact);
    if (rows.length > 1) {
      throw new UsageError(`"${ref}" names ${rows.length} packages`, { hint: 'use the package id (vnfm vnfpkg-list)' });
    }
    if (rows[0]) return toPackage(rows[0]);
    const prefixed = await byIdPrefix<PackageRow>(this.db, 'vnf_packages', ref);
    if (prefixed.length > 1) throw new UsageError(`"${ref}" is the start of several package ids`, { hint: 'give the whole id (vnfm vnfpkg-list -o wide)' });
    return prefixed[0] && toPackage(prefixed[0]);
  }

  async get(ref: string): Promise<VnfPackage> {
    const pkg = await this.find(ref);
    if (!pkg) throw new NotFoundError(`vnf package "${ref}" not found`, { hint: 'list the onboarded packages with: vnfm vnfpkg-list' });
    return pkg;
  }

  async insert(pkg: VnfPackage): Promise<void> {
    await this.db
      .transaction(async () => {
        const clash = (await this.db.prepare('SELECT id FROM vnf_packages WHERE vnfd_id = ?').get(pkg.vnfdId)) as { id: string } | undefined;
        if (clash) {
          throw new ConflictError(`a package with vnfdId ${pkg.vnfdId} is already onboarded (${clash.id})`, {
            hint: 'give the new package its own descriptor_id, or delete the old one with: vnfm vnfpkg-delete ' + clash.id,
          });
        }
        if (pkg.name && (await this.db.prepare('SELECT 1 FROM vnf_packages WHERE name = ?').get(pkg.name))) {
          throw new ConflictError(`a package named "${pkg.name}" already exists`, { hint: 'choose another --name' });
        }
        await this.db.prepare(`INSERT INTO vnf_packages (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => '@' + c).join(', ')})`).run(toRow(pkg));
      })
      .immediate();
  }

  /** Sets the states named; returns the updated package. */
  async setStates(id: string, states: Partial<Pick<VnfPackage, 'operationalState' | 'usageState'>>, now: string): Promise<VnfPackage> {
    const sets: string[] = ['updated_at = @now'];
    if (states.operationalState) sets.push('operational_state = @op');
    if (states.usageState) sets.push('usage_state = @usage');
    const r = await this.db
      .prepare(`UPDATE vnf_packages SET ${sets.join(', ')} WHERE id = @id`)
      .run({ id, now, op: states.operationalState ?? null, usage: states.usageState ?? null });
    if (r.changes === 0) throw new NotFoundError(`vnf package "${id}" not found`);
    return this.get(id);
  }

  /** Deletes a package unless it is in use; checked and deleted in one transaction. */
  async delete(id: string): Promise<void> {
    await this.db
      .transaction(async () => {
        const row = (await this.db.prepare('SELECT usage_state FROM vnf_packages WHERE id = ?').get(id)) as { usage_state: string } | undefined;
        if (!row) throw new NotFoundError(`vnf package "${id}" not found`);
        if (row.usage_state === 'IN_USE') {
          throw new ConflictError(`vnf package ${id} is in use by VNF instances`, { hint: 'delete the VNF instances made from it first' });
        }
        await this.db.prepare('DELETE FROM vnf_packages WHERE id = ?').run(id);
      })
      .immediate();
  }

  async ids(): Promise<string[]> {
    return ((await this.db.prepare('SELECT id FROM vnf_packages').all()) as { id: string }[]).map((r) => r.id);
  }
}
