/**
 * What the test Keystone and the test Heat (keystone.ts, heat.ts) both need
 * to run OpenStack's Python services on 127.0.0.1: Debian's interpreter with
 * a clean environment, one-shot tools whose failure shows the service's log,
 * a free port, random secrets, and stopping a service's process group.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';

const STOP_TIMEOUT_MS = 10_000;

/**
 * Like Promise.all, but waits for every step to end before failing, so that
 * nothing still runs in the temp dir when the caller cleans it up.
 */
export async function settleAll(steps: Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(steps);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** SIGTERM to the group, SIGKILL when it has not exited within 10 s, and SIGKILL to any worker left. */
export async function stopProcessGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  signalGroup(pid, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), STOP_TIMEOUT_MS);
  });
  const late = await Promise.race([exited.then(() => false), timedOut]);
  clearTimeout(timer);
  if (late) {
    signalGroup(pid, 'SIGKILL');
    await exited;
  }
  // Workers may outlive the master by a moment; none may keep the port.
  signalGroup(pid, 'SIGKILL');
}

export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

export interface RunOptions {
  dir: string;
  input?: string;
  env?: Record<string, string>;
  /** The service's log tail, appended to the error when the tool fails. */
  logTails(dir: string): Promise<string>;
}

/** Runs a command to completion; resolves with stdout, rejects with stderr and the service's log tail. */
export function runTool(command: string, args: string[], opts: RunOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.dir, stdio: ['pipe', 'pipe', 'pipe'], env: { ...pythonEnv(), ...opts.env } });
    const out: Buffer[] = [];
    const errOut: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => errOut.push(b));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) {
        resolve(Buffer.concat(out).toString('utf8'));
        return;
      }
      const stderr = Buffer.concat(errOut).toString('utf8').split('\n').slice(-20).join('\n');
      void opts.logTails(opts.dir).then((tails) => reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit code ${code}`}):\n${stderr}\n${tails}`)));
    });
    child.stdin.end(opts.input ?? '');
  });
}

/**
 * OpenStack's tools (Keystone's, Heat's) must run on Debian's /usr/bin/python3 with Debian's
 * packages; drop what could point them at another interpreter's libraries.
 */
export function pythonEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['PYTHONPATH', 'PYTHONHOME', 'VIRTUAL_ENV', 'PYTHONSTARTUP']) delete env[name];
  env.PATH = `/usr/sbin:/usr/bin:/sbin:/bin${env.PATH ? `:${env.PATH}` : ''}`;
  return env;
}

/** A port free right now on 127.0.0.1 (uwsgi binds it a moment later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not find a free port on 127.0.0.1'));
      });
    });
  });
}

export function randomSecret(): string {
  return randomBytes(18).toString('base64url');
}

/**
 * The last lines of a service's logs in `dir`, each under its name, for an
 * error saying why it did not start; `omit` leaves out lines that would hide
 * the traceback (a service's own access log).
 */
export async function serviceLogTails(dir: string, names: string[], opts: { lines?: number; omit?: (line: string) => boolean; omitted?: string } = {}): Promise<string> {
  const parts: string[] = [];
  for (const name of names) {
    const text = await readFile(join(dir, name), 'utf8').catch(() => '');
    const lines = opts.omit ? text.split('\n').filter((line) => !opts.omit!(line)) : text.split('\n');
    if (text) parts.push(`--- ${name} (last lines${opts.omitted ? `, ${opts.omitted} left out` : ''}) ---\n${lines.slice(-(opts.lines ?? 30)).join('\n')}`);
  }
  return parts.join('\n');
}
