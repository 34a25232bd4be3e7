import type { Db } from './database.js';

/** The shortest id start a lookup accepts: tables print ids this long. */
export const MIN_ID_PREFIX = 8;

/**
 * Rows of `table` whose id starts with `ref` (at most two: enough to tell a
 * unique start from an ambiguous one), for refs of 8 characters or more.
 */
export async function byIdPrefix<Row>(db: Db, table: 'vims' | 'vnf_packages' | 'vnf_instances', ref: string): Promise<Row[]> {
  if (ref.length < MIN_ID_PREFIX) return [];
  return (await db.prepare(`SELECT * FROM ${table} WHERE id LIKE ? ESCAPE '\\' LIMIT 2`).all(ref.replace(/[%_\\]/g, '\\$&') + '%')) as Row[];
}
