/**
 * The repositories' SQL, written for SQLite, as PostgreSQL reads it. The
 * repositories stay one piece of code for both backends; what differs is
 * translated here, once per statement text (and cached):
 *
 * - placeholders: `?` and `@name` become `$1`, `$2`…;
 * - `x IS ?` (null-safe equality) becomes `x IS NOT DISTINCT FROM $n`;
 * - camelCase column aliases keep their case (PostgreSQL folds unquoted names);
 * - `name GLOB pattern` becomes a regular-expression match (vnfm_glob_regex, a
 *   function the PostgreSQL migrations create);
 * - JSON: a column pretty-printed (json_pretty) is read as stored, and JSON
 *   a subquery builds as built; group_concat is string_agg
 *   (both take `ORDER BY` inside the call); a list's
 *   string quoted as JSON (json_quote) with to_json;
 *   `json_each(col)` / `json_extract(value, '$.key')` /
 *   `json_array_length(col, '$.key')` over a TEXT column;
 * - the catalogue (`sqlite_master`, `PRAGMA table_info`) read from
 *   information_schema.
 *
 * Every table has a `rowid` column on PostgreSQL (an identity), so ordering
 * by insertion and addressing a row work as on SQLite.
 */

export interface Translated {
  text: string;
  /** For each $n, the positional index (number) or the name (string) of its value. */
  binds: (number | string)[];
  /** The statement changes data (INSERT/UPDATE/DELETE): outside a transaction it takes the write lock. */
  writes: boolean;
}

const CATALOGUE_TABLES = /^SELECT name FROM sqlite_master WHERE type = 'table'[^]*$/i;
const TABLE_INFO = /^PRAGMA table_info\("([A-Za-z0-9_]+)"\)$/i;

const REWRITES: [RegExp, string][] = [
  // A JSON column pretty-printed (a list's -o json, vnf-instance-repository.ts): PostgreSQL has no json_pretty that
  // keeps the key order, so the column comes as stored and the list's writer re-indents it.
  [/CASE WHEN json_valid\(([\w.]+)\) THEN json_pretty\(\1, ' {2}'\) ELSE \1 END/g, '$1'],
  // JSON a subquery builds, pretty-printed (an operation's journal from its steps, lcm-op-occ-repository.ts): read as built.
  [/json_pretty\((\(SELECT [^]*?\)), ' {2}'\)/g, '$1'],
  [/\bgroup_concat\(/g, 'string_agg('],
  // A string as a JSON text (a list's simple attributes, simpleJsonObject).
  [/json_quote\(([\w.]+)\)/g, '(to_json($1)::text)'],
  [/json_each\((\w+)\)/g, 'json_each(($1)::json)'],
  [/json_array_length\((\w+), '\$\.(\w+)'\)/g, "json_array_length(($1)::json -> '$2')"],
  [/json_extract\(value, '\$\.(\w+)'\)/g, "(value ->> '$1')"],
  [/(\w+) GLOB (\?|@\w+)/g, '$1 ~ vnfm_glob_regex($2)'],
  [/\bIS (\?|@\w+)/g, 'IS NOT DISTINCT FROM $1'],
  [/\bAS ([a-z]+[A-Z]\w*)\b/g, 'AS "$1"'],
];

const cache = new Map<string, Translated>();

export function toPostgres(sql: string): Translated {
  const hit = cache.get(sql);
  if (hit) return hit;
  const out = translate(sql.trim());
  cache.set(sql, out);
  return out;
}

function translate(sql: string): Translated {
  if (CATALOGUE_TABLES.test(sql)) {
    return {
      text: "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'vnfm_schema' ORDER BY table_name",
      binds: [],
      writes: false,
    };
  }
  const info = TABLE_INFO.exec(sql);
  if (info) {
    return {
      text: `SELECT column_name AS name, upper(data_type) AS type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = '${info[1]}' ORDER BY ordinal_position`,
      binds: [],
      writes: false,
    };
  }
  let text = sql;
  for (const [re, to] of REWRITES) text = text.replace(re, to);
  const { text: numbered, binds } = numberPlaceholders(text);
  return { text: numbered, binds, writes: /^(INSERT|UPDATE|DELETE|REPLACE)\b/i.test(text) };
}

/** Replaces `?` and `@name` outside quotes and comments with `$n`; a name used twice is one `$n`. */
export function numberPlaceholders(sql: string): { text: string; binds: (number | string)[] } {
  const binds: (number | string)[] = [];
  const named = new Map<string, number>();
  let positional = 0;
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const end = closingQuote(sql, i, c);
      out += sql.slice(i, end);
      i = end;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const stop = end < 0 ? sql.length : end;
      out += sql.slice(i, stop);
      i = stop;
    } else if (c === '?') {
      binds.push(positional++);
      out += `$${binds.length}`;
      i++;
    } else if (c === '@' && /[A-Za-z_]/.test(sql[i + 1] ?? '')) {
      const m = /^@([A-Za-z_]\w*)/.exec(sql.slice(i))!;
      const name = m[1]!;
      let n = named.get(name);
      if (n === undefined) {
        binds.push(name);
        n = binds.length;
        named.set(name, n);
      }
      out += `$${n}`;
      i += m[0].length;
    } else {
      out += c;
      i++;
    }
  }
  return { text: out, binds };
}

function closingQuote(sql: string, start: number, q: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === q) {
      if (sql[i + 1] === q) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  return sql.length;
}

/** The values for a translated statement, from better-sqlite3-style arguments: positional values, or one object of named ones. */
export function bindValues(t: Translated, args: unknown[]): unknown[] {
  const named = args.length === 1 && args[0] !== null && typeof args[0] === 'object' && !Array.isArray(args[0]) && !(args[0] instanceof Uint8Array);
  return t.binds.map((b) => {
    let v: unknown;
    if (typeof b === 'string') {
      if (!named) throw new TypeError(`the statement needs the named parameter @${b}: ${t.text}`);
      const obj = args[0] as Record<string, unknown>;
      if (!(b in obj)) throw new RangeError(`Missing named parameter "${b}"`);
      v = obj[b];
    } else {
      v = args[b];
    }
    if (v === undefined) return null;
    if (typeof v === 'boolean') return v ? 1 : 0;
    if (typeof v === 'bigint') return v.toString();
    return v;
  });
}
