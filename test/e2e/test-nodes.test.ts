/**
 * The simulated VMs of test/support/nodes.ts: their own addresses, sshd,
 * users and files; the stand-ins the management drivers rely on (docker
 * running the real registry, docker login really authenticating, systemctl,
 * apt-get); rebuild and cleanup.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeSSH } from 'node-ssh';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeOciImage, sha256, skopeo } from '../support/oci-image.js';
import { createNodeNetwork, type NodeNetwork, type TestNode } from '../support/nodes.js';

let net: NodeNetwork;
let a: TestNode;
let b: TestNode;
let work: string;
let imageDir: string; // an OCI layout holding one small image, tag "v1"

async function sshRun(node: TestNode, user: string, password: string, cmd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // A handshake that stalls on a loaded machine is tried again on a new connection (as vnfm's own client does).
  let ssh = new NodeSSH();
  for (let attempt = 1; ; attempt++) {
    try {
      await ssh.connect({ host: node.address, username: user, password, readyTimeout: 15_000 });
      break;
    } catch (err) {
      ssh.dispose();
      if (attempt === 3 || !/handshake/i.test(String(err))) throw err;
      ssh = new NodeSSH();
    }
  }
  try {
    return await ssh.execCommand(cmd);
  } finally {
    ssh.dispose();
  }
}

async function ok(node: TestNode, cmd: string): Promise<string> {
  const r = await node.run(cmd);
  if (r.code !== 0) throw new Error(`${node.name}: ${cmd} exited ${r.code}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** A CA and a server certificate for `address`, signed by it. */
function makeServerPki(dir: string, address: string): { ca: string; cert: string; key: string } {
  const o = (args: string[]) => execFileSync('openssl', args, { stdio: 'pipe', cwd: dir });
  o(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=test registry CA']);
  o(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${address}`]);
  writeFileSync(join(dir, 'san.ext'), `subjectAltName=IP:${address}\n`);
  o(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'san.ext']);
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return { ca: read('ca.crt'), cert: read('server.crt'), key: read('server.key') };
}

async function waitV2(url: string, expected: number): Promise<void> {
  for (let i = 0; ; i++) {
    const r = await fetch(url).then(
      (res) => res.status,
      () => 0,
    );
    if (r === expected) return;
    if (i > 200) throw new Error(`${url} answered ${r}, not ${expected}`);
    await new Promise((res) => setTimeout(res, 25));
  }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'vnfm-test-nodes-'));
  imageDir = join(work, 'oci');
  makeOciImage(imageDir, 'hello from a test image\n');
  net = await createNodeNetwork();
  [a, b] = await Promise.all([
    net.node('node-a', net.prefix + '0.10'),
    net.node('node-b', [net.prefix + '0.11', net.prefix + '1.11'], {
      docker: false,
      containerd: true,
      users: [
        { name: 'ops', password: 'secret', sudo: 'password' },
        { name: 'plain', password: 'plain', sudo: 'none' },
      ],
    }),
  ]);
});

afterAll(async () => {
  await net?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('test nodes', () => {
  it('have their own addresses, host keys, hostnames and files, and take ssh logins by password', async () => {
    expect(await a.hostKeyFingerprint()).toMatch(/^SHA256:/);
    expect(await a.hostKeyFingerprint()).not.toBe(await b.hostKeyFingerprint());

    const r = await sshRun(a, 'ubuntu', 'ubuntu', 'hostname; ip -4 -o addr show eth0; sudo -n id -u; echo hello > ~/f');
    expect(r.code).toBe(0);
    const [host, addr, uid] = r.stdout.split('\n');
    expect(host).toBe('node-a');
    expect(addr).toContain(`${a.address}/16`);
    expect(uid).toBe('0');
    expect(a.file('/home/ubuntu/f')).toBe('hello\n');
    expect(b.file('/home/ubuntu/f')).toBeUndefined();
    expect((await b.run('hostname')).stdout).toBe('node-b\n');

    // The second address answers too; sudo as configured per user.
    const second = new NodeSSH();
    await second.connect({ host: b.addresses[1], username: 'ops', password: 'secret', readyTimeout: 60_000 });
    expect((await second.execCommand('sudo -n true')).code).not.toBe(0);
    expect((await second.execCommand('sudo -S -p "" id -u', { stdin: 'secret\n' })).stdout).toBe('0');
    second.dispose();
    expect((await sshRun(b, 'plain', 'plain', 'sudo -n true')).code).not.toBe(0);
    await expect(sshRun(b, 'ops', 'wrong', 'true')).rejects.toThrow(/authentication/i);
    await expect(sshRun(b, 'ubuntu', 'ubuntu', 'true')).rejects.toThrow(/authentication/i);
  });

  it('take public keys from authorized_keys', async () => {
    const keyDir = mkdtempSync(join(work, 'key-'));
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(keyDir, 'id')]);
    const node = await net.node('node-k', net.prefix + '0.12', { users: [{ name: 'core', authorizedKeys: [readFileSync(join(keyDir, 'id.pub'), 'utf8')] }] });
    const ssh = new NodeSSH();
    await ssh.connect({ host: node.address, username: 'core', privateKey: readFileSync(join(keyDir, 'id'), 'utf8'), readyTimeout: 60_000 });
    expect((await ssh.execCommand('sudo -n whoami')).stdout).toBe('root');
    ssh.dispose();
    await expect(sshRun(node, 'core', '', 'true')).rejects.toThrow();
    await node.stop();
    expect(net.nodes().map((n) => n.name)).not.toContain('node-k');
  });

  it('run the real registry through `docker run`, and images pushed with skopeo come back', async () => {
    // docker is not installed on node-b until apt-get installs it; only root may.
    expect((await b.run('command -v docker')).code).not.toBe(0);
    expect((await sshRun(b, 'plain', 'plain', 'apt-get install -y docker.io')).code).toBe(100);
    await ok(b, 'apt-get update && apt-get install -y docker.io');
    expect(await ok(b, 'command -v docker')).toBe('/usr/local/bin/docker\n');
    expect((await sshRun(b, 'plain', 'plain', 'docker ps')).stderr).toContain('permission denied');

    const archive = join(b.root, 'tmp', 'registry.tar');
    skopeo(['copy', `oci:${imageDir}:v1`, `docker-archive:${archive}:registry:latest`]);
    const run = 'docker run -d -p 5000:5000 -v /var/lib/private-registry:/var/lib/registry --restart=always --name private_registry registry:latest';
    const missing = await b.run(run);
    expect(missing.code).toBe(125);
    expect(missing.stderr).toContain('Unable to find image');
    expect(await ok(b, 'docker load -i /tmp/registry.tar')).toBe('Loaded image: registry:latest\n');
    expect((await b.run('docker image inspect registry:latest')).code).toBe(0);
    expect((await b.run('docker image inspect nothing:here')).code).toBe(1);
    expect(await ok(b, run)).toMatch(/^[0-9a-f]{64}\n$/);
    const conflict = await b.run(run);
    expect(conflict.code).toBe(125);
    expect(conflict.stderr).toContain('already in use');

    const base = `${b.address}:5000`;
    await waitV2(`http://${base}/v2/`, 200);
    expect(await ok(b, "docker ps --filter name=private_registry --format '{{.Names}}'")).toBe('private_registry\n');
    const [info] = JSON.parse(await ok(b, 'docker inspect private_registry'));
    expect(info.State.Running).toBe(true);
    expect(info.HostConfig.PortBindings['5000/tcp'][0].HostPort).toBe('5000');
    expect(info.HostConfig.RestartPolicy.Name).toBe('always');
    expect(info.Mounts[0]).toMatchObject({ Source: '/var/lib/private-registry', Destination: '/var/lib/registry' });

    skopeo(['copy', '--dest-tls-verify=false', `oci:${imageDir}:v1`, `docker://${base}/test/hello:v1`]);
    const back = join(work, 'back');
    skopeo(['copy', '--src-tls-verify=false', `docker://${base}/test/hello:v1`, `dir:${back}`]);
    const manifest = JSON.parse(readFileSync(join(back, 'manifest.json'), 'utf8'));
    const layerDigest = manifest.layers[0].digest.replace('sha256:', '');
    expect(sha256(readFileSync(join(back, layerDigest)))).toBe(layerDigest);
    expect(b.file('/var/lib/private-registry/docker/registry/v2/repositories/test/hello/_manifests/tags/v1/current/link')).toMatch(/^sha256:/);

    await ok(b, 'docker stop private_registry');
    await waitV2(`http://${base}/v2/`, 0);
    expect(await ok(b, "docker ps -a --format '{{.Status}}'")).toMatch(/^Exited/);
    await ok(b, 'docker start private_registry');
    await waitV2(`http://${base}/v2/`, 200);
    await ok(b, 'docker rm -f private_registry');
    expect((await b.run('docker inspect private_registry')).code).toBe(1);
    await waitV2(`http://${base}/v2/`, 0);
    expect(await ok(b, 'ps -eo comm | grep -c docker-regis || true')).toBe('0\n');
  });

  it('docker login authenticates for real: TLS with the CA of certs.d, plain HTTP only for insecure registries', async () => {
    const pkiDir = mkdtempSync(join(work, 'pki-'));
    const pki = makeServerPki(pkiDir, a.address);
    const regDir = join(a.root, 'var-lib', 'reg');
    mkdirSync(regDir, { recursive: true });
    writeFileSync(join(regDir, 'server.crt'), pki.cert);
    writeFileSync(join(regDir, 'server.key'), pki.key);
    execFileSync('htpasswd', ['-B', '-b', '-c', join(regDir, 'htpasswd'), 'alice', 's3cret'], { stdio: 'pipe' });
    await ok(a, 'docker pull registry');
    const auth = '-e REGISTRY_AUTH=htpasswd -e REGISTRY_AUTH_HTPASSWD_REALM=test -e REGISTRY_AUTH_HTPASSWD_PATH=/auth/htpasswd -v /var/lib/reg:/auth';
    await ok(
      a,
      `docker run -d -p 5443:5443 -e REGISTRY_HTTP_ADDR=0.0.0.0:5443 -v /var/lib/reg:/certs -e REGISTRY_HTTP_TLS_CERTIFICATE=/certs/server.crt -e REGISTRY_HTTP_TLS_KEY=/certs/server.key ${auth} --name tls registry`,
    );
    await ok(a, `docker run -d -p 5080:5000 ${auth} --name plain registry`);
    await waitV2(`http://${a.address}:5080/v2/`, 401);

    const tlsServer = `${a.address}:5443`;
    const plainServer = `${a.address}:5080`;
    // No CA yet: the certificate is not trusted.
    let r = await b.run(`docker login -u alice -p s3cret ${tlsServer}`);
    expect(r.code).toBe(1);
    await ok(b, `mkdir -p /etc/docker/certs.d/${tlsServer}`);
    writeFileSync(join(b.root, 'etc', 'docker', 'certs.d', tlsServer, 'ca.crt'), pki.ca);
    r = await b.run(`docker login -u alice -p wrong ${tlsServer}`);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('401 Unauthorized');
    r = await b.run(`echo s3cret | docker login -u alice --password-stdin ${tlsServer}`);
    expect(r.stdout).toBe('Login Succeeded\n');
    expect(JSON.parse(b.file('/root/.docker/config.json')!).auths[tlsServer].auth).toBe(Buffer.from('alice:s3cret').toString('base64'));

    r = await b.run(`docker login -u alice -p s3cret ${plainServer}`);
    expect(r.code).toBe(1);
    writeFileSync(join(b.root, 'etc', 'docker', 'daemon.json'), JSON.stringify({ 'insecure-registries': [plainServer] }));
    // The daemon reads daemon.json when it starts.
    expect((await b.run(`docker login -u alice -p s3cret ${plainServer}`)).code).toBe(1);
    await ok(b, 'systemctl restart docker');
    expect(await ok(b, 'docker info')).toContain(`  ${plainServer}\n`);
    r = await b.run(`docker login -u alice -p wrong ${plainServer}`);
    expect(r.code).toBe(1);
    r = await b.run(`docker login -u alice -p s3cret ${plainServer}`);
    expect(r.stdout).toBe('Login Succeeded\n');
  });

  it('record restarts through systemctl, and reject a broken daemon.json', async () => {
    await ok(a, 'systemctl daemon-reload && systemctl restart docker && systemctl status docker >/dev/null');
    expect((await sshRun(a, 'ubuntu', 'ubuntu', 'systemctl restart docker')).code).not.toBe(0);
    await ok(b, 'systemctl restart containerd.service');
    expect(await ok(b, 'containerd --version')).toContain('containerd');
    expect(b.file('/etc/containerd')).toBeUndefined(); // a directory, not a file
    expect((await b.run('test -d /etc/containerd')).code).toBe(0);
    expect((await a.run('systemctl is-active containerd')).stdout).toBe('inactive\n');
    await ok(a, "mkdir -p /etc/docker && echo '{not json' > /etc/docker/daemon.json");
    expect((await a.run('systemctl restart docker')).code).toBe(1);
    expect(a.restarts()).toEqual(['docker']);
    expect(b.restarts()).toEqual(['docker', 'containerd']);
  });

  it('rebuild: a new VM at the same address, the data volume kept', async () => {
    await ok(b, 'mkdir -p /var/lib/private-registry && echo data > /var/lib/private-registry/x && echo gone > /var/lib/other');
    const before = await b.hostKeyFingerprint();
    await b.rebuild();
    expect(await b.hostKeyFingerprint()).not.toBe(before);
    expect(b.file('/var/lib/private-registry/x')).toBe('data\n');
    expect(b.file('/var/lib/other')).toBeUndefined();
    expect(b.file('/root/.docker/config.json')).toBeUndefined();
    expect(b.restarts()).toEqual([]);
    expect((await b.run('command -v docker')).code).not.toBe(0); // back to the image: docker not installed
    expect((await sshRun(b, 'ops', 'secret', 'hostname')).stdout).toBe('node-b');
  });

  it('a node without sshd has its address but nothing on port 22', async () => {
    const quiet = await net.node('quiet', net.prefix + '0.13', { sshd: false });
    expect((await quiet.run('ip -4 -o addr show eth0')).stdout).toContain(quiet.address);
    await expect(sshRun(quiet, 'ubuntu', 'ubuntu', 'true')).rejects.toThrow(/ECONNREFUSED/);
  });

  it('close() leaves no namespace, bridge or process behind', async () => {
    const prefix = `vnfm${net.prefix.split('.')[1]}.${process.pid}.`;
    const ourNamespaces = () =>
      execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
        .split('\n')
        .map((l) => l.split(' ')[0])
        .filter((n) => n.startsWith(prefix));
    const ourBridge = () => execFileSync('ip', ['-o', 'link', 'show', 'type', 'bridge'], { encoding: 'utf8' }).includes(`alias vnfm-test-pid-${process.pid}`);
    const namespaces = ourNamespaces();
    expect(namespaces).toHaveLength(3);
    expect(ourBridge()).toBe(true);
    const pids = namespaces.flatMap((ns) => execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).trim().split('\n'));
    const comms = pids.map((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim());
    expect(comms).toEqual(expect.arrayContaining(['unshare', 'bash', 'sshd', 'docker-registry']));
    await net.close();
    await net.close();
    expect(ourNamespaces()).toEqual([]);
    expect(ourBridge()).toBe(false);
    const alive = pids.filter((pid) => existsSync(`/proc/${pid}`)).map((pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').slice(0, 40));
    expect(alive).toEqual([]);
  });
});
