import type { LcmOpOcc } from '../../lcm/index.js';
import type { OutputOptions, View } from './printer.js';

const problem = (o: LcmOpOcc) => (o.error ? `${o.error.status} ${o.error.title}: ${o.error.detail}` : '');
const changes = (o: LcmOpOcc) => (o.resourceChanges?.affectedVnfcs ?? []).map((a) => `${a.changeType} ${a.id}`).join(', ');

/** SOL003 VnfLcmOpOcc, as json/yaml print it; vnfm adds the journal of driver steps. */
export const opOccView: View<LcmOpOcc> = {
  empty: 'No LCM operation occurrences.',
  columns: [
    { header: 'ID', key: 'id', cell: (o) => o.id },
    { header: 'OPERATION', key: 'operation', cell: (o) => o.operation },
    { header: 'STATE', key: 'operationState', cell: (o) => o.operationState },
    { header: 'VNF INSTANCE', key: 'vnfInstanceId', cell: (o) => o.vnfInstanceId },
    { header: 'START', key: 'startTime', cell: (o) => o.startTime },
    { header: 'STATE ENTERED', key: 'stateEnteredTime', cell: (o) => o.stateEnteredTime },
    { header: 'ERROR', key: 'error', cell: (o) => (o.error ? o.error.title : '') },
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

/** The same occurrence as FIELD/VALUE rows a person reads: one line each. */
export const opOccSummaryView: View<LcmOpOcc> = {
  ...opOccView,
  toData: (o) => ({
    id: o.id,
    operation: o.operation,
    operationState: o.operationState,
    vnfInstanceId: o.vnfInstanceId,
    startTime: o.startTime,
    stateEnteredTime: o.stateEnteredTime,
    ...(o.pid ? { pid: o.pid } : {}),
    operationParams: JSON.stringify(o.operationParams),
    error: problem(o),
    resourceChanges: changes(o),
    journal: `${o.journal.filter((s) => s.state === 'done').length} steps done, ${o.journal.length} recorded`,
  }),
};

export const opView = (flags: OutputOptions): View<LcmOpOcc> => (flags.output === 'table' ? opOccSummaryView : opOccView);
