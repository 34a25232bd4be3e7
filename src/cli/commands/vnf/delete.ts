import { Command } from 'commander';
import { UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { confirm } from '../../prompt.js';
import { lcmDeps } from '../../lcm/deps.js';

export function vnfDeleteCommand(ctx: Context): Command {
  const cmd = new Command('vnf-delete')
    .description('Delete NOT_INSTANTIATED VNF instances and their operation records; a package with no instance left becomes NOT_IN_USE')
    .argument('<vnf...>', 'instance ids or names')
    .option('-y, --yes', 'do not ask for confirmation');
  withExamples(cmd, [['delete an instance from a script', 'vnfm vnf-delete --yes web']]);
  return cmd.action(async (refs: string[], flags: { yes?: boolean }) => {
    const { deleteVnfs, resolveVnfs } = await import('../../../lcm/index.js');
    const { deps } = await lcmDeps(ctx);
    const targets = await resolveVnfs(deps, refs);
    const names = targets.map((i) => i.vnfInstanceName ?? i.id).join(', ');
    if (!flags.yes) {
      if (!ctx.io.canPrompt) {
        throw new UsageError(`refusing to delete vnf instance ${names} without confirmation: there is no terminal to ask on`, {
          hint: 'pass --yes to delete without asking',
        });
      }
      if (!(await confirm(ctx.io, `Delete vnf instance ${names}?`))) {
        ctx.io.info('nothing deleted');
        return;
      }
    }
    for (const vnf of await deleteVnfs(deps, targets)) ctx.io.success(`vnf instance ${vnf.id} deleted`);
  });
}
