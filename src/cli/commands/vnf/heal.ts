import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addHeatEnvironmentOption, addRunOptions, readRequestFile, runLcmCommand, type RunFlags } from './run.js';

interface Flags extends RunFlags {
  vnfcInstance?: string[];
  cause?: string;
  requestFile?: string;
}

export function vnfHealCommand(ctx: Context): Command {
  const cmd = new Command('vnf-heal')
    .description("Heal a VNF instance: replace the named VNFCs' pods (every VNFC when none is named) and wait for their replacements")
    .argument('<vnf>', 'instance id or name')
    .option('--vnfc-instance <id>', 'a VNFC id from vnf-show, <vduId>-<pod> (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--cause <text>', 'why, recorded on the occurrence')
    .option('--request-file <file>', 'a HealVnfRequest instead (the flags override its fields)');
  addRunOptions(cmd);
  addHeatEnvironmentOption(cmd);
  withExamples(cmd, [
    ['replace one pod', 'vnfm vnf-heal web --vnfc-instance VDU1-vdu1-5d9c7b6f4-abcde --cause "not answering"'],
    ['replace every pod', 'vnfm vnf-heal web'],
  ]);
  return cmd.action(async (ref: string, flags: Flags) => {
    const fromFile = flags.requestFile ? ((await readRequestFile(flags.requestFile)) as Record<string, unknown>) : {};
    const request = {
      ...fromFile,
      ...(flags.vnfcInstance?.length ? { vnfcInstanceId: flags.vnfcInstance } : {}),
      ...(flags.cause ? { cause: flags.cause } : {}),
    };
    const { healVnf } = await import('../../../lcm/index.js');
    await runLcmCommand(ctx, flags, (deps, opts) => healVnf(deps, ref, request, opts), flags.requestFile ?? 'vnf-heal', `vnf instance ${ref}`);
  });
}
