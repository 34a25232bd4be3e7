import { Command } from 'commander';
import { UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printResource, type OutputOptions } from '../../output/printer.js';
import { opView } from '../../output/op-view.js';
import { lcmDeps } from '../../lcm/deps.js';

interface Flags extends OutputOptions {
  force?: boolean;
  yes?: boolean;
}

export function opFailCommand(ctx: Context): Command {
  const cmd = new Command('op-fail')
    .description('Give up on a FAILED_TEMP operation: it becomes FAILED and the instance is free again, as it is now')
    .argument('<op>', 'occurrence id (or its first 8+ characters)')
    .option(
      '--force',
      'also give up on an occurrence still marked PROCESSING (or STARTING, ROLLING_BACK) whose vnfm is gone: FAILED, and its lock released. Refused while that vnfm runs on this host; asks on a terminal',
    )
    .option('-y, --yes', 'with --force: do not ask for confirmation');
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['accept a failed heal and move on', 'vnfm op-fail 3f2a9c1e'],
    ['release an instance whose vnfm died on another host (or in a container that is gone)', 'vnfm op-fail --force 3f2a9c1e'],
  ]);
  cmd.addHelpText(
    'after',
    `
A vnfm that died is noticed by the next command on the same host (its
occurrence becomes FAILED_TEMP, to retry or roll back). One that ran on
another host, or in another container, cannot be checked from here: its lock
stays until op-fail --force, once you have made sure that vnfm is gone.`,
  );
  return cmd.action(async (ref: string, flags: Flags) => {
    const { failOpOcc, failTarget } = await import('../../../lcm/index.js');
    const { deps } = await lcmDeps(ctx);
    const options = { force: flags.force === true };
    const target = await failTarget(deps, ref, options);
    if (target.lockedBy && !flags.yes) {
      if (!ctx.io.canPrompt) {
        throw new UsageError(`refusing to force occurrence ${target.opOcc.id} to FAILED without confirmation: there is no terminal to ask on (${target.lockedBy})`, {
          hint: `make sure that vnfm is gone, then pass --yes: vnfm op-fail --force --yes ${target.opOcc.id}`,
        });
      }
      const { confirm } = await import('../../prompt.js');
      const where = target.holder?.state === 'elsewhere' ? 'on another host (or container), which this host cannot check' : 'which this host cannot verify';
      ctx.io.info(`${target.lockedBy}, ${where}`);
      if (!(await confirm(ctx.io, 'Is that vnfm gone? Mark the occurrence FAILED and release the lock?'))) {
        ctx.io.info('nothing changed');
        return;
      }
    }
    const op = await failOpOcc(deps, target.opOcc.id, { ...options, ...(target.lock ? { confirmed: target.lock } : {}) });
    ctx.io.success(`${op.operation} occurrence ${op.id} FAILED${target.lockedBy ? `; vnf instance ${op.vnfInstanceId} released` : ''}`);
    await printResource(ctx.io, flags, opView(flags), op);
  });
}
