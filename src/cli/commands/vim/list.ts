import { Command, Option } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addListOptions, addOutputOptions, printList, type ListOptions, type OutputOptions } from '../../output/printer.js';
import { vimView } from '../../output/vim-view.js';
// Imported statically: a start-up command's code stays in the main bundle, outside the domain's chunk (scripts/bundle.mjs).
import { listVims } from '../../../vim/vims.js';

export function vimListCommand(ctx: Context): Command {
  const cmd = new Command('vim-list')
    .description('List the registered VIMs')
    .addOption(new Option('--type <type>', 'only VIMs of this type').choices(['kubernetes', 'openstack']))
    .option('--check', 'ask each VIM now (as vim-check) and list the status it gave; exit code 6 when one did not answer');
  addOutputOptions(cmd);
  addListOptions(cmd);
  withExamples(cmd, [
    ['list the VIMs', 'vnfm vim-list'],
    ['ask every VIM now, then list them', 'vnfm vim-list --check'],
    ['names only, for a script', 'vnfm vim-list -o value -c name'],
    ['the Kubernetes VIMs with their auth URLs', 'vnfm vim-list --type kubernetes -o wide'],
  ]);
  return cmd.action(async (flags: OutputOptions & ListOptions & { type?: 'kubernetes' | 'openstack'; check?: boolean }) => {
    const checked = flags.check ? await (await import('./check.js')).checkVimsNow(ctx, []) : undefined;
    const vims = await listVims((await ctx.store()).vims, flags.type ? { type: flags.type } : {});
    await printList(ctx.io, { ...flags, narrowed: Boolean(flags.type) }, vimView, vims);
    if (checked?.failure) throw checked.failure;
  });
}
