import { Command } from 'commander';
import { VimCheckError } from '../../../errors.js';
import type { VimHealth } from '../../../vim/check.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printList, type OutputOptions, type View } from '../../output/printer.js';

const healthView: View<VimHealth> = {
  empty: 'No VIMs registered. Register one with: vnfm vim-register --config-file vim-config.yaml NAME',
  columns: [
    { header: 'NAME', key: 'name', cell: (h) => h.vim.name },
    { header: 'TYPE', key: 'type', cell: (h) => h.vim.spec.type },
    { header: 'STATUS', key: 'status', cell: (h) => h.status },
    { header: 'ANSWER', key: 'detail', cell: (h) => h.detail.replace(/\s+/g, ' ') },
  ],
  toData: (h) => ({ id: h.vim.id, name: h.vim.name, type: h.vim.spec.type, auth_url: h.vim.spec.authUrl, status: h.status, previous_status: h.previous, detail: h.detail }),
};

/**
 * Asks the VIMs now and records their status; shared with `vim-list --check`.
 * Returns the error to end the command with when some did not answer.
 */
export async function checkVimsNow(ctx: Context, refs: string[]): Promise<{ healths: VimHealth[]; failure?: VimCheckError }> {
  const [{ checkVims, checkVim }, { openSecrets }] = await Promise.all([import('../../../vim/check.js'), import('../../../vim/vims.js')]);
  const store = await ctx.store();
  const healths = await checkVims(
    { vims: store.vims, openSecrets: async (vim) => await openSecrets(store.vims, await ctx.keyring(), vim), check: checkVim, now: () => ctx.now() },
    refs,
  );
  const down = healths.filter((h) => h.status !== 'REACHABLE');
  for (const h of healths) {
    if (h.previous !== h.status) ctx.io.info(`vim "${h.vim.name}": ${h.previous} -> ${h.status}`, 'dim');
  }
  if (down.length === 0) return { healths };
  const failure = new VimCheckError(`${down.length} of ${healths.length} VIM(s) did not answer: ${down.map((h) => `"${h.vim.name}" (${h.detail})`).join('; ')}`, {
    hint: 'an operation on a VIM that does not answer is refused before anything is recorded; fix the VIM (or its credentials with vnfm vim-update VIM --config-file F) and check again with vnfm vim-check',
  });
  return { healths, failure };
}

export function vimCheckCommand(ctx: Context): Command {
  const cmd = new Command('vim-check')
    .description('Ask VIMs now whether they answer with their credentials, and record their status (every VIM when none is named)')
    .argument('[vim...]', 'VIM names or ids (default: every VIM)');
  addOutputOptions(cmd);
  cmd.addHelpText(
    'after',
    `
The VIMs are asked at once. Each one's status becomes REACHABLE or
UNREACHABLE, and the ANSWER column says what answered (server version,
Keystone and Heat) or why nothing did. Exit code 0 when every VIM answered,
6 when one or more did not (the others are still checked and recorded),
3 when a named VIM is not registered (nothing is checked).`,
  );
  withExamples(cmd, [
    ['check every VIM', 'vnfm vim-check'],
    ['check one VIM from a script', 'vnfm vim-check vim-k8s -o json'],
  ]);
  return cmd.action(async (refs: string[], flags: OutputOptions) => {
    const { healths, failure } = await checkVimsNow(ctx, refs);
    await printList(ctx.io, flags, healthView, healths);
    if (failure) throw failure;
  });
}
