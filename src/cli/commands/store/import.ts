import { createReadStream } from 'node:fs';
import { Command } from 'commander';
import { SecretKeyError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { summary } from './export.js';

export function storeImportCommand(ctx: Context): Command {
  const cmd = new Command('store-import')
    .description('Load a document written by store-export into this store, in one transaction (all of it or nothing)')
    .addHelpText(
      'after',
      '\nThe store must be empty, unless --merge: rows whose ids it has are then skipped and listed. Ids are kept.\n' +
        "The master key here must open the document's secrets (they stay sealed as exported): it is checked\n" +
        'before anything is written.',
    )
    .argument('<file>', 'the document (store-export FILE)')
    .option('--merge', 'import into a store that has state, skipping rows whose ids exist');
  withExamples(cmd, [
    ["a laptop's state into the shared store", 'VNFM_DATABASE_URL=postgres://vnfm@db/vnfm vnfm store-import state.json'],
    ['and back', 'VNFM_DATABASE_URL=postgres://vnfm@db/vnfm vnfm store-export state.json\n$ vnfm store-import state.json'],
  ]);
  return cmd.action(async (file: string, flags: { merge?: boolean }) => {
    const [{ importStore, linesOf }, { packageContentIo }] = await Promise.all([import('../../../store/transfer.js'), import('../../../csar/packages.js')]);
    const store = await ctx.store();
    const input = createReadStream(file, { encoding: 'utf8' });
    await new Promise<void>((ok, fail) => input.once('open', () => ok()).once('error', fail));
    try {
      const r = await importStore(store, linesOf(input), {
        merge: Boolean(flags.merge),
        source: file,
        contents: packageContentIo({ home: ctx.home, contents: store.packageContents }),
        checkSealed: async (token, keyId) => {
          const keyring = await ctx.keyring();
          try {
            keyring.decrypt(token, keyId);
          } catch (err) {
            throw new SecretKeyError(`the master key here does not open the secrets in ${file} (sealed under key ${keyId}): nothing was imported`, {
              hint: 'import with the master key of the store it was exported from (VNFM_MASTER_KEY, or its master.key in VNFM_HOME)',
              cause: err,
            });
          }
        },
      });
      ctx.io.success(`imported ${summary(r.imported)}, ${r.packageContents} package zip(s) from ${file}`);
      if (r.skipped.length) ctx.io.warn(`skipped ${r.skipped.length} row(s) this store already has: ${r.skipped.join(', ')}`);
    } finally {
      input.destroy();
    }
  });
}
