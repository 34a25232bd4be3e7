import { Command } from 'commander';
import { echo, UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printResource, type OutputOptions } from '../../output/printer.js';
import { vimView } from '../../output/vim-view.js';
import { vimDeps } from '../../vim-deps.js';

interface Flags extends OutputOptions {
  configFile?: string;
  name?: string;
  description?: string;
  isDefault?: boolean | string;
  check: boolean;
}

export function vimUpdateCommand(ctx: Context): Command {
  const cmd = new Command('vim-update')
    .description("Update a VIM's settings, credentials, name, description or default flag (its type never changes)")
    // Optional to commander: `vim-update --is-default VIM`, the form before --is-default took a value, still names the VIM.
    .argument('[vim]', 'VIM name or id (required)')
    .usage('[options] <vim>')
    .option('--config-file <file>', 'a new vim-config.yaml (checked against the VIM unless --no-check; - reads it from the standard input)')
    .option('--name <name>', 'rename the VIM')
    .option('--description <text>', 'a new description')
    .option('--is-default [true|false]', "make this the default VIM (alone or true), or no longer the default (false), as Tacker's openstack vim set --is-default takes it")
    .option('--no-check', 'store new settings without contacting the VIM');
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['replace an expired bearer token', 'vnfm vim-update vim-k8s --config-file k8s-vim.yaml'],
    ['make a VIM the default', 'vnfm vim-update vim-edge --is-default'],
    ['leave no VIM the default (requests must then name theirs)', 'vnfm vim-update vim-edge --is-default false'],
  ]);
  return cmd.action(async (given: string | undefined, flags: Flags) => {
    let ref = given;
    let value = flags.isDefault;
    if (ref === undefined && typeof value === 'string' && !isBooleanWord(value)) [ref, value] = [value, true];
    if (ref === undefined) throw new UsageError('name the VIM to update', { hint: 'vnfm vim-update VIM [--is-default [true|false]] [--name N] ...' });
    const isDefault = parseIsDefault(value);
    const { updateVim } = await import('../../../vim/register.js');
    const deps = await vimDeps(ctx, { writesSecrets: Boolean(flags.configFile) });
    const vim = await updateVim(deps, {
      ref,
      source: flags.configFile ? { kind: 'vim-config', path: flags.configFile } : undefined,
      name: flags.name,
      description: flags.description,
      isDefault,
      check: flags.check,
    });
    ctx.io.success(`vim "${vim.name}" updated`);
    await printResource(ctx.io, flags, vimView, vim);
  });
}

const TRUE = new Set(['true', 'yes', 'on', '1']);
const FALSE = new Set(['false', 'no', 'off', '0']);

const isBooleanWord = (value: string) => TRUE.has(value.toLowerCase()) || FALSE.has(value.toLowerCase());

/** `--is-default` alone is true; a value is a boolean word, in any case (Tacker's True/False too). */
function parseIsDefault(value: boolean | string | undefined): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value;
  const word = value.toLowerCase();
  if (TRUE.has(word)) return true;
  if (FALSE.has(word)) return false;
  throw new UsageError(`--is-default ${echo(value)} is not true or false`, {
    hint: 'vnfm vim-update VIM --is-default true|false',
  });
}
