import { Command, InvalidArgumentError } from 'commander';
import { CancelledError, UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { lcmDeps } from '../../lcm/deps.js';
import { terminalSafe } from '../../terminal-text.js';

const NEWLINE = Buffer.from('\n');

interface Flags {
  vnfc?: string;
  vdu?: string;
  container?: string;
  follow?: boolean;
  since?: number;
  tail?: number;
}

/** `10m`, `30s`, `1h30m`, `90` (seconds) → seconds, as kubectl logs --since takes it. */
function parseSince(value: string): number {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s?)?$/.exec(value.trim());
  const seconds = m ? Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0) : NaN;
  if (!m || !value.trim() || !(seconds > 0)) throw new InvalidArgumentError('give a duration: 30s, 10m, 1h.');
  return seconds;
}

function parseTail(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('give a number of lines (0 or more).');
  return Number(value);
}

export function vnfLogsCommand(ctx: Context): Command {
  const cmd = new Command('vnf-logs')
    .description("Print the logs of a VNF instance's pods through its VIM, as kubectl logs does, or its servers' console logs (no VIM credentials needed: vnfm holds them)")
    .argument('<vnf>', 'instance id or name')
    .option('--vnfc <id>', 'only this VNFC (its id, as vnf-show lists them, or its pod name or server id)')
    .option('--vdu <vdu>', 'only the pods (servers) of this VDU')
    .option('-c, --container <name>', 'the container (needed when a pod has several)')
    .option('-f, --follow', 'keep printing lines as they come, until Ctrl-C (exit 130)')
    .option('--since <duration>', 'only lines newer than this: 30s, 10m, 1h', parseSince)
    .option('--tail <n>', 'only the last n lines of each pod (server)', parseTail);
  cmd.addHelpText(
    'after',
    `
The pods are the VNFCs the instance records (vnfm vnf-sync records those it
has now); after a first instantiate that stopped short (FAILED_TEMP, FAILED),
the pods of what it created, as vnf-describe shows them (--vnfc takes a pod
name there). With several pods, each line starts with [pod/NAME], as kubectl
logs --prefix. On a terminal, control characters a container printed are
shown escaped (\\x1b); in a pipe or a file the bytes are as it wrote them.
For an OpenStack (Heat) instance, each server's console log from Nova, as
openstack console log show prints it ([server/VNFC] before each line when
there are several); --tail is Nova's length; -f, --since and -c do not apply.`,
  );
  withExamples(cmd, [
    ['the logs of every pod of an instance', 'vnfm vnf-logs web'],
    ["the last 20 lines of one VDU's pods, then follow them", 'vnfm vnf-logs web --vdu VDU1 --tail 20 -f'],
    ['one container of one VNFC, the last ten minutes', 'vnfm vnf-logs web --vnfc VDU1-vdu1-5d8f7c-x2k4q -c app --since 10m'],
    ["the last 50 lines of the console log of a Heat VNF's servers", 'vnfm vnf-logs gateway --tail 50'],
  ]);
  return cmd.action(async (ref: string, flags: Flags) => {
    if (flags.vnfc !== undefined && flags.vdu !== undefined) throw new UsageError('give --vnfc or --vdu, not both', { hint: 'vnfm vnf-logs VNF --vdu VDU1' });
    const { readVnfLogs } = await import('../../../lcm/logs.js');
    const { deps, close } = await lcmDeps(ctx);
    const controller = new AbortController();
    const onSigint = () => controller.abort();
    process.once('SIGINT', onSigint);
    const out = ctx.io.streams.stdout;
    const tty = ctx.io.stdoutIsTTY;
    let pods = 0;
    try {
      await readVnfLogs(
        deps,
        ref,
        {
          ...(flags.vnfc !== undefined ? { vnfc: flags.vnfc } : {}),
          ...(flags.vdu !== undefined ? { vdu: flags.vdu } : {}),
          ...(flags.container !== undefined ? { container: flags.container } : {}),
          ...(flags.follow ? { follow: true } : {}),
          ...(flags.since !== undefined ? { sinceSeconds: flags.since } : {}),
          ...(flags.tail !== undefined ? { tailLines: flags.tail } : {}),
          onPods: (n: number) => (pods = n),
        },
        (source, line, bytes) => {
          const prefix = pods > 1 ? `[${source}] ` : '';
          if (tty) out.write(`${terminalSafe(prefix + line, { oneLine: true })}\n`);
          // Piped, the container's bytes as it wrote them (kubectl logs), even those that are not UTF-8.
          else out.write(bytes ? Buffer.concat([Buffer.from(prefix), bytes, NEWLINE]) : `${prefix}${line}\n`);
        },
        controller.signal,
      );
      if (controller.signal.aborted) throw new CancelledError(flags.follow ? 'stopped following the logs' : 'interrupted');
    } finally {
      process.removeListener('SIGINT', onSigint);
      close();
    }
  });
}
