import { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../help.js';
import { addOutputOptions, printResource, type OutputOptions, type View } from '../output/printer.js';
import { BUILD_COMMIT, VERSION } from '../version.js';

/** What `vnfm version` reports: enough to tell two builds apart in a bug report. */
export interface VersionInfo {
  version: string;
  node: string;
  sqlite: string;
  commit: string;
  singleExecutable: boolean;
  platform: string;
  /** How many sample, template and type-definition files it carries (templates/, csar-samples/). */
  shippedFiles: number;
}

const versionView: View<VersionInfo> = {
  columns: [],
  empty: '',
  toData: (v) => ({
    version: v.version,
    node: v.node,
    sqlite: v.sqlite,
    commit: v.commit,
    single_executable: v.singleExecutable,
    platform: v.platform,
    shipped_files: v.shippedFiles,
  }),
};

export function versionCommand(ctx: Context): Command {
  const cmd = new Command('version').description('Show the versions of vnfm, the Node.js and SQLite inside it, and the commit it was built from');
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['what to paste into a bug report', 'vnfm version'],
    ['for a script', 'vnfm version -o json'],
  ]);
  return cmd.action(async (flags: OutputOptions) => {
    const { sqliteVersion } = await import('../../store/database.js');
    const { runningAsSingleExecutable } = await import('../../store/native-binding.js');
    const { listShippedFiles } = await import('../../assets/index.js');
    const info: VersionInfo = {
      version: VERSION,
      node: process.version,
      sqlite: sqliteVersion(ctx.home),
      commit: BUILD_COMMIT,
      singleExecutable: runningAsSingleExecutable(),
      platform: `${process.platform}-${process.arch}`,
      shippedFiles: listShippedFiles().length,
    };
    await printResource(ctx.io, flags, versionView, info);
  });
}
