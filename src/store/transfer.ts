/**
 * store-export / store-import: the state an operator cares about (VIMs,
 * packages, VNF instances, operation occurrences, pinned SSH host keys, the
 * store's settings) as one versioned JSON document, from either backend to
 * either backend. Locks and leases are not state to move. Secrets travel
 * sealed, as stored: both sides need the same master key.
 *
 * The document is valid JSON, written one record a line so that neither
 * side ever holds it whole: a row a line, and a package's zip as base64
 * strings of one chunk each. Import reads it as store-export writes it.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { createInterface } from 'node:readline';
import { createHash } from 'node:crypto';
import { ConflictError, UsageError, VnfmError } from '../errors.js';
import type { Store } from './index.js';
import { migrations } from './migrations/index.js';
import type { JournalStep } from '../model/resources.js';
import { journalText } from './lcm-op-occ-repository.js';

export const EXPORT_FORMAT_VERSION = 1;

/**
 * The tables exported, in the order rows are inserted (a row's references
 * first), the column that names a row, and whether a row carries its
 * operation's journal (one JSON array, as it was kept before its steps had
 * rows of their own, migration 14).
 */
export const EXPORTED_TABLES: readonly { table: string; key: string; byKey?: boolean; journal?: boolean }[] = [
  { table: 'vims', key: 'id' },
  { table: 'vnf_packages', key: 'id' },
  { table: 'vnf_instances', key: 'id' },
  { table: 'lcm_op_occs', key: 'id' },
  // the large JSON columns of the two above (migration 12)
  { table: 'vnf_instance_details', key: 'id' },
  { table: 'lcm_op_occ_details', key: 'id', journal: true },
  { table: 'lcm_op_occ_prior_states', key: 'id' },
  { table: 'ssh_host_keys', key: 'server_id' },
  // no rowid on PostgreSQL: read in the order of its names
  { table: 'store_settings', key: 'name', byKey: true },
];

/** Tables whose rows make a store non-empty (settings alone do not). */
const STATE_TABLES = ['vims', 'vnf_packages', 'vnf_instances', 'lcm_op_occs', 'ssh_host_keys'];

type Row = Record<string, unknown>;

/** Where package zips come from and go to: the package directories or the shared store (csar/packages.ts). */
export interface PackageContentIo {
  /** The zip's bytes, one chunk at a time; `undefined` when this side has none of them. */
  read(packageId: string): AsyncIterable<Uint8Array> | undefined;
  /** Receives a zip being imported; nothing of it is visible before `commit` and `publish`. */
  stage(packageId: string): Promise<StagedContent>;
}

export interface StagedContent {
  write(chunk: Buffer): Promise<void>;
  /** All bytes are in: checks them against the recorded hash and size, and prepares them. */
  close(expected: { sha256: string; sizeBytes: number }): Promise<void>;
  /** Inside the import's transaction. */
  commit(): void;
  /** After the transaction committed. */
  publish(): Promise<void>;
  /** The import failed: removes what was staged. */
  discard(): Promise<void>;
}

export interface ExportHeader {
  vnfmExport: number;
  exportedAt: string;
  source: { backend: string; schemaVersion: number };
  /** One sealed value of the store, for import to check its master key opens it before writing anything. */
  sealedCheck: { keyId: string; token: string } | null;
  withPackageContents: boolean;
}

export interface ExportOptions {
  withPackageContents: boolean;
  now: Date;
  contents: PackageContentIo;
  /** A package whose zip this side does not have (exported without it). */
  onMissingContents?: (packageId: string) => void;
}

export interface ExportResult {
  rows: Record<string, number>;
  packageContents: number;
}

/** Writes the document to `out`: the rows read in one snapshot, then each package's zip a chunk at a time. */
export async function exportStore(store: Store, out: Writable, opts: ExportOptions): Promise<ExportResult> {
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  const snapshot = store.db
    .transaction(() => ({
      tables: EXPORTED_TABLES.map((t) => ({ table: t.table, rows: readRows(store, t) })),
      sealed: store.secrets.listSecrets()[0],
    }))
    .deferred();
  const header: ExportHeader = {
    vnfmExport: EXPORT_FORMAT_VERSION,
    exportedAt: opts.now.toISOString(),
    source: { backend: store.backend, schemaVersion: store.info().schemaVersion },
    sealedCheck: snapshot.sealed ? { keyId: snapshot.sealed.keyId, token: snapshot.sealed.token } : null,
    withPackageContents: opts.withPackageContents,
  };
  const result: ExportResult = { rows: {}, packageContents: 0 };
  const headerText = JSON.stringify(header);
  await write(`${headerText.slice(0, -1)},\n"tables":{`);
  for (const [i, { table, rows }] of snapshot.tables.entries()) {
    await write(`${i ? ',' : ''}\n${JSON.stringify(table)}:[`);
    for (const [j, row] of rows.entries()) await write(`${j ? ',' : ''}\n${JSON.stringify(row)}`);
    await write('\n]');
    result.rows[table] = rows.length;
  }
  await write('\n},\n"packageContents":[');
  const packages = snapshot.tables.find((t) => t.table === 'vnf_packages')!.rows;
  for (const pkg of opts.withPackageContents ? packages : []) {
    const id = String(pkg['id']);
    const chunks = opts.contents.read(id);
    if (!chunks) {
      opts.onMissingContents?.(id);
      continue;
    }
    const entry = JSON.stringify({ packageId: id, sha256: pkg['checksum_hash'], sizeBytes: Number(pkg['size_bytes']), chunks: [] });
    await write(`${result.packageContents ? ',' : ''}\n${entry.slice(0, -3)}[`);
    let first = true;
    for await (const chunk of chunks) {
      await write(`${first ? '' : ','}\n"${Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('base64')}"`);
      first = false;
    }
    await write('\n]}');
    result.packageContents++;
  }
  await write('\n]\n}\n');
  return result;
}

/** A table's rows in insertion order (or its key's), in pages, without the backend's own row id. */
function readRows(store: Store, t: (typeof EXPORTED_TABLES)[number]): Row[] {
  const order = t.byKey ? t.key : 'rowid';
  const page = store.db.prepare(
    `SELECT ${order} AS vnfm_export_page, *${t.journal ? `, ${journalText(`${t.table}.${t.key}`)} AS journal` : ''} FROM ${t.table} WHERE ${order} > ? ORDER BY ${order} LIMIT 500`,
  );
  const rows: Row[] = [];
  let after: unknown = t.byKey ? '' : 0;
  for (;;) {
    const got = page.all(after) as Row[];
    for (const r of got) {
      after = r['vnfm_export_page'];
      delete r['vnfm_export_page'];
      delete r['rowid'];
      rows.push(r);
    }
    if (got.length < 500) return rows;
  }
}

export interface ImportOptions {
  /** Adds to a store that has state, skipping rows whose ids it has; without it such a store is refused. */
  merge: boolean;
  contents: PackageContentIo;
  /** Throws unless this side's master key opens the token (SecretKeyError). */
  checkSealed: (token: string, keyId: string) => void | Promise<void>;
  /** Where the document came from, for messages. */
  source: string;
}

export interface ImportResult {
  imported: Record<string, number>;
  /** `<table>/<key>` of each row left out because the store has it (--merge). */
  skipped: string[];
  packageContents: number;
}

/**
 * Reads the document and writes every row in one transaction: all of it or
 * nothing. Before anything is written, the master key must open the sealed
 * value the document carries, and the store must be empty (unless `merge`).
 * Package zips are staged as they are read (never whole in memory) and made
 * visible with the rows.
 */
export async function importStore(store: Store, lines: AsyncIterable<string>, opts: ImportOptions): Promise<ImportResult> {
  if (!opts.merge) assertEmpty(store, opts.source);
  const reader = new DocumentReader(lines, opts.source);
  const header = await reader.header();
  const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  if (header.source.schemaVersion > known) {
    throw new VnfmError(`${opts.source} was exported from a store at schema version ${header.source.schemaVersion}; this vnfm knows up to ${known}`, {
      hint: 'import it with the vnfm version that exported it, or a newer one',
    });
  }
  if (header.sealedCheck) await opts.checkSealed(header.sealedCheck.token, header.sealedCheck.keyId);
  const tables = await reader.tables();
  if (header.source.schemaVersion < 12) splitDetails(tables);
  const existingPackages = new Set(opts.merge ? store.packages.ids() : []);
  const staged: StagedContent[] = [];
  try {
    for await (const entry of reader.packageContents()) {
      const known = tables.get('vnf_packages')?.some((r) => r['id'] === entry.packageId);
      if (!known || existingPackages.has(entry.packageId)) {
        // Read past what is not imported.
        for await (const chunk of entry.chunks) void chunk;
        continue;
      }
      const target = await opts.contents.stage(entry.packageId);
      staged.push(target);
      for await (const chunk of entry.chunks) await target.write(chunk);
      await target.close(entry);
    }
    const result = store.db
      .transaction(() => {
        if (!opts.merge) assertEmpty(store, opts.source);
        const out = insertRows(store, tables);
        for (const s of staged) s.commit();
        return out;
      })
      .immediate();
    for (const s of staged) await s.publish();
    return { ...result, packageContents: staged.length };
  } catch (err) {
    for (const s of staged) await s.discard().catch(() => undefined);
    throw err;
  }
}

/**
 * An export from a store before migration 12 carries the large JSON columns
 * in the rows of vnf_instances and lcm_op_occs: they move to the side tables'
 * rows, as the migration moves them, and vnfc_count is counted.
 */
function splitDetails(tables: Map<string, Row[]>): void {
  const take = (row: Row, columns: string[]): Row => {
    const out: Row = { id: row['id'] };
    for (const c of columns) {
      if (c in row) out[c] = row[c];
      delete row[c];
    }
    return out;
  };
  const instances = tables.get('vnf_instances') ?? [];
  tables.set(
    'vnf_instance_details',
    instances.map((row) => {
      const details = take(row, ['instantiated_vnf_info', 'metadata', 'extensions', 'vnf_configurable_properties']);
      row['vnfc_count'] = vnfcCountOf(details['instantiated_vnf_info']);
      return details;
    }),
  );
  const ops = tables.get('lcm_op_occs') ?? [];
  const priors = ops.map((row) => take(row, ['prior_state']));
  tables.set(
    'lcm_op_occ_details',
    ops.map((row) => take(row, ['operation_params', 'resource_changes', 'journal'])),
  );
  tables.set(
    'lcm_op_occ_prior_states',
    priors.filter((p) => p['prior_state'] !== null && p['prior_state'] !== undefined),
  );
}

/** The length of instantiatedVnfInfo.vnfcInfo in the stored text, as SQLite's json_array_length(col, '$.vnfcInfo') counts it. */
function vnfcCountOf(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  let vnfcs: unknown;
  try {
    vnfcs = (JSON.parse(text) as { vnfcInfo?: unknown } | null)?.vnfcInfo;
  } catch {
    return null;
  }
  if (vnfcs === undefined || vnfcs === null) return null;
  return Array.isArray(vnfcs) ? vnfcs.length : 0;
}

function assertEmpty(store: Store, source: string): void {
  const held = STATE_TABLES.filter((t) => store.db.prepare(`SELECT 1 FROM ${t} LIMIT 1`).get() !== undefined);
  if (held.length) {
    throw new ConflictError(`the store ${store.location} is not empty (it has ${held.join(', ')}): refusing to import ${source} into it`, {
      hint: 'import into an empty store, or pass --merge to add what it has not got (rows whose ids exist are skipped and listed)',
    });
  }
}

function insertRows(store: Store, tables: Map<string, Row[]>): Omit<ImportResult, 'packageContents'> {
  const imported: Record<string, number> = {};
  const skipped: string[] = [];
  for (const { table, key, journal: withJournal } of EXPORTED_TABLES) {
    const rows = tables.get(table) ?? [];
    const columns = new Set((store.db.prepare(`PRAGMA table_info("${table}")`).all() as { name: string }[]).map((c) => c.name));
    const exists = store.db.prepare(`SELECT 1 FROM ${table} WHERE ${key} = ?`);
    imported[table] = 0;
    for (const row of rows) {
      const journal = withJournal ? journalSteps(row) : [];
      const names = Object.keys(row);
      const unknown = names.find((n) => !columns.has(n) || n === 'rowid');
      if (unknown)
        throw new UsageError(`table ${table} of the export has a column ${JSON.stringify(unknown)} this store has not`, {
          hint: 'import it with the vnfm version that exported it, or a newer one',
        });
      if (exists.get(row[key])) {
        skipped.push(`${table}/${String(row[key])}`);
        continue;
      }
      store.db.prepare(`INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`).run(...names.map((n) => row[n]));
      for (const step of journal) store.opOccs.appendJournal(String(row[key]), step);
      imported[table]++;
    }
  }
  return { imported, skipped };
}

/** Takes an operation's journal (a JSON array) out of its details row: its steps, in order. */
function journalSteps(row: Row): JournalStep[] {
  const text = row['journal'];
  delete row['journal'];
  if (text === undefined || text === null) return [];
  let steps: unknown;
  try {
    steps = JSON.parse(String(text));
  } catch {
    // reported below
  }
  if (!Array.isArray(steps)) {
    throw new UsageError(`table lcm_op_occ_details of the export: the journal of operation ${String(row['id'])} is not a JSON array`, {
      hint: 'export the store again with store-export; the document was changed after it was written',
    });
  }
  return steps as JournalStep[];
}

interface ContentEntry {
  packageId: string;
  sha256: string;
  sizeBytes: number;
  chunks: AsyncIterable<Buffer>;
}

/** Reads the document line by line, as exportStore writes it. */
class DocumentReader {
  readonly #it: AsyncIterator<string>;
  #line = 0;

  constructor(
    lines: AsyncIterable<string>,
    private readonly source: string,
  ) {
    this.#it = lines[Symbol.asyncIterator]();
  }

  private fail(why: string): never {
    throw new UsageError(`${this.source} line ${this.#line}: ${why}`, { hint: 'give a file written by vnfm store-export, unchanged' });
  }

  private async next(): Promise<string> {
    const r = await this.#it.next();
    this.#line++;
    if (r.done) this.fail('the document ends early (was the export cut short?)');
    return r.value;
  }

  private parse(text: string): unknown {
    try {
      return JSON.parse(text);
    } catch {
      return this.fail('not a line of a vnfm export document');
    }
  }

  async header(): Promise<ExportHeader> {
    const first = await this.next();
    if (!first.endsWith(',')) this.fail('not a vnfm export document (it starts with {"vnfmExport": …} on a line of its own)');
    const h = this.parse(`${first.slice(0, -1)}}`) as Partial<ExportHeader>;
    if (typeof h.vnfmExport !== 'number') this.fail('not a vnfm export document (no "vnfmExport")');
    if (h.vnfmExport !== EXPORT_FORMAT_VERSION) this.fail(`export format ${h.vnfmExport}; this vnfm reads format ${EXPORT_FORMAT_VERSION}`);
    if (!h.source || typeof h.source.schemaVersion !== 'number') this.fail('the header has no source schema version');
    return h as ExportHeader;
  }

  async tables(): Promise<Map<string, Row[]>> {
    if ((await this.next()) !== '"tables":{') this.fail('expected "tables":{');
    const tables = new Map<string, Row[]>();
    for (;;) {
      const line = await this.next();
      if (line === '},') return tables;
      const m = /^,?"(\w+)":\[$/.exec(line);
      if (!m) this.fail('expected a table');
      if (!EXPORTED_TABLES.some((t) => t.table === m[1])) this.fail(`unknown table ${m[1]}`);
      const rows: Row[] = [];
      tables.set(m[1]!, rows);
      for (let row = await this.next(); row !== ']' && row !== '],'; row = await this.next()) {
        const value = this.parse(row.endsWith(',') ? row.slice(0, -1) : row);
        if (value === null || typeof value !== 'object' || Array.isArray(value)) this.fail(`a row of ${m[1]} is not an object`);
        rows.push(value as Row);
      }
    }
  }

  async *packageContents(): AsyncGenerator<ContentEntry> {
    if ((await this.next()) !== '"packageContents":[') this.fail('expected "packageContents":[');
    for (;;) {
      const line = await this.next();
      if (line === ']') {
        if ((await this.next()) !== '}') this.fail('expected the end of the document');
        return;
      }
      const head = line.startsWith(',') ? line.slice(1) : line;
      if (!head.endsWith('"chunks":[')) this.fail("expected a package's contents");
      const e = this.parse(`${head}]}`) as Partial<ContentEntry>;
      if (typeof e.packageId !== 'string' || typeof e.sha256 !== 'string' || typeof e.sizeBytes !== 'number') this.fail("a package's contents lack packageId, sha256 or sizeBytes");
      let done = false;
      const chunks = async function* (this: DocumentReader): AsyncGenerator<Buffer> {
        for (let c = await this.next(); c !== ']}' && c !== ']},'; c = await this.next()) {
          const text = this.parse(c.endsWith(',') ? c.slice(0, -1) : c);
          if (typeof text !== 'string') this.fail('a chunk is not a base64 string');
          yield Buffer.from(text, 'base64');
        }
        done = true;
      }.call(this);
      yield { packageId: e.packageId, sha256: e.sha256, sizeBytes: e.sizeBytes, chunks };
      if (!done) this.fail("a package's chunks were not read");
    }
  }
}

/** The lines of a stream (a file), none held beyond its own. */
export function linesOf(input: NodeJS.ReadableStream): AsyncIterable<string> {
  return createInterface({ input, crlfDelay: Infinity });
}

/** The SHA-256 and size of bytes as they pass: what a staged zip checks itself against. */
export function hashingCounter(): { update(chunk: Uint8Array): void; result(): { sha256: string; sizeBytes: number } } {
  const hash = createHash('sha256');
  let size = 0;
  return {
    update: (chunk) => {
      hash.update(chunk);
      size += chunk.length;
    },
    result: () => ({ sha256: hash.digest('hex'), sizeBytes: size }),
  };
}
