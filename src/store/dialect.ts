/**
 * Where SQLite's SQL and PostgreSQL's differ, as functions the repositories
 * call when they build a statement: each gives the text its database reads.
 * Everything else is written once in the SQL both read (`IS NOT DISTINCT
 * FROM`, `string_agg`, `->>`, quoted camelCase aliases); placeholders are
 * `?` or `@name` on both (the PostgreSQL connection numbers them).
 */

export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** A TEXT column holding JSON, as a JSON value (json_each, ->, json_array_length take it). */
  json(column: string): string;
  /** A string as the text of a JSON string (JSON.stringify's escaping). */
  jsonQuote(expr: string): string;
  /**
   * A JSON column pretty-printed as JSON.stringify(value, null, 2) prints it
   * (text that is not JSON as it is). PostgreSQL has no printer that keeps the
   * key order: the column comes as stored and the reader indents it.
   */
  prettyJson(column: string): string;
  /** JSON text a subquery builds, pretty-printed as prettyJson (PostgreSQL: as built). */
  prettyBuilt(expr: string): string;
  /** `column` matches the GLOB pattern `pattern` (*, ?, [...]; case-sensitive). */
  glob(column: string, pattern: string): string;
  /** The store's tables, one `name` a row, in name order. */
  readonly tables: string;
  /** A table's columns as `name`, `type` (upper case), in their order; `table` is a known table name. */
  columns(table: string): string;
}

export const SQLITE: Dialect = {
  name: 'sqlite',
  json: (column) => column,
  jsonQuote: (expr) => `json_quote(${expr})`,
  prettyJson: (column) => `CASE WHEN json_valid(${column}) THEN json_pretty(${column}, '  ') ELSE ${column} END`,
  prettyBuilt: (expr) => `json_pretty(${expr}, '  ')`,
  glob: (column, pattern) => `${column} GLOB ${pattern}`,
  tables: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
  columns: (table) => `SELECT name, upper(type) AS type FROM pragma_table_info('${table}') ORDER BY cid`,
};

export const POSTGRES: Dialect = {
  name: 'postgres',
  json: (column) => `(${column})::json`,
  jsonQuote: (expr) => `(to_json(${expr})::text)`,
  prettyJson: (column) => column,
  prettyBuilt: (expr) => expr,
  // vnfm_glob_regex: a function the PostgreSQL migrations create.
  glob: (column, pattern) => `${column} ~ vnfm_glob_regex(${pattern})`,
  tables:
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'vnfm_schema' ORDER BY table_name",
  columns: (table) =>
    `SELECT column_name AS name, upper(data_type) AS type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = '${table}' ORDER BY ordinal_position`,
};
