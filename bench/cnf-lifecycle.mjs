#!/usr/bin/env node
// CNF lifecycle benchmark: `vnfm vnf-instantiate` and `vnfm vnf-terminate` of
// a generated CNF of 50 (or 500) objects, beside kubectl doing the same work on
// the same server: `kubectl apply -f DIR` then `kubectl wait` for everything
// that has a readiness to wait for, and `kubectl delete -f DIR --wait`.
//
// The CNF, per 50 objects: 10 Deployments (one VDU each, 1 replica),
// 10 Services (one per Deployment, so each gets endpoints), 10 ConfigMaps,
// 10 Secrets, 5 ServiceAccounts and 5 StatefulSets (1 replica, no VDU).
//
// The server: `vnfm sandbox` (default), or with `--server real` the upstream
// kube-apiserver, kube-controller-manager and etcd with the tests' stand-in
// kubelet (test/support/real-apiserver.ts, bundled here with esbuild; needs
// VNFM_KUBE_APISERVER_DIR, see ../shared/kube-apiserver/README.md).
//
// Requests: after the timed rounds, one more round of each tool goes through
// a counting TLS proxy on loopback, so the requests each sends per object are
// counted at the server's door (by verb: GET, LIST, WATCH, POST, DELETE …),
// without the proxy's hop slowing the timed rounds.
//
// Also measured: the delay between the last object becoming ready, as vnfm
// reports it (the timestamp of the last "ready" progress line on stderr), and
// the vnfm process ending (its `close` event here, same clock).
//
// Rounds are interleaved (vnfm, kubectl, vnfm, ...) so machine noise hits both
// alike; medians over RUNS rounds (default 5). kubectl works in a fresh
// namespace each round; vnfm re-instantiates one instance in its own namespace.
// The kubectl delete uses foreground propagation, as vnfm's terminate does for
// workloads, so both wait until the pods are gone too (vnfm deletes the kinds
// that own nothing, ConfigMaps, Secrets, Services, ServiceAccounts, in the
// background: they are gone at once, with no finalizer for the garbage
// collector to remove). kubectl waits object by object
// (each `kubectl wait` or `delete --wait` costs it about 100 ms per object
// here, client-go's cache-sync poll), which is most of its time.
//
// Anything vnfm writes on stderr besides progress (a Node warning, say) is
// printed under the table: the point is to see vnfm under a load of 50 objects.
//
//   node bench/cnf-lifecycle.mjs [--objects 50|500] [--server sandbox|real] [--json]
//   (builds the bundle if it is missing; RUNS=N rounds, default 5 for 50 objects and 1 for 500;
//   OBJECTS and VNFM_BENCH_SERVER work as the flags; VNFM_BENCH_BIN runs another build's bin/vnfm)
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import yaml from 'js-yaml';
import { cnfObjects, writeCnfPackage } from './support/cnf-package.mjs';

const flag = (name) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const OBJECTS = Number(flag('--objects') ?? process.env.OBJECTS ?? 50);
if (!Number.isInteger(OBJECTS) || OBJECTS < 50 || OBJECTS % 50 !== 0) {
  console.error('bench: --objects takes a multiple of 50 (50, 500 …)');
  process.exit(2);
}
const SERVER = flag('--server') ?? process.env.VNFM_BENCH_SERVER ?? 'sandbox';
if (!['sandbox', 'real'].includes(SERVER)) {
  console.error('bench: --server takes sandbox or real');
  process.exit(2);
}
const RUNS = Number(process.env.RUNS ?? (OBJECTS > 50 ? 1 : 5));
const root = resolve(import.meta.dirname, '..');
const bin = process.env.VNFM_BENCH_BIN ? resolve(process.env.VNFM_BENCH_BIN) : join(root, 'bin', 'vnfm');
// Another build (a checkout with its bundle built) whose instantiate and terminate run in the same rounds: before/after.
const beforeBin = process.env.VNFM_BENCH_BEFORE ? join(resolve(process.env.VNFM_BENCH_BEFORE), 'bin', 'vnfm') : undefined;

if (!existsSync(join(root, 'build', 'vnfm.cjs'))) {
  console.error('bench: build/vnfm.cjs is missing; running npm run build');
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
}
try {
  execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
} catch {
  console.error('bench: kubectl is not installed; it is what vnfm is compared with');
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), 'vnfm-bench-cnf-'));
const home = join(work, 'vnfm-home');
const kubectlHome = join(work, 'kubectl-home');
mkdirSync(kubectlHome);
const baseEnv = { ...process.env, VNFM_HOME: home, NO_COLOR: '1' };

// ---- the package ------------------------------------------------------------------------------

const DESCRIPTOR_ID = '5e0b3d47-1c2a-4f6e-9a8b-50b1ec0f0050';

const objects = cnfObjects(OBJECTS);
const objectCount = Object.values(objects).reduce((n, list) => n + list.length, 0);

function writePackage(dir) {
  writeCnfPackage(dir, { objects, descriptorId: DESCRIPTOR_ID, nodeType: 'vnfm.bench.Cnf50', prefix: 'bench_cnf' });
}

// ---- running commands -------------------------------------------------------------------------

const CPU_MARK = 'vnfm-bench-cpu ';
/**
 * Runs a command to its end; `endedAt` is Date.now() at the child's `close`.
 * With `cpu`, through GNU time: `cpuMs` is its user + system time, every thread.
 */
function run(cmd, args, { env = baseEnv, cpu = false } = {}) {
  return new Promise((resolvePromise, reject) => {
    const start = process.hrtime.bigint();
    const child = cpu
      ? spawn('/usr/bin/time', ['-f', `${CPU_MARK}%U %S`, cmd, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const endedAt = Date.now();
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      let cpuMs = NaN;
      if (cpu) {
        const lines = stderr.split('\n');
        const at = lines.findLastIndex((l) => l.startsWith(CPU_MARK));
        if (at >= 0) {
          const [u, sys] = lines[at].slice(CPU_MARK.length).split(' ').map(Number);
          cpuMs = (u + sys) * 1000;
          lines.splice(at, 1);
          stderr = lines.filter((l) => !/^Command exited with non-zero status/.test(l)).join('\n');
        }
      }
      const r = { code, signal, stdout, stderr, ms, endedAt, cpuMs };
      if (code !== 0) {
        const e = new Error(`${[cmd, ...args].join(' ')} failed (exit ${code ?? signal})\n--- stdout\n${stdout}--- stderr\n${stderr}`);
        e.result = r;
        reject(e);
      } else resolvePromise(r);
    });
  });
}
const vnfm = (...args) => run(process.execPath, [bin, ...args]);

/** Starts `vnfm sandbox` and resolves once it has printed where it listens. */
function startSandbox() {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(root, 'bin', 'vnfm'), 'sandbox', '--listen', '127.0.0.1:0', '-o', 'json'], { env: baseEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      try {
        resolvePromise({ child, ...JSON.parse(out) });
      } catch {
        // not the whole JSON document yet
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`vnfm sandbox exited (${code}) before listening:\n${err}`)));
  });
}

/**
 * The tests' control-plane harness and PKI helpers (TypeScript), bundled with
 * esbuild (a dev dependency) into one module under `work` and imported.
 */
async function loadSupport() {
  const { build } = await import('esbuild');
  const entry = join(work, 'support-entry.ts');
  writeFileSync(
    entry,
    `export { startRealCluster } from ${JSON.stringify(join(root, 'test', 'support', 'real-apiserver.ts'))};\n` +
      `export { makeServingPki } from ${JSON.stringify(join(root, 'test', 'support', 'openssl-pki.ts'))};\n`,
  );
  const outfile = join(work, 'support.mjs');
  await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile, logLevel: 'error' });
  return import(pathToFileURL(outfile).href);
}

/**
 * What a request is, as the API server sees it: discovery, or a verb on a
 * resource (LIST and WATCH are GETs of a collection, GET of one object).
 */
function classify(method, url) {
  const u = new URL(url, 'https://proxy.invalid');
  const parts = u.pathname.split('/').filter(Boolean);
  let rest;
  if (parts[0] === 'api' && parts.length >= 2) rest = parts.slice(2);
  else if (parts[0] === 'apis' && parts.length >= 3) rest = parts.slice(3);
  else return 'discovery';
  if (rest.length === 0) return 'discovery';
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const collection = rest.length === 1;
  if (method === 'GET') {
    if (['1', 'true'].includes(u.searchParams.get('watch') ?? '')) return 'WATCH';
    return collection ? 'LIST' : 'GET';
  }
  return method;
}

/**
 * A TLS proxy on loopback in front of `upstream` that counts the requests
 * passing through it by verb (classify); `take()` returns and resets them.
 */
async function startCountingProxy(upstream, pki) {
  const target = new URL(upstream.server);
  const agent = new Agent({ keepAlive: true, ca: upstream.caPem });
  let counts = {};
  const server = createHttpsServer({ key: readFileSync(pki.keyPath), cert: readFileSync(pki.certPath) }, (req, res) => {
    const verb = classify(req.method ?? 'GET', req.url ?? '/');
    counts[verb] = (counts[verb] ?? 0) + 1;
    const headers = { ...req.headers, host: target.host };
    const up = httpsRequest({ hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      // A watch answers its headers before any event: pass them on at once, as the server sent them.
      res.flushHeaders();
      answer.pipe(res);
    });
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  const sockets = new Set();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    server: `https://127.0.0.1:${server.address().port}`,
    caPem: pki.caCert,
    token: upstream.token,
    take() {
      const c = counts;
      counts = {};
      return c;
    },
    async close() {
      for (const s of sockets) s.destroy();
      agent.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

const vimConfigText = (ep) => yaml.dump({ auth_url: ep.server, bearer_token: ep.token, ssl_ca_cert: ep.caPem, project_name: 'default', type: 'kubernetes' }, { lineWidth: -1 });
const kubeconfigText = (ep) =>
  yaml.dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'bench', cluster: { server: ep.server, 'certificate-authority-data': Buffer.from(ep.caPem).toString('base64') } }],
    users: [{ name: 'bench', user: { token: ep.token } }],
    contexts: [{ name: 'bench', context: { cluster: 'bench', user: 'bench', namespace: 'default' } }],
    'current-context': 'bench',
  });

// A non-TTY progress line saying an object is ready (Services say so twice: created, then endpoints ready).
const READY_LINE = /^(\S+Z) .+: (ready|endpoints ready|\d+\/\d+ pods ready)$/;
function lastReadyAt(stderr) {
  let last;
  for (const line of stderr.split('\n')) {
    const m = READY_LINE.exec(line);
    if (m) last = Date.parse(m[1]);
  }
  return last;
}

/** What vnfm wrote on stderr besides its progress lines and its closing summary: warnings, say. */
const otherLines = (stderr) => stderr.split('\n').filter((l) => l && !/^\S+Z /.test(l) && !/ of vnf instance \S+ COMPLETED /.test(l));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const step = (what) => process.stderr.write(`bench: ${new Date().toISOString()} ${what}\n`);
const total = (counts) => Object.values(counts).reduce((n, c) => n + c, 0);

// ---- the benchmark ----------------------------------------------------------------------------

let sandbox;
let cluster;
let proxy;
try {
  step(`starting the ${SERVER === 'real' ? 'real API server' : 'sandbox'}`);
  const support = await loadSupport();
  /** Where the server is (server, token, caPem) and the kubeconfig and vim-config that reach it directly. */
  let endpoint;
  if (SERVER === 'real') {
    // The stand-in kubelet survives a failed request on one Pod, but that Pod then waits for its next event: say so, or a stuck round looks like kubectl's fault.
    cluster = await support.startRealCluster({ onKubeletError: (err) => step(`stand-in kubelet: ${err.message.split('\n')[0]}`) });
    endpoint = { server: cluster.server, token: cluster.token, caPem: cluster.caPem };
  } else {
    sandbox = await startSandbox();
    const vc = yaml.load(readFileSync(sandbox.vim_config, 'utf8'));
    endpoint = { server: vc.auth_url, token: vc.bearer_token, caPem: vc.ssl_ca_cert };
  }
  const proxyPkiDir = join(work, 'proxy-pki');
  mkdirSync(proxyPkiDir);
  proxy = await startCountingProxy(endpoint, support.makeServingPki(proxyPkiDir, { ips: ['127.0.0.1'], dns: ['localhost'] }, 'vnfm bench proxy'));
  const files = {};
  for (const [name, ep] of [
    ['direct', endpoint],
    ['counted', proxy],
  ]) {
    files[name] = { vim: join(work, `vim-${name}.yaml`), kube: join(work, `kubeconfig-${name}`) };
    writeFileSync(files[name].vim, vimConfigText(ep), { mode: 0o600 });
    writeFileSync(files[name].kube, kubeconfigText(ep), { mode: 0o600 });
  }
  const kubectlWith =
    (kubeconfig) =>
    (...args) =>
      run('kubectl', args, { env: { ...process.env, KUBECONFIG: kubeconfig, HOME: kubectlHome }, cpu: true });
  const kubectl = kubectlWith(files.direct.kube);

  const pkgDir = join(work, 'package');
  writePackage(pkgDir);
  const manifests = join(pkgDir, 'Files', 'kubernetes');
  const zip = join(work, 'bench-cnf.zip');
  await vnfm('vnfpkg-build', pkgDir, '-o', zip);
  /** A vnfm home with the package onboarded, the server registered as its default VIM, and an instance to instantiate. */
  const prepareHome = async (homeDir, vimConfig, program = bin) => {
    const env = { ...baseEnv, VNFM_HOME: homeDir };
    const v = (...args) => run(process.execPath, [program, ...args], { env, cpu: args[0] === 'vnf-terminate' || args[0] === 'vnf-instantiate' });
    await v('vnfpkg-onboard', zip, '-o', 'json');
    await v('vim-register', '--is-default', '--config-file', vimConfig, 'bench', '-o', 'json');
    const inst = JSON.parse((await v('vnf-create', '--vnfd-id', DESCRIPTOR_ID, '--name', 'bench-cnf', '-o', 'json')).stdout);
    return { v, id: inst.id };
  };
  const timed = await prepareHome(home, files.direct.vim);
  const counted = await prepareHome(join(work, 'vnfm-home-counted'), files.counted.vim);
  const before = beforeBin && { ...(await prepareHome(join(work, 'vnfm-home-before'), files.direct.vim, beforeBin)), namespace: 'bench-vnfm-before' };
  const vnfNamespace = 'bench-vnfm';
  const requestIn = (namespace) => {
    const file = join(work, `instantiate-${namespace}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        flavourId: 'simple',
        instantiationLevelId: 'instantiation_level_1',
        additionalParams: {
          'lcm-kubernetes-def-files': Object.keys(objects).map((f) => `Files/kubernetes/${f}`),
          namespace,
        },
      }),
    );
    return file;
  };
  for (const ns of [vnfNamespace, ...(before ? [before.namespace] : [])]) await kubectl('create', 'namespace', ns);

  const samples = {
    vnfmInstantiate: [],
    vnfmTerminate: [],
    readyToExit: [],
    kubectlApplyWait: [],
    kubectlApply: [],
    kubectlDelete: [],
    opInstantiate: [],
    vnfmInstantiateCpu: [],
    vnfmTerminateCpu: [],
    kubectlApplyWaitCpu: [],
    kubectlDeleteCpu: [],
    ...(before ? { beforeInstantiate: [], beforeTerminate: [], beforeInstantiateCpu: [], beforeTerminateCpu: [] } : {}),
  };
  // What kubectl waits for: what vnfm's driver waits for, kind by kind.
  const waits = [
    ['--for=condition=Available', 'deployment'],
    ['--for=jsonpath={.status.readyReplicas}=1', 'statefulset'],
    ['--for=jsonpath={.subsets[0].addresses[0].ip}', 'endpoints'],
  ];
  // kubectl waits object by object: 500 objects through the counting proxy on a busy 2-core machine take longer than its default 600 s.
  const kubectlTimeout = `--timeout=${Math.max(600, 4 * objectCount)}s`;
  const warnings = new Set();
  const opMs = (occ) => (occ.startTime && occ.stateEnteredTime ? Date.parse(occ.stateEnteredTime) - Date.parse(occ.startTime) : NaN);

  const vnfmRound = async ({ v, id, namespace = vnfNamespace }) => {
    step('vnfm vnf-instantiate');
    const inst = await v('vnf-instantiate', id, '--request-file', requestIn(namespace), '-o', 'json');
    const occ = JSON.parse(inst.stdout);
    if (occ.operationState !== 'COMPLETED') throw new Error(`vnf-instantiate ended ${occ.operationState}:\n${inst.stderr}`);
    const created = new Set(inst.stderr.split('\n').flatMap((l) => /^\S+Z (.+): created$/.exec(l)?.[1] ?? []));
    if (created.size !== objectCount) throw new Error(`vnf-instantiate created ${created.size} objects, not ${objectCount}:\n${inst.stderr}`);
    const readyAt = lastReadyAt(inst.stderr);
    if (readyAt === undefined) throw new Error(`vnf-instantiate printed no "ready" progress line:\n${inst.stderr}`);
    const afterInstantiate = proxy.take();
    step('vnfm vnf-terminate');
    const term = await v('vnf-terminate', id, '--yes', '-o', 'json');
    if (JSON.parse(term.stdout).operationState !== 'COMPLETED') throw new Error(`vnf-terminate did not complete:\n${term.stderr}`);
    for (const [name, r] of [
      ['vnf-instantiate', inst],
      ['vnf-terminate', term],
    ]) {
      for (const line of otherLines(r.stderr)) warnings.add(`${name}: ${line.replace(/^\(node:\d+\)/, '(node:PID)')}`);
    }
    return { inst, occ, readyAt, term, counts: { instantiate: afterInstantiate, terminate: proxy.take() } };
  };
  const kubectlRound = async (k, ns) => {
    await k('create', 'namespace', ns);
    proxy.take();
    step('kubectl apply + wait');
    const t0 = process.hrtime.bigint();
    const apply = await k('apply', '-n', ns, '-f', manifests);
    let applyWaitCpu = apply.cpuMs;
    for (const [cond, kind] of waits) applyWaitCpu += (await k('wait', '-n', ns, kubectlTimeout, cond, kind, '--all')).cpuMs;
    const applyWait = Number(process.hrtime.bigint() - t0) / 1e6;
    const afterApply = proxy.take();
    step('kubectl delete --wait');
    const del = await k('delete', '-n', ns, '-f', manifests, '--wait', '--cascade=foreground', kubectlTimeout);
    const afterDelete = proxy.take();
    await k('delete', 'namespace', ns, '--wait=false');
    return { apply, applyWait, applyWaitCpu, del, counts: { instantiate: afterApply, terminate: afterDelete } };
  };

  const tools = [
    async () => {
      const r = await vnfmRound(timed);
      samples.vnfmInstantiate.push(r.inst.ms);
      samples.readyToExit.push(r.inst.endedAt - r.readyAt);
      samples.opInstantiate.push(opMs(r.occ));
      samples.vnfmTerminate.push(r.term.ms);
      samples.vnfmInstantiateCpu.push(r.inst.cpuMs);
      samples.vnfmTerminateCpu.push(r.term.cpuMs);
    },
    async (round) => {
      const k = await kubectlRound(kubectl, `bench-kubectl-${round}`);
      samples.kubectlApply.push(k.apply.ms);
      samples.kubectlApplyWait.push(k.applyWait);
      samples.kubectlDelete.push(k.del.ms);
      samples.kubectlApplyWaitCpu.push(k.applyWaitCpu);
      samples.kubectlDeleteCpu.push(k.del.cpuMs);
    },
    ...(before
      ? [
          async () => {
            const r = await vnfmRound(before);
            samples.beforeInstantiate.push(r.inst.ms);
            samples.beforeTerminate.push(r.term.ms);
            samples.beforeInstantiateCpu.push(r.inst.cpuMs);
            samples.beforeTerminateCpu.push(r.term.cpuMs);
          },
        ]
      : []),
  ];
  const load = [loadavg()];
  // Interleaved, each round in another order, so a neighbour's load falls on every tool alike.
  for (let round = 0; round < RUNS; round++) {
    for (let i = 0; i < tools.length; i++) await tools[(round + i) % tools.length](round);
  }
  load.push(loadavg());

  // One round of each through the counting proxy. kubectl's discovery cache is warmed first, as in the timed rounds.
  const kubectlCounted = kubectlWith(files.counted.kube);
  await kubectlCounted('api-resources', '-o', 'name');
  proxy.take();
  // A counted round that fails (kubectl's waits through the proxy can time out on a loaded 2-core machine) leaves the timed figures standing.
  const countedRound = (what, round) =>
    round.then(
      (r) => r.counts,
      (err) => {
        step(`${what}: requests not counted: ${err.message.split('\n')[0]}`);
        return { instantiate: {}, terminate: {} };
      },
    );
  const requests = { vnfm: await countedRound('vnfm', vnfmRound(counted)), kubectl: await countedRound('kubectl', kubectlRound(kubectlCounted, 'bench-kubectl-counted')) };

  const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
  const result = {
    node: process.version,
    server: SERVER === 'real' ? `kube-apiserver ${cluster.gitVersion}` : 'vnfm sandbox',
    runs: RUNS,
    objects: objectCount,
    medians_ms: m,
    ratio: { instantiate: m.vnfmInstantiate / m.kubectlApplyWait, terminate: m.vnfmTerminate / m.kubectlDelete },
    cpu_ratio: { instantiate: m.vnfmInstantiateCpu / m.kubectlApplyWaitCpu, terminate: m.vnfmTerminateCpu / m.kubectlDeleteCpu },
    load_average: load,
    requests,
    requests_per_object: Object.fromEntries(
      Object.entries(requests).map(([tool, phases]) => [tool, Object.fromEntries(Object.entries(phases).map(([p, c]) => [p, total(c) / objectCount]))]),
    ),
    samples_ms: samples,
    vnfm_stderr_other: [...warnings],
  };
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(result, null, 2));
  } else {
    const row = (name, ms, extra = '') => console.log(name.padEnd(52) + ms.toFixed(0).padStart(9) + (extra ? `  ${extra}` : ''));
    const verbs = (c) =>
      Object.entries(c)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([verb, n]) => `${verb} ${n}`)
        .join(', ');
    const perObject = (c) => `${(total(c) / objectCount).toFixed(2)}/object (${total(c)}: ${verbs(c)})`;
    console.log(`CNF of ${objectCount} objects on ${result.server}, ${RUNS} round(s), medians (node ${process.version})`);
    console.log('step'.padEnd(52) + 'wall ms'.padStart(9));
    row('vnfm vnf-instantiate', m.vnfmInstantiate, `${result.ratio.instantiate.toFixed(2)}x kubectl`);
    row('  of which the operation (startTime to COMPLETED)', m.opInstantiate);
    row('kubectl apply -f DIR + kubectl wait (3 kinds)', m.kubectlApplyWait);
    row('  of which kubectl apply', m.kubectlApply);
    row('vnfm vnf-terminate --yes', m.vnfmTerminate, `${result.ratio.terminate.toFixed(2)}x kubectl`);
    row('kubectl delete -f DIR --wait --cascade=foreground', m.kubectlDelete);
    row('last object ready -> vnfm vnf-instantiate exits', m.readyToExit);
    if (before) {
      row('before: vnfm vnf-instantiate (VNFM_BENCH_BEFORE)', m.beforeInstantiate, `${(m.beforeInstantiate / m.kubectlApplyWait).toFixed(2)}x kubectl`);
      row('before: vnfm vnf-terminate', m.beforeTerminate, `${(m.beforeTerminate / m.kubectlDelete).toFixed(2)}x kubectl`);
    }
    console.log('\nCPU (user + system, every thread), medians'.padEnd(53) + 'cpu ms'.padStart(9));
    row('vnfm vnf-instantiate', m.vnfmInstantiateCpu, `${result.cpu_ratio.instantiate.toFixed(2)}x kubectl`);
    row('kubectl apply + the kubectl waits', m.kubectlApplyWaitCpu);
    row('vnfm vnf-terminate', m.vnfmTerminateCpu, `${result.cpu_ratio.terminate.toFixed(2)}x kubectl`);
    row('kubectl delete -f DIR --wait', m.kubectlDeleteCpu);
    if (before) {
      row('before: vnfm vnf-instantiate', m.beforeInstantiateCpu, `${(m.beforeInstantiateCpu / m.kubectlApplyWaitCpu).toFixed(2)}x kubectl`);
      row('before: vnfm vnf-terminate', m.beforeTerminateCpu, `${(m.beforeTerminateCpu / m.kubectlDeleteCpu).toFixed(2)}x kubectl`);
    }
    console.log(`load average ${load.map((l) => l.map((x) => x.toFixed(2)).join(' ')).join(' before, ')} after`);
    console.log('\nrequests at the server, one round');
    console.log(`  vnfm vnf-instantiate     ${perObject(requests.vnfm.instantiate)}`);
    console.log(`  kubectl apply + wait     ${perObject(requests.kubectl.instantiate)}`);
    console.log(`  vnfm vnf-terminate       ${perObject(requests.vnfm.terminate)}`);
    console.log(`  kubectl delete --wait    ${perObject(requests.kubectl.terminate)}`);
    if (warnings.size) console.log(`\nvnfm also wrote on stderr:\n${[...warnings].map((l) => `  ${l}`).join('\n')}`);
  }
} catch (err) {
  console.error(`bench: ${err.message}`);
  process.exitCode = 1;
} finally {
  await proxy?.close();
  if (sandbox) {
    sandbox.child.removeAllListeners('exit');
    const exited = new Promise((r) => sandbox.child.once('exit', r));
    sandbox.child.kill('SIGTERM');
    await exited;
  }
  await cluster?.stop();
  rmSync(work, { recursive: true, force: true });
}
