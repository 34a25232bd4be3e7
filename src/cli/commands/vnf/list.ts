import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printList, type OutputOptions } from '../../output/printer.js';
import { vnfInstanceView } from '../../output/vnf-view.js';
import { lcmDeps } from './deps.js';

export function vnfListCommand(ctx: Context): Command {
  const cmd = new Command('vnf-list').description('List VNF instances');
  addOutputOptions(cmd);
  withExamples(cmd, [['the ids of instantiated VNFs', "vnfm vnf-list -o json | jq -r '.[] | select(.instantiationState==\"INSTANTIATED\") | .id'"]]);
  return cmd.action(async (flags: OutputOptions) => {
    const { listVnfs } = await import('../../../lcm/instances.js');
    await printList(ctx.io, flags, vnfInstanceView, listVnfs((await lcmDeps(ctx)).deps));
  });
}
