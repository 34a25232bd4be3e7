/** Interactive prompts; callers check `io.canPrompt` first. */
import { CancelledError, TerminatedError } from '../errors.js';
import type { IO } from './io.js';
import { terminalSafe } from './terminal-text.js';

/**
 * Asks a y/N question; Ctrl-C at it ends the command with CancelledError (exit 130), SIGTERM with TerminatedError (143).
 * The question quotes names (a package script's file and hook): shown safe for the terminal, on one line as the prompt redraws it.
 */
export async function confirm(io: IO, message: string): Promise<boolean> {
  const { default: inquirer } = await import('inquirer');
  try {
    const { ok } = await inquirer.prompt<{ ok: boolean }>(
      [{ type: 'confirm', name: 'ok', message: terminalSafe(message, { oneLine: true }), default: false }],
      // Prompts belong on stderr: stdout carries data only.
      { input: io.streams.stdin, output: io.streams.stderr } as never,
    );
    return ok;
  } catch (err) {
    // inquirer's ExitPromptError: the terminal's Ctrl-C (read as a key, so no SIGINT reaches vnfm) or a signal.
    if ((err as Error | undefined)?.name !== 'ExitPromptError') throw err;
    if (/SIGTERM/.test((err as Error).message)) throw new TerminatedError('terminated (SIGTERM) at a question, nothing changed');
    throw new CancelledError();
  }
}
