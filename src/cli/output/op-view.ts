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
      operationParams: JSON.stringify(o.operationParams),
      error: problem(o),
      resourceChanges: changes(o),
      journal: `${o.journal.filter((s) => s.state === 'done').length} steps done, ${o.journal.length} recorded`,
    }),
  };
}

/** The summary rows for a person's table, the SOL003 form for everything else. */
export const opView = (flags: OutputOptions, book: NameBook = {}): View<LcmOpOcc> =>
  !flags.quiet && (flags.output === 'table' || flags.output === 'wide') ? opOccSummaryView(book) : opOccView;
