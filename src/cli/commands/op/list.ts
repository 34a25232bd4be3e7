import { Command, Option } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printList, type OutputOptions } from '../../output/printer.js';
import { opOccView } from '../../output/op-view.js';
import { lcmDeps } from '../vnf/deps.js';
import type { LcmOperationState } from '../../../lcm/index.js';

export const OPERATION_STATES = ['STARTING', 'PROCESSING', 'COMPLETED', 'FAILED_TEMP', 'FAILED', 'ROLLING_BACK', 'ROLLED_BACK'];

export function opListCommand(ctx: Context): Command {
  const cmd = new Command('op-list')
    .description('List LCM operation occurrences, oldest first')
    .option('--vnf <vnf>', 'only those of this instance (id or name)')
    .addOption(new Option('--state <state>', 'only those in this state').choices(OPERATION_STATES));
  addOutputOptions(cmd);
  withExamples(cmd, [['what waits for op-retry, op-rollback or op-fail', 'vnfm op-list --state FAILED_TEMP']]);
  return cmd.action(async (flags: OutputOptions & { vnf?: string; state?: LcmOperationState }) => {
    const { listOpOccs } = await import('../../../lcm/instances.js');
    await printList(ctx.io, flags, opOccView, listOpOccs((await lcmDeps(ctx)).deps, { vnf: flags.vnf, state: flags.state }));
  });
}
