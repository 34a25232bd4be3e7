import * as fs from 'node:fs';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { Command } from 'commander';
import { ConflictError, UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';

export function storeExportCommand(ctx: Context): Command {
  const cmd = new Command('store-export')
    .description('Write the store (VIMs, packages, VNF instances, operation occurrences, SSH host keys) as one JSON document')
    .addHelpText(
      'after',
      "\nSecrets stay sealed as stored: importing needs the same master key. Packages' zips are included (base64)\n" +
        'unless --without-package-contents. Locks and leases are not exported. The file is written 0600.',
    )
    .argument('[file]', 'where to write it; - (the default) for stdout', '-')
    .option('--without-package-contents', "leave the packages' zips out (their records stay)")
    .option('--force', 'overwrite FILE if it exists');
  withExamples(cmd, [
    ["move a laptop's state to the shared store", 'vnfm store-export state.json\n$ VNFM_DATABASE_URL=postgres://vnfm@db/vnfm vnfm store-import state.json'],
    ['records only, to stdout', 'vnfm store-export --without-package-contents - | jq .tables.vims'],
  ]);
  return cmd.action(async (file: string, flags: { withoutPackageContents?: boolean; force?: boolean }) => {
    const [{ exportStore }, { packageContentIo }] = await Promise.all([import('../../../store/transfer.js'), import('../../../csar/packages.js')]);
    const store = await ctx.store();
    const opts = {
      withPackageContents: !flags.withoutPackageContents,
      now: ctx.now(),
      contents: packageContentIo({ home: ctx.home, contents: store.packageContents }),
      onMissingContents: (id: string) => ctx.io.warn(`package ${id}: its zip is not in this store or ${ctx.home}; exported without it`),
    };
    if (file === '-') {
      if (ctx.io.stdoutIsTTY) throw new UsageError('refusing to write the export to a terminal', { hint: 'give a FILE, or redirect stdout: vnfm store-export > state.json' });
      const r = await exportStore(store, ctx.io.streams.stdout as Writable, opts);
      ctx.io.info(`exported ${summary(r.rows)}, ${r.packageContents} package zip(s)`, 'dim');
      return;
    }
    if (!flags.force && fs.existsSync(file)) throw new ConflictError(`${file} already exists`, { hint: 'choose another file, or pass --force to overwrite it' });
    const tmp = `${file}.${process.pid}.tmp`;
    const out = fs.createWriteStream(tmp, { mode: 0o600 });
    try {
      const r = await exportStore(store, out, opts);
      out.end();
      await finished(out);
      fs.renameSync(tmp, file);
      ctx.io.success(`exported ${summary(r.rows)}, ${r.packageContents} package zip(s) to ${file}`);
    } catch (err) {
      out.destroy();
      fs.rmSync(tmp, { force: true });
      throw err;
    }
  });
}

export function summary(rows: Record<string, number>): string {
  return Object.entries(rows)
    .map(([t, n]) => `${n} ${t}`)
    .join(', ');
}
