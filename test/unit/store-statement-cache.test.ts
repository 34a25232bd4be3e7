/**
 * The SQLite connection's statement cache (store/database.ts): each SQL text
 * prepared once, a statement handed out only in its first mode and when no
 * iteration holds it, and nothing kept across a change of the schema.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, openDatabase, STATEMENT_CACHE_SIZE, type SqliteDb } from '../../src/store/database.js';
import { migrations } from '../../src/store/migrations/index.js';

const home = () => join(mkdtempSync(join(tmpdir(), 'vnfm-stmt-')), 'home');

let db: SqliteDb | undefined;
afterEach(() => {
  db?.close();
  db = undefined;
});

/** A database with a table t(a) of three rows. */
function withTable(): SqliteDb {
  db = openDatabase(home());
  db.exec('CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1), (2), (3)');
  return db;
}

describe('statement cache', () => {
  it('prepares the same SQL text once, reads and writes alike', () => {
    const d = withTable();
    const read = d.prepare('SELECT a FROM t WHERE a = ?');
    expect(d.prepare('SELECT a FROM t WHERE a = ?')).toBe(read);
    expect(d.prepare('SELECT a FROM t WHERE a = ?').get(2)).toEqual({ a: 2 });
    const write = d.prepare('INSERT INTO t VALUES (?)');
    expect(d.prepare('INSERT INTO t VALUES (?)')).toBe(write);
    d.prepare('INSERT INTO t VALUES (?)').run(4);
    expect(d.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 4 });
  });

  it('gives a statement a caller switched to pluck, raw or expand to that caller alone', () => {
    const d = withTable();
    const sql = 'SELECT a FROM t ORDER BY a';
    const plucked = d.prepare(sql).pluck();
    const fresh = d.prepare(sql);
    expect(fresh).not.toBe(plucked);
    // Each keeps its own mode: the cached one objects, the caller's values.
    expect(fresh.all()).toEqual([{ a: 1 }, { a: 2 }, { a: 3 }]);
    expect(plucked.all()).toEqual([1, 2, 3]);
    expect(d.prepare(sql)).toBe(fresh);
    const raw = d.prepare(sql).raw();
    expect(raw).toBe(fresh);
    expect(raw.all()).toEqual([[1], [2], [3]]);
    expect(d.prepare(sql)).not.toBe(raw);
    expect(d.prepare(sql).all()).toEqual([{ a: 1 }, { a: 2 }, { a: 3 }]);
  });

  it('hands out a new statement while the cached one is being iterated', () => {
    const d = withTable();
    const sql = 'SELECT a FROM t ORDER BY a';
    const outer = d.prepare(sql);
    const seen: number[][] = [];
    for (const row of outer.iterate() as IterableIterator<{ a: number }>) {
      const inner = d.prepare(sql);
      expect(inner).not.toBe(outer);
      seen.push([row.a, ...(inner.all() as { a: number }[]).map((r) => r.a)]);
    }
    expect(seen).toEqual([
      [1, 1, 2, 3],
      [2, 1, 2, 3],
      [3, 1, 2, 3],
    ]);
    expect(d.prepare(sql)).toBe(outer);
  });

  it('keeps no statement across a change of the schema (exec, as migrations run)', () => {
    const d = withTable();
    const sql = 'SELECT * FROM t ORDER BY a LIMIT 1';
    const before = d.prepare(sql);
    expect(before.get()).toEqual({ a: 1 });
    d.exec("ALTER TABLE t ADD COLUMN b TEXT DEFAULT 'x'");
    const after = d.prepare(sql);
    expect(after).not.toBe(before);
    expect(after.get()).toEqual({ a: 1, b: 'x' });
    // A migration run on the open connection empties the cache too.
    migrate(d, [...migrations, { version: 1000, name: 'more', sql: 'ALTER TABLE t ADD COLUMN c INTEGER DEFAULT 7' }]);
    expect(d.prepare(sql)).not.toBe(after);
    expect(d.prepare(sql).get()).toEqual({ a: 1, b: 'x', c: 7 });
  });

  it(`keeps at most ${STATEMENT_CACHE_SIZE} statements, dropping the least recently used`, () => {
    const d = withTable();
    const first = d.prepare('SELECT 0 AS n');
    const second = d.prepare('SELECT 1 AS n');
    for (let i = 2; i < STATEMENT_CACHE_SIZE; i++) d.prepare(`SELECT ${i} AS n`);
    // Used again: now the most recent, so the next one in drops `second`.
    expect(d.prepare('SELECT 0 AS n')).toBe(first);
    d.prepare(`SELECT ${STATEMENT_CACHE_SIZE} AS n`);
    expect(d.prepare('SELECT 0 AS n')).toBe(first);
    expect(d.prepare('SELECT 1 AS n')).not.toBe(second);
  });
});
