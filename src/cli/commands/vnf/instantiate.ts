import { Command } from 'commander';
import { ValidationError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addHeatEnvironmentOption, addRunOptions, readRequestFile, requestFileOf, runLcmCommand, type RunFlags } from '../../lcm/run.js';

export function vnfInstantiateCommand(ctx: Context): Command {
  const cmd = new Command('vnf-instantiate')
    .description('Instantiate a VNF instance from an InstantiateVnfRequest, in the foreground, and print the operation occurrence')
    .addHelpText(
      'after',
      `
The request (Tacker v2 / SOL003): flavourId, instantiationLevelId,
vimConnectionInfo ({"vim1": {"vimId": "NAME-OR-ID", "vimType": "kubernetes"}},
or inline with interfaceInfo.endpoint and accessInfo; the default VIM when
absent; as in Tacker v1, an entry of the v1 array form names a registered VIM
by vimId, the default VIM without one, and only its accessInfo.region is
read: its endpoint and credentials are not used), additionalParams with lcm-kubernetes-def-files and namespace.
The namespace must exist on the cluster (else exit 6, nothing recorded),
unless the package creates it or --create-namespace (additionalParams
vnfm_create_namespace: true) asks vnfm to; terminate leaves it.
On failure or Ctrl-C the occurrence is left FAILED_TEMP: op-retry,
op-rollback or op-fail it.`,
    )
    .argument('<vnf>', 'instance id or name')
    .argument('[file]', "the InstantiateVnfRequest (JSON or YAML), as Tacker's openstack vnflcm instantiate VNF FILE takes it")
    .option('--request-file <file>', 'or the InstantiateVnfRequest this way (not both)')
    .option('--create-namespace', 'Kubernetes VIMs: create the namespace when the cluster lacks it (sets additionalParams.vnfm_create_namespace)')
    .option('--strict', STRICT_HELP);
  addRunOptions(cmd);
  addHeatEnvironmentOption(cmd);
  withExamples(cmd, [
    ['instantiate the basic CNF sample', 'vnfm vnf-instantiate web --request-file csar-samples/basic-cnf/requests/instantiate.json'],
    ['the same, the request file given as Tacker takes it', 'vnfm vnf-instantiate web csar-samples/basic-cnf/requests/instantiate.json'],
    ['a package whose hooks run its own scripts, from a pipeline', 'vnfm vnf-instantiate web --request-file instantiate.json --allow-package-scripts'],
  ]);
  return cmd.action(async (ref: string, positional: string | undefined, flags: RunFlags & { requestFile?: string; createNamespace?: boolean; strict?: boolean }) => {
    const file = requestFileOf(positional, flags.requestFile, 'vnfm vnf-instantiate VNF FILE (or --request-file FILE)');
    const read = await readRequestFile(file);
    const created = flags.createNamespace ? withAdditionalParam(read, file, 'vnfm_create_namespace') : read;
    const request = flags.strict ? withAdditionalParam(created, file, 'vnfm_strict') : created;
    const { instantiateVnf } = await import('../../../lcm/index.js');
    await runLcmCommand(ctx, flags, (deps, opts) => instantiateVnf(deps, ref, request, opts), file, `vnf instance ${ref}`);
  });
}

/** --strict of the commands that install a chart. */
export const STRICT_HELP =
  "Helm charts: refuse (exit 2, nothing installed) a chart that renders objects beyond the instance — cluster-scoped ones (ClusterRole, ClusterRoleBinding, CRD, Namespace, StorageClass, webhook configurations…) or ones in another namespace than the instance's — instead of warning (sets additionalParams.vnfm_strict)";

/** The request with additionalParams[`key`] set to true, as a flag asks (--create-namespace, --strict). */
export function withAdditionalParam(request: unknown, file: string, key: string): unknown {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return request;
  const body = request as Record<string, unknown>;
  const params = body['additionalParams'] ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params)) throw new ValidationError(file, 'additionalParams', 'must be an object');
  return { ...body, additionalParams: { ...params, [key]: true } };
}
