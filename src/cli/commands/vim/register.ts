import { Command } from 'commander';
import { UsageError } from '../../../errors.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printResource, type OutputOptions } from '../../output/printer.js';
import { vimView } from '../../output/vim-view.js';
import { vimDeps } from '../../vim-deps.js';

interface Flags extends OutputOptions {
  configFile?: string;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  osCloud?: string;
  description?: string;
  isDefault?: boolean;
  check: boolean;
}

export function vimRegisterCommand(ctx: Context): Command {
  const cmd = new Command('vim-register')
    .description('Register a VIM (a Kubernetes cluster or an OpenStack project) after checking it answers with the given credentials')
    .argument('<name>', 'a name for the VIM, unique in this store')
    .option('--config-file <file>', "Tacker's vim-config.yaml (- reads it from the standard input)")
    .option('--kubeconfig <file>', 'read the cluster, user and namespace from a kubeconfig')
    .option('--context <name>', 'kubeconfig context (default: its current-context)')
    .option('--namespace <ns>', 'default namespace, overriding the kubeconfig context')
    .option('--os-cloud <cloud>', 'read an entry of clouds.yaml (OS_CLIENT_CONFIG_FILE, ./, ~/.config/openstack/, /etc/openstack/)')
    .option('--description <text>', 'a description')
    .option('--is-default', 'make this the default VIM (the first VIM always is)')
    .option('--no-check', 'store the VIM without contacting it');
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['register a Kubernetes cluster from a Tacker vim-config.yaml', 'vnfm vim-register --config-file k8s-vim.yaml vim-k8s'],
    ['register the cluster of a kubeconfig context', 'vnfm vim-register --kubeconfig ~/.kube/config --context prod vim-prod'],
    ['register an OpenStack project from clouds.yaml', 'vnfm vim-register --os-cloud mycloud --is-default vim-os'],
  ]);
  return cmd.action(async (name: string, flags: Flags) => {
    const sources = [flags.configFile, flags.kubeconfig, flags.osCloud].filter(Boolean);
    if (sources.length !== 1) {
      throw new UsageError('give exactly one of --config-file, --kubeconfig and --os-cloud', {
        hint: 'vnfm vim-register --config-file vim-config.yaml NAME',
      });
    }
    if ((flags.context || flags.namespace) && !flags.kubeconfig) {
      throw new UsageError('--context and --namespace go with --kubeconfig');
    }
    const { registerVim } = await import('../../../vim/register.js');
    const vim = await registerVim(await vimDeps(ctx, { writesSecrets: true }), {
      name,
      description: flags.description,
      isDefault: flags.isDefault,
      check: flags.check,
      source: flags.configFile
        ? { kind: 'vim-config', path: flags.configFile }
        : flags.kubeconfig
          ? { kind: 'kubeconfig', path: flags.kubeconfig, context: flags.context, namespace: flags.namespace }
          : { kind: 'clouds-yaml', cloud: flags.osCloud!, env: ctx.env, cwd: ctx.cwd, home: ctx.env['HOME'] ?? '' },
    });
    ctx.io.success(`vim "${vim.name}" registered${vim.isDefault ? ' (default)' : ''}`);
    await printResource(ctx.io, flags, vimView, vim);
  });
}
