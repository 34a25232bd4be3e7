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
  {
    version: 2,
    name: 'vnf-packages',
    sql: `
      CREATE TABLE vnf_packages (
        id                TEXT PRIMARY KEY,
        name              TEXT UNIQUE,
        vnfd_id           TEXT NOT NULL UNIQUE,
        vnf_provider      TEXT NOT NULL DEFAULT '',
        vnf_product_name  TEXT NOT NULL DEFAULT '',
        vnf_software_version TEXT NOT NULL DEFAULT '',
        vnfd_version      TEXT NOT NULL DEFAULT '',
        onboarding_state  TEXT NOT NULL CHECK (onboarding_state IN ('CREATED', 'UPLOADING', 'PROCESSING', 'ONBOARDED', 'ERROR')),
        operational_state TEXT NOT NULL CHECK (operational_state IN ('ENABLED', 'DISABLED')),
        usage_state       TEXT NOT NULL CHECK (usage_state IN ('IN_USE', 'NOT_IN_USE')),
        user_defined_data TEXT NOT NULL DEFAULT '{}',
        checksum_algorithm TEXT NOT NULL,
        checksum_hash     TEXT NOT NULL,
        size_bytes        INTEGER NOT NULL,
        -- what vnfpkg-show prints: flavours, VDUs, aspects, levels, hooks, artifacts (derived from the VNFD)
        summary           TEXT NOT NULL DEFAULT '{}',
        created_at        TEXT NOT NULL,
        updated_at        TEXT NOT NULL
      );
    `,
  },
];
