/**
 * Ordered schema migrations. A migration is never edited once released:
 * later changes arrive as new entries. On SQLite `user_version` records the
 * last one applied; on PostgreSQL the table vnfm_schema does.
 *
 * Both backends go through the same numbered migrations. `postgres` holds a
 * migration's statements for PostgreSQL where SQLite's do not serve as they
 * are; PostgreSQL tables have a `rowid` identity column so that the
 * repositories' SQL (ordering by insertion, addressing a row) means the same
 * on both.
 */
import { listSideTables } from './v12-list-side-tables.js';
import { listJsonItems } from './v13-list-json-items.js';
import { journalSteps } from './v14-journal-steps.js';
import { adoptOperation } from './v15-adopt-operation.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** The statements on PostgreSQL, when they differ from `sql`. */
  postgres?: string;
  /**
   * SQLite: the migration rebuilds a table that other tables reference, so it
   * runs with foreign keys off (dropping the old table would otherwise delete
   * the rows that reference it) and checks them all before it commits.
   */
  rebuildsReferencedTables?: boolean;
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
    postgres: String.raw`
      CREATE TABLE vims (
        rowid          BIGINT GENERATED ALWAYS AS IDENTITY,
        id             TEXT PRIMARY KEY,
        name           TEXT NOT NULL UNIQUE,
        type           TEXT NOT NULL CHECK (type IN ('openstack', 'kubernetes')),
        description    TEXT NOT NULL DEFAULT '',
        is_default     INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
        auth_url       TEXT NOT NULL,
        project_name   TEXT,
        auth_method    TEXT NOT NULL,
        verify_tls     INTEGER NOT NULL CHECK (verify_tls IN (0, 1)),
        settings       TEXT NOT NULL DEFAULT '{}',
        secret_names   TEXT NOT NULL DEFAULT '[]',
        secrets_token  TEXT,
        secrets_key_id TEXT,
        status         TEXT NOT NULL,
        created_at     TEXT NOT NULL,
        updated_at     TEXT NOT NULL
      );
      CREATE UNIQUE INDEX vims_single_default ON vims (is_default) WHERE is_default = 1;

      -- SQLite's GLOB pattern (*, ?, [...], [^...]; case-sensitive) as an anchored regular expression, for name filters
      CREATE FUNCTION vnfm_glob_regex(pattern TEXT) RETURNS TEXT LANGUAGE plpgsql IMMUTABLE STRICT AS $$
      DECLARE
        out TEXT := '^';
        i   INTEGER := 1;
        j   INTEGER;
        c   TEXT;
      BEGIN
        WHILE i <= length(pattern) LOOP
          c := substr(pattern, i, 1);
          IF c = '*' THEN
            out := out || '.*';
          ELSIF c = '?' THEN
            out := out || '.';
          ELSIF c = '[' AND position(']' IN substr(pattern, i + 2)) > 0 THEN
            j := position(']' IN substr(pattern, i + 2));
            out := out || '[' || replace(substr(pattern, i + 1, j), '\', '\\') || ']';
            i := i + j + 1;
          ELSE
            out := out || regexp_replace(c, '([^A-Za-z0-9_])', '\\\1');
          END IF;
          i := i + 1;
        END LOOP;
        RETURN out || '$';
      END
      $$;
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
    postgres: `
      CREATE TABLE vnf_packages (
        rowid             BIGINT GENERATED ALWAYS AS IDENTITY,
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
        size_bytes        BIGINT NOT NULL,
        summary           TEXT NOT NULL DEFAULT '{}',
        created_at        TEXT NOT NULL,
        updated_at        TEXT NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'vnf-instances-and-lcm-op-occs',
    sql: `
      CREATE TABLE vnf_instances (
        id                    TEXT PRIMARY KEY,
        name                  TEXT,
        description           TEXT NOT NULL DEFAULT '',
        vnfd_id               TEXT NOT NULL,
        vnf_pkg_id            TEXT NOT NULL REFERENCES vnf_packages (id) ON DELETE RESTRICT,
        vnf_provider          TEXT NOT NULL DEFAULT '',
        vnf_product_name      TEXT NOT NULL DEFAULT '',
        vnf_software_version  TEXT NOT NULL DEFAULT '',
        vnfd_version          TEXT NOT NULL DEFAULT '',
        instantiation_state   TEXT NOT NULL CHECK (instantiation_state IN ('NOT_INSTANTIATED', 'INSTANTIATED')),
        vim_id                TEXT REFERENCES vims (id) ON DELETE RESTRICT,
        -- the request's vimConnectionInfo without its secrets (for an inline VIM, which has no vims row)
        vim_connection_info   TEXT,
        -- flavour, scale status, VNFCs, resources created, namespace and definition files
        instantiated_vnf_info TEXT,
        created_at            TEXT NOT NULL,
        updated_at            TEXT NOT NULL
      );
      CREATE INDEX vnf_instances_pkg ON vnf_instances (vnf_pkg_id);

      CREATE TABLE lcm_op_occs (
        id                      TEXT PRIMARY KEY,
        vnf_instance_id         TEXT NOT NULL REFERENCES vnf_instances (id) ON DELETE CASCADE,
        operation               TEXT NOT NULL CHECK (operation IN ('INSTANTIATE', 'SCALE', 'HEAL', 'TERMINATE', 'CHANGE_VNFPKG')),
        operation_state         TEXT NOT NULL CHECK (operation_state IN
                                  ('STARTING', 'PROCESSING', 'COMPLETED', 'FAILED_TEMP', 'FAILED', 'ROLLING_BACK', 'ROLLED_BACK')),
        state_entered_time      TEXT NOT NULL,
        start_time              TEXT NOT NULL,
        operation_params        TEXT NOT NULL DEFAULT '{}',
        error                   TEXT,
        resource_changes        TEXT,
        journal                 TEXT NOT NULL DEFAULT '[]',
        -- the instance as it was before the operation, for rollback
        prior_state             TEXT,
        is_automatic_invocation INTEGER NOT NULL DEFAULT 0 CHECK (is_automatic_invocation IN (0, 1)),
        pid                     INTEGER
      );
      CREATE INDEX lcm_op_occs_instance ON lcm_op_occs (vnf_instance_id, start_time);

      CREATE TABLE vnf_locks (
        vnf_instance_id TEXT PRIMARY KEY REFERENCES vnf_instances (id) ON DELETE CASCADE,
        op_id           TEXT NOT NULL REFERENCES lcm_op_occs (id) ON DELETE CASCADE,
        pid             INTEGER NOT NULL,
        acquired_at     TEXT NOT NULL
      );
    `,
    postgres: `
      CREATE TABLE vnf_instances (
        rowid                 BIGINT GENERATED ALWAYS AS IDENTITY,
        id                    TEXT PRIMARY KEY,
        name                  TEXT,
        description           TEXT NOT NULL DEFAULT '',
        vnfd_id               TEXT NOT NULL,
        vnf_pkg_id            TEXT NOT NULL REFERENCES vnf_packages (id) ON DELETE RESTRICT,
        vnf_provider          TEXT NOT NULL DEFAULT '',
        vnf_product_name      TEXT NOT NULL DEFAULT '',
        vnf_software_version  TEXT NOT NULL DEFAULT '',
        vnfd_version          TEXT NOT NULL DEFAULT '',
        instantiation_state   TEXT NOT NULL CHECK (instantiation_state IN ('NOT_INSTANTIATED', 'INSTANTIATED')),
        vim_id                TEXT REFERENCES vims (id) ON DELETE RESTRICT,
        vim_connection_info   TEXT,
        instantiated_vnf_info TEXT,
        created_at            TEXT NOT NULL,
        updated_at            TEXT NOT NULL
      );
      CREATE INDEX vnf_instances_pkg ON vnf_instances (vnf_pkg_id);

      CREATE TABLE lcm_op_occs (
        rowid                   BIGINT GENERATED ALWAYS AS IDENTITY,
        id                      TEXT PRIMARY KEY,
        vnf_instance_id         TEXT NOT NULL REFERENCES vnf_instances (id) ON DELETE CASCADE,
        operation               TEXT NOT NULL CONSTRAINT lcm_op_occs_operation_check CHECK (operation IN ('INSTANTIATE', 'SCALE', 'HEAL', 'TERMINATE', 'CHANGE_VNFPKG')),
        operation_state         TEXT NOT NULL CHECK (operation_state IN
                                  ('STARTING', 'PROCESSING', 'COMPLETED', 'FAILED_TEMP', 'FAILED', 'ROLLING_BACK', 'ROLLED_BACK')),
        state_entered_time      TEXT NOT NULL,
        start_time              TEXT NOT NULL,
        operation_params        TEXT NOT NULL DEFAULT '{}',
        error                   TEXT,
        resource_changes        TEXT,
        journal                 TEXT NOT NULL DEFAULT '[]',
        prior_state             TEXT,
        is_automatic_invocation INTEGER NOT NULL DEFAULT 0 CHECK (is_automatic_invocation IN (0, 1)),
        pid                     INTEGER
      );
      CREATE INDEX lcm_op_occs_instance ON lcm_op_occs (vnf_instance_id, start_time);

      CREATE TABLE vnf_locks (
        rowid           BIGINT GENERATED ALWAYS AS IDENTITY,
        vnf_instance_id TEXT PRIMARY KEY REFERENCES vnf_instances (id) ON DELETE CASCADE,
        op_id           TEXT NOT NULL REFERENCES lcm_op_occs (id) ON DELETE CASCADE,
        pid             INTEGER NOT NULL,
        acquired_at     TEXT NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'ssh-host-keys',
    sql: `
      -- SSH host keys pinned on first use, per server (the VNFC's resource id at the VIM)
      CREATE TABLE ssh_host_keys (
        server_id   TEXT PRIMARY KEY,
        address     TEXT NOT NULL,
        key_type    TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        pinned_at   TEXT NOT NULL
      );
    `,
    postgres: `
      CREATE TABLE ssh_host_keys (
        rowid       BIGINT GENERATED ALWAYS AS IDENTITY,
        server_id   TEXT PRIMARY KEY,
        address     TEXT NOT NULL,
        key_type    TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        pinned_at   TEXT NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: 'store-locks-and-master-key',
    sql: `
      -- store-wide exclusive locks (a master key rotation), with who holds them (as vnf_locks: host, boot, pid, start time)
      CREATE TABLE store_locks (
        name        TEXT PRIMARY KEY,
        pid         INTEGER NOT NULL,
        host_name   TEXT,
        host_id     TEXT,
        boot_id     TEXT,
        start_time  TEXT,
        acquired_at TEXT NOT NULL
      );
      -- store-wide settings; 'master_key_id': the id of the master key new secrets are sealed under
      CREATE TABLE store_settings (
        name  TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
  {
    version: 6,
    name: 'vnf-lock-holders',
    sql: `
      -- who holds an instance's lock, beyond its pid: the host (machine id and pid namespace; its name for messages),
      -- the boot, and the process's start time, so a reused pid is not taken for the holder
      ALTER TABLE vnf_locks ADD COLUMN host_name  TEXT;
      ALTER TABLE vnf_locks ADD COLUMN host_id    TEXT;
      ALTER TABLE vnf_locks ADD COLUMN boot_id    TEXT;
      ALTER TABLE vnf_locks ADD COLUMN start_time TEXT;
    `,
  },
  {
    version: 7,
    name: 'modify-vnf-information',
    sql: `
      -- SOL003 VnfInstance attributes a modification (MODIFY_INFO) sets: JSON objects
      ALTER TABLE vnf_instances ADD COLUMN metadata                    TEXT;
      ALTER TABLE vnf_instances ADD COLUMN extensions                  TEXT;
      ALTER TABLE vnf_instances ADD COLUMN vnf_configurable_properties TEXT;

      -- the operation CHECK gains MODIFY_INFO and CHANGE_EXT_CONN: SQLite changes a CHECK only by rebuilding the table.
      -- Dropping the old table cascades to vnf_locks, so the locks are kept aside and put back.
      CREATE TEMP TABLE vnf_locks_v7 AS SELECT * FROM vnf_locks;
      CREATE TABLE lcm_op_occs_v7 (
        id                      TEXT PRIMARY KEY,
        vnf_instance_id         TEXT NOT NULL REFERENCES vnf_instances (id) ON DELETE CASCADE,
        operation               TEXT NOT NULL CHECK (operation IN
                                  ('INSTANTIATE', 'SCALE', 'HEAL', 'TERMINATE', 'CHANGE_VNFPKG', 'MODIFY_INFO', 'CHANGE_EXT_CONN')),
        operation_state         TEXT NOT NULL CHECK (operation_state IN
                                  ('STARTING', 'PROCESSING', 'COMPLETED', 'FAILED_TEMP', 'FAILED', 'ROLLING_BACK', 'ROLLED_BACK')),
        state_entered_time      TEXT NOT NULL,
        start_time              TEXT NOT NULL,
        operation_params        TEXT NOT NULL DEFAULT '{}',
        error                   TEXT,
        resource_changes        TEXT,
        journal                 TEXT NOT NULL DEFAULT '[]',
        prior_state             TEXT,
        is_automatic_invocation INTEGER NOT NULL DEFAULT 0 CHECK (is_automatic_invocation IN (0, 1)),
        pid                     INTEGER
      );
      INSERT INTO lcm_op_occs_v7 SELECT * FROM lcm_op_occs;
      DROP TABLE lcm_op_occs;
      ALTER TABLE lcm_op_occs_v7 RENAME TO lcm_op_occs;
      CREATE INDEX lcm_op_occs_instance ON lcm_op_occs (vnf_instance_id, start_time);
      INSERT INTO vnf_locks SELECT * FROM vnf_locks_v7;
      DROP TABLE vnf_locks_v7;
    `,
    postgres: `
      ALTER TABLE vnf_instances ADD COLUMN metadata                    TEXT;
      ALTER TABLE vnf_instances ADD COLUMN extensions                  TEXT;
      ALTER TABLE vnf_instances ADD COLUMN vnf_configurable_properties TEXT;
      ALTER TABLE lcm_op_occs DROP CONSTRAINT lcm_op_occs_operation_check,
        ADD CONSTRAINT lcm_op_occs_operation_check CHECK (operation IN
          ('INSTANTIATE', 'SCALE', 'HEAL', 'TERMINATE', 'CHANGE_VNFPKG', 'MODIFY_INFO', 'CHANGE_EXT_CONN'));
    `,
  },
  {
    version: 8,
    name: 'list-filter-indexes',
    sql: `
      -- what vnf-list and op-list filter and order on (--state, --vim, --name; --state, --since/--until, oldest first)
      CREATE INDEX vnf_instances_state ON vnf_instances (instantiation_state);
      CREATE INDEX vnf_instances_vim   ON vnf_instances (vim_id);
      CREATE INDEX vnf_instances_name  ON vnf_instances (name);
      CREATE INDEX lcm_op_occs_start   ON lcm_op_occs (start_time);
      CREATE INDEX lcm_op_occs_state   ON lcm_op_occs (operation_state, start_time);
    `,
  },
  {
    version: 9,
    name: 'operation-leases',
    sql: `
      -- an operation's lock (and a store lock: a key rotation's) is a lease: its holder writes heartbeat_at while it
      -- runs and moves lease_expires_at on; past lease_expires_at, any client (on any machine) may take the holder for gone
      ALTER TABLE vnf_locks ADD COLUMN heartbeat_at     TEXT;
      ALTER TABLE vnf_locks ADD COLUMN lease_expires_at TEXT;
      ALTER TABLE store_locks ADD COLUMN heartbeat_at     TEXT;
      ALTER TABLE store_locks ADD COLUMN lease_expires_at TEXT;
    `,
  },
  {
    version: 10,
    name: 'instance-list-order',
    sql: `
      -- vnf-list's order (oldest first), so -o json reads 10 000 instances in pages without sorting them for each
      CREATE INDEX vnf_instances_created ON vnf_instances (created_at, id);
    `,
  },
  {
    version: 11,
    name: 'package-contents',
    sql: `
      -- an onboarded package's CSAR zip in the shared store (on SQLite these stay empty: the package directory under
      -- VNFM_HOME is the only copy). Written in chunks before the package's record; complete = 1 in the transaction that
      -- inserts the record, so an upload that was killed is never taken for a package. updated_at moves while it runs.
      CREATE TABLE package_contents (
        package_id  TEXT PRIMARY KEY,
        size_bytes  INTEGER NOT NULL DEFAULT 0,
        sha256      TEXT,
        chunk_count INTEGER NOT NULL DEFAULT 0,
        complete    INTEGER NOT NULL DEFAULT 0 CHECK (complete IN (0, 1)),
        updated_at  TEXT NOT NULL
      );
      CREATE TABLE package_content_chunks (
        package_id TEXT NOT NULL REFERENCES package_contents (package_id) ON DELETE CASCADE,
        seq        INTEGER NOT NULL,
        data       BLOB NOT NULL,
        PRIMARY KEY (package_id, seq)
      );
    `,
    postgres: `
      CREATE TABLE package_contents (
        rowid       BIGINT GENERATED ALWAYS AS IDENTITY,
        package_id  TEXT PRIMARY KEY,
        size_bytes  BIGINT NOT NULL DEFAULT 0,
        sha256      TEXT,
        chunk_count INTEGER NOT NULL DEFAULT 0,
        complete    INTEGER NOT NULL DEFAULT 0 CHECK (complete IN (0, 1)),
        updated_at  TEXT NOT NULL
      );
      -- the chunks are already compressed (a zip): stored as they are, out of line
      CREATE TABLE package_content_chunks (
        rowid      BIGINT GENERATED ALWAYS AS IDENTITY,
        package_id TEXT NOT NULL REFERENCES package_contents (package_id) ON DELETE CASCADE,
        seq        INTEGER NOT NULL,
        data       BYTEA NOT NULL,
        PRIMARY KEY (package_id, seq)
      );
      ALTER TABLE package_content_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
    `,
  },
  listSideTables,
  listJsonItems,
  journalSteps,
  adoptOperation,
];
