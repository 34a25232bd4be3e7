import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printResource, type OutputOptions } from '../../output/printer.js';
import { liveView, renderLive } from '../../output/live-view.js';
import { lcmDeps } from '../../lcm/deps.js';

export function vnfDescribeCommand(ctx: Context): Command {
  const cmd = new Command('vnf-describe')
    .description(
      'Show what a VNF instance is at its VIM now: its objects (or Heat resources) as a tree with readiness, the events of those not ready, and drift from what vnfm recorded',
    )
    .argument('<vnf>', 'instance id or name');
  addOutputOptions(cmd);
  cmd.addHelpText(
    'after',
    `
Kubernetes (and Helm) instances: every object the instance records, read
live, with what it owns (Deployment > ReplicaSet > Pod, StatefulSet > Pod,
MachineDeployment > MachineSet > Machine; an object owned by another of the
instance's, as a Cluster API MachineDeployment by its Cluster, under it).
READY is judged as vnfm judges it while waiting for an operation (the
additionalParams.vnfm_readiness rules included); REASON says what it waits
for. The last events (core/v1 Events of the object) of each object not
ready follow the tree.

Drift from what vnfm recorded:
  deleted                      an object the instance records is gone
  scaled elsewhere: 3, recorded 2
                               a VDU workload's spec.replicas differs from the
                               replicas the instance records (kubectl scale,
                               an autoscaler)
  changed by M at T: fields    a field manager M other than vnfm (helm too for
                               a Helm release) owns fields outside metadata and
                               status: kubectl edit, patch or apply, another
                               tool, or a controller that writes spec. This is
                               read from metadata.managedFields, the API
                               server's record of who set which field, so it
                               needs nothing recorded at apply time and vnfm's
                               own scale and change of package never count
  VNFC X: pod P is gone        a recorded VNFC's pod or Machine no longer runs
  Pod/P: not recorded          a VDU's pod the instance does not record yet
vnfm vnf-sync records the VNFCs and scale levels the VIM has now.

OpenStack instances: the resources of the instance's Heat stack (nested
stacks of scaling groups under their group), each with its status and
status reason; drift: a resource FAILED, or a server VNFC the instance
records that the stack no longer has.

An instance whose last operation stopped short (FAILED_TEMP, or FAILED
after op-fail) is described too, that operation named first with its
error. After a first instantiate that stopped (a timeout: a pod that never
got ready), the instance is NOT_INSTANTIATED and records nothing at the
VIM: the objects shown are those the operation's journal records as
created (what op-rollback deletes), read live on the VIM its request named,
with the events of those not ready (-o json: "lastOperation").

Exit code 0 whatever the instance's state (as kubectl describe); 3 for an
unknown instance, 4 for one NOT_INSTANTIATED with no stopped instantiate,
6 when the VIM does not answer. For a script: -o json and the "ready" and
"drift" fields.`,
  );
  withExamples(cmd, [
    ['the live tree of an instance (or, after an instantiate timed out, of what it created)', 'vnfm vnf-describe web'],
    ['whether everything is ready, for a script', "vnfm vnf-describe web -o jsonpath='{.ready}'"],
    ['the drift, one line each', 'vnfm vnf-describe web -o jsonpath=\'{range .drift[*]}{@}{"\\n"}{end}\''],
  ]);
  return cmd.action(async (ref: string, flags: OutputOptions) => {
    const { describeVnf } = await import('../../../lcm/describe.js');
    const { deps, close } = await lcmDeps(ctx);
    try {
      const state = await describeVnf(deps, ref);
      const tree = (flags.output === 'table' || flags.output === 'wide') && !flags.quiet && !flags.column?.length;
      if (tree) ctx.io.streams.stdout.write(renderLive(ctx.io, state, { wide: flags.output === 'wide', headers: flags.headers !== false }));
      else await printResource(ctx.io, flags, liveView, state);
    } finally {
      close();
    }
  });
}
