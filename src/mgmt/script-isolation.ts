/**
 * What a package script can reach. The operator's consent lets a package's
 * script run; it should not hand the script vnfm's master key, database and
 * every VIM's credentials as well.
 *
 * - vnfm runs as root: the script runs as an unprivileged user (`nobody`, or
 *   `VNFM_SCRIPT_USER`), so it can read neither vnfm's files (VNFM_HOME is
 *   0700) nor vnfm's `/proc/<pid>/environ` (another user's). Where util-linux's
 *   `unshare` and `setpriv` work, it also runs in a private mount namespace
 *   in which an empty tmpfs covers VNFM_HOME, with no capabilities and
 *   `no_new_privs` (setuid programs gain it nothing). It reads a copy of the
 *   package, owned by root, and writes in its own HOME; both are removed
 *   when it ends.
 * - vnfm runs as any other user: the script runs as that same user. Its
 *   environment is scrubbed and VNFM_HOME is not named to it, but nothing
 *   on Linux keeps a process from reading files, and the start-up
 *   environment in `/proc/<pid>/environ`, of another process of its own
 *   user: consenting to a script is trusting it with vnfm's secrets.
 *
 * Either way, what the script starts ends with it (script-processes.ts): a
 * PID namespace of its own where one can be made (as root; as another user
 * inside a user namespace), else a Perl supervisor that is its subreaper,
 * else vnfm follows its processes in /proc.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, chmodSync, chownSync, constants, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { UsageError } from '../errors.js';
import { PRCTL_SYSCALL, SUPERVISOR, type ProcessContainment } from './script-processes.js';

/** The account a script runs as. */
export interface ScriptUser {
  name: string;
  uid: number;
  gid: number;
}

/**
 * How what a script starts is made to end with it (script-processes.ts);
 * absent: vnfm follows its processes in /proc (`tracked`).
 */
export type ScriptProcesses =
  /** A PID namespace: made by root, or (`userNamespace`) by the script's own user inside a user namespace of its own. */
  | { kind: 'pid-namespace'; unshare: string; setpriv: string; userNamespace: boolean; env?: string }
  /** A Perl supervisor, the script's child subreaper; `prctl` is the architecture's system call number. */
  | { kind: 'subreaper'; perl: string; prctl: number };

/** How package scripts are run; see the module's comment. */
export type ScriptIsolation =
  | { kind: 'same-user'; processes?: ScriptProcesses }
  | {
      kind: 'other-user';
      user: ScriptUser;
      /** Directories covered by an empty tmpfs in the script's mount namespace (VNFM_HOME). */
      hide: readonly string[];
      /** `unshare` and `setpriv`, when a private mount namespace can be made; else the user is switched alone. */
      namespace?: { unshare: string; setpriv: string };
      processes?: ScriptProcesses;
    };

export interface ScriptIsolationInput {
  /** vnfm's own uid; undefined where there are none. */
  uid: number | undefined;
  /** `VNFM_SCRIPT_USER`: a user name or uid. */
  user?: string | undefined;
  /** VNFM_HOME and any other directory the script must not see. */
  hide: readonly string[];
  /** Where `unshare` and `setpriv` are looked for (the PATH). */
  path?: string | undefined;
}

/** The user scripts run as when vnfm runs as root and VNFM_SCRIPT_USER is not set. */
export const DEFAULT_SCRIPT_USER = 'nobody';
export const SCRIPT_USER_ENV = 'VNFM_SCRIPT_USER';

/** A passwd entry, by name or uid: from `getent` (so NSS users count), else /etc/passwd. */
export function lookupUser(ref: string): ScriptUser | undefined {
  const parse = (line: string | undefined): ScriptUser | undefined => {
    const f = line?.split(':');
    if (!f || f.length < 4 || !/^\d+$/.test(f[2]!) || !/^\d+$/.test(f[3]!)) return undefined;
    return { name: f[0]!, uid: Number(f[2]), gid: Number(f[3]) };
  };
  const got = spawnSync('getent', ['passwd', ref], { encoding: 'utf8', timeout: 10_000 });
  if (!got.error) return got.status === 0 ? parse(got.stdout.split('\n')[0]) : undefined;
  let text: string;
  try {
    text = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return undefined;
  }
  return text
    .split('\n')
    .map(parse)
    .find((u) => u && (u.name === ref || String(u.uid) === ref));
}

function findProgram(name: string, path: string | undefined): string | undefined {
  for (const dir of (path || '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin').split(delimiter)) {
    if (!dir) continue;
    const full = join(dir, name);
    try {
      accessSync(full, constants.X_OK);
      if (statSync(full).isFile()) return full;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** What the probes below run: a program by its path, whatever the PATH holds. */
const NOTHING = ['/bin/sh', '-c', 'exit 0'];

/** Whether `command args` runs and exits 0 (as `as`, when given). */
function works(command: string, args: readonly string[], as?: { uid: number; gid: number }): boolean {
  const r = spawnSync(command, args, { stdio: 'ignore', timeout: 10_000, ...(as ? { uid: as.uid, gid: as.gid } : {}) });
  return !r.error && r.status === 0;
}

/** Whether this host lets vnfm make a mount namespace (a container without CAP_SYS_ADMIN does not). */
function canUnshare(unshare: string): boolean {
  return works(unshare, ['--mount', '--propagation', 'private', '--', ...NOTHING]);
}

/** unshare's options for a PID namespace whose init dies with unshare, with its own /proc. */
const PID_NAMESPACE = ['--pid', '--fork', '--kill-child', '--mount-proc'];

/**
 * How what the script starts is made to end with it, on this host, for a
 * script run as `as` (vnfm's own user when undefined): a PID namespace where
 * one can be made (`root`: by vnfm as root; `user`: by the script's user in
 * a user namespace), else a Perl supervisor that can become a child
 * subreaper, else none (tracked).
 */
function processContainment(path: string | undefined, can: { root: boolean; user: boolean }, as?: { uid: number; gid: number }): ScriptProcesses | undefined {
  // Namespaces, prctl numbers and /proc as these know them are Linux's.
  if (process.platform !== 'linux') return undefined;
  const unshare = findProgram('unshare', path);
  const setpriv = findProgram('setpriv', path);
  if (unshare && setpriv && works(setpriv, ['--pdeathsig', 'KILL', '--', ...NOTHING])) {
    // The init's `&` leaves SIGINT and SIGQUIT ignored for the script: env puts them back where it can.
    const env = findProgram('env', path);
    const withEnv = env && works(env, ['--default-signal=INT,QUIT', ...NOTHING]) ? { env } : {};
    if (can.root && works(unshare, [...PID_NAMESPACE, '--mount', '--propagation', 'private', '--', ...NOTHING])) {
      return { kind: 'pid-namespace', unshare, setpriv, userNamespace: false, ...withEnv };
    }
    if (can.user && works(unshare, ['--map-current-user', ...PID_NAMESPACE, '--', ...NOTHING], as)) {
      return { kind: 'pid-namespace', unshare, setpriv, userNamespace: true, ...withEnv };
    }
  }
  const perl = findProgram('perl', path);
  const prctl = PRCTL_SYSCALL[process.arch];
  if (perl && prctl !== undefined && works(perl, ['-e', SUPERVISOR, String(prctl), ...NOTHING], as)) return { kind: 'subreaper', perl, prctl };
  return undefined;
}

/** `{ processes }` when the host offers a containment, else nothing (tracked). */
function contained(processes: ScriptProcesses | undefined): { processes?: ScriptProcesses } {
  return processes ? { processes } : {};
}

/**
 * Decides how package scripts run for this vnfm process. Throws a
 * UsageError for a VNFM_SCRIPT_USER that does not exist, or that names
 * another user while vnfm is not root.
 */
export function resolveScriptIsolation(input: ScriptIsolationInput): ScriptIsolation {
  const wanted = input.user?.trim() || undefined;
  if (input.uid === undefined) return { kind: 'same-user' };
  const root = input.uid === 0;
  const user = wanted ?? (root ? DEFAULT_SCRIPT_USER : undefined);
  const own = () => contained(processContainment(input.path, { root, user: true }));
  if (user === undefined) return { kind: 'same-user', ...own() };
  const found = lookupUser(user);
  if (!found && !wanted) {
    throw new UsageError(`vnfm runs as root, so package scripts run as ${DEFAULT_SCRIPT_USER}, but this host has no user ${DEFAULT_SCRIPT_USER}`, {
      hint: `set ${SCRIPT_USER_ENV} to an existing unprivileged user, or create one for package scripts`,
    });
  }
  if (!found) {
    throw new UsageError(`${SCRIPT_USER_ENV}=${user}: no such user`, {
      hint: `name an existing unprivileged user (e.g. ${DEFAULT_SCRIPT_USER}), or create one for package scripts`,
    });
  }
  if (found.uid === input.uid) return { kind: 'same-user', ...own() };
  if (input.uid !== 0) {
    throw new UsageError(`${SCRIPT_USER_ENV}=${user}: only vnfm running as root can run package scripts as another user (vnfm runs as uid ${input.uid})`, {
      hint: `unset ${SCRIPT_USER_ENV} to run them as vnfm's own user, or run vnfm as root`,
    });
  }
  const unshare = findProgram('unshare', input.path);
  const setpriv = findProgram('setpriv', input.path);
  const namespace = unshare && setpriv && canUnshare(unshare) ? { unshare, setpriv } : undefined;
  // With a mount namespace, root makes the PID namespace too; without, the script's user makes one in a user namespace, where it can.
  const processes = processContainment(input.path, { root: Boolean(namespace), user: !namespace }, found);
  return { kind: 'other-user', user: found, hide: input.hide, ...(namespace ? { namespace } : {}), ...contained(processes) };
}

/** One line for the operation's log: whom the script runs as and what it cannot see. */
export function describeIsolation(iso: ScriptIsolation): string {
  const processes = describeProcesses(iso.processes);
  if (iso.kind === 'same-user') return `as vnfm's own user, ${processes}`;
  const who = `as ${iso.user.name} (uid ${iso.user.uid})`;
  return iso.namespace ? `${who} in a private mount namespace hiding ${iso.hide.join(', ')}, ${processes}` : `${who} (no mount namespace on this host), ${processes}`;
}

function describeProcesses(p: ScriptProcesses | undefined): string {
  if (!p) return 'what it starts followed in /proc and stopped with it';
  if (p.kind === 'subreaper') return 'what it starts stopped with it by a supervisor (no PID namespace on this host)';
  return `in a PID namespace of its own${p.userNamespace ? ' (in a user namespace)' : ''}: what it starts ends with it`;
}

/** Where a script run as another user works: a copy of the package and a HOME of its own. */
export interface ScriptWorkspace {
  root: string;
  /** The package copy: owned by root, readable by the script, not writable. */
  packageDir: string;
  /** The script's HOME and TMPDIR, owned by it. */
  home: string;
  remove(): void;
}

/**
 * Copies the package where the script's user can read it (vnfm keeps
 * packages 0700 under VNFM_HOME) and makes it a HOME. Only directories and
 * regular files are copied (a package holds nothing else); the copy is
 * cloned where the file system can.
 */
export function createScriptWorkspace(packageDir: string, user: ScriptUser): ScriptWorkspace {
  const root = mkdtempSync(join(tmpdir(), 'vnfm-script-'));
  const remove = () => rmSync(root, { recursive: true, force: true });
  try {
    const pkg = join(root, 'package');
    copyTree(packageDir, pkg);
    const home = join(root, 'home');
    mkdirSync(home, { mode: 0o700 });
    chownSync(home, user.uid, user.gid);
    // Only the script's user (and root) may enter; it cannot write into the package copy.
    chownSync(root, user.uid, user.gid);
    chmodSync(root, 0o700);
    return { root, packageDir: pkg, home, remove };
  } catch (err) {
    remove();
    throw err;
  }
}

function copyTree(from: string, to: string): void {
  mkdirSync(to, { mode: 0o755 });
  chmodSync(to, 0o755);
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const src = join(from, entry.name);
    const dst = join(to, entry.name);
    if (entry.isDirectory()) copyTree(src, dst);
    else if (entry.isFile()) {
      copyFileSync(src, dst, constants.COPYFILE_FICLONE);
      chmodSync(dst, statSync(src).mode & 0o100 ? 0o755 : 0o644);
    }
  }
}

/** The init of a script's PID namespace: it starts the script (stdin kept: an asynchronous list's is /dev/null) and exits as it did. */
const INIT = ['exec 9<&0', '"$@" 0<&9 9<&- &', 'wait $!'];

/** The program and arguments that run `command args` under the isolation, the spawn options it needs, and how its processes are contained. */
export function isolatedCommand(
  iso: ScriptIsolation,
  command: string,
  args: readonly string[],
): { command: string; args: string[]; uid?: number; gid?: number; processes: ProcessContainment } {
  const p = iso.processes;
  const inner = p?.kind === 'pid-namespace' && p.env ? [p.env, '--default-signal=INT,QUIT', command, ...args] : [command, ...args];
  const as = iso.kind === 'other-user' ? { uid: iso.user.uid, gid: iso.user.gid } : {};
  // Root makes both namespaces at once, covers each hidden directory, then becomes the script's user for good.
  if (iso.kind === 'other-user' && iso.namespace) {
    const { uid, gid } = iso.user;
    const pid = p?.kind === 'pid-namespace' && !p.userNamespace ? p : undefined;
    const mounts = iso.hide.map((_, i) => `if [ -d "$${i + 1}" ]; then mount -t tmpfs -o size=64k,mode=0755 vnfm-hidden "$${i + 1}"; fi`);
    // Without a PID namespace, `exec` keeps one process: the script's parent is vnfm and its process group the one vnfm stops.
    const shell = ['set -e', ...mounts, `shift ${iso.hide.length}`, ...(pid ? INIT : ['exec "$@"'])].join('\n');
    const setuid = [iso.namespace.setpriv, `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--'];
    const unshare = [iso.namespace.unshare, '--mount', '--propagation', 'private', ...(pid ? PID_NAMESPACE : []), '--', '/bin/sh', '-c', shell, 'vnfm-script', ...iso.hide];
    if (!pid) {
      const supervisor = p?.kind === 'subreaper' ? [p.perl, '-e', SUPERVISOR, String(p.prctl)] : [];
      return { command: unshare[0]!, args: [...unshare.slice(1), ...setuid, ...supervisor, command, ...args], processes: supervisor.length ? 'subreaper' : 'tracked' };
    }
    return { command: pid.setpriv, args: ['--pdeathsig', 'KILL', '--', ...unshare, ...setuid, ...inner], processes: 'pid-namespace' };
  }
  if (p?.kind === 'pid-namespace') {
    const unshare = [p.unshare, ...(p.userNamespace ? ['--map-current-user'] : []), ...PID_NAMESPACE, '--', '/bin/sh', '-c', INIT.join('\n'), 'vnfm-script'];
    return { command: p.setpriv, args: ['--pdeathsig', 'KILL', '--', ...unshare, ...inner], ...as, processes: 'pid-namespace' };
  }
  if (p?.kind === 'subreaper') return { command: p.perl, args: ['-e', SUPERVISOR, String(p.prctl), command, ...args], ...as, processes: 'subreaper' };
  return { command, args: [...args], ...as, processes: 'tracked' };
}
