import type { Migration } from './index.js';

/** An instance's item of vnf-list's default -o json, from the row `r` (NEW in a trigger, each row in the fill). */
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

/** A kept list: its table, the table whose rows it follows, the two keys it is ordered by, and what an item shows. */
interface KeptList {
  table: string;
  source: string;
  /** The two key columns, each with its SQL type and its value in a row `r` of the source. */
  keys: [name: string, type: string, of: (r: string) => string][];
  item: (r: string) => string;
  /** The source's columns the item shows: an update of any of them writes the item again. */
  shown: string;
}

/** The table of a list's kept items, filled from the rows there are, and the triggers that keep it with every write. */
function keptList(k: KeptList): string {
  const names = k.keys.map(([name]) => name).join(', ');
  const values = (r: string) => k.keys.map(([, , of]) => of(r)).join(', ');
  return `
    CREATE TABLE ${k.table} (
      ${k.keys.map(([name, type]) => `${name} ${type} NOT NULL,`).join('\n      ')}
      item TEXT NOT NULL,
      PRIMARY KEY (${names})
    ) WITHOUT ROWID;
    INSERT INTO ${k.table} (${names}, item) SELECT ${values('r')}, ${k.item('r')} FROM ${k.source} r;${keptListTriggers(k)}`;
}

/** The triggers that keep a list's items with every write of its source table (made again when that table is rebuilt). */
function keptListTriggers(k: KeptList): string {
  const names = k.keys.map(([name]) => name).join(', ');
  const values = (r: string) => k.keys.map(([, , of]) => of(r)).join(', ');
  const matches = (r: string) => k.keys.map(([name, , of]) => `${name} = ${of(r)}`).join(' AND ');
  const insert = `INSERT INTO ${k.table} (${names}, item) VALUES (${values('NEW')}, ${k.item('NEW')});`;
  return `
    CREATE TRIGGER ${k.table}_insert AFTER INSERT ON ${k.source} BEGIN
      ${insert}
    END;
    CREATE TRIGGER ${k.table}_update AFTER UPDATE OF ${k.shown} ON ${k.source} BEGIN
      DELETE FROM ${k.table} WHERE ${matches('OLD')};
      ${insert}
    END;
    CREATE TRIGGER ${k.table}_delete AFTER DELETE ON ${k.source} BEGIN
      DELETE FROM ${k.table} WHERE ${matches('OLD')};
    END;`;
}

/** op-list's kept items. */
const opList: KeptList = {
  table: 'lcm_op_occ_json_items',
  source: 'lcm_op_occs',
  keys: [
    ['start_time', 'TEXT', (r) => `${r}.start_time`],
    ['row_id', 'INTEGER', (r) => `${r}.rowid`],
  ],
  item: opItem,
  shown: 'id, operation_state, state_entered_time, start_time, vnf_instance_id, operation, is_automatic_invocation',
};

/** The triggers of op-list's kept items, for a migration that rebuilds lcm_op_occs (its triggers go with the old table). */
export const opListTriggers = (): string => keptListTriggers(opList);

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
  sql: [
    // vnf-list -o json's items, in its order (oldest first)
    keptList({
      table: 'vnf_instance_json_items',
      source: 'vnf_instances',
      keys: [
        ['created_at', 'TEXT', (r) => `${r}.created_at`],
        ['id', 'TEXT', (r) => `${r}.id`],
      ],
      item: instanceItem,
      shown: 'id, name, description, vnfd_id, vnf_pkg_id, vnf_provider, vnf_product_name, vnf_software_version, vnfd_version, instantiation_state, vim_id, created_at, updated_at',
    }),
    // op-list -o json's items, in its order (by start time, then as recorded)
    keptList(opList),
  ].join('\n'),
  postgres: `
    -- nothing: on PostgreSQL the lists' items are built as they are read
    SELECT 1;
  `,
};
