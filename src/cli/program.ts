/**
 * The command tree. Each command module defines its flags and loads what it
 * needs only when it runs.
 */
import { Command } from 'commander';
import type { Context } from './context.js';
import { completeCommand } from './commands/complete.js';
import { completionCommand } from './commands/completion.js';
import { keyGenerateCommand } from './commands/key/generate.js';
import { storeInfoCommand } from './commands/store/info.js';
import { storeExportCommand } from './commands/store/export.js';
import { storeImportCommand } from './commands/store/import.js';
import { keyRotateCommand } from './commands/key/rotate.js';
import { sandboxCommand } from './commands/sandbox.js';
import { vimCheckCommand } from './commands/vim/check.js';
import { vimDeleteCommand } from './commands/vim/delete.js';
import { vimListCommand } from './commands/vim/list.js';
import { vimRegisterCommand } from './commands/vim/register.js';
import { vimShowCommand } from './commands/vim/show.js';
import { vimUpdateCommand } from './commands/vim/update.js';
import { demoCommand } from './commands/demo.js';
import { sampleExportCommand } from './commands/sample/export.js';
import { sampleListCommand } from './commands/sample/list.js';
import { versionCommand } from './commands/version.js';
import { vnfpkgBuildCommand } from './commands/vnfpkg/build.js';
import { vnfpkgDeleteCommand } from './commands/vnfpkg/delete.js';
import { vnfpkgDownloadCommand } from './commands/vnfpkg/download.js';
import { vnfpkgListCommand } from './commands/vnfpkg/list.js';
import { vnfpkgOnboardCommand } from './commands/vnfpkg/onboard.js';
import { vnfpkgShowCommand } from './commands/vnfpkg/show.js';
import { vnfpkgUpdateCommand } from './commands/vnfpkg/update.js';
import { vnfpkgValidateCommand } from './commands/vnfpkg/validate.js';
import { vnfpkgVnfdCommand } from './commands/vnfpkg/vnfd.js';
import { opFailCommand } from './commands/op/fail.js';
import { opListCommand } from './commands/op/list.js';
import { opLogCommand } from './commands/op/log.js';
import { opWatchCommand } from './commands/op/watch.js';
import { opRetryCommand } from './commands/op/retry.js';
import { opRollbackCommand } from './commands/op/rollback.js';
import { opShowCommand } from './commands/op/show.js';
import { vnfChangePackageCommand } from './commands/vnf/change-package.js';
import { vnfCreateCommand } from './commands/vnf/create.js';
import { vnfDeleteCommand } from './commands/vnf/delete.js';
import { vnfHealCommand } from './commands/vnf/heal.js';
import { vnfInstantiateCommand } from './commands/vnf/instantiate.js';
import { vnfKubeconfigCommand } from './commands/vnf/kubeconfig.js';
import { vnfListCommand } from './commands/vnf/list.js';
import { vnfScaleCommand } from './commands/vnf/scale.js';
import { vnfShowCommand } from './commands/vnf/show.js';
import { vnfDescribeCommand } from './commands/vnf/describe.js';
import { vnfSyncCommand } from './commands/vnf/sync.js';
import { vnfTerminateCommand } from './commands/vnf/terminate.js';
import { vnfChangeExtConnCommand, vnfUpdateCommand } from './commands/vnf/update.js';
import { VERSION } from './version.js';

export function buildProgram(ctx: Context): Command {
  const program = new Command('vnfm')
    .description('A standalone, Tacker-compatible VNF manager: VIMs, ETSI NFV packages and VNF lifecycle, from one command line.')
    .version(VERSION, '-v, --version', 'print the vnfm version')
    .option('--debug', 'print stack traces of failures')
    .option('--no-color', 'never colour the output (also: NO_COLOR=1)')
    .option(
      '--database-url <url>',
      'the shared store on PostgreSQL, postgres://USER@HOST/DB?sslrootcert=CA (else VNFM_DATABASE_URL, else database: in $VNFM_HOME/config.yaml; give the password in PGPASSWORD or ~/.pgpass, not here)',
    )
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => ctx.io.streams.stdout.write(s),
      writeErr: (s) => ctx.io.streams.stderr.write(s),
      outputError: (s, write) => write(ctx.io.color.red(s)),
    })
    .exitOverride()
    .hook('preAction', () => {
      const url = program.opts<{ databaseUrl?: string }>().databaseUrl;
      if (url !== undefined) ctx.useDatabaseUrl(url);
    });
  const commands = [
    vimRegisterCommand(ctx),
    vimListCommand(ctx),
    vimShowCommand(ctx),
    vimCheckCommand(ctx),
    vimUpdateCommand(ctx),
    vimDeleteCommand(ctx),
    vnfpkgValidateCommand(ctx),
    vnfpkgBuildCommand(ctx),
    vnfpkgOnboardCommand(ctx),
    vnfpkgListCommand(ctx),
    vnfpkgShowCommand(ctx),
    vnfpkgUpdateCommand(ctx),
    vnfpkgDeleteCommand(ctx),
    vnfpkgDownloadCommand(ctx),
    vnfpkgVnfdCommand(ctx),
    vnfCreateCommand(ctx),
    vnfListCommand(ctx),
    vnfShowCommand(ctx),
    vnfDescribeCommand(ctx),
    vnfSyncCommand(ctx),
    vnfInstantiateCommand(ctx),
    vnfScaleCommand(ctx),
    vnfHealCommand(ctx),
    vnfChangePackageCommand(ctx),
    vnfUpdateCommand(ctx),
    vnfChangeExtConnCommand(ctx),
    vnfTerminateCommand(ctx),
    vnfDeleteCommand(ctx),
    vnfKubeconfigCommand(ctx),
    opListCommand(ctx),
    opShowCommand(ctx),
    opLogCommand(ctx),
    opWatchCommand(ctx),
    opRetryCommand(ctx),
    opRollbackCommand(ctx),
    opFailCommand(ctx),
    keyRotateCommand(ctx),
    keyGenerateCommand(ctx),
    storeInfoCommand(ctx),
    storeExportCommand(ctx),
    storeImportCommand(ctx),
    sandboxCommand(ctx),
    demoCommand(ctx),
    sampleListCommand(ctx),
    sampleExportCommand(ctx),
    versionCommand(ctx),
    completionCommand(ctx),
  ];
  for (const cmd of commands) {
    // Subcommands inherit the error handling and output routing of the program.
    program.addCommand(cmd.exitOverride().configureOutput(program.configureOutput()).showHelpAfterError('(run with --help for usage)'));
  }
  // What the completion scripts ask; not a command for people, so not in the help.
  program.addCommand(
    completeCommand(ctx, () => program)
      .exitOverride()
      .configureOutput(program.configureOutput()),
    { hidden: true },
  );
  return program;
}
