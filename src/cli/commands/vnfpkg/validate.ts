import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Command } from 'commander';
import type { Finding } from '../../../csar/index.js';
import { UsageError } from '../../../errors.js';
import { DEFAULT_LIMITS } from '../../../csar/package-limits.js';
import { isStdinPath } from '../../../input-file.js';
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
    .argument('<path>', 'a .zip/.csar file or an unpacked package directory; - reads a zip from the standard input')
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
    ['validate a zip another command writes', 'curl -s https://repo.example/basic-cnf.zip | vnfm vnfpkg-validate -'],
  ]);
  return cmd.action(async (path: string, flags: Flags) => {
    const limits = packageLimits(flags);
    const [{ validatePackage }, { chartRendererFromEnv }] = await Promise.all([import('../../../csar/index.js'), import('../../../csar/helm-render.js')]);
    const chartRenderer = await chartRendererFromEnv(ctx.env);
    const stdin = isStdinPath(path) ? await spoolStdin(ctx, limits.maxTotalBytes ?? DEFAULT_LIMITS.maxTotalBytes) : undefined;
    let result;
    try {
      result = await validatePackage(stdin?.file ?? path, { skipImageHashes: flags.skipImageHashes, limits, chartRenderer, strict: flags.strict === true });
    } finally {
      stdin?.remove();
    }
    if (stdin) result = { ...result, origin: path, findings: result.findings.map((f) => (f.file === stdin.file ? { ...f, file: path } : f)) };
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

/**
 * The zip on the standard input, copied to a private temporary file: a zip
 * is read from its end (the central directory), which a pipe cannot do. At
 * most `maxBytes` are taken.
 */
async function spoolStdin(ctx: Context, maxBytes: number): Promise<{ file: string; remove: () => void }> {
  const input = ctx.io.streams.stdin;
  if (input.isTTY) {
    throw new UsageError('- reads the package from the standard input, which is a terminal', { hint: 'pipe the zip in: cat basic-cnf.zip | vnfm vnfpkg-validate -' });
  }
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-stdin-'));
  const file = join(dir, 'package.zip');
  const remove = () => rmSync(dir, { recursive: true, force: true });
  let total = 0;
  const bound = new Transform({
    transform(chunk: Buffer, _enc, done) {
      total += chunk.length;
      if (total > maxBytes) done(new UsageError(`the package on the standard input is more than ${maxBytes} bytes`, { hint: 'raise --max-unpacked-size' }));
      else done(null, chunk);
    },
  });
  try {
    await pipeline(input, bound, createWriteStream(file, { mode: 0o600 }));
  } catch (err) {
    remove();
    throw err;
  }
  return { file, remove };
}
