import { setTimeout as delay } from 'node:timers/promises';
import { Command, Option } from 'commander';
import { VnfmError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { lcmDeps } from '../../lcm/deps.js';

export function opWatchCommand(ctx: Context): Command {
  const cmd = new Command('op-watch')
    .description('Follow an LCM operation occurrence that another vnfm runs (here, or on another machine sharing the store): its steps as they are recorded, then its final state')
    .addHelpText(
      'after',
      `
Exit code: 0 when the operation ends COMPLETED or ROLLED_BACK, 1 when it
ends FAILED_TEMP or FAILED (its error is printed). An operation whose
vnfm is gone (killed, or its lease ran out on another machine) becomes
FAILED_TEMP here, as any command would make it.`,
    )
    .argument('<op>', 'occurrence id (or its first 8+ characters)')
    .addOption(new Option('--interval <seconds>', 'how often to look at the store').default('1'));
  withExamples(cmd, [['follow the instantiate a CI job started on another runner', 'VNFM_DATABASE_URL=postgres://vnfm@db/vnfm vnfm op-watch 3f2a9c1e']]);
  return cmd.action(async (ref: string, flags: { interval: string }) => {
    const seconds = Number(flags.interval);
    if (!Number.isFinite(seconds) || seconds <= 0) throw new VnfmError(`--interval ${flags.interval} is not a number of seconds`, { hint: 'e.g. --interval 2' });
    const { watchOpOcc } = await import('../../../lcm/watch.js');
    const { deps } = await lcmDeps(ctx);
    const stamp = () => ctx.now().toISOString();
    const op = await watchOpOcc(deps, ref, {
      onStep: (s) =>
        ctx.io.info(
          `${stamp()} ${s.action} ${s.resource.kind}/${s.resource.name}${s.resource.namespace ? ` (${s.resource.namespace})` : ''}: ${s.state}${s.detail ? ` — ${s.detail}` : ''}`,
        ),
      onState: (o) => ctx.io.info(`${stamp()} occurrence ${o.id} (${o.operation} of ${o.vnfInstanceId}): ${o.operationState}`),
      sleep: () => delay(seconds * 1000),
    });
    ctx.io.out(op.operationState);
    if (op.operationState === 'FAILED_TEMP' || op.operationState === 'FAILED') {
      throw new VnfmError(`occurrence ${op.id} (${op.operation}) ended ${op.operationState}${op.error ? `: ${op.error.detail ?? op.error.title}` : ''}`, {
        hint: `see it with: vnfm op-show ${op.id}`,
      });
    }
  });
}
