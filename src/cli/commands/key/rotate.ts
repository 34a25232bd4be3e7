import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printResource, type OutputOptions } from '../../output/printer.js';

export function keyRotateCommand(ctx: Context): Command {
  const cmd = new Command('key-rotate')
    .description('Re-encrypt every stored secret under a new master key')
    .addHelpText(
      'after',
      `
With the key file ($VNFM_HOME/master.key) a new key is made and the old one
retired; an interruption at any moment leaves every secret readable. With
VNFM_MASTER_KEY, put a new key first (VNFM_MASTER_KEY=NEW,OLD), run key-rotate,
then drop OLD.`,
    );
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['rotate the key file', 'vnfm key-rotate'],
    ['rotate a key kept in the environment', 'VNFM_MASTER_KEY="$(vnfm key-generate),$VNFM_MASTER_KEY" vnfm key-rotate'],
  ]);
  return cmd.action(async (flags: OutputOptions) => {
    const store = await ctx.store();
    await ctx.keyring(); // refuses a key that cannot open the stored secrets
    const { rotateMasterKey } = await import('../../../crypto/index.js');
    const result = rotateMasterKey({ home: ctx.home, env: ctx.env, secrets: store.vims });
    ctx.io.success(`${result.rotated} secret(s) re-encrypted under key ${result.keyId}`);
    if (result.source === 'env' && result.retiredKeyIds.length > 0) {
      ctx.io.info(`no secret needs key(s) ${result.retiredKeyIds.join(', ')} any more: remove them from VNFM_MASTER_KEY`);
    }
    await printResource(
      ctx.io,
      flags,
      {
        columns: [],
        empty: '',
        toData: (r: typeof result) => ({ rotated: r.rotated, key_id: r.keyId, source: r.source, ...(r.path ? { path: r.path } : {}), retired_key_ids: r.retiredKeyIds }),
      },
      result,
    );
  });
}
