import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addHeatEnvironmentOption, addRunOptions, readRequestFile, requestFileOf, runLcmCommand, type RunFlags } from '../../lcm/run.js';
import { STRICT_HELP, withAdditionalParam } from './instantiate.js';

export function vnfChangePackageCommand(ctx: Context): Command {
  const cmd = new Command('vnf-change-package')
    .description("Change a VNF instance's package (ChangeCurrentVnfPkgRequest): apply the new manifests, remove what they no longer have")
    .argument('<vnf>', 'instance id or name')
    .argument('[file]', "the ChangeCurrentVnfPkgRequest (JSON or YAML): vnfdId, additionalParams; as Tacker's openstack vnflcm change-vnfpkg VNF FILE takes it")
    .option('--request-file <file>', 'or the ChangeCurrentVnfPkgRequest this way (not both)')
    .option('--strict', STRICT_HELP);
  addRunOptions(cmd);
  addHeatEnvironmentOption(cmd);
  withExamples(cmd, [
    ['move the basic CNF to version 2', 'vnfm vnf-change-package web --request-file csar-samples/basic-cnf/requests/change-package.json'],
    ['the same, the request file given as Tacker takes it', 'vnfm vnf-change-package web csar-samples/basic-cnf/requests/change-package.json'],
  ]);
  return cmd.action(async (ref: string, positional: string | undefined, flags: RunFlags & { requestFile?: string; strict?: boolean }) => {
    const file = requestFileOf(positional, flags.requestFile, 'vnfm vnf-change-package VNF FILE (or --request-file FILE)');
    const read = await readRequestFile(file);
    const request = flags.strict ? withAdditionalParam(read, file, 'vnfm_strict') : read;
    const { changeVnfPackage } = await import('../../../lcm/index.js');
    await runLcmCommand(ctx, flags, (deps, opts) => changeVnfPackage(deps, ref, request, opts), file, `vnf instance ${ref}`);
  });
}
