import { Command } from 'commander';
import { UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { confirm } from '../../prompt.js';

export function vimDeleteCommand(ctx: Context): Command {
  const cmd = new Command('vim-delete')
    .description('Delete one or more VIMs and their stored credentials (asks first on a terminal)')
    .argument('<vim...>', 'VIM names or ids')
    .option('-y, --yes', 'do not ask for confirmation');
  withExamples(cmd, [
    ['delete a VIM, after confirming', 'vnfm vim-delete vim-k8s'],
    ['delete two VIMs from a script', 'vnfm vim-delete --yes vim-a vim-b'],
  ]);
  return cmd.action(async (refs: string[], flags: { yes?: boolean }) => {
    const { resolveVims, deleteVims } = await import('../../../vim/vims.js');
    const { vims } = await ctx.store();
    const targets = await resolveVims(vims, refs);
    const names = targets.map((v) => `"${v.name}"`).join(', ');
    if (!flags.yes) {
      if (!ctx.io.canPrompt) {
        throw new UsageError(`refusing to delete vim ${names} without confirmation: there is no terminal to ask on`, {
          hint: 'pass --yes to delete without asking',
        });
      }
      if (!(await confirm(ctx.io, `Delete vim ${names} and its stored credentials?`))) {
        ctx.io.info('nothing deleted');
        return;
      }
    }
    const deleted = await deleteVims(vims, targets);
    for (const vim of deleted) ctx.io.success(`vim "${vim.name}" deleted`);
    if (deleted.some((v) => v.isDefault) && (await vims.count()) > 0) {
      ctx.io.warn('the default VIM was deleted; choose another with: vnfm vim-update VIM --is-default');
    }
  });
}
