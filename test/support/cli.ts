/**
 * Runs the real program: argv in; stdout, stderr and exit code out. Each
 * caller gives its own VNFM_HOME, so no test reads or writes a real home.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const BIN = resolve(import.meta.dirname, '../../bin/vnfm');

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  home: string;
  env?: Record<string, string | undefined>;
  input?: string;
  cwd?: string;
}

/** A fresh directory for VNFM_HOME (not yet created: vnfm makes it 0700). */
export function newHome(): string {
  return join(mkdtempSync(join(tmpdir(), 'vnfm-test-')), 'home');
}

export function vnfm(args: string[], opts: RunOptions): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd ?? opts.home.replace(/\/home$/, ''),
      env: {
        PATH: process.env['PATH'],
        HOME: opts.home.replace(/\/home$/, ''),
        VNFM_HOME: opts.home,
        ...opts.env,
      } as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/**
 * A runner that fails the test unless vnfm exits 0: the error names the
 * command line, the exit code and what vnfm wrote to stderr. `run` is the
 * file's own runner (its VNFM_HOME, environment, working directory).
 */
export function okWith(run: (args: string[]) => Promise<RunResult>): (args: string[]) => Promise<RunResult> {
  return async (args) => {
    const r = await run(args);
    if (r.code !== 0) throw new Error(`vnfm ${args.join(' ')} exited ${r.code}\n${r.stderr}`);
    return r;
  };
}

/** okWith's runner, giving stdout. */
export function okStdoutWith(run: (args: string[]) => Promise<RunResult>): (args: string[]) => Promise<string> {
  const ok = okWith(run);
  return async (args) => (await ok(args)).stdout;
}

/**
 * Runs vnfm on a pseudo-terminal (`script`) with `VNFM_HOME=home` and types
 * `answer` once a y/N question shows; HOME is `userHome` (default `home`).
 */
export function onTerminal(args: string[], home: string, answer: string, userHome = home): Promise<{ code: number | null; screen: string }> {
  return new Promise((resolvePromise, reject) => {
    const cmd = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ');
    const child = spawn('script', ['-qec', cmd, '/dev/null'], {
      env: { PATH: process.env['PATH'], HOME: userHome, VNFM_HOME: home, TERM: 'xterm' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    let answered = false;
    child.stdout.on('data', (d: Buffer) => {
      screen += d.toString();
      if (!answered && screen.includes('(y/N)')) {
        answered = true;
        child.stdin.write(answer + '\r');
      }
    });
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, screen }));
  });
}
