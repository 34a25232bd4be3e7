import { Command, Option } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addSelectorOptions, attributeSelector, LCM_OP_OCC_ATTRIBUTES, type SelectorFlags } from '../../output/attribute-selector.js';
import { addListOptions, addOutputOptions, printList, type ListOptions, type OutputOptions } from '../../output/printer.js';
import { opListView } from '../../output/op-view.js';
import { lcmDeps } from '../../lcm/deps.js';
import type { LcmOperationState } from '../../../lcm/index.js';
import { UsageError } from '../../../errors.js';
import type { TableRead } from '../../../store/table-text.js';
import type { ListRead } from '../../../store/vnf-instance-repository.js';
// Imported statically: a start-up command's code stays in the main bundle, outside the domain's chunk (scripts/bundle.mjs).
import { readOpOccs } from '../../../lcm/instances.js';

export const OPERATION_STATES = ['STARTING', 'PROCESSING', 'COMPLETED', 'FAILED_TEMP', 'FAILED', 'ROLLING_BACK', 'ROLLED_BACK'];
export const OPERATIONS = ['INSTANTIATE', 'SCALE', 'HEAL', 'TERMINATE', 'CHANGE_VNFPKG', 'MODIFY_INFO', 'CHANGE_EXT_CONN', 'ADOPT'];

interface Flags extends OutputOptions, ListOptions, SelectorFlags {
  vnf?: string;
  state?: LcmOperationState;
  operation?: string;
  since?: string;
  until?: string;
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

/** `--since`/`--until`: an ISO 8601 time, or a duration before now (`90s`, `30m`, `2h`, `1d`, `1w`, `1h30m`), as ISO 8601 UTC. */
export function timeBound(flag: string, value: string, now: Date): string {
  if (/^(\d+[smhdw])+$/.test(value)) {
    let seconds = 0;
    for (const [, n, unit] of value.matchAll(/(\d+)([smhdw])/g)) seconds += Number(n) * UNIT_SECONDS[unit!]!;
    return new Date(now.getTime() - seconds * 1000).toISOString();
  }
  const t = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ? new Date(value.replace(' ', 'T')) : undefined;
  if (!t || Number.isNaN(t.getTime())) {
    throw new UsageError(`${flag} "${value}" is neither a time nor a duration`, { hint: `e.g. ${flag} 2h, ${flag} 1d or ${flag} 2026-01-31T12:00:00Z` });
  }
  return t.toISOString();
}

export function opListCommand(ctx: Context): Command {
  const cmd = new Command('op-list')
    .description('List LCM operation occurrences, oldest first, with the names of their instances')
    .option('--vnf <vnf>', 'only those of this instance (id or name)')
    .addOption(new Option('--state <state>', 'only those in this state').choices(OPERATION_STATES))
    .addOption(new Option('--operation <operation>', 'only these operations').choices(OPERATIONS))
    .option('--since <time>', 'only those started at or after this time (ISO 8601) or this long ago (30m, 2h, 1d)')
    .option('--until <time>', 'only those started before this time (ISO 8601) or this long ago');
  addOutputOptions(cmd);
  addListOptions(cmd);
  addSelectorOptions(cmd, LCM_OP_OCC_ATTRIBUTES);
  withExamples(cmd, [
    ['what waits for op-retry, op-rollback or op-fail', 'vnfm op-list --state FAILED_TEMP'],
    ['the scale operations of the last day', 'vnfm op-list --operation SCALE --since 1d'],
    ['the id of the newest operation of an instance', 'vnfm op-list --vnf web --sort startTime:desc --limit 1 -q'],
    ['the failed ones with their errors', 'vnfm op-list --state FAILED_TEMP -o json --fields error --exclude-default'],
    ['every attribute of each, as op-show prints it', 'vnfm op-list -o json --all-fields'],
  ]);
  return cmd.action(async (flags: Flags) => {
    const attributes = attributeSelector(flags, LCM_OP_OCC_ATTRIBUTES, flags.quiet ? 'name' : flags.output);
    const { deps } = await lcmDeps(ctx);
    const now = ctx.now();
    const filter = {
      ...(flags.vnf ? { vnf: flags.vnf } : {}),
      ...(flags.state ? { state: flags.state } : {}),
      ...(flags.operation ? { operation: flags.operation } : {}),
      ...(flags.since ? { since: timeBound('--since', flags.since, now) } : {}),
      ...(flags.until ? { until: timeBound('--until', flags.until, now) } : {}),
    };
    // The table's rows carry their instance's name; the book is read only for a list that is not a table's summary (--sort...).
    let names: Map<string, string> | undefined;
    const book = {
      get instances() {
        return names!;
      },
    };
    const narrowed = Boolean(flags.vnf || flags.state || flags.operation || flags.since || flags.until);
    const resolved = async () => {
      // Resolves --vnf and sweeps stale locks, as a read does.
      await readOpOccs(deps, filter, { summary: true });
      const { vnf, ...rest } = filter;
      return { ...rest, ...(vnf ? { vnfInstanceId: (await deps.store.instances.get(vnf)).id } : {}) };
    };
    const source = {
      read: async function* (how: ListRead) {
        // The names a list that is not a table's summary shows, read before its items.
        if (!how.summary) names ??= await deps.store.instances.names();
        yield* await readOpOccs(deps, filter, how);
      },
      table: async (how: TableRead) => deps.store.opOccs.tableText(await resolved(), how),
      json: async (how: { limit?: number }) => deps.store.opOccs.jsonText(await resolved(), how),
    };
    await printList(ctx.io, { ...flags, narrowed, attributes }, opListView(book), source);
  });
}
