import type { Migration } from './index.js';

/** Migration 12: the large JSON columns of instances and operations move to side tables (see the SQL). */
export const listSideTables: Migration = {
  version: 12,
  name: 'list-side-tables',
  rebuildsReferencedTables: true,
  sql: `
    -- The large JSON columns (an instance's info, an operation's request, journal and prior state) move to side
    -- tables keyed by id, so the rows vnf-list and op-list read for a table stay small and packed: a list of 10 000
    -- no longer reads a page per row. vnfc_count keeps what vnf-list's VNFC column shows. The two tables are rebuilt
    -- (not altered) so that their pages are packed at once; rowids are kept (op-list orders by them, and a sealed
    -- value's place names them).
    CREATE TABLE vnf_instances_v12 (
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
      -- the length of instantiatedVnfInfo.vnfcInfo (NULL without it)
      vnfc_count            INTEGER,
      created_at            TEXT NOT NULL,
      updated_at            TEXT NOT NULL
    );
    INSERT INTO vnf_instances_v12 (rowid, id, name, description, vnfd_id, vnf_pkg_id, vnf_provider, vnf_product_name, vnf_software_version,
                                   vnfd_version, instantiation_state, vim_id, vim_connection_info, vnfc_count, created_at, updated_at)
      SELECT rowid, id, name, description, vnfd_id, vnf_pkg_id, vnf_provider, vnf_product_name, vnf_software_version,
             vnfd_version, instantiation_state, vim_id, vim_connection_info, json_array_length(instantiated_vnf_info, '$.vnfcInfo'), created_at, updated_at
      FROM vnf_instances ORDER BY rowid;
    CREATE TABLE vnf_instance_details (
      id                          TEXT PRIMARY KEY REFERENCES vnf_instances (id) ON DELETE CASCADE,
      instantiated_vnf_info       TEXT,
      metadata                    TEXT,
      extensions                  TEXT,
      vnf_configurable_properties TEXT
    );
    INSERT INTO vnf_instance_details (id, instantiated_vnf_info, metadata, extensions, vnf_configurable_properties)
      SELECT id, instantiated_vnf_info, metadata, extensions, vnf_configurable_properties FROM vnf_instances ORDER BY rowid;
    DROP TABLE vnf_instances;
    ALTER TABLE vnf_instances_v12 RENAME TO vnf_instances;
    CREATE INDEX vnf_instances_pkg     ON vnf_instances (vnf_pkg_id);
    CREATE INDEX vnf_instances_state   ON vnf_instances (instantiation_state);
    CREATE INDEX vnf_instances_vim     ON vnf_instances (vim_id);
    CREATE INDEX vnf_instances_name    ON vnf_instances (name);
    CREATE INDEX vnf_instances_created ON vnf_instances (created_at, id);

    CREATE TABLE lcm_op_occs_v12 (
      id                      TEXT PRIMARY KEY,
      vnf_instance_id         TEXT NOT NULL REFERENCES vnf_instances (id) ON DELETE CASCADE,
      operation               TEXT NOT NULL CHECK (operation IN
                                ('INSTANTIATE', 'SCALE', 'HEAL', 'TERMINATE', 'CHANGE_VNFPKG', 'MODIFY_INFO', 'CHANGE_EXT_CONN')),
      operation_state         TEXT NOT NULL CHECK (operation_state IN
                                ('STARTING', 'PROCESSING', 'COMPLETED', 'FAILED_TEMP', 'FAILED', 'ROLLING_BACK', 'ROLLED_BACK')),
      state_entered_time      TEXT NOT NULL,
      start_time              TEXT NOT NULL,
      error                   TEXT,
      is_automatic_invocation INTEGER NOT NULL DEFAULT 0 CHECK (is_automatic_invocation IN (0, 1)),
      pid                     INTEGER
    );
    INSERT INTO lcm_op_occs_v12 (rowid, id, vnf_instance_id, operation, operation_state, state_entered_time, start_time, error, is_automatic_invocation, pid)
      SELECT rowid, id, vnf_instance_id, operation, operation_state, state_entered_time, start_time, error, is_automatic_invocation, pid
      FROM lcm_op_occs ORDER BY rowid;
    CREATE TABLE lcm_op_occ_details (
      id               TEXT PRIMARY KEY REFERENCES lcm_op_occs (id) ON DELETE CASCADE,
      operation_params TEXT NOT NULL DEFAULT '{}',
      resource_changes TEXT,
      journal          TEXT NOT NULL DEFAULT '[]'
    );
    INSERT INTO lcm_op_occ_details (id, operation_params, resource_changes, journal)
      SELECT id, operation_params, resource_changes, journal FROM lcm_op_occs ORDER BY start_time, rowid;
    -- the instance as it was before the operation, for rollback: read by nothing else
    CREATE TABLE lcm_op_occ_prior_states (
      id          TEXT PRIMARY KEY REFERENCES lcm_op_occs (id) ON DELETE CASCADE,
      prior_state TEXT NOT NULL
    );
    INSERT INTO lcm_op_occ_prior_states (id, prior_state)
      SELECT id, prior_state FROM lcm_op_occs WHERE prior_state IS NOT NULL ORDER BY start_time, rowid;
    DROP TABLE lcm_op_occs;
    ALTER TABLE lcm_op_occs_v12 RENAME TO lcm_op_occs;
    CREATE INDEX lcm_op_occs_instance ON lcm_op_occs (vnf_instance_id, start_time);
    CREATE INDEX lcm_op_occs_start    ON lcm_op_occs (start_time);
    CREATE INDEX lcm_op_occs_state    ON lcm_op_occs (operation_state, start_time);
  `,
  postgres: `
    CREATE TABLE vnf_instance_details (
      rowid                       BIGINT GENERATED ALWAYS AS IDENTITY,
      id                          TEXT PRIMARY KEY REFERENCES vnf_instances (id) ON DELETE CASCADE,
      instantiated_vnf_info       TEXT,
      metadata                    TEXT,
      extensions                  TEXT,
      vnf_configurable_properties TEXT
    );
    INSERT INTO vnf_instance_details (id, instantiated_vnf_info, metadata, extensions, vnf_configurable_properties)
      SELECT id, instantiated_vnf_info, metadata, extensions, vnf_configurable_properties FROM vnf_instances ORDER BY rowid;
    ALTER TABLE vnf_instances ADD COLUMN vnfc_count INTEGER;
    UPDATE vnf_instances SET vnfc_count = CASE
        WHEN instantiated_vnf_info::json -> 'vnfcInfo' IS NULL THEN NULL
        WHEN json_typeof(instantiated_vnf_info::json -> 'vnfcInfo') = 'array' THEN json_array_length(instantiated_vnf_info::json -> 'vnfcInfo')
        ELSE 0 END
      WHERE instantiated_vnf_info IS NOT NULL;
    ALTER TABLE vnf_instances DROP COLUMN instantiated_vnf_info, DROP COLUMN metadata, DROP COLUMN extensions, DROP COLUMN vnf_configurable_properties;

    CREATE TABLE lcm_op_occ_details (
      rowid            BIGINT GENERATED ALWAYS AS IDENTITY,
      id               TEXT PRIMARY KEY REFERENCES lcm_op_occs (id) ON DELETE CASCADE,
      operation_params TEXT NOT NULL DEFAULT '{}',
      resource_changes TEXT,
      journal          TEXT NOT NULL DEFAULT '[]'
    );
    INSERT INTO lcm_op_occ_details (id, operation_params, resource_changes, journal)
      SELECT id, operation_params, resource_changes, journal FROM lcm_op_occs ORDER BY start_time, rowid;
    CREATE TABLE lcm_op_occ_prior_states (
      rowid       BIGINT GENERATED ALWAYS AS IDENTITY,
      id          TEXT PRIMARY KEY REFERENCES lcm_op_occs (id) ON DELETE CASCADE,
      prior_state TEXT NOT NULL
    );
    INSERT INTO lcm_op_occ_prior_states (id, prior_state)
      SELECT id, prior_state FROM lcm_op_occs WHERE prior_state IS NOT NULL ORDER BY start_time, rowid;
    ALTER TABLE lcm_op_occs DROP COLUMN operation_params, DROP COLUMN resource_changes, DROP COLUMN journal, DROP COLUMN prior_state;
  `,
};
