import { join } from 'node:path';
import { Command } from 'commander';
import { UsageError } from '../../errors.js';
import type { Context } from '../context.js';
import { withExamples } from '../help.js';
import { addOutputOptions, printResource, type OutputOptions } from '../output/printer.js';

interface Flags extends OutputOptions {
  listen: string;
  vimConfig?: string;
  kubeconfig?: string;
}

/** Parses HOST:PORT; the sandbox only ever listens on loopback. */
export function parseListen(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  if (!m || !host || port > 65535) {
    throw new UsageError(`--listen "${value}" is not HOST:PORT`, { hint: 'e.g. --listen 127.0.0.1:16443 (port 0 picks a free one)' });
  }
  if (!/^(127\.\d+\.\d+\.\d+|localhost|::1)$/.test(host)) {
    throw new UsageError(`--listen ${host}: the sandbox serves on loopback only`, { hint: 'use 127.0.0.1 or ::1' });
  }
  return { host, port };
}

export function sandboxCommand(ctx: Context): Command {
  const cmd = new Command('sandbox')
    .description('Run a local Kubernetes API emulator (HTTPS, bearer token) to try vnfm without a cluster; stops on Ctrl-C')
    .addHelpText(
      'after',
      `
The sandbox's objects live in memory and are gone when it stops; its CA and
token are kept in $VNFM_HOME/sandbox so registered VIMs keep working after a
restart. Remove that directory to give it a new identity.`,
    )
    .option('--listen <host:port>', 'loopback address to serve on', '127.0.0.1:16443')
    .option('--vim-config <file>', 'where to write a vim-config.yaml for it (default: $VNFM_HOME/sandbox/vim-config.yaml)')
    .option('--kubeconfig <file>', 'where to write a kubeconfig for it (default: $VNFM_HOME/sandbox/kubeconfig)');
  addOutputOptions(cmd);
  withExamples(cmd, [
    // The paths hold with VNFM_HOME set or not (~/.vnfm by default), as written.
    ['start the sandbox and register it as a VIM', 'vnfm sandbox &\n  $ vnfm vim-register --config-file "${VNFM_HOME:-$HOME/.vnfm}/sandbox/vim-config.yaml" vim-sandbox'],
    ['use kubectl against it', 'kubectl --kubeconfig "${VNFM_HOME:-$HOME/.vnfm}/sandbox/kubeconfig" get namespaces'],
  ]);
  return cmd.action(async (flags: Flags) => {
    const { host, port } = parseListen(flags.listen);
    const { startSandbox, writeSandboxConfigs } = await import('../../sandbox/index.js');
    const stateDir = join(ctx.home, 'sandbox');
    const vimConfigPath = flags.vimConfig ?? join(stateDir, 'vim-config.yaml');
    const kubeconfigPath = flags.kubeconfig ?? join(stateDir, 'kubeconfig');
    const sandbox = await startSandbox({ host, port, stateDir }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') {
        throw new UsageError(`${flags.listen} is already in use`, { hint: 'pick another port with --listen 127.0.0.1:PORT (0 for any free port)' });
      }
      throw err;
    });
    // Listen for the stop signal before announcing the URL: whoever reads it may stop us at once.
    const stopped = new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    try {
      writeSandboxConfigs(sandbox, { vimConfigPath, kubeconfigPath });
      ctx.io.success(`Kubernetes API sandbox serving at ${sandbox.url}`);
      ctx.io.info(`vim-config: ${vimConfigPath}\nkubeconfig: ${kubeconfigPath}\nstop it with Ctrl-C`);
      await printResource(ctx.io, flags, { columns: [], empty: '', toData: () => ({ url: sandbox.url, vim_config: vimConfigPath, kubeconfig: kubeconfigPath }) }, null);
      await stopped;
    } finally {
      await sandbox.close();
    }
    ctx.io.info('sandbox stopped');
  });
}
