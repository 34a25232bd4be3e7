/**
 * Who holds an instance's operation lock, and whether that holder still runs.
 *
 * A bare pid says little: pids are reused, after a reboot or sooner, and a
 * vnfm that ran as pid 1 in a container finds "pid 1" alive in the next
 * container (itself). A holder is therefore recorded as the host (its machine
 * id, or its host name where there is none, and on Linux the pid namespace,
 * since pids of another namespace cannot be checked from this one), the boot,
 * the pid and the process's start time. The holder is gone when the host is
 * this one and the boot differs (rebooted since), or no process with that pid
 * and that start time runs. A holder on another host (or in another
 * container) cannot be checked from here: it is taken for gone only once
 * its lease has run out (store/operation-leases.ts: the holder moves the
 * expiry on with a heartbeat while it runs); a lock without a lease (taken
 * before leases existed) is never assumed gone, and the operator releases
 * it (op-fail --force) once sure its holder is.
 *
 * Where the facts come from: Linux reads /etc/machine-id,
 * /proc/sys/kernel/random/boot_id, /proc/self/ns/pid and the starttime field
 * of /proc/<pid>/stat. macOS and the BSDs use the boot time
 * (`sysctl -n kern.boottime`) as the boot id and `ps -o lstart=` for the
 * start time. Where neither is available (Windows), only the pid is compared,
 * as before these fields existed.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

export interface LockHolder {
  pid: number;
  /** The host's name, for messages. */
  hostName?: string;
  /** What identifies the host: its machine id (or name) and, on Linux, the pid namespace. */
  hostId?: string;
  /** Changes at every boot (Linux: the kernel's boot_id). */
  bootId?: string;
  /** When the process started, in the host's own terms (Linux: clock ticks since boot). */
  startTime?: string;
  /** When the holder's lease runs out unless its heartbeat moves it on (ISO 8601); absent for a lock without a lease. */
  leaseExpiresAt?: string;
  /** The holder's last heartbeat (ISO 8601). */
  heartbeatAt?: string;
}

/**
 * `running`: that very process runs on this host. `gone`: it does not (why
 * says how we know). `elsewhere`: it is on another host or in another pid
 * namespace, where this process cannot look. `unverified`: a process with
 * that pid runs here, but the lock has no start time to tell whether it is
 * the holder (a lock taken before start times were recorded).
 */
export type HolderStatus = { state: 'running' } | { state: 'gone'; why: string } | { state: 'elsewhere' } | { state: 'unverified' };

/** How the status is found out; tests may pass their own host facts. */
export interface HostFacts {
  hostName: string;
  hostId?: string;
  bootId?: string;
  pidAlive(pid: number): boolean;
  startTimeOf(pid: number): string | undefined;
}

const readTrimmed = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
};

const run = (file: string, args: string[]): string | undefined => {
  try {
    return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim() || undefined;
  } catch {
    return undefined;
  }
};

/** Fields 3 onwards of /proc/<pid>/stat (Linux). */
function procStat(pid: number): string[] | undefined {
  const stat = readTrimmed(`/proc/${pid}/stat`);
  // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Whether a process with this pid runs (a zombie, which has exited, does not). */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const state = process.platform === 'linux' ? procStat(pid)?.[0] : undefined;
  return state !== 'Z' && state !== 'X';
}

/** The start time of a running process, or undefined when it cannot be read. */
export function processStartTime(pid: number): string | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  // fields[0] is field 3 (state); starttime is field 22.
  if (process.platform === 'linux') return procStat(pid)?.[19];
  if (process.platform === 'win32') return undefined;
  return run('ps', ['-o', 'lstart=', '-p', String(pid)]);
}

function bootId(): string | undefined {
  if (process.platform === 'linux') return readTrimmed('/proc/sys/kernel/random/boot_id');
  if (process.platform === 'win32') return undefined;
  const boot = run('sysctl', ['-n', 'kern.boottime']);
  const sec = boot && /sec\s*=\s*(\d+)/.exec(boot)?.[1];
  return sec ? `boottime:${sec}` : undefined;
}

function hostIdOf(name: string): string {
  const machine = readTrimmed('/etc/machine-id') ?? readTrimmed('/var/lib/dbus/machine-id') ?? `hostname:${name}`;
  let ns: string | undefined;
  try {
    ns = process.platform === 'linux' ? readlinkSync('/proc/self/ns/pid') : undefined;
  } catch {
    ns = undefined;
  }
  return ns ? `${machine} ${ns}` : machine;
}

let facts: HostFacts | undefined;

/** This host, read once per process. */
export function thisHost(): HostFacts {
  if (!facts) {
    const name = hostname();
    const id = bootId();
    facts = { hostName: name, hostId: hostIdOf(name), ...(id ? { bootId: id } : {}), pidAlive: isProcessAlive, startTimeOf: processStartTime };
  }
  return facts;
}

let ownStart: string | undefined;

/** The holder to record for `pid` on this host (this process by default). */
export function holderOf(pid: number = process.pid, host: HostFacts = thisHost()): LockHolder {
  const own = pid === process.pid && host === facts;
  const startTime = own ? (ownStart ??= host.startTimeOf(pid)) : host.startTimeOf(pid);
  return {
    pid,
    hostName: host.hostName,
    ...(host.hostId ? { hostId: host.hostId } : {}),
    ...(host.bootId ? { bootId: host.bootId } : {}),
    ...(startTime ? { startTime } : {}),
  };
}

/** Whether the holder of a lock still runs, as far as this host can tell; `now` (ms) is compared with its lease. */
export function holderStatus(holder: LockHolder, host: HostFacts = thisHost(), now: number = Date.now()): HolderStatus {
  // Locks from before hosts were recorded were taken on the machine that owns the store.
  if (holder.hostId && host.hostId && holder.hostId !== host.hostId) return leaseRunOut(holder, now) ?? { state: 'elsewhere' };
  if (holder.bootId && host.bootId && holder.bootId !== host.bootId) return { state: 'gone', why: 'the host has been restarted since' };
  if (!host.pidAlive(holder.pid)) return { state: 'gone', why: `no process has pid ${holder.pid}` };
  if (!holder.startTime) return leaseRunOut(holder, now) ?? { state: 'unverified' };
  const started = host.startTimeOf(holder.pid);
  // Unreadable (another user's process under a hidepid /proc): assume it is the holder.
  if (started === undefined) return { state: 'running' };
  if (started !== holder.startTime) return { state: 'gone', why: `pid ${holder.pid} is now another process` };
  return { state: 'running' };
}

/** `gone` when the holder's lease has run out: its heartbeat stopped a lease timeout ago. */
function leaseRunOut(holder: LockHolder, now: number): HolderStatus | undefined {
  const expires = holder.leaseExpiresAt ? Date.parse(holder.leaseExpiresAt) : NaN;
  if (!(expires < now)) return undefined;
  return { state: 'gone', why: `its lease ran out at ${holder.leaseExpiresAt} (last heartbeat ${holder.heartbeatAt ?? 'never'})` };
}
