import { chmodSync, existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { Command } from 'commander';
import type { Context } from '../../context.js';
import { ConflictError, UsageError } from '../../../errors.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, outputFileOf, printResource, type OutputFormat, type OutputOptions } from '../../output/printer.js';
import { lcmDeps } from '../../lcm/deps.js';

interface Flags extends Omit<OutputOptions, 'output'> {
  cluster?: string;
  output?: string;
  file?: string;
  force?: boolean;
}

/** Writes the file 0600 from its first byte, beside the target first, so a failure leaves no half-written file. */
function writePrivate(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' });
    chmodSync(tmp, 0o600);
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new UsageError(`cannot write ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { hint: 'choose a path in a directory you can write' });
  }
}

export function vnfKubeconfigCommand(ctx: Context): Command {
  const cmd = new Command('vnf-kubeconfig')
    .description('Print the kubeconfig of a workload cluster a VNF instance created with Cluster API (like clusterctl get kubeconfig)')
    .argument('<vnf>', 'instance id or name')
    .option('--cluster <name>', 'the Cluster, when the instance has several')
    .option('-f, --file <file>', 'write it to this file (mode 0600) instead of stdout')
    .option('--force', 'overwrite the file if it exists');
  addOutputOptions(cmd, { legacyFile: true });
  withExamples(cmd, [
    ['print it', 'vnfm vnf-kubeconfig workload-1'],
    ['use it with kubectl', 'vnfm vnf-kubeconfig workload-1 -f workload-1.kubeconfig && kubectl --kubeconfig workload-1.kubeconfig get nodes'],
    ["the API server's address", "vnfm vnf-kubeconfig workload-1 -o jsonpath='{.clusters[0].cluster.server}'"],
  ]);
  return cmd.action(async (ref: string, flags: Flags) => {
    const file = outputFileOf(ctx.io, flags);
    if (file !== undefined && !flags.force && existsSync(file)) {
      throw new ConflictError(`${file} already exists`, { hint: 'choose another --file, or pass --force to overwrite it' });
    }
    const { getWorkloadKubeconfig } = await import('../../../lcm/index.js');
    const { deps, close } = await lcmDeps(ctx);
    try {
      const found = await getWorkloadKubeconfig(deps, ref, flags.cluster === undefined ? {} : { cluster: flags.cluster });
      if (file !== undefined) {
        writePrivate(file, found.kubeconfig);
        ctx.io.success(`kubeconfig of Cluster ${found.namespace}/${found.cluster} written to ${file}`);
        return;
      }
      const format = flags.quiet ? 'name' : (flags.output ?? 'yaml');
      if (format === 'yaml' || format === 'table' || format === 'wide') {
        ctx.io.out(found.kubeconfig);
        return;
      }
      const { default: yaml } = await import('js-yaml');
      const data = yaml.load(found.kubeconfig) as Record<string, unknown>;
      await printResource(
        ctx.io,
        { ...flags, output: format as OutputFormat },
        {
          empty: '',
          columns: [],
          name: () => `${found.namespace}/${found.cluster}`,
          toData: (d: Record<string, unknown>) => d,
        },
        data,
      );
    } finally {
      close();
    }
  });
}
