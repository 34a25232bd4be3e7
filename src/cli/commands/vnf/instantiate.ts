import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addHeatEnvironmentOption, addRunOptions, readRequestFile, runLcmCommand, type RunFlags } from './run.js';

export function vnfInstantiateCommand(ctx: Context): Command {
  const cmd = new Command('vnf-instantiate')
    .description('Instantiate a VNF instance from an InstantiateVnfRequest, in the foreground, and print the operation occurrence')
    .addHelpText(
      'after',
      `
The request (Tacker v2 / SOL003): flavourId, instantiationLevelId,
vimConnectionInfo ({"vim1": {"vimId": "NAME-OR-ID", "vimType": "kubernetes"}},
or inline with interfaceInfo.endpoint and accessInfo; the default VIM when
absent), additionalParams with lcm-kubernetes-def-files and namespace.
On failure or Ctrl-C the occurrence is left FAILED_TEMP: op-retry,
op-rollback or op-fail it.`,
    )
    .argument('<vnf>', 'instance id or name')
    .requiredOption('--request-file <file>', 'the InstantiateVnfRequest (JSON or YAML)');
  addRunOptions(cmd);
  addHeatEnvironmentOption(cmd);
  withExamples(cmd, [
    ['instantiate the basic CNF sample', 'vnfm vnf-instantiate web --request-file csar-samples/basic-cnf/requests/instantiate.json'],
    ['a package whose hooks run its own scripts, from a pipeline', 'vnfm vnf-instantiate web --request-file instantiate.json --allow-package-scripts'],
  ]);
  return cmd.action(async (ref: string, flags: RunFlags & { requestFile: string }) => {
    const request = await readRequestFile(flags.requestFile);
    const { instantiateVnf } = await import('../../../lcm/index.js');
    await runLcmCommand(ctx, flags, (deps, opts) => instantiateVnf(deps, ref, request, opts), flags.requestFile, `vnf instance ${ref}`);
  });
}
