import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printResource, type OutputOptions } from '../../output/printer.js';
import { vimView } from '../../output/vim-view.js';
import { vimDeps } from './deps.js';

interface Flags extends OutputOptions {
  configFile?: string;
  name?: string;
  description?: string;
  isDefault?: boolean;
  check: boolean;
}

export function vimUpdateCommand(ctx: Context): Command {
  const cmd = new Command('vim-update')
    .description("Update a VIM's settings, credentials, name, description or default flag (its type never changes)")
    .argument('<vim>', 'VIM name or id')
    .option('--config-file <file>', 'a new vim-config.yaml (checked against the VIM unless --no-check)')
    .option('--name <name>', 'rename the VIM')
    .option('--description <text>', 'a new description')
    .option('--is-default', 'make this the default VIM')
    .option('--no-check', 'store new settings without contacting the VIM');
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['replace an expired bearer token', 'vnfm vim-update vim-k8s --config-file k8s-vim.yaml'],
    ['make a VIM the default', 'vnfm vim-update vim-edge --is-default'],
  ]);
  return cmd.action(async (ref: string, flags: Flags) => {
    const { updateVim } = await import('../../../vim/register.js');
    const deps = await vimDeps(ctx, { writesSecrets: Boolean(flags.configFile) });
    const vim = await updateVim(deps, {
      ref,
      source: flags.configFile ? { kind: 'vim-config', path: flags.configFile } : undefined,
      name: flags.name,
      description: flags.description,
      isDefault: flags.isDefault,
      check: flags.check,
    });
    ctx.io.success(`vim "${vim.name}" updated`);
    await printResource(ctx.io, flags, vimView, vim);
  });
}
