import { Command, Option } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addSelectorOptions, attributeSelector, VNF_INSTANCE_ATTRIBUTES, type SelectorFlags } from '../../output/attribute-selector.js';
import { addListOptions, addOutputOptions, printList, type ListOptions, type OutputOptions } from '../../output/printer.js';
import { vnfListView } from '../../output/vnf-view.js';
import { lcmDeps } from '../../lcm/deps.js';
import type { VnfInstance } from '../../../lcm/index.js';
import type { TableRead } from '../../../store/table-text.js';
import type { ListRead } from '../../../store/vnf-instance-repository.js';
// Imported statically: a start-up command's code stays in the main bundle, outside the domain's chunk (scripts/bundle.mjs).
import { readVnfs } from '../../../lcm/instances.js';

interface Flags extends OutputOptions, ListOptions, SelectorFlags {
  state?: VnfInstance['instantiationState'];
  vim?: string;
  package?: string;
  name?: string;
}

export function vnfListCommand(ctx: Context): Command {
  const cmd = new Command('vnf-list')
    .description('List VNF instances, oldest first, with the names of their VIMs and packages')
    .addOption(new Option('--state <state>', 'only those in this state').choices(['INSTANTIATED', 'NOT_INSTANTIATED']))
    .option('--vim <vim>', 'only those on this VIM (name or id)')
    .option('--package <package>', 'only those of this package (id, vnfdId or name)')
    .option('--name <name>', 'only those of this name (* and ? match any characters)');
  addOutputOptions(cmd);
  addListOptions(cmd);
  addSelectorOptions(cmd, VNF_INSTANCE_ATTRIBUTES);
  withExamples(cmd, [
    ['the ids of instantiated VNFs', 'vnfm vnf-list --state INSTANTIATED -q'],
    ['id and name of those on one VIM, no header', 'vnfm vnf-list --vim edge-1 -o value -c id -c name'],
    ['the newest three, with all columns', 'vnfm vnf-list --sort createdAt:desc --limit 3 -o wide'],
    ["Tacker's filter form", 'vnfm vnf-list --filter "(eq,instantiationState,INSTANTIATED);(cont,vnfInstanceName,web)"'],
    ['every attribute of each, as vnf-show prints it', 'vnfm vnf-list -o json --all-fields'],
    ['the default attributes and the state of each', 'vnfm vnf-list -o json --fields instantiatedVnfInfo/vnfState --exclude-default'],
  ]);
  return cmd.action(async (flags: Flags) => {
    const attributes = attributeSelector(flags, VNF_INSTANCE_ATTRIBUTES, flags.quiet ? 'name' : flags.output);
    const { deps } = await lcmDeps(ctx);
    const filter = {
      ...(flags.state ? { state: flags.state } : {}),
      ...(flags.vim ? { vim: flags.vim } : {}),
      ...(flags.package ? { package: flags.package } : {}),
      ...(flags.name ? { name: flags.name } : {}),
    };
    const book = { vims: await deps.store.vims.names(), packages: await deps.store.packages.names() };
    const narrowed = Boolean(flags.state || flags.vim || flags.package || flags.name);
    const resolved = async () => {
      // Resolves --vim and --package (an unknown package fails here), as a read does.
      await readVnfs(deps, filter);
      const { vim, package: pkg, ...rest } = filter;
      return {
        ...rest,
        ...(vim ? { vimId: (await deps.store.vims.find(vim))?.id ?? vim } : {}),
        ...(pkg ? { vnfPkgId: (await deps.store.packages.get(pkg)).id } : {}),
      };
    };
    const source = {
      read: async function* (how: ListRead) {
        yield* await readVnfs(deps, filter, how);
      },
      table: async (how: TableRead) => deps.store.instances.tableText(await resolved(), how),
      json: async (how: { limit?: number }) => deps.store.instances.jsonText(await resolved(), how),
    };
    await printList(ctx.io, { ...flags, narrowed, attributes }, vnfListView(book), source);
  });
}
