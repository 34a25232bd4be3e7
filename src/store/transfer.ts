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
import { createHash } from 'node:crypto';
import { ConflictError, echo, UsageError, VnfmError } from '../errors.js';
import type { Store } from './index.js';
import { migrations } from './migrations/index.js';
import type { JournalStep } from '../model/resources.js';
import { journalText } from './lcm-op-occ-repository.js';
import {
  DEFAULT_IMPORT_LIMITS,
  DocumentReader,
  EXPORT_FORMAT_VERSION,
  EXPORTED_TABLES,
  type ContentEntry,
  type DocumentTables,
  type ExportHeader,
  type ImportLimits,
  type Row,
} from './export-document.js';
import { checkRows, rowPlace, sealedValues } from './import-checks.js';
import { checkName } from './names.js';

export { DEFAULT_IMPORT_LIMITS, EXPORT_FORMAT_VERSION, EXPORTED_TABLES, linesOf, MAX_LINE_BYTES, type ExportHeader, type ImportLimits } from './export-document.js';

/** Tables whose rows make a store non-empty (settings alone do not). */
const STATE_TABLES = ['vims', 'vnf_packages', 'vnf_instances', 'lcm_op_occs', 'ssh_host_keys'];

/** Where package zips come from and go to: the package directories or the shared store (csar/packages.ts). */
export interface PackageContentIo {
  /** The zip's bytes, one chunk at a time; `undefined` when this side has none of them. */
  read(packageId: string): Promise<AsyncIterable<Uint8Array> | undefined>;
  /** Receives a zip being imported; nothing of it is visible before `commit` and `publish`. */
  stage(packageId: string): Promise<StagedContent>;
}

export interface StagedContent {
  write(chunk: Buffer): Promise<void>;
  /** All bytes are in: checks them against the recorded hash and size, and prepares them. */
  close(expected: { sha256: string; sizeBytes: number }): Promise<void>;
  /** Inside the import's transaction. */
  commit(): void | Promise<void>;
  /** After the transaction committed. */
  publish(): Promise<void>;
  /** The import failed: removes what was staged. */
  discard(): Promise<void>;
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
  const snapshot = await store.db
    .transaction(async () => {
      const tables: { table: string; rows: Row[] }[] = [];
      for (const t of EXPORTED_TABLES) tables.push({ table: t.table, rows: await readRows(store, t) });
      return { tables, sealed: (await store.secrets.listSecrets())[0] };
    })
    .deferred();
  const header: ExportHeader = {
    vnfmExport: EXPORT_FORMAT_VERSION,
    exportedAt: opts.now.toISOString(),
    source: { backend: store.backend, schemaVersion: (await store.info()).schemaVersion },
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
    const chunks = await opts.contents.read(id);
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
async function readRows(store: Store, t: (typeof EXPORTED_TABLES)[number]): Promise<Row[]> {
  const order = t.byKey ? t.key : 'rowid';
  const page = store.db.prepare(
    `SELECT ${order} AS vnfm_export_page, *${t.journal ? `, ${journalText(`${t.table}.${t.key}`)} AS journal` : ''} FROM ${t.table} WHERE ${order} > ? ORDER BY ${order} LIMIT 500`,
  );
  const rows: Row[] = [];
  let after: unknown = t.byKey ? '' : 0;
  for (;;) {
    const got = (await page.all(after)) as Row[];
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
  /**
   * Throws unless this side's master key opens the token (SecretKeyError);
   * `place` says where the token is in the document (`line 4: vims "ID": secrets_token`).
   */
  checkSealed: (token: string, keyId: string, place: string) => void | Promise<void>;
  /** Where the document came from, for messages. */
  source: string;
  /** How much of the document is held at once (DEFAULT_IMPORT_LIMITS where not given); the line's is linesOf's. */
  limits?: Partial<ImportLimits>;
}

export interface ImportResult {
  imported: Record<string, number>;
  /** `<table>/<key>` of each row left out because the store has it (--merge). */
  skipped: string[];
  packageContents: number;
}

/**
 * Reads the document and writes every row in one transaction: all of it or
 * nothing. Before anything is written: the store must be empty (unless
 * `merge`); every row must have its form (export-document.ts) and hold what
 * its columns take, with nothing the schema keeps unique given twice
 * (import-checks.ts); and the master key must open every sealed value of
 * the document. Package zips are staged as they are read (never whole in
 * memory), each checked against its package's record, and made visible with
 * the rows.
 */
export async function importStore(store: Store, lines: AsyncIterable<string>, opts: ImportOptions): Promise<ImportResult> {
  if (!opts.merge) await assertEmpty(store, opts.source);
  const reader = new DocumentReader(lines, opts.source, { ...DEFAULT_IMPORT_LIMITS, ...opts.limits });
  const header = await reader.header();
  const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  if (header.source.schemaVersion > known) {
    throw new VnfmError(`${opts.source} was exported from a store at schema version ${header.source.schemaVersion}; this vnfm knows up to ${known}`, {
      hint: 'import it with the vnfm version that exported it, or a newer one',
    });
  }
  if (header.sealedCheck) await opts.checkSealed(header.sealedCheck.token, header.sealedCheck.keyId, 'line 1: sealedCheck');
  const doc = await reader.tables();
  checkRows(doc, opts.source);
  for (const sealed of sealedValues(doc)) await opts.checkSealed(sealed.token, sealed.keyId, sealed.place);
  if (header.source.schemaVersion < 12) splitDetails(doc.tables);
  const staged: StagedContent[] = [];
  try {
    await stageContents(store, reader, doc, opts, staged);
    const result = await store.db
      .transaction(async () => {
        if (!opts.merge) await assertEmpty(store, opts.source);
        const out = await insertRows(store, doc, opts.source);
        for (const s of staged) await s.commit();
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
 * Stages each package's zip the document carries (into `staged`). A zip is
 * the one its record describes (the row's checksum_hash and size_bytes, the
 * entry's, and the bytes' own), or the document is refused: an imported
 * package never reports a hash its contents do not have.
 */
async function stageContents(store: Store, reader: DocumentReader, doc: DocumentTables, opts: ImportOptions, staged: StagedContent[]): Promise<void> {
  const records = new Map((doc.tables.get('vnf_packages') ?? []).map((r) => [r['id'] as string, r]));
  const existing = new Set(opts.merge ? await store.packages.ids() : []);
  const seen = new Set<string>();
  for await (const entry of reader.packageContents()) {
    const row = records.get(entry.packageId);
    if (!row) reader.fail(`the contents of package ${entry.packageId}, which the document has no record of`, { line: entry.line });
    if (seen.has(entry.packageId)) reader.fail(`the contents of package ${entry.packageId} a second time`, { line: entry.line });
    seen.add(entry.packageId);
    checkRecorded(reader, doc, opts.source, row, entry);
    if (existing.has(entry.packageId)) {
      // Read past what is not imported.
      for await (const chunk of entry.chunks) void chunk;
      continue;
    }
    const target = await opts.contents.stage(entry.packageId);
    staged.push(target);
    const sum = hashingCounter();
    let size = 0;
    for await (const chunk of entry.chunks) {
      size += chunk.length;
      if (size > entry.sizeBytes) reader.fail(`package ${entry.packageId}'s zip runs past the ${entry.sizeBytes} bytes its record gives`, { hint: RECORD_HINT });
      sum.update(chunk);
      await target.write(chunk);
    }
    const got = sum.result();
    if (got.sha256 !== entry.sha256 || got.sizeBytes !== entry.sizeBytes) {
      reader.fail(
        `package ${entry.packageId}'s zip is not the one its record describes (the chunks from line ${entry.line + 1}: SHA-256 ${got.sha256}, ${got.sizeBytes} bytes; ` +
          `recorded: SHA-256 ${entry.sha256}, ${entry.sizeBytes} bytes)`,
        { hint: RECORD_HINT },
      );
    }
    await target.close(entry);
  }
}

/** The entry's hash and size must be the package row's (the zip's own are checked against them as it is read). */
function checkRecorded(reader: DocumentReader, doc: DocumentTables, source: string, row: Row, entry: ContentEntry): void {
  const recorded = { algorithm: row['checksum_algorithm'], sha256: row['checksum_hash'], sizeBytes: Number(row['size_bytes']) };
  if (recorded.sha256 === entry.sha256 && recorded.sizeBytes === entry.sizeBytes && /^sha-?256$/i.test(String(recorded.algorithm))) return;
  reader.fail(
    `package ${entry.packageId}'s zip (SHA-256 ${entry.sha256}, ${entry.sizeBytes} bytes) is not the one its record describes ` +
      `(${rowPlace(doc, source, 'vnf_packages', row)}: checksum ${echo(recorded.algorithm)} ${echo(recorded.sha256)}, size_bytes ${echo(row['size_bytes'])})`,
    { line: entry.line, hint: RECORD_HINT },
  );
}

const RECORD_HINT = "export the store again with store-export: a package's record and zip travel as they were onboarded";

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

async function assertEmpty(store: Store, source: string): Promise<void> {
  const held: string[] = [];
  for (const t of STATE_TABLES) if ((await store.db.prepare(`SELECT 1 FROM ${t} LIMIT 1`).get()) !== undefined) held.push(t);
  if (held.length) {
    throw new ConflictError(`the store ${store.location} is not empty (it has ${held.join(', ')}): refusing to import ${source} into it`, {
      hint: 'import into an empty store, or pass --merge to add what it has not got (rows whose ids exist are skipped and listed)',
    });
  }
}

async function insertRows(store: Store, doc: DocumentTables, source: string): Promise<Omit<ImportResult, 'packageContents'>> {
  const imported: Record<string, number> = {};
  const skipped: string[] = [];
  for (const { table, key, journal: withJournal } of EXPORTED_TABLES) {
    const rows = doc.tables.get(table) ?? [];
    const columns = new Set(((await store.db.prepare(store.db.dialect.columns(table)).all()) as { name: string }[]).map((c) => c.name));
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
      if (await exists.get(row[key])) {
        skipped.push(`${table}/${String(row[key])}`);
        continue;
      }
      await checkImportedName(store, doc, source, table, row);
      try {
        await store.db.prepare(`INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`).run(...names.map((n) => row[n]));
      } catch (err) {
        throw refusedRow(err, rowPlace(doc, source, table, row));
      }
      for (const step of journal) await store.opOccs.appendJournal(String(row[key]), step);
      imported[table]++;
    }
  }
  return { imported, skipped };
}

/** A VIM's, package's or instance's name: the rules every command that sets one applies, and an instance's uniqueness (within the import's transaction). */
async function checkImportedName(store: Store, doc: DocumentTables, source: string, table: string, row: Row): Promise<void> {
  const kind = ({ vims: 'vim', vnf_packages: 'package', vnf_instances: 'instance' } as const)[table as 'vims' | 'vnf_packages' | 'vnf_instances'];
  if (!kind || (table !== 'vims' && row['name'] == null)) return;
  const place = rowPlace(doc, source, table, row);
  checkName(kind, row['name'], { file: place, field: 'name' });
  if (table === 'vnf_instances') {
    try {
      await store.instances.assertNameFree(row['name'], String(row['id']));
    } catch (err) {
      throw err instanceof VnfmError ? new ConflictError(`${place}: ${err.message}`, { hint: 'rename one of them, then import again: nothing was imported', cause: err }) : err;
    }
  }
}

/**
 * A row the store refused, named: one that takes what a row of this store
 * holds (a name, the default VIM, a vnfdId: --merge) is a conflict (exit 4);
 * one the schema refuses (a missing column, a value out of its CHECK, a
 * reference to a row that is nowhere) is a bad document (exit 2).
 */
function refusedRow(err: unknown, place: string): unknown {
  if (err instanceof VnfmError || !(err instanceof Error)) return err;
  if (/^UNIQUE constraint failed/.test(err.message)) {
    return new ConflictError(`${place}: this store has a row that holds the same value (${err.message})`, {
      hint: 'change or delete that row here (or the one in the document), then import again: nothing was imported',
      cause: err,
    });
  }
  if (/constraint|violates|invalid input|out of range|bind|mismatch/i.test(err.message)) {
    return new UsageError(`${place}: refused by the store: ${err.message}`, {
      hint: 'give the document as store-export wrote it, or export the store again; nothing was imported',
      cause: err,
    });
  }
  return err;
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
