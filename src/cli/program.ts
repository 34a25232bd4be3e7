/**
 * The command tree. Each command module defines its flags and loads what it
 * needs only when it runs; a command line that names a command loads that
 * command's module alone.
 */
import { Command } from 'commander';
import type { Context } from './context.js';
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
export async function buildProgram(ctx: Context, argv: readonly string[] = []): Promise<Command> {
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
  const commands: Array<[string, () => Promise<(ctx: Context) => Command>]> = [
    ['vim-register', async () => (await import('./commands/vim/register.js')).vimRegisterCommand],
    ['vim-list', async () => (await import('./commands/vim/list.js')).vimListCommand],
    ['vim-show', async () => (await import('./commands/vim/show.js')).vimShowCommand],
    ['vim-check', async () => (await import('./commands/vim/check.js')).vimCheckCommand],
    ['vim-update', async () => (await import('./commands/vim/update.js')).vimUpdateCommand],
    ['vim-delete', async () => (await import('./commands/vim/delete.js')).vimDeleteCommand],
    ['vnfpkg-validate', async () => (await import('./commands/vnfpkg/validate.js')).vnfpkgValidateCommand],
    ['vnfpkg-build', async () => (await import('./commands/vnfpkg/build.js')).vnfpkgBuildCommand],
    ['vnfpkg-onboard', async () => (await import('./commands/vnfpkg/onboard.js')).vnfpkgOnboardCommand],
    ['vnfpkg-list', async () => (await import('./commands/vnfpkg/list.js')).vnfpkgListCommand],
    ['vnfpkg-show', async () => (await import('./commands/vnfpkg/show.js')).vnfpkgShowCommand],
    ['vnfpkg-update', async () => (await import('./commands/vnfpkg/update.js')).vnfpkgUpdateCommand],
    ['vnfpkg-delete', async () => (await import('./commands/vnfpkg/delete.js')).vnfpkgDeleteCommand],
    ['vnfpkg-download', async () => (await import('./commands/vnfpkg/download.js')).vnfpkgDownloadCommand],
    ['vnfpkg-vnfd', async () => (await import('./commands/vnfpkg/vnfd.js')).vnfpkgVnfdCommand],
    ['vnfpkg-hot', async () => (await import('./commands/vnfpkg/hot.js')).vnfpkgHotCommand],
    ['vnf-create', async () => (await import('./commands/vnf/create.js')).vnfCreateCommand],
    ['vnf-list', async () => (await import('./commands/vnf/list.js')).vnfListCommand],
    ['vnf-show', async () => (await import('./commands/vnf/show.js')).vnfShowCommand],
    ['vnf-describe', async () => (await import('./commands/vnf/describe.js')).vnfDescribeCommand],
    ['vnf-logs', async () => (await import('./commands/vnf/logs.js')).vnfLogsCommand],
    ['vnf-sync', async () => (await import('./commands/vnf/sync.js')).vnfSyncCommand],
    ['vnf-adopt', async () => (await import('./commands/vnf/adopt.js')).vnfAdoptCommand],
    ['vnf-instantiate', async () => (await import('./commands/vnf/instantiate.js')).vnfInstantiateCommand],
    ['vnf-scale', async () => (await import('./commands/vnf/scale.js')).vnfScaleCommand],
    ['vnf-heal', async () => (await import('./commands/vnf/heal.js')).vnfHealCommand],
    ['vnf-change-package', async () => (await import('./commands/vnf/change-package.js')).vnfChangePackageCommand],
    ['vnf-update', async () => (await import('./commands/vnf/update.js')).vnfUpdateCommand],
    ['vnf-change-ext-conn', async () => (await import('./commands/vnf/update.js')).vnfChangeExtConnCommand],
    ['vnf-terminate', async () => (await import('./commands/vnf/terminate.js')).vnfTerminateCommand],
    ['vnf-delete', async () => (await import('./commands/vnf/delete.js')).vnfDeleteCommand],
    ['vnf-kubeconfig', async () => (await import('./commands/vnf/kubeconfig.js')).vnfKubeconfigCommand],
    ['op-list', async () => (await import('./commands/op/list.js')).opListCommand],
    ['op-show', async () => (await import('./commands/op/show.js')).opShowCommand],
    ['op-log', async () => (await import('./commands/op/log.js')).opLogCommand],
    ['op-watch', async () => (await import('./commands/op/watch.js')).opWatchCommand],
    ['op-retry', async () => (await import('./commands/op/retry.js')).opRetryCommand],
    ['op-rollback', async () => (await import('./commands/op/rollback.js')).opRollbackCommand],
    ['op-fail', async () => (await import('./commands/op/fail.js')).opFailCommand],
    ['key-rotate', async () => (await import('./commands/key/rotate.js')).keyRotateCommand],
    ['key-generate', async () => (await import('./commands/key/generate.js')).keyGenerateCommand],
    ['store-info', async () => (await import('./commands/store/info.js')).storeInfoCommand],
    ['store-export', async () => (await import('./commands/store/export.js')).storeExportCommand],
    ['store-import', async () => (await import('./commands/store/import.js')).storeImportCommand],
    ['sandbox', async () => (await import('./commands/sandbox.js')).sandboxCommand],
    ['demo', async () => (await import('./commands/demo.js')).demoCommand],
    ['sample-list', async () => (await import('./commands/sample/list.js')).sampleListCommand],
    ['sample-export', async () => (await import('./commands/sample/export.js')).sampleExportCommand],
    ['version', async () => (await import('./commands/version.js')).versionCommand],
    ['completion', async () => (await import('./commands/completion.js')).completionCommand],
  ];
  // One command asked for by name: only its definition is built (what the others' flags cost at every start);
  // anything else (help, an unknown word, completion) gets the whole tree.
  const only = commands.find(([name]) => name === commandWord(argv));
  const defined = await Promise.all((only ? [only] : commands).map(async ([name, load]) => [name, await load()] as const));
  for (const [name, define] of defined) {
    const cmd = define(ctx);
    if (cmd.name() !== name) throw new Error(`internal: the command table names ${name} for ${cmd.name()}`);
    // Subcommands inherit the error handling and output routing of the program.
    program.addCommand(cmd.exitOverride().configureOutput(program.configureOutput()).showHelpAfterError('(run with --help for usage)'));
  }
  if (only) return program;
  // What the completion scripts ask (`vnfm complete ...`, which names no command of the table); not a command
  // for people, so not in the help.
  const { completeCommand } = await import('./commands/complete.js');
  program.addCommand(
    completeCommand(ctx, () => program)
      .exitOverride()
      .configureOutput(program.configureOutput()),
    { hidden: true },
  );
  return program;
}
