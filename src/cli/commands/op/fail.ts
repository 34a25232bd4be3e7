import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printResource, type OutputOptions } from '../../output/printer.js';
import { opView } from '../../output/op-view.js';
import { lcmDeps } from '../vnf/deps.js';

export function opFailCommand(ctx: Context): Command {
  const cmd = new Command('op-fail')
    .description('Give up on a FAILED_TEMP operation: it becomes FAILED and the instance is free again, as it is now')
    .argument('<op>', 'occurrence id (or its first 8+ characters)');
  addOutputOptions(cmd);
  withExamples(cmd, [['accept a failed heal and move on', 'vnfm op-fail 3f2a9c1e']]);
  return cmd.action(async (ref: string, flags: OutputOptions) => {
    const { failOpOcc } = await import('../../../lcm/index.js');
    const op = failOpOcc((await lcmDeps(ctx)).deps, ref);
    ctx.io.success(`${op.operation} occurrence ${op.id} FAILED`);
    await printResource(ctx.io, flags, opView(flags), op);
  });
}
