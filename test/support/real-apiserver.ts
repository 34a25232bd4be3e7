/**
 * A real Kubernetes control plane for tests, on loopback: etcd (Debian's
 * `etcd-server`), the upstream kube-apiserver and kube-controller-manager
 * whose compressed binaries live in the directory named by
 * VNFM_KUBE_APISERVER_DIR, and the stand-in scheduler and kubelet of
 * ./stand-in-kubelet.ts, so that workloads become ready, their events are
 * posted and their logs are served (the API server proxies pods/log to the
 * stand-in kubelets over TLS verified both ways).
 *
 * Everything it starts gets its own temp directory (certificates made with
 * openssl, a static token file, etcd's data), free loopback ports, and is
 * stopped by pid. The binaries are checked against the SHA-256 sums their
 * README publishes before they are run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeRequest, type KubeEndpoint } from './kube-http.js';
import { makeRsaKeyPair, makeServingPki, makeSignedCert } from './openssl-pki.js';
import { startStandInKubelet, type StandInKubelet } from './stand-in-kubelet.js';

/** The environment variable naming the directory of `kube-apiserver.xz` and `kube-controller-manager.xz`. */
export const KUBE_APISERVER_DIR_ENV = 'VNFM_KUBE_APISERVER_DIR';

/** SHA-256 of the decompressed binaries, as their README publishes them. */
const BINARY_SHA256: Record<string, string> = {
  'kube-apiserver': 'da5a867130fa32d348ce44e72e9a219a87f2de7dd8d7fb0dfb532680eac73e0a',
  'kube-controller-manager': '0754cbfdb9425bf852317b660eae54aac2e2188b916223c39d781518db96a31b',
};

const SERVICE_CIDR = '10.96.0.0/12';
const SERVICE_FIRST_IP = '10.96.0.1';

function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/**
 * The directory holding runnable `kube-apiserver` and
 * `kube-controller-manager`, decompressed from VNFM_KUBE_APISERVER_DIR into
 * a private cache under the temp dir (kept between runs, keyed by the
 * binary's checksum); undefined when VNFM_KUBE_APISERVER_DIR is not set.
 * Throws when it is set but the files are missing or do not match their
 * published checksums.
 */
export function realApiServerBinaries(sourceDir = process.env[KUBE_APISERVER_DIR_ENV]): string | undefined {
  if (!sourceDir) return undefined;
  const cache = join(tmpdir(), `vnfm-kube-bin-${process.getuid?.() ?? 0}`);
  mkdirSync(cache, { recursive: true, mode: 0o700 });
  const binDir = join(
    cache,
    Object.values(BINARY_SHA256)
      .map((s) => s.slice(0, 12))
      .join('-'),
  );
  mkdirSync(binDir, { recursive: true, mode: 0o700 });
  for (const [name, sum] of Object.entries(BINARY_SHA256)) {
    const target = join(binDir, name);
    if (existsSync(target)) continue;
    const xz = join(sourceDir, `${name}.xz`);
    if (!existsSync(xz))
      throw new Error(
        `${KUBE_APISERVER_DIR_ENV}=${sourceDir}: ${name}.xz not found there; point it at the directory holding kube-apiserver.xz and kube-controller-manager.xz, or unset it`,
      );
    const partial = `${target}.${process.pid}.partial`;
    const fd = openSync(partial, 'w', 0o700);
    const xzRun = spawnSync('xz', ['-dc', xz], { stdio: ['ignore', fd, 'pipe'] });
    closeSync(fd);
    if (xzRun.status !== 0) {
      rmSync(partial, { force: true });
      throw new Error(`decompressing ${xz} failed: ${xzRun.error?.message ?? xzRun.stderr.toString().trim()}`);
    }
    const actual = sha256File(partial);
    if (actual !== sum) {
      rmSync(partial, { force: true });
      throw new Error(`${xz} decompresses to SHA-256 ${actual}, not the published ${sum}: replace the file`);
    }
    chmodSync(partial, 0o755);
    // Rename is atomic: a concurrent run sees either no binary or a whole one.
    renameSync(partial, target);
  }
  return binDir;
}

export interface RealClusterOptions {
  /** Where the decompressed binaries are; default `realApiServerBinaries()`. */
  binDir?: string;
  /** Nodes the stand-in kubelet registers; default two. `false`: no stand-in kubelet at all. */
  nodes?: string[] | false;
  /** How long the control plane may take to become ready; default 120 s. */
  readyTimeoutMs?: number;
  /** Told of failures the stand-in kubelet survives. */
  onKubeletError?: (err: Error) => void;
}

/** A running control plane. */
export interface RealCluster extends KubeEndpoint {
  /** A kubeconfig (token user, cluster admin) for the API server. */
  kubeconfigPath: string;
  /** The temp directory of this cluster: certificates, logs (`*.log`), kubeconfigs. */
  dir: string;
  /** `/version`'s gitVersion, e.g. `v1.25.0-alpha.2`. */
  gitVersion: string;
  /** Node names the stand-in kubelet registered (empty without one). */
  nodes: readonly string[];
  /** Stops the stand-in kubelet, kube-controller-manager, kube-apiserver and etcd, and removes `dir`. */
  stop(): Promise<void>;
}

/** A port nobody listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The last lines of a log file, for an error message. */
function tail(path: string, lines = 15): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function kubeconfig(server: string, caPem: string, user: string, token: string): string {
  const ca = Buffer.from(caPem).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: real\n  cluster:\n    server: ${server}\n    certificate-authority-data: ${ca}`,
    'users:',
    `- name: ${user}\n  user:\n    token: ${token}`,
    'contexts:',
    `- name: real\n  context:\n    cluster: real\n    user: ${user}\n    namespace: default`,
    'current-context: real',
    '',
  ].join('\n');
}

interface Started {
  name: string;
  child: ChildProcess;
  log: string;
  exited: Promise<void>;
  exitCode(): number | null | undefined;
}

/**
 * Starts etcd, kube-apiserver, kube-controller-manager and (unless
 * `nodes: false`) the stand-in kubelet; resolves once `/readyz` answers ok
 * and namespace `default` has its `default` ServiceAccount. On failure
 * everything started so far is stopped and the error quotes the failing
 * server's log.
 */
export async function startRealCluster(opts: RealClusterOptions = {}): Promise<RealCluster> {
  // A free port found may be taken by someone else before the server binds it: start again on new ones.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (err) {
      if (attempt === 3 || !/address already in use/.test((err as Error).message)) throw err;
    }
  }
}

async function startOnce(opts: RealClusterOptions): Promise<RealCluster> {
  const binDir = opts.binDir ?? realApiServerBinaries();
  if (!binDir) throw new Error(`${KUBE_APISERVER_DIR_ENV} is not set: it names the directory of kube-apiserver.xz and kube-controller-manager.xz`);
  if (spawnSync('etcd', ['--version'], { stdio: 'ignore' }).error) {
    throw new Error("etcd is not on PATH: install Debian's etcd-server (sudo bash test/support/install-debian-deps.sh), or unset " + KUBE_APISERVER_DIR_ENV);
  }
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 120_000);
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-real-k8s-'));
  // etcd fsyncs each write: on a memory file system the API answers several times faster.
  const shm = existsSync('/dev/shm') && statSync('/dev/shm').isDirectory() ? mkdtempSync('/dev/shm/vnfm-etcd-') : undefined;
  const etcdData = shm ?? join(dir, 'etcd');
  const started: Started[] = [];
  let kubelet: StandInKubelet | undefined;

  const killAll = (): void => {
    for (const s of started) if (s.exitCode() === undefined) s.child.kill('SIGKILL');
  };
  process.once('exit', killAll);

  function start(name: string, command: string, args: string[]): Started {
    const log = join(dir, `${name}.log`);
    const fd = openSync(log, 'a');
    const child = spawn(command, args, { stdio: ['ignore', fd, fd], cwd: dir });
    closeSync(fd);
    let code: number | null | undefined;
    const exited = new Promise<void>((resolve) => {
      child.on('exit', (c, signal) => {
        code = c ?? (signal ? -1 : null);
        resolve();
      });
      child.on('error', (err) => {
        writeFileSync(log, `\n${err.message}\n`, { flag: 'a' });
        code = -1;
        resolve();
      });
    });
    const s: Started = { name, child, log, exited, exitCode: () => code };
    started.push(s);
    return s;
  }

  async function stopAll(): Promise<void> {
    await kubelet?.stop();
    for (const s of [...started].reverse()) {
      if (s.exitCode() !== undefined) continue;
      s.child.kill('SIGTERM');
      const timer = setTimeout(() => s.child.kill('SIGKILL'), 5_000);
      await s.exited;
      clearTimeout(timer);
    }
    process.removeListener('exit', killAll);
    rmSync(dir, { recursive: true, force: true });
    if (shm) rmSync(shm, { recursive: true, force: true });
  }

  /** Polls `probe` until it returns true; fails when `s` exits or the deadline passes. */
  async function until(s: Started, what: string, probe: () => Promise<boolean>): Promise<void> {
    for (;;) {
      if (s.exitCode() !== undefined) throw new Error(`${s.name} exited (code ${s.exitCode()}) before ${what}:\n${tail(s.log)}`);
      if (await probe().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`${what}: not within ${opts.readyTimeoutMs ?? 120_000} ms; ${s.name} log:\n${tail(s.log)}`);
      await sleep(250);
    }
  }

  try {
    const pki = makeServingPki(
      dir,
      { ips: ['127.0.0.1', SERVICE_FIRST_IP], dns: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'] },
      'kube-apiserver',
    );
    const sa = makeRsaKeyPair(dir, 'service-account');
    // The API server's client certificate for the kubelets (pods' logs): they verify it against the cluster's CA, as it verifies theirs.
    const kubeletClient = makeSignedCert(dir, pki, 'apiserver-kubelet-client', { cn: 'kube-apiserver-kubelet-client', org: 'system:masters', usage: 'clientAuth' });
    const adminToken = randomBytes(24).toString('hex');
    const kcmToken = randomBytes(24).toString('hex');
    writeFileSync(join(dir, 'tokens.csv'), `${adminToken},admin,admin-uid,"system:masters"\n${kcmToken},system:kube-controller-manager,kcm-uid\n`, { mode: 0o600 });

    const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    const etcd = start('etcd', 'etcd', [
      '--name',
      'vnfm-test',
      '--data-dir',
      etcdData,
      '--listen-client-urls',
      etcdUrl,
      '--advertise-client-urls',
      etcdUrl,
      '--listen-peer-urls',
      peerUrl,
      '--initial-advertise-peer-urls',
      peerUrl,
      '--initial-cluster',
      `vnfm-test=${peerUrl}`,
      '--initial-cluster-state',
      'new',
    ]);
    await until(etcd, 'etcd answered /health', () => httpHealth(`${etcdUrl}/health`));

    const server = `https://127.0.0.1:${apiPort}`;
    const endpoint: KubeEndpoint = { server, token: adminToken, caPem: pki.caCert };
    const apiserver = start('kube-apiserver', join(binDir, 'kube-apiserver'), [
      '--etcd-servers',
      etcdUrl,
      '--bind-address',
      '127.0.0.1',
      '--advertise-address',
      '127.0.0.1',
      '--secure-port',
      String(apiPort),
      '--endpoint-reconciler-type',
      'none',
      '--tls-cert-file',
      pki.certPath,
      '--tls-private-key-file',
      pki.keyPath,
      '--client-ca-file',
      pki.caCertPath,
      '--token-auth-file',
      join(dir, 'tokens.csv'),
      '--authorization-mode',
      'RBAC',
      '--service-account-issuer',
      'https://kubernetes.default.svc.cluster.local',
      '--service-account-key-file',
      sa.pubPath,
      '--service-account-signing-key-file',
      sa.keyPath,
      '--service-cluster-ip-range',
      SERVICE_CIDR,
      '--allow-privileged=true',
      '--kubelet-certificate-authority',
      pki.caCertPath,
      '--kubelet-client-certificate',
      kubeletClient.certPath,
      '--kubelet-client-key',
      kubeletClient.keyPath,
      // The stand-in kubelets' Nodes have loopback InternalIPs; their Hostname addresses resolve nowhere.
      '--kubelet-preferred-address-types',
      'InternalIP',
      '--profiling=false',
    ]);
    await until(apiserver, 'kube-apiserver answered /readyz', async () => {
      const r = await kubeRequest(endpoint, 'GET', '/readyz');
      return r.status === 200 && r.text.trim() === 'ok';
    });

    const kubeconfigPath = join(dir, 'admin.kubeconfig');
    writeFileSync(kubeconfigPath, kubeconfig(server, pki.caCert, 'admin', adminToken), { mode: 0o600 });
    const kcmKubeconfig = join(dir, 'kube-controller-manager.kubeconfig');
    writeFileSync(kcmKubeconfig, kubeconfig(server, pki.caCert, 'system:kube-controller-manager', kcmToken), { mode: 0o600 });
    const kcm = start('kube-controller-manager', join(binDir, 'kube-controller-manager'), [
      '--kubeconfig',
      kcmKubeconfig,
      '--bind-address',
      '127.0.0.1',
      '--secure-port',
      '0',
      '--leader-elect=false',
      '--use-service-account-credentials=true',
      '--service-account-private-key-file',
      sa.keyPath,
      '--root-ca-file',
      pki.caCertPath,
      '--cluster-signing-cert-file',
      pki.caCertPath,
      '--cluster-signing-key-file',
      pki.caKeyPath,
      '--service-cluster-ip-range',
      SERVICE_CIDR,
      // The stand-in kubelet sends no heartbeats: the node lifecycle
      // controller would mark its Nodes unreachable and evict their Pods.
      '--controllers',
      '*,-nodelifecycle',
      // Claims bind to the tests' PersistentVolumes within a second, not 15.
      '--pvclaimbinder-sync-period',
      '1s',
      '--profiling=false',
    ]);
    await until(kcm, 'namespace default had its default ServiceAccount', async () => {
      const r = await kubeRequest(endpoint, 'GET', '/api/v1/namespaces/default/serviceaccounts/default');
      return r.status === 200;
    });

    const version = await kubeRequest(endpoint, 'GET', '/version');
    if (opts.nodes !== false) {
      kubelet = await startStandInKubelet(endpoint, {
        ...(opts.nodes ? { nodes: opts.nodes } : {}),
        ...(opts.onKubeletError ? { onError: opts.onKubeletError } : {}),
        tls: { caCertPath: pki.caCertPath, caKeyPath: pki.caKeyPath, dir },
      });
    }
    return {
      ...endpoint,
      kubeconfigPath,
      dir,
      gitVersion: String(version.json?.gitVersion ?? ''),
      nodes: kubelet?.nodes ?? [],
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** Whether a plain-HTTP health endpoint (etcd's) answers healthy. */
function httpHealth(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpGet(url, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve(res.statusCode === 200 && /"health":\s*"true"/.test(text)));
    });
    req.on('error', () => resolve(false));
    req.setTimeout(2_000, () => req.destroy());
  });
}
