import { Command, Option } from 'commander';
import { UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addHeatEnvironmentOption, addRunOptions, readAdditionalParamFile, readRequestFile, runLcmCommand, type RunFlags } from '../../lcm/run.js';

interface Flags extends RunFlags {
  type?: 'SCALE_OUT' | 'SCALE_IN';
  aspectId?: string;
  numberOfSteps?: string;
  additionalParamFile?: string;
  requestFile?: string;
}

/** The fields of a ScaleVnfRequest that --additional-param-file may set. */
const SCALE_FIELDS = ['additionalParams', 'type', 'aspectId', 'numberOfSteps', 'vimConnectionInfo'] as const;

export function vnfScaleCommand(ctx: Context): Command {
  const cmd = new Command('vnf-scale')
    .description("Scale a VNF instance's aspect out or in by steps, within max_scale_level and the VDUs' vdu_profile")
    .argument('<vnf>', 'instance id or name')
    .addOption(new Option('--type <type>', 'the direction').choices(['SCALE_OUT', 'SCALE_IN']))
    .option('--aspect-id <aspect>', 'the scaling aspect')
    .option('--number-of-steps <n>', 'how many steps (default 1)')
    .option('--additional-param-file <file>', 'a JSON or YAML object merged into the request, as tackerclient reads it: {"additionalParams": {...}}')
    .option('--request-file <file>', 'a ScaleVnfRequest instead (the flags override its fields)');
  addRunOptions(cmd);
  addHeatEnvironmentOption(cmd);
  withExamples(cmd, [
    ['one more front-end replica', 'vnfm vnf-scale web --type SCALE_OUT --aspect-id vdu1_aspect'],
    ['back in by one step', 'vnfm vnf-scale web --type SCALE_IN --aspect-id vdu1_aspect --number-of-steps 1'],
    ['with additional parameters for the scale hooks', 'vnfm vnf-scale web --type SCALE_OUT --aspect-id vdu1_aspect --additional-param-file scale-params.json'],
  ]);
  return cmd.action(async (ref: string, flags: Flags) => {
    const fromFile = flags.requestFile ? ((await readRequestFile(flags.requestFile)) as Record<string, unknown>) : {};
    const steps = flags.numberOfSteps === undefined ? undefined : Number(flags.numberOfSteps);
    if (steps !== undefined && !(Number.isInteger(steps) && steps > 0)) {
      throw new UsageError(`--number-of-steps "${flags.numberOfSteps}" is not a positive whole number`);
    }
    const extra = flags.additionalParamFile ? await readAdditionalParamFile(flags.additionalParamFile, SCALE_FIELDS) : {};
    const request = {
      ...fromFile,
      ...extra,
      ...(flags.type ? { type: flags.type } : {}),
      ...(flags.aspectId ? { aspectId: flags.aspectId } : {}),
      ...(steps !== undefined ? { numberOfSteps: steps } : {}),
    };
    if (!request['type'] || !request['aspectId']) {
      throw new UsageError('give --type and --aspect-id (or a --request-file with type and aspectId)', {
        hint: 'vnfm vnf-scale VNF --type SCALE_OUT --aspect-id ASPECT; the aspects are in vnfm vnfpkg-show PACKAGE',
      });
    }
    const { scaleVnf } = await import('../../../lcm/index.js');
    await runLcmCommand(ctx, flags, (deps, opts) => scaleVnf(deps, ref, request, opts), flags.requestFile ?? flags.additionalParamFile ?? 'vnf-scale', `vnf instance ${ref}`);
  });
}
