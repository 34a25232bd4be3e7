import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError, VnfmError } from '../../src/errors.js';
import {
  appendHostsLines,
  containerdHostsToml,
  ensureContainerdConfigPath,
  mergeDaemonJson,
  parseRegistryConnections,
} from '../../src/mgmt/kubernetes-mgmt/registry-connections.js';

const FIELD = 'additionalParams.k8s_cluster_installation_param.private_registry_connection_info';
let pkg: string;
let outside: string;

beforeAll(() => {
  pkg = mkdtempSync(join(tmpdir(), 'vnfm-regconn-pkg-'));
  outside = mkdtempSync(join(tmpdir(), 'vnfm-regconn-out-'));
  mkdirSync(join(pkg, 'Files', 'registries'), { recursive: true });
  writeFileSync(join(pkg, 'Files', 'registries', 'ca.crt'), '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
  writeFileSync(join(outside, 'ca.crt'), 'outside');
  symlinkSync(join(outside, 'ca.crt'), join(pkg, 'Files', 'registries', 'escape.crt'));
});
afterAll(() => {
  rmSync(pkg, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const parse = (value: unknown) => parseRegistryConnections('instantiate.json', FIELD, value, pkg);

function parseError(value: unknown): ValidationError {
  try {
    parse(value);
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return err as ValidationError;
  }
  throw new Error('no error thrown');
}

describe('parseRegistryConnections', () => {
  it('reads the seed example: types as strings, credentials, a CA of the package, a hosts line', () => {
    expect(
      parse([
        { connection_type: '0', server: '192.168.0.10:5000' },
        {
          connection_type: '1',
          server: 'registry.example.com',
          username: 'user01',
          password: 'user01',
          certificate_path: 'Files/registries/ca.crt',
          hosts_string: '192.168.0.20 registry.example.com',
        },
      ]),
    ).toEqual([
      { connectionType: 0, server: '192.168.0.10:5000' },
      {
        connectionType: 1,
        server: 'registry.example.com',
        username: 'user01',
        password: 'user01',
        certificatePath: 'Files/registries/ca.crt',
        hostsString: '192.168.0.20 registry.example.com',
      },
    ]);
  });

  it('takes numbers, bracketed IPv6 servers, HTTPS without a CA, aliases in hosts_string; nothing given is no connection', () => {
    expect(parse([{ connection_type: 1, server: '[fd00::10]:443', hosts_string: '  fd00::10 reg.example.com reg  ' }])).toEqual([
      { connectionType: 1, server: '[fd00::10]:443', hostsString: 'fd00::10 reg.example.com reg' },
    ]);
    expect(parse(undefined)).toEqual([]);
    expect(parse([])).toEqual([]);
  });

  it.each([
    ['connection_type 2', [{ connection_type: 2, server: 'a:5000' }], '[0].connection_type', /must be 0 \(HTTP\) or 1 \(HTTPS\), not 2/],
    ['connection_type "x"', [{ connection_type: 'x', server: 'a:5000' }], '[0].connection_type', /not "x"/],
    ['connection_type missing', [{ server: 'a:5000' }], '[0].connection_type', /not missing/],
    ['a scheme', [{ connection_type: 0, server: 'http://a:5000' }], '[0].server', /must not have a scheme \("http:\/\/"\)/],
    ['port 99999', [{ connection_type: 0, server: 'a:99999' }], '[0].server', /port "99999" is not a number from 1 to 65535/],
    ['port 0', [{ connection_type: 0, server: 'a:0' }], '[0].server', /port "0"/],
    ['a path', [{ connection_type: 0, server: 'a/b' }], '[0].server', /must not have a path/],
    ['a bad IPv4', [{ connection_type: 0, server: '192.168.0.300:5000' }], '[0].server', /"192.168.0.300" is neither a host name nor an IPv4 address/],
    ['an IPv6 without brackets', [{ connection_type: 0, server: 'fd00::1' }], '[0].server', /more than one ":"/],
    ['a space', [{ connection_type: 0, server: 'a b' }], '[0].server', /neither a host name/],
    ['no server', [{ connection_type: 0 }], '[0].server', /must be a string/],
    [
      'twice the same server',
      [
        { connection_type: 0, server: 'A:5000' },
        { connection_type: 1, server: 'a:5000' },
      ],
      '[1].server',
      /also .*\[0\]/,
    ],
    ['username without password', [{ connection_type: 0, server: 'a', username: 'u' }], '[0].password', /give username and password together/],
    ['password without username', [{ connection_type: 0, server: 'a', password: 'p' }], '[0].username', /is missing/],
    ['a CA outside the package', [{ connection_type: 1, server: 'a', certificate_path: '../ca.crt' }], '[0].certificate_path', /leaves the package/],
    ['an absolute CA path', [{ connection_type: 1, server: 'a', certificate_path: '/etc/ssl/ca.crt' }], '[0].certificate_path', /absolute path/],
    ['a missing CA', [{ connection_type: 1, server: 'a', certificate_path: 'Files/registries/none.crt' }], '[0].certificate_path', /not a file of the package/],
    ['a directory as CA', [{ connection_type: 1, server: 'a', certificate_path: 'Files/registries' }], '[0].certificate_path', /not a file of the package/],
    ['a CA linking out', [{ connection_type: 1, server: 'a', certificate_path: 'Files/registries/escape.crt' }], '[0].certificate_path', /links outside the package/],
    ['a CA for HTTP', [{ connection_type: 0, server: 'a', certificate_path: 'Files/registries/ca.crt' }], '[0].certificate_path', /only for HTTPS/],
    ['hosts_string without a name', [{ connection_type: 0, server: 'a', hosts_string: '192.168.0.20' }], '[0].hosts_string', /<IP address> <FQDN>/],
    ['hosts_string with a bad IP', [{ connection_type: 0, server: 'a', hosts_string: '192.168.0.999 reg.example.com' }], '[0].hosts_string', /not an IP address/],
    ['hosts_string on two lines', [{ connection_type: 0, server: 'a', hosts_string: '192.168.0.20 a\n10.0.0.1 b' }], '[0].hosts_string', /single line/],
    ['hosts_string with a bad name', [{ connection_type: 0, server: 'a', hosts_string: '192.168.0.20 reg_example!' }], '[0].hosts_string', /not a host name/],
    ['a typo in a key', [{ connection_type: 0, server: 'a', certficate_path: 'x' }], '[0].certficate_path', /not a registry connection parameter/],
    ['not a list', { connection_type: 0, server: 'a' }, '', /must be a list/],
    ['an entry that is not an object', ['a:5000'], '[0]', /must be an object/],
  ])('refuses %s, naming the entry and field', (_name, value, at, message) => {
    const err = parseError(value);
    expect(err.field).toBe(`${FIELD}${at}`);
    expect(err.file).toBe('instantiate.json');
    expect(err.message).toMatch(message);
  });

  it('never puts a password in a message', () => {
    const err = parseError([{ connection_type: 0, server: 'http://a', username: 'u', password: 's3cret-pw' }]);
    expect(err.message).not.toContain('s3cret-pw');
    expect(err.hint).toMatch(/host\[:port\]/);
  });
});

describe('mergeDaemonJson', () => {
  it('creates the file with the insecure registries when there is none', () => {
    expect(mergeDaemonJson(undefined, ['10.0.0.1:5000'])).toEqual({ text: '{\n  "insecure-registries": [\n    "10.0.0.1:5000"\n  ]\n}\n', changed: true });
  });

  it('keeps every other key and the registries already listed, adding each one once', () => {
    const existing = JSON.stringify({ 'log-driver': 'json-file', 'exec-opts': ['native.cgroupdriver=systemd'], 'insecure-registries': ['old:5000', 'a:5000'] });
    const r = mergeDaemonJson(existing, ['a:5000', 'b:5000', 'b:5000']);
    expect(r.changed).toBe(true);
    expect(JSON.parse(r.text)).toEqual({ 'log-driver': 'json-file', 'exec-opts': ['native.cgroupdriver=systemd'], 'insecure-registries': ['old:5000', 'a:5000', 'b:5000'] });
    expect(mergeDaemonJson(r.text, ['b:5000', 'a:5000'])).toEqual({ text: r.text, changed: false });
  });

  it('leaves a file alone when nothing is to be added, even without insecure-registries', () => {
    expect(mergeDaemonJson('{"debug": true}', [])).toEqual({ text: '{"debug": true}', changed: false });
    expect(mergeDaemonJson(undefined, [])).toEqual({ text: '', changed: false });
  });

  it('refuses to overwrite a file it cannot read', () => {
    expect(() => mergeDaemonJson('{"debug": tru', ['a:5000'])).toThrow(/daemon.json is not valid JSON.*does not overwrite/);
    expect(() => mergeDaemonJson('[1]', ['a:5000'])).toThrow(VnfmError);
    expect(() => mergeDaemonJson('{"insecure-registries": "a"}', ['a:5000'])).toThrow(/not a list of strings/);
  });
});

describe('containerdHostsToml', () => {
  it('HTTP: the server and host over http, pull and resolve', () => {
    expect(containerdHostsToml({ connectionType: 0, server: '10.0.0.1:5000' })).toBe(
      [
        '# Private registry 10.0.0.1:5000 over HTTP, written by vnfm.',
        'server = "http://10.0.0.1:5000"',
        '',
        '[host."http://10.0.0.1:5000"]',
        '  capabilities = ["pull", "resolve"]',
        '',
      ].join('\n'),
    );
  });

  it('HTTPS with a CA: the CA path beside the file', () => {
    const text = containerdHostsToml({ connectionType: 1, server: 'reg.example.com' }, '/etc/containerd/certs.d/reg.example.com/ca.crt');
    expect(text).toContain('server = "https://reg.example.com"\n');
    expect(text).toContain('[host."https://reg.example.com"]\n  capabilities = ["pull", "resolve"]\n  ca = "/etc/containerd/certs.d/reg.example.com/ca.crt"\n');
    expect(containerdHostsToml({ connectionType: 1, server: 'reg.example.com' })).not.toContain('ca =');
  });
});

describe('ensureContainerdConfigPath', () => {
  const want = 'config_path = "/etc/containerd/certs.d"';

  it('writes a minimal version 2 file when there is none', () => {
    expect(ensureContainerdConfigPath(undefined)).toEqual({
      text: `version = 2\n\n[plugins."io.containerd.grpc.v1.cri".registry]\n  ${want}\n`,
      changed: true,
      certsDir: '/etc/containerd/certs.d',
    });
  });

  it('fills the empty config_path of a generated default file, keeping the rest', () => {
    const existing =
      'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "pause:3.9"\n  [plugins."io.containerd.grpc.v1.cri".registry]\n    config_path = ""\n\n    [plugins."io.containerd.grpc.v1.cri".registry.auths]\n';
    const r = ensureContainerdConfigPath(existing);
    expect(r.changed).toBe(true);
    expect(r.text).toBe(existing.replace('config_path = ""', want));
    expect(ensureContainerdConfigPath(r.text)).toEqual({ text: r.text, changed: false, certsDir: '/etc/containerd/certs.d' });
  });

  it('keeps a config_path already set and uses its first directory', () => {
    const existing = 'version = 2\n[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "/srv/hosts:/etc/docker/certs.d"\n';
    expect(ensureContainerdConfigPath(existing)).toEqual({ text: existing, changed: false, certsDir: '/srv/hosts' });
  });

  it('adds config_path to a registry section without one, or the section named for the file version', () => {
    const withSection = 'version = 2\n[plugins."io.containerd.grpc.v1.cri".registry]\n[other]\n  config_path = "/not/this"\n';
    expect(ensureContainerdConfigPath(withSection).text).toBe(`version = 2\n[plugins."io.containerd.grpc.v1.cri".registry]\n  ${want}\n[other]\n  config_path = "/not/this"\n`);
    expect(ensureContainerdConfigPath('version = 3\nroot = "/var/lib/containerd"').text).toBe(
      `version = 3\nroot = "/var/lib/containerd"\n\n[plugins."io.containerd.cri.v1.images".registry]\n  ${want}\n`,
    );
    expect(ensureContainerdConfigPath('root = "/var/lib/containerd"\n').text).toBe(`root = "/var/lib/containerd"\n\n[plugins.cri.registry]\n  ${want}\n`);
  });

  it('refuses a file configuring registries the deprecated way', () => {
    const existing = 'version = 2\n[plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]\n  endpoint = ["https://mirror"]\n';
    expect(() => ensureContainerdConfigPath(existing)).toThrow(/registry.mirrors.*config_path/);
  });
});

describe('appendHostsLines', () => {
  const base = '127.0.0.1 localhost\n10.0.0.5 node1\n';

  it('appends each line once and is a no-op when run again', () => {
    const r = appendHostsLines(base, ['192.168.0.20 registry.example.com', '192.168.0.20   registry.example.com']);
    expect(r).toEqual({ text: `${base}192.168.0.20 registry.example.com\n`, changed: true });
    expect(appendHostsLines(r.text, ['192.168.0.20 registry.example.com'])).toEqual({ text: r.text, changed: false });
  });

  it('counts a line with the same fields but other spacing as present; ends the file with a newline first', () => {
    expect(appendHostsLines('127.0.0.1 localhost\n10.1.1.1\treg.example\n', ['10.1.1.1 reg.example']).changed).toBe(false);
    expect(appendHostsLines('127.0.0.1 localhost', ['10.1.1.1 reg.example']).text).toBe('127.0.0.1 localhost\n10.1.1.1 reg.example\n');
  });
});

describe('insecureRegistriesOf', () => {
  it('reads the list docker info prints, up to the next section', async () => {
    const { insecureRegistriesOf } = await import('../../src/mgmt/kubernetes-mgmt/registry-connections.js');
    const info = 'Server:\n Containers: 0\n Insecure Registries:\n  10.0.0.5:5000\n  127.0.0.0/8\n Live Restore Enabled: false\n';
    expect(insecureRegistriesOf(info)).toEqual(['10.0.0.5:5000', '127.0.0.0/8']);
    expect(insecureRegistriesOf('Server:\n Containers: 0\n')).toEqual([]);
  });
});
