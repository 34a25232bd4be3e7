/** Interactive prompts; callers check `io.canPrompt` first. */
import type { IO } from './io.js';

export async function confirm(io: IO, message: string): Promise<boolean> {
  const { default: inquirer } = await import('inquirer');
  const { ok } = await inquirer.prompt<{ ok: boolean }>(
    [{ type: 'confirm', name: 'ok', message, default: false }],
    // Prompts belong on stderr: stdout carries data only.
    { input: io.streams.stdin, output: io.streams.stderr } as never,
  );
  return ok;
}
