import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addRunOptions, runLcmCommand, type RunFlags } from '../../lcm/run.js';

export function opRetryCommand(ctx: Context): Command {
  const cmd = new Command('op-retry')
    .description('Run a FAILED_TEMP operation again from its recorded request; what already exists is updated, not created twice')
    .argument('<op>', 'occurrence id (or its first 8+ characters)');
  addRunOptions(cmd);
  withExamples(cmd, [
    ['retry after fixing the cause', 'vnfm op-retry 3f2a9c1e'],
    ['retry an operation whose package script failed (runs it again)', 'vnfm op-retry 3f2a9c1e --allow-package-scripts'],
  ]);
  return cmd.action(async (ref: string, flags: RunFlags) => {
    const { retryOpOcc } = await import('../../../lcm/index.js');
    await runLcmCommand(ctx, flags, (deps, opts) => retryOpOcc(deps, ref, opts), undefined, `occurrence ${ref}`);
  });
}
