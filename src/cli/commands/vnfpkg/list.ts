import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printList, type OutputOptions } from '../../output/printer.js';
import { packageView } from '../../output/package-view.js';

export function vnfpkgListCommand(ctx: Context): Command {
  const cmd = new Command('vnfpkg-list').description('List the onboarded VNF packages');
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['list packages', 'vnfm vnfpkg-list'],
    ['vnfdIds only', 'vnfm vnfpkg-list -o json -c vnfdId'],
  ]);
  return cmd.action(async (flags: OutputOptions) => {
    const { listPackages } = await import('../../../csar/packages.js');
    await printList(ctx.io, flags, packageView, listPackages((await ctx.store()).packages));
  });
}
