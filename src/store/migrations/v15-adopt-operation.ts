import type { Migration } from './index.js';
import { opListTriggers } from './v13-list-json-items.js';

/**
 * Migration 15: an occurrence may be an ADOPT (vnf-adopt, vnfm's own
 * operation). SQLite changes a CHECK only by rebuilding the table: it is
 * rebuilt as migration 12 left it, rowids kept (op-list orders by them and
 * its kept items name them), with its indexes and op-list's triggers made
 * again.
 */
export const adoptOperation: Migration = {
  version: 15,
  name: 'adopt-operation',
  rebuildsReferencedTables: true,
  sql: `
    CREATE TABLE lcm_op_occs_v15 (
      id                      TEXT PRIMARY KEY,
      vnf_instance_id         TEXT NOT NULL REFERENCES vnf_instances (id) ON DELETE CASCADE,
      operation               TEXT NOT NULL CHECK (operation IN
                                ('INSTANTIATE', 'SCALE', 'HEAL', 'TERMINATE', 'CHANGE_VNFPKG', 'MODIFY_INFO', 'CHANGE_EXT_CONN', 'ADOPT')),
      operation_state         TEXT NOT NULL CHECK (operation_state IN
                                ('STARTING', 'PROCESSING', 'COMPLETED', 'FAILED_TEMP', 'FAILED', 'ROLLING_BACK', 'ROLLED_BACK')),
      state_entered_time      TEXT NOT NULL,
      start_time              TEXT NOT NULL,
      error                   TEXT,
      is_automatic_invocation INTEGER NOT NULL DEFAULT 0 CHECK (is_automatic_invocation IN (0, 1)),
      pid                     INTEGER
    );
    INSERT INTO lcm_op_occs_v15 (rowid, id, vnf_instance_id, operation, operation_state, state_entered_time, start_time, error, is_automatic_invocation, pid)
      SELECT rowid, id, vnf_instance_id, operation, operation_state, state_entered_time, start_time, error, is_automatic_invocation, pid
      FROM lcm_op_occs ORDER BY rowid;
    DROP TABLE lcm_op_occs;
    ALTER TABLE lcm_op_occs_v15 RENAME TO lcm_op_occs;
    CREATE INDEX lcm_op_occs_instance ON lcm_op_occs (vnf_instance_id, start_time);
    CREATE INDEX lcm_op_occs_start    ON lcm_op_occs (start_time);
    CREATE INDEX lcm_op_occs_state    ON lcm_op_occs (operation_state, start_time);
    ${opListTriggers()}
  `,
  postgres: `
    ALTER TABLE lcm_op_occs DROP CONSTRAINT lcm_op_occs_operation_check,
      ADD CONSTRAINT lcm_op_occs_operation_check CHECK (operation IN
        ('INSTANTIATE', 'SCALE', 'HEAL', 'TERMINATE', 'CHANGE_VNFPKG', 'MODIFY_INFO', 'CHANGE_EXT_CONN', 'ADOPT'));
  `,
};
