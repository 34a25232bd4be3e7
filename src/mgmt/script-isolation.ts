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
 */
import { spawnSync } from 'node:child_process';
import { accessSync, chmodSync, chownSync, constants, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { UsageError } from '../errors.js';

/** The account a script runs as. */
export interface ScriptUser {
  name: string;
  uid: number;
  gid: number;
}

/** How package scripts are run; see the module's comment. */
export type ScriptIsolation =
  | { kind: 'same-user' }
  | {
      kind: 'other-user';
      user: ScriptUser;
      /** Directories covered by an empty tmpfs in the script's mount namespace (VNFM_HOME). */
      hide: readonly string[];
      /** `unshare` and `setpriv`, when a private mount namespace can be made; else the user is switched alone. */
      namespace?: { unshare: string; setpriv: string };
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

/** Whether this host lets vnfm make a mount namespace (a container without CAP_SYS_ADMIN does not). */
function canUnshare(unshare: string): boolean {
  const r = spawnSync(unshare, ['--mount', '--propagation', 'private', '--', 'true'], { stdio: 'ignore', timeout: 10_000 });
  return !r.error && r.status === 0;
}

/**
 * Decides how package scripts run for this vnfm process. Throws a
 * UsageError for a VNFM_SCRIPT_USER that does not exist, or that names
 * another user while vnfm is not root.
 */
export function resolveScriptIsolation(input: ScriptIsolationInput): ScriptIsolation {
  const wanted = input.user?.trim() || undefined;
  if (input.uid === undefined) return { kind: 'same-user' };
  const user = wanted ?? (input.uid === 0 ? DEFAULT_SCRIPT_USER : undefined);
  if (user === undefined) return { kind: 'same-user' };
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
  if (found.uid === input.uid) return { kind: 'same-user' };
  if (input.uid !== 0) {
    throw new UsageError(`${SCRIPT_USER_ENV}=${user}: only vnfm running as root can run package scripts as another user (vnfm runs as uid ${input.uid})`, {
      hint: `unset ${SCRIPT_USER_ENV} to run them as vnfm's own user, or run vnfm as root`,
    });
  }
  const unshare = findProgram('unshare', input.path);
  const setpriv = findProgram('setpriv', input.path);
  return {
    kind: 'other-user',
    user: found,
    hide: input.hide,
    ...(unshare && setpriv && canUnshare(unshare) ? { namespace: { unshare, setpriv } } : {}),
  };
}

/** One line for the operation's log: whom the script runs as and what it cannot see. */
export function describeIsolation(iso: ScriptIsolation): string {
  if (iso.kind === 'same-user') return "as vnfm's own user";
  const who = `as ${iso.user.name} (uid ${iso.user.uid})`;
  return iso.namespace ? `${who} in a private mount namespace hiding ${iso.hide.join(', ')}` : `${who} (no mount namespace on this host)`;
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

/** The program and arguments that run `command args` under the isolation, and the spawn options it needs. */
export function isolatedCommand(iso: ScriptIsolation, command: string, args: readonly string[]): { command: string; args: string[]; uid?: number; gid?: number } {
  if (iso.kind === 'same-user') return { command, args: [...args] };
  const { uid, gid } = iso.user;
  if (!iso.namespace) return { command, args: [...args], uid, gid };
  // Root inside the new mount namespace covers each hidden directory, then
  // becomes the script's user for good: `exec` keeps one process, so the
  // script's parent is vnfm (root) and its process group is the one vnfm stops.
  const mounts = iso.hide.map((_, i) => `if [ -d "$${i + 1}" ]; then mount -t tmpfs -o size=64k,mode=0755 vnfm-hidden "$${i + 1}"; fi`);
  const shell = ['set -e', ...mounts, `shift ${iso.hide.length}`, 'exec "$@"'].join('\n');
  return {
    command: iso.namespace.unshare,
    args: [
      '--mount',
      '--propagation',
      'private',
      '--',
      '/bin/sh',
      '-c',
      shell,
      'vnfm-script',
      ...iso.hide,
      iso.namespace.setpriv,
      `--reuid=${uid}`,
      `--regid=${gid}`,
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--no-new-privs',
      '--',
      command,
      ...args,
    ],
  };
}
