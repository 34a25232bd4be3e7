import { Command, Option } from 'commander';
import { UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { confirm } from '../../prompt.js';
import { addRunOptions, readRequestFile, runLcmCommand, type RunFlags } from '../../lcm/run.js';

interface Flags extends RunFlags {
  terminationType?: 'GRACEFUL' | 'FORCEFUL';
  gracefulTerminationTimeout?: string;
  requestFile?: string;
  delete?: boolean;
  /** Tacker's `openstack vnflcm terminate --D`. */
  D?: boolean;
  yes?: boolean;
}

export function vnfTerminateCommand(ctx: Context): Command {
  const cmd = new Command('vnf-terminate')
    .description('Terminate a VNF instance: delete everything it created (in reverse order) and wait until it is gone')
    .argument('<vnf>', 'instance id or name')
    .addOption(new Option('--termination-type <type>', 'GRACEFUL lets pods stop (default), FORCEFUL does not wait').choices(['GRACEFUL', 'FORCEFUL']))
    .option('--graceful-termination-timeout <seconds>', "the pods' grace period for GRACEFUL")
    .option('--request-file <file>', 'a TerminateVnfRequest instead (the flags override its fields)')
    .option('--delete', "then delete the instance, once terminated; a failed terminate deletes nothing. Tacker's spelling, --D, works too")
    .addOption(new Option('--D').hideHelp())
    .option('-y, --yes', 'do not ask for confirmation');
  addRunOptions(cmd);
  withExamples(cmd, [
    ['terminate, giving pods 30 s', 'vnfm vnf-terminate web --graceful-termination-timeout 30'],
    ['from a script', 'vnfm vnf-terminate web --termination-type FORCEFUL --yes -o json'],
    ['terminate, then delete the instance', 'vnfm vnf-terminate web --delete --yes'],
    ["from a script, running the package's terminate hook scripts (--yes alone does not allow them)", 'vnfm vnf-terminate web --yes --allow-package-scripts'],
  ]);
  return cmd.action(async (ref: string, flags: Flags) => {
    const deleteAfter = Boolean(flags.delete || flags.D);
    const fromFile = flags.requestFile ? ((await readRequestFile(flags.requestFile)) as Record<string, unknown>) : {};
    const timeout = flags.gracefulTerminationTimeout === undefined ? undefined : Number(flags.gracefulTerminationTimeout);
    if (timeout !== undefined && !(Number.isInteger(timeout) && timeout >= 0)) {
      throw new UsageError(`--graceful-termination-timeout "${flags.gracefulTerminationTimeout}" is not a whole number of seconds`);
    }
    const request = {
      ...fromFile,
      ...(flags.terminationType ? { terminationType: flags.terminationType } : {}),
      ...(timeout !== undefined ? { gracefulTerminationTimeout: timeout } : {}),
    };
    const { getVnf } = await import('../../../lcm/index.js');
    const { lcmDeps } = await import('../../lcm/deps.js');
    const vnf = await getVnf((await lcmDeps(ctx)).deps, ref);
    if (!flags.yes) {
      if (!ctx.io.canPrompt) {
        throw new UsageError(`refusing to terminate vnf instance ${vnf.vnfInstanceName ?? vnf.id} without confirmation: there is no terminal to ask on`, {
          hint: 'pass --yes to terminate without asking',
        });
      }
      const then = deleteAfter ? ', then the instance itself' : '';
      if (!(await confirm(ctx.io, `Terminate vnf instance ${vnf.vnfInstanceName ?? vnf.id} and delete all its resources${then}?`))) {
        ctx.io.info('nothing terminated');
        return;
      }
    }
    const { terminateVnf } = await import('../../../lcm/index.js');
    // A terminate that fails throws here (its occurrence left FAILED_TEMP), so --delete never removes an instance with resources left.
    const result = await runLcmCommand(
      ctx,
      flags,
      (deps, opts) => terminateVnf(deps, vnf.id, request, opts),
      flags.requestFile ?? 'vnf-terminate',
      `vnf instance ${vnf.vnfInstanceName ?? vnf.id}`,
    );
    if (deleteAfter && result.opOcc.operationState === 'COMPLETED') {
      const { deleteVnfs } = await import('../../../lcm/index.js');
      const { deps } = await lcmDeps(ctx);
      for (const deleted of await deleteVnfs(deps, [vnf])) ctx.io.success(`vnf instance ${deleted.id} deleted`);
    }
  });
}
