import { Command } from 'commander';
import { UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { confirm } from '../../prompt.js';
import { packageDeps } from '../../package-deps.js';

export function vnfpkgDeleteCommand(ctx: Context): Command {
  const cmd = new Command('vnfpkg-delete')
    .description('Delete onboarded VNF packages and their stored copies (refused while a package is in use)')
    .argument('<package...>', 'package ids, vnfdIds or names')
    .option('-y, --yes', 'do not ask for confirmation');
  withExamples(cmd, [['delete a package from a script', 'vnfm vnfpkg-delete --yes basic-cnf']]);
  return cmd.action(async (refs: string[], flags: { yes?: boolean }) => {
    const { deletePackage, getPackage } = await import('../../../csar/packages.js');
    const deps = await packageDeps(ctx);
    const targets: Awaited<ReturnType<typeof getPackage>>[] = [];
    for (const r of refs) targets.push(await getPackage(deps.packages, r));
    const names = targets.map((p) => p.name ?? p.id).join(', ');
    if (!flags.yes) {
      if (!ctx.io.canPrompt) {
        throw new UsageError(`refusing to delete vnf package ${names} without confirmation: there is no terminal to ask on`, {
          hint: 'pass --yes to delete without asking',
        });
      }
      if (!(await confirm(ctx.io, `Delete vnf package ${names}?`))) {
        ctx.io.info('nothing deleted');
        return;
      }
    }
    for (const pkg of targets) {
      await deletePackage(deps, pkg.id);
      ctx.io.success(`vnf package ${pkg.id} deleted`);
    }
  });
}
