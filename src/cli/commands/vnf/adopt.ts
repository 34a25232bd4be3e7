import { Command, Option } from 'commander';
import type { Adoption } from '../../../lcm/adopt.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { inForeground, parseDuration, readRequestFile } from '../../lcm/run.js';
import { lcmDeps } from '../../lcm/deps.js';
import { addOutputOptions, printList, type OutputOptions, type View } from '../../output/printer.js';

interface Flags extends OutputOptions {
  fromTacker: string;
  package?: string;
  vim?: string;
  dryRun?: boolean;
  timeout: string;
}

const where = (a: Adoption) => a.summary.namespace ?? a.summary.stack?.name ?? '';

const adoptionView: View<Adoption> = {
  empty: 'nothing adopted',
  name: (a) => a.vnfInstance.id,
  columns: [
    { header: 'VNF INSTANCE', key: 'id', cell: (a) => a.vnfInstance.id },
    { header: 'NAME', key: 'name', cell: (a) => a.vnfInstance.vnfInstanceName ?? '' },
    { header: 'VIM', key: 'vim', cell: (a) => a.vim },
    { header: 'WHERE', key: 'where', cell: where },
    { header: 'RESOURCES', key: 'resources', cell: (a) => String(a.summary.resources.length) },
    { header: 'VNFCS', key: 'vnfcs', cell: (a) => String(a.summary.vnfcs.length) },
    { header: 'STATE', key: 'state', cell: (a) => (a.opOcc ? `${a.vnfInstance.instantiationState} (ADOPT ${a.opOcc.operationState})` : 'would be adopted') },
    { header: 'OCCURRENCE', key: 'occurrence', cell: (a) => a.opOcc?.id ?? '', wide: true },
  ],
  toData: (a) => ({
    vnfInstanceId: a.vnfInstance.id,
    ...(a.vnfInstance.vnfInstanceName ? { vnfInstanceName: a.vnfInstance.vnfInstanceName } : {}),
    tacker: { api: a.tacker.api, source: a.tacker.source },
    vim: a.vim,
    ...(a.summary.namespace ? { namespace: a.summary.namespace } : {}),
    ...(a.summary.stack ? { stack: a.summary.stack } : {}),
    resources: a.summary.resources,
    vnfcs: a.summary.vnfcs,
    scaleStatus: a.summary.scaleStatus,
    instantiationState: a.vnfInstance.instantiationState,
    dryRun: a.opOcc === undefined,
    ...(a.opOcc ? { opOccId: a.opOcc.id, operationState: a.opOcc.operationState } : {}),
  }),
};

export function vnfAdoptCommand(ctx: Context): Command {
  const cmd = new Command('vnf-adopt')
    .description('Take over VNFs Tacker instantiated, as they run: record them as vnfm instances without redeploying anything')
    .requiredOption('--from-tacker <file>', "Tacker's description of the instance: openstack vnflcm show ID -f json (v1 or v2), or a list of them (GET /vnflcm/v2/vnf_instances)")
    .option('--package <package>', "the onboarded package (id, name or vnfdId); default: the one with the instance's vnfdId")
    .option('--vim <vim>', "the registered VIM (id or name); default: the one whose id or name is the instance's vimId")
    .option('--dry-run', 'check and show what would be adopted; record nothing, change nothing at the VIM')
    .addOption(new Option('--timeout <duration>', 'give up after this long: 300, 90s, 5m, 1h').default('10m'));
  addOutputOptions(cmd);
  cmd.addHelpText(
    'after',
    `
Each instance is checked before anything is recorded: its package, its VIM,
and what runs there. Kubernetes: every object of the definition files
Tacker recorded must exist in the namespace it recorded, with the kind,
name and container images the package defines, and each VDU must run the
replicas Tacker's scale level gives. OpenStack: the Heat stack Tacker
named (vnf-<id>, or v1's stack id) must be *_COMPLETE. Any difference
refuses the whole file (exit 4, each difference named); a package that is
not the instance's is refused with exit 2, an unknown VIM or package with
exit 3.

Then each instance is recorded under Tacker's id and name, INSTANTIATED,
with its VNFCs, scale levels and VIM, and an occurrence ADOPT (op-list):
Kubernetes objects and their pods get vnfm's instance label (a server-side
apply of that label alone: no spec changes, no restarts). vnf-scale,
vnf-heal, vnf-change-package and vnf-terminate then work as on any instance.
op-rollback of the ADOPT forgets the instance and leaves the VIM as it is.`,
  );
  withExamples(cmd, [
    ['see what would be taken over', 'vnfm vnf-adopt --from-tacker web.json --dry-run'],
    ['take it over', 'openstack vnflcm show 6f2e4c1a-… -f json > web.json && vnfm vnf-adopt --from-tacker web.json'],
    ['on a VIM registered under another name', 'vnfm vnf-adopt --from-tacker web.json --vim edge-1'],
  ]);
  return cmd.action(async (flags: Flags) => {
    parseDuration(flags.timeout);
    const doc = await readRequestFile(flags.fromTacker);
    const { adoptFromTacker } = await import('../../../lcm/adopt.js');
    const { deps, close } = await lcmDeps(ctx);
    try {
      await inForeground(ctx, flags, deps, async ({ signal, progress }) => {
        const adopted = await adoptFromTacker(deps, flags.fromTacker, doc, {
          signal,
          source: flags.fromTacker,
          ...(flags.package ? { package: flags.package } : {}),
          ...(flags.vim ? { vim: flags.vim } : {}),
          ...(flags.dryRun ? { dryRun: true } : {}),
          onEvent: (e) => progress.onEvent(e),
        });
        progress.stop();
        for (const a of adopted) {
          if (a.opOcc) ctx.io.success(`ADOPT of vnf instance ${a.vnfInstance.id} ${a.opOcc.operationState} (occurrence ${a.opOcc.id})`);
        }
        if (flags.dryRun) ctx.io.info(`${adopted.length} instance(s) would be adopted; nothing recorded (--dry-run)`);
        await printList(ctx.io, flags, adoptionView, adopted);
      });
    } finally {
      close();
    }
  });
}
