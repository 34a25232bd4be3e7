/**
 * A list's default `-o json` written by SQLite: see jsonListText.
 */
import type { Db } from './database.js';

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
 * page written by SQLite in one statement, so no object or string is made per
 * item in JavaScript: no page for no items; undefined on PostgreSQL, where the
 * items are read one by one. The items' text is the one the item-by-item read
 * gives (the same SQL), so the bytes are the same.
 */
export function jsonListText(db: Db, t: JsonListSql): Iterable<string> | undefined {
  if (typeof (db as { pragma?: unknown }).pragma !== 'function') return undefined;
  const row = (names: string) => `(${t.keys.map((_, n) => `@${names}${n}`).join(', ')})`;
  const keys = `(${t.keys.join(', ')})`;
  const order = t.keys.join(', ');
  const where = (after: boolean, upTo: boolean) => {
    const conds = [...t.where, ...(after ? [`${keys} > ${row('a')}`] : []), ...(upTo ? [`${keys} <= ${row('b')}`] : [])];
    return conds.length ? ` WHERE ${conds.join(' AND ')}` : '';
  };
  // A page's last row: a walk of the index, no item written.
  const bound = (after: boolean) =>
    db.prepare(`SELECT ${t.keys.map((k, n) => `${k} AS b${n}`).join(', ')} FROM ${t.from}${where(after, false)} ORDER BY ${order} LIMIT 1 OFFSET @skip`);
  // The page's items in the rows' order (the subquery's, which SQLite keeps: said again to group_concat, whose order is otherwise arbitrary).
  const as = t.keys.map((k, n) => `${k} AS k${n}`).join(', ');
  const text = (after: boolean, upTo: boolean) =>
    db
      .prepare(
        `SELECT group_concat(item, ',' || char(10) ORDER BY ${t.keys.map((_, n) => `k${n}`).join(', ')}) FROM (SELECT ${t.item} AS item, ${as} FROM ${t.from}${where(after, upTo)} ORDER BY ${order})`,
      )
      .pluck();
  const statements = { bound: [bound(false), bound(true)], text: [text(false, false), text(false, true), text(true, false), text(true, true)] };
  return (function* () {
    let left = t.limit ?? Infinity;
    let after: Record<string, unknown> | undefined;
    while (left > 0) {
      const size = Math.min(PAGE, left);
      const a = after ? Object.fromEntries(t.keys.map((_, n) => [`a${n}`, after![`b${n}`]])) : {};
      const upTo = statements.bound[after ? 1 : 0]!.get({ ...t.params, ...a, skip: size - 1 }) as Record<string, unknown> | undefined;
      const page = statements.text[(after ? 2 : 0) + (upTo ? 1 : 0)]!.get({ ...t.params, ...a, ...upTo }) as string | null;
      if (page !== null) yield page;
      if (!upTo) return;
      left -= size;
      after = upTo;
    }
  })();
}
