import { chmodSync, writeFileSync } from 'node:fs';
import { Command } from 'commander';
import type { Context } from '../../context.js';
import { UsageError } from '../../../errors.js';
import { withExamples } from '../../help.js';
import { lcmDeps } from './deps.js';

interface Flags {
  cluster?: string;
  outputFile?: string;
}

export function vnfKubeconfigCommand(ctx: Context): Command {
  const cmd = new Command('vnf-kubeconfig')
    .description("Print the kubeconfig of a workload cluster a VNF instance created with Cluster API (like clusterctl get kubeconfig)")
    .argument('<vnf>', 'instance id or name')
    .option('--cluster <name>', 'the Cluster, when the instance has several')
    .option('-o, --output-file <file>', 'write it to this file (mode 0600) instead of stdout');
  withExamples(cmd, [
    ['print it', 'vnfm vnf-kubeconfig workload-1'],
    ['use it with kubectl', 'vnfm vnf-kubeconfig workload-1 -o workload-1.kubeconfig && kubectl --kubeconfig workload-1.kubeconfig get nodes'],
  ]);
  return cmd.action(async (ref: string, flags: Flags) => {
    const { getWorkloadKubeconfig } = await import('../../../lcm/index.js');
    const { deps, close } = await lcmDeps(ctx);
    try {
      const found = await getWorkloadKubeconfig(deps, ref, flags.cluster === undefined ? {} : { cluster: flags.cluster });
      if (flags.outputFile === undefined) {
        ctx.io.out(found.kubeconfig);
        return;
      }
      try {
        writeFileSync(flags.outputFile, found.kubeconfig, { mode: 0o600 });
        chmodSync(flags.outputFile, 0o600);
      } catch (err) {
        throw new UsageError(`cannot write ${flags.outputFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { hint: 'choose a path in a directory you can write' });
      }
      ctx.io.success(`kubeconfig of Cluster ${found.namespace}/${found.cluster} written to ${flags.outputFile}`);
    } finally {
      close();
    }
  });
}
