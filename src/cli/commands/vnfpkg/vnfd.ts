import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { packageDeps } from '../../package-deps.js';

export function vnfpkgVnfdCommand(ctx: Context): Command {
  const cmd = new Command('vnfpkg-vnfd')
    .description("Print a package's VNFD: its top definitions file, or with --all every definitions file")
    .argument('<package>', 'package id, vnfdId or name')
    .option('--all', 'print every file under Definitions/, as a multi-document YAML stream');
  withExamples(cmd, [
    ['print the top VNFD', 'vnfm vnfpkg-vnfd basic-cnf'],
    ['every definitions file', 'vnfm vnfpkg-vnfd basic-cnf --all'],
  ]);
  return cmd.action(async (ref: string, flags: { all?: boolean }) => {
    const { readVnfdFiles } = await import('../../../csar/packages.js');
    const { files } = await readVnfdFiles(await packageDeps(ctx), ref);
    const chosen = flags.all ? files : files.slice(0, 1);
    // The package's own text: exact in a pipe, its control characters escaped on a terminal.
    ctx.io.outText(chosen.map((f) => (flags.all ? `# ${f.path}\n${f.text.replace(/^---\s*\n/, '')}` : f.text)).join(flags.all ? '\n---\n' : ''));
  });
}
