/**
 * The README's step-by-step walk, run as written: the shell block after
 * "Step by step" goes to bash unchanged, in a folder where `bin/vnfm` and
 * `csar-samples/` are the project's, once with VNFM_HOME set and once with
 * it unset (HOME then holds ~/.vnfm). Each run must end with exit 0, the CNF
 * seen by kubectl, and no sandbox left running.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const KUBECTL = '/usr/bin/kubectl';
const readme = readFileSync(resolve('README.md'), 'utf8');
const walk = /\nStep by step[^\n]*\n\n```sh\n([\s\S]*?)\n```/.exec(readme)?.[1];

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runWalk(env: NodeJS.ProcessEnv, cwd: string): Promise<Ran> {
  return new Promise((done, fail) => {
    // -e: the walk must work line by line, as a reader types it; -x: the log shows which line failed.
    const child = spawn('bash', ['-ex', '-c', walk!], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** A folder holding bin/ and csar-samples/ of the project, and an empty home. */
function workspace(): { cwd: string; home: string } {
  const root = mkdtempSync(join(tmpdir(), 'vnfm-readme-walk-'));
  dirs.push(root);
  symlinkSync(resolve('bin'), join(root, 'bin'));
  symlinkSync(resolve('csar-samples'), join(root, 'csar-samples'));
  const home = join(root, 'home');
  mkdirSync(home);
  return { cwd: root, home };
}

/** Whether `pid` runs (a zombie nobody reaped has ended). */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The sandbox the walk started (its pid is what --detach printed, in the -x trace), if it still runs once SIGTERM had time to work. */
async function leftSandbox(trace: string): Promise<number | undefined> {
  const pid = Number(/\+ pid=(\d+)/.exec(trace)?.[1]);
  if (!pid) return undefined;
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  return alive(pid) ? pid : undefined;
}

describe('the README walk, as written', () => {
  it('is in the README', () => {
    expect(walk).toBeDefined();
    expect(walk).toContain('bin/vnfm sandbox --detach');
    expect(walk).toContain('kill "$pid"');
  });

  // What a reader's shell has: a PATH (node, kubectl) and a HOME; nothing of the test runner's own settings.
  const base = (home: string): NodeJS.ProcessEnv => ({ PATH: `${join(KUBECTL, '..')}:${join(process.execPath, '..')}:/usr/bin:/bin`, HOME: home, LANG: 'C.UTF-8' });

  it.each([
    ['VNFM_HOME set', true],
    ['VNFM_HOME unset (~/.vnfm)', false],
  ])('runs from start to end with %s', { timeout: 180_000 }, async (_name, withHome) => {
    const { cwd, home } = workspace();
    const vnfmHome = join(cwd, 'vnfm-home');
    const env = base(home);
    if (withHome) env['VNFM_HOME'] = vnfmHome;
    const ran = await runWalk(env, cwd);
    const left = await leftSandbox(ran.stderr);
    if (left) process.kill(left, 'SIGTERM');
    expect(ran.code, ran.stderr.slice(-3000)).toBe(0);
    expect(left, 'the walk stops the sandbox it started').toBeUndefined();
    // kubectl found the instance's Deployment through the label vnfm put on it.
    expect(ran.stdout).toMatch(/deployment\.apps\/\S+/);
    expect(ran.stdout + ran.stderr).toContain('vim "vim-sandbox" registered');
    // The sandbox's files and the store went where the walk says, and nowhere else.
    const used = withHome ? vnfmHome : join(home, '.vnfm');
    expect(existsSync(join(used, 'sandbox', 'vim-config.yaml'))).toBe(true);
    expect(existsSync(join(used, 'sandbox', 'kubeconfig'))).toBe(true);
    expect(existsSync(withHome ? join(home, '.vnfm') : vnfmHome)).toBe(false);
  });
});

describe('vnfm sandbox --detach', () => {
  it('returns once it serves; a second one on the same port fails with the sandbox own error, and nothing is left running', { timeout: 60_000 }, async () => {
    const { home } = workspace();
    const env = { PATH: `${join(process.execPath, '..')}:/usr/bin:/bin`, HOME: home, VNFM_HOME: join(home, 'v') };
    const vnfm = (args: string[]) =>
      new Promise<Ran>((done) => {
        const child = spawn(resolve('bin/vnfm'), args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
        child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
        child.on('close', (code) => done({ code, stdout, stderr }));
      });
    const first = await vnfm(['sandbox', '--detach', '--listen', '127.0.0.1:0', '-o', 'json']);
    expect(first.code, first.stderr).toBe(0);
    const started = JSON.parse(first.stdout) as { url: string; pid: number; log: string; vim_config: string };
    try {
      expect(alive(started.pid)).toBe(true);
      // It serves, and its files are there, when --detach returns.
      expect(readFileSync(started.vim_config, 'utf8')).toContain(started.url);
      const port = new URL(started.url).port;
      const second = await vnfm(['sandbox', '--detach', '--listen', `127.0.0.1:${port}`]);
      expect(second.code).not.toBe(0);
      expect(second.stderr).toContain(`127.0.0.1:${port} is already in use`);
      expect(second.stderr).toContain('sandbox.log');
    } finally {
      process.kill(started.pid, 'SIGTERM');
    }
    expect(await leftSandbox(`+ pid=${started.pid}`)).toBeUndefined();
    expect(readFileSync(started.log, 'utf8')).toContain('sandbox stopped');
  });
});
