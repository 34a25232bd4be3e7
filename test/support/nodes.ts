/**
 * Simulated VMs for the SSH management-driver tests.
 *
 * A NodeNetwork is a Linux bridge in the host's network namespace holding a
 * free 10.N.0.0/16 (N in 200..250, taken race-free by creating the bridge's
 * name). Each node is:
 *  - its own network namespace, joined to the bridge by a veth pair, with the
 *    node's addresses on its end;
 *  - its own mount and PID namespaces, where a small init bind-mounts the
 *    node's own /etc (a copy of the host's, with the node's users and fresh
 *    host keys), /root, /home, /var/lib, /tmp, /usr/local/bin (the stand-ins of
 *    test/support/node-bin/) and a tmpfs /run, then starts the real sshd on the
 *    node's addresses.
 * Killing the PID namespace's init kills everything the node ever started
 * (ssh sessions, the registries the docker stand-in runs, node.run commands),
 * which is what stop(), rebuild() and close() do.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import {
  appendFileSync,
  realpathSync,
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface NodeUser {
  name: string;
  password?: string;
  authorizedKeys?: string[];
  /** Default 'nopasswd'. */
  sudo?: 'nopasswd' | 'password' | 'none';
}

export interface NodeOptions {
  /** Default [{ name: 'ubuntu', password: 'ubuntu', sudo: 'nopasswd' }]. */
  users?: NodeUser[];
  /** Default true: the docker stand-in is on PATH; false: `apt-get install docker.io` puts it there. */
  docker?: boolean;
  /** Default false: a `containerd` stand-in on PATH and /etc/containerd present. */
  containerd?: boolean;
  /** Default false: the kubeadm, kubectl and kubelet stand-ins on PATH. */
  kubeadm?: boolean;
  /** Default true; false: a VM that never answers on port 22 (address up, nothing listening). */
  sshd?: boolean;
}

export interface TestNode {
  name: string;
  address: string;
  addresses: string[];
  /** Host directory holding this node's own filesystem parts (etc/, root/, home/, var-lib/, tmp/, bin/). */
  root: string;
  /** 'SHA256:...' of the node's ed25519 host key, as `ssh-keygen -lf` prints it. */
  hostKeyFingerprint(): Promise<string>;
  /** Runs a shell command as root inside the node (its network, mount and PID namespaces). */
  run(cmd: string): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Content of a file by its in-node path, undefined when absent. */
  file(path: string): string | undefined;
  /** Units restarted or reloaded through the systemctl stand-in, in order. */
  restarts(): string[];
  /** The VM is gone: every process it started killed, its address removed. */
  stop(): Promise<void>;
  /**
   * A new VM at the same address: fresh /etc (new host keys), empty docker
   * state, all processes killed. In-node paths listed in keep (default
   * ['/var/lib/private-registry']) survive, like a persistent data volume.
   */
  rebuild(opts?: { keep?: string[] }): Promise<void>;
  /** The VM is down (being replaced): every process it ran is killed, its address stays and answers nothing; rebuild() boots it again. */
  powerOff(): Promise<void>;
}

export interface NodeNetwork {
  /** This network's /16, e.g. '10.231.'. */
  prefix: string;
  /** The host side address, e.g. '10.231.255.254'. */
  gateway: string;
  node(name: string, address: string | string[], opts?: NodeOptions): Promise<TestNode>;
  nodes(): TestNode[];
  /** Stops every node, removes namespaces, veths, the bridge and temp dirs. Idempotent. */
  close(): Promise<void>;
}

/** The stand-in programs a node puts on its PATH (/usr/local/bin). */
export const NODE_BIN = resolve(dirname(fileURLToPath(import.meta.url)), 'node-bin');
/** The repository the stand-ins and bin/vnfm are in: the nodes see it at the same path. */
const REPO_ROOT = realpathSync(resolve(NODE_BIN, '..', '..', '..'));

const DEFAULT_USERS: NodeUser[] = [{ name: 'ubuntu', password: 'ubuntu', sudo: 'nopasswd' }];
const DEFAULT_KEEP = ['/var/lib/private-registry'];

/** In-node directory → the node's host directory part. */
const PARTS: Array<[string, string]> = [
  ['/etc', 'etc'],
  ['/root', 'root'],
  ['/home', 'home'],
  ['/var/lib', 'var-lib'],
  ['/tmp', 'tmp'],
  ['/usr/local/bin', 'bin'],
];

function sh(cmd: string, args: string[], opts: { input?: string; allowFail?: boolean } = {}): { code: number; stdout: string; stderr: string } {
  try {
    const stdout = execFileSync(cmd, args, { input: opts.input, stdio: ['pipe', 'pipe', 'pipe'], encoding: 'utf8' });
    return { code: 0, stdout, stderr: '' };
  } catch (e) {
    const err = e as { status?: number; stdout?: string; stderr?: string };
    const r = { code: err.status ?? 1, stdout: String(err.stdout ?? ''), stderr: String(err.stderr ?? '') };
    if (!opts.allowFail) throw new Error(`${cmd} ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
    return r;
  }
}

function run(cmd: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.stdin.on('error', () => undefined); // a command that does not read its input
    child.on('close', (code, signal) => resolveRun({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

function pidAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`test nodes: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

function portOpen(host: string, port: number): Promise<boolean> {
  return new Promise((res) => {
    const s = connect({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      res(ok);
    };
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
    s.setTimeout(500, () => done(false));
  });
}

function hashPassword(password: string): string {
  return sh('openssl', ['passwd', '-6', '-stdin'], { input: password + '\n' }).stdout.trim();
}

/** The launcher: PID 1 of the node's PID namespace. */
const INIT_SCRIPT = `#!/bin/bash
# Node init: $1 = the node's host directory, $2 = 1 to start sshd.
set -e
# Relative paths from the node's directory: it may itself live under /tmp,
# which is mounted over below.
cd "$1"
# The repository (the stand-ins, bin/vnfm) stays visible at its path when it
# lives under a directory the node has its own of (a clone in /tmp, /root…).
repo="$3"
keep_repo() {
  case "$repo/" in
    "$1"/*) mkdir -p "$2/\${repo#"$1"/}"; mount --bind "$repo" "$2/\${repo#"$1"/}" ;;
  esac
}
keep_repo /etc etc
keep_repo /root root
keep_repo /home home
keep_repo /var/lib var-lib
keep_repo /tmp tmp
mount --rbind etc /etc
mount --rbind root /root
mount --rbind home /home
mount --rbind var-lib /var/lib
mount --bind bin /usr/local/bin
mount --rbind tmp /tmp
# Never the host's real apt-get (it would reach the network): the stand-in must be there.
if [ ! -x /usr/local/bin/apt-get ]; then echo "node init: the stand-ins in /usr/local/bin are not reachable" >&2; exit 1; fi
mount -t tmpfs -o mode=0755 tmpfs /run
hostname "$(cat /etc/hostname)"
mkdir -p /run/sshd /run/lock
chmod 0755 /run/sshd
set +e
trap '' TERM INT HUP
if [ "$2" = 1 ]; then
  /usr/sbin/sshd -D -e -f /etc/ssh/sshd_config &
fi
echo ready > init.ready
# Reap whatever gets orphaned into this namespace.
while :; do wait; sleep 1; done
`;

interface NodeState {
  init?: ChildProcess;
  exited?: Promise<void>;
  initPid?: number; // host pid of the PID namespace's init
}

class Node implements TestNode {
  readonly address: string;
  private state: NodeState = {};
  private gone = false;

  constructor(
    readonly name: string,
    readonly addresses: string[],
    readonly root: string,
    readonly netns: string,
    private readonly opts: NodeOptions,
    private readonly net: Network,
  ) {
    this.address = addresses[0];
  }

  /** Lays out the node's filesystem parts (what is already there stays, but /etc and /usr/local/bin are new) and starts its init. */
  async boot(): Promise<void> {
    const r = this.root;
    for (const [, part] of PARTS) mkdirSync(join(r, part), { recursive: true });
    chmodSync(join(r, 'tmp'), 0o1777);
    chmodSync(join(r, 'root'), 0o700);
    rmSync(join(r, 'etc'), { recursive: true, force: true });
    sh('cp', ['-a', '/etc', join(r, 'etc')]);
    this.writeEtc();
    this.writeBin();
    mkdirSync(join(r, 'var-lib', 'standin'), { recursive: true });
    writeFileSync(join(r, 'init.sh'), INIT_SCRIPT, { mode: 0o755 });
    rmSync(join(r, 'init.ready'), { force: true });

    const sshd = this.opts.sshd !== false;
    const log = join(r, 'init.log');
    const logFd = openSync(log, 'w');
    // nsenter execs unshare in place; unshare forks the namespace's init and,
    // with --kill-child, takes it (and so the whole PID namespace) down when
    // it dies itself.
    const child = spawn(
      'nsenter',
      [
        `--net=/run/netns/${this.netns}`,
        '--',
        'unshare',
        '--mount',
        '--propagation',
        'private',
        '--uts',
        '--pid',
        '--fork',
        '--kill-child',
        '--mount-proc',
        '--',
        '/bin/bash',
        join(r, 'init.sh'),
        r,
        sshd ? '1' : '0',
        REPO_ROOT,
      ],
      { detached: true, stdio: ['ignore', logFd, logFd] },
    );
    closeSync(logFd);
    child.unref();
    const exited = new Promise<void>((res) => child.once('exit', () => res()));
    this.state = { init: child, exited };
    const unsharePid = child.pid!;
    this.net.track(unsharePid, 'launcher');
    await waitFor(`node ${this.name} init`, () => {
      if (!pidAlive(unsharePid)) throw new Error(`test node ${this.name}: its init exited early (${readFileSync(log, 'utf8')})`);
      const kids = readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim();
      if (kids && existsSync(join(r, 'init.ready'))) {
        this.state.initPid = Number(kids.split(/\s+/)[0]);
        this.net.track(this.state.initPid, 'init');
        this.net.untrack(unsharePid);
        return true;
      }
      return false;
    });
    if (sshd) {
      await waitFor(`sshd of node ${this.name} on ${this.addresses.join(', ')}:22`, async () => {
        for (const a of this.addresses) if (!(await portOpen(a, 22))) return false;
        return true;
      });
    }
  }

  private writeEtc(): void {
    const etc = join(this.root, 'etc');
    writeFileSync(join(etc, 'hostname'), this.name.replace(/[^A-Za-z0-9.-]/g, '-').slice(0, 63) + '\n');
    writeFileSync(join(etc, 'hosts'), `127.0.0.1 localhost\n${this.addresses.map((a) => `${a} ${this.name}`).join('\n')}\n`);
    // Fresh host keys: an ed25519 one only (fast to make, and what clients pin).
    const sshDir = join(etc, 'ssh');
    for (const f of existsSync(sshDir) ? readdirSync(sshDir) : []) if (f.startsWith('ssh_host_')) rmSync(join(sshDir, f));
    mkdirSync(sshDir, { recursive: true });
    sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `root@${this.name}`, '-f', join(sshDir, 'ssh_host_ed25519_key')]);
    const listen = this.addresses.map((a) => `ListenAddress ${a}:22`).join('\n');
    writeFileSync(
      join(sshDir, 'sshd_config'),
      `# sshd of the test node ${this.name}
${listen}
HostKey /etc/ssh/ssh_host_ed25519_key
PidFile /run/sshd.pid
UsePAM no
PasswordAuthentication yes
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
AuthorizedKeysFile .ssh/authorized_keys
StrictModes no
MaxStartups 100
MaxSessions 100
UseDNS no
PrintMotd no
AcceptEnv LANG LC_*
Subsystem sftp /usr/lib/openssh/sftp-server
`,
    );
    rmSync(join(sshDir, 'sshd_config.d'), { recursive: true, force: true });

    const passwdFile = join(etc, 'passwd');
    const existing = readFileSync(passwdFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(':'));
    let uid = Math.max(999, ...existing.map((f) => Number(f[2])).filter((n) => n >= 1000 && n < 60000)) + 1;
    const sudoersD = join(etc, 'sudoers.d');
    mkdirSync(sudoersD, { recursive: true });
    for (const u of this.opts.users ?? DEFAULT_USERS) {
      if (!/^[a-z_][a-z0-9_-]*$/.test(u.name)) throw new Error(`test node ${this.name}: bad user name ${JSON.stringify(u.name)}`);
      const home = `/home/${u.name}`;
      const id = uid++;
      appendFileSync(passwdFile, `${u.name}:x:${id}:${id}:${u.name}:${home}:/bin/bash\n`);
      appendFileSync(join(etc, 'group'), `${u.name}:x:${id}:\n`);
      const hash = u.password !== undefined ? hashPassword(u.password) : '*';
      appendFileSync(join(etc, 'shadow'), `${u.name}:${hash}:19000:0:99999:7:::\n`);
      const hostHome = join(this.root, 'home', u.name);
      mkdirSync(join(hostHome, '.ssh'), { recursive: true });
      writeFileSync(join(hostHome, '.ssh', 'authorized_keys'), (u.authorizedKeys ?? []).map((k) => k.trim() + '\n').join(''), { mode: 0o600 });
      for (const p of [hostHome, join(hostHome, '.ssh'), join(hostHome, '.ssh', 'authorized_keys')]) chownSync(p, id, id);
      chmodSync(join(hostHome, '.ssh'), 0o700);
      const sudo = u.sudo ?? 'nopasswd';
      if (sudo !== 'none') {
        writeFileSync(join(sudoersD, `vnfm-test-${u.name}`), `${u.name} ALL=(ALL:ALL) ${sudo === 'nopasswd' ? 'NOPASSWD: ' : ''}ALL\n`, { mode: 0o440 });
      }
    }
    if (this.opts.containerd) mkdirSync(join(etc, 'containerd'), { recursive: true });
  }

  private writeBin(): void {
    const bin = join(this.root, 'bin');
    rmSync(bin, { recursive: true, force: true });
    mkdirSync(bin, { recursive: true });
    const link = (name: string) => {
      const src = join(NODE_BIN, name);
      if (existsSync(src)) symlinkSync(src, join(bin, name));
    };
    for (const always of ['systemctl', 'apt-get']) link(always);
    symlinkSync(join(NODE_BIN, 'apt-get'), join(bin, 'apt'));
    if (this.opts.docker !== false) link('docker');
    if (this.opts.containerd) link('containerd');
    if (this.opts.kubeadm) for (const k of ['kubeadm', 'kubectl', 'kubelet']) link(k);
  }

  /** Host path of an in-node path (while the node runs, through its mount namespace). */
  private hostPath(path: string): string | undefined {
    const p = path.replace(/\/+$/, '') || '/';
    if (this.state.initPid && pidAlive(this.state.initPid)) return `/proc/${this.state.initPid}/root${p}`;
    for (const [inNode, part] of PARTS) {
      if (p === inNode || p.startsWith(inNode + '/')) return join(this.root, part, p.slice(inNode.length));
    }
    return undefined;
  }

  async hostKeyFingerprint(): Promise<string> {
    const out = sh('ssh-keygen', ['-lf', join(this.root, 'etc', 'ssh', 'ssh_host_ed25519_key.pub')]).stdout;
    return out.split(/\s+/)[1];
  }

  async run(cmd: string): Promise<{ code: number; stdout: string; stderr: string }> {
    if (!this.state.initPid || !pidAlive(this.state.initPid)) throw new Error(`test node ${this.name} is not running`);
    return run('nsenter', [
      '-t',
      String(this.state.initPid),
      '-n',
      '-m',
      '-u',
      '-p',
      '--',
      '/usr/bin/env',
      '-i',
      'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      'HOME=/root',
      'USER=root',
      'LANG=C.UTF-8',
      '/bin/bash',
      '-c',
      cmd,
    ]);
  }

  file(path: string): string | undefined {
    const host = this.hostPath(path);
    if (!host) return undefined;
    try {
      return readFileSync(host, 'utf8');
    } catch {
      return undefined;
    }
  }

  restarts(): string[] {
    const f = join(this.root, 'var-lib', 'standin', 'systemctl.log');
    if (!existsSync(f)) return [];
    return readFileSync(f, 'utf8')
      .split('\n')
      .filter(Boolean)
      .flatMap((l) => {
        const [verb, unit] = l.split(/\s+/);
        return verb === 'restart' || verb === 'reload' ? [unit.replace(/\.service$/, '')] : [];
      });
  }

  /**
   * Kills the node's processes: killing the PID namespace's init makes the
   * kernel kill everything else in it. The launcher (unshare, our child)
   * reaps the init and exits on its own; killing the launcher first would
   * leave the init a zombie under the host's PID 1.
   */
  async kill(): Promise<void> {
    const { init, initPid, exited } = this.state;
    const launcher = init?.pid;
    let targets = initPid ? [initPid] : [];
    if (!initPid && launcher) {
      try {
        targets = readFileSync(`/proc/${launcher}/task/${launcher}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      } catch {
        targets = [];
      }
    }
    for (const p of targets) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    if (init && exited && init.exitCode === null && init.signalCode === null) {
      const timedOut = await Promise.race([exited.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), 10000).unref())]);
      if (timedOut) {
        try {
          process.kill(launcher!, 'SIGKILL');
        } catch {
          /* gone */
        }
        await exited;
      }
    }
    if (launcher) this.net.untrack(launcher);
    if (initPid) this.net.untrack(initPid);
    this.state = {};
  }

  async stop(): Promise<void> {
    if (this.gone) return;
    this.gone = true;
    await this.kill();
    sh('ip', ['netns', 'del', this.netns], { allowFail: true });
    this.net.forget(this);
  }

  async powerOff(): Promise<void> {
    if (this.gone) return;
    await this.kill();
  }

  async rebuild(opts: { keep?: string[] } = {}): Promise<void> {
    if (this.gone) throw new Error(`test node ${this.name} is stopped`);
    await this.kill();
    const keep = opts.keep ?? DEFAULT_KEEP;
    const saved = join(this.root + '.keep');
    rmSync(saved, { recursive: true, force: true });
    mkdirSync(saved, { recursive: true });
    const kept: Array<[string, string]> = [];
    keep.forEach((p, i) => {
      const host = this.hostPath(p);
      if (host && existsSync(host)) {
        renameSync(host, join(saved, String(i)));
        kept.push([host, join(saved, String(i))]);
      }
    });
    for (const [, part] of PARTS) rmSync(join(this.root, part), { recursive: true, force: true });
    for (const [host, tmp] of kept) {
      mkdirSync(dirname(host), { recursive: true });
      renameSync(tmp, host);
    }
    rmSync(saved, { recursive: true, force: true });
    await this.boot();
  }
}

class Network implements NodeNetwork {
  readonly prefix: string;
  readonly gateway: string;
  /** Network namespaces of this network's nodes are named nsPrefix + a number. */
  readonly nsPrefix: string;
  private readonly list: Node[] = [];
  private readonly pids = new Map<number, 'launcher' | 'init'>();
  private counter = 0;
  private closed = false;
  private readonly exitHook = () => this.closeSync();

  constructor(
    readonly n: number,
    readonly bridge: string,
    readonly dir: string,
  ) {
    this.prefix = `10.${n}.`;
    this.gateway = `10.${n}.255.254`;
    this.nsPrefix = `vnfm${n}.${process.pid}.`;
    process.on('exit', this.exitHook);
  }

  track(pid: number, kind: 'launcher' | 'init'): void {
    this.pids.set(pid, kind);
  }
  untrack(pid: number): void {
    this.pids.delete(pid);
  }
  forget(node: Node): void {
    const i = this.list.indexOf(node);
    if (i >= 0) this.list.splice(i, 1);
  }

  async node(name: string, address: string | string[], opts: NodeOptions = {}): Promise<TestNode> {
    if (this.closed) throw new Error('test node network is closed');
    const addresses = Array.isArray(address) ? address : [address];
    if (addresses.length === 0) throw new Error(`test node ${name}: no address`);
    for (const a of addresses) {
      if (!a.startsWith(this.prefix)) throw new Error(`test node ${name}: ${a} is not in ${this.prefix}0.0/16`);
      if (a === this.gateway) throw new Error(`test node ${name}: ${a} is the gateway`);
      if (this.list.some((n) => n.addresses.includes(a))) throw new Error(`test node ${name}: ${a} is taken`);
    }
    const i = this.counter++;
    const netns = `${this.nsPrefix}${i}`;
    // Unique to this network instance: a network of the same N that another
    // test process just closed may still have veths while the kernel tears
    // its namespaces down (that happens asynchronously).
    const tag = `${this.n}${process.pid.toString(36)}`;
    const host = `v${tag}h${i}`;
    const peer = `v${tag}p${i}`;
    const root = join(this.dir, `${i}-${name.replace(/[^A-Za-z0-9_.-]/g, '_')}`);
    const node = new Node(name, addresses, root, netns, opts, this);
    this.list.push(node);
    try {
      sh('ip', ['netns', 'add', netns]);
      sh('ip', ['link', 'add', host, 'type', 'veth', 'peer', 'name', peer, 'netns', netns]);
      sh('ip', ['link', 'set', host, 'master', this.bridge, 'up']);
      sh('ip', ['-n', netns, 'link', 'set', 'lo', 'up']);
      sh('ip', ['-n', netns, 'link', 'set', peer, 'name', 'eth0']);
      for (const a of addresses) sh('ip', ['-n', netns, 'addr', 'add', `${a}/16`, 'dev', 'eth0']);
      sh('ip', ['-n', netns, 'link', 'set', 'eth0', 'up']);
      await node.boot();
    } catch (e) {
      await node.stop().catch(() => undefined);
      throw e;
    }
    return node;
  }

  nodes(): TestNode[] {
    return [...this.list];
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.list.map((n) => n.stop().catch(() => undefined)));
    this.closeSync();
  }

  /** Synchronous last-resort cleanup (also run at process exit). */
  closeSync(): void {
    this.closed = true;
    // Inits (their launchers then exit by themselves), and launchers whose
    // init never came up.
    for (const p of this.pids.keys()) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    this.pids.clear();
    const netnsList = sh('ip', ['netns', 'list'], { allowFail: true }).stdout;
    for (const line of netnsList.split('\n')) {
      const ns = line.split(/\s+/)[0];
      if (ns && ns.startsWith(this.nsPrefix)) sh('ip', ['netns', 'del', ns], { allowFail: true });
    }
    sh('ip', ['link', 'del', this.bridge], { allowFail: true });
    sh('umount', ['-l', this.dir], { allowFail: true });
    rmSync(this.dir, { recursive: true, force: true });
    process.off('exit', this.exitHook);
  }
}

function bridgeOwner(bridge: string): number | undefined {
  const r = sh('ip', ['-o', 'link', 'show', 'dev', bridge], { allowFail: true });
  const m = /alias vnfm-test-pid-(\d+)/.exec(r.stdout);
  return m ? Number(m[1]) : undefined;
}

/** Creates a bridge on a free 10.N.0.0/16 (N in 200..250). */
export async function createNodeNetwork(): Promise<NodeNetwork> {
  if (process.getuid?.() !== 0) throw new Error('test nodes need root (network namespaces, bridges)');
  const routes = sh('ip', ['-4', 'route', 'show'], { allowFail: true }).stdout;
  // From a random start, so that networks just closed by other test processes are not reused at once.
  const start = Math.floor(Math.random() * 51);
  for (let k = 0; k <= 50; k++) {
    const n = 200 + ((start + k) % 51);
    const bridge = `vnfmbr${n}`;
    if (new RegExp(`^10\\.${n}\\.`, 'm').test(routes)) continue;
    let added = sh('ip', ['link', 'add', bridge, 'type', 'bridge'], { allowFail: true }).code === 0;
    if (!added) {
      // A bridge left behind by a test process that died: take it over.
      const owner = bridgeOwner(bridge);
      if (owner === undefined || pidAlive(owner)) continue;
      sh('ip', ['link', 'del', bridge], { allowFail: true });
      for (const line of sh('ip', ['netns', 'list'], { allowFail: true }).stdout.split('\n')) {
        const ns = line.split(/\s+/)[0];
        if (ns && ns.startsWith(`vnfm${n}.${owner}.`)) sh('ip', ['netns', 'del', ns], { allowFail: true });
      }
      for (const entry of readdirSync(tmpdir())) {
        if (!entry.startsWith(`vnfm-nodes-${n}-`)) continue;
        sh('umount', ['-l', join(tmpdir(), entry)], { allowFail: true });
        rmSync(join(tmpdir(), entry), { recursive: true, force: true });
      }
      added = sh('ip', ['link', 'add', bridge, 'type', 'bridge'], { allowFail: true }).code === 0;
      if (!added) continue;
    }
    const dir = mkdtempSync(join(tmpdir(), `vnfm-nodes-${n}-`));
    const net = new Network(n, bridge, dir);
    try {
      // The nodes' files on a tmpfs: copying /etc for each node is 30 ms there
      // and up to a second on this machine's disk.
      sh('mount', ['-t', 'tmpfs', '-o', 'mode=0700', 'vnfm-test-nodes', dir]);
      sh('ip', ['link', 'set', bridge, 'alias', `vnfm-test-pid-${process.pid}`]);
      sh('ip', ['addr', 'add', `10.${n}.255.254/16`, 'dev', bridge]);
      sh('ip', ['link', 'set', bridge, 'up']);
    } catch (e) {
      net.closeSync();
      throw e;
    }
    return net;
  }
  throw new Error('test nodes: no free 10.N.0.0/16 for N in 200..250');
}
