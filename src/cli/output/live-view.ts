/**
 * How vnf-describe shows an instance's live state: a tree of objects (or
 * Heat resources) with READY and REASON columns, then the events of those
 * not ready and every drift; json/yaml/jsonpath print the VnfLiveState.
 * What the VIM said (names, reasons, event messages) is shown as tables are,
 * safe for a terminal and on one line (terminal-text.ts).
 */
import type { IO } from '../io.js';
import { terminalSafe } from '../terminal-text.js';
import type { LiveNode, VnfLiveState } from '../../model/live.js';
import type { View } from './printer.js';

export const liveView: View<VnfLiveState> = {
  empty: '',
  name: (s) => s.vnfInstanceId,
  columns: [],
  toData: (s) => ({ ...s }),
};

interface Row {
  object: string;
  ready: string;
  reason: string;
  drift: string;
  node: LiveNode;
}

const safe = (text: string) => terminalSafe(text, { oneLine: true });
const label = (n: LiveNode) => safe(`${n.kind}/${n.name}`);

function rows(nodes: readonly LiveNode[], prefix: string, depth: number): Row[] {
  return nodes.flatMap((n, i) => {
    const last = i === nodes.length - 1;
    const branch = depth === 0 ? '' : last ? '└─' : '├─';
    const row: Row = {
      object: `${prefix}${branch}${label(n)}`,
      ready: n.exists && n.ready ? 'True' : 'False',
      reason: n.ready && n.exists ? '' : safe(n.reason),
      drift: safe(n.drift.join('; ')),
      node: n,
    };
    const childPrefix = depth === 0 ? '' : `${prefix}${last ? '  ' : '│ '}`;
    return [row, ...rows(n.children, childPrefix, depth + 1)];
  });
}

/** The tree, events and drift as text; `wide` adds namespaces and ids. */
export function renderLive(io: IO, s: VnfLiveState, opts: { wide: boolean; headers: boolean }): string {
  const table = rows(s.objects, '', 0);
  const headers = ['OBJECT', 'READY', 'REASON', 'DRIFT'];
  const cells = table.map((r) => [r.object + (opts.wide && (r.node.namespace || r.node.id) ? ` (${safe(r.node.namespace ?? r.node.id ?? '')})` : ''), r.ready, r.reason, r.drift]);
  const all = opts.headers ? [headers, ...cells] : cells;
  const widths = headers.map((_, i) => Math.max(...all.map((c) => (c[i] ?? '').length)));
  const line = (c: string[]) =>
    c
      .map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i]!)))
      .join('   ')
      .trimEnd();
  const colour = (c: string[], text: string) => (c[1] === 'False' ? io.dataColor.red(text) : text);
  const out: string[] = [];
  const where = s.stack ? `stack ${s.stack}` : `namespace ${s.namespace ?? ''}`;
  out.push(safe(`vnf instance ${s.vnfInstanceName ?? s.vnfInstanceId} (${s.vimType}, ${where}, VIM ${s.vim})`));
  const op = s.lastOperation;
  if (op) {
    out.push(io.dataColor.red(safe(`last operation: ${op.operation} ${op.operationState} (occurrence ${op.id})${op.error ? `: ${op.error}` : ''}`)));
    if (op.fromJournal) out.push(table.length ? 'What it created, as its journal records it:' : 'Its journal records nothing created.');
  }
  if (opts.headers && table.length) out.push(io.dataColor.bold(line(headers)));
  cells.forEach((c) => out.push(colour(c, line(c))));
  const withEvents = flatten(s.objects).filter((n) => n.events.length > 0);
  if (withEvents.length > 0) {
    out.push('', 'Events of what is not ready:');
    for (const n of withEvents) {
      out.push(`  ${label(n)}:`);
      for (const e of n.events) out.push(`    ${safe(`${e.time ? `${e.time}  ` : ''}${e.type}  ${e.reason}${e.count > 1 ? ` (x${e.count})` : ''}: ${e.message}`)}`);
    }
  }
  out.push('');
  if (s.drift.length > 0) {
    out.push('Drift from what vnfm recorded:');
    for (const d of s.drift) out.push(`  ${safe(d)}`);
  } else out.push('No drift from what vnfm recorded.');
  const notReady = flatten(s.objects).filter((n) => !n.exists || !n.ready).length;
  out.push(notReady === 0 ? (table.length ? 'Everything is ready.' : 'Nothing to read.') : `${notReady} not ready.`);
  if (op) {
    const short = op.id.slice(0, 8);
    out.push(
      op.operationState === 'FAILED_TEMP'
        ? `vnfm op-retry ${short} tries the ${op.operation} again; vnfm op-rollback ${short} undoes it${op.fromJournal ? ', deleting what it created' : ''}; vnfm op-log ${short} has its hooks' output`
        : `the ${op.operation} was marked FAILED (vnfm op-fail): vnfm undoes nothing of it; what it left at the VIM stays until removed there`,
    );
  }
  return out.join('\n') + '\n';
}

function flatten(nodes: readonly LiveNode[]): LiveNode[] {
  return nodes.flatMap((n) => [n, ...flatten(n.children)]);
}
