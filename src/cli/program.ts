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
import { vnfpkgHotCommand } from './commands/vnfpkg/hot.js';
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
import { vnfLogsCommand } from './commands/vnf/logs.js';
import { vnfListCommand } from './commands/vnf/list.js';
import { vnfScaleCommand } from './commands/vnf/scale.js';
import { vnfShowCommand } from './commands/vnf/show.js';
import { vnfDescribeCommand } from './commands/vnf/describe.js';
import { vnfSyncCommand } from './commands/vnf/sync.js';
import { vnfAdoptCommand } from './commands/vnf/adopt.js';
import { vnfTerminateCommand } from './commands/vnf/terminate.js';
import { vnfChangeExtConnCommand, vnfUpdateCommand } from './commands/vnf/update.js';
import { terminalSafe } from './terminal-text.js';
import { versionLine } from './version.js';

/**
 * The command word of argv: its first word after the program's own options, undefined when an option
 * the program does not take comes first (`--help`, `--version`: those need the whole tree).
 */
function commandWord(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--debug' || a === '--no-color' || a.startsWith('--database-url=')) continue;
    if (a === '--database-url') {
      i++;
      continue;
    }
    return a.startsWith('-') ? undefined : a;
  }
  return undefined;
}

/** The program; with argv, only the command argv names is defined (every command when it names none). */
export function buildProgram(ctx: Context, argv: readonly string[] = []): Command {
  const program = new Command('vnfm')
    .description('A standalone, Tacker-compatible VNF manager: VIMs, ETSI NFV packages and VNF lifecycle, from one command line.')
    .version(versionLine(), '-v, --version', 'print the vnfm version and the commit it was built from')
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
      // Its messages quote the command line's arguments: shown as every message is (terminal-text.ts).
      outputError: (s, write) => write(ctx.io.color.red(terminalSafe(s))),
    })
    .exitOverride()
    .hook('preAction', () => {
      const url = program.opts<{ databaseUrl?: string }>().databaseUrl;
      if (url !== undefined) ctx.useDatabaseUrl(url);
    });
  const commands: Array<[string, (ctx: Context) => Command]> = [
    ['vim-register', vimRegisterCommand],
    ['vim-list', vimListCommand],
    ['vim-show', vimShowCommand],
    ['vim-check', vimCheckCommand],
    ['vim-update', vimUpdateCommand],
    ['vim-delete', vimDeleteCommand],
    ['vnfpkg-validate', vnfpkgValidateCommand],
    ['vnfpkg-build', vnfpkgBuildCommand],
    ['vnfpkg-onboard', vnfpkgOnboardCommand],
    ['vnfpkg-list', vnfpkgListCommand],
    ['vnfpkg-show', vnfpkgShowCommand],
    ['vnfpkg-update', vnfpkgUpdateCommand],
    ['vnfpkg-delete', vnfpkgDeleteCommand],
    ['vnfpkg-download', vnfpkgDownloadCommand],
    ['vnfpkg-vnfd', vnfpkgVnfdCommand],
    ['vnfpkg-hot', vnfpkgHotCommand],
    ['vnf-create', vnfCreateCommand],
    ['vnf-list', vnfListCommand],
    ['vnf-show', vnfShowCommand],
    ['vnf-describe', vnfDescribeCommand],
    ['vnf-logs', vnfLogsCommand],
    ['vnf-sync', vnfSyncCommand],
    ['vnf-adopt', vnfAdoptCommand],
    ['vnf-instantiate', vnfInstantiateCommand],
    ['vnf-scale', vnfScaleCommand],
    ['vnf-heal', vnfHealCommand],
    ['vnf-change-package', vnfChangePackageCommand],
    ['vnf-update', vnfUpdateCommand],
    ['vnf-change-ext-conn', vnfChangeExtConnCommand],
    ['vnf-terminate', vnfTerminateCommand],
    ['vnf-delete', vnfDeleteCommand],
    ['vnf-kubeconfig', vnfKubeconfigCommand],
    ['op-list', opListCommand],
    ['op-show', opShowCommand],
    ['op-log', opLogCommand],
    ['op-watch', opWatchCommand],
    ['op-retry', opRetryCommand],
    ['op-rollback', opRollbackCommand],
    ['op-fail', opFailCommand],
    ['key-rotate', keyRotateCommand],
    ['key-generate', keyGenerateCommand],
    ['store-info', storeInfoCommand],
    ['store-export', storeExportCommand],
    ['store-import', storeImportCommand],
    ['sandbox', sandboxCommand],
    ['demo', demoCommand],
    ['sample-list', sampleListCommand],
    ['sample-export', sampleExportCommand],
    ['version', versionCommand],
    ['completion', completionCommand],
  ];
  // One command asked for by name: only its definition is built (what the others' flags cost at every start);
  // anything else (help, an unknown word, completion) gets the whole tree.
  const only = commands.find(([name]) => name === commandWord(argv));
  for (const [name, define] of only ? [only] : commands) {
    const cmd = define(ctx);
    if (cmd.name() !== name) throw new Error(`internal: the command table names ${name} for ${cmd.name()}`);
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
