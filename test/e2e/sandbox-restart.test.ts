/**
 * `vnfm sandbox` as a long-running process: a VIM registered against it
 * keeps working after the sandbox stops and starts again, because its CA and
 * token are kept in $VNFM_HOME/sandbox. Objects are not kept.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, newHome, vnfm } from '../support/cli.js';

interface RunningSandbox {
  child: ChildProcess;
  url: string;
  vimConfig: string;
  stderr: () => string;
}

const running = new Set<ChildProcess>();

/** Starts `vnfm sandbox` and resolves with what it prints on stdout once it listens. */
function startSandboxProcess(home: string, listen: string): Promise<RunningSandbox> {
  const child = spawn(process.execPath, [BIN, 'sandbox', '--listen', listen, '-o', 'json'], {
    cwd: home.replace(/\/home$/, ''),
    env: { PATH: process.env['PATH'], HOME: home.replace(/\/home$/, ''), VNFM_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      try {
        const printed = JSON.parse(stdout) as { url: string; vim_config: string };
        resolve({ child, url: printed.url, vimConfig: printed.vim_config, stderr: () => stderr });
      } catch {
        // the JSON document is not complete yet
      }
    });
    child.on('error', reject);
    child.on('close', (code) => reject(new Error(`vnfm sandbox exited with ${code} before it listened:\n${stderr}`)));
  });
}

/** Sends SIGTERM to the sandbox's pid and resolves with its exit code. */
function stopSandboxProcess(sandbox: RunningSandbox): Promise<number | null> {
  const { child } = sandbox;
  return new Promise((resolve) => {
    child.once('close', (code) => {
      running.delete(child);
      resolve(code);
    });
    process.kill(child.pid!, 'SIGTERM');
  });
}

afterEach(() => {
  for (const child of running) if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGTERM');
  running.clear();
});

const portOf = (url: string): string => new URL(url).port;
const mode = (path: string): number => statSync(path).mode & 0o777;

describe('vnfm sandbox across restarts', () => {
  it('keeps its CA and token, so a VIM registered against it keeps working', async () => {
    const home = newHome();
    const state = join(home, 'sandbox');
    const first = await startSandboxProcess(home, '127.0.0.1:0');
    expect(first.vimConfig).toBe(join(state, 'vim-config.yaml'));
    const vimConfigBefore = readFileSync(first.vimConfig, 'utf8');
    const tokenBefore = readFileSync(join(state, 'token'), 'utf8');
    const caBefore = readFileSync(join(state, 'ca.crt'), 'utf8');

    const reg = await vnfm(['vim-register', '--config-file', first.vimConfig, 'v', '-o', 'json'], { home });
    expect(reg.stderr).not.toMatch(/error/);
    expect(reg.code).toBe(0);
    expect(JSON.parse(reg.stdout)).toMatchObject({ name: 'v', status: 'REACHABLE', auth_url: first.url });

    expect(await stopSandboxProcess(first)).toBe(0);
    expect(first.stderr()).toMatch(/sandbox stopped/);

    const second = await startSandboxProcess(home, `127.0.0.1:${portOf(first.url)}`);
    expect(second.url).toBe(first.url);
    expect(readFileSync(join(state, 'token'), 'utf8')).toBe(tokenBefore);
    expect(readFileSync(join(state, 'ca.crt'), 'utf8')).toBe(caBefore);
    // What vim-register stored is exactly what the restarted sandbox accepts.
    expect(readFileSync(second.vimConfig, 'utf8')).toBe(vimConfigBefore);

    const upd = await vnfm(['vim-update', 'v', '--config-file', second.vimConfig, '-o', 'json'], { home });
    expect(upd.stderr).not.toMatch(/error/);
    expect(upd.code).toBe(0);
    expect(JSON.parse(upd.stdout)).toMatchObject({ name: 'v', status: 'REACHABLE', auth_url: first.url });

    expect(mode(state)).toBe(0o700);
    for (const name of ['ca.key', 'apiserver.key', 'token', 'ca.crt', 'apiserver.crt', 'vim-config.yaml', 'kubeconfig']) {
      expect(mode(join(state, name)), name).toBe(0o600);
    }
    expect(await stopSandboxProcess(second)).toBe(0);
  });

  it('makes a new identity once its state is removed, which the old credentials no longer reach', async () => {
    const home = newHome();
    const state = join(home, 'sandbox');
    const first = await startSandboxProcess(home, '127.0.0.1:0');
    const oldConfig = join(home, 'old-vim-config.yaml');
    const oldText = readFileSync(first.vimConfig, 'utf8');
    expect((await vnfm(['vim-register', '--config-file', first.vimConfig, 'v'], { home })).code).toBe(0);
    expect(await stopSandboxProcess(first)).toBe(0);

    for (const name of ['ca.crt', 'ca.key', 'apiserver.crt', 'apiserver.key', 'token']) rmSync(join(state, name));
    const second = await startSandboxProcess(home, `127.0.0.1:${portOf(first.url)}`);
    expect(readFileSync(second.vimConfig, 'utf8')).not.toBe(oldText);

    writeFileSync(oldConfig, oldText);
    const stale = await vnfm(['vim-update', 'v', '--config-file', oldConfig], { home });
    expect(stale.code).toBe(6);
    const fresh = await vnfm(['vim-update', 'v', '--config-file', second.vimConfig, '-o', 'json'], { home });
    expect(fresh.code).toBe(0);
    expect(JSON.parse(fresh.stdout)).toMatchObject({ status: 'REACHABLE' });
    expect(await stopSandboxProcess(second)).toBe(0);
  });

  it('refuses to start with a key readable by others, and says how to fix it', async () => {
    const home = newHome();
    const first = await startSandboxProcess(home, '127.0.0.1:0');
    expect(await stopSandboxProcess(first)).toBe(0);
    const key = join(home, 'sandbox', 'ca.key');
    chmodSync(key, 0o644);
    const run = await vnfm(['sandbox', '--listen', '127.0.0.1:0'], { home });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`the sandbox state file ${key} is accessible to other users (mode 0644)`);
    expect(run.stderr).toContain(`chmod 600 ${key}`);
  });

  it('fails (exit 1) with the reason and a hint when it cannot write the kubeconfig, and stops the sandbox it started', async () => {
    const home = newHome();
    // A path below a regular file: no directory can be made there, whoever runs the test.
    const blocker = join(home, '..', 'not-a-directory');
    writeFileSync(blocker, 'x');
    const kubeconfig = join(blocker, 'kubeconfig');
    const run = await vnfm(['sandbox', '--listen', '127.0.0.1:0', '--kubeconfig', kubeconfig], { home });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`cannot write the sandbox kubeconfig to ${kubeconfig}`);
    expect(run.stderr).toContain('choose a path in a directory you can write to');
    expect(run.stderr).not.toContain('unexpected failure');
  });
});
