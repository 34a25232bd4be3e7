import { existsSync, readdirSync } from 'node:fs';
import { Command } from 'commander';
import { ConflictError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';

export function sampleExportCommand(ctx: Context): Command {
  const cmd = new Command('sample-export')
    .description('Write a shipped sample (package trees, request bodies, README) into a directory')
    .argument('<name>', 'the sample, see: vnfm sample-list')
    .argument('<dir>', 'where to write it (must be empty or absent)')
    .option('--force', 'write into a directory that is not empty, over files of the same names');
  withExamples(cmd, [
    ['get the basic CNF sample on an air-gapped machine', 'vnfm sample-export basic-cnf ./basic-cnf'],
    ['then build and onboard it', 'vnfm vnfpkg-build basic-cnf/package -f basic-cnf.zip && vnfm vnfpkg-onboard basic-cnf.zip'],
  ]);
  return cmd.action(async (name: string, dir: string, flags: { force?: boolean }) => {
    if (!flags.force && existsSync(dir) && readdirSync(dir).length > 0) {
      throw new ConflictError(`${dir} is not empty`, { hint: 'give a new or empty directory, or pass --force to write over the files there' });
    }
    const { copyShippedTree } = await import('../../../assets/index.js');
    const written = copyShippedTree(`csar-samples/${name}`, dir);
    ctx.io.success(`sample ${name} written to ${dir} (${written.length} files)`);
  });
}
