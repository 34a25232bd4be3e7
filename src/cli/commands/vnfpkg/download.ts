import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { packageDeps } from './deps.js';

export function vnfpkgDownloadCommand(ctx: Context): Command {
  const cmd = new Command('vnfpkg-download')
    .description('Write an onboarded VNF package (the zip as onboarded) to a file')
    .argument('<package>', 'package id, vnfdId or name')
    .requiredOption('-o, --output-file <file>', 'where to write the zip')
    .option('--force', 'overwrite the file if it exists');
  withExamples(cmd, [['fetch a package back', 'vnfm vnfpkg-download basic-cnf -o basic-cnf.zip']]);
  return cmd.action(async (ref: string, flags: { outputFile: string; force?: boolean }) => {
    const { downloadPackage } = await import('../../../csar/packages.js');
    const pkg = await downloadPackage(await packageDeps(ctx), ref, flags.outputFile, flags.force);
    ctx.io.success(`vnf package ${pkg.id} written to ${flags.outputFile} (sha256 ${pkg.checksum.hash})`);
  });
}
