import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isSea } from 'node:sea';
import { Command } from 'commander';
import { UsageError } from '../../errors.js';
import type { Context } from '../context.js';
import { withExamples } from '../help.js';
import { addOutputOptions, printResource, type OutputOptions } from '../output/printer.js';

interface Flags extends OutputOptions {
  listen: string;
  vimConfig?: string;
  kubeconfig?: string;
  detach?: boolean;
}

/** What a started sandbox announces (and a detached one hands its parent). */
interface Started {
  url: string;
  vim_config: string;
  kubeconfig: string;
  pid?: number;
  log?: string;
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
    .option('--kubeconfig <file>', 'where to write a kubeconfig for it (default: $VNFM_HOME/sandbox/kubeconfig)')
    .option('--detach', 'run in the background: return once it serves and its files are written, printing its pid (stop it with kill PID)');
  addOutputOptions(cmd);
  withExamples(cmd, [
    // The paths hold with VNFM_HOME set or not (~/.vnfm by default), as written.
    ['start the sandbox and register it as a VIM', 'vnfm sandbox &\n  $ vnfm vim-register --config-file "${VNFM_HOME:-$HOME/.vnfm}/sandbox/vim-config.yaml" vim-sandbox'],
    ['use kubectl against it', 'kubectl --kubeconfig "${VNFM_HOME:-$HOME/.vnfm}/sandbox/kubeconfig" get namespaces'],
    ['in a script: start it in the background, use it, stop it', 'pid=$(vnfm sandbox --detach -o jsonpath=\'{.pid}\')\n  $ ...\n  $ kill "$pid"'],
  ]);
  return cmd.action(async (flags: Flags) => {
    const { host, port } = parseListen(flags.listen);
    if (flags.detach) {
      const started = await startDetached(join(ctx.home, 'sandbox', 'sandbox.log'));
      ctx.io.success(`Kubernetes API sandbox serving at ${started.url} (pid ${started.pid})`);
      ctx.io.info(`vim-config: ${started.vim_config}\nkubeconfig: ${started.kubeconfig}\nlog: ${started.log}\nstop it with kill ${started.pid}`);
      await printResource(ctx.io, flags, { columns: [], empty: '', toData: () => ({ ...started }) }, null);
      return;
    }
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
      // Started by --detach: tell the parent, which returns; this process goes on alone.
      if (process.send) {
        const started: Started = { url: sandbox.url, vim_config: vimConfigPath, kubeconfig: kubeconfigPath, pid: process.pid };
        process.send(started, () => process.disconnect());
      }
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

/**
 * The same command again, without --detach, in a session of its own with its
 * output in `log`: resolves with what it announces once it serves and its
 * files are written; rejects with its log's tail if it ends before that.
 */
async function startDetached(log: string): Promise<Started> {
  // bin/vnfm runs as `node bin/vnfm ...`; the single executable sees itself twice at the front of argv.
  const args = (isSea() ? process.argv.slice(2) : process.argv.slice(1)).filter((a) => a !== '--detach');
  mkdirSync(dirname(log), { recursive: true, mode: 0o700 });
  const out = openSync(log, 'w', 0o600);
  try {
    const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', out, out, 'ipc'] });
    const started = await new Promise<Started>((resolve, reject) => {
      child.once('message', (m) => resolve(m as Started));
      child.once('error', reject);
      child.once('exit', (code, signal) => {
        const tail = readFileSync(log, 'utf8').trim().split('\n').slice(-5).join('\n');
        reject(new UsageError(`the sandbox ended before it served (${signal ?? `exit code ${code}`}): ${tail}`, { hint: `its log is ${log}` }));
      });
    });
    child.removeAllListeners('exit');
    child.unref();
    child.channel?.unref();
    return { ...started, log };
  } finally {
    closeSync(out);
  }
}
