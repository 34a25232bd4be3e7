/**
 * What a package script starts ends with it: a `nohup sleep 300 &`, a
 * `setsid daemon &` or a double fork is gone once the hook is over, on
 * timeout, abort and failure alike, and when vnfm itself ends. How, by what
 * the host allows (script-isolation.ts picks one):
 *
 * - `pid-namespace`: the script runs in a PID namespace of its own, under a
 *   small init (`/bin/sh`) that waits for it. When the script ends, so does
 *   the init, and the kernel kills everything else in the namespace before
 *   the hook sees the exit. `unshare --kill-child` under
 *   `setpriv --pdeathsig KILL` ends the namespace when vnfm dies, even by
 *   SIGKILL. As root a plain namespace; as any other user one inside a user
 *   namespace of that user (where the kernel allows unprivileged ones).
 * - `subreaper`: no namespace can be made (a container without
 *   CAP_SYS_ADMIN whose seccomp refuses user namespaces, or a kernel that
 *   refuses them to users): a small Perl supervisor becomes the script's
 *   parent and a child subreaper (PR_SET_CHILD_SUBREAPER), so everything
 *   the script leaves behind, double-forked daemons included, is re-parented
 *   to it; when the script ends it kills and reaps them all, and it does so
 *   too when vnfm dies (PR_SET_PDEATHSIG).
 * - `tracked`: neither (no util-linux, no Perl): vnfm finds the script's
 *   processes in /proc — its session, its process group, the children of
 *   those it has seen (looked at every 100 ms and on abort), and any
 *   process whose environment still carries the run's VNFM_SCRIPT_RUN —
 *   and kills them when the hook ends. Limits: a process that leaves the
 *   session (setsid) and clears its environment (`env -i`, sudo), and whose
 *   parent exits before vnfm looks, escapes; and nothing is stopped when
 *   vnfm is killed by SIGKILL.
 *
 * Without a PID namespace, a process the script starts through a setuid
 * program (sudo) runs as another user, whom neither an unprivileged
 * supervisor nor an unprivileged vnfm can signal: it is left.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { atProcessEnd } from '../infra/helm/process-end.js';

/** The environment variable whose value names one run of a script: its processes inherit it. */
export const RUN_MARKER = 'VNFM_SCRIPT_RUN';

/** How what a script starts is made to end with it; see the module's comment. */
export type ProcessContainment = 'pid-namespace' | 'subreaper' | 'tracked';

/** One process as /proc/<pid>/stat shows it. */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  pgrp: number;
  session: number;
  /** R, S, D, T, Z, … */
  state: string;
  /** Start time in clock ticks since boot: with the pid, names one process, not a later one given the same pid. */
  start: number;
}

/** One process's stat, or undefined when it is gone (or this is no Linux). */
export function readProcess(pid: number): ProcessEntry | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name, in parentheses, may itself hold spaces and parentheses: the fields follow the last ')'.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  if (f.length < 20) return undefined;
  return { pid, state: f[0]!, ppid: Number(f[1]), pgrp: Number(f[2]), session: Number(f[3]), start: Number(f[19]) };
}

/** Whether the process's environment, as it started, holds `entry` (`NAME=value`); false where it cannot be read (another user's). */
export function environHas(pid: number, entry: string): boolean {
  let env: Buffer;
  try {
    env = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return false;
  }
  return Buffer.concat([Buffer.from([0]), env]).includes(Buffer.from(`\0${entry}\0`));
}

/** Every process this process can see. */
export function readProcesses(): Map<number, ProcessEntry> {
  const out = new Map<number, ProcessEntry>();
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const p = readProcess(Number(name));
    if (p) out.set(p.pid, p);
  }
  return out;
}

function signal(pid: number, sig: NodeJS.Signals | number): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/**
 * Kills the processes `known` names (pid → start time) and every process
 * `belongs` picks, with all their descendants: stopped first (SIGSTOP, so
 * none forks a child out of sight while the others die), looked at again
 * until no new one shows, then killed. Returns those killed (pid → start
 * time).
 */
export function killProcesses(known: ReadonlyMap<number, number>, belongs: (p: ProcessEntry) => boolean = () => false): Map<number, number> {
  const caught = new Map<number, number>();
  // Those SIGSTOP reached: another user's (a setuid program's) cannot be stopped, nor waited for.
  const stopping = new Set<number>();
  const isOurs = (p: ProcessEntry, procs: Map<number, ProcessEntry>) => {
    if (known.get(p.pid) === p.start || belongs(p)) return true;
    const parent = procs.get(p.ppid);
    return parent !== undefined && (caught.get(parent.pid) === parent.start || known.get(parent.pid) === parent.start);
  };
  for (let round = 0; round < 200; round++) {
    const procs = readProcesses();
    let added = false;
    for (const p of procs.values()) {
      if (p.pid === process.pid || p.state === 'Z' || caught.get(p.pid) === p.start || !isOurs(p, procs)) continue;
      caught.set(p.pid, p.start);
      if (signal(p.pid, 'SIGSTOP')) stopping.add(p.pid);
      added = true;
    }
    // Settled once no new process shows and every one stopped has stopped (a fork under way is finished, its child seen).
    const running = [...stopping].some((pid) => {
      const now = readProcess(pid);
      return now !== undefined && now.start === caught.get(pid) && !['T', 't', 'Z', 'X'].includes(now.state);
    });
    if (!added && !running) break;
  }
  const killed = new Map<number, number>();
  for (const [pid, start] of caught) {
    if (readProcess(pid)?.start === start && signal(pid, 'SIGKILL')) killed.set(pid, start);
  }
  return killed;
}

/** Whether any of the processes (pid → start time) still runs: a zombie has ended. */
export function anyRunning(procs: ReadonlyMap<number, number>): boolean {
  for (const [pid, start] of procs) {
    const now = readProcess(pid);
    if (now && now.start === start && now.state !== 'Z' && now.state !== 'X') return true;
  }
  return false;
}

/** The descendants of `root` (not itself), found by their parents; none when `root` is no longer the process that started at `start`. */
export function descendantsOf(root: number, start: number | undefined): Map<number, number> {
  const procs = readProcesses();
  const out = new Map<number, number>();
  if (start === undefined || procs.get(root)?.start !== start) return out;
  const known = new Map([[root, start]]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of procs.values()) {
      const parent = procs.get(p.ppid);
      if (!known.has(p.pid) && parent && known.get(parent.pid) === parent.start) {
        known.set(p.pid, p.start);
        out.set(p.pid, p.start);
        grew = true;
      }
    }
  }
  return out;
}

/**
 * The Perl supervisor of the `subreaper` containment:
 * `perl -e SUPERVISOR <prctl syscall number> <command> [args…]`. It ignores
 * SIGTERM and SIGINT (vnfm signals the script's process group, which it
 * leads: the script gets them), exits as the script did (dying by the same
 * signal, where it can), and kills what is left before exiting, or when its
 * parent dies.
 */
export const SUPERVISOR = String.raw`
use strict;
use POSIX qw(:signal_h :sys_wait_h);
my ($nr, @cmd) = @ARGV;
my $parent = getppid();
syscall($nr, 36, 1, 0, 0, 0) == 0 or die "vnfm: cannot become a child subreaper: $!\n";
my $block = POSIX::SigSet->new(SIGTERM, SIGINT, SIGUSR1);
sigprocmask(SIG_BLOCK, $block);
my $pid = fork();
die "vnfm: fork: $!\n" unless defined $pid;
if ($pid == 0) {
  sigprocmask(SIG_UNBLOCK, $block);
  exec { $cmd[0] } @cmd or do { print STDERR "vnfm: cannot run $cmd[0]: $!\n"; POSIX::_exit(127) };
}
sub children {
  opendir(my $d, '/proc') or return ();
  my @kids;
  for my $p (readdir $d) {
    next unless $p =~ /^\d+$/;
    open(my $f, '<', "/proc/$p/stat") or next;
    my $s = <$f>;
    next unless defined $s && $s =~ /\)\s+(\S)\s+(\d+)/;
    push @kids, $p if $2 == $$ && $1 ne 'Z';
  }
  return @kids;
}
sub end_all {
  for (1 .. 1000) {
    1 while waitpid(-1, WNOHANG) > 0;
    my @kids = children();
    last unless @kids;
    kill 'KILL', @kids;
    waitpid($_, 0) for @kids;
  }
}
$SIG{TERM} = 'IGNORE';
$SIG{INT} = 'IGNORE';
$SIG{USR1} = sub { end_all(); POSIX::_exit(137) };
syscall($nr, 1, SIGUSR1, 0, 0, 0);
sigprocmask(SIG_UNBLOCK, $block);
if (getppid() != $parent) { end_all(); POSIX::_exit(137) }
my $status;
while (1) {
  my $w = waitpid(-1, 0);
  last if $w == -1;
  if ($w == $pid) { $status = $?; last }
}
end_all();
$status = 0x7f00 unless defined $status;
if (WIFSIGNALED($status)) {
  my $sig = WTERMSIG($status);
  $SIG{$_} = 'DEFAULT' for qw(TERM INT);
  kill $sig, $$;
  POSIX::_exit(128 + $sig);
}
POSIX::_exit(WEXITSTATUS($status));
`;

/** prctl(2)'s system call number, by Node's name for the architecture (PR_SET_CHILD_SUBREAPER is called through Perl's `syscall`). */
export const PRCTL_SYSCALL: Readonly<Partial<Record<string, number>>> = { x64: 157, ia32: 172, arm64: 167, arm: 172, riscv64: 167, loong64: 167, ppc64: 171, s390x: 172 };

/**
 * The processes of one running script, whose first process (`pid`) vnfm
 * started in a session and process group of its own. Registered to be
 * killed should vnfm end while it runs.
 */
export class ScriptProcesses {
  private readonly seen = new Map<number, number>();
  private readonly start: number | undefined;
  private readonly poll: NodeJS.Timeout | undefined;
  private readonly unregister: () => void;

  /**
   * `pid`: the first process; `marker`: the `NAME=value` entry in the
   * environment vnfm gave it, which its descendants inherit.
   */
  constructor(
    private readonly pid: number,
    private readonly containment: ProcessContainment,
    private readonly marker?: string,
  ) {
    this.start = readProcess(pid)?.start;
    if (this.start !== undefined) this.seen.set(pid, this.start);
    if (containment === 'tracked') {
      this.poll = setInterval(() => this.look(), 100);
      this.poll.unref();
    }
    this.unregister = atProcessEnd((ending) => {
      if (ending) this.kill();
    });
  }

  /** Notes the processes that are the script's now (tracked containment; the others need not look). */
  look(): void {
    if (this.containment !== 'tracked') return;
    const procs = readProcesses();
    let grew = true;
    while (grew) {
      grew = false;
      for (const p of procs.values()) {
        if (this.seen.get(p.pid) === p.start) continue;
        const parent = procs.get(p.ppid);
        if (this.belongs(p) || (parent && this.seen.get(parent.pid) === parent.start)) {
          this.seen.set(p.pid, p.start);
          grew = true;
        }
      }
    }
  }

  /** Asks the script to stop (abort): SIGTERM to its process group, and to what else vnfm has seen of it. */
  terminate(): void {
    this.look();
    signal(-this.pid, 'SIGTERM');
    for (const [pid, start] of this.seen) if (pid !== this.pid && readProcess(pid)?.start === start) signal(pid, 'SIGTERM');
  }

  /** Kills the script and everything it started, now; returns those killed (their death may take a moment). */
  kill(): Map<number, number> {
    this.look();
    // While the first process lives, its descendants are found by their parents (under a subreaper or an init, all of them).
    const tree = new Map([...this.seen, ...descendantsOf(this.pid, this.start)]);
    const killed = killProcesses(tree, (p) => this.belongs(p) || (this.marker !== undefined && environHas(p.pid, this.marker)));
    signal(-this.pid, 'SIGKILL');
    return killed;
  }

  /**
   * After the script's exit: kills what it left, waits until those are gone
   * (up to `waitMs`), and returns how many there were (none where a
   * namespace or the supervisor has already ended them).
   */
  async end(waitMs = 5000): Promise<number> {
    if (this.poll) clearInterval(this.poll);
    try {
      const killed = this.kill();
      for (let waited = 0; waited < waitMs && anyRunning(killed); waited += 10) await new Promise((r) => setTimeout(r, 10));
      return killed.size;
    } finally {
      this.unregister();
    }
  }

  /** In the script's session or process group (both its first process's pid: vnfm started it with setsid). */
  private belongs(p: ProcessEntry): boolean {
    return p.pid !== this.pid && (p.session === this.pid || p.pgrp === this.pid);
  }
}
