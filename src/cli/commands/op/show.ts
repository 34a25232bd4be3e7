import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printResource, type OutputOptions } from '../../output/printer.js';
import { opView } from '../../output/op-view.js';
import { lcmDeps } from '../../lcm/deps.js';

export function opShowCommand(ctx: Context): Command {
  const cmd = new Command('op-show')
    .description('Show an LCM operation occurrence: operation, state, times, request, error (problem details), resource changes, journal')
    .argument('<op>', 'occurrence id (or its first 8+ characters)');
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['why it failed', 'vnfm op-show 3f2a9c1e -o json -c error'],
    ['its state alone, for a script', 'vnfm op-show 3f2a9c1e -o value -c operationState'],
  ]);
  return cmd.action(async (ref: string, flags: OutputOptions) => {
    const { getOpOcc } = await import('../../../lcm/instances.js');
    const { deps } = await lcmDeps(ctx);
    const op = await getOpOcc(deps, ref);
    const name = (await deps.store.instances.find(op.vnfInstanceId))?.vnfInstanceName;
    await printResource(ctx.io, flags, opView(flags, { instances: new Map(name ? [[op.vnfInstanceId, name]] : []) }), op);
  });
}
