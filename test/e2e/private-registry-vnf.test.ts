/**
 * The private-registry-vnf sample through the real program, on the test
 * Keystone and Heat (stand-in Nova and Neutron), its server a simulated VM:
 * a real sshd in its own namespaces at the port's address, booted and
 * rebuilt by a watcher of the stack (test/support/heat-nodes.ts), whose
 * docker stand-in runs the real registry. Checked from outside as a user
 * would: the registry answers on the server's address, an image pushed with
 * skopeo comes back, a heal keeps it, and no password is kept in clear.
 * Faults: a refused login and a `docker run` that fails half-way end
 * FAILED_TEMP and op-retry completes; a server that never answers runs into
 * --timeout.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, vnfm, type RunResult, okStdoutWith } from '../support/cli.js';
import { heatEnvironmentFor, watchStackNodes, type StackNodes } from '../support/heat-nodes.js';
import { makeOciImage, skopeo } from '../support/oci-image.js';
import { useOpenStack, type OpenStackServers, openStackVimConfig } from '../support/heat.js';
import { createNodeNetwork, type NodeNetwork, type NodeOptions, type TestNode } from '../support/nodes.js';

const SAMPLE = resolve('csar-samples/private-registry-vnf');
const VNFD_ID = '8c1f5a2e-3d4b-4e6f-9a7c-2b5d8e0f1a33';
const PASSWORD = 'Reg1stry-s3cret-7f3a';
const LONG = 300_000;

let os: OpenStackServers;
let net: NodeNetwork;
let home: string;
let work: string;
const watchers: StackNodes[] = [];

const run = (args: string[]): Promise<RunResult> => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okStdoutWith((args) => run(args));

interface Shown {
  instantiationState: string;
  instantiatedVnfInfo?: {
    vnfcInfo: Array<{ id: string; vduId: string }>;
    vnfcResourceInfo: Array<{ id: string; metadata: { addresses: Record<string, string[]> } }>;
    metadata: { mgmt?: Record<string, Record<string, unknown>> };
  };
}
const show = async (vnf: string) => JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])) as Shown;
const lastOp = async (vnf: string) =>
  (JSON.parse(await ok(['op-list', '--vnf', vnf, '-o', 'json'])) as Array<{ id: string; operation: string; operationState: string; startTime: string }>)
    .sort((a, b) => a.startTime.localeCompare(b.startTime))
    .at(-1)!;

async function inNode(node: TestNode, cmd: string): Promise<string> {
  const r = await node.run(cmd);
  if (r.code !== 0) throw new Error(`${node.name}: ${cmd} exited ${r.code}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** A request body from the sample's, with the test's network, password and extra parameters. */
function request(name: string, params: Record<string, unknown> = {}): string {
  const body = JSON.parse(readFileSync(join(SAMPLE, 'requests/instantiate.json'), 'utf8').replace('REPLACE-WITH-EXTERNAL-NETWORK-ID', 'net-public-1')) as {
    additionalParams: { private_registry_installation_param: Record<string, unknown> };
  };
  Object.assign(body.additionalParams.private_registry_installation_param, { ssh_password: PASSWORD, ...params });
  const file = join(work, name);
  writeFileSync(file, JSON.stringify(body, null, 2));
  return file;
}

/** A new instance with its stack watcher; the server's node comes up at `address`. */
async function newInstance(name: string, address: string, nodeOptions: NodeOptions = {}) {
  const vnf = JSON.parse(await ok(['vnf-create', '--package', VNFD_ID, '--name', name, '-o', 'json'])).id as string;
  const env = await heatEnvironmentFor(net, join(work, `env-${name}`), { CP1: address });
  const nodes = watchStackNodes(net, { heat: { heat: os.heat, keystone: os.keystone }, stackName: `vnf-${vnf}`, node: () => nodeOptions });
  watchers.push(nodes);
  return { vnf, env, nodes };
}

/** Pulls the image back into a fresh OCI layout and returns hello.txt from its layer. */
function pullBack(address: string, port: number, into: string): string {
  skopeo(['copy', '--src-tls-verify=false', `docker://${address}:${port}/samples/hello:v1`, `oci:${into}:v1`]);
  const index = JSON.parse(readFileSync(join(into, 'index.json'), 'utf8')) as { manifests: Array<{ digest: string }> };
  const manifest = JSON.parse(readFileSync(join(into, 'blobs/sha256', index.manifests[0]!.digest.slice(7)), 'utf8')) as { layers: Array<{ digest: string }> };
  return execFileSync('tar', ['-xzOf', join(into, 'blobs/sha256', manifest.layers[0]!.digest.slice(7)), './hello.txt'], { encoding: 'utf8' });
}

/** Every file under VNFM_HOME (the database, its WAL, keys, logs): none may hold the password. */
function filesHolding(dir: string, secret: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (readFileSync(p).includes(Buffer.from(secret))) found.push(p);
    }
  };
  walk(dir);
  return found;
}

beforeAll(async () => {
  [os, net] = await Promise.all([useOpenStack(), createNodeNetwork()]);
  home = newHome();
  work = dirname(home);
  const vimConfig = join(work, 'vim.yaml');
  writeFileSync(vimConfig, openStackVimConfig(os.keystone));
  await ok(['vim-register', '--config-file', vimConfig, '--is-default', 'os1']);
  await ok(['vnfpkg-build', join(SAMPLE, 'package'), '-o', join(work, 'registry.zip')]);
  await ok(['vnfpkg-onboard', join(work, 'registry.zip')]);
  makeOciImage(join(work, 'oci-src'), 'hello from the private registry test\n');
}, LONG);

afterAll(async () => {
  await Promise.all(watchers.map((w) => w.close()));
  await net?.close();
  await os?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

/** Starts the server's sshd (it booted without): until then vnfm retries connecting. */
async function startSshd(node: TestNode): Promise<void> {
  await inNode(node, '/usr/sbin/sshd -f /etc/ssh/sshd_config');
}

/** Resolves once the watcher has done what `pattern` matches. */
async function watcherDid(nodes: StackNodes, pattern: RegExp): Promise<void> {
  for (let i = 0; i < 1200 && !nodes.events().some((e) => pattern.test(e)); i++) await new Promise((r) => setTimeout(r, 100));
  expect(nodes.events().join('\n')).toMatch(pattern);
}

describe('the private-registry-vnf sample on Heat with a simulated server', () => {
  let vnf: string;
  let address: string;
  let nodes: StackNodes;

  it(
    'instantiate: a docker run that fails half-way ends FAILED_TEMP naming server, command and output; op-retry completes; the registry serves pushed images',
    async () => {
      address = `${net.prefix}0.10`;
      // The server's image has no Docker (apt-get installs it) and its sshd comes up late: the test starts it.
      const created = await newInstance('registry', address, { docker: false, sshd: false, users: [{ name: 'ubuntu', password: PASSWORD, sudo: 'nopasswd' }] });
      ({ vnf, nodes } = created);

      const instantiating = run(['vnf-instantiate', vnf, '--request-file', request('instantiate.json'), '--heat-environment', created.env]);
      const [node] = await nodes.ready(1);
      // Before vnfm gets in, something else takes port 5000 on the server.
      await inNode(
        node!,
        'apt-get install -y docker.io >/dev/null && docker pull registry:latest >/dev/null && docker run -d -p 5000:5000 -v /tmp/squat:/var/lib/registry --name squatter registry:latest',
      );
      await startSshd(node!);
      const halfway = await instantiating;
      expect(halfway.code).toBe(1);
      expect(halfway.stderr).toMatch(
        /PrivateRegistryVDU \(10\.\d+\.0\.10\): `sudo docker run -d -p 5000:5000 -v \/var\/lib\/private-registry:\/var\/lib\/registry --restart=always --name private_registry registry:latest` exited with code 125; its last output:\n.*port is already allocated/,
      );
      expect(halfway.stderr).not.toContain(PASSWORD);
      const op = await lastOp(vnf);
      expect(op).toMatchObject({ operation: 'INSTANTIATE', operationState: 'FAILED_TEMP' });
      const log = await ok(['op-log', op.id]);
      expect(log).toContain('docker load -i');
      expect(log).toContain('Loaded image: registry:latest');
      expect(log).toContain('port is already allocated');
      expect(log).not.toContain(PASSWORD);

      // The server was reinstalled meanwhile (the same server, a new host key, no squatter): the retry stops at the changed key…
      const pinned = await node!.hostKeyFingerprint();
      await node!.rebuild();
      await startSshd(node!);
      expect(await node!.hostKeyFingerprint()).not.toBe(pinned);
      const stopped = await run(['op-retry', op.id]);
      expect(stopped.code).toBe(1);
      const changed = /the SSH host key of server (\S+) at (\S+) changed: pinned (\S+), now (\S+);/.exec(stopped.stderr);
      expect(changed?.slice(2)).toEqual([address, pinned, await node!.hostKeyFingerprint()]);
      const serverId = changed![1]!;
      expect(stopped.stderr).toContain(`--accept-host-key ${serverId}`);
      expect((await lastOp(vnf)).operationState).toBe('FAILED_TEMP');
      // …until the operator accepts it; the retry keeps what is done and finishes the rest.
      const retried = await run(['op-retry', op.id, '--accept-host-key', serverId, '-o', 'json']);
      expect(retried.code, retried.stderr).toBe(0);
      expect(JSON.parse(retried.stdout).operationState).toBe('COMPLETED');
      expect(await inNode(node!, "docker ps --format '{{.Names}} {{.Ports}}'")).toBe('private_registry 0.0.0.0:5000->5000/tcp\n');

      // From outside, as a client of the registry.
      expect((await fetch(`http://${address}:5000/v2/`)).status).toBe(200);
      skopeo(['copy', '--dest-tls-verify=false', `oci:${join(work, 'oci-src')}:v1`, `docker://${address}:5000/samples/hello:v1`]);
      expect(pullBack(address, 5000, join(work, 'pulled-1'))).toBe('hello from the private registry test\n');
      expect(await inNode(node!, 'ls /var/lib/private-registry/docker/registry/v2/repositories/samples')).toBe('hello\n');

      // The parameters are kept for heal, the password sealed; nothing under VNFM_HOME holds it in clear.
      const recorded = (await show(vnf)).instantiatedVnfInfo!.metadata.mgmt!['private-registry-mgmt']!;
      expect(recorded).toMatchObject({ ssh_cp_name: 'CP1', ssh_username: 'ubuntu', port_no: 5000, image_path: 'Files/images/private_registry.tar' });
      // Shown masked, as vim-show masks a VIM's secrets (the store keeps it sealed).
      expect(recorded['ssh_password']).toBe('***');
      expect(filesHolding(home, PASSWORD)).toEqual([]);
    },
    LONG,
  );

  it(
    'heal of the VNFC: a new server (new host key) gets Docker and the registry again, with the pushed image kept on its data volume',
    async () => {
      const before = await show(vnf);
      const [vnfc] = before.instantiatedVnfInfo!.vnfcInfo;
      const [node] = await nodes.ready(1);
      const oldKey = await node!.hostKeyFingerprint();
      // The server stopped answering: that is why it is healed.
      await inNode(node!, 'kill "$(cat /run/sshd.pid)"');

      const healing = run(['vnf-heal', vnf, '--vnfc-instance', vnfc!.id, '--cause', 'registry server not answering', '-o', 'json']);
      await watcherDid(nodes, /^rebuild PrivateRegistryVDU /m);
      await startSshd(node!);
      const healed = await healing;
      expect(healed.code, healed.stderr).toBe(0);
      expect(JSON.parse(healed.stdout).operationState).toBe('COMPLETED');
      const after = await show(vnf);
      expect(after.instantiatedVnfInfo!.vnfcInfo.map((v) => v.id)).not.toContain(vnfc!.id);
      expect(after.instantiatedVnfInfo!.vnfcResourceInfo[0]!.metadata.addresses['CP1']).toEqual([address]);
      expect(await node!.hostKeyFingerprint()).not.toBe(oldKey);

      // Docker installed on the new server, the image loaded, the registry run: the old data is there.
      const log = await ok(['op-log', (await lastOp(vnf)).id]);
      expect(log).toContain('apt-get install -y docker.io');
      expect(log).toMatch(/pinned host key .* of server /);
      expect((await fetch(`http://${address}:5000/v2/`)).status).toBe(200);
      expect(pullBack(address, 5000, join(work, 'pulled-2'))).toBe('hello from the private registry test\n');
      expect(filesHolding(home, PASSWORD)).toEqual([]);
    },
    LONG,
  );

  it(
    'terminate: the stack and the server go, the pinned host key is forgotten',
    async () => {
      const r = await run(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/forgot the SSH host keys of 1 server/);
      expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
      await watcherDid(nodes, /^stop PrivateRegistryVDU /m);
    },
    LONG,
  );
});

describe('refused before anything starts, a refused login, a server that never answers', () => {
  it(
    'port_no 70000 and an image_path outside the package: exit 2, no occurrence; a wrong password: FAILED_TEMP naming the server',
    async () => {
      const address = `${net.prefix}0.12`;
      // The image's user has the password "ubuntu", not the one the requests give.
      const { vnf, env } = await newInstance('refused', address);
      for (const [params, message] of [
        [{ port_no: 70000 }, /additionalParams\.private_registry_installation_param\.port_no: must be a TCP port number from 1 to 65535, not 70000/],
        [{ image_path: '../registry.zip' }, /additionalParams\.private_registry_installation_param\.image_path: \.\.\/registry\.zip leads out of the VNF package/],
      ] as const) {
        const r = await run(['vnf-instantiate', vnf, '--request-file', request('bad.json', params), '--heat-environment', env]);
        expect(r.code).toBe(2);
        expect(r.stderr).toMatch(message);
      }
      expect(JSON.parse(await ok(['op-list', '--vnf', vnf, '-o', 'json']))).toEqual([]);

      const refused = await run(['vnf-instantiate', vnf, '--request-file', request('instantiate-refused.json'), '--heat-environment', env]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`PrivateRegistryVDU (${address}:22): user ubuntu was refused (password)`);
      expect(refused.stderr).not.toContain(PASSWORD);
      const op = await lastOp(vnf);
      expect(op.operationState).toBe('FAILED_TEMP');
      // A password is changed by instantiating again: roll back (the stack goes).
      await ok(['op-rollback', op.id]);
      expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
    },
    LONG,
  );

  it(
    'no sshd on the server: --timeout ends FAILED_TEMP with exit 124, naming the server',
    async () => {
      const address = `${net.prefix}0.11`;
      const { vnf, env } = await newInstance('silent', address, { sshd: false });
      // Long enough that the stack is made and vnfm is trying to reach sshd when it runs out, on a loaded machine
      // (the Heat stack alone took 17 s of a 20 s timeout once, leaving no connection attempt to name).
      const r = await run(['vnf-instantiate', vnf, '--request-file', request('instantiate-silent.json'), '--heat-environment', env, '--timeout', '60s']);
      expect(r.code, r.stderr).toBe(124);
      expect(r.stderr).toMatch(new RegExp(`timed out after 60s: gave up connecting to PrivateRegistryVDU \\(${address.replace(/\./g, '\\.')}:22\\): last error ECONNREFUSED`));
      expect((await lastOp(vnf)).operationState).toBe('FAILED_TEMP');
      await ok(['op-rollback', (await lastOp(vnf)).id]);
      expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
    },
    LONG,
  );
});
