import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printList, type OutputOptions } from '../../output/printer.js';
import { vimView } from '../../output/vim-view.js';

export function vimListCommand(ctx: Context): Command {
  const cmd = new Command('vim-list').description('List the registered VIMs');
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['list the VIMs', 'vnfm vim-list'],
    ['names only, for a script', 'vnfm vim-list -o json -c name'],
  ]);
  return cmd.action(async (flags: OutputOptions) => {
    const { listVims } = await import('../../../vim/vims.js');
    await printList(ctx.io, flags, vimView, listVims((await ctx.store()).vims));
  });
}
