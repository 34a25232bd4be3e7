/**
 * Tables of thousands written by SQLite: see TableText.
 */
import { SqliteStoreDb, type Db } from './database.js';

/**
 * A table's text as SQLite writes it, for a list of thousands: the cells
 * shortened, padded and joined by the database, so no object is made per row.
 * The printer's own table (printer.ts) is the reference; each line is the
 * same bytes.
 */
export interface TableText {
  /** Each column's widest cell, in UTF-16 code units as String.length counts them. */
  widths: number[];
  /** The lines, each column as wide as given (at least its widest cell), joined by newlines: one page (a table of 20 000 is some 1.5 MB). */
  pages(widths: number[]): Iterable<string>;
}

/** What a table's text needs: -o wide's columns, and --limit's rows. */
export interface TableRead {
  wide: boolean;
  limit?: number;
}

const UUID_GLOB = [8, 4, 4, 4, 12].map((n) => '?'.repeat(n)).join('-');
const STORED_TIME_GLOB = '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z';
/** The characters String.prototype.trimEnd removes (Unicode White_Space, line terminators and the BOM). */
const JS_WHITESPACE = 'char(9, 10, 11, 12, 13, 32, 160, 5760, 8192, 8193, 8194, 8195, 8196, 8197, 8198, 8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288, 65279)';

/**
 * Is `column` a uuid, as names.ts's shortId tells one (then shortened to its
 * first 8 characters)? Its dashes where a uuid has them, and 32 hex digits
 * between (unhex, which is faster than a GLOB of character classes).
 */
export const uuidSql = (column: string): string => `(${column} GLOB '${UUID_GLOB}' AND coalesce(length(unhex(${column}, '-')), 0) = 16)`;
/** names.ts's shortId in SQL: a uuid's first 8 characters, anything else whole. */
export const shortIdSql = (column: string): string => `CASE WHEN ${uuidSql(column)} THEN substr(${column}, 1, 8) ELSE ${column} END`;
/** Is `column` a time in the form the store keeps (names.ts's shortTime then cuts it)? */
export const storedTimeSql = (column: string): string => `${column} GLOB '${STORED_TIME_GLOB}'`;
/** names.ts's shortTime in SQL, for a time in the form the store keeps. */
export const shortTimeSql = (column: string): string => `substr(${column}, 1, 10) || ' ' || substr(${column}, 12, 8)`;

/** A table's text: its cells (SQL over the rows `from` selects, in `order`), and the rows SQLite cannot write as JavaScript would. */
export interface TableSql {
  /** One SQL expression per column; each may assume no row is odd. */
  cells: string[];
  /**
   * The cells that may be NULL or hold characters beyond ASCII, by index:
   * only these are searched for what SQLite counts otherwise than
   * JavaScript. The others are ASCII and never NULL wherever no row is odd
   * (the schema's NOT NULL and CHECK constraints, the odd conditions).
   */
  anyText: number[];
  /** Conditions that make a row odd (a cell the expression would get wrong): the printer's table prints the list then. */
  odd: string[];
  from: string;
  order: string;
  params: Record<string, unknown>;
  limit?: number;
  /** The last cell may be empty or end in white space: each line is trimmed as the printer trims it. */
  trim: boolean;
}

/**
 * The characters the printer shows escaped in a table (the cli's
 * terminal-text.ts: the C0 controls but tab, DEL, the C1 controls, the
 * bidirectional controls), as GLOB classes: the ASCII ones, and all. NUL is
 * left to instr, as GLOB's pattern is a C string.
 */
const ASCII_CONTROLS = '\x01-\x08\x0a-\x1f\x7f';
const TERMINAL_CONTROLS = `${ASCII_CONTROLS}\x80-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069`;

/**
 * A table's text, or undefined where the printer's own table must print it:
 * on PostgreSQL, for no rows, and where a row is odd, a cell is null, or a cell has a
 * character beyond the BMP (String.length counts it twice, SQLite's length
 * once), a NUL (where SQLite's length stops) or a character a terminal would
 * act on (the printer escapes it, which widens the cell). Two passes over the
 * rows: the widths, then the lines.
 */
export function tableText(db: Db, t: TableSql): TableText | undefined {
  if (!(db instanceof SqliteStoreDb)) return undefined;
  const sqlite = db.sqlite;
  const all = t.anyText.map((n) => `c${n}`).join(' || ') || "''";
  // An ASCII row (as many bytes as characters) has neither a character beyond the BMP nor a NUL: only its C0 controls and DEL are searched.
  const unlike = `CASE WHEN (${all}) IS NULL THEN 1 WHEN length(CAST(${all} AS BLOB)) = length(${all}) THEN (${all}) GLOB '*[${ASCII_CONTROLS}]*' ELSE (${all}) GLOB '*[${TERMINAL_CONTROLS}\u{10000}-\u{10FFFF}]*' OR instr(${all}, char(0)) > 0 END`;
  const ordered = t.limit === undefined ? '' : ` ORDER BY ${t.order} LIMIT ${t.limit}`;
  const rows = (more = '') => `SELECT ${t.cells.map((c, n) => `${c} AS c${n}`).join(', ')}, ${t.odd.length ? t.odd.join(' OR ') : '0'} AS odd${more} FROM ${t.from}`;
  const measure = sqlite
    .prepare(`SELECT count(*) AS n, max(odd OR ${unlike}) AS odd, ${t.cells.map((_, n) => `max(length(c${n})) AS w${n}`).join(', ')} FROM (${rows()}${ordered})`)
    .get(t.params) as Record<string, number | null>;
  if (!measure['n'] || measure['odd']) return undefined;
  const last = t.cells.length - 1;
  const padded = t.cells.slice(0, last).map((_, n) => `c${n} || printf('%*s', @w${n} - length(c${n}), '') || '   '`);
  const line = [...padded, `c${last}`].join(' || ');
  // The lines in the rows' order (the order keys carried out of the subquery, which SQLite then flattens into a
  // walk of the index), joined here: group_concat would have to be told the order again and sort them.
  const keys = t.order.split(',').map((k, n) => [k.trim(), `k${n}`] as const);
  const lines = t.trim ? `rtrim(${line}, ${JS_WHITESPACE})` : line;
  const text = sqlite
    .prepare(
      `SELECT ${lines} FROM (${rows(keys.map(([k, as]) => `, ${k} AS ${as}`).join(''))}) ORDER BY ${keys.map(([, as]) => as).join(', ')}${t.limit === undefined ? '' : ` LIMIT ${t.limit}`}`,
    )
    .pluck();
  return {
    widths: t.cells.map((_, n) => measure[`w${n}`]!),
    pages: (widths) => [(text.all({ ...t.params, ...Object.fromEntries(widths.slice(0, last).map((w, n) => [`w${n}`, w])) }) as string[]).join('\n')],
  };
}
