/**
 * Placeholders as PostgreSQL reads them: the repositories write `?` and
 * `@name` (as SQLite reads them); each becomes `$n` here, found by a scan
 * that skips quoted text and comments, and the values are given in that
 * order.
 */

/** A statement's text with `$n` placeholders, and for each $n the positional index (number) or the name (string) of its value. */
export interface Numbered {
  text: string;
  binds: (number | string)[];
}

/** Replaces `?` and `@name` outside quotes and comments with `$n`; a name used twice is one `$n`. */
export function numberPlaceholders(sql: string): Numbered {
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

/** The values for a numbered statement, from the repositories' arguments: positional values, or one object of named ones. */
export function bindValues(t: Numbered, args: unknown[]): unknown[] {
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
