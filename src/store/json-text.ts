/**
 * A list's default `-o json` written by SQLite: see jsonListText.
 */
import type { Db, SqliteDb } from './database.js';

/** A list's items as JSON text: each item's text, over the rows of `from` that `where` keeps, in the order of `keys`. */
export interface JsonListSql {
  /** Each item's text at the list's indent, as simpleJsonObject writes it with indent '  '. */
  item: string;
  from: string;
  where: string[];
  /** The columns the rows are ordered by, unique together (keyset pages: each starts after the last row of the one before). */
  keys: string[];
  params: Record<string, unknown>;
  limit?: number;
}

/** Items per page: some 350 KB of text. */
const PAGE = 1000;

/**
 * The items of a list's `-o json` joined as JSON.stringify(items, null, 2)
 * joins them (',\n' between, without the brackets), a page at a time, each
 * item's text written by SQLite, so no object is made per item in JavaScript:
 * no page for no items; undefined on PostgreSQL, where the items are read one
 * by one. The items' text is the one the item-by-item read gives (the same
 * SQL), so the bytes are the same. Joined here rather than by group_concat,
 * which must be told the order again and then sorts the page's text (some
 * 550 KB) once more: a third of the list's time.
 */
export function jsonListText(db: Db, t: JsonListSql): Iterable<string> | undefined {
  if (typeof (db as { pragma?: unknown }).pragma !== 'function') return undefined;
  const order = t.keys.join(', ');
  const after = `(${order}) > (${t.keys.map((_, n) => `@a${n}`).join(', ')})`;
  // Keyset pages: each starts after the last row of the one before, whose keys come with the items.
  const page = (next: boolean) => {
    const conds = next ? [...t.where, after] : t.where;
    const where = conds.length ? ` WHERE ${conds.join(' AND ')}` : '';
    return (db as SqliteDb).prepare(`SELECT ${t.item} AS item, ${t.keys.map((k, n) => `${k} AS k${n}`).join(', ')} FROM ${t.from}${where} ORDER BY ${order} LIMIT @size`).raw();
  };
  const statements = [page(false), page(true)];
  return (function* () {
    let left = t.limit ?? Infinity;
    let last: unknown[] | undefined;
    while (left > 0) {
      const size = Math.min(PAGE, left);
      const a = last ? Object.fromEntries(t.keys.map((_, n) => [`a${n}`, last![n + 1]])) : {};
      const rows = statements[last ? 1 : 0]!.all({ ...t.params, ...a, size }) as unknown[][];
      if (rows.length > 0) yield rows.map((r) => r[0] as string).join(',\n');
      if (rows.length < size) return;
      left -= size;
      last = rows[rows.length - 1];
    }
  })();
}
