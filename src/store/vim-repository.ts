import type { Vim, VimAuth, VimSecrets, VimSpec, VimType } from '../model/vim.js';
import { ConflictError, NotFoundError, UsageError } from '../errors.js';
import type { Db } from './database.js';
import { byIdPrefix } from './id-prefix.js';
import type { SecretRepository } from './secret-repository.js';

/** A VIM's secrets as stored: one Fernet token and the id of its key. */
export interface SealedSecrets {
  token: string;
  keyId: string;
}

interface VimRow {
  id: string;
  name: string;
  type: VimType;
  description: string;
  is_default: 0 | 1;
  auth_url: string;
  project_name: string | null;
  auth_method: VimAuth['method'];
  verify_tls: 0 | 1;
  settings: string;
  secret_names: string;
  secrets_token: string | null;
  secrets_key_id: string | null;
  status: Vim['status'];
  created_at: string;
  updated_at: string;
}

/** Settings kept in the JSON column: everything of the spec without its own column. */
type VimSettings = Omit<VimSpec, 'type' | 'authUrl' | 'projectName' | 'verifyTls' | 'auth'> & {
  auth: Omit<VimAuth, 'method'>;
};

function toVim(row: VimRow): Vim {
  const { auth, ...rest } = JSON.parse(row.settings) as VimSettings;
  const spec: VimSpec = {
    type: row.type,
    authUrl: row.auth_url,
    ...(row.project_name === null ? {} : { projectName: row.project_name }),
    ...rest,
    auth: { method: row.auth_method, ...auth } as VimAuth,
    verifyTls: row.verify_tls === 1,
  };
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    isDefault: row.is_default === 1,
    spec,
    secretNames: JSON.parse(row.secret_names) as (keyof VimSecrets)[],
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toRow(vim: Vim, sealed: SealedSecrets | undefined): VimRow {
  const { type, authUrl, projectName, verifyTls, auth, ...rest } = vim.spec;
  const { method, ...authSettings } = auth;
  const settings: VimSettings = { ...rest, auth: authSettings };
  return {
    id: vim.id,
    name: vim.name,
    type,
    description: vim.description,
    is_default: vim.isDefault ? 1 : 0,
    auth_url: authUrl,
    project_name: projectName ?? null,
    auth_method: method,
    verify_tls: verifyTls ? 1 : 0,
    settings: JSON.stringify(settings),
    secret_names: JSON.stringify(vim.secretNames),
    secrets_token: sealed?.token ?? null,
    secrets_key_id: sealed?.keyId ?? null,
    status: vim.status,
    created_at: vim.createdAt,
    updated_at: vim.updatedAt,
  };
}

const COLUMNS = [
  'id',
  'name',
  'type',
  'description',
  'is_default',
  'auth_url',
  'project_name',
  'auth_method',
  'verify_tls',
  'settings',
  'secret_names',
  'secrets_token',
  'secrets_key_id',
  'status',
  'created_at',
  'updated_at',
] as const;

export class VimRepository {
  /** `secrets`: seals a VIM's secrets again under the active key if a rotation ran since they were sealed. */
  constructor(
    private readonly db: Db,
    private readonly secrets?: SecretRepository,
  ) {}

  async list(filter: { type?: VimType } = {}): Promise<Vim[]> {
    const sql = `SELECT * FROM vims ${filter.type ? 'WHERE type = @type' : ''} ORDER BY created_at, name`;
    const rows = (await this.db.prepare(sql).all(filter)) as VimRow[];
    return rows.map(toVim);
  }

  /** Each VIM's name by id: for tables that name them. */
  async names(): Promise<Map<string, string>> {
    const rows = (await this.db.prepare('SELECT id, name FROM vims').all()) as { id: string; name: string }[];
    return new Map(rows.map((r) => [r.id, r.name]));
  }

  /** Finds a VIM by id or by name. */
  async find(ref: string): Promise<Vim | undefined> {
    const row = (await this.db.prepare('SELECT * FROM vims WHERE id = ? OR name = ? ORDER BY id = ? DESC LIMIT 1').get(ref, ref, ref)) as VimRow | undefined;
    if (row) return toVim(row);
    const prefixed = await byIdPrefix<VimRow>(this.db, 'vims', ref);
    if (prefixed.length > 1) throw new UsageError(`"${ref}" is the start of several VIM ids`, { hint: 'give the whole id (vnfm vim-list -o wide)' });
    return prefixed[0] && toVim(prefixed[0]);
  }

  async get(ref: string): Promise<Vim> {
    const vim = await this.find(ref);
    if (!vim) throw new NotFoundError(`vim "${ref}" not found`, { hint: 'list the registered VIMs with: vnfm vim-list' });
    return vim;
  }

  async findDefault(): Promise<Vim | undefined> {
    const row = (await this.db.prepare('SELECT * FROM vims WHERE is_default = 1').get()) as VimRow | undefined;
    return row && toVim(row);
  }

  async count(): Promise<number> {
    return ((await this.db.prepare('SELECT count(*) AS n FROM vims').get()) as { n: number }).n;
  }

  async sealedSecrets(id: string): Promise<SealedSecrets | undefined> {
    const row = (await this.db.prepare('SELECT secrets_token AS token, secrets_key_id AS "keyId" FROM vims WHERE id = ?').get(id)) as
      { token: string | null; keyId: string | null } | undefined;
    return row?.token && row.keyId ? { token: row.token, keyId: row.keyId } : undefined;
  }

  /**
   * Inserts a VIM. When it is the default, the previous default stops being
   * one in the same transaction: there is never more than one.
   */
  async insert(vim: Vim, sealed: SealedSecrets | undefined): Promise<void> {
    await this.db
      .transaction(async () => {
        const row = toRow(vim, this.secrets ? await this.secrets.sealTokenForWrite(sealed) : sealed);
        await this.assertNameFree(vim.name);
        if (vim.isDefault) await this.db.prepare('UPDATE vims SET is_default = 0 WHERE is_default = 1').run();
        await this.db.prepare(`INSERT INTO vims (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => '@' + c).join(', ')})`).run(row);
      })
      .immediate();
  }

  /**
   * Replaces a VIM's row. `sealed`: new secrets, `null` to clear them,
   * `undefined` to keep the stored ones.
   */
  async update(vim: Vim, sealed?: SealedSecrets | null, opts: { readAt?: string } = {}): Promise<void> {
    const columns = COLUMNS.filter((c) => c !== 'id' && c !== 'created_at' && (sealed !== undefined || !c.startsWith('secrets_')));
    await this.db
      .transaction(async () => {
        const row = toRow(vim, (this.secrets && sealed ? await this.secrets.sealTokenForWrite(sealed) : sealed) ?? undefined);
        if (opts.readAt !== undefined) await this.assertUnchangedSince(vim, opts.readAt);
        await this.assertNameFree(vim.name, vim.id);
        if (vim.isDefault) await this.db.prepare('UPDATE vims SET is_default = 0 WHERE is_default = 1 AND id <> ?').run(vim.id);
        const result = await this.db.prepare(`UPDATE vims SET ${columns.map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`).run(row);
        if (result.changes === 0) throw new NotFoundError(`vim "${vim.name}" not found`);
      })
      .immediate();
  }

  /**
   * Compare-and-set for a read-modify-write: `readAt` is the updatedAt the
   * caller read. Another writer (another client of a shared store) that
   * changed the VIM since then is not overwritten: ConflictError.
   */
  private async assertUnchangedSince(vim: Vim, readAt: string): Promise<void> {
    const now = (await this.db.prepare('SELECT updated_at FROM vims WHERE id = ?').pluck().get(vim.id)) as string | undefined;
    if (now !== undefined && now !== readAt) {
      throw new ConflictError(`vim "${vim.name}" was changed by another command at ${now}, after this one read it: nothing was written`, {
        hint: `look at it again (vnfm vim-show ${vim.name}) and run the command again`,
      });
    }
  }

  /** Throws ConflictError when another VIM (not `exceptId`) has this name. */
  async assertNameFree(name: string, exceptId = ''): Promise<void> {
    if (await this.db.prepare('SELECT 1 FROM vims WHERE name = ? AND id <> ?').get(name, exceptId)) {
      throw new ConflictError(`vim "${name}" already exists`, {
        hint: `choose another name, or change the existing one with: vnfm vim-update ${name}`,
      });
    }
  }

  /** Deletes VIMs, all or none: refused while a VNF instance runs on one of them. */
  async deleteAll(ids: string[]): Promise<void> {
    await this.db
      .transaction(async () => {
        for (const id of ids) {
          const users = (await this.db.prepare('SELECT id, name FROM vnf_instances WHERE vim_id = ?').all(id)) as { id: string; name: string | null }[];
          if (users.length > 0) {
            const vim = (await this.db.prepare('SELECT name FROM vims WHERE id = ?').get(id)) as { name: string } | undefined;
            throw new ConflictError(`vim "${vim?.name ?? id}" is used by ${users.length} VNF instance(s): ${users.map((u) => u.name ?? u.id).join(', ')}`, {
              hint: 'terminate those instances first (vnfm vnf-terminate VNF)',
            });
          }
          await this.db.prepare('DELETE FROM vims WHERE id = ?').run(id);
        }
      })
      .immediate();
  }

  /** Ids of the master keys the stored secrets are encrypted under. */
  async secretKeyIds(): Promise<string[]> {
    const rows = (await this.db.prepare('SELECT DISTINCT secrets_key_id AS k FROM vims WHERE secrets_key_id IS NOT NULL').all()) as {
      k: string;
    }[];
    return rows.map((r) => r.k);
  }
}
