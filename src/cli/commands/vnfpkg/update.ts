import { Command, Option } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printResource, type OutputOptions } from '../../output/printer.js';
import { packageView } from '../../output/package-view.js';
import { packageDeps } from '../../package-deps.js';

export function vnfpkgUpdateCommand(ctx: Context): Command {
  const cmd = new Command('vnfpkg-update')
    .description('Enable or disable a VNF package (a disabled package cannot be instantiated)')
    .argument('<package>', 'package id, vnfdId or name')
    .addOption(new Option('--operational-state <state>', 'the new operational state').choices(['ENABLED', 'DISABLED']).makeOptionMandatory());
  addOutputOptions(cmd);
  withExamples(cmd, [['disable a package', 'vnfm vnfpkg-update basic-cnf --operational-state DISABLED']]);
  return cmd.action(async (ref: string, flags: OutputOptions & { operationalState: 'ENABLED' | 'DISABLED' }) => {
    const { setOperationalState } = await import('../../../csar/packages.js');
    const pkg = await setOperationalState(await packageDeps(ctx), ref, flags.operationalState);
    ctx.io.success(`vnf package ${pkg.id} is ${pkg.operationalState}`);
    await printResource(ctx.io, flags, packageView, pkg);
  });
}
