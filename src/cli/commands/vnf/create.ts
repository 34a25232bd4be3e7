import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printResource, type OutputOptions } from '../../output/printer.js';
import { vnfView } from '../../output/vnf-view.js';
import { lcmDeps } from './deps.js';

interface Flags extends OutputOptions {
  vnfdId?: string;
  package?: string;
  name?: string;
  description?: string;
}

export function vnfCreateCommand(ctx: Context): Command {
  const cmd = new Command('vnf-create')
    .description('Create a VNF instance (NOT_INSTANTIATED) of an onboarded package; the package becomes IN_USE')
    .option('--vnfd-id <id>', 'the vnfdId of the package')
    .option('--package <package>', 'or the package, by id or name')
    .option('--name <name>', 'a name to find the instance by')
    .option('--description <text>', 'a description');
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['create an instance of the basic CNF', 'vnfm vnf-create --vnfd-id 1191aa45-a57a-4232-8201-6a7a66d41e38 --name web'],
    ['by package name, printing only the id', 'vnfm vnf-create --package basic-cnf -o json -c id'],
  ]);
  return cmd.action(async (flags: Flags) => {
    const { createVnf } = await import('../../../lcm/index.js');
    const { deps } = await lcmDeps(ctx);
    const vnf = createVnf(deps, { vnfdId: flags.vnfdId, package: flags.package, name: flags.name, description: flags.description });
    ctx.io.success(`vnf instance ${vnf.id} created`);
    await printResource(ctx.io, flags, vnfView(flags), vnf);
  });
}
