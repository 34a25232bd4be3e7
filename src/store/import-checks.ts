/**
 * What store-import checks of a document's rows, beyond their form
 * (export-document.ts), before it writes anything: that each value is one a
 * column holds, that what the schema keeps unique is unique within the
 * document (two default VIMs, two packages of one vnfdId), that a VIM's
 * sealed secrets come with their key's id; and where every sealed value is,
 * for the master key here to open each one. A document that fails is
 * refused (exit 2) naming the line, the row and the field.
 */
import { echo, UsageError } from '../errors.js';
import { EXPORTED_TABLES, type DocumentTables, type Row } from './export-document.js';
import { sealedValuesIn } from './secret-repository.js';

const HINT = 'give the document as store-export wrote it, or export the store again';

/** Columns the schema keeps unique (NULL is no value), or unique where they hold `only`: one default VIM at most. */
const UNIQUE: Record<string, readonly { column: string; only?: string }[]> = {
  vims: [{ column: 'name' }, { column: 'is_default', only: '1' }],
  vnf_packages: [{ column: 'name' }, { column: 'vnfd_id' }],
};

/** Names a row of the document for messages: `FILE line N: TABLE "KEY"` (without FILE when `source` is ''). */
export function rowPlace(doc: DocumentTables, source: string, table: string, row: Row): string {
  const key = EXPORTED_TABLES.find((t) => t.table === table)?.key ?? 'id';
  return `${source ? `${source} ` : ''}line ${doc.lineOf.get(row) ?? '?'}: ${table} ${echo(row[key])}`;
}

/** Refuses a document whose rows hold values no column takes, or repeat what the schema keeps unique. */
export function checkRows(doc: DocumentTables, source: string): void {
  for (const { table } of EXPORTED_TABLES) {
    const rows = doc.tables.get(table) ?? [];
    const held = new Map<string, Map<unknown, Row>>();
    for (const row of rows) {
      const place = () => rowPlace(doc, source, table, row);
      for (const [column, value] of Object.entries(row)) {
        if (value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) continue;
        throw new UsageError(`${place()}: ${column} is ${echo(value)}, not a string, a number or null`, { hint: HINT });
      }
      for (const { column, only } of UNIQUE[table] ?? []) {
        const value = row[column];
        if (value === null || value === undefined || (only !== undefined && String(value) !== only)) continue;
        const seen = held.get(column) ?? new Map<unknown, Row>();
        held.set(column, seen);
        const other = seen.get(String(value));
        if (other) {
          const what =
            only === undefined
              ? `${column} ${echo(value)}, as line ${doc.lineOf.get(other)} has`
              : `${column} = ${only}: a second default VIM (line ${doc.lineOf.get(other)} is one)`;
          throw new UsageError(`${place()}: ${what}; the store keeps it unique`, {
            hint: `keep it on one row of ${table} and ${only === undefined ? 'change' : 'unset'} it on the other`,
          });
        }
        seen.set(String(value), row);
      }
    }
  }
  for (const row of doc.tables.get('vims') ?? []) {
    if (row['secrets_token'] !== null && row['secrets_token'] !== undefined && typeof row['secrets_key_id'] !== 'string') {
      throw new UsageError(`${rowPlace(doc, source, 'vims', row)}: secrets_token without secrets_key_id (the id of the key it is sealed under)`, { hint: HINT });
    }
  }
}

/** A sealed value of the document, and where it is (for messages). */
export interface SealedAt {
  /** `line N: TABLE "KEY": COLUMN [JSON path]` */
  place: string;
  token: string;
  keyId: string;
}

/**
 * Every sealed value of the document: the VIMs' secret columns, and the
 * `{sealed, keyId}` values in any column's JSON text, as a master key
 * rotation finds them in the store.
 */
export function sealedValues(doc: DocumentTables): SealedAt[] {
  const found: SealedAt[] = [];
  for (const [table, rows] of doc.tables) {
    if (table === 'store_settings') continue;
    for (const row of rows) {
      const place = (column: string) => `${rowPlace(doc, '', table, row)}: ${column}`;
      if (table === 'vims' && typeof row['secrets_token'] === 'string') {
        found.push({ place: place('secrets_token'), token: row['secrets_token'], keyId: String(row['secrets_key_id']) });
      }
      for (const [column, value] of Object.entries(row)) {
        if (typeof value !== 'string' || !value.includes('"sealed"') || (table === 'vims' && column.startsWith('secrets_'))) continue;
        let parsed: unknown;
        try {
          parsed = JSON.parse(value);
        } catch {
          continue;
        }
        for (const s of sealedValuesIn(parsed)) found.push({ place: place(`${column} ${s.path}`), token: s.token, keyId: s.keyId });
      }
    }
  }
  return found;
}
