import { Command } from 'commander';
import { echo, UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printResource, type OutputOptions } from '../../output/printer.js';
import { packageView } from '../../output/package-view.js';
import { packageDeps } from '../../package-deps.js';
import { addPackageLimitOptions, packageLimits, type LimitFlags } from './limits.js';

interface Flags extends OutputOptions, LimitFlags {
  name?: string;
  userData?: string[];
}

function parseUserData(pairs: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const i = pair.indexOf('=');
    if (i <= 0) throw new UsageError(`--user-data ${echo(pair)} is not KEY=VALUE`, { hint: 'e.g. --user-data owner=nfv-team' });
    out[pair.slice(0, i)] = pair.slice(i + 1);
  }
  return out;
}

export function vnfpkgOnboardCommand(ctx: Context): Command {
  const cmd = new Command('vnfpkg-onboard')
    .description('Validate a VNF package and onboard it: a private copy is kept under VNFM_HOME (ONBOARDED, ENABLED, NOT_IN_USE)')
    .argument('<path>', 'a .zip/.csar file or a package directory')
    .option('--name <name>', 'a name to find the package by')
    .option('--user-data <key=value>', 'user-defined data (repeatable)', (v: string, prev: string[] = []) => [...prev, v]);
  addPackageLimitOptions(cmd);
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['onboard a built package', 'vnfm vnfpkg-onboard basic-cnf.zip --name basic-cnf'],
    ['onboard a tree directly, with user data', 'vnfm vnfpkg-onboard csar-samples/basic-cnf/package --user-data owner=nfv'],
  ]);
  return cmd.action(async (path: string, flags: Flags) => {
    const userDefinedData = parseUserData(flags.userData);
    const limits = packageLimits(flags);
    const { onboardPackage } = await import('../../../csar/index.js');
    const { pkg, findings } = await onboardPackage(await packageDeps(ctx), { path, name: flags.name, userDefinedData, limits });
    for (const f of findings.filter((x) => x.severity === 'warning')) ctx.io.warn(`${f.file ? f.file + ': ' : ''}${f.message}`);
    for (const f of findings.filter((x) => x.severity === 'info')) ctx.io.info(`note: ${f.file ? `${f.file}${f.line ? `:${f.line}` : ''}: ` : ''}${f.message}`);
    ctx.io.success(`vnf package ${pkg.id} onboarded (vnfdId ${pkg.vnfdId})`);
    await printResource(ctx.io, flags, packageView, pkg);
  });
}
