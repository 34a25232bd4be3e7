/**
 * Ordered schema migrations. A migration is never edited once released:
 * later changes arrive as new entries. `user_version` records the last one
 * applied.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'vims',
    sql: `
      CREATE TABLE vims (
        id             TEXT PRIMARY KEY,
        name           TEXT NOT NULL UNIQUE,
        type           TEXT NOT NULL CHECK (type IN ('openstack', 'kubernetes')),
        description    TEXT NOT NULL DEFAULT '',
        is_default     INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
        auth_url       TEXT NOT NULL,
        project_name   TEXT,
        auth_method    TEXT NOT NULL,
        verify_tls     INTEGER NOT NULL CHECK (verify_tls IN (0, 1)),
        -- driver-specific, non-secret settings (user names, domains, region, OIDC URL, extra)
        settings       TEXT NOT NULL DEFAULT '{}',
        secret_names   TEXT NOT NULL DEFAULT '[]',
        -- one Fernet token holding every secret of the VIM, and the id of the key it is under
        secrets_token  TEXT,
        secrets_key_id TEXT,
        status         TEXT NOT NULL,
        created_at     TEXT NOT NULL,
        updated_at     TEXT NOT NULL
      );
      CREATE UNIQUE INDEX vims_single_default ON vims (is_default) WHERE is_default = 1;
    `,
  },
];
