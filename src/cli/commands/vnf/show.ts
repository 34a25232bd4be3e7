import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printList, printResource, type OutputOptions } from '../../output/printer.js';
import { resourceView, vnfcRows, vnfcView, vnfView } from '../../output/vnf-view.js';
import { lcmDeps } from '../../lcm/deps.js';

export function vnfShowCommand(ctx: Context): Command {
  const cmd = new Command('vnf-show')
    .description('Show a VNF instance: state, VIM, flavour, scale levels per aspect, its VNFCs (pods) and the resources it created')
    .argument('<vnf>', 'instance id or name');
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['show an instance', 'vnfm vnf-show web'],
    ['its VNFC ids, for vnf-heal', 'vnfm vnf-show web -o jsonpath=\'{range .instantiatedVnfInfo.vnfcInfo[*]}{.id}{"\\n"}{end}\''],
    ['its state alone', 'vnfm vnf-show web -o value -c instantiationState'],
  ]);
  return cmd.action(async (ref: string, flags: OutputOptions) => {
    const { getVnf } = await import('../../../lcm/instances.js');
    const { deps } = await lcmDeps(ctx);
    const vnf = await getVnf(deps, ref);
    const book = { vims: await deps.store.vims.names(), packages: await deps.store.packages.names() };
    await printResource(ctx.io, flags, vnfView(flags, book), vnf);
    const table = flags.output === 'table' || flags.output === 'wide';
    if (!table || flags.quiet || flags.column?.length || !vnf.instantiatedVnfInfo) return;
    const sub = { output: flags.output, ...(flags.headers === false ? { headers: false } : {}) };
    ctx.io.out('');
    await printList(ctx.io, sub, vnfcView, vnfcRows(vnf));
    ctx.io.out('');
    await printList(ctx.io, sub, resourceView, vnf.instantiatedVnfInfo.resources);
  });
}
