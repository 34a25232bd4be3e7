/**
 * The password of a URL that has none, found as libpq finds it: in
 * `PGPASSWORD`, else in the password file (`PGPASSFILE`, else `~/.pgpass`),
 * lines of `host:port:database:user:password` where `*` matches anything
 * and `\:` and `\\` stand for `:` and `\`; the first line that matches wins.
 * A file that group or others may read is ignored, as libpq ignores it.
 *
 * node-postgres reads these too, but prints a deprecation warning on every
 * connection that uses the file (its support goes away in pg 9); vnfm gives
 * it the password itself instead.
 */
import { readFileSync, statSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';

export interface PasswordTarget {
  host?: string;
  port?: number;
  database?: string;
  user?: string;
}

/** The fields of a line, unescaped; `undefined` for a comment, a blank or a malformed line. */
function fieldsOf(line: string): string[] | undefined {
  if (line.trim() === '' || line.startsWith('#')) return undefined;
  const fields: string[] = [];
  let current = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\' && i + 1 < line.length) current += line[++i];
    else if (c === ':' && fields.length < 4) {
      fields.push(current);
      current = '';
    } else current += c;
  }
  fields.push(current);
  return fields.length === 5 ? fields : undefined;
}

/** The password for `target` from the password file's text; `undefined` when no line matches. */
export function passwordFromPgpass(text: string, target: Required<PasswordTarget>): string | undefined {
  // libpq matches a connection over a Unix socket (the default one included) with `localhost`.
  const host = target.host.startsWith('/') ? 'localhost' : target.host;
  const wanted = [host, String(target.port), target.database, target.user];
  for (const line of text.split(/\r?\n/)) {
    const fields = fieldsOf(line);
    if (fields && wanted.every((w, i) => fields[i] === '*' || fields[i] === w)) return fields[4];
  }
  return undefined;
}

/**
 * `PGPASSWORD`, else the password file's line for `target`. Called only when
 * the server asks for a password: none found is a refused login (SQLSTATE
 * 28P01) that says where vnfm looked.
 */
export function findPassword(target: PasswordTarget, env: Record<string, string | undefined>): string {
  if (env['PGPASSWORD']) return env['PGPASSWORD'];
  const file = env['PGPASSFILE'] || join(env['HOME'] || homedir(), '.pgpass');
  const found = fromFile(file, target, env);
  if (found !== undefined) return found;
  throw Object.assign(
    new Error(`the server asks for a password, and neither the URL, PGPASSWORD nor the password file ${file} (mode 0600, a line for this host, port, database and user) gives one`),
    {
      code: '28P01',
    },
  );
}

function fromFile(file: string, target: PasswordTarget, env: Record<string, string | undefined>): string | undefined {
  let text: string;
  try {
    const st = statSync(file);
    if (!st.isFile() || (process.platform !== 'win32' && (st.mode & 0o077) !== 0)) return undefined;
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const user = target.user ?? env['PGUSER'] ?? env['USER'] ?? userInfo().username;
  return passwordFromPgpass(text, {
    host: target.host ?? env['PGHOST'] ?? 'localhost',
    port: target.port ?? (Number(env['PGPORT']) || 5432),
    database: target.database ?? env['PGDATABASE'] ?? user,
    user,
  });
}
