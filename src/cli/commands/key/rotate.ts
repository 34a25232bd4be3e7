import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printResource, type OutputOptions } from '../../output/printer.js';

export function keyRotateCommand(ctx: Context): Command {
  const cmd = new Command('key-rotate').description('Re-encrypt every stored secret under a new master key').addHelpText(
    'after',
    `
Every secret is re-encrypted: the VIMs' credentials and the values sealed
into instances and operation records (SSH and registry passwords, tokens).
With the key file ($VNFM_HOME/master.key) a new key is made and the old one
retired; an interruption at any moment leaves every secret readable. With
VNFM_MASTER_KEY, put a new key first (VNFM_MASTER_KEY=NEW,OLD), run key-rotate,
then drop OLD. With VNFM_MASTER_KEY_COMMAND, vnfm cannot write to the secret
manager the command reads: store NEW,OLD there, run key-rotate, then store
NEW alone. One rotation runs at a time, and none while an LCM operation
runs: either is refused with exit code 4.`,
  );
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['rotate the key file', 'vnfm key-rotate'],
    ['rotate a key kept in the environment', 'VNFM_MASTER_KEY="$(vnfm key-generate),$VNFM_MASTER_KEY" vnfm key-rotate'],
  ]);
  return cmd.action(async (flags: OutputOptions) => {
    const store = await ctx.store();
    await ctx.keyring(); // refuses a key that cannot open the stored secrets
    const [{ rotateMasterKey }, { ROTATION_LOCK }, { holderOf, holderStatus }, { ConflictError }] = await Promise.all([
      import('../../../crypto/index.js'),
      import('../../../store/index.js'),
      import('../../../lcm/lock-holder.js'),
      import('../../../errors.js'),
    ]);
    const holder = holderOf();
    const running = (h: Parameters<typeof holderStatus>[0]) => holderStatus(h).state !== 'gone';
    const lock = {
      async acquire() {
        const { staleHolder } = await store.secrets.acquireLock(ROTATION_LOCK, holder, ctx.now().toISOString(), running, async () => {
          // Operations copy sealed values they read into what they write at their end: none may run meanwhile.
          const busy = (await store.secrets.operationLockHolders()).filter(running);
          if (busy.length > 0) {
            throw new ConflictError(`an operation is in progress on vnf instance ${busy.map((b) => b.vnfInstanceId).join(', ')} (pid ${busy.map((b) => b.pid).join(', ')})`, {
              hint: 'run vnfm key-rotate again once it has ended (vnfm op-list)',
            });
          }
        });
        if (staleHolder) ctx.io.info(`taking over the rotation lock of pid ${staleHolder.pid} (since ${staleHolder.acquiredAt}), which no longer runs`);
      },
      release: () => store.secrets.releaseLock(ROTATION_LOCK, holder),
    };
    const result = await rotateMasterKey({ home: ctx.home, env: ctx.env, secrets: store.secrets, lock });
    if (result.unreadable.length > 0) {
      ctx.io.warn(
        `${result.unreadable.length} sealed value(s) open with no key and were left as they are (sealed under a key lost before): ${result.unreadable.slice(0, 5).join(', ')}`,
      );
    }
    ctx.io.success(`${result.rotated} secret(s) re-encrypted under key ${result.keyId}`);
    if (result.source !== 'file') {
      const where = result.source === 'env' ? 'VNFM_MASTER_KEY' : 'what VNFM_MASTER_KEY_COMMAND prints';
      if (result.retiredKeyIds.length > 0) ctx.io.info(`no secret needs key(s) ${result.retiredKeyIds.join(', ')} any more: remove them from ${where}`);
      else ctx.io.info(`the keys come from ${where}, which holds one key: to rotate, put a new key first there (NEW,OLD; vnfm key-generate makes one) and run key-rotate again`);
    }
    await printResource(
      ctx.io,
      flags,
      {
        columns: [],
        empty: '',
        toData: (r: typeof result) => ({
          rotated: r.rotated,
          key_id: r.keyId,
          source: r.source,
          ...(r.path ? { path: r.path } : {}),
          retired_key_ids: r.retiredKeyIds,
          unreadable: r.unreadable,
        }),
      },
      result,
    );
  });
}
