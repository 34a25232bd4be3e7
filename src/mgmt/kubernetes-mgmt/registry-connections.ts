/**
 * Connections from a Kubernetes cluster's nodes to private container
 * registries (seed 004, `k8s_cluster_installation_param.
 * private_registry_connection_info[]`): for each node, the container
 * runtimes it has are told how to reach each registry, `/etc/hosts` gets the
 * registry's name when the cluster has no DNS for it, and Docker logs in when
 * credentials are given.
 *
 * Docker: `/etc/docker/daemon.json` `insecure-registries` (HTTP),
 * `/etc/docker/certs.d/<server>/ca.crt` (HTTPS with a CA). containerd:
 * `<config_path>/<server>/hosts.toml` (and `ca.crt` beside it), with
 * `config_path` set in `/etc/containerd/config.toml` when it is not.
 *
 * Idempotent: files are read first and written only when their content
 * differs; a runtime is restarted only when a file it reads at start-up
 * changed (`daemon.json`, `config.toml`; both runtimes read `certs.d` and
 * `hosts.toml` on every pull, as their documentation says). A retry after a
 * failure half-way finishes the job and changes nothing already done.
 */
import { realpathSync, readFileSync, statSync } from 'node:fs';
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { isAbsolute, join, posix, relative, sep } from 'node:path';
import { echo, ValidationError, VnfmError } from '../../errors.js';
import { shellQuote as quote } from '../ssh/quote.js';
import type { SshSession } from '../ssh/types.js';
import {
  appendHostsLines,
  containerdHostsToml,
  CONTAINERD_CERTS_DIR,
  CONTAINERD_CONFIG,
  DOCKER_CERTS_DIR,
  DOCKER_DAEMON_JSON,
  ensureContainerdConfigPath,
  ETC_HOSTS,
  mergeDaemonJson,
} from './registry-files.js';

export {
  appendHostsLines,
  containerdHostsToml,
  CONTAINERD_CERTS_DIR,
  CONTAINERD_CONFIG,
  DOCKER_CERTS_DIR,
  DOCKER_DAEMON_JSON,
  ensureContainerdConfigPath,
  ETC_HOSTS,
  mergeDaemonJson,
} from './registry-files.js';

/** One entry of `private_registry_connection_info`, checked. */
export interface RegistryConnection {
  /** 0: HTTP (an insecure registry for Docker), 1: HTTPS. */
  connectionType: 0 | 1;
  /** `host[:port]`: a host name, an IPv4 address or a bracketed IPv6 address. */
  server: string;
  username?: string;
  password?: string;
  /** The registry's CA certificate: a file of the package, relative to its root (HTTPS only). */
  certificatePath?: string;
  /** One `/etc/hosts` line: `<IP> <FQDN> [aliases...]`. */
  hostsString?: string;
}

/** What configuring one node did. */
export interface RegistryConfigResult {
  /** Files written on the node (absolute paths), in the order written. */
  changed: string[];
  /** Runtimes restarted (`docker`, `containerd`). */
  restarted: string[];
  /** Servers Docker logged in to. */
  loggedIn: string[];
  /** Things worth telling the operator (a login that does not apply to containerd, ...). */
  notes: string[];
}

export interface ConfigureRegistryOptions {
  /** The onboarded package's unpacked members (certificate_path is relative to it). */
  packageDir: string;
  signal?: AbortSignal;
  /** Short progress lines for the operation (what changed, what was restarted). */
  report?(message: string): void;
}

const KNOWN_KEYS = ['connection_type', 'server', 'username', 'password', 'certificate_path', 'hosts_string'];
const SERVER_HINT = 'give host[:port] without a scheme or path, e.g. "192.168.0.10:5000", "registry.example.com" or "[fd00::10]:5000"; connection_type says HTTP (0) or HTTPS (1)';
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** A DNS host name (labels of letters, digits and inner hyphens), not an all-numeric dotted string. */
function isHostName(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.replace(/\.$/, '').split('.');
  if (!labels.every((l) => LABEL.test(l))) return false;
  // 1.2.3.999 is a bad address, not a name.
  return !/^[0-9.]+$/.test(name);
}

/** Why `server` is not `host[:port]`, or undefined when it is. */
export function serverProblem(server: string): string | undefined {
  if (server.trim() !== server || server === '') return 'must be host[:port] with no spaces';
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(server)) return `must not have a scheme ("${server.slice(0, server.indexOf(':'))}://")`;
  if (server.includes('/')) return 'must not have a path';
  let host: string;
  let port: string | undefined;
  const v6 = /^\[([^\]]+)\](?::(.*))?$/.exec(server);
  if (v6) {
    host = v6[1]!;
    port = v6[2];
    if (!isIPv6(host)) return `"[${host}]" is not an IPv6 address`;
  } else {
    const parts = server.split(':');
    if (parts.length > 2) return 'has more than one ":" (write an IPv6 address in brackets: "[fd00::10]:5000")';
    host = parts[0]!;
    port = parts[1];
    if (/^[0-9.]+$/.test(host) ? !isIPv4(host) : !isHostName(host)) return `${echo(host)} is neither a host name nor an IPv4 address`;
  }
  if (port !== undefined && !(/^[0-9]{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535)) {
    return `port "${port}" is not a number from 1 to 65535`;
  }
  return undefined;
}

/** Why `hosts_string` is not one `/etc/hosts` line `<IP> <FQDN> [aliases]`, or undefined when it is. */
export function hostsStringProblem(value: string): string | undefined {
  if (/[\r\n]/.test(value)) return 'must be a single line';
  const fields = value.trim().split(/\s+/);
  if (fields.length < 2 || fields[0] === '') return 'must be "<IP address> <FQDN> [aliases...]"';
  if (isIP(fields[0]!) === 0) return `"${fields[0]}" is not an IP address`;
  const bad = fields.slice(1).find((n) => !isHostName(n));
  if (bad !== undefined) return `${echo(bad)} is not a host name`;
  return undefined;
}

function checkCertificatePath(source: string, field: string, path: string, packageDir: string): string {
  const hint = 'give the path of a file inside the package, relative to its root, e.g. "Files/registries/ca.crt"';
  const normal = posix.normalize(path.replace(/\\/g, '/'));
  if (isAbsolute(path) || posix.isAbsolute(normal) || /^[A-Za-z]:/.test(path)) {
    throw new ValidationError(source, field, `${echo(path)} is an absolute path; it must name a file of the package`, { hint });
  }
  if (normal === '..' || normal.startsWith('../') || path.split(/[\\/]/).includes('..')) {
    throw new ValidationError(source, field, `${echo(path)} leaves the package ("..")`, { hint });
  }
  const full = join(packageDir, normal);
  let isFile = false;
  try {
    isFile = statSync(full).isFile();
  } catch {
    isFile = false;
  }
  if (!isFile) throw new ValidationError(source, field, `${echo(path)} is not a file of the package`, { hint });
  // A symbolic link inside the package must not lead out of it.
  const inside = relative(realpathSync(packageDir), realpathSync(full));
  if (inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside)) {
    throw new ValidationError(source, field, `${echo(path)} links outside the package`, { hint });
  }
  return normal;
}

function optionalString(source: string, field: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value === '') throw new ValidationError(source, field, 'must be a non-empty string');
  return value;
}

/**
 * Checks `additionalParams.k8s_cluster_installation_param.private_registry_connection_info`
 * (`field` is that path, `source` the request file). Absent → no connections.
 * Throws ValidationError naming the entry (`field[i].key`) and the fix.
 */
export function parseRegistryConnections(source: string, field: string, value: unknown, packageDir: string): RegistryConnection[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    throw new ValidationError(source, field, 'must be a list of connections [{"connection_type": 0, "server": "host:port"}, ...]');
  }
  const seen = new Map<string, number>();
  return value.map((entry: unknown, i): RegistryConnection => {
    const at = `${field}[${i}]`;
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) {
      throw new ValidationError(source, at, 'must be an object {"connection_type": 0|1, "server": "host:port", ...}');
    }
    const e = entry as Record<string, unknown>;
    const unknown = Object.keys(e).filter((k) => !KNOWN_KEYS.includes(k));
    if (unknown.length > 0) {
      throw new ValidationError(source, `${at}.${unknown[0]}`, 'is not a registry connection parameter', { hint: `known parameters: ${KNOWN_KEYS.join(', ')}` });
    }

    const type = e['connection_type'];
    if (!(type === 0 || type === 1 || type === '0' || type === '1')) {
      throw new ValidationError(source, `${at}.connection_type`, `must be 0 (HTTP) or 1 (HTTPS), not ${JSON.stringify(type) ?? 'missing'}`);
    }
    const connectionType = Number(type) as 0 | 1;

    const server = e['server'];
    if (typeof server !== 'string') throw new ValidationError(source, `${at}.server`, 'must be a string host[:port]', { hint: SERVER_HINT });
    const problem = serverProblem(server);
    if (problem) throw new ValidationError(source, `${at}.server`, `${echo(server)} ${problem}`, { hint: SERVER_HINT });
    const key = server.toLowerCase();
    if (seen.has(key)) {
      throw new ValidationError(source, `${at}.server`, `${echo(server)} is also ${field}[${seen.get(key)}]: one entry per registry`);
    }
    seen.set(key, i);

    const username = optionalString(source, `${at}.username`, e['username']);
    const password = optionalString(source, `${at}.password`, e['password']);
    if ((username === undefined) !== (password === undefined)) {
      throw new ValidationError(source, `${at}.${username === undefined ? 'username' : 'password'}`, 'is missing: give username and password together, or neither');
    }
    if (username !== undefined && /[\s'"]/.test(username)) {
      throw new ValidationError(source, `${at}.username`, 'must not contain spaces or quotes');
    }

    const certificate = optionalString(source, `${at}.certificate_path`, e['certificate_path']);
    let certificatePath: string | undefined;
    if (certificate !== undefined) {
      if (connectionType !== 1) {
        throw new ValidationError(source, `${at}.certificate_path`, 'is only for HTTPS connections (connection_type 1)', {
          hint: 'use connection_type 1 for a registry with a TLS certificate, or remove certificate_path for an HTTP registry',
        });
      }
      certificatePath = checkCertificatePath(source, `${at}.certificate_path`, certificate, packageDir);
    }

    const hosts = optionalString(source, `${at}.hosts_string`, e['hosts_string']);
    if (hosts !== undefined) {
      const bad = hostsStringProblem(hosts);
      if (bad) {
        throw new ValidationError(source, `${at}.hosts_string`, bad, { hint: 'one /etc/hosts line, e.g. "192.168.0.20 registry.example.com"' });
      }
    }

    return {
      connectionType,
      server,
      ...(username !== undefined ? { username, password } : {}),
      ...(certificatePath !== undefined ? { certificatePath } : {}),
      ...(hosts !== undefined ? { hostsString: hosts.trim() } : {}),
    };
  });
}

// ---- one node ----

interface PlannedFile {
  path: string;
  content: string;
  runtime?: 'docker' | 'containerd';
  /** Restart the runtime when this file changes. */
  restart?: boolean;
}

interface NodeState {
  docker: boolean;
  containerd: boolean;
  /** Content of each file asked for; absent files are not in the map. */
  files: Map<string, string>;
}

/**
 * Which runtimes the node has and what the files hold, in one command (a
 * node is a few round trips, not one per file). Its output is kept out of the
 * log (it is the files' content); the command line, naming the files, is logged.
 */
async function readNodeState(session: SshSession, paths: readonly string[]): Promise<NodeState> {
  const script = [
    'if command -v docker >/dev/null 2>&1; then echo "@runtime docker"; fi',
    'if command -v containerd >/dev/null 2>&1 || [ -d /etc/containerd ]; then echo "@runtime containerd"; fi',
    `for f in ${paths.map(quote).join(' ')}; do if [ -f "$f" ]; then echo "@file $f"; base64 < "$f" || exit 1; echo "@end"; fi; done`,
  ].join('; ');
  const r = await session.exec(script, { sudo: true, quiet: true, timeoutMs: 60_000 });
  const state: NodeState = { docker: false, containerd: false, files: new Map() };
  let current: string | undefined;
  let chunks: string[] = [];
  for (const line of r.stdout.split('\n')) {
    if (line === '@runtime docker') state.docker = true;
    else if (line === '@runtime containerd') state.containerd = true;
    else if (line.startsWith('@file ')) {
      current = line.slice(6);
      chunks = [];
    } else if (line === '@end' && current !== undefined) {
      state.files.set(current, Buffer.from(chunks.join(''), 'base64').toString('utf8'));
      current = undefined;
    } else if (current !== undefined) chunks.push(line.trim());
  }
  return state;
}

/**
 * Installs the files (root-owned, 0644, parent directories made) in one sudo
 * command: their content goes on stdin, base64 blocks in the order the
 * command line names the files.
 */
async function installFiles(session: SshSession, files: readonly PlannedFile[]): Promise<void> {
  const script =
    `set -e; for f in ${files.map((f) => quote(f.path)).join(' ')}; do t=$(mktemp); ` +
    `while IFS= read -r l && [ "$l" != "@end" ]; do printf '%s\\n' "$l"; done | base64 -d > "$t"; ` +
    `install -D -m 0644 "$t" "$f"; rm -f "$t"; done`;
  const stdin = files
    .map(
      (f) =>
        `${Buffer.from(f.content)
          .toString('base64')
          .replace(/(.{76})/g, '$1\n')}\n@end\n`,
    )
    .join('');
  await session.exec(script, { sudo: true, stdin, timeoutMs: 60_000 });
}

function readCa(packageDir: string, connection: RegistryConnection): string | undefined {
  if (connection.connectionType !== 1 || !connection.certificatePath) return undefined;
  return readFileSync(join(packageDir, connection.certificatePath), 'utf8');
}

/** The `Insecure Registries:` list of `docker info`: what the running daemon loaded. */
export function insecureRegistriesOf(info: string): string[] {
  const lines = info.split('\n');
  const start = lines.findIndex((l) => l.trim() === 'Insecure Registries:');
  if (start < 0) return [];
  const indent = (l: string) => l.length - l.trimStart().length;
  const own = indent(lines[start]!);
  const out: string[] = [];
  for (const l of lines.slice(start + 1)) {
    if (!l.trim() || indent(l) <= own) break;
    out.push(l.trim());
  }
  return out;
}

/**
 * Configures one node's container runtimes for `connections` (see the file's
 * comment): idempotent, every change through sudo, each command in the
 * session's (redacted) log. A node takes a few commands whatever the number
 * of connections: one reading, one writing, one restarting, one per login.
 * Throws VnfmError naming the node for a file it will not overwrite, a node
 * with neither runtime, or a failed login (the command and its output, never
 * the password).
 */
export async function configureRegistryConnections(session: SshSession, connections: readonly RegistryConnection[], opts: ConfigureRegistryOptions): Promise<RegistryConfigResult> {
  const node = session.target.label;
  const result: RegistryConfigResult = { changed: [], restarted: [], loggedIn: [], notes: [] };
  if (connections.length === 0) return result;
  const step = () => opts.signal?.throwIfAborted();
  const onNode = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      if (err instanceof VnfmError) throw new VnfmError(`${node}: ${err.message}`, { ...(err.hint ? { hint: err.hint } : {}), cause: err });
      throw err;
    }
  };
  const cas = new Map(connections.map((c) => [c.server, readCa(opts.packageDir, c)] as const));
  const hostsLines = connections.flatMap((c) => (c.hostsString ? [c.hostsString] : []));
  const containerdFiles = (dir: string) =>
    connections.flatMap((c): PlannedFile[] => {
      const ca = cas.get(c.server);
      const caPath = ca ? `${dir}/${c.server}/ca.crt` : undefined;
      return [
        ...(ca && caPath ? [{ path: caPath, content: ca, runtime: 'containerd' as const }] : []),
        { path: `${dir}/${c.server}/hosts.toml`, content: containerdHostsToml(c, caPath), runtime: 'containerd' as const },
      ];
    });

  // Everything the plan depends on, read at once (both runtimes' files: which
  // runtimes there are is learnt by the same command).
  step();
  const wanted = [
    ...(hostsLines.length > 0 ? [ETC_HOSTS] : []),
    DOCKER_DAEMON_JSON,
    ...connections.filter((c) => cas.get(c.server)).map((c) => `${DOCKER_CERTS_DIR}/${c.server}/ca.crt`),
    CONTAINERD_CONFIG,
    ...containerdFiles(CONTAINERD_CERTS_DIR).map((f) => f.path),
  ];
  const state = await readNodeState(session, wanted);
  if (!state.docker && !state.containerd) {
    throw new VnfmError(
      `${node}: neither docker nor containerd is installed, so no container runtime can be told about the registries ${connections.map((c) => c.server).join(', ')}`,
      {
        hint: 'install the cluster (its container runtime) on the node before configuring registry connections',
      },
    );
  }

  const plan: PlannedFile[] = [];
  const want = (file: PlannedFile) => {
    if (state.files.get(file.path) !== file.content) plan.push(file);
  };
  if (state.docker) {
    const insecure = connections.filter((c) => c.connectionType === 0).map((c) => c.server);
    const daemon = onNode(() => mergeDaemonJson(state.files.get(DOCKER_DAEMON_JSON), insecure));
    if (daemon.changed) plan.push({ path: DOCKER_DAEMON_JSON, content: daemon.text, runtime: 'docker', restart: true });
    for (const c of connections) {
      const ca = cas.get(c.server);
      if (ca) want({ path: `${DOCKER_CERTS_DIR}/${c.server}/ca.crt`, content: ca, runtime: 'docker' });
    }
  }
  if (state.containerd) {
    const config = onNode(() => ensureContainerdConfigPath(state.files.get(CONTAINERD_CONFIG)));
    if (config.changed) plan.push({ path: CONTAINERD_CONFIG, content: config.text, runtime: 'containerd', restart: true });
    const files = containerdFiles(config.certsDir.replace(/\/+$/, '') || CONTAINERD_CERTS_DIR);
    // A config_path of the node's own: its files were not read yet.
    const unread = files.map((f) => f.path).filter((p) => !wanted.includes(p));
    if (unread.length > 0) for (const [path, text] of (await readNodeState(session, unread)).files) state.files.set(path, text);
    files.forEach(want);
  }
  if (hostsLines.length > 0) {
    const hosts = appendHostsLines(state.files.get(ETC_HOSTS) ?? '', hostsLines);
    if (hosts.changed) plan.push({ path: ETC_HOSTS, content: hosts.text });
  }

  if (plan.length > 0) {
    step();
    await installFiles(session, plan);
    result.changed.push(...plan.map((f) => f.path));
    opts.report?.(`${node}: wrote ${result.changed.join(', ')}`);
  }

  const restart: ('docker' | 'containerd')[] = (['docker', 'containerd'] as const).filter((runtime) => plan.some((f) => f.runtime === runtime && f.restart));
  const insecure = connections.filter((c) => c.connectionType === 0).map((c) => c.server);
  if (state.docker && !restart.includes('docker') && insecure.length > 0) {
    // daemon.json already right, but is the running daemon? (an earlier attempt may have stopped between writing it and the restart)
    step();
    const info = await session.exec('docker info', { sudo: true, allowFailure: true, quiet: true, timeoutMs: 60_000 });
    const loaded = insecureRegistriesOf(info.stdout);
    if (info.code !== 0 || insecure.some((s) => !loaded.includes(s))) restart.unshift('docker');
  }
  if (restart.length > 0) {
    step();
    await session.exec(`systemctl restart ${restart.join(' ')}`, { sudo: true, timeoutMs: 180_000 });
    result.restarted.push(...restart);
    opts.report?.(`${node}: restarted ${restart.join(', ')}`);
  }

  for (const c of connections) {
    if (c.username === undefined || c.password === undefined) continue;
    if (!state.docker) {
      result.notes.push(`${c.server}: no login on a containerd node: containerd takes registry credentials from the cluster (imagePullSecrets)`);
      continue;
    }
    step();
    await dockerLogin(session, c.server, c.username, c.password);
    result.loggedIn.push(c.server);
    opts.report?.(`${node}: docker logged in to ${c.server} as ${c.username}`);
  }
  for (const note of result.notes) opts.report?.(`${node}: ${note}`);
  return result;
}

/** `docker login`, the password on stdin; a failure names node, command and output, never the password. */
async function dockerLogin(session: SshSession, server: string, username: string, password: string): Promise<void> {
  const command = `docker login -u ${quote(username)} --password-stdin ${quote(server)}`;
  const r = await session.exec(command, { sudo: true, stdin: `${password}\n`, allowFailure: true, timeoutMs: 120_000 });
  if (r.code === 0) return;
  const scrub = (s: string) => s.split(password).join('***');
  const output = scrub(`${r.stdout}\n${r.stderr}`.trim()).split('\n').slice(-20).join('\n');
  throw new VnfmError(`${session.target.label}: \`${command}\` exited ${r.code}${output ? `; its last output:\n${output}` : ''}`, {
    hint: `check username and password of ${server} in private_registry_connection_info (and that the registry answers from the node), then retry the operation`,
  });
}
