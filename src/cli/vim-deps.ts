import type { Context } from './context.js';
import { VnfmError } from '../errors.js';
import type { VimDeps } from '../vim/index.js';

/**
 * Wires the VIM use cases to the store, the keyring and the checks; progress
 * goes to stderr. The keyring is loaded up front when secrets will be written,
 * so a key problem is reported before any VIM is contacted.
 */
export async function vimDeps(ctx: Context, opts: { writesSecrets: boolean }): Promise<VimDeps> {
  const store = await ctx.store();
  const { checkVim } = await import('../vim/check.js');
  const keyring = opts.writesSecrets ? await ctx.keyring() : undefined;
  return {
    vims: store.vims,
    keyring: () => {
      if (!keyring) throw new VnfmError('internal: the keyring was not loaded for a command that writes secrets');
      return keyring;
    },
    check: checkVim,
    now: () => ctx.now(),
    onEvent: (e) => (e.type === 'warning' ? ctx.io.warn(e.message) : ctx.io.info(e.message, 'dim')),
  };
}
