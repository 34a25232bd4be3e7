import { Command } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printList, type OutputOptions } from '../../output/printer.js';

interface Sample {
  name: string;
  packages: string[];
  requests: string[];
}

/** The samples vnfm carries (csar-samples/<name>/), from the tree or from inside the single executable. */
export function listSamples(files: string[]): Sample[] {
  const byName = new Map<string, Sample>();
  for (const f of files) {
    const [, name, part, rest] = /^csar-samples\/([^/]+)\/([^/]+)(?:\/(.*))?$/.exec(f) ?? [];
    if (!name || !part) continue;
    const s = byName.get(name) ?? { name, packages: [], requests: [] };
    byName.set(name, s);
    if (rest === 'TOSCA-Metadata/TOSCA.meta') s.packages.push(part);
    if (part === 'requests' && rest) s.requests.push(rest);
  }
  for (const s of byName.values()) s.packages.sort();
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export function sampleListCommand(ctx: Context): Command {
  const cmd = new Command('sample-list').description('List the sample packages vnfm ships (they work without network access)');
  addOutputOptions(cmd);
  withExamples(cmd, [['see which samples there are', 'vnfm sample-list']]);
  return cmd.action(async (flags: OutputOptions) => {
    const { listShippedFiles } = await import('../../../assets/index.js');
    await printList(
      ctx.io,
      flags,
      {
        empty: 'No samples shipped.',
        columns: [
          { header: 'NAME', key: 'name', cell: (s: Sample) => s.name },
          { header: 'PACKAGES', key: 'packages', cell: (s: Sample) => s.packages.join(', ') },
          { header: 'REQUESTS', key: 'requests', cell: (s: Sample) => s.requests.join(', ') },
        ],
        toData: (s: Sample) => ({ ...s }),
      },
      listSamples(listShippedFiles('csar-samples')),
    );
  });
}
