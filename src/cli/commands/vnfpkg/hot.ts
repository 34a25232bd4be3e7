import { Command, Option } from 'commander';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';

interface Flags {
  flavour?: string;
  instantiationLevel?: string;
  generate?: boolean;
  output: 'yaml' | 'json';
}

export function vnfpkgHotCommand(ctx: Context): Command {
  const cmd = new Command('vnfpkg-hot')
    .description(
      "Print the Heat templates (HOT) a flavour's stack is made of, offline: the package's Base HOT, or, for a flavour the package has none for, the HOT vnfm makes from the VNFD as Tacker v1 does (servers, flavors, ports, networks, volumes, scaling groups and their <aspect>_scale_out/_scale_in policies)",
    )
    .argument('<package>', 'a .zip/.csar file or a package directory, else an onboarded package (id, vnfdId or name)')
    .option('--flavour <id>', 'the deployment flavour (may be left out when the VNFD has one)')
    .option('--instantiation-level <id>', "the level a generated HOT's scaling groups start at (default: the flavour's default level)")
    .option('--generate', 'make the HOT from the VNFD even when the package has a Base HOT for the flavour')
    .addOption(new Option('-o, --output <format>', 'yaml: the templates as files, each headed by its name; json: one object').choices(['yaml', 'json']).default('yaml'));
  withExamples(cmd, [
    ['what a package without a Base HOT will create', 'vnfm vnfpkg-hot my-vnf.zip --flavour simple'],
    ["an onboarded package's templates as JSON", 'vnfm vnfpkg-hot my-vnf --flavour simple -o json'],
    ['compare a Base HOT with what the VNFD says', 'vnfm vnfpkg-hot csar-samples/heat-vnf/package --generate'],
  ]);
  return cmd.action(async (ref: string, flags: Flags) => {
    const { packageHot, hotContent } = await import('../../../lcm/package-hot.js');
    const hot = await packageHot(async () => ({ home: ctx.home, store: await ctx.store() }), ref, ctx.cwd, {
      ...(flags.flavour !== undefined ? { flavourId: flags.flavour } : {}),
      ...(flags.instantiationLevel !== undefined ? { instantiationLevelId: flags.instantiationLevel } : {}),
      ...(flags.generate ? { generate: true } : {}),
    });
    const t = hot.templates;
    for (const note of hot.notes) ctx.io.info(`note: ${note}`, 'dim');
    if (flags.output === 'json') {
      const { template, files } = hotContent(t);
      const data = { vnfdId: hot.vnfdId, flavourId: hot.flavourId, generated: hot.generated, templatePath: t.templatePath, template, files, notes: hot.notes };
      ctx.io.out(JSON.stringify(data, null, 2));
      return;
    }
    const top = hot.generated ? `the HOT vnfm makes from flavour ${hot.flavourId} of VNFD ${hot.vnfdId}` : `${t.templatePath}, the Base HOT of flavour ${hot.flavourId}`;
    const docs = [`# ${top}\n${t.template}`, ...Object.entries(t.files).map(([name, text]) => `# ${hot.generated ? `${name}, nested` : (t.sources[name] ?? name)}\n${text}`)];
    // The package's own text: exact in a pipe, its control characters escaped on a terminal.
    ctx.io.outText(docs.map((d) => (d.endsWith('\n') ? d : `${d}\n`)).join('---\n'));
  });
}
