/**
 * The entry point, and the only place that turns errors into messages and
 * exit codes.
 */
import { CommanderError } from 'commander';
import { CancelledError, clip, ExitCode, MAX_MESSAGE_CHARS, VnfmError } from '../errors.js';
import { createContext } from './context.js';
import { IO, type Streams } from './io.js';
import { VERSION } from './version.js';

export interface MainOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  streams?: Streams;
}

export async function main(argv: string[], opts: MainOptions = {}): Promise<number> {
  const env = opts.env ?? process.env;
  const streams = opts.streams ?? standardStreams();
  // `vnfm --version` answers before the command tree is built: the same line commander prints.
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
    streams.stdout.write(`${VERSION}\n`);
    return ExitCode.ok;
  }
  // The command tree, with every command's definition, is evaluated only for a command.
  const { buildProgram } = await import('./program.js');
  // Colour and debug are known before commander parses, so its own messages follow them too.
  const io = new IO(streams, env, { noColor: argv.includes('--no-color') });
  io.debug = argv.includes('--debug') || env['VNFM_DEBUG'] === '1';
  const ctx = createContext(io, env, opts.cwd ?? process.cwd());
  const program = buildProgram(ctx, argv);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ExitCode.ok;
  } catch (err) {
    return reportError(io, err);
  } finally {
    ctx.close();
  }
}

/**
 * The process's streams, stdin taken at its first use: Node sets up process.stdin (and, for a
 * file or a pipe, its stream classes and fs/promises) when it is first read, which most commands never do.
 */
function standardStreams(): Streams {
  return {
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
  };
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
