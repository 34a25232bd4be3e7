/**
 * vnfm's SSH client against real sshd nodes (test/support/nodes.ts: each its
 * own network and mount namespace on a test bridge): password and key logins,
 * a refused password, sudo with and without a password, timeouts, failing
 * commands with their output redacted, environment, a 300 MB upload with flat
 * memory, files written through sudo into /etc, host keys pinned then changed
 * by a rebuild (refused, then accepted), a node whose sshd is not up yet, an
 * interrupted wait, and a log that names every command but no secret.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, mkdtempSync, openSync, readFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TimeoutError } from '../../src/errors.js';
import {
  connectSsh,
  HostKeyChangedError,
  SshAuthError,
  SshCommandError,
  SshConnectError,
  type SshConnectOptions,
  type SshSession,
  type SshTarget,
} from '../../src/mgmt/ssh/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { createNodeNetwork, type NodeNetwork, type TestNode } from '../support/nodes.js';

const UBUNTU_PW = 'Ub-91kz-pass';
const OPS_PW = 'Ops-7xq-sudo-pw';
const PASSPHRASE = 'key-phrase-3mz';
const EXTRA_SECRET = 'registry-token-8c1e';

let net: NodeNetwork;
let store: Store;
let work: string;
let node: TestNode;
let privateKey: string;
/** Everything every session logged, to check for secrets at the end. */
const allLogs: string[] = [];

beforeAll(async () => {
  net = await createNodeNetwork();
  work = mkdtempSync(join(tmpdir(), 'vnfm-ssh-e2e-'));
  store = openStore(join(work, 'home'));
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', PASSPHRASE, '-C', 'vnfm-test', '-f', join(work, 'id')]);
  privateKey = readFileSync(join(work, 'id'), 'utf8');
  node = await net.node('vdu1', `${net.prefix}0.10`, {
    users: [
      { name: 'ubuntu', password: UBUNTU_PW, sudo: 'nopasswd' },
      { name: 'ops', password: OPS_PW, sudo: 'password' },
      { name: 'keyed', authorizedKeys: [readFileSync(join(work, 'id.pub'), 'utf8')], sudo: 'nopasswd' },
      { name: 'plain', password: 'Plain-5tt-pw', sudo: 'none' },
    ],
  });
});

afterAll(async () => {
  await net?.close();
  await store?.close();
});

interface Recorded {
  opts: SshConnectOptions;
  logs: string[];
  reports: string[];
}

function options(over: Partial<SshConnectOptions> = {}): Recorded {
  const logs: string[] = [];
  const reports: string[] = [];
  const opts: SshConnectOptions = {
    hostKeys: store.hostKeys,
    signal: new AbortController().signal,
    retry: { totalMs: 20_000, minMs: 200, maxMs: 1_000 },
    readyTimeoutMs: 5_000,
    secrets: [EXTRA_SECRET],
    log: (l) => {
      logs.push(l);
      allLogs.push(l);
    },
    report: (r) => reports.push(r),
    ...over,
  };
  return { opts, logs, reports };
}

function target(n: TestNode, over: Partial<SshTarget> = {}): SshTarget {
  return { host: n.address, username: 'ubuntu', password: UBUNTU_PW, serverId: `server-${n.name}`, label: `${n.name.toUpperCase()} (${n.address})`, ...over };
}

async function withSession<T>(t: SshTarget, rec: Recorded, fn: (s: SshSession) => Promise<T>): Promise<T> {
  const s = await connectSsh(t, rec.opts);
  try {
    return await fn(s);
  } finally {
    s.close();
  }
}

describe('ssh: logins', () => {
  it('logs in with a password, pins the host key on first use and logs the command, its output and exit code', async () => {
    const rec = options();
    const t = target(node);
    const out = await withSession(t, rec, (s) => s.exec('id -un; echo to-stderr >&2'));
    expect(out).toEqual({ code: 0, stdout: 'ubuntu\n', stderr: 'to-stderr\n' });
    const pinned = await store.hostKeys.get(t.serverId);
    expect(pinned).toMatchObject({ serverId: t.serverId, address: node.address, keyType: 'ssh-ed25519', fingerprint: await node.hostKeyFingerprint() });
    expect(rec.logs).toEqual([
      `VDU1 (${node.address}): pinned host key ssh-ed25519 ${pinned!.fingerprint} of server ${t.serverId}`,
      `VDU1 (${node.address}) $ id -un; echo to-stderr >&2`,
      `VDU1 (${node.address}) | ubuntu`,
      `VDU1 (${node.address}) | to-stderr`,
      `VDU1 (${node.address}) exit 0`,
    ]);
  });

  it('logs in with a private key and its passphrase', async () => {
    const rec = options();
    const t = target(node, { username: 'keyed', password: undefined, privateKey, passphrase: PASSPHRASE });
    const out = await withSession(t, rec, (s) => s.exec('whoami'));
    expect(out.stdout).toBe('keyed\n');
  });

  it('refuses a wrong password at once, naming the user and the node but not the password', async () => {
    const rec = options();
    const err = await connectSsh(target(node, { password: 'wrong-pw-4qq' }), rec.opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshAuthError);
    expect((err as Error).message).toBe(`VDU1 (${node.address}:22): user ubuntu was refused (password)`);
    expect((err as SshAuthError).hint).toContain('check the user name and the password');
    expect(JSON.stringify(err) + (err as Error).message).not.toContain('wrong-pw-4qq');
    expect(rec.reports).toEqual([]); // no retries
  });

  it('refuses a key the node does not know, and a key whose passphrase is wrong', async () => {
    const other = join(work, 'other');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other]);
    const rec = options();
    const unknown = await connectSsh(target(node, { username: 'keyed', password: undefined, privateKey: readFileSync(other, 'utf8') }), rec.opts).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(SshAuthError);
    expect((unknown as Error).message).toBe(`VDU1 (${node.address}:22): user keyed was refused (private key)`);
    const badPhrase = await connectSsh(target(node, { username: 'keyed', password: undefined, privateKey, passphrase: 'not-it' }), rec.opts).catch((e: unknown) => e);
    expect(badPhrase).toBeInstanceOf(SshAuthError);
    expect((badPhrase as Error).message).toMatch(/the private key for user keyed cannot be used/);
    expect(rec.reports).toEqual([]);
  });
});

describe('ssh: commands', () => {
  it('runs through sudo without a password, with stdin reaching the command', async () => {
    const rec = options();
    await withSession(target(node), rec, async (s) => {
      expect((await s.exec('id -u', { sudo: true })).stdout).toBe('0\n');
      expect((await s.exec('cat', { sudo: true, stdin: 'fed on stdin' })).stdout).toBe('fed on stdin');
    });
    expect(rec.logs).toContain(`VDU1 (${node.address}) $ sudo id -u`);
  });

  it("runs through sudo with the user's password, which never reaches the command nor the log", async () => {
    const rec = options();
    const t = target(node, { username: 'ops', password: OPS_PW });
    await withSession(t, rec, async (s) => {
      expect((await s.exec('id -un', { sudo: true })).stdout).toBe('root\n');
      expect((await s.exec('cat', { sudo: true, stdin: 'only this' })).stdout).toBe('only this');
      expect((await s.exec('id -un')).stdout).toBe('ops\n');
    });
    expect(rec.logs.join('\n')).not.toContain(OPS_PW);
  });

  it('fails a sudo command for a user sudo refuses', async () => {
    const rec = options();
    const err = await withSession(target(node, { username: 'plain', password: 'Plain-5tt-pw' }), rec, (s) => s.exec('true', { sudo: true })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshCommandError);
    expect((err as SshCommandError).command).toBe('sudo true');
    expect((err as SshCommandError).output).toMatch(/not in the sudoers file|not allowed/);
    expect((err as Error).message).not.toContain('Plain-5tt-pw');
  });

  it('kills a command that runs past its timeout', async () => {
    const rec = options();
    const err = await withSession(target(node), rec, (s) => s.exec('echo started; exec sleep 37', { timeoutMs: 1_000 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshCommandError);
    const e = err as SshCommandError;
    expect(e.timedOut).toBe(true);
    expect(e.code).toBeNull();
    expect(e.message).toBe(`VDU1 (${node.address}): \`echo started; exec sleep 37\` timed out after 1 s and was killed; its last output:\nstarted`);
    expect(rec.logs).toContain(`VDU1 (${node.address}) killed: timed out after 1 s`);
    const left = await node.run('pgrep -x sleep || true');
    expect(left.stdout.trim()).toBe('');
    // Through sudo (password asked), the command runs as root and is killed all the same.
    const ops = target(node, { username: 'ops', password: OPS_PW });
    const viaSudo = await withSession(ops, options(), (s) => s.exec('sleep 38 & sleep 39', { sudo: true, timeoutMs: 1_000 })).catch((e: unknown) => e);
    expect((viaSudo as SshCommandError).timedOut).toBe(true);
    expect((await node.run('pgrep -x sleep || true')).stdout.trim()).toBe('');
  });

  it('fails on a non-zero exit with the node, the command, the code and the last 20 lines, redacted', async () => {
    const rec = options();
    const cmd = `seq 1 40; echo "token=${EXTRA_SECRET} password ${UBUNTU_PW}" >&2; exit 3`;
    const err = await withSession(target(node), rec, (s) => s.exec(cmd)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshCommandError);
    const e = err as SshCommandError;
    expect(e.node).toBe(`VDU1 (${node.address})`);
    expect(e.code).toBe(3);
    expect(e.command).toBe('seq 1 40; echo "token=*** password ***" >&2; exit 3');
    const lines = e.output.split('\n');
    expect(lines).toHaveLength(20);
    expect(lines[0]).toBe('22');
    expect(lines[19]).toBe('token=*** password ***');
    expect(e.message).toContain('exited with code 3');
    expect(e.message).not.toContain(EXTRA_SECRET);
    expect(e.message).not.toContain(UBUNTU_PW);
    expect(rec.logs).toContain(`VDU1 (${node.address}) exit 3`);

    const allowed = await withSession(target(node), options(), (s) => s.exec('echo half; exit 5', { allowFailure: true }));
    expect(allowed).toEqual({ code: 5, stdout: 'half\n', stderr: '' });
  });

  it('exports the environment before the command, also through sudo; secret-looking values stay out of the log', async () => {
    const rec = options();
    const env = { GREETING: "it's a b", http_proxy: 'http://alice:pr0xy-pw@10.1.1.1:3128', REGISTRY_PASSWORD: 'env-pw-77x' };
    await withSession(target(node, { username: 'ops', password: OPS_PW }), rec, async (s) => {
      const cmd = 'echo "$GREETING|$http_proxy|$REGISTRY_PASSWORD|$(id -u)"';
      expect((await s.exec(cmd, { env })).stdout).toBe(`it's a b|http://alice:pr0xy-pw@10.1.1.1:3128|env-pw-77x|${await uidOf('ops')}\n`);
      expect((await s.exec(cmd, { env, sudo: true })).stdout).toBe("it's a b|http://alice:pr0xy-pw@10.1.1.1:3128|env-pw-77x|0\n");
    });
    const log = rec.logs.join('\n');
    expect(log).toContain(`$ GREETING=it's a b http_proxy=http://alice:***@10.1.1.1:3128 REGISTRY_PASSWORD=*** echo`);
    expect(log).toContain(`| it's a b|http://alice:***@10.1.1.1:3128|***|0`);
    expect(log).not.toContain('env-pw-77x');
    expect(log).not.toContain('pr0xy-pw');
  });
});

async function uidOf(user: string): Promise<string> {
  return (await node.run(`id -u ${user}`)).stdout.trim();
}

describe('ssh: files', () => {
  it('streams a 300 MB file over SFTP into a new directory, memory staying flat', async () => {
    const size = 300 * 2 ** 20;
    const local = join(work, 'big.tar');
    // Sparse, with data at a few places so a wrong offset shows in the hash.
    const fd = openSync(local, 'w');
    for (const at of [0, 7 * 2 ** 20 + 13, 150 * 2 ** 20, size - 5]) writeSync(fd, Buffer.from(`mark@${at}`), 0, undefined, at);
    closeSync(fd);
    execFileSync('truncate', ['-s', String(size), local]);
    const localHash = await sha256File(local);
    const rec = options();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const started = Date.now();
    try {
      await withSession(target(node), rec, (s) => s.upload(local, '/home/ubuntu/images/new/big.tar', { mode: 0o640 }));
    } finally {
      clearInterval(sampler);
    }
    const seconds = (Date.now() - started) / 1000;
    const grewMiB = (peak - before) / 2 ** 20;
    console.log(`upload of 300 MiB: RSS grew by ${grewMiB.toFixed(1)} MiB (from ${(before / 2 ** 20).toFixed(0)} MiB), ${seconds.toFixed(1)} s`);
    expect(grewMiB).toBeLessThan(64);
    const remote = await node.run('sha256sum /home/ubuntu/images/new/big.tar; stat -c "%a %U %s" /home/ubuntu/images/new/big.tar');
    const [hashLine, statLine] = remote.stdout.trim().split('\n');
    expect(hashLine!.split(' ')[0]).toBe(localHash);
    expect(statLine).toBe(`640 ubuntu ${size}`);
    expect(rec.logs).toContain(`VDU1 (${node.address}) upload ${local} -> /home/ubuntu/images/new/big.tar (${size} bytes)`);
    expect(rec.reports.some((r) => /uploading big\.tar: \d0% of 300 MiB/.test(r))).toBe(true);
  });

  it('writes a file into /etc through sudo (temp file installed, then removed) and reads it back', async () => {
    const rec = options();
    const content = '{"insecure-registries": ["10.0.0.9:5000"]}\n';
    await withSession(target(node, { username: 'ops', password: OPS_PW }), rec, async (s) => {
      await s.writeFile('/etc/vnfm-test/docker/daemon.json', content, { sudo: true, mode: 0o600 });
      expect(await s.readFile('/etc/vnfm-test/docker/daemon.json', { sudo: true })).toBe(content);
      expect(await s.readFile('/etc/vnfm-test/absent.json', { sudo: true })).toBeUndefined();
      expect(await s.readFile('/etc/hostname')).toBe('vdu1\n');
      expect(await s.readFile('/etc/no-such-file')).toBeUndefined();
      await s.writeFile('/home/ops/a/b/c.txt', 'plain write', { mode: 0o600 });
      expect(await s.readFile('/home/ops/a/b/c.txt')).toBe('plain write');
    });
    expect(node.file('/etc/vnfm-test/docker/daemon.json')).toBe(content);
    expect((await node.run('stat -c "%a %U" /etc/vnfm-test/docker/daemon.json /home/ops/a/b/c.txt')).stdout).toBe('600 root\n600 ops\n');
    expect((await node.run('ls -a /tmp')).stdout).not.toContain('.vnfm-');
    const log = rec.logs.join('\n');
    expect(log).toContain(`VDU1 (${node.address}) write /etc/vnfm-test/docker/daemon.json (${content.length} bytes, through sudo)`);
    expect(log).not.toContain('insecure-registries'); // file contents stay out of the log
  });
});

describe('ssh: host keys and nodes that are not up', () => {
  it("refuses a rebuilt server's new host key, then re-pins it when accepted", async () => {
    const n = await net.node('vdu2', `${net.prefix}0.20`, { users: [{ name: 'ubuntu', password: UBUNTU_PW }] });
    const t = target(n);
    const oldKey = await n.hostKeyFingerprint();
    await withSession(t, options(), (s) => s.exec('true'));
    expect((await store.hostKeys.get(t.serverId))?.fingerprint).toBe(oldKey);

    await n.rebuild();
    const newKey = await n.hostKeyFingerprint();
    expect(newKey).not.toBe(oldKey);
    const rec = options();
    const err = await connectSsh(t, rec.opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostKeyChangedError);
    const e = err as HostKeyChangedError;
    expect(e.message).toContain(`VDU2 (${n.address}): the SSH host key of server ${t.serverId} at ${n.address} changed: pinned ${oldKey}, now ${newKey}`);
    expect(e.hint).toBe(`if the server was rebuilt on purpose, accept its new key: add --accept-host-key ${t.serverId} to the command (or op-retry)`);
    expect((await store.hostKeys.get(t.serverId))?.fingerprint).toBe(oldKey);
    expect(rec.logs.some((l) => l.includes(' $ '))).toBe(false); // nothing ran

    const accepted = options({ acceptHostKeys: [t.serverId] });
    await withSession(t, accepted, (s) => s.exec('true'));
    expect((await store.hostKeys.get(t.serverId))?.fingerprint).toBe(newKey);
    const line = `VDU2 (${n.address}): accepted the new host key of server ${t.serverId} as asked (--accept-host-key): ${oldKey} replaced by ssh-ed25519 ${newKey}`;
    expect(accepted.logs).toContain(line);
    expect(accepted.reports).toContain(line);
    // From now on the new key is the known one.
    await withSession(t, options(), (s) => s.exec('true'));
  });

  it('waits for a VM whose address answers nothing yet, and connects once it is there', async () => {
    const address = `${net.prefix}0.30`;
    const rec = options({ retry: { totalMs: 60_000, minMs: 250, maxMs: 1_000 }, readyTimeoutMs: 2_000 });
    const connecting = connectSsh(target({ name: 'vdu3', address } as TestNode), rec.opts);
    const late = new Promise<TestNode>((resolve, reject) =>
      setTimeout(() => net.node('vdu3', address, { users: [{ name: 'ubuntu', password: UBUNTU_PW }] }).then(resolve, reject), 3_000),
    );
    const [session] = await Promise.all([connecting, late]);
    try {
      expect((await session.exec('hostname')).stdout).toBe('vdu3\n');
    } finally {
      session.close();
    }
    expect(rec.reports.length).toBeGreaterThan(0);
    expect(rec.reports[0]).toMatch(new RegExp(`^waiting for sshd on VDU3 \\(${address.replace(/\./g, '\\.')}:22\\): .+; trying again in 250 ms$`));
  });

  it('retries a node whose sshd is not up (refused), then gives up after the total with a hint', async () => {
    const n = await net.node('vdu4', `${net.prefix}0.40`, { sshd: false });
    const rec = options({ retry: { totalMs: 2_000, minMs: 200, maxMs: 800 } });
    const err = await connectSsh(target(n), rec.opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshConnectError);
    expect((err as Error).message).toMatch(new RegExp(`^gave up connecting to VDU4 \\(${n.address.replace(/\./g, '\\.')}:22\\) after [\\d.]+ s: last error ECONNREFUSED$`));
    expect((err as SshConnectError).hint).toContain(`sshd listens on port 22 at ${n.address}`);
    expect(rec.reports.map((r) => r.replace(/in \d+ ms$/, 'in N ms'))).toContain(`waiting for sshd on VDU4 (${n.address}:22): ECONNREFUSED; trying again in N ms`);
    expect(rec.reports.length).toBeGreaterThanOrEqual(3);
  });

  it("stops waiting when the operation is interrupted, saying what it waited for, the signal's reason as cause", async () => {
    const n = await net.node('vdu5', `${net.prefix}0.50`, { sshd: false });
    const ac = new AbortController();
    const rec = options({ signal: ac.signal, retry: { totalMs: 120_000, minMs: 200, maxMs: 1_000 } });
    const reason = new TimeoutError('the operation timed out (--timeout 5m)');
    const connecting = connectSsh(target(n), rec.opts).catch((e: unknown) => e);
    await until(() => rec.reports.length >= 2);
    ac.abort(reason);
    const err = await connecting;
    expect(err).toBeInstanceOf(SshConnectError);
    expect((err as Error).message).toBe(`gave up connecting to VDU5 (${n.address}:22): last error ECONNREFUSED`);
    expect((err as Error).cause).toBe(reason);
  });
});

describe('ssh: the log', () => {
  it('holds the commands run but no password, passphrase, key or named secret', () => {
    const log = allLogs.join('\n');
    expect(log).toContain(' $ id -un');
    expect(log).toContain(' $ sudo cat');
    for (const secret of [UBUNTU_PW, OPS_PW, PASSPHRASE, EXTRA_SECRET, 'env-pw-77x', 'Plain-5tt-pw']) expect(log).not.toContain(secret);
    for (const line of privateKey.split('\n').filter((l) => l.length > 20 && !l.startsWith('-----'))) expect(log).not.toContain(line);
  });
});

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 20));
}

function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (d) => h.update(d))
      .on('end', () => resolve(h.digest('hex')))
      .on('error', reject);
  });
}
