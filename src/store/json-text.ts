/**
 * A list's default `-o json` written by SQLite (see jsonListText), and the
 * SQL that builds an item's JSON text in the same pass as the read.
 */
import { SqliteStoreDb, type Db } from './database.js';
import type { Dialect } from './dialect.js';

/** A list's items as JSON text: each row's kept item, over the rows of `from` that `where` keeps, in the kept table's order. */
export interface JsonListSql {
  /**
   * Where the items are kept ready (a table of each row's item text at the
   * list's indent, kept by triggers: migration 13), read as `k`: its name,
   * the columns it is ordered by (unique together: keyset pages start after
   * the last row of the one before), and how its rows meet those of `from`.
   */
  kept: { table: string; keys: string[]; on: string };
  from: string;
  where: string[];
  params: Record<string, unknown>;
  limit?: number;
}

/** Items per page: some 350 KB of text. */
const PAGE = 1000;

/**
 * The items of a list's `-o json` joined as JSON.stringify(items, null, 2)
 * joins them (',\n' between, without the brackets), a page at a time, each
 * item's text as SQLite keeps it, so no object is made per item in
 * JavaScript: no page for no items; undefined on PostgreSQL, where the items
 * are read one by one. The kept text is the one the item-by-item read builds
 * (test/unit/list-json-items.test.ts), so the bytes are the same.
 * Joined here rather than by group_concat, which must be told the order
 * again and then sorts the page's text once more. Each page reads only the
 * items, and the keys of its last row apart, in the same transaction: keys
 * read with every row were a third of the read.
 */
export function jsonListText(db: Db, t: JsonListSql): Iterable<string> | undefined {
  if (!(db instanceof SqliteStoreDb)) return undefined;
  const sqlite = db.sqlite;
  // The kept items: the table alone for the whole list, joined to the rows the conditions look at otherwise
  // (read in the kept table's order, the join costs less than building each item: vnf-list --state INSTANTIATED
  // -o json over 10 000 317 -> 199 ms).
  const item = 'k.item';
  const keys = t.kept.keys.map((k) => `k.${k}`);
  const from = t.where.length ? `${t.kept.table} k JOIN ${t.from} ON ${t.kept.on}` : `${t.kept.table} k`;
  const order = keys.join(', ');
  const after = `(${order}) > (${keys.map((_, n) => `@a${n}`).join(', ')})`;
  // Keyset pages: each starts after the last row of the one before.
  const select = (what: string, next: boolean, tail: string) => {
    const conds = next ? [...t.where, after] : t.where;
    return `SELECT ${what} FROM ${from}${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''} ORDER BY ${order} ${tail}`;
  };
  const pages = [false, true].map((next) => sqlite.prepare(select(item, next, 'LIMIT @size')).pluck());
  const lastKeys = [false, true].map((next) => sqlite.prepare(select(keys.join(', '), next, 'LIMIT 1 OFFSET @size - 1')).raw());
  const read = sqlite.transaction((n: number, params: Record<string, unknown>) => {
    const items = pages[n]!.all(params) as string[];
    return { items, last: items.length === params['size'] ? (lastKeys[n]!.get(params) as unknown[]) : undefined };
  });
  return (function* () {
    let left = t.limit ?? Infinity;
    let last: unknown[] | undefined;
    while (left > 0) {
      const size = Math.min(PAGE, left);
      const a = last ? Object.fromEntries(keys.map((_, n) => [`a${n}`, last![n]])) : {};
      const page = read(last ? 1 : 0, { ...t.params, ...a, size });
      if (page.items.length > 0) yield page.items.join(',\n');
      if (!page.last) return;
      left -= size;
      last = page.last;
    }
  })();
}

/** A member of simpleJsonObject: its key, its column; `optional`: left out where NULL or ''; `boolean`: 0/1 as false/true. */
export interface SimpleJsonMember {
  key: string;
  column: string;
  optional?: boolean;
  boolean?: boolean;
}

/**
 * The text of a JSON object of the members' values, in their order,
 * pretty-printed as JSON.stringify(value, null, 2) prints it: built by
 * concatenation (json_quote escapes each string as JSON.stringify does), so
 * the database parses no JSON for it. The last member must not be optional.
 */
export function simpleJsonObject(d: Dialect, members: SimpleJsonMember[], as: string): string {
  const parts = members.map((m, n) => {
    const value = m.boolean ? `CASE WHEN ${m.column} = 1 THEN 'true' ELSE 'false' END` : d.jsonQuote(m.column);
    const text = `'  "${m.key}": ' || ${value}${n < members.length - 1 ? " || ',\n'" : ''}`;
    return m.optional ? `CASE WHEN ${m.column} IS NULL OR ${m.column} = '' THEN '' ELSE ${text} END` : text;
  });
  return `('{\n' || ${parts.join(' || ')} || '\n}') AS ${as}`;
}

/** A JSON column as `ListRead.rawJson` reads it (Dialect.prettyJson). */
export function prettyJsonColumn(d: Dialect, column: string, as: string): string {
  return `${d.prettyJson(column)} AS ${as}`;
}
