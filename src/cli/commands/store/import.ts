import { createReadStream } from 'node:fs';
import { Command } from 'commander';
import { SecretKeyError, UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { parseCount, parseSize } from '../vnfpkg/limits.js';
import { summary } from './export.js';

interface Flags {
  merge?: boolean;
  maxLineSize?: string;
  maxRecords?: string;
}

export function storeImportCommand(ctx: Context): Command {
  const cmd = new Command('store-import')
    .description('Load a document written by store-export into this store, in one transaction (all of it or nothing)')
    .addHelpText(
      'after',
      '\nThe store must be empty, unless --merge: rows whose ids it has are then skipped and listed. Ids are kept.\n' +
        "The master key here must open the document's secrets (they stay sealed as exported): it is checked\n" +
        'before anything is written, as must every sealed value in it. A document that is not as store-export\n' +
        'wrote it is refused (exit 2) naming its line: ids that are not UUIDs, an id twice, a zip whose hash or\n' +
        "size is not its record's, a line over --max-line-size (64MiB), more rows than --max-records (1000000).",
    )
    .argument('<file>', 'the document (store-export FILE)')
    .option('--merge', 'import into a store that has state, skipping rows whose ids exist')
    .option('--max-line-size <size>', 'refuse a document with a line longer than this (default 64MiB, at most 256MiB): bytes, or 128MiB')
    .option('--max-records <n>', 'refuse a document with more rows than this in all (default 1000000): import holds them all until it writes');
  withExamples(cmd, [
    ["a laptop's state into the shared store", 'VNFM_DATABASE_URL=postgres://vnfm@db/vnfm vnfm store-import state.json'],
    ['and back', 'VNFM_DATABASE_URL=postgres://vnfm@db/vnfm vnfm store-export state.json\n$ vnfm store-import state.json'],
  ]);
  return cmd.action(async (file: string, flags: Flags) => {
    const [{ importStore, linesOf, DEFAULT_IMPORT_LIMITS, MAX_LINE_BYTES }, { packageContentIo }] = await Promise.all([
      import('../../../store/transfer.js'),
      import('../../../csar/packages.js'),
    ]);
    const lineBytes = flags.maxLineSize === undefined ? DEFAULT_IMPORT_LIMITS.lineBytes : parseSize('--max-line-size', flags.maxLineSize);
    if (lineBytes > MAX_LINE_BYTES)
      throw new UsageError(`--max-line-size ${flags.maxLineSize} is over ${MAX_LINE_BYTES / 1024 ** 2}MiB`, {
        hint: 'a line is one row or one chunk of a zip: give at most 256MiB',
      });
    const records = flags.maxRecords === undefined ? DEFAULT_IMPORT_LIMITS.records : parseCount('--max-records', flags.maxRecords);
    const store = await ctx.store();
    const input = createReadStream(file);
    await new Promise<void>((ok, fail) => input.once('open', () => ok()).once('error', fail));
    try {
      const r = await importStore(store, linesOf(input, lineBytes), {
        merge: Boolean(flags.merge),
        source: file,
        limits: { records },
        contents: packageContentIo({ home: ctx.home, contents: store.packageContents }),
        checkSealed: async (token, keyId, place) => {
          const keyring = await ctx.keyring();
          try {
            keyring.decrypt(token, keyId);
          } catch (err) {
            throw new SecretKeyError(`the master key here does not open the secrets in ${file}: ${place} is sealed under key ${keyId}; nothing was imported`, {
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
