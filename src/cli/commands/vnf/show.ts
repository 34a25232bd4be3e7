import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printList, printResource, type OutputOptions } from '../../output/printer.js';
import { resourceView, vnfcRows, vnfcView, vnfView } from '../../output/vnf-view.js';
import { lcmDeps } from './deps.js';

export function vnfShowCommand(ctx: Context): Command {
  const cmd = new Command('vnf-show')
    .description('Show a VNF instance: state, VIM, flavour, scale levels per aspect, its VNFCs (pods) and the resources it created')
    .argument('<vnf>', 'instance id or name');
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['show an instance', 'vnfm vnf-show web'],
    ['its VNFC ids, for vnf-heal', "vnfm vnf-show web -o json | jq -r '.instantiatedVnfInfo.vnfcInfo[].id'"],
  ]);
  return cmd.action(async (ref: string, flags: OutputOptions) => {
    const { getVnf } = await import('../../../lcm/instances.js');
    const vnf = getVnf((await lcmDeps(ctx)).deps, ref);
    await printResource(ctx.io, flags, vnfView(flags), vnf);
    if (flags.output !== 'table' || flags.column?.length || !vnf.instantiatedVnfInfo) return;
    ctx.io.out('');
    await printList(ctx.io, { output: 'table' }, vnfcView, vnfcRows(vnf));
    ctx.io.out('');
    await printList(ctx.io, { output: 'table' }, resourceView, vnf.instantiatedVnfInfo.resources);
  });
}
