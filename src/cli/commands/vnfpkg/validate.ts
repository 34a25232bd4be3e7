import { Command } from 'commander';
import type { Finding } from '../../../csar/index.js';
import { UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printList, printResource, type OutputOptions } from '../../output/printer.js';
import { findingView } from '../../output/package-view.js';
import { addPackageLimitOptions, packageLimits, type LimitFlags } from './limits.js';

interface Flags extends OutputOptions, LimitFlags {
  skipImageHashes?: boolean;
  strict?: boolean;
}

export function vnfpkgValidateCommand(ctx: Context): Command {
  const cmd = new Command('vnfpkg-validate')
    .description(
      'Validate a VNF package (zip or directory) offline: TOSCA.meta, manifest and hashes, the VNFD, Kubernetes manifests, Helm charts (helm lint and helm template when helm is on PATH or in VNFM_HELM); writes nothing',
    )
    .argument('<path>', 'a .zip/.csar file or an unpacked package directory')
    .option('--skip-image-hashes', 'do not hash image files (Files/images/…), as Tacker does not')
    .option(
      '--strict',
      'refuse (exit 2) a Helm chart that renders objects beyond its instance: cluster-scoped ones (ClusterRole, ClusterRoleBinding, CRD, Namespace, PersistentVolume, StorageClass, webhook configurations…) or ones in another namespace than the one it is installed in; without it they are warnings',
    );
  addPackageLimitOptions(cmd);
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['validate a package before onboarding it', 'vnfm vnfpkg-validate basic-cnf.zip'],
    ['validate an unpacked tree in CI; exit 2 on any error', 'vnfm vnfpkg-validate csar-samples/basic-cnf/package -o json'],
    ['refuse a Helm chart that reaches beyond its namespace', 'vnfm vnfpkg-validate csar-samples/helm-cnf/package --strict'],
  ]);
  return cmd.action(async (path: string, flags: Flags) => {
    const limits = packageLimits(flags);
    const [{ validatePackage }, { chartRendererFromEnv }] = await Promise.all([import('../../../csar/index.js'), import('../../../csar/helm-render.js')]);
    const chartRenderer = await chartRendererFromEnv(ctx.env);
    const result = await validatePackage(path, { skipImageHashes: flags.skipImageHashes, limits, chartRenderer, strict: flags.strict === true });
    const errors = result.findings.filter((f) => f.severity === 'error').length;
    const warnings = result.findings.filter((f) => f.severity === 'warning').length;
    if (flags.output === 'table') {
      if (result.findings.length > 0) await printList<Finding>(ctx.io, flags, findingView, result.findings);
    } else {
      await printResource(
        ctx.io,
        flags,
        {
          columns: [],
          empty: '',
          toData: () => ({
            origin: result.origin,
            valid: result.valid,
            ...(result.vnfd ? { vnfdId: result.vnfd.id, flavours: Object.keys(result.vnfd.flavours) } : {}),
            findings: result.findings,
          }),
        },
        null,
      );
    }
    if (!result.valid) {
      throw new UsageError(`${path} is not a valid package: ${errors} error(s), ${warnings} warning(s)`, {
        hint: 'fix the findings above and validate again',
      });
    }
    ctx.io.success(`${path} is a valid package${result.vnfd ? ` (vnfdId ${result.vnfd.id})` : ''}${warnings ? `, with ${warnings} warning(s)` : ''}`);
  });
}
