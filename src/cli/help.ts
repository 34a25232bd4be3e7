import type { Command } from 'commander';

/** Adds an "Examples" section: `# what it does` then `$ vnfm ...`. */
export function withExamples(cmd: Command, examples: [what: string, command: string][]): Command {
  const text = examples.map(([what, command]) => `  # ${what}\n  $ ${command}`).join('\n\n');
  return cmd.addHelpText('after', `\nExamples:\n${text}\n`);
}
