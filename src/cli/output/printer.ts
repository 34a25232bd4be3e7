/**
 * The one printer: `-o table|wide|json|yaml|value|name|jsonpath=...`, `-c
 * COLUMN`, `--no-headers` and `-q`, for every command that prints a
 * resource; `--sort`, `--limit` and `--filter` for every list. Each
 * resource supplies a View.
 */
import { setFlagsFromString } from 'node:v8';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { UsageError } from '../../errors.js';
import { RawJson, readingRawJson } from '../../store/lazy-json.js';
import { collect } from '../../store/db.js';
import type { TableRead, TableText } from '../../store/table-text.js';
import type { IO } from '../io.js';
import { terminalSafe } from '../terminal-text.js';
import { applySelector, keepsAttribute, type AttributeSelector } from './attribute-selector.js';

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml', 'value', 'name'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number] | `jsonpath=${string}`;

export interface OutputOptions {
  output: OutputFormat;
  column?: string[];
  /** false with --no-headers. */
  headers?: boolean;
  /** -q: ids only, as -o name. */
  quiet?: boolean;
}

export interface ListOptions {
  sort?: string;
  limit?: number;
  filter?: string;
  /** Set by a command whose own flags (--state, --vim, ...) narrowed the list: an empty one then says nothing matched. */
  narrowed?: boolean;
  /**
   * The attributes -o json and -o yaml print (SOL013 attribute selectors,
   * attribute-selector.ts); absent: all. `-c` without a selector option names
   * the attributes itself, from all of them.
   */
  attributes?: AttributeSelector;
}

export interface Column<T> {
  header: string;
  key: string;
  cell: (item: T) => string;
  /** Shown with -o wide only. */
  wide?: boolean;
  /** The whole value where the table shows it shortened (ids): used by -o wide and -o value. */
  full?: (item: T) => string;
}

/** How one kind of resource is shown. */
export interface View<T> {
  /** Table columns for lists: header and cell. */
  columns: Column<T>[];
  /** The machine-readable form (json/yaml/jsonpath) and the rows of `show` tables. */
  toData: (item: T) => Record<string, unknown>;
  /** Said on stderr for an empty list in table form. */
  empty: string;
  /** What -o name and -q print; the `id` field (else `name`) by default. */
  name?: (item: T) => string;
  /** Every column's cell (and name) works on a summary item (ListSource.read with `summary`). */
  summaryColumns?: boolean;
}

/**
 * A list read as the printer needs it, instead of an array read whole: a
 * table asks for summary items (what its columns show), `-o json` streams
 * whole items page by page, `--limit` without `--sort` or `--filter` reads
 * no more rows than it prints.
 */
export interface ListSource<T> {
  /**
   * `rawJson`: items for writeJsonList, their JSON fields RawJson values;
   * `attributes`: the complex attributes to read, the others left out;
   * `simpleJson`: each item a RawJson of its simple attributes, as -o json
   * prints them by default (see the store's ListRead).
   */
  read(how: { summary: boolean; limit?: number; rawJson?: boolean; attributes?: (attribute: string) => boolean; simpleJson?: boolean }): Iterable<T> | AsyncIterable<T>;
  /**
   * The table of the summary items (the view's table or wide columns) as the
   * store writes it, the same bytes as the printer's; undefined where the
   * store cannot (the printer then reads the items).
   */
  table?(how: TableRead): TableText | undefined | Promise<TableText | undefined>;
  /**
   * The default `-o json` (each item's simple attributes, as `simpleJson`
   * reads them) as the store writes it, a page of items at a time: the items
   * joined, without the brackets; no page for none; undefined where the store
   * cannot (the printer then reads the items).
   */
  json?(how: { limit?: number }): Iterable<string> | undefined | Promise<Iterable<string> | undefined>;
}

export function isOutputFormat(v: string): v is OutputFormat {
  return (OUTPUT_FORMATS as readonly string[]).includes(v) || v.startsWith('jsonpath=');
}

/**
 * `legacyFile`: for commands that took `-o FILE` before `-o` meant the
 * format; any value is accepted and the command reads it with outputFileOf.
 */
export function addOutputOptions(cmd: Command, opts: { legacyFile?: boolean } = {}): Command {
  const formats = `${OUTPUT_FORMATS.join('|')}|jsonpath=TEMPLATE`;
  const help = opts.legacyFile ? 'the format of the result printed, or jsonpath=TEMPLATE (-o FILE is deprecated: use --file)' : 'output format, or jsonpath=TEMPLATE';
  const output = new Option('-o, --output <format>', help).default(opts.legacyFile ? undefined : 'table').argParser((v: string) => {
    if (opts.legacyFile || isOutputFormat(v)) return v;
    throw new InvalidArgumentError(`Allowed choices are ${formats}.`);
  });
  // The plain formats, for help and shell completion; jsonpath=... is checked by the parser above.
  output.argChoices = [...OUTPUT_FORMATS];
  return cmd
    .addOption(output)
    .option('-c, --column <name>', 'show only this column or field (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--no-headers', 'tables without their header line')
    .option('-q, --quiet', 'print ids only (as -o name)');
}

/** `--sort`, `--limit` and `--filter`, for a list command. */
export function addListOptions(cmd: Command): Command {
  return cmd
    .option('--sort <key[:desc]>', 'order by these columns or fields, comma-separated, each :asc (default) or :desc')
    .option('--limit <n>', 'print at most n items (after --sort)', (v: string) => {
      if (!/^[1-9]\d*$/.test(v)) throw new InvalidArgumentError('give a whole number above 0.');
      return Number(v);
    })
    .option('--filter <expr>', 'Tacker\'s (SOL013) attribute filter over the JSON fields, e.g. "(eq,instantiationState,INSTANTIATED);(cont,vnfInstanceName,web)"');
}

/**
 * For a command that writes a file: the file from --file, or from the old
 * `-o FILE` spelling with a warning; `-o FORMAT` stays the output format.
 */
export function outputFileOf(io: IO, flags: { file?: string; output?: string }): string | undefined {
  if (flags.output === undefined || isOutputFormat(flags.output)) return flags.file;
  if (flags.file !== undefined) throw new UsageError(`give the file once: --file ${flags.file} or -o ${flags.output}`, { hint: 'use --file FILE; -o is the output format' });
  io.warn(`-o FILE is deprecated and will be removed in the next release; use --file ${flags.output} (-o is the output format)`);
  return flags.output;
}

function formatOf(opts: OutputOptions): OutputFormat {
  return opts.quiet ? 'name' : (opts.output ?? 'table');
}

function visibleColumns<T>(view: View<T>, format: OutputFormat): Column<T>[] {
  return format === 'wide' ? view.columns : view.columns.filter((c) => !c.wide);
}

function sameName(a: string, b: string): boolean {
  const norm = (s: string) => s.toLowerCase().replace(/[ _-]/g, '');
  return a === b || norm(a) === norm(b);
}

/** The columns -c names: a view's column, or any field of the items' JSON form (`-c vnfProvider`; on an empty list, columns only). */
function pickColumns<T>(view: View<T>, wanted: string[] | undefined, format: OutputFormat, sample: T | undefined): Column<T>[] {
  if (!wanted?.length) return visibleColumns(view, format);
  const fields = sample === undefined ? [] : Object.keys(view.toData(sample));
  return wanted.map((w) => {
    const col = view.columns.find((c) => c.header.toLowerCase() === w.toLowerCase() || c.key === w) ?? view.columns.find((c) => sameName(c.key, w));
    if (col) return col;
    const field = fields.find((f) => f === w) ?? fields.find((f) => sameName(f, w));
    if (field !== undefined) return { header: field.toUpperCase(), key: field, cell: (item: T) => formatValue(view.toData(item)[field]) };
    throw new UsageError(`unknown column "${w}"`, { hint: `choose from: ${[...new Set([...view.columns.map((c) => c.key), ...fields])].join(', ')}` });
  });
}

function pickKeys(data: Record<string, unknown>, wanted: string[] | undefined, valid: string[]): Record<string, unknown> {
  if (!wanted?.length) return data;
  const out: Record<string, unknown> = {};
  for (const w of wanted) {
    const key = Object.keys(data).find((k) => k === w || k.toLowerCase() === w.toLowerCase().replace(/[ -]/g, '_'));
    if (!key) throw new UsageError(`unknown column "${w}"`, { hint: `choose from: ${valid.join(', ')}` });
    out[key] = data[key];
  }
  return out;
}

async function encode(format: 'json' | 'yaml', data: unknown): Promise<string> {
  if (format === 'json') return JSON.stringify(data, null, 2) + '\n';
  const { default: yaml } = await import('js-yaml');
  return yaml.dump(data, { noRefs: true, lineWidth: -1 });
}

async function jsonPath(format: string, data: unknown): Promise<string> {
  const { renderJsonPath } = await import('./jsonpath.js');
  const out = renderJsonPath(format.slice('jsonpath='.length), data);
  return out.endsWith('\n') || out === '' ? out : out + '\n';
}

/**
 * A table's lines, the header first: each column as wide as its widest cell.
 * A table is for people, in a pipe too (read on a terminal later): each cell
 * is made safe for one and kept to one line (terminal-text.ts) before it is measured.
 */
function* tableLines(io: IO, headers: string[] | undefined, rows: string[][]): Generator<string> {
  const widths = (headers ?? rows[0]!).map(() => 0);
  const measure = (r: string[]) => {
    for (let i = 0; i < widths.length; i++) {
      const cell = r[i];
      if (cell === undefined) continue;
      r[i] = terminalSafe(cell, { oneLine: true });
      widths[i] = Math.max(widths[i]!, r[i]!.length);
    }
  };
  if (headers) measure(headers);
  for (const r of rows) measure(r);
  // One string per line, built in place (a table of 20 000 rows makes no array per row).
  const line = (cells: string[]) => {
    let text = '';
    const last = cells.length - 1;
    for (let i = 0; i < last; i++) text += cells[i]!.padEnd(widths[i]!) + '   ';
    return (text + (cells[last] ?? '')).trimEnd();
  };
  if (headers) yield io.dataColor.bold(line(headers));
  for (const r of rows) yield line(r);
}

function renderTable(io: IO, headers: string[] | undefined, rows: string[][]): string {
  return [...tableLines(io, headers, rows)].join('\n') + '\n';
}

/** Characters of a long table gathered before a write to stdout. */
const TABLE_CHUNK = 1 << 16;

function formatValue(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** What -o name prints: the view's choice, else the item's id, else its name (samples have no id). */
function idOf<T>(view: View<T>, item: T): string {
  if (view.name) return view.name(item);
  const data = view.toData(item);
  return formatValue(data['id'] ?? data['name']);
}

/** A value to sort on: the JSON field of that name, else the column's whole text. */
function sortKey<T>(view: View<T>, key: string): (item: T) => unknown {
  const col = view.columns.find((c) => c.header.toLowerCase() === key.toLowerCase() || sameName(c.key, key));
  return (item: T) => {
    const data = view.toData(item);
    const field = Object.keys(data).find((k) => sameName(k, key));
    if (field !== undefined) return data[field];
    return col ? (col.full ?? col.cell)(item) : undefined;
  };
}

function sortItems<T>(view: View<T>, items: T[], spec: string): T[] {
  const keys = spec.split(',').map((part) => {
    const [key, dir = 'asc'] = part.trim().split(':');
    if (!key || (dir !== 'asc' && dir !== 'desc')) {
      throw new UsageError(`--sort "${spec}": "${part}" is not KEY, KEY:asc or KEY:desc`, { hint: 'e.g. --sort createdAt:desc,name' });
    }
    const known = [...view.columns.map((c) => c.key), ...(items[0] ? Object.keys(view.toData(items[0])) : [])];
    if (items[0] && !known.some((k) => sameName(k, key)) && !view.columns.some((c) => c.header.toLowerCase() === key.toLowerCase())) {
      throw new UsageError(`--sort: unknown key "${key}"`, { hint: `choose from: ${[...new Set(known)].join(', ')}` });
    }
    return { get: sortKey(view, key), sign: dir === 'desc' ? -1 : 1 };
  });
  const cmp = (a: unknown, b: unknown): number => {
    if (a === b) return 0;
    if (a === undefined || a === null) return 1;
    if (b === undefined || b === null) return -1;
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    return formatValue(a) < formatValue(b) ? -1 : 1;
  };
  // Each item's keys once, not once per comparison.
  const decorated = items.map((item) => ({ item, values: keys.map((k) => k.get(item)) }));
  decorated.sort((x, y) => {
    for (let i = 0; i < keys.length; i++) {
      const c = cmp(x.values[i], y.values[i]);
      if (c !== 0) return c * keys[i]!.sign;
    }
    return 0;
  });
  return decorated.map((d) => d.item);
}

/**
 * A secret sealed into a record (`{sealed, keyId}`: a request's password, an
 * inline VIM's token) is shown as `***`, as vim-show masks a VIM's secrets:
 * its ciphertext means nothing to a reader and has no place in a script's
 * output.
 */
function masked<T>(view: View<T>): View<T> {
  return { ...view, toData: (item) => maskSealed(view.toData(item)) as Record<string, unknown> };
}

/** The value with each sealed secret as `***`; the value itself (not a copy) where it holds none. */
export function maskSealed(v: unknown): unknown {
  // RawJson is masked where it is written (prettyValue).
  if (!v || typeof v !== 'object' || v instanceof RawJson) return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let n = 0; n < v.length; n++) {
      const m = maskSealed(v[n]);
      if (m !== v[n]) (out ??= [...v])[n] = m;
    }
    return out ?? v;
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 2 && typeof o['sealed'] === 'string' && typeof o['keyId'] === 'string') return '***';
  // Each value read once: a stored JSON field read under readingRawJson is a new RawJson at each read.
  const values = keys.map((k) => o[k]);
  const masked = values.map(maskSealed);
  return masked.some((m, n) => m !== values[n]) ? Object.fromEntries(keys.map((k, n) => [k, masked[n]])) : o;
}

/**
 * A list read from the store (10 000 rows and more) makes garbage fast and
 * keeps little: V8 would grow its young generation to 16 MiB semi-spaces for
 * it, tens of MiB of RSS that the list never needs. While the list prints,
 * the young generation keeps its first size (V8 reads the flag each time it
 * would grow it), for a few milliseconds more of scavenges. The flag is put
 * back afterwards: V8 stamps its code cache with the flags in force, and
 * bin/vnfm writes that cache at exit; a changed flag would make the next
 * start refuse it and compile the bundle again.
 */
async function withSmallYoungGeneration<T, R>(source: ListSource<T>, fn: (source: ListSource<T>) => Promise<R>): Promise<R> {
  // Set when the first row comes: an empty list (a new store) leaves V8's flags, and Node's v8 module, alone.
  let set = false;
  const small = () => {
    if (set) return;
    set = true;
    setFlagsFromString('--semi-space-growth-factor=1');
  };
  const watched = <I>(items: Iterable<I> | AsyncIterable<I>): AsyncIterable<I> => ({
    async *[Symbol.asyncIterator]() {
      for await (const item of items) {
        small();
        yield item;
      }
    },
  });
  const table = source.table?.bind(source);
  const json = source.json?.bind(source);
  try {
    return await fn({
      read: (how) => watched(source.read(how)),
      // A table's lines and the JSON pages are short-lived strings the store made: V8's young generation stays
      // small without the flag (over 10 000 instances or 20 000 operations: 50-57 MiB either way), and Node's v8
      // module (5 ms: it loads the stream classes) is not loaded for them.
      ...(table && { table }),
      ...(json && { json }),
    });
  } finally {
    if (set) setFlagsFromString('--semi-space-growth-factor=2');
  }
}

export async function printList<T>(io: IO, opts: OutputOptions & ListOptions, unmasked: View<T>, source: T[] | ListSource<T>): Promise<void> {
  return Array.isArray(source) ? printListOf(io, opts, unmasked, source) : withSmallYoungGeneration(source, (watched) => printListOf(io, opts, unmasked, watched));
}

async function printListOf<T>(io: IO, opts: OutputOptions & ListOptions, unmasked: View<T>, source: T[] | ListSource<T>): Promise<void> {
  const view = masked(unmasked);
  const format = formatOf(opts);
  const selector = opts.attributes && !opts.attributes.all && (opts.attributes.explicit || !opts.column?.length) ? opts.attributes : undefined;
  const selected = (data: Record<string, unknown>) => (selector ? applySelector(selector, data, (raw) => maskSealed(JSON.parse(raw.text))) : data);
  if (!Array.isArray(source)) {
    const plain = opts.filter === undefined && !opts.sort;
    const limit = plain && opts.limit !== undefined ? { limit: opts.limit } : {};
    // Without --filter or --sort, which look at every attribute, only the complex attributes printed are read.
    const attributes = selector && (format === 'json' || format === 'yaml') ? { attributes: (name: string) => keepsAttribute(selector, name) } : {};
    if (plain && format === 'json') {
      const { writeJsonList, writeJsonText } = await import('./json-list.js');
      if (selector?.simpleOnly && !opts.column?.length) {
        // The default: the store writes the list's JSON (its items' simple attributes) whole, or each item's as it reads the row.
        const text = await source.json?.(limit);
        if (text !== undefined) return writeJsonText(io.streams.stdout, text);
        return writeJsonList(io.streams.stdout, () => ({}), source.read({ summary: false, simpleJson: true, ...limit }) as AsyncIterable<unknown> as AsyncIterable<RawJson>);
      }
      const toData = (item: T) => {
        const data = selected(readingRawJson(() => view.toData(item)));
        return pickKeys(data, opts.column, Object.keys(data));
      };
      return writeJsonList(io.streams.stdout, toData, source.read({ summary: false, rawJson: true, ...limit, ...attributes }));
    }
    const onColumns = (opts.column ?? []).every((w) => view.columns.some((c) => c.header.toLowerCase() === w.toLowerCase() || sameName(c.key, w)));
    const summary = plain && Boolean(unmasked.summaryColumns) && onColumns && ['table', 'wide', 'value', 'name'].includes(format);
    if (summary && (format === 'table' || format === 'wide')) {
      const text = opts.column?.length ? undefined : await source.table?.({ wide: format === 'wide', ...limit });
      if (text) return printTableText(io, opts, visibleColumns(view, format), text);
      return printTableOf(io, opts, view, format, source.read({ summary, ...limit }));
    }
    source = (await collect(source.read({ summary, ...limit, ...(plain ? attributes : {}) }))) as T[];
  }
  const all = source;
  let items = all;
  if (opts.filter !== undefined) {
    const { parseTackerFilter, matchesTackerFilter } = await import('./tacker-filter.js');
    const terms = parseTackerFilter(opts.filter);
    items = items.filter((i) => matchesTackerFilter(terms, view.toData(i)));
  }
  if (opts.sort) items = sortItems(view, items, opts.sort);
  if (opts.limit !== undefined) items = items.slice(0, opts.limit);
  if (format === 'json' || format === 'yaml') {
    const keys = Object.keys(items[0] ? selected(view.toData(items[0])) : {});
    const data = items.map((item) => pickKeys(selected(view.toData(item)), opts.column, keys.length ? keys : view.columns.map((c) => c.key)));
    io.out(await encode(format, data));
    return;
  }
  // For programs: exact, but made safe on a terminal (outText).
  if (format.startsWith('jsonpath=')) {
    const out = await jsonPath(format, { kind: 'List', items: items.map((i) => view.toData(i)) });
    if (out) io.outText(out);
    return;
  }
  if (format === 'name') {
    if (items.length) io.outText(items.map((i) => idOf(view, i)).join('\n'));
    return;
  }
  const cols = pickColumns(view, opts.column, format, items[0]);
  if (format === 'value') {
    if (items.length) io.outText(items.map((item) => cols.map((c) => (c.full ?? c.cell)(item)).join(' ')).join('\n'));
    return;
  }
  if (items.length === 0) {
    io.info(opts.narrowed || opts.filter !== undefined || all.length > 0 ? 'Nothing matches the filters given.' : view.empty);
    return;
  }
  const cell = (c: Column<T>, item: T) => (format === 'wide' && c.full ? c.full(item) : c.cell(item));
  io.out(
    renderTable(
      io,
      opts.headers === false ? undefined : cols.map((c) => c.header),
      items.map((item) => cols.map((c) => cell(c, item))),
    ),
  );
}

/** A table of a list read as it comes: each item turned into its cells at once, and not kept. */
async function printTableOf<T>(io: IO, opts: OutputOptions & ListOptions, view: View<T>, format: 'table' | 'wide', items: Iterable<T> | AsyncIterable<T>): Promise<void> {
  let cols: Column<T>[] | undefined;
  const rows: string[][] = [];
  for await (const each of items) {
    cols ??= pickColumns(view, opts.column, format, each as T);
    rows.push(cols.map((c) => (format === 'wide' && c.full ? c.full(each as T) : c.cell(each as T))));
  }
  if (!cols) {
    pickColumns(view, opts.column, format, undefined);
    io.info(opts.narrowed ? 'Nothing matches the filters given.' : view.empty);
    return;
  }
  // Written a chunk at a time: a table of 20 000 rows is never one string.
  let chunk = '';
  for (const line of tableLines(io, opts.headers === false ? undefined : cols.map((c) => c.header), rows)) {
    chunk += line + '\n';
    if (chunk.length >= TABLE_CHUNK) {
      io.out(chunk);
      chunk = '';
    }
  }
  if (chunk) io.out(chunk);
}

/** A table the store wrote: the header line (as tableLines makes it) over its pages. */
function printTableText<T>(io: IO, opts: OutputOptions, cols: Column<T>[], text: TableText): void {
  const headers = opts.headers === false ? undefined : cols.map((c) => c.header);
  const widths = headers ? text.widths.map((w, n) => Math.max(w, headers[n]!.length)) : text.widths;
  if (headers) {
    const [header] = tableLines(io, headers, [widths.map((w) => ' '.repeat(w))]);
    io.out(header! + '\n');
  }
  for (const page of text.pages(widths)) io.out(page + '\n');
}

export async function printResource<T>(io: IO, opts: OutputOptions, unmasked: View<T>, item: T): Promise<void> {
  const view = masked(unmasked);
  const all = view.toData(item);
  const format = formatOf(opts);
  if (format === 'name') {
    io.outText(idOf(view, item));
    return;
  }
  if (format.startsWith('jsonpath=')) {
    const out = await jsonPath(format, all);
    if (out) io.outText(out);
    return;
  }
  const data = pickKeys(all, opts.column, Object.keys(all));
  if (format === 'json' || format === 'yaml') {
    io.out(await encode(format, data));
    return;
  }
  if (format === 'value') {
    io.outText(Object.values(data).map(formatValue).join('\n'));
    return;
  }
  io.out(
    renderTable(
      io,
      opts.headers === false ? undefined : ['FIELD', 'VALUE'],
      Object.entries(data).map(([k, v]) => [k, formatValue(v)]),
    ),
  );
}
