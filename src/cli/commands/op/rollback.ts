import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addRunOptions, runLcmCommand, type RunFlags } from '../../lcm/run.js';

export function opRollbackCommand(ctx: Context): Command {
  const cmd = new Command('op-rollback')
    .description('Undo a FAILED_TEMP INSTANTIATE (remove what it created), SCALE_OUT (scale back) or CHANGE_VNFPKG (re-apply the old package)')
    .argument('<op>', 'occurrence id (or its first 8+ characters)');
  addRunOptions(cmd);
  withExamples(cmd, [['leave nothing of a failed instantiate in the cluster', 'vnfm op-rollback 3f2a9c1e']]);
  return cmd.action(async (ref: string, flags: RunFlags) => {
    const { rollbackOpOcc } = await import('../../../lcm/index.js');
    await runLcmCommand(ctx, flags, (deps, opts) => rollbackOpOcc(deps, ref, opts));
  });
}
