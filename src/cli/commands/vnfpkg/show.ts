import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printResource, type OutputOptions } from '../../output/printer.js';
import { packageView } from '../../output/package-view.js';

export function vnfpkgShowCommand(ctx: Context): Command {
  const cmd = new Command('vnfpkg-show')
    .description('Show a VNF package: states, checksum, and its VNFD (flavours, VDUs, aspects, levels, hooks, artifacts)')
    .argument('<package>', 'package id, vnfdId or name');
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['show a package', 'vnfm vnfpkg-show basic-cnf'],
    ['its flavours as JSON', 'vnfm vnfpkg-show basic-cnf -o json -c flavours'],
  ]);
  return cmd.action(async (ref: string, flags: OutputOptions) => {
    const { getPackage } = await import('../../../csar/packages.js');
    await printResource(ctx.io, flags, packageView, await getPackage((await ctx.store()).packages, ref));
  });
}
