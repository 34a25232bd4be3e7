/**
 * The entry point: answers `--version` at once and hands everything else to
 * run.ts, the only place that turns errors into messages and exit codes.
 */
import { ExitCode } from '../errors.js';
import type { Streams } from './io.js';
import { processStreams } from './stdio.js';
import { versionLine } from './version.js';

export interface MainOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  streams?: Streams;
}

export async function main(argv: string[], opts: MainOptions = {}): Promise<number> {
  const streams = opts.streams ?? processStreams();
  // `vnfm --version` answers before the command tree is built: the same line commander prints (program.ts).
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
    streams.stdout.write(`${versionLine()}\n`);
    return ExitCode.ok;
  }
  // The command line (commander, the colours, the context) and the command tree are evaluated only for a command.
  const { run } = await import('./run.js');
  return run(argv, streams, opts.env ?? process.env, opts.cwd ?? process.cwd());
}
