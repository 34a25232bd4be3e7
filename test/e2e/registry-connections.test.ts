/**
 * Registry connections on real nodes: each node is a real sshd in its own
 * network and mount namespaces (test/support/nodes.ts) with the docker,
 * containerd and systemctl stand-ins; two real registries (Debian's
 * docker-registry) listen on the nodes' bridge: one over HTTP, one over
 * HTTPS with htpasswd (bcrypt) users and a certificate from a CA made here.
 * The nodes reach the HTTPS one by a name only the hosts_string gives them.
 * What the driver did is checked from outside: the nodes' files, the
 * restarts the systemctl stand-in saw, and the docker stand-in's login
 * against the registry.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VnfmError } from '../../src/errors.js';
import { configureRegistryConnections, parseRegistryConnections, type RegistryConfigResult, type RegistryConnection } from '../../src/mgmt/kubernetes-mgmt/registry-connections.js';
import { connectSsh, forEachNode, type HostKeyStore, type PinnedHostKey, type SshSession } from '../../src/mgmt/ssh/index.js';
import { createNodeNetwork, type NodeNetwork, type TestNode } from '../support/nodes.js';

const REGISTRY_NAME = 'registry.vnfm.test';
const USER = 'puller';
const PASSWORD = 'Pull-3r-s3cret';

interface Registry {
  url: string;
  process: ChildProcess;
}

let work: string;
let pkg: string;
let net: NodeNetwork;
let httpRegistry: Registry;
let httpsRegistry: Registry;
let caPem: string;
const logs: string[] = [];
const registries: ChildProcess[] = [];

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A CA and a server certificate for REGISTRY_NAME and the gateway's address. */
function makeCertificates(dir: string, address: string): void {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=vnfm registry test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${REGISTRY_NAME}`);
  writeFileSync(join(dir, 'server.ext'), `subjectAltName=DNS:${REGISTRY_NAME},IP:${address}\nextendedKeyUsage=serverAuth\n`);
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'server.ext');
}

/** Starts docker-registry on address:port, over TLS with htpasswd users when `tls` is given. */
async function startRegistry(name: string, address: string, tls?: { cert: string; key: string; htpasswd: string }): Promise<Registry> {
  const dir = join(work, name);
  mkdirSync(join(dir, 'data'), { recursive: true });
  const port = await freePort(address);
  const config = [
    'version: 0.1',
    'log:',
    '  level: warn',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${join(dir, 'data')}`,
    'http:',
    `  addr: ${address}:${port}`,
    ...(tls ? ['  tls:', `    certificate: ${tls.cert}`, `    key: ${tls.key}`, 'auth:', '  htpasswd:', '    realm: vnfm-test', `    path: ${tls.htpasswd}`] : []),
    '',
  ].join('\n');
  writeFileSync(join(dir, 'config.yml'), config);
  const child = spawn('/usr/bin/docker-registry', ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  registries.push(child);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const url = `${tls ? 'https' : 'http'}://${address}:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`docker-registry ${name} exited: ${stderr}`);
    const status = await v2Status(url).catch(() => 0);
    if (status === 200 || status === 401) return { url, process: child };
    if (Date.now() > deadline) throw new Error(`docker-registry ${name} did not answer on ${url}: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The HTTP status of GET /v2/ (the CA of this test trusted). */
async function v2Status(base: string, auth?: string): Promise<number> {
  if (base.startsWith('http:')) {
    const r = await fetch(`${base}/v2/`, auth ? { headers: { authorization: auth } } : {});
    return r.status;
  }
  return new Promise((resolve, reject) => {
    const req = request(`${base}/v2/`, { ca: caPem, headers: auth ? { authorization: auth } : {} }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

const memoryHostKeys = (): HostKeyStore => {
  const keys = new Map<string, PinnedHostKey>();
  return {
    get: async (id) => keys.get(id),
    pin: async (k) => void keys.set(k.serverId, k),
    forget: async (ids) => ids.forEach((id) => keys.delete(id)),
  };
};
const hostKeys = memoryHostKeys();

function connect(node: TestNode): Promise<SshSession> {
  return connectSsh(
    { host: node.address, username: 'ubuntu', password: 'ubuntu', serverId: `server-${node.name}`, label: `${node.name} (${node.address})` },
    { hostKeys, signal: AbortSignal.timeout(120_000), log: (l) => logs.push(l), secrets: [PASSWORD], retry: { totalMs: 20_000, minMs: 200, maxMs: 1_000 } },
  );
}

/** Connects to each node, configures it, disconnects. */
async function configureAll(nodes: TestNode[], connections: readonly RegistryConnection[]): Promise<RegistryConfigResult[]> {
  return forEachNode(
    nodes,
    10,
    (n) => n.name,
    async (node) => {
      const session = await connect(node);
      try {
        return await configureRegistryConnections(session, connections, { packageDir: pkg });
      } finally {
        session.close();
      }
    },
  );
}

let connections: RegistryConnection[];
let dockerNode: TestNode;
let bothNode: TestNode;
let containerdNode: TestNode;
/** Its user's sudo asks for the password (sent on stdin ahead of the files). */
let sudoPasswordNode: TestNode;
let first: RegistryConfigResult[];
let httpServer: string;
let httpsServer: string;
let hostsLine: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'vnfm-regconn-'));
  net = await createNodeNetwork();
  makeCertificates(work, net.gateway);
  caPem = readFileSync(join(work, 'ca.crt'), 'utf8');
  const htpasswd = execFileSync('htpasswd', ['-Bin', USER], { input: `${PASSWORD}\n`, encoding: 'utf8' });
  writeFileSync(join(work, 'htpasswd'), htpasswd);
  [httpRegistry, httpsRegistry] = await Promise.all([
    startRegistry('http', net.gateway),
    startRegistry('https', net.gateway, { cert: join(work, 'server.crt'), key: join(work, 'server.key'), htpasswd: join(work, 'htpasswd') }),
  ]);

  pkg = join(work, 'package');
  mkdirSync(join(pkg, 'Files', 'registries'), { recursive: true });
  writeFileSync(join(pkg, 'Files', 'registries', 'ca.crt'), caPem);

  const base = net.prefix;
  [dockerNode, bothNode, containerdNode, sudoPasswordNode] = await Promise.all([
    net.node('master1', `${base}0.11`),
    net.node('worker1', `${base}0.21`, { containerd: true }),
    net.node('worker2', `${base}0.22`, { docker: false, containerd: true }),
    net.node('worker3', `${base}0.23`, { containerd: true, users: [{ name: 'ubuntu', password: 'ubuntu', sudo: 'password' }] }),
  ]);
  // A Docker configured before: its other settings must survive.
  await dockerNode.run(`mkdir -p /etc/docker && printf '%s' '{"log-driver": "json-file", "insecure-registries": ["old.example:5000"]}' > /etc/docker/daemon.json`);

  httpServer = new URL(httpRegistry.url).host;
  httpsServer = `${REGISTRY_NAME}:${new URL(httpsRegistry.url).port}`;
  hostsLine = `${net.gateway} ${REGISTRY_NAME}`;
  connections = parseRegistryConnections(
    'instantiate.json',
    'private_registry_connection_info',
    [
      { connection_type: '0', server: httpServer },
      { connection_type: '1', server: httpsServer, username: USER, password: PASSWORD, certificate_path: 'Files/registries/ca.crt', hosts_string: hostsLine },
    ],
    pkg,
  );
  first = await configureAll([dockerNode, bothNode, containerdNode, sudoPasswordNode], connections);
}, 180_000);

afterAll(async () => {
  for (const child of registries) {
    try {
      process.kill(child.pid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  await net?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const hostsToml = (server: string, scheme: 'http' | 'https', ca?: string) =>
  [
    `# Private registry ${server} over ${scheme.toUpperCase()}, written by vnfm.`,
    `server = "${scheme}://${server}"`,
    '',
    `[host."${scheme}://${server}"]`,
    '  capabilities = ["pull", "resolve"]',
    ...(ca ? [`  ca = "${ca}"`] : []),
    '',
  ].join('\n');

describe('registry connections on real nodes', () => {
  it('the registries run: HTTP open, HTTPS asking for the user', async () => {
    expect(await v2Status(httpRegistry.url)).toBe(200);
    expect(await v2Status(httpsRegistry.url)).toBe(401);
    expect(await v2Status(httpsRegistry.url, `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`)).toBe(200);
  });

  it('a Docker node: daemon.json keeps its keys and lists the HTTP registry once, the CA under certs.d, /etc/hosts, docker restarted, logged in', () => {
    expect(JSON.parse(dockerNode.file('/etc/docker/daemon.json')!)).toEqual({ 'log-driver': 'json-file', 'insecure-registries': ['old.example:5000', httpServer] });
    expect(dockerNode.file(`/etc/docker/certs.d/${httpsServer}/ca.crt`)).toBe(caPem);
    expect(dockerNode.file(`/etc/docker/certs.d/${httpServer}/ca.crt`)).toBeUndefined();
    expect(
      dockerNode
        .file('/etc/hosts')!
        .split('\n')
        .filter((l) => l === hostsLine),
    ).toHaveLength(1);
    expect(dockerNode.file('/etc/containerd/config.toml')).toBeUndefined();
    expect(first[0]).toEqual({
      changed: ['/etc/docker/daemon.json', `/etc/docker/certs.d/${httpsServer}/ca.crt`, '/etc/hosts'],
      restarted: ['docker'],
      loggedIn: [httpsServer],
      notes: [],
    });
    expect(dockerNode.restarts()).toEqual(['docker']);
    // The docker stand-in logged in against the HTTPS registry: its credentials are stored for that server only.
    const auths = JSON.parse(dockerNode.file('/root/.docker/config.json')!).auths as Record<string, { auth: string }>;
    expect(Object.keys(auths)).toEqual([httpsServer]);
    expect(Buffer.from(auths[httpsServer]!.auth, 'base64').toString()).toBe(`${USER}:${PASSWORD}`);
  });

  it.each([
    ['sudo without a password', () => bothNode, 1],
    ['sudo asking for the password', () => sudoPasswordNode, 3],
  ])('a node with Docker and containerd (%s): both runtimes configured, config_path set, both restarted, logged in', (_how, nodeOf, index) => {
    const bothNode = nodeOf();
    expect(JSON.parse(bothNode.file('/etc/docker/daemon.json')!)).toEqual({ 'insecure-registries': [httpServer] });
    expect(bothNode.file(`/etc/docker/certs.d/${httpsServer}/ca.crt`)).toBe(caPem);
    expect(bothNode.file(`/etc/containerd/certs.d/${httpServer}/hosts.toml`)).toBe(hostsToml(httpServer, 'http'));
    const ca = `/etc/containerd/certs.d/${httpsServer}/ca.crt`;
    expect(bothNode.file(`/etc/containerd/certs.d/${httpsServer}/hosts.toml`)).toBe(hostsToml(httpsServer, 'https', ca));
    expect(bothNode.file(ca)).toBe(caPem);
    expect(bothNode.file('/etc/containerd/config.toml')).toBe('version = 2\n\n[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "/etc/containerd/certs.d"\n');
    expect(bothNode.restarts().sort()).toEqual(['containerd', 'docker']);
    expect(first[index]!.loggedIn).toEqual([httpsServer]);
    expect(Object.keys(JSON.parse(bothNode.file('/root/.docker/config.json')!).auths)).toEqual([httpsServer]);
  });

  it('a containerd-only node: hosts.toml and no daemon.json; login said not to apply', () => {
    expect(containerdNode.file('/etc/docker/daemon.json')).toBeUndefined();
    expect(containerdNode.file(`/etc/docker/certs.d/${httpsServer}/ca.crt`)).toBeUndefined();
    expect(containerdNode.file(`/etc/containerd/certs.d/${httpServer}/hosts.toml`)).toBe(hostsToml(httpServer, 'http'));
    expect(containerdNode.file(`/etc/containerd/certs.d/${httpsServer}/ca.crt`)).toBe(caPem);
    expect(
      containerdNode
        .file('/etc/hosts')!
        .split('\n')
        .filter((l) => l === hostsLine),
    ).toHaveLength(1);
    expect(containerdNode.restarts()).toEqual(['containerd']);
    expect(first[2]!.loggedIn).toEqual([]);
    expect(first[2]!.notes).toEqual([`${httpsServer}: no login on a containerd node: containerd takes registry credentials from the cluster (imagePullSecrets)`]);
  });

  it('every change went through sudo, and the log never holds the password', () => {
    const text = logs.join('\n');
    // One sudo command installs a node's files, naming them; what the files hold stays out of the log.
    const install = logs.filter((l) => l.startsWith(`master1 (${dockerNode.address}) $ sudo set -e; for f in `));
    expect(install).toHaveLength(1);
    expect(install[0]).toContain(`'/etc/docker/daemon.json' '/etc/docker/certs.d/${httpsServer}/ca.crt' '/etc/hosts'`);
    expect(text).not.toContain(caPem.split('\n')[1]);
    expect(text).toContain(`worker1 (${bothNode.address}) $ sudo systemctl restart docker containerd`);
    expect(text).toContain('docker login -u');
    expect(text).not.toContain(PASSWORD);
  });

  it('running again changes nothing and restarts nothing', async () => {
    const all = [dockerNode, bothNode, containerdNode, sudoPasswordNode];
    const before = all.map((n) => ({ hosts: n.file('/etc/hosts'), daemon: n.file('/etc/docker/daemon.json'), restarts: n.restarts() }));
    const again = await configureAll(all, connections);
    for (const r of again) {
      expect(r.changed).toEqual([]);
      expect(r.restarted).toEqual([]);
    }
    expect(again[0]!.loggedIn).toEqual([httpsServer]);
    expect(all.map((n) => ({ hosts: n.file('/etc/hosts'), daemon: n.file('/etc/docker/daemon.json'), restarts: n.restarts() }))).toEqual(before);
  });

  it('daemon.json already right but not loaded (an attempt stopped before the restart): docker is restarted', async () => {
    const late = 'late.example:5000';
    await dockerNode.run(`printf '%s' '${JSON.stringify({ 'log-driver': 'json-file', 'insecure-registries': ['old.example:5000', httpServer, late] })}' > /etc/docker/daemon.json`);
    const restartsBefore = dockerNode.restarts().length;
    const withLate = parseRegistryConnections(
      'instantiate.json',
      'private_registry_connection_info',
      [
        { connection_type: 0, server: httpServer },
        { connection_type: 0, server: late },
      ],
      pkg,
    );
    const [r] = await configureAll([dockerNode], withLate);
    expect(r!.changed).toEqual([]);
    expect(r!.restarted).toEqual(['docker']);
    expect(dockerNode.restarts().slice(restartsBefore)).toEqual(['docker']);
    const [again] = await configureAll([dockerNode], withLate);
    expect(again!.restarted).toEqual([]);
  });

  it("a wrong password: the node, the command and the registry's answer, never the password", async () => {
    const wrong = 'Wr0ng-pa55word';
    const bad = parseRegistryConnections(
      'instantiate.json',
      'private_registry_connection_info',
      [{ connection_type: 1, server: httpsServer, username: USER, password: wrong, certificate_path: 'Files/registries/ca.crt', hosts_string: hostsLine }],
      pkg,
    );
    const session = await connect(dockerNode);
    const err = await configureRegistryConnections(session, bad, { packageDir: pkg }).then(
      () => expect.unreachable('the login should fail'),
      (e: unknown) => e,
    );
    session.close();
    expect(err).toBeInstanceOf(VnfmError);
    const message = (err as VnfmError).message;
    expect(message).toContain(`master1 (${dockerNode.address})`);
    expect(message).toContain(`docker login -u '${USER}' --password-stdin '${httpsServer}'`);
    expect(message).toMatch(/unauthorized|401/i);
    expect(message).not.toContain(wrong);
    expect(logs.join('\n')).not.toContain(wrong);
  });
});
