/**
 * The private network namespace the real OpenStack tier (real-openstack.ts)
 * runs its services in, and the processes it starts there: each in its own
 * process group with its log in the cloud's directory, stopped by pid (TERM
 * to the group, KILL after a grace). Every service listens on the
 * namespace's own 127.0.0.1; netns-relay.py carries chosen ports of the
 * host's 127.0.0.1 to the same ports inside, so the tests and vnfm on the host
 * reach the APIs at the URLs Keystone's catalog gives.
 *
 * Namespaces are named `vnfmos-<pid of the owning test process>`: one whose
 * owner is gone is removed (its processes killed by pid) before a new one is made.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pythonEnv } from './openstack-process.js';

const RELAY_SCRIPT = fileURLToPath(new URL('./netns-relay.py', import.meta.url));
const PYTHON = '/usr/bin/python3';
const PREFIX = 'vnfmos-';
/** Ephemeral ports inside the namespace stay below the host's (32768-60999), where the relayed service ports are. */
const NAMESPACE_EPHEMERAL_PORTS = '20000 24999';
const STOP_GRACE_MS = 15_000;
/**
 * Every process of the cloud runs at this niceness: its cold start takes
 * minutes of CPU while the other tiers' tests run beside it on the same
 * cores, and those have timeouts of seconds; the cloud's clients (vnfm,
 * the tests) wait as long as it takes.
 */
const NICENESS = '5';

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  /** Run on the host rather than in the namespace (a server with no network, e.g. PostgreSQL on its socket). */
  onHost?: boolean;
  uid?: number;
  gid?: number;
  /** The signal that stops it gracefully (default SIGTERM). */
  stopSignal?: NodeJS.Signals;
}

interface Started {
  name: string;
  child: ChildProcess;
  stopSignal: NodeJS.Signals;
}

/** Runs a command synchronously; throws with its stderr when it fails. */
export function sh(command: string, args: string[], opts: { allowFail?: boolean } = {}): string {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  if (!opts.allowFail && r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr || r.error?.message || ''}`);
  return r.stdout ?? '';
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function killPids(pids: number[]): void {
  for (const pid of pids) signal(pid, 'SIGKILL');
}

function namespacePids(name: string): number[] {
  return sh('ip', ['netns', 'pids', name], { allowFail: true }).split('\n').filter(Boolean).map(Number);
}

/** Namespaces and directories of earlier runs whose test process is gone; their processes are ours and are killed by pid. */
function removeStale(): void {
  for (const line of sh('ip', ['netns', 'list'], { allowFail: true }).split('\n')) {
    const name = line.split(/\s+/)[0] ?? '';
    const owner = Number(name.slice(PREFIX.length));
    if (!name.startsWith(PREFIX) || !owner || pidAlive(owner)) continue;
    killPids(namespacePids(name));
    sh('ip', ['netns', 'del', name], { allowFail: true });
  }
  for (const entry of readdirSync(tmpdir())) {
    const m = /^vnfm-realos-(\d+)-/.exec(entry);
    if (!m || pidAlive(Number(m[1]))) continue;
    const postmaster = readFirstLine(join(tmpdir(), entry, 'pg/data/postmaster.pid'));
    if (postmaster) killPids([postmaster]);
    rmSync(join(tmpdir(), entry), { recursive: true, force: true });
  }
}

function readFirstLine(file: string): number | undefined {
  try {
    return Number(readFileSync(file, 'utf8').split('\n')[0]) || undefined;
  } catch {
    return undefined;
  }
}

/** The namespace, the relay and the processes started in it. */
export class CloudNamespace {
  private readonly started: Started[] = [];
  private relay: ChildProcess | undefined;
  private readonly exitHook = () => this.destroySync();
  private destroyed = false;

  private constructor(
    readonly name: string,
    readonly dir: string,
    readonly logDir: string,
  ) {
    process.once('exit', this.exitHook);
  }

  /**
   * Creates `vnfmos-<pid>` with its loopback up, a veth pair `phys0`/`phys0-peer`
   * (the physical interface Neutron's Linux bridge agent is given), and
   * namespace-local ephemeral ports below the host's.
   */
  static create(dir: string, logDir: string): CloudNamespace {
    if (process.getuid?.() !== 0) throw new Error('the real OpenStack tier needs root (a network namespace, bridges made by Neutron)');
    removeStale();
    const name = `${PREFIX}${process.pid}`;
    sh('ip', ['netns', 'add', name]);
    const ns = new CloudNamespace(name, dir, logDir);
    try {
      sh('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
      sh('ip', ['-n', name, 'link', 'add', 'phys0', 'type', 'veth', 'peer', 'name', 'phys0-peer']);
      sh('ip', ['-n', name, 'link', 'set', 'phys0', 'up']);
      sh('ip', ['-n', name, 'link', 'set', 'phys0-peer', 'up']);
      sh('ip', ['netns', 'exec', name, 'sysctl', '-q', '-w', `net.ipv4.ip_local_port_range=${NAMESPACE_EPHEMERAL_PORTS}`]);
    } catch (err) {
      ns.destroySync();
      throw err;
    }
    return ns;
  }

  /** Starts the relay; resolves with `count` ports, each free on the host's 127.0.0.1 and carried to the same port inside. */
  async relayPorts(count: number): Promise<number[]> {
    const child = spawn(PYTHON, [RELAY_SCRIPT, this.name, String(count)], { stdio: ['pipe', 'pipe', 'pipe'], env: pythonEnv() });
    this.relay = child;
    let out = '';
    let err = '';
    child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    return new Promise((resolve, reject) => {
      child.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        if (out.includes('\n')) resolve(JSON.parse(out) as number[]);
      });
      child.once('exit', (code) => reject(new Error(`netns-relay.py exited (${code}): ${err}`)));
    });
  }

  /** The command line that runs `command` inside the namespace (or on the host), niced; `ip netns exec` and `nice` exec it, so its pid is the one spawned. */
  private argv(command: string, args: string[], onHost: boolean | undefined): [string, string[]] {
    const niced = ['nice', '-n', NICENESS, command, ...args];
    return onHost ? [niced[0]!, niced.slice(1)] : ['ip', ['netns', 'exec', this.name, ...niced]];
  }

  /** Starts a long-running service (its own process group, output in `<logDir>/<name>.out`). */
  start(name: string, command: string, args: string[], opts: StartOptions = {}): ChildProcess {
    if (this.destroyed) throw new Error(`the cloud is stopping; ${name} not started`);
    const log = openSync(join(this.logDir, `${name}.out`), 'a');
    try {
      const [cmd, argv] = this.argv(command, args, opts.onHost);
      const spawnOpts: SpawnOptions = { cwd: this.dir, detached: true, stdio: ['ignore', log, log], env: opts.env ?? pythonEnv() };
      if (opts.uid !== undefined) Object.assign(spawnOpts, { uid: opts.uid, gid: opts.gid });
      const child = spawn(cmd, argv, spawnOpts);
      child.on('error', () => undefined);
      this.started.push({ name, child, stopSignal: opts.stopSignal ?? 'SIGTERM' });
      return child;
    } finally {
      closeSync(log);
    }
  }

  /** Runs a tool to completion inside the namespace; rejects with its output's tail. */
  run(command: string, args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; onHost?: boolean; uid?: number; gid?: number } = {}): Promise<string> {
    const [cmd, argv] = this.argv(command, args, opts.onHost);
    return new Promise((resolve, reject) => {
      const spawnOpts: SpawnOptions = { cwd: this.dir, stdio: ['pipe', 'pipe', 'pipe'], env: opts.env ?? pythonEnv() };
      if (opts.uid !== undefined) Object.assign(spawnOpts, { uid: opts.uid, gid: opts.gid });
      const child = spawn(cmd, argv, spawnOpts);
      const out: Buffer[] = [];
      const errOut: Buffer[] = [];
      child.stdout!.on('data', (b: Buffer) => out.push(b));
      child.stderr!.on('data', (b: Buffer) => errOut.push(b));
      child.on('error', reject);
      child.on('close', (code, signal) => {
        if (code === 0) return resolve(Buffer.concat(out).toString('utf8'));
        const tail = Buffer.concat([...out, ...errOut])
          .toString('utf8')
          .split('\n')
          .slice(-25)
          .join('\n');
        reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit code ${code}`}):\n${tail}`));
      });
      child.stdin!.end(opts.input ?? '');
    });
  }

  /** A started service that has exited, if any: its name, how it ended and the end of its output. */
  exited(): string | undefined {
    const gone = this.started.find((s) => s.child.exitCode !== null || s.child.signalCode !== null);
    if (!gone) return undefined;
    // Its output, and its log where it keeps one (the error is there).
    const tail = [`${gone.name}.out`, `${gone.name}.log`]
      .map((file) => {
        try {
          return readFileSync(join(this.logDir, file), 'utf8').split('\n').slice(-30).join('\n');
        } catch {
          return '';
        }
      })
      .filter(Boolean)
      .join('\n');
    return `${gone.name} (${gone.child.signalCode ?? `exit code ${gone.child.exitCode}`}) ${tail ? `ended with:\n${tail}\n` : ''}`;
  }

  /** Every pid of the cloud: the namespace's, the process groups started on the host, the relay. */
  pids(): number[] {
    const groups = new Set(this.started.filter((s) => s.child.pid !== undefined).map((s) => s.child.pid!));
    const found = new Set(namespacePids(this.name));
    if (this.relay?.pid) found.add(this.relay.pid);
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
        if (groups.has(pgrp)) found.add(Number(entry));
      } catch {
        /* gone */
      }
    }
    return [...found];
  }

  /** Stops the services (TERM, KILL after 15 s; those named in `last` after the others), the relay, then removes the namespace. */
  async destroy(last: string[] = []): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    const before = this.started.filter((s) => !last.includes(s.name));
    const after = this.started.filter((s) => last.includes(s.name));
    await Promise.all(before.map((s) => stopProcess(s)));
    await Promise.all(after.map((s) => stopProcess(s)));
    if (this.relay) await stopProcess({ name: 'relay', child: this.relay, stopSignal: 'SIGTERM' }, false);
    this.finishSync();
  }

  /** Kills everything at once (a test process ending without teardown). */
  destroySync(): void {
    this.destroyed = true;
    for (const s of this.started) if (s.child.pid !== undefined) signal(-s.child.pid, 'SIGKILL');
    if (this.relay?.pid) signal(this.relay.pid, 'SIGKILL');
    this.finishSync();
  }

  private finishSync(): void {
    process.off('exit', this.exitHook);
    // Whatever a service forked into the namespace outside its group (none is expected).
    killPids(namespacePids(this.name));
    sh('ip', ['netns', 'del', this.name], { allowFail: true });
  }
}

/** A signal to a process group (`-pid`) or one process; nothing when it is gone. */
function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* gone */
  }
}

/** Its stop signal to the process (group), SIGKILL after the grace; a group gets SIGKILL anyway at the end (workers outlive their parent by a moment). */
async function stopProcess(s: Started, group = true): Promise<void> {
  const { child } = s;
  if (child.pid === undefined) return;
  const target = group ? -child.pid : child.pid;
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    signal(target, s.stopSignal);
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([exited.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), STOP_GRACE_MS)))]);
    clearTimeout(timer);
    if (late) {
      signal(target, 'SIGKILL');
      await exited;
    }
  }
  if (group) signal(target, 'SIGKILL');
}
