/**
 * The one printer: `-o table|json|yaml` and `-c COLUMN`, for every command
 * that prints a resource. Each resource supplies a View.
 */
import { Option, type Command } from 'commander';
import { UsageError } from '../../errors.js';
import type { IO } from '../io.js';

export type OutputFormat = 'table' | 'json' | 'yaml';

export interface OutputOptions {
  output: OutputFormat;
  column?: string[];
}

/** How one kind of resource is shown. */
export interface View<T> {
  /** Table columns for lists: header and cell. */
  columns: { header: string; key: string; cell: (item: T) => string }[];
  /** The machine-readable form (json/yaml) and the rows of `show` tables. */
  toData: (item: T) => Record<string, unknown>;
  /** Said on stderr for an empty list in table form. */
  empty: string;
}

export function addOutputOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'json', 'yaml']).default('table'))
    .option('-c, --column <name>', 'show only this column (repeatable)', (v: string, prev: string[] = []) => [...prev, v]);
}

function pickColumns<T>(view: View<T>, wanted: string[] | undefined) {
  if (!wanted?.length) return view.columns;
  return wanted.map((w) => {
    const col = view.columns.find((c) => c.header.toLowerCase() === w.toLowerCase() || c.key === w);
    if (!col) {
      throw new UsageError(`unknown column "${w}"`, { hint: `choose from: ${view.columns.map((c) => c.key).join(', ')}` });
    }
    return col;
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

function renderTable(io: IO, headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('   ')
      .trimEnd();
  return [io.dataColor.bold(line(headers)), ...rows.map(line)].join('\n') + '\n';
}

export async function printList<T>(io: IO, opts: OutputOptions, view: View<T>, items: T[]): Promise<void> {
  if (opts.output !== 'table') {
    const keys = Object.keys(items[0] ? view.toData(items[0]) : {});
    const data = items.map((item) => pickKeys(view.toData(item), opts.column, keys.length ? keys : view.columns.map((c) => c.key)));
    io.out(await encode(opts.output, data));
    return;
  }
  const cols = pickColumns(view, opts.column);
  if (items.length === 0) {
    io.info(view.empty);
    return;
  }
  io.out(renderTable(io, cols.map((c) => c.header), items.map((item) => cols.map((c) => c.cell(item)))));
}

function formatValue(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

export async function printResource<T>(io: IO, opts: OutputOptions, view: View<T>, item: T): Promise<void> {
  const all = view.toData(item);
  const data = pickKeys(all, opts.column, Object.keys(all));
  if (opts.output !== 'table') {
    io.out(await encode(opts.output, data));
    return;
  }
  io.out(renderTable(io, ['FIELD', 'VALUE'], Object.entries(data).map(([k, v]) => [k, formatValue(v)])));
}
