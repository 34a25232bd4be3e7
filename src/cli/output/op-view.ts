import type { LcmOpOcc } from '../../lcm/index.js';
import type { OutputOptions, View } from './printer.js';
import { type NameBook, nameBeside, shortId, shortTime } from './names.js';

const problem = (o: LcmOpOcc) => (o.error ? `${o.error.status} ${o.error.title}: ${o.error.detail}` : '');
const changes = (o: LcmOpOcc) => (o.resourceChanges?.affectedVnfcs ?? []).map((a) => `${a.changeType} ${a.id}`).join(', ');

/** SOL003 VnfLcmOpOcc, as json/yaml print it; vnfm adds the journal of driver steps. The table names the instance. */
export function opListView(book: NameBook = {}): View<LcmOpOcc> {
  // A list's summary item carries its instance's name (read in the same query); the book is asked only for others.
  const instanceName = (o: LcmOpOcc) => (o as { vnfInstanceName?: string }).vnfInstanceName ?? book.instances?.get(o.vnfInstanceId);
  return {
    empty: 'No LCM operation occurrences.',
    name: (o) => o.id,
    summaryColumns: true,
    // LcmOpOccRepository.tableText writes these cells in SQL, in this order (test/unit/list-table-text.test.ts holds them equal).
    columns: [
      { header: 'ID', key: 'id', cell: (o) => shortId(o.id), full: (o) => o.id },
      { header: 'OPERATION', key: 'operation', cell: (o) => o.operation },
      { header: 'STATE', key: 'operationState', cell: (o) => o.operationState },
      { header: 'VNF', key: 'vnf', cell: (o) => instanceName(o) || shortId(o.vnfInstanceId) },
      { header: 'START', key: 'startTime', cell: (o) => shortTime(o.startTime), full: (o) => o.startTime },
      { header: 'VNF INSTANCE', key: 'vnfInstanceId', cell: (o) => o.vnfInstanceId, wide: true },
      { header: 'STATE ENTERED', key: 'stateEnteredTime', cell: (o) => shortTime(o.stateEnteredTime), full: (o) => o.stateEnteredTime, wide: true },
      { header: 'ERROR', key: 'error', cell: (o) => (o.error ? o.error.title : ''), wide: true },
    ],
    toData: (o) => ({
      id: o.id,
      operationState: o.operationState,
      stateEnteredTime: o.stateEnteredTime,
      startTime: o.startTime,
      vnfInstanceId: o.vnfInstanceId,
      operation: o.operation,
      isAutomaticInvocation: o.isAutomaticInvocation,
      isCancelPending: false,
      operationParams: o.operationParams,
      ...(o.error ? { error: o.error } : {}),
      ...(o.resourceChanges ? { resourceChanges: o.resourceChanges } : {}),
      journal: o.journal,
    }),
  };
}

export const opOccView: View<LcmOpOcc> = opListView();

/** The same occurrence as FIELD/VALUE rows a person reads: one line each. */
export function opOccSummaryView(book: NameBook = {}): View<LcmOpOcc> {
  return {
    ...opOccView,
    toData: (o) => ({
      id: o.id,
      operation: o.operation,
      operationState: o.operationState,
      vnfInstanceId: nameBeside(o.vnfInstanceId, book.instances),
      startTime: o.startTime,
      stateEnteredTime: o.stateEnteredTime,
      ...(o.pid ? { pid: o.pid } : {}),
      operationParams: paramsSummary(o.operationParams),
      error: problem(o),
      resourceChanges: changes(o),
      journal: `${o.journal.filter((s) => s.state === 'done').length} steps done, ${o.journal.length} recorded`,
    }),
  };
}

/** Widest operationParams a FIELD/VALUE row shows as JSON; a longer request is summarised. */
export const PARAMS_ROW_CHARS = 100;

/**
 * The request on one row of a person's table: its JSON when short; else
 * each top-level field with its value when short, or what it holds (the
 * keys of an object, the count of a list), cut at PARAMS_ROW_CHARS. The
 * whole request is in -o json and -o yaml.
 */
export function paramsSummary(params: unknown): string {
  const json = JSON.stringify(params) ?? '';
  if (json.length <= PARAMS_ROW_CHARS) return json;
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return withMore(json);
  const fields = Object.entries(params as Record<string, unknown>).map(([k, v]) => {
    const text = JSON.stringify(v) ?? '';
    if (text.length <= 40) return `${k}=${text}`;
    if (Array.isArray(v)) return `${k}=[${v.length} items]`;
    if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      return `${k}={${keys.slice(0, 3).join(', ')}${keys.length > 3 ? `, +${keys.length - 3} more` : ''}}`;
    }
    return `${k}=${text.slice(0, 36)}…"`;
  });
  // Whole fields while they fit the row; the count of those left out after them.
  let row = '';
  let shown = 0;
  for (const f of fields) {
    const next = row ? `${row}, ${f}` : f;
    if (shown > 0 && next.length > PARAMS_ROW_CHARS - 18) break;
    row = next;
    shown += 1;
  }
  const left = fields.length - shown;
  const more = left > 0 ? `, +${left} more field${left > 1 ? 's' : ''}` : '';
  const room = PARAMS_ROW_CHARS - more.length;
  return `${row.length > room ? `${row.slice(0, room - 1)}…` : row}${more} (-o json for all)`;
}

/** `text` cut to the row, and where the rest is. */
function withMore(text: string): string {
  return `${text.length > PARAMS_ROW_CHARS ? `${text.slice(0, PARAMS_ROW_CHARS - 1)}…` : text} (-o json for all)`;
}

/** The summary rows for a person's table, the SOL003 form for everything else. */
export const opView = (flags: OutputOptions, book: NameBook = {}): View<LcmOpOcc> =>
  !flags.quiet && (flags.output === 'table' || flags.output === 'wide') ? opOccSummaryView(book) : opOccView;
