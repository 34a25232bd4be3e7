import { createReadStream } from 'node:fs';
import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { lcmDeps } from '../../lcm/deps.js';

export function opLogCommand(ctx: Context): Command {
  const cmd = new Command('op-log')
    .description("Print an LCM operation occurrence's log: what its management drivers and package scripts ran, and their output (secrets redacted)")
    .addHelpText(
      'after',
      `
Every attempt (the first run, each op-retry) appends to the same log,
VNFM_HOME/logs/<occurrence id>.log; each line starts with its time and
the hook. An occurrence whose hooks logged nothing prints nothing.`,
    )
    .argument('<op>', 'occurrence id (or its first 8+ characters)');
  withExamples(cmd, [
    ['why a package script failed', 'vnfm op-log 3f2a9c1e'],
    ['its last lines', 'vnfm op-log 3f2a9c1e | tail -20'],
  ]);
  return cmd.action(async (ref: string) => {
    const [{ getOpOcc }, { findOpLog }] = await Promise.all([import('../../../lcm/index.js'), import('../../../lcm/op-log.js')]);
    const op = getOpOcc((await lcmDeps(ctx)).deps, ref);
    const path = findOpLog(ctx.home, op.id);
    if (!path) return;
    const out = ctx.io.streams.stdout;
    await new Promise<void>((resolve, reject) => {
      const input = createReadStream(path);
      input.on('error', reject);
      input.on('end', resolve);
      input.pipe(out, { end: false });
    });
  });
}
