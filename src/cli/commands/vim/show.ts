import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printResource, type OutputOptions } from '../../output/printer.js';
import { vimView } from '../../output/vim-view.js';

export function vimShowCommand(ctx: Context): Command {
  const cmd = new Command('vim-show').description('Show a VIM (secrets are masked)').argument('<vim>', 'VIM name or id');
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['show a VIM', 'vnfm vim-show vim-k8s'],
    ['its auth URL only', 'vnfm vim-show vim-k8s -o json -c auth_url'],
  ]);
  return cmd.action(async (ref: string, flags: OutputOptions) => {
    const { getVim } = await import('../../../vim/vims.js');
    await printResource(ctx.io, flags, vimView, await getVim((await ctx.store()).vims, ref));
  });
}
