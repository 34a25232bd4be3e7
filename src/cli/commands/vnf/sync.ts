import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printResource, type OutputOptions, type View } from '../../output/printer.js';
import { lcmDeps } from '../../lcm/deps.js';
import { terminalSafe } from '../../terminal-text.js';
import type { SyncResult } from '../../../lcm/sync.js';

interface Flags extends OutputOptions {
  dryRun?: boolean;
}

const syncView: View<SyncResult> = {
  empty: '',
  name: (r) => r.vnfInstance.id,
  columns: [],
  toData: (r) => ({
    vnfInstanceId: r.vnfInstance.id,
    written: r.written,
    inSync: r.changes.length === 0,
    changes: r.changes,
    ...(r.vnfInstance.instantiatedVnfInfo ? { scaleStatus: r.vnfInstance.instantiatedVnfInfo.scaleStatus, vnfcInfo: r.vnfInstance.instantiatedVnfInfo.vnfcInfo } : {}),
  }),
};

export function vnfSyncCommand(ctx: Context): Command {
  const cmd = new Command('vnf-sync')
    .description("Record a VNF instance's VNFCs, replicas and scale levels as they are at its VIM now (Tacker's periodic sync of CNF instances), and say what changed")
    .argument('<vnf>', 'instance id or name')
    .option('--dry-run', 'show what would change, record nothing');
  addOutputOptions(cmd);
  cmd.addHelpText(
    'after',
    `
What it reads and records: the VNFCs of each VDU (its workload's pods, or
a Cluster API VDU's Machines), and each VDU workload's spec.replicas, from
which the scale level of the VDU's aspect is counted with the VNFD's
deltas (as Tacker's sync does, from the pods). Nothing is recorded when
the replicas match no scale level of the aspect or leave the VDU's
vdu_profile range: the error names the counts the levels give.

It is refused (exit 4) while an operation runs on the instance or waits in
FAILED_TEMP, and when the instance changed while the VIM was read; the
change is written in one transaction. Exit 0 when the instance is in sync
or was brought in sync (or would be, with --dry-run).`,
  );
  withExamples(cmd, [
    ['record what runs now', 'vnfm vnf-sync web'],
    ['only show what would change', 'vnfm vnf-sync web --dry-run'],
  ]);
  return cmd.action(async (ref: string, flags: Flags) => {
    const { syncVnf } = await import('../../../lcm/sync.js');
    const { deps, close } = await lcmDeps(ctx);
    try {
      const result = await syncVnf(deps, ref, { ...(flags.dryRun ? { dryRun: true } : {}) });
      const table = (flags.output === 'table' || flags.output === 'wide') && !flags.quiet && !flags.column?.length;
      if (!table) {
        await printResource(ctx.io, flags, syncView, result);
        return;
      }
      const name = result.vnfInstance.vnfInstanceName ?? result.vnfInstance.id;
      // Lines for people, as a table is: safe for a terminal whatever reads them (terminal-text.ts).
      if (result.changes.length === 0) {
        ctx.io.out(terminalSafe(`vnf instance ${name}: in sync`));
        return;
      }
      for (const c of result.changes) ctx.io.out(terminalSafe(c.message));
      if (result.written) ctx.io.success(`vnf instance ${name}: ${result.changes.length} change(s) recorded`);
      else ctx.io.info(`vnf instance ${name}: ${result.changes.length} change(s) found, nothing recorded (--dry-run)`);
    } finally {
      close();
    }
  });
}
