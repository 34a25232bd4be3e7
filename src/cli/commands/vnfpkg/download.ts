import { Command } from 'commander';
import { UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, outputFileOf, printResource, type OutputFormat, type OutputOptions } from '../../output/printer.js';
import { packageView } from '../../output/package-view.js';
import { packageDeps } from '../../package-deps.js';

interface Flags extends Omit<OutputOptions, 'output'> {
  output?: string;
  file?: string;
  force?: boolean;
}

export function vnfpkgDownloadCommand(ctx: Context): Command {
  const cmd = new Command('vnfpkg-download')
    .description('Write an onboarded VNF package (the zip as onboarded) to a file')
    .argument('<package>', 'package id, vnfdId or name')
    .option('-f, --file <file>', 'where to write the zip')
    .option('--force', 'overwrite the file if it exists');
  addOutputOptions(cmd, { legacyFile: true });
  withExamples(cmd, [
    ['fetch a package back', 'vnfm vnfpkg-download basic-cnf -f basic-cnf.zip'],
    ['and print its checksum', "vnfm vnfpkg-download basic-cnf -f basic-cnf.zip --force -o jsonpath='{.checksum.hash}'"],
  ]);
  return cmd.action(async (ref: string, flags: Flags) => {
    const file = outputFileOf(ctx.io, flags);
    if (file === undefined) throw new UsageError('vnfpkg-download needs the file to write', { hint: `vnfm vnfpkg-download ${ref} --file PACKAGE.zip` });
    const { downloadPackage } = await import('../../../csar/packages.js');
    const pkg = await downloadPackage(await packageDeps(ctx), ref, file, flags.force);
    ctx.io.success(`vnf package ${pkg.id} written to ${file} (sha256 ${pkg.checksum.hash})`);
    const format = flags.output === undefined || flags.output === file ? undefined : flags.output;
    if (format === undefined && !flags.quiet) return;
    await printResource(ctx.io, { ...flags, output: (format ?? 'name') as OutputFormat }, packageView, pkg);
  });
}
