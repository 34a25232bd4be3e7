import { Command, Option } from 'commander';
import { UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { printResource } from '../../output/printer.js';
import { vnfView } from '../../output/vnf-view.js';
import { lcmDeps } from '../../lcm/deps.js';
import { addHeatEnvironmentOption, addRunOptions, readRequestFile, runLcmCommand, type RunFlags } from '../../lcm/run.js';

interface Flags extends RunFlags {
  vnfdId?: string;
  package?: string;
  name?: string;
  description?: string;
  instantiateFile?: string;
  /** Tacker's `openstack vnflcm create --I FILE`. */
  I?: string;
}

export function vnfCreateCommand(ctx: Context): Command {
  const cmd = new Command('vnf-create')
    .description('Create a VNF instance (NOT_INSTANTIATED) of an onboarded package; the package becomes IN_USE')
    .argument('[vnfd-id]', "the vnfdId of the package, as Tacker's openstack vnflcm create VNFD_ID takes it")
    .option('--vnfd-id <id>', 'or the vnfdId this way')
    .option('--package <package>', 'or the package, by id or name')
    .option('--name <name>', 'a name to find the instance by')
    .option('--description <text>', 'a description')
    .option(
      '--instantiate-file <file>',
      "then instantiate it with this InstantiateVnfRequest; the request is checked first, and when it is refused nothing is created. Tacker's spelling, --I FILE, works too",
    )
    .addOption(new Option('--I <file>').hideHelp());
  addRunOptions(cmd);
  addHeatEnvironmentOption(cmd);
  cmd.addHelpText(
    'after',
    `
With --instantiate-file, vnf-create runs as vnf-instantiate does: it prints
the INSTANTIATE occurrence (its vnfInstanceId names the new instance) and
takes the LCM options (--timeout, --allow-package-scripts...). A request that
fails its checks, or an instantiate stopped before it started (the VIM
unreachable, package scripts not allowed), leaves no instance behind; an
instantiate that fails once started leaves the instance and its FAILED_TEMP
occurrence for op-retry, op-rollback or op-fail.`,
  );
  withExamples(cmd, [
    ['create an instance of the basic CNF, by vnfdId as Tacker does', 'vnfm vnf-create 1191aa45-a57a-4232-8201-6a7a66d41e38 --name web'],
    ['by package name, printing only the id', 'vnfm vnf-create --package basic-cnf -o json -c id'],
    ['create and instantiate in one go', 'vnfm vnf-create --package basic-cnf --name web --instantiate-file csar-samples/basic-cnf/requests/instantiate.json'],
  ]);
  return cmd.action(async (positional: string | undefined, flags: Flags) => {
    if (positional !== undefined && flags.vnfdId !== undefined) {
      throw new UsageError(`the vnfdId is given twice: ${positional} and --vnfd-id ${flags.vnfdId}`, { hint: 'give it once: vnfm vnf-create VNFD_ID' });
    }
    if (positional !== undefined && flags.package !== undefined) {
      throw new UsageError(`both a vnfdId (${positional}) and --package ${flags.package} are given`, {
        hint: 'name the package once: vnfm vnf-create VNFD_ID, or vnfm vnf-create --package PACKAGE',
      });
    }
    if (flags.I !== undefined && flags.instantiateFile !== undefined) {
      throw new UsageError('the instantiate request is given twice: --I and --instantiate-file', { hint: 'give it once: --instantiate-file FILE' });
    }
    const instantiateFile = flags.instantiateFile ?? flags.I;
    const create = { vnfdId: positional ?? flags.vnfdId, package: flags.package, name: flags.name, description: flags.description };
    if (instantiateFile !== undefined) {
      const file = instantiateFile;
      const request = await readRequestFile(file);
      const { createAndInstantiateVnf } = await import('../../../lcm/index.js');
      await runLcmCommand(
        ctx,
        flags,
        (deps, opts) => createAndInstantiateVnf(deps, create, request, { ...opts, onCreated: (vnf) => ctx.io.success(`vnf instance ${vnf.id} created`) }),
        file,
        `vnf instance ${flags.name ?? '(new)'}`,
      );
      return;
    }
    const { createVnf } = await import('../../../lcm/index.js');
    const { deps } = await lcmDeps(ctx);
    const vnf = await createVnf(deps, create);
    ctx.io.success(`vnf instance ${vnf.id} created`);
    await printResource(ctx.io, flags, vnfView(flags), vnf);
  });
}
