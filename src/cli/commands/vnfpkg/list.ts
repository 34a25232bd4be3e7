import { Command, Option } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addListOptions, addOutputOptions, printList, type ListOptions, type OutputOptions } from '../../output/printer.js';
import { packageView } from '../../output/package-view.js';

/** Each state a package can be in, and the state it belongs to: `--state` takes any of them. */
const STATES = {
  CREATED: 'onboardingState',
  UPLOADING: 'onboardingState',
  PROCESSING: 'onboardingState',
  ONBOARDED: 'onboardingState',
  ERROR: 'onboardingState',
  ENABLED: 'operationalState',
  DISABLED: 'operationalState',
  IN_USE: 'usageState',
  NOT_IN_USE: 'usageState',
} as const;

interface Flags extends OutputOptions, ListOptions {
  state?: keyof typeof STATES;
  vnfdId?: string;
  provider?: string;
}

export function vnfpkgListCommand(ctx: Context): Command {
  const cmd = new Command('vnfpkg-list')
    .description('List the onboarded VNF packages')
    .addOption(new Option('--state <state>', 'only those in this onboarding, operational or usage state').choices(Object.keys(STATES)))
    .option('--vnfd-id <id>', 'only the package of this vnfdId')
    .option('--provider <provider>', 'only packages of this provider');
  addOutputOptions(cmd);
  addListOptions(cmd);
  withExamples(cmd, [
    ['list packages', 'vnfm vnfpkg-list'],
    ['vnfdIds only', 'vnfm vnfpkg-list -o value -c vnfdId'],
    ['the packages no instance uses', 'vnfm vnfpkg-list --state NOT_IN_USE'],
  ]);
  return cmd.action(async (flags: Flags) => {
    const { listPackages } = await import('../../../csar/packages.js');
    const filter = {
      ...(flags.state ? { [STATES[flags.state]]: flags.state } : {}),
      ...(flags.vnfdId ? { vnfdId: flags.vnfdId } : {}),
      ...(flags.provider ? { provider: flags.provider } : {}),
    };
    await printList(ctx.io, { ...flags, narrowed: Object.keys(filter).length > 0 }, packageView, await listPackages((await ctx.store()).packages, filter));
  });
}
