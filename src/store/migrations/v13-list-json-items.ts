import type { Migration } from './index.js';

/** An instance's item of vnf-list's default -o json, from the row `r` (NEW or OLD in a trigger, i in the fill). */
const instanceItem = (r: string) => `'  {
    "id": ' || json_quote(${r}.id) || ',
' || CASE WHEN ${r}.name IS NULL OR ${r}.name = '' THEN '' ELSE '    "vnfInstanceName": ' || json_quote(${r}.name) || ',
' END || '    "vnfInstanceDescription": ' || json_quote(${r}.description) || ',
    "vnfdId": ' || json_quote(${r}.vnfd_id) || ',
    "vnfPkgId": ' || json_quote(${r}.vnf_pkg_id) || ',
    "vnfProvider": ' || json_quote(${r}.vnf_provider) || ',
    "vnfProductName": ' || json_quote(${r}.vnf_product_name) || ',
    "vnfSoftwareVersion": ' || json_quote(${r}.vnf_software_version) || ',
    "vnfdVersion": ' || json_quote(${r}.vnfd_version) || ',
    "instantiationState": ' || json_quote(${r}.instantiation_state) || ',
' || CASE WHEN ${r}.vim_id IS NULL OR ${r}.vim_id = '' THEN '' ELSE '    "vimId": ' || json_quote(${r}.vim_id) || ',
' END || '    "createdAt": ' || json_quote(${r}.created_at) || ',
    "updatedAt": ' || json_quote(${r}.updated_at) || '
  }'`;

/** An operation's item of op-list's default -o json. */
const opItem = (r: string) => `'  {
    "id": ' || json_quote(${r}.id) || ',
    "operationState": ' || json_quote(${r}.operation_state) || ',
    "stateEnteredTime": ' || json_quote(${r}.state_entered_time) || ',
    "startTime": ' || json_quote(${r}.start_time) || ',
    "vnfInstanceId": ' || json_quote(${r}.vnf_instance_id) || ',
    "operation": ' || json_quote(${r}.operation) || ',
    "isAutomaticInvocation": ' || CASE WHEN ${r}.is_automatic_invocation = 1 THEN 'true' ELSE 'false' END || ',
    "isCancelPending": false
  }'`;

const INSTANCE_ITEM_COLUMNS =
  'id, name, description, vnfd_id, vnf_pkg_id, vnf_provider, vnf_product_name, vnf_software_version, vnfd_version, instantiation_state, vim_id, created_at, updated_at';
const OP_ITEM_COLUMNS = 'id, operation_state, state_entered_time, start_time, vnf_instance_id, operation, is_automatic_invocation';

/**
 * Migration 13: each instance's and each operation's item of a list's
 * default -o json (its simple attributes, as JSON.stringify(items, null, 2)
 * prints an item of the list), kept ready in the list's order by triggers on
 * every write, so vnf-list -o json and op-list -o json over thousands read
 * text instead of building it. SQLite only: the PostgreSQL store builds the
 * items as it reads them. The text is the one the repositories' SIMPLE_JSON
 * builds (test/unit/list-json-items.test.ts holds them equal); a change to
 * either comes with a migration that redefines the triggers and fills the
 * tables again.
 */
export const listJsonItems: Migration = {
  version: 13,
  name: 'list-json-items',
  sql: `
    -- vnf-list -o json's items, in its order (oldest first)
    CREATE TABLE vnf_instance_json_items (
      created_at TEXT NOT NULL,
      id         TEXT NOT NULL,
      item       TEXT NOT NULL,
      PRIMARY KEY (created_at, id)
    ) WITHOUT ROWID;
    INSERT INTO vnf_instance_json_items (created_at, id, item) SELECT i.created_at, i.id, ${instanceItem('i')} FROM vnf_instances i;
    CREATE TRIGGER vnf_instance_json_item_insert AFTER INSERT ON vnf_instances BEGIN
      INSERT INTO vnf_instance_json_items (created_at, id, item) VALUES (NEW.created_at, NEW.id, ${instanceItem('NEW')});
    END;
    CREATE TRIGGER vnf_instance_json_item_update AFTER UPDATE OF ${INSTANCE_ITEM_COLUMNS} ON vnf_instances BEGIN
      DELETE FROM vnf_instance_json_items WHERE created_at = OLD.created_at AND id = OLD.id;
      INSERT INTO vnf_instance_json_items (created_at, id, item) VALUES (NEW.created_at, NEW.id, ${instanceItem('NEW')});
    END;
    CREATE TRIGGER vnf_instance_json_item_delete AFTER DELETE ON vnf_instances BEGIN
      DELETE FROM vnf_instance_json_items WHERE created_at = OLD.created_at AND id = OLD.id;
    END;

    -- op-list -o json's items, in its order (by start time, then as recorded)
    CREATE TABLE lcm_op_occ_json_items (
      start_time TEXT NOT NULL,
      row_id     INTEGER NOT NULL,
      item       TEXT NOT NULL,
      PRIMARY KEY (start_time, row_id)
    ) WITHOUT ROWID;
    INSERT INTO lcm_op_occ_json_items (start_time, row_id, item) SELECT o.start_time, o.rowid, ${opItem('o')} FROM lcm_op_occs o;
    CREATE TRIGGER lcm_op_occ_json_item_insert AFTER INSERT ON lcm_op_occs BEGIN
      INSERT INTO lcm_op_occ_json_items (start_time, row_id, item) VALUES (NEW.start_time, NEW.rowid, ${opItem('NEW')});
    END;
    CREATE TRIGGER lcm_op_occ_json_item_update AFTER UPDATE OF ${OP_ITEM_COLUMNS} ON lcm_op_occs BEGIN
      DELETE FROM lcm_op_occ_json_items WHERE start_time = OLD.start_time AND row_id = OLD.rowid;
      INSERT INTO lcm_op_occ_json_items (start_time, row_id, item) VALUES (NEW.start_time, NEW.rowid, ${opItem('NEW')});
    END;
    CREATE TRIGGER lcm_op_occ_json_item_delete AFTER DELETE ON lcm_op_occs BEGIN
      DELETE FROM lcm_op_occ_json_items WHERE start_time = OLD.start_time AND row_id = OLD.rowid;
    END;
  `,
  postgres: `
    -- nothing: on PostgreSQL the lists' items are built as they are read
    SELECT 1;
  `,
};
