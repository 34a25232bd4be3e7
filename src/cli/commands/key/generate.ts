import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';

export function keyGenerateCommand(ctx: Context): Command {
  const cmd = new Command('key-generate').description('Print a new Fernet key, for VNFM_MASTER_KEY (nothing is stored)');
  withExamples(cmd, [['keep the master key in a CI secret instead of a key file', 'vnfm key-generate']]);
  return cmd.action(async () => {
    const { generateFernetKey } = await import('../../../crypto/index.js');
    ctx.io.out(generateFernetKey());
  });
}
