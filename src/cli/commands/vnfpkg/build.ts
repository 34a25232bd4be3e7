import { Command } from 'commander';
import { UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';

export function vnfpkgBuildCommand(ctx: Context): Command {
  const cmd = new Command('vnfpkg-build')
    .description("Build a CSAR zip from a package directory, filling TOSCA.meta's and the manifest's hashes; the same tree always gives the same bytes")
    .argument('<dir>', 'the package tree (with TOSCA-Metadata/TOSCA.meta)')
    .requiredOption('-o, --output-file <file>', 'the zip to write');
  withExamples(cmd, [['build the basic CNF sample', 'vnfm vnfpkg-build csar-samples/basic-cnf/package -o basic-cnf.zip']]);
  return cmd.action(async (dir: string, flags: { outputFile: string }) => {
    const { buildCsar } = await import('../../../csar/index.js');
    const epoch = ctx.env['SOURCE_DATE_EPOCH'];
    if (epoch !== undefined && !/^\d+$/.test(epoch)) {
      throw new UsageError(`SOURCE_DATE_EPOCH "${epoch}" is not a number of seconds`, { hint: 'unset it, or set e.g. SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)' });
    }
    const result = await buildCsar(dir, flags.outputFile, epoch ? { sourceDateEpoch: Number(epoch) } : {});
    for (const f of result.findings) ctx.io.warn(`${f.file ? f.file + ': ' : ''}${f.message}`);
    ctx.io.success(`${flags.outputFile} written: ${result.entries} members, ${result.bytes} bytes`);
  });
}
