import { createReadStream, statSync } from 'node:fs';
import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { lcmDeps } from '../../lcm/deps.js';
import { terminalSafe } from '../../terminal-text.js';

/**
 * The log on a terminal: what the scripts printed may hold escape sequences
 * (a title, the clipboard, a cleared screen), shown escaped (terminal-text.ts);
 * a carriage return at a chunk's end waits for the next, where a newline may
 * follow it.
 */
async function printSafely(path: string, out: NodeJS.WritableStream): Promise<void> {
  let held = '';
  for await (const chunk of createReadStream(path, { encoding: 'utf8' })) {
    const text = held + (chunk as string);
    held = text.endsWith('\r') ? '\r' : '';
    out.write(terminalSafe(held ? text.slice(0, -1) : text));
  }
  if (held) out.write(terminalSafe(held));
}

export function opLogCommand(ctx: Context): Command {
  const cmd = new Command('op-log')
    .description("Print an LCM operation occurrence's log: what its management drivers and package scripts ran, and their output (secrets redacted)")
    .addHelpText(
      'after',
      `
Every attempt (the first run, each op-retry) appends to the same log,
VNFM_HOME/logs/<occurrence id>.log; each line starts with its time and
the hook. An occurrence whose hooks logged nothing has no log: that is
said on stderr, and nothing is printed on stdout (exit 0). On a
terminal, control characters the scripts printed are shown escaped (\\x1b);
in a pipe or a file the log is printed as it is.`,
    )
    .argument('<op>', 'occurrence id (or its first 8+ characters)');
  withExamples(cmd, [
    ['why a package script failed', 'vnfm op-log 3f2a9c1e'],
    ['its last lines', 'vnfm op-log 3f2a9c1e | tail -20'],
  ]);
  return cmd.action(async (ref: string) => {
    const [{ getOpOcc }, { findOpLog }] = await Promise.all([import('../../../lcm/index.js'), import('../../../lcm/op-log.js')]);
    const op = await getOpOcc((await lcmDeps(ctx)).deps, ref);
    const path = findOpLog(ctx.home, op.id);
    if (!path || statSync(path).size === 0) {
      ctx.io.info(
        `occurrence ${op.id} (${op.operation} ${op.operationState}) has no log: no management driver or package script ran in its hooks; what its steps did is in vnfm op-show ${op.id.slice(0, 8)}`,
      );
      return;
    }
    const out = ctx.io.streams.stdout;
    if (ctx.io.stdoutIsTTY) return printSafely(path, out);
    await new Promise<void>((resolve, reject) => {
      const input = createReadStream(path);
      input.on('error', reject);
      input.on('end', resolve);
      input.pipe(out, { end: false });
    });
  });
}
