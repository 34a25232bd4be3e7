import { existsSync } from 'node:fs';
import { Command } from 'commander';
import { ConflictError, UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, outputFileOf, printResource, type OutputFormat, type OutputOptions } from '../../output/printer.js';

interface Flags extends Omit<OutputOptions, 'output'> {
  output?: string;
  file?: string;
  force?: boolean;
}

interface Built {
  file: string;
  members: number;
  bytes: number;
}

export function vnfpkgBuildCommand(ctx: Context): Command {
  const cmd = new Command('vnfpkg-build')
    .description("Build a CSAR zip from a package directory, filling TOSCA.meta's and the manifest's hashes; the same tree always gives the same bytes")
    .argument('<dir>', 'the package tree (with TOSCA-Metadata/TOSCA.meta)')
    .option('-f, --file <file>', 'the zip to write')
    .option('--force', 'overwrite the file if it exists');
  addOutputOptions(cmd, { legacyFile: true });
  withExamples(cmd, [
    ['build the basic CNF sample', 'vnfm vnfpkg-build csar-samples/basic-cnf/package -f basic-cnf.zip'],
    ['build it again over the old zip, and print what was written as JSON', 'vnfm vnfpkg-build csar-samples/basic-cnf/package -f basic-cnf.zip --force -o json'],
  ]);
  return cmd.action(async (dir: string, flags: Flags) => {
    const file = outputFileOf(ctx.io, flags);
    if (file === undefined) throw new UsageError('vnfpkg-build needs the zip to write', { hint: `vnfm vnfpkg-build ${dir} --file PACKAGE.zip` });
    if (!flags.force && existsSync(file)) throw new ConflictError(`${file} already exists`, { hint: 'choose another --file, or pass --force to overwrite it' });
    const { buildCsar } = await import('../../../csar/index.js');
    const epoch = ctx.env['SOURCE_DATE_EPOCH'];
    if (epoch !== undefined && !/^\d+$/.test(epoch)) {
      throw new UsageError(`SOURCE_DATE_EPOCH "${epoch}" is not a number of seconds`, { hint: 'unset it, or set e.g. SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)' });
    }
    const result = await buildCsar(dir, file, epoch ? { sourceDateEpoch: Number(epoch) } : {});
    for (const f of result.findings) ctx.io.warn(`${f.file ? f.file + ': ' : ''}${f.message}`);
    ctx.io.success(`${file} written: ${result.entries} members, ${result.bytes} bytes`);
    const format = flags.output === undefined || flags.output === file ? undefined : flags.output;
    if (format === undefined && !flags.quiet) return;
    await printResource<Built>(
      ctx.io,
      { ...flags, output: (format ?? 'name') as OutputFormat },
      {
        empty: '',
        columns: [],
        name: (b) => b.file,
        toData: (b) => ({ ...b }),
      },
      { file, members: result.entries, bytes: result.bytes },
    );
  });
}
