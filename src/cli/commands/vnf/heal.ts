import { Command } from 'commander';
import { UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addHeatEnvironmentOption, addRunOptions, readAdditionalParamFile, readRequestFile, runLcmCommand, type RunFlags } from '../../lcm/run.js';

interface Flags extends RunFlags {
  vnfcInstance?: string[];
  cause?: string;
  additionalParamFile?: string;
  requestFile?: string;
}

/** The fields of a HealVnfRequest that --additional-param-file may set. */
const HEAL_FIELDS = ['additionalParams', 'vnfcInstanceId', 'cause', 'vimConnectionInfo'] as const;

export function vnfHealCommand(ctx: Context): Command {
  const cmd = new Command('vnf-heal')
    .description("Heal a VNF instance: replace the named VNFCs' pods (every VNFC when none is named) and wait for their replacements")
    // Optional to commander, so that a VNF swallowed by --vnfc-instance gets a hint rather than "missing argument".
    .argument('[vnf]', 'instance id or name (required)')
    .usage('[options] <vnf>')
    .option(
      '--vnfc-instance <id...>',
      'VNFC ids from vnf-show: the VNFC column (<vduId>-<pod>, Tacker v2) or the POD column (Tacker v1); several after one flag, as Tacker takes them, or the flag repeated',
    )
    .option('--cause <text>', 'why, recorded on the occurrence')
    .option('--additional-param-file <file>', 'a JSON or YAML object merged into the request, as tackerclient reads it: {"additionalParams": {...}}')
    .option('--request-file <file>', 'a HealVnfRequest instead (the flags override its fields)');
  addRunOptions(cmd);
  addHeatEnvironmentOption(cmd);
  cmd.addHelpText(
    'after',
    `
--vnfc-instance takes every word after it up to the next flag: name the VNF
before it, or end the list with "--" (vnfm vnf-heal --vnfc-instance A B -- web).`,
  );
  withExamples(cmd, [
    ['replace one pod', 'vnfm vnf-heal web --vnfc-instance VDU1-vdu1-5d9c7b6f4-abcde --cause "not answering"'],
    ['replace two pods, named as Tacker takes them', 'vnfm vnf-heal web --vnfc-instance VDU1-vdu1-5d9c7b6f4-abcde VDU2-vdu2-7f8d9c6b5-fghij'],
    ['replace every pod', 'vnfm vnf-heal web'],
    ['with additional parameters for the heal hooks', 'vnfm vnf-heal web --additional-param-file heal-params.json'],
  ]);
  return cmd.action(async (ref: string | undefined, flags: Flags) => {
    if (ref === undefined) {
      throw new UsageError('name the VNF instance to heal', {
        hint: flags.vnfcInstance?.length
          ? '--vnfc-instance took every word after it: give the VNF first (vnfm vnf-heal VNF --vnfc-instance A B) or end the list with "--" (vnfm vnf-heal --vnfc-instance A B -- VNF)'
          : 'vnfm vnf-heal VNF [--vnfc-instance ID...]',
      });
    }
    const fromFile = flags.requestFile ? ((await readRequestFile(flags.requestFile)) as Record<string, unknown>) : {};
    const extra = flags.additionalParamFile ? await readAdditionalParamFile(flags.additionalParamFile, HEAL_FIELDS) : {};
    const request = {
      ...fromFile,
      ...extra,
      ...(flags.vnfcInstance?.length ? { vnfcInstanceId: flags.vnfcInstance } : {}),
      ...(flags.cause ? { cause: flags.cause } : {}),
    };
    const { healVnf } = await import('../../../lcm/index.js');
    await runLcmCommand(ctx, flags, (deps, opts) => healVnf(deps, ref, request, opts), flags.requestFile ?? flags.additionalParamFile ?? 'vnf-heal', `vnf instance ${ref}`);
  });
}
