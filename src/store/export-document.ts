/**
 * The document store-export writes and store-import reads: its format, how
 * much of it import holds at once, and reading it.
 *
 * It is valid JSON written one record a line (a row, or one chunk of a
 * package's zip in base64), so that neither side holds it whole. Import
 * reads it as store-export writes it, and takes nothing on trust: each line
 * is bounded before it is held (a 600 MiB line is refused at its first
 * 64 MiB), each row's key has its form (vnfm's ids are UUIDs: some become
 * paths) and appears once, each chunk is base64 of at most 4 MiB. A document
 * that breaks any of this is refused (exit 2) naming its line.
 */
import { echo, UsageError } from '../errors.js';
import { isUuid } from '../model/ids.js';

export const EXPORT_FORMAT_VERSION = 1;

/**
 * The tables exported, in the order rows are inserted (a row's references
 * first), the column that names a row, whether that is one of vnfm's ids (a
 * UUID), and whether a row carries its operation's journal (one JSON array,
 * as it was kept before its steps had rows of their own, migration 14).
 */
export const EXPORTED_TABLES: readonly { table: string; key: string; uuid?: boolean; byKey?: boolean; journal?: boolean }[] = [
  { table: 'vims', key: 'id', uuid: true },
  { table: 'vnf_packages', key: 'id', uuid: true },
  { table: 'vnf_instances', key: 'id', uuid: true },
  { table: 'lcm_op_occs', key: 'id', uuid: true },
  // the large JSON columns of the two above (migration 12)
  { table: 'vnf_instance_details', key: 'id', uuid: true },
  { table: 'lcm_op_occ_details', key: 'id', uuid: true, journal: true },
  { table: 'lcm_op_occ_prior_states', key: 'id', uuid: true },
  { table: 'ssh_host_keys', key: 'server_id' },
  // no rowid on PostgreSQL: read in the order of its names
  { table: 'store_settings', key: 'name', byKey: true },
];

export interface ExportHeader {
  vnfmExport: number;
  exportedAt: string;
  source: { backend: string; schemaVersion: number };
  /** One sealed value of the store, for import to check its master key opens it before reading on. */
  sealedCheck: { keyId: string; token: string } | null;
  withPackageContents: boolean;
}

export type Row = Record<string, unknown>;

const MiB = 1024 * 1024;

/** How much of a document import holds at once: a document over them is refused (exit 2), naming the line. */
export interface ImportLimits {
  /** The longest line, in bytes: a row, or one chunk of a zip in base64 (1.4 MB as store-export writes them). */
  lineBytes: number;
  /** Rows in all tables together: import holds every row until its one transaction. */
  records: number;
}

export const DEFAULT_IMPORT_LIMITS: Readonly<ImportLimits> = { lineBytes: 64 * MiB, records: 1_000_000 };
/** The most --max-line-size allows: a JavaScript string holds at most about 512 MiB. */
export const MAX_LINE_BYTES = 256 * MiB;
/** The largest chunk of a zip, decoded: store-export writes chunks of 1 MiB. */
export const MAX_CHUNK_BYTES = 4 * MiB;

const sizeText = (bytes: number) => (bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`);
/** A size as --max-line-size takes it. */
const sizeFlag = (bytes: number) => (bytes % MiB === 0 ? `${bytes / MiB}MiB` : String(bytes));

/** A line over the limit, met by linesOf before it is held whole; DocumentReader names the document. */
class LineTooLong extends Error {
  constructor(
    readonly line: number,
    readonly limit: number,
  ) {
    super(`line ${line} is longer than ${limit} bytes`);
  }
}

/**
 * The lines of a stream (a file), none held beyond its own, and none longer
 * than `maxLineBytes`: a longer one is refused when its first bytes past the
 * limit arrive, before it is held whole.
 */
export async function* linesOf(input: AsyncIterable<Buffer | string>, maxLineBytes: number = DEFAULT_IMPORT_LIMITS.lineBytes): AsyncGenerator<string> {
  let parts: Buffer[] = [];
  let held = 0;
  let line = 0;
  for await (const data of input) {
    let buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    for (;;) {
      const nl = buf.indexOf(0x0a);
      if (held + (nl < 0 ? buf.length : nl) > maxLineBytes) throw new LineTooLong(line + 1, maxLineBytes);
      if (nl < 0) {
        parts.push(buf);
        held += buf.length;
        break;
      }
      parts.push(buf.subarray(0, nl));
      line++;
      yield lineText(parts);
      parts = [];
      held = 0;
      buf = buf.subarray(nl + 1);
    }
  }
  if (held) yield lineText(parts);
}

function lineText(parts: Buffer[]): string {
  const text = (parts.length === 1 ? parts[0]! : Buffer.concat(parts)).toString('utf8');
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}

/** The rows of a document's tables, and the line each was read from (for messages). */
export interface DocumentTables {
  tables: Map<string, Row[]>;
  lineOf: Map<Row, number>;
}

/** One package's zip in the document: its chunks are read as they are iterated, once. */
export interface ContentEntry {
  packageId: string;
  sha256: string;
  sizeBytes: number;
  /** The line that opens it. */
  line: number;
  chunks: AsyncIterable<Buffer>;
}

const HINT = 'give a file written by vnfm store-export, unchanged';
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Reads the document line by line, as exportStore writes it. */
export class DocumentReader {
  readonly #it: AsyncIterator<string>;
  #line = 0;
  #records = 0;

  constructor(
    lines: AsyncIterable<string>,
    readonly source: string,
    private readonly limits: ImportLimits = DEFAULT_IMPORT_LIMITS,
  ) {
    this.#it = lines[Symbol.asyncIterator]();
  }

  /** Refuses the document (exit 2), naming the line (the current one unless given). */
  fail(why: string, opts: { line?: number; hint?: string } = {}): never {
    throw new UsageError(`${this.source} line ${opts.line ?? this.#line}: ${why}`, { hint: opts.hint ?? HINT });
  }

  private async next(): Promise<string> {
    let r: IteratorResult<string>;
    try {
      r = await this.#it.next();
    } catch (err) {
      if (!(err instanceof LineTooLong)) throw err;
      this.#line = err.line;
      return this.fail(`the line is longer than the limit of ${sizeText(err.limit)} (a line holds one row, or 1 MiB of a zip in base64)`, {
        hint: `if store-export wrote it so, raise the limit: --max-line-size ${sizeFlag(Math.min(err.limit * 2, MAX_LINE_BYTES))}; else give the document as store-export wrote it`,
      });
    }
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
    const h = this.parse(`${first.slice(0, -1)}}`) as Partial<ExportHeader> | null;
    if (!h || typeof h.vnfmExport !== 'number') this.fail('not a vnfm export document (no "vnfmExport")');
    if (h.vnfmExport !== EXPORT_FORMAT_VERSION) this.fail(`export format ${h.vnfmExport}; this vnfm reads format ${EXPORT_FORMAT_VERSION}`);
    if (!h.source || typeof h.source.schemaVersion !== 'number') this.fail('the header has no source schema version');
    const check = h.sealedCheck;
    if (check !== null && check !== undefined && (typeof check.token !== 'string' || typeof check.keyId !== 'string')) {
      this.fail('the header\'s "sealedCheck" is neither null nor a token and a keyId');
    }
    return h as ExportHeader;
  }

  /** Every table's rows: each an object whose key has its form and appears once in its table. */
  async tables(): Promise<DocumentTables> {
    if ((await this.next()) !== '"tables":{') this.fail('expected "tables":{');
    const tables = new Map<string, Row[]>();
    const lineOf = new Map<Row, number>();
    for (;;) {
      const line = await this.next();
      if (line === '},') return { tables, lineOf };
      const m = /^,?"(\w+)":\[$/.exec(line);
      if (!m) this.fail('expected a table');
      const spec = EXPORTED_TABLES.find((t) => t.table === m[1]);
      if (!spec) this.fail(`unknown table ${m[1]}`);
      if (tables.has(spec.table)) this.fail(`the table ${spec.table} a second time`);
      const rows: Row[] = [];
      tables.set(spec.table, rows);
      const seen = new Map<string, number>();
      for (let text = await this.next(); text !== ']' && text !== '],'; text = await this.next()) {
        if (++this.#records > this.limits.records) {
          this.fail(`more than ${this.limits.records} rows, the limit`, { hint: 'if the store holds that many, raise the limit with --max-records' });
        }
        const row = this.parse(text.endsWith(',') ? text.slice(0, -1) : text) as Row;
        if (row === null || typeof row !== 'object' || Array.isArray(row)) this.fail(`a row of ${spec.table} is not an object`);
        this.checkKey(spec, row, seen);
        rows.push(row);
        lineOf.set(row, this.#line);
      }
    }
  }

  private checkKey(spec: (typeof EXPORTED_TABLES)[number], row: Row, seen: Map<string, number>): void {
    const key = row[spec.key];
    if (typeof key !== 'string' || key === '') this.fail(`a row of ${spec.table} without its ${spec.key} (a string)`);
    if (spec.uuid && !isUuid(key)) {
      this.fail(`${spec.table} ${echo(key)}: ${spec.key} is not a UUID (vnfm's ids are, and some become paths)`, {
        hint: 'give the document as store-export wrote it; an id of another form was not made by vnfm',
      });
    }
    const first = seen.get(key);
    if (first !== undefined) {
      this.fail(`${spec.table} ${echo(key)} a second time (first on line ${first}): a document holds each row once`, {
        hint: 'keep one of the two rows, or export the store again with store-export',
      });
    }
    seen.set(key, this.#line);
  }

  /** The packages' zips, each read as its chunks are iterated (a zip whose chunks were not read fails the document). */
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
      const e = this.parse(`${head}]}`) as Partial<ContentEntry> | null;
      if (!e || typeof e.packageId !== 'string' || typeof e.sha256 !== 'string' || typeof e.sizeBytes !== 'number') {
        this.fail("a package's contents lack packageId, sha256 or sizeBytes");
      }
      if (!isUuid(e.packageId)) this.fail(`the contents of package ${echo(e.packageId)}: packageId is not a UUID (vnfm's ids are, and a package's becomes a path)`);
      if (!/^[0-9a-f]{64}$/.test(e.sha256)) this.fail(`the contents of package ${e.packageId}: sha256 ${echo(e.sha256)} is not a SHA-256 in hex`);
      if (!Number.isSafeInteger(e.sizeBytes) || e.sizeBytes < 0) this.fail(`the contents of package ${e.packageId}: sizeBytes ${echo(e.sizeBytes)} is not a size`);
      let done = false;
      const chunks = async function* (this: DocumentReader, id: string): AsyncGenerator<Buffer> {
        for (let c = await this.next(); c !== ']}' && c !== ']},'; c = await this.next()) {
          const text = this.parse(c.endsWith(',') ? c.slice(0, -1) : c);
          if (typeof text !== 'string' || text.length % 4 !== 0 || !BASE64.test(text)) this.fail(`a chunk of package ${id}'s zip is not a base64 string`);
          if ((text.length / 4) * 3 > MAX_CHUNK_BYTES + 2) this.fail(`a chunk of package ${id}'s zip is over ${sizeText(MAX_CHUNK_BYTES)} (store-export writes 1 MiB)`);
          yield Buffer.from(text, 'base64');
        }
        done = true;
      }.call(this, e.packageId);
      yield { packageId: e.packageId, sha256: e.sha256, sizeBytes: e.sizeBytes, line: this.#line, chunks };
      if (!done) this.fail("a package's chunks were not read");
    }
  }
}
