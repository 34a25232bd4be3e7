import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addHeatEnvironmentOption, addRunOptions, readRequestFile, runLcmCommand, type RunFlags } from './run.js';

export function vnfChangePackageCommand(ctx: Context): Command {
  const cmd = new Command('vnf-change-package')
    .description("Change a VNF instance's package (ChangeCurrentVnfPkgRequest): apply the new manifests, remove what they no longer have")
    .argument('<vnf>', 'instance id or name')
    .requiredOption('--request-file <file>', 'the ChangeCurrentVnfPkgRequest (JSON or YAML): vnfdId, additionalParams');
  addRunOptions(cmd);
  addHeatEnvironmentOption(cmd);
  withExamples(cmd, [['move the basic CNF to version 2', 'vnfm vnf-change-package web --request-file csar-samples/basic-cnf/requests/change-package.json']]);
  return cmd.action(async (ref: string, flags: RunFlags & { requestFile: string }) => {
    const request = await readRequestFile(flags.requestFile);
    const { changeVnfPackage } = await import('../../../lcm/index.js');
    await runLcmCommand(ctx, flags, (deps, opts) => changeVnfPackage(deps, ref, request, opts), flags.requestFile, `vnf instance ${ref}`);
  });
}
