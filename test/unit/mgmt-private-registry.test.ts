/**
 * The private-registry-mgmt driver: its parameters checked and sealed at
 * prepare, and its hooks against a scripted SSH session (the commands it
 * runs, in order, and what it makes of their answers).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ValidationError, VnfmError } from '../../src/errors.js';
import type { LcmRequest, VimConnection, VnfInstance } from '../../src/lcm/index.js';
import type { HookContext, ManagementServices, PrepareInput } from '../../src/mgmt/index.js';
import { createPrivateRegistryDriver, parsePrivateRegistryParams } from '../../src/mgmt/private-registry.js';
import type { ExecOptions, ExecResult, HostKeyStore, SshConnectOptions, SshSession, SshTarget } from '../../src/mgmt/ssh/types.js';
import type { LcmHook } from '../../src/vnfd/index.js';

const work = mkdtempSync(join(tmpdir(), 'vnfm-registry-unit-'));
const pkg = join(work, 'pkg');
mkdirSync(join(pkg, 'Files/images'), { recursive: true });
writeFileSync(join(pkg, 'Files/images/private_registry.tar'), 'tar bytes');
writeFileSync(join(work, 'outside.tar'), 'tar bytes');
const KEY = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n';
writeFileSync(join(work, 'id_ed25519'), KEY);
writeFileSync(join(work, 'not-a-key'), 'hello\n');
execFileSync('mkfifo', [join(work, 'key.fifo')]);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const SOURCE = 'instantiate.json';
const BASE = { ssh_cp_name: 'CP1', ssh_username: 'ubuntu', ssh_password: 'pw-secret' };

function validationError(raw: unknown): ValidationError {
  try {
    parsePrivateRegistryParams(SOURCE, raw, pkg);
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return err as ValidationError;
  }
  throw new Error('no error');
}

describe('private_registry_installation_param', () => {
  it.each([
    ['missing ssh_cp_name', { ssh_username: 'ubuntu', ssh_password: 'x' }, 'additionalParams.private_registry_installation_param.ssh_cp_name', /is required/],
    ['empty ssh_username', { ...BASE, ssh_username: '' }, 'additionalParams.private_registry_installation_param.ssh_username', /non-empty/],
    ['port_no 70000', { ...BASE, port_no: 70000 }, 'additionalParams.private_registry_installation_param.port_no', /1 to 65535, not 70000/],
    ['port_no 0', { ...BASE, port_no: 0 }, 'additionalParams.private_registry_installation_param.port_no', /1 to 65535/],
    ['port_no 5000.5', { ...BASE, port_no: 5000.5 }, 'additionalParams.private_registry_installation_param.port_no', /1 to 65535/],
    [
      'image_path with ..',
      { ...BASE, image_path: '../outside.tar' },
      'additionalParams.private_registry_installation_param.image_path',
      /\.\.\/outside\.tar leads out of the VNF package/,
    ],
    ['image_path absolute', { ...BASE, image_path: join(work, 'outside.tar') }, 'additionalParams.private_registry_installation_param.image_path', /is an absolute path/],
    [
      'image_path missing',
      { ...BASE, image_path: 'Files/images/nope.tar' },
      'additionalParams.private_registry_installation_param.image_path',
      /Files\/images\/nope\.tar is not a file of the VNF package/,
    ],
    ['image_path a directory', { ...BASE, image_path: 'Files/images' }, 'additionalParams.private_registry_installation_param.image_path', /is not a file/],
    ['no password or key', { ssh_cp_name: 'CP1', ssh_username: 'ubuntu' }, 'additionalParams.private_registry_installation_param', /gives no SSH credentials/],
    ['key text that is no key', { ...BASE, ssh_private_key: 'ssh-ed25519 AAAA public' }, 'additionalParams.private_registry_installation_param.ssh_private_key', /PEM or OpenSSH/],
    ['key file missing', { ...BASE, ssh_private_key_file: join(work, 'nope') }, 'additionalParams.private_registry_installation_param.ssh_private_key_file', /nope does not exist/],
    [
      'key file a FIFO',
      { ...BASE, ssh_private_key_file: join(work, 'key.fifo') },
      'additionalParams.private_registry_installation_param.ssh_private_key_file',
      /key\.fifo is a FIFO \(named pipe\), not a regular file/,
    ],
    [
      'key file without a key',
      { ...BASE, ssh_private_key_file: join(work, 'not-a-key') },
      'additionalParams.private_registry_installation_param.ssh_private_key_file',
      /holds no private key/,
    ],
    [
      'key text and file',
      { ...BASE, ssh_private_key: KEY, ssh_private_key_file: join(work, 'id_ed25519') },
      'additionalParams.private_registry_installation_param.ssh_private_key_file',
      /cannot be given with ssh_private_key/,
    ],
    ['a misspelt field', { ...BASE, ssh_pasword: 'x' }, 'additionalParams.private_registry_installation_param.ssh_pasword', /is not a parameter/],
    ['proxy not a URL', { ...BASE, proxy: { http_proxy: 'proxy:3128' } }, 'additionalParams.private_registry_installation_param.proxy.http_proxy', /proxy URL/],
    ['not an object', 'CP1', 'additionalParams.private_registry_installation_param', /must be an object/],
  ])('%s: a ValidationError naming the field', (_name, raw, field, message) => {
    const err = validationError(raw);
    expect(err.file).toBe(SOURCE);
    expect(err.field).toBe(field);
    expect(err.message).toMatch(message);
    expect(err.message).toContain(`${SOURCE}: ${field}: `);
    expect(err.exitCode).toBe(2);
  });

  it('defaults port_no to 5000, accepts "5001", reads a key file, keeps image_path normalised', () => {
    expect(parsePrivateRegistryParams(SOURCE, BASE, pkg).port_no).toBe(5000);
    expect(parsePrivateRegistryParams(SOURCE, { ...BASE, port_no: '5001' }, pkg).port_no).toBe(5001);
    const p = parsePrivateRegistryParams(
      SOURCE,
      { ssh_cp_name: 'CP1', ssh_username: 'u', ssh_private_key_file: join(work, 'id_ed25519'), image_path: './Files/images/private_registry.tar' },
      pkg,
    );
    expect(p.ssh_private_key).toBe(KEY);
    expect(p.image_path).toBe('Files/images/private_registry.tar');
  });
});

/* ---- hooks against a scripted session ---- */

interface Container {
  running: boolean;
  port: string;
}

/** One node's docker state and what was run on it. */
class FakeNode {
  commands: string[] = [];
  uploads: Array<{ local: string; remote: string }> = [];
  docker = true;
  container: Container | undefined;
  /** Answers of the /v2/ probe, in order; then '200'. */
  probes: string[] = [];
  failRunOnce = false;
  targets: SshTarget[] = [];

  exec(cmd: string, opts: ExecOptions = {}): ExecResult {
    this.commands.push(`${opts.sudo ? 'sudo ' : ''}${cmd}`);
    const ok = (stdout = ''): ExecResult => ({ code: 0, stdout, stderr: '' });
    const fail = (code: number, stderr: string): ExecResult => {
      if (opts.allowFailure) return { code, stdout: '', stderr };
      throw new VnfmError(`node: \`${cmd}\` exited ${code}: ${stderr}`);
    };
    if (cmd === 'command -v docker') return this.docker ? ok('/usr/bin/docker\n') : fail(1, '');
    if (cmd === 'apt-get install -y docker.io') {
      this.docker = true;
      return ok();
    }
    if (cmd.startsWith('docker inspect ')) {
      if (!this.container) return fail(1, 'Error: No such object: private_registry');
      return ok(JSON.stringify([{ State: { Running: this.container.running }, HostConfig: { PortBindings: { '5000/tcp': [{ HostIp: '', HostPort: this.container.port }] } } }]));
    }
    if (cmd.startsWith('docker rm -f ')) {
      this.container = undefined;
      return ok();
    }
    if (cmd.startsWith('docker run ')) {
      if (this.failRunOnce) {
        this.failRunOnce = false;
        return fail(125, 'port is already allocated');
      }
      this.container = { running: true, port: /-p (\d+):5000/.exec(cmd)![1]! };
      return ok('abc\n');
    }
    if (cmd.startsWith('curl ')) return ok(this.probes.shift() ?? '200');
    return ok();
  }
}

function session(node: FakeNode, target: SshTarget): SshSession {
  return {
    target,
    exec: async (cmd, opts) => node.exec(cmd, opts),
    upload: async (local, remote) => {
      node.uploads.push({ local, remote });
    },
    writeFile: async () => {},
    readFile: async () => undefined,
    close: () => {},
  };
}

class MemoryHostKeys implements HostKeyStore {
  forgotten: string[] = [];
  async get() {
    return undefined;
  }
  async pin() {}
  async forget(ids: readonly string[]) {
    this.forgotten.push(...ids);
  }
}

function setup() {
  const nodes = new Map<string, FakeNode>();
  const nodeAt = (address: string) => {
    if (!nodes.has(address)) nodes.set(address, new FakeNode());
    return nodes.get(address)!;
  };
  const hostKeys = new MemoryHostKeys();
  const connects: Array<{ target: SshTarget; opts: SshConnectOptions }> = [];
  const services: ManagementServices = {
    secrets: async () => {
      throw new Error('unused');
    },
    seal: async (plain) => ({ sealed: `sealed(${plain})`, keyId: 'k1' }),
    open: async (v) => v.sealed.replace(/^sealed\(([\s\S]*)\)$/, '$1'),
    hostKeys,
    ssh: async (target, opts) => {
      connects.push({ target, opts });
      const n = nodeAt(target.host);
      n.targets.push(target);
      return session(n, target);
    },
  };
  const driver = createPrivateRegistryDriver(services, { wait: { totalMs: 50, minMs: 1, maxMs: 2 } });
  return { driver, nodeAt, hostKeys, connects, services };
}

const vim: VimConnection = {
  id: 'os',
  name: 'os',
  inline: false,
  spec: { type: 'openstack', authUrl: 'http://127.0.0.1:5000/v3', auth: { method: 'password' }, verifyTls: true } as never,
  secrets: {},
};

function instance(servers: Array<{ id: string; address: string }>, mgmt?: Record<string, unknown>): VnfInstance {
  return {
    id: 'inst-1',
    vnfInstanceDescription: '',
    vnfdId: 'd',
    vnfPkgId: 'p',
    vnfProvider: '',
    vnfProductName: '',
    vnfSoftwareVersion: '',
    vnfdVersion: '',
    instantiationState: 'INSTANTIATED',
    vimId: 'os',
    createdAt: '',
    updatedAt: '',
    instantiatedVnfInfo: {
      flavourId: 'simple',
      vnfState: 'STARTED',
      scaleStatus: [],
      maxScaleLevels: [],
      vnfcResourceInfo: servers.map((s) => ({
        id: s.id,
        vduId: 'PrivateRegistryVDU',
        computeResource: { resourceId: s.id, vimLevelResourceType: 'OS::Nova::Server' },
        metadata: { addresses: { CP1: [s.address] } },
      })),
      vnfcInfo: servers.map((s) => ({ id: `PrivateRegistryVDU-${s.id}`, vduId: 'PrivateRegistryVDU', vnfcResourceInfoId: s.id, vnfcState: 'STARTED' })),
      resources: [],
      metadata: { namespace: '', 'lcm-kubernetes-def-files': [], vduReplicas: {}, ...(mgmt ? { mgmt } : {}) },
    } as never,
  };
}

async function prepared(driver: ReturnType<typeof setup>['driver'], params: unknown, operation: PrepareInput['operation'] = 'INSTANTIATE'): Promise<LcmRequest> {
  return driver.prepare!({
    operation,
    hooks: ['instantiate_start', 'instantiate_end'],
    implementations: {},
    source: SOURCE,
    packageDir: pkg,
    request: { flavourId: 'simple', ...(params === undefined ? {} : { additionalParams: { private_registry_installation_param: params } }) } as LcmRequest,
    allowPackageScripts: async () => false,
  });
}

function ctx(hook: LcmHook, over: Partial<HookContext>): HookContext & { reports: string[]; lines: string[] } {
  const reports: string[] = [];
  const lines: string[] = [];
  return {
    hook,
    vnfInstanceId: 'inst-1',
    operation: 'INSTANTIATE',
    request: {},
    packageDir: pkg,
    signal: new AbortController().signal,
    report: (m) => reports.push(m),
    log: (l) => lines.push(l),
    vim,
    instance: instance([]),
    acceptHostKeys: [],
    allowPackageScripts: false,
    reports,
    lines,
    ...over,
  };
}

const paramsOf = (req: LcmRequest) => (req as { additionalParams: Record<string, Record<string, unknown>> }).additionalParams['private_registry_installation_param']!;

describe('prepare', () => {
  it('seals the password, the key read from its file and a proxy URL with credentials; nothing plain is left', async () => {
    const { driver } = setup();
    const req = await prepared(driver, {
      ...BASE,
      ssh_private_key_file: join(work, 'id_ed25519'),
      proxy: { http_proxy: 'http://user:proxy-pw@proxy.example:3128', https_proxy: 'http://proxy.example:3128', no_proxy: '10.0.0.0/8' },
    });
    const p = paramsOf(req);
    expect(p['ssh_password']).toEqual({ sealed: 'sealed(pw-secret)', keyId: 'k1' });
    expect(p['ssh_private_key']).toEqual({ sealed: `sealed(${KEY})`, keyId: 'k1' });
    expect(p['ssh_private_key_file']).toBe(join(work, 'id_ed25519'));
    expect(p['proxy']).toEqual({
      http_proxy: { sealed: 'sealed(http://user:proxy-pw@proxy.example:3128)', keyId: 'k1' },
      https_proxy: 'http://proxy.example:3128',
      no_proxy: '10.0.0.0/8',
    });
    expect(p['port_no']).toBe(5000);
    const text = JSON.stringify(req).replace(/sealed\([^)]*\)/g, '');
    expect(text).not.toMatch(/pw-secret|proxy-pw|OPENSSH PRIVATE KEY/);
  });

  it('instantiate without the parameters is refused; heal without them keeps the request as it is', async () => {
    const { driver } = setup();
    await expect(prepared(driver, undefined)).rejects.toThrow(/instantiate\.json: additionalParams\.private_registry_installation_param: is required/);
    const heal = { cause: 'x' } as LcmRequest;
    expect(
      await driver.prepare!({
        operation: 'HEAL',
        hooks: ['heal_start', 'heal_end'],
        implementations: {},
        source: 'heal.json',
        packageDir: pkg,
        request: heal,
        allowPackageScripts: async () => false,
      }),
    ).toBe(heal);
  });
});

describe('instantiate_end', () => {
  it('installs Docker when missing, loads the image from the package, runs the registry and waits for /v2/', async () => {
    const { driver, nodeAt, connects } = setup();
    const node = nodeAt('10.0.0.5');
    node.docker = false;
    node.probes = ['000', '502'];
    const request = await prepared(driver, { ...BASE, image_path: 'Files/images/private_registry.tar', port_no: 5050 });
    const c = ctx('instantiate_end', { request, result: instance([{ id: 'srv-1', address: '10.0.0.5' }]) });
    const out = await driver.runHook(c);
    expect(connects[0]!.target).toMatchObject({ host: '10.0.0.5', username: 'ubuntu', password: 'pw-secret', serverId: 'srv-1', label: 'PrivateRegistryVDU (10.0.0.5)' });
    expect(connects[0]!.opts.secrets).toContain('pw-secret');
    const tmp = node.uploads[0]!.remote;
    expect(node.uploads).toEqual([{ local: join(pkg, 'Files/images/private_registry.tar'), remote: expect.stringMatching(/^\/tmp\/vnfm-private-registry-.*\.tar$/) }]);
    expect(node.commands).toEqual([
      'command -v docker',
      'sudo apt-get update',
      'sudo apt-get install -y docker.io',
      'command -v docker',
      'sudo docker inspect --type container private_registry',
      `sudo docker load -i '${tmp}'`,
      `sudo rm -f '${tmp}'`,
      'sudo docker run -d -p 5050:5000 -v /var/lib/private-registry:/var/lib/registry --restart=always --name private_registry registry:latest',
      "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:5050/v2/",
      "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:5050/v2/",
      "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:5050/v2/",
    ]);
    // The record keeps the parameters as recorded: the password still sealed.
    expect(out).toEqual({ record: { 'private-registry-mgmt': paramsOf(request) } });
    expect(JSON.stringify(out)).not.toContain('"pw-secret"');
  });

  it('pulls registry:latest without image_path; a retry keeps a running container with the same port', async () => {
    const { driver, nodeAt } = setup();
    const node = nodeAt('10.0.0.5');
    const request = await prepared(driver, BASE);
    const c = ctx('instantiate_end', { request, result: instance([{ id: 'srv-1', address: '10.0.0.5' }]) });
    await driver.runHook(c);
    expect(node.commands).toContain('sudo docker pull registry:latest');
    node.commands = [];
    await driver.runHook(c);
    expect(node.commands).toEqual([
      'command -v docker',
      'sudo docker inspect --type container private_registry',
      "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:5000/v2/",
    ]);
    expect(c.reports.join('\n')).toMatch(/already runs on port 5000: kept/);
  });

  it('replaces a container on another port or stopped; a failed docker run is an error, the retry completes', async () => {
    const { driver, nodeAt } = setup();
    const node = nodeAt('10.0.0.5');
    node.container = { running: true, port: '6000' };
    node.failRunOnce = true;
    const request = await prepared(driver, BASE);
    const c = ctx('instantiate_end', { request, result: instance([{ id: 'srv-1', address: '10.0.0.5' }]) });
    await expect(driver.runHook(c)).rejects.toThrow(/docker run -d -p 5000:5000 .* exited 125: port is already allocated/);
    expect(node.commands).toContain('sudo docker rm -f private_registry');
    node.commands = [];
    await driver.runHook(c);
    expect(node.commands.filter((x) => x.startsWith('sudo docker r'))).toEqual([expect.stringMatching(/^sudo docker run /)]);
    expect(node.container).toEqual({ running: true, port: '5000' });
  });

  it('a registry that never answers /v2/: an error naming the node, the command and the last answer', async () => {
    const { driver, nodeAt } = setup();
    nodeAt('10.0.0.5').probes = Array(1000).fill('000');
    const request = await prepared(driver, BASE);
    const c = ctx('instantiate_end', { request, result: instance([{ id: 'srv-1', address: '10.0.0.5' }]) });
    await expect(driver.runHook(c)).rejects.toThrow(/^PrivateRegistryVDU \(10\.0\.0\.5\): the registry does not answer on port 5000: `curl .*\/v2\/` gave exit 0, HTTP status 000/);
  });

  it('no server on ssh_cp_name: an error naming the connection point', async () => {
    const { driver } = setup();
    const request = await prepared(driver, { ...BASE, ssh_cp_name: 'CP9' });
    const c = ctx('instantiate_end', { request, result: instance([{ id: 'srv-1', address: '10.0.0.5' }]) });
    await expect(driver.runHook(c)).rejects.toThrow(/no server of vnf instance inst-1 has an address on connection point "CP9"/);
  });
});

describe('heal_end and terminate_end', () => {
  it('heal configures only the new server with the parameters instantiate recorded', async () => {
    const { driver, nodeAt, connects } = setup();
    const recorded = paramsOf(await prepared(driver, BASE));
    const before = instance(
      [
        { id: 'srv-1', address: '10.0.0.5' },
        { id: 'srv-2', address: '10.0.0.6' },
      ],
      { 'private-registry-mgmt': recorded },
    );
    const after = instance([
      { id: 'srv-1', address: '10.0.0.5' },
      { id: 'srv-3', address: '10.0.0.6' },
    ]);
    const out = await driver.runHook(ctx('heal_end', { operation: 'HEAL', request: { vnfcInstanceId: ['PrivateRegistryVDU-srv-2'] }, instance: before, result: after }));
    expect(connects.map((x) => x.target.serverId)).toEqual(['srv-3']);
    expect(connects[0]!.target.password).toBe('pw-secret');
    expect(nodeAt('10.0.0.6').commands).toContain(
      'sudo docker run -d -p 5000:5000 -v /var/lib/private-registry:/var/lib/registry --restart=always --name private_registry registry:latest',
    );
    expect(out).toEqual({ record: { 'private-registry-mgmt': recorded } });
  });

  it('heal that kept the server ids configures the VNFCs the request names; nothing recorded is an error', async () => {
    const { driver, connects } = setup();
    const recorded = paramsOf(await prepared(driver, BASE));
    const servers = [
      { id: 'srv-1', address: '10.0.0.5' },
      { id: 'srv-2', address: '10.0.0.6' },
    ];
    await driver.runHook(
      ctx('heal_end', {
        operation: 'HEAL',
        request: { vnfcInstanceId: ['PrivateRegistryVDU-srv-2'] },
        instance: instance(servers, { 'private-registry-mgmt': recorded }),
        result: instance(servers),
      }),
    );
    expect(connects.map((x) => x.target.serverId)).toEqual(['srv-2']);
    await expect(driver.runHook(ctx('heal_end', { operation: 'HEAL', request: {}, instance: instance(servers), result: instance(servers) }))).rejects.toThrow(
      /no private_registry_installation_param was recorded at instantiate, and the heal request gives none/,
    );
  });

  it('a heal request with its own parameters uses and records them instead', async () => {
    const { driver, connects } = setup();
    const recorded = paramsOf(await prepared(driver, BASE));
    const own = paramsOf(await prepared(driver, { ...BASE, ssh_password: 'new-pw' }, 'HEAL'));
    const servers = [{ id: 'srv-1', address: '10.0.0.5' }];
    const out = await driver.runHook(
      ctx('heal_end', {
        operation: 'HEAL',
        request: { additionalParams: { private_registry_installation_param: own } },
        instance: instance(servers, { 'private-registry-mgmt': recorded }),
        result: instance([{ id: 'srv-9', address: '10.0.0.5' }]),
      }),
    );
    expect(connects[0]!.target.password).toBe('new-pw');
    expect(out).toEqual({ record: { 'private-registry-mgmt': own } });
  });

  it('apt-get and docker pull get the proxy; its password is among the secrets to redact', async () => {
    const { driver, nodeAt, connects } = setup();
    const node = nodeAt('10.0.0.5');
    node.docker = false;
    const envs: Array<Record<string, string> | undefined> = [];
    const exec = node.exec.bind(node);
    node.exec = (cmd, opts = {}) => {
      envs.push(opts.env);
      return exec(cmd, opts);
    };
    const request = await prepared(driver, { ...BASE, proxy: { http_proxy: 'http://u:pr%40xy@proxy:3128', no_proxy: '10.0.0.0/8' } });
    await driver.runHook(ctx('instantiate_end', { request, result: instance([{ id: 'srv-1', address: '10.0.0.5' }]) }));
    const pull = node.commands.indexOf('sudo docker pull registry:latest');
    expect(envs[pull]).toEqual({ http_proxy: 'http://u:pr%40xy@proxy:3128', HTTP_PROXY: 'http://u:pr%40xy@proxy:3128', no_proxy: '10.0.0.0/8', NO_PROXY: '10.0.0.0/8' });
    expect(envs[node.commands.indexOf('sudo apt-get install -y docker.io')]).toMatchObject({ http_proxy: 'http://u:pr%40xy@proxy:3128', DEBIAN_FRONTEND: 'noninteractive' });
    expect(connects[0]!.opts.secrets).toEqual(expect.arrayContaining(['pw-secret', 'http://u:pr%40xy@proxy:3128', 'pr@xy', 'pr%40xy']));
  });

  it('terminate_end forgets the host keys of the instance servers and drops the record', async () => {
    const { driver, hostKeys } = setup();
    const out = await driver.runHook(ctx('terminate_end', { operation: 'TERMINATE', instance: instance([{ id: 'srv-1', address: '10.0.0.5' }]) }));
    expect(hostKeys.forgotten).toEqual(['srv-1']);
    expect(out).toEqual({ record: { 'private-registry-mgmt': null } });
  });
});
