/**
 * The contents of the files that connect a node's container runtimes to
 * private registries, computed from what the node has (pure: nothing here
 * touches a node): Docker's `daemon.json`, containerd's `hosts.toml` and
 * `config_path` in `config.toml`, and `/etc/hosts` lines.
 */
import { VnfmError } from '../../errors.js';
import type { RegistryConnection } from './registry-connections.js';

export const DOCKER_DAEMON_JSON = '/etc/docker/daemon.json';
export const DOCKER_CERTS_DIR = '/etc/docker/certs.d';
export const CONTAINERD_CONFIG = '/etc/containerd/config.toml';
export const CONTAINERD_CERTS_DIR = '/etc/containerd/certs.d';
export const ETC_HOSTS = '/etc/hosts';

/**
 * `daemon.json` with `insecure` added to `insecure-registries`, every other
 * key kept. `changed` is false (and `text` the input) when they are all there.
 */
export function mergeDaemonJson(existing: string | undefined, insecure: readonly string[], path = DOCKER_DAEMON_JSON): { text: string; changed: boolean } {
  let config: Record<string, unknown> = {};
  if (existing !== undefined && existing.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(existing);
    } catch (err) {
      throw new VnfmError(`${path} is not valid JSON (${(err as Error).message}); vnfm does not overwrite it`, {
        hint: `fix or remove ${path} on the node, then retry the operation`,
      });
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new VnfmError(`${path} is not a JSON object; vnfm does not overwrite it`, { hint: `fix ${path} on the node, then retry the operation` });
    }
    config = parsed as Record<string, unknown>;
  }
  const current = config['insecure-registries'] ?? [];
  if (!Array.isArray(current) || !current.every((s) => typeof s === 'string')) {
    throw new VnfmError(`${path}: "insecure-registries" is not a list of strings; vnfm does not overwrite it`, { hint: `fix ${path} on the node, then retry the operation` });
  }
  const missing = [...new Set(insecure)].filter((s) => !current.includes(s));
  if (missing.length === 0) return { text: existing ?? '', changed: false };
  return { text: `${JSON.stringify({ ...config, 'insecure-registries': [...current, ...missing] }, null, 2)}\n`, changed: true };
}

/** containerd's `hosts.toml` for one registry; `caPath` is where its CA is on the node (HTTPS with a CA). */
export function containerdHostsToml(connection: Pick<RegistryConnection, 'connectionType' | 'server'>, caPath?: string): string {
  const url = `${connection.connectionType === 0 ? 'http' : 'https'}://${connection.server}`;
  return [
    `# Private registry ${connection.server} over ${connection.connectionType === 0 ? 'HTTP' : 'HTTPS'}, written by vnfm.`,
    `server = "${url}"`,
    '',
    `[host."${url}"]`,
    '  capabilities = ["pull", "resolve"]',
    ...(caPath ? [`  ca = "${caPath}"`] : []),
    '',
  ].join('\n');
}

const REGISTRY_SECTIONS = ['[plugins."io.containerd.grpc.v1.cri".registry]', '[plugins."io.containerd.cri.v1.images".registry]', '[plugins.cri.registry]'];

/**
 * Makes containerd's `config.toml` point `config_path` at a hosts directory.
 * A config_path already set is kept (its first directory is where
 * `hosts.toml` goes); an empty one is set; a missing one is added under the
 * CRI registry section (added itself when absent, named for the file's
 * version: `io.containerd.cri.v1.images` for 3, `io.containerd.grpc.v1.cri`
 * for 2, `cri` for 1). A file
 * that still configures registries the deprecated way (`registry.mirrors`,
 * `registry.configs`) is refused: containerd will not start with both.
 */
export function ensureContainerdConfigPath(existing: string | undefined, path = CONTAINERD_CONFIG): { text: string; changed: boolean; certsDir: string } {
  const want = `config_path = "${CONTAINERD_CERTS_DIR}"`;
  if (existing === undefined || existing.trim() === '') {
    return { text: `version = 2\n\n${REGISTRY_SECTIONS[0]}\n  ${want}\n`, changed: true, certsDir: CONTAINERD_CERTS_DIR };
  }
  const lines = existing.split('\n');
  const header = (l: string) => /^\s*\[/.test(l);
  const start = lines.findIndex((l) => REGISTRY_SECTIONS.includes(l.trim().replace(/\s+/g, '')) || REGISTRY_SECTIONS.includes(l.trim()));
  if (start >= 0) {
    let end = lines.findIndex((l, i) => i > start && header(l));
    if (end < 0) end = lines.length;
    for (let i = start + 1; i < end; i++) {
      const m = /^(\s*)config_path\s*=\s*(?:"([^"]*)"|'([^']*)')\s*(#.*)?$/.exec(lines[i]!);
      if (!m) continue;
      const value = m[2] ?? m[3] ?? '';
      if (value !== '') return { text: existing, changed: false, certsDir: value.split(':')[0]! };
      lines[i] = `${m[1]}${want}`;
      return { text: lines.join('\n'), changed: true, certsDir: CONTAINERD_CERTS_DIR };
    }
  }
  if (/registry\.(mirrors|configs)\b/.test(existing)) {
    throw new VnfmError(
      `${path} configures registries with registry.mirrors/registry.configs, which containerd does not allow beside config_path; vnfm cannot add config_path = "${CONTAINERD_CERTS_DIR}" safely`,
      {
        hint: `move those settings to hosts.toml files and set config_path = "${CONTAINERD_CERTS_DIR}" under the CRI registry section of ${path}, then retry`,
      },
    );
  }
  if (start >= 0) {
    lines.splice(start + 1, 0, `  ${want}`);
    return { text: lines.join('\n'), changed: true, certsDir: CONTAINERD_CERTS_DIR };
  }
  // The section's name depends on the file's format version: containerd
  // reads a file without `version` as version 1, where plugins go by short name.
  const version = /^\s*version\s*=\s*(\d+)/m.exec(existing)?.[1] ?? '1';
  const section = version === '3' ? REGISTRY_SECTIONS[1] : version === '2' ? REGISTRY_SECTIONS[0] : REGISTRY_SECTIONS[2];
  const text = `${existing}${existing.endsWith('\n') ? '' : '\n'}\n${section}\n  ${want}\n`;
  return { text, changed: true, certsDir: CONTAINERD_CERTS_DIR };
}

/** `/etc/hosts` with each line appended unless a line with the same fields is already there. */
export function appendHostsLines(existing: string, add: readonly string[]): { text: string; changed: boolean } {
  const norm = (l: string) => l.trim().split(/\s+/).join(' ');
  const have = new Set(existing.split('\n').map(norm));
  const missing: string[] = [];
  for (const line of add) {
    if (!have.has(norm(line))) {
      missing.push(norm(line));
      have.add(norm(line));
    }
  }
  if (missing.length === 0) return { text: existing, changed: false };
  const base = existing === '' || existing.endsWith('\n') ? existing : `${existing}\n`;
  return { text: `${base}${missing.join('\n')}\n`, changed: true };
}
