/**
 * Runs a command line: builds the program, parses, and turns errors into
 * messages and exit codes (the only place that does). main.ts loads it.
 */
import { type Command, CommanderError } from 'commander';
import { CancelledError, clip, ExitCode, MAX_MESSAGE_CHARS, VnfmError } from '../errors.js';
import { createContext } from './context.js';
import { IO, type Streams } from './io.js';
import { buildProgram } from './program.js';
import { tackerOptionHint } from './tacker-options.js';

export async function run(argv: string[], streams: Streams, env: Record<string, string | undefined>, cwd: string): Promise<number> {
  // Colour and debug are known before commander parses, so its own messages follow them too.
  const io = new IO(streams, env, { noColor: argv.includes('--no-color') });
  io.debug = argv.includes('--debug') || env['VNFM_DEBUG'] === '1';
  const ctx = createContext(io, env, cwd);
  let program: Command | undefined;
  try {
    program = await buildProgram(ctx, argv);
    await program.parseAsync(argv, { from: 'user' });
    return ExitCode.ok;
  } catch (err) {
    if (err instanceof CommanderError && err.code === 'commander.unknownOption') {
      // Tacker's -f json or --sort-column NAME: commander has said "unknown option"; vnfm's form follows.
      const typed = program?.commands.find((c) => argv.includes(c.name()));
      const takes = typed && { output: typed.options.some((o) => o.long === '--output'), sort: typed.options.some((o) => o.long === '--sort') };
      const hint = tackerOptionHint(err.message, argv, takes);
      if (hint) io.hint(hint);
    }
    return reportError(io, err);
  } finally {
    await ctx.close();
  }
}

export function reportError(io: IO, err: unknown): number {
  if (err instanceof CommanderError) {
    // commander has printed its own message (or the help) already.
    if (['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(err.code)) {
      return err.code === 'commander.help' ? ExitCode.usage : ExitCode.ok;
    }
    return ExitCode.usage;
  }
  if (err instanceof CancelledError) {
    // The operator's own Ctrl-C at a question: not a failure to report.
    io.info(err.message);
    return err.exitCode;
  }
  if (err instanceof VnfmError) {
    io.error(err.message);
    if (err.hint) io.hint(err.hint);
    if (io.debug && err.stack) io.debugLog(err.stack);
    return err.exitCode;
  }
  const e = err as Error;
  io.error(`unexpected failure: ${clip(e?.message ?? String(err), MAX_MESSAGE_CHARS)}`);
  if (io.debug) io.debugLog(e?.stack ?? String(err));
  else io.hint('run again with --debug for details, and report it if it persists');
  return ExitCode.failed;
}
