import { Command, Option } from 'commander';
import { UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addRunOptions, readRequestFile, requestFileOf, runLcmCommand, type RunFlags } from '../../lcm/run.js';

export function vnfUpdateCommand(ctx: Context): Command {
  const cmd = new Command('vnf-update')
    .description('Modify VNF information (VnfInfoModificationRequest, Tacker vnflcm update): name, description, metadata, extensions, VIM, vnfdId')
    .addHelpText(
      'after',
      `
The request (SOL003 / Tacker v2): vnfInstanceName, vnfInstanceDescription,
metadata, extensions and vnfConfigurableProperties (JSON merge patches: null
removes a key), vimConnectionInfo (an entry naming a registered VIM replaces
the entry of its key), vnfdId (Tacker v1: vnfPkgId). A vnfdId of another
version of the same VNF (same provider and product) moves the instance to
that package; on Kubernetes the containers of its Pods, Deployments,
ReplicaSets and DaemonSets take the new package's images (Tacker's container
update). Recorded as an occurrence MODIFY_INFO: op-retry, op-rollback or
op-fail it when it ends FAILED_TEMP.`,
    )
    .argument('<vnf>', 'instance id or name')
    .argument('[file]', "the VnfInfoModificationRequest (JSON or YAML), or Tacker's --I FILE")
    .option('--request-file <file>', "or the VnfInfoModificationRequest this way (not both); Tacker's spelling, --I FILE, works too")
    .addOption(new Option('--I <file>').hideHelp());
  addRunOptions(cmd);
  withExamples(cmd, [
    ['rename an instance', 'vnfm vnf-update web rename.json   # {"vnfInstanceName": "web-2"}'],
    ['move it to version 2 of its package, images and all', 'vnfm vnf-update web --request-file modify-vnfd.json --allow-package-scripts'],
  ]);
  return cmd.action(async (ref: string, positional: string | undefined, flags: RunFlags & { requestFile?: string; I?: string }) => {
    if (flags.I !== undefined && flags.requestFile !== undefined) {
      throw new UsageError('the request is given twice: --I and --request-file', { hint: 'give it once: vnfm vnf-update VNF FILE' });
    }
    const file = requestFileOf(positional, flags.requestFile ?? flags.I, 'vnfm vnf-update VNF FILE (or --request-file FILE)');
    const request = await readRequestFile(file);
    const { modifyVnfInfo } = await import('../../../lcm/index.js');
    await runLcmCommand(ctx, flags, (deps, opts) => modifyVnfInfo(deps, ref, request, opts), file, `vnf instance ${ref}`);
  });
}

export function vnfChangeExtConnCommand(ctx: Context): Command {
  const cmd = new Command('vnf-change-ext-conn')
    .description("Change an OpenStack VNF's external connectivity (ChangeExtVnfConnectivityRequest, Tacker vnflcm change-ext-conn): new extVirtualLinks, the Heat stack updated")
    .addHelpText(
      'after',
      `
The request: extVirtualLinks (each replaces the instance's link of the same
id), vimConnectionInfo, additionalParams. The connection points they name get
the new network, port or fixed IPs in the stack's nfv parameter.
vimConnectionInfo in the v2 map form is merged into the instance as vnf-update
merges it (Tacker v2), and the stack is updated on the VIM it gives; in the v1
array form it is not used, as in Tacker v1. A Kubernetes VNF is refused
(exit 2, nothing recorded), as Tacker refuses it. Recorded as an occurrence
CHANGE_EXT_CONN: op-retry, op-rollback (the stack's nfv as before) or op-fail.`,
    )
    .argument('<vnf>', 'instance id or name')
    .argument('[file]', 'the ChangeExtVnfConnectivityRequest (JSON or YAML)')
    .option('--request-file <file>', 'or the request this way (not both)');
  addRunOptions(cmd);
  withExamples(cmd, [['connect the VNF to another external network', 'vnfm vnf-change-ext-conn vm-vnf change-ext-conn.json']]);
  return cmd.action(async (ref: string, positional: string | undefined, flags: RunFlags & { requestFile?: string }) => {
    const file = requestFileOf(positional, flags.requestFile, 'vnfm vnf-change-ext-conn VNF FILE (or --request-file FILE)');
    const request = await readRequestFile(file);
    const { changeExtConn } = await import('../../../lcm/index.js');
    await runLcmCommand(ctx, flags, (deps, opts) => changeExtConn(deps, ref, request, opts), file, `vnf instance ${ref}`);
  });
}
