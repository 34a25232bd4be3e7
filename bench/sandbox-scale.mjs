#!/usr/bin/env node
// Sandbox scale benchmark: how the Kubernetes API sandbox (`vnfm sandbox`, its
// own process, measured from /proc) holds up under many objects and many clients.
//
//   (a) memory: 5,000 objects loaded over HTTPS (10 namespaces, each with
//       50 Deployments of one replica and the ReplicaSets and Pods they make,
//       50 Services with their Endpoints and EndpointSlices, 200 ConfigMaps);
//       the sandbox's peak RSS (VmHWM) against 150 MiB.
//   (b) concurrency: 20 `vnfm vnf-instantiate` of a 50-object CNF at once
//       (each its own instance and namespace) against one alone, wall time;
//       target ≤ 5× on this machine's cores.
//   (c) sandbox CPU for a 500-object CNF: `vnfm vnf-instantiate` against
//       `kubectl apply -f DIR` + `kubectl wait`, each on a fresh sandbox; the
//       sandbox's user+system CPU during the work; target vnfm ≤ 1× kubectl.
//
// The CNFs: n/50 times the mix of bench/cnf-lifecycle.mjs (10 Deployments,
// 10 Services, 10 ConfigMaps, 10 Secrets, 5 ServiceAccounts, 5 StatefulSets).
//
//   node bench/sandbox-scale.mjs [--json] [--only=a,b,c]
//   SANDBOX_PROF=DIR writes a CPU profile of each sandbox into DIR.
//   VNFM_PROF=DIR writes a CPU profile of each `vnfm vnf-instantiate` into DIR.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir, cpus } from 'node:os';
import { join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { cnfObjects, writeCnfPackage } from './support/cnf-package.mjs';

const root = resolve(import.meta.dirname, '..');
const bin = process.env.VNFM_BENCH_BIN ?? join(root, 'bin', 'vnfm');
const only = (process.argv.find((a) => a.startsWith('--only=')) ?? '--only=a,b,c').slice(7).split(',');
const PROF = process.env.SANDBOX_PROF;
const VNFM_PROF = process.env.VNFM_PROF;

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

const work = mkdtempSync(join(tmpdir(), 'vnfm-bench-scale-'));
const home = join(work, 'vnfm-home');
const kubectlHome = join(work, 'kubectl-home');
mkdirSync(kubectlHome);
const baseEnv = { ...process.env, VNFM_HOME: home, NO_COLOR: '1' };
const MiB = 1024 * 1024;
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

// ---- the sandbox process ----------------------------------------------------------------------

let sandboxSeq = 0;
const sandboxes = new Set();

/** Starts `vnfm sandbox` on a free port; resolves with its pid, URL, kubeconfig and vim-config. */
function startSandbox() {
  const n = ++sandboxSeq;
  const dir = join(work, `sandbox-${n}`);
  mkdirSync(dir);
  const nodeArgs = PROF ? ['--cpu-prof', '--cpu-prof-dir', PROF, '--cpu-prof-name', `sandbox-${n}.cpuprofile`] : [];
  const args = [...nodeArgs, bin, 'sandbox', '--listen', '127.0.0.1:0', '-o', 'json', '--kubeconfig', join(dir, 'kubeconfig'), '--vim-config', join(dir, 'vim.yaml')];
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { env: baseEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    sandboxes.add(child);
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      try {
        const info = JSON.parse(out);
        const kc = yaml.load(readFileSync(info.kubeconfig, 'utf8'));
        const ca = Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64');
        resolvePromise({ child, n, ...info, ca, token: kc.users[0].user.token });
      } catch {
        // not the whole JSON document yet
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`vnfm sandbox exited (${code}) before listening:\n${err}`)));
  });
}

async function stopSandbox(sb) {
  sb.child.removeAllListeners('exit');
  const exited = new Promise((r) => sb.child.once('exit', r));
  sb.child.kill('SIGTERM');
  await exited;
  sandboxes.delete(sb.child);
}

/** user+system CPU ms of a process so far. */
function cpuMs(pid, first = 11) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[first]) + Number(fields[first + 1])) * TICK_MS;
}

/** user+system CPU ms of this process's children that have ended (the vnfm and kubectl commands). */
function childrenCpuMs() {
  return cpuMs('self', 13);
}

/** Peak and current resident memory of a process, bytes. */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { peak: kb('VmHWM'), now: kb('VmRSS') };
}

// ---- HTTP to the sandbox ----------------------------------------------------------------------

function client(sb) {
  const agent = new Agent({ ca: sb.ca, keepAlive: true, maxSockets: 8 });
  const url = new URL(sb.url);
  return (method, path, body) =>
    new Promise((resolvePromise, reject) => {
      const data = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          method,
          path,
          headers: { Authorization: `Bearer ${sb.token}`, Accept: 'application/json', ...(data ? { 'Content-Type': 'application/json' } : {}) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (d) => (text += d));
          res.on('end', () => {
            if (res.statusCode >= 300) reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`));
            else resolvePromise(JSON.parse(text));
          });
        },
      );
      req.on('error', reject);
      req.end(data);
    });
}

/** Runs `tasks` (functions returning promises) with at most `width` at once. */
async function pool(tasks, width) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) await tasks[next++]();
    }),
  );
}

// ---- commands -----------------------------------------------------------------------------------

function run(cmd, args, { env = baseEnv } = {}) {
  return new Promise((resolvePromise, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const tail = (text) => text.split('\n').slice(-20).join('\n');
      if (code !== 0) reject(new Error(`${[cmd, ...args].join(' ')} failed (exit ${code ?? signal})\n--- stdout (end)\n${tail(stdout)}\n--- stderr (end)\n${tail(stderr)}`));
      else resolvePromise({ stdout, stderr, ms });
    });
  });
}
const vnfm = (...args) => run(process.execPath, [bin, ...args]);

// ---- CNF packages ---------------------------------------------------------------------------------

/** Writes a CNF package tree of `n` objects into `dir`; returns its descriptor id, VDU count and manifest folder. */
function writePackage(dir, n) {
  const descriptorId = `5e0b3d47-1c2a-4f6e-9a8b-${String(n).padStart(12, '0')}`;
  return { descriptorId, ...writeCnfPackage(dir, { objects: cnfObjects(n), descriptorId, nodeType: `vnfm.bench.ScaleCnf${n}`, prefix: 'scale_cnf' }) };
}

const packages = new Map();
/** Builds and onboards the n-object CNF package once. */
async function cnfPackage(n) {
  if (packages.has(n)) return packages.get(n);
  const dir = join(work, `package-${n}`);
  const pkg = writePackage(dir, n);
  const zip = join(work, `scale-cnf-${n}.zip`);
  await vnfm('vnfpkg-build', dir, '-o', zip);
  await vnfm('vnfpkg-onboard', zip, '-o', 'json');
  packages.set(n, pkg);
  return pkg;
}

/** Registers `sb` as a VIM, creates `count` instances of the n-object CNF and their namespaces; returns instantiate argv lists. */
async function prepareInstances(sb, n, count) {
  const pkg = await cnfPackage(n);
  const vimName = `sandbox-${sb.n}`;
  // Each sandbox in turn is the default VIM: the instances created next land on it.
  await vnfm('vim-register', '--is-default', '--config-file', sb.vim_config, vimName, '-o', 'json');
  const api = client(sb);
  const runs = [];
  for (let i = 0; i < count; i++) {
    const inst = JSON.parse((await vnfm('vnf-create', '--vnfd-id', pkg.descriptorId, '--name', `scale-${sb.n}-${i}`, '-o', 'json')).stdout);
    const namespace = `cnf-${n}-${i}`;
    await api('POST', '/api/v1/namespaces', { metadata: { name: namespace } });
    const requestFile = join(work, `instantiate-${sb.n}-${i}.json`);
    writeFileSync(
      requestFile,
      JSON.stringify({
        flavourId: 'simple',
        instantiationLevelId: 'instantiation_level_1',
        additionalParams: { 'lcm-kubernetes-def-files': pkg.files.map((f) => `Files/kubernetes/${f}`), namespace },
      }),
    );
    runs.push(['vnf-instantiate', inst.id, '--request-file', requestFile, '-o', 'json']);
  }
  return runs;
}

let instantiateSeq = 0;
async function instantiate(argv) {
  const prof = VNFM_PROF ? ['--cpu-prof', '--cpu-prof-dir', VNFM_PROF, '--cpu-prof-name', `instantiate-${++instantiateSeq}.cpuprofile`] : [];
  const r = await run(process.execPath, [...prof, bin, ...argv]);
  const occ = JSON.parse(r.stdout);
  if (occ.operationState !== 'COMPLETED') throw new Error(`vnf-instantiate ended ${occ.operationState}:\n${r.stderr}`);
  return r.ms;
}

// ---- (a) memory ---------------------------------------------------------------------------------

async function measureMemory() {
  const sb = await startSandbox();
  try {
    const api = client(sb);
    const idle = memory(sb.child.pid);
    const namespaces = 10;
    const tasks = [];
    for (let s = 0; s < namespaces; s++) {
      const ns = `load-${s}`;
      await api('POST', '/api/v1/namespaces', { metadata: { name: ns } });
      for (let i = 0; i < 50; i++) {
        const labels = { app: `app${i}` };
        tasks.push(() =>
          api('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, {
            metadata: { name: `app${i}`, labels },
            spec: {
              replicas: 1,
              selector: { matchLabels: labels },
              template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx:1.26', ports: [{ name: 'http', containerPort: 80 }] }] } },
            },
          }),
        );
        tasks.push(() =>
          api('POST', `/api/v1/namespaces/${ns}/services`, { metadata: { name: `app${i}` }, spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } }),
        );
      }
      for (let i = 0; i < 200; i++) {
        tasks.push(() =>
          api('POST', `/api/v1/namespaces/${ns}/configmaps`, {
            metadata: { name: `config${i}`, labels: { app: `app${i % 50}` } },
            data: { 'app.properties': `greeting=hello ${i}\nlevel=info\n`, LOG_LEVEL: 'info' },
          }),
        );
      }
    }
    const t0 = process.hrtime.bigint();
    const cpu0 = cpuMs(sb.child.pid);
    await pool(tasks, 8);
    // Wait until every Deployment's pod is ready and every Service has endpoints: the controllers' work is done.
    const kinds = [
      ['/apis/apps/v1/deployments', 'deployments'],
      ['/apis/apps/v1/replicasets', 'replicasets'],
      ['/api/v1/pods', 'pods'],
      ['/api/v1/services', 'services'],
      ['/api/v1/endpoints', 'endpoints'],
      ['/apis/discovery.k8s.io/v1/endpointslices', 'endpointslices'],
      ['/api/v1/configmaps', 'configmaps'],
    ];
    let counts;
    for (;;) {
      const deployments = (await api('GET', '/apis/apps/v1/deployments')).items.filter((d) => d.metadata.namespace.startsWith('load-'));
      if (deployments.every((d) => d.status?.readyReplicas === 1)) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const loadCpu = cpuMs(sb.child.pid) - cpu0;
    counts = {};
    for (const [path, name] of kinds) counts[name] = (await api('GET', path)).items.filter((o) => o.metadata.namespace?.startsWith('load-')).length;
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    // A full list of everything, as a client resyncing would (the largest answer).
    const lists0 = process.hrtime.bigint();
    for (const [path] of kinds) await api('GET', path);
    const listMs = Number(process.hrtime.bigint() - lists0) / 1e6;
    const mem = memory(sb.child.pid);
    return { objects: total, counts, idleRssMiB: idle.now / MiB, peakRssMiB: mem.peak / MiB, rssMiB: mem.now / MiB, loadMs, loadCpuMs: loadCpu, listAllMs: listMs };
  } finally {
    await stopSandbox(sb);
  }
}

// ---- (b) concurrency ----------------------------------------------------------------------------

async function measureConcurrency() {
  const CONCURRENT = 20;
  const sb = await startSandbox();
  try {
    const runs = await prepareInstances(sb, 50, CONCURRENT + 2);
    // A first instantiate compiles the Kubernetes driver's chunk and writes its code cache, as an
    // operator's first one does; every one measured after it reads the cache.
    await instantiate(runs.shift());
    const aloneCpu0 = cpuMs(sb.child.pid);
    const aloneClients0 = childrenCpuMs();
    const alone = await instantiate(runs[0]);
    const aloneVnfmCpuMs = childrenCpuMs() - aloneClients0;
    const aloneSandboxCpuMs = cpuMs(sb.child.pid) - aloneCpu0;
    const t0 = process.hrtime.bigint();
    const cpu0 = cpuMs(sb.child.pid);
    const clients0 = childrenCpuMs();
    const each = await Promise.all(runs.slice(1).map((argv) => instantiate(argv)));
    const together = Number(process.hrtime.bigint() - t0) / 1e6;
    const sandboxCpuMs = cpuMs(sb.child.pid) - cpu0;
    const vnfmCpuMs = childrenCpuMs() - clients0;
    return {
      cores: cpus().length,
      concurrent: CONCURRENT,
      aloneMs: alone,
      aloneVnfmCpuMs,
      aloneSandboxCpuMs,
      togetherMs: together,
      ratio: together / alone,
      slowestMs: Math.max(...each),
      sandboxCpuMs,
      vnfmCpuMs,
      // The 20 cannot end sooner than their CPU (vnfm's and the sandbox's) spread over every core.
      cpuFloorMs: (sandboxCpuMs + vnfmCpuMs) / cpus().length,
    };
  } finally {
    await stopSandbox(sb);
  }
}

// ---- (c) sandbox CPU: vnfm against kubectl -----------------------------------------------------

async function measureCnfCpu() {
  const N = 500;
  const pkg = await cnfPackage(N);
  const result = {};
  {
    const sb = await startSandbox();
    try {
      const [argv] = await prepareInstances(sb, N, 1);
      const cpu0 = cpuMs(sb.child.pid);
      result.vnfmMs = await instantiate(argv);
      result.vnfmSandboxCpuMs = cpuMs(sb.child.pid) - cpu0;
    } finally {
      await stopSandbox(sb);
    }
  }
  {
    const sb = await startSandbox();
    try {
      const env = { ...process.env, KUBECONFIG: sb.kubeconfig, HOME: kubectlHome };
      const kubectl = (...args) => run('kubectl', args, { env });
      await kubectl('create', 'namespace', 'cnf-kubectl');
      const cpu0 = cpuMs(sb.child.pid);
      const t0 = process.hrtime.bigint();
      // apply again what a connection the sandbox closed while busy cut off (apply is idempotent)
      for (let attempt = 1; ; attempt++) {
        try {
          await kubectl('apply', '-n', 'cnf-kubectl', '-f', pkg.manifests);
          break;
        } catch (err) {
          if (attempt === 3 || !/connection reset by peer|EOF/.test(err.message)) throw err;
          result.kubectlApplyRetries = attempt;
        }
      }
      for (const [cond, kind] of [
        ['--for=condition=Available', 'deployment'],
        ['--for=jsonpath={.status.readyReplicas}=1', 'statefulset'],
        ['--for=jsonpath={.subsets[0].addresses[0].ip}', 'endpoints'],
      ]) {
        await kubectl('wait', '-n', 'cnf-kubectl', '--timeout=600s', cond, kind, '--all');
      }
      result.kubectlMs = Number(process.hrtime.bigint() - t0) / 1e6;
      result.kubectlSandboxCpuMs = cpuMs(sb.child.pid) - cpu0;
    } finally {
      await stopSandbox(sb);
    }
  }
  result.objects = N;
  result.ratio = result.vnfmSandboxCpuMs / result.kubectlSandboxCpuMs;
  return result;
}

// ---- the run ------------------------------------------------------------------------------------

const result = { node: process.version };
try {
  if (only.includes('a')) result.memory = await measureMemory();
  if (only.includes('b')) result.concurrency = await measureConcurrency();
  if (only.includes('c')) result.cnfCpu = await measureCnfCpu();
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(result, null, 2));
  } else {
    const row = (name, value, note) => console.log(name.padEnd(60) + value.padStart(14) + (note ? `   ${note}` : ''));
    console.log(`vnfm sandbox at scale (node ${process.version}, ${cpus().length} cores)`);
    const m = result.memory;
    if (m) {
      row(`(a) ${m.objects} objects: sandbox peak RSS`, `${m.peakRssMiB.toFixed(0)} MiB`, 'target <= 150 MiB');
      row('    idle RSS before loading', `${m.idleRssMiB.toFixed(0)} MiB`);
      row('    load (HTTPS, 8 at once) until every pod is ready', `${m.loadMs.toFixed(0)} ms`);
      row('    sandbox CPU for the load', `${m.loadCpuMs.toFixed(0)} ms`);
      row('    one list of each of the 7 kinds', `${m.listAllMs.toFixed(0)} ms`);
    }
    const b = result.concurrency;
    if (b) {
      row(`(b) ${b.concurrent} concurrent 50-object CNFs / one alone (wall)`, `${b.ratio.toFixed(2)}x`, `target <= 5x on ${b.cores} cores`);
      row('    one alone', `${b.aloneMs.toFixed(0)} ms`);
      row('    one alone: vnfm CPU', `${b.aloneVnfmCpuMs.toFixed(0)} ms`);
      row('    one alone: sandbox CPU', `${b.aloneSandboxCpuMs.toFixed(0)} ms`);
      row(`    ${b.concurrent} at once`, `${b.togetherMs.toFixed(0)} ms`);
      row('    sandbox CPU for the 20', `${b.sandboxCpuMs.toFixed(0)} ms`, `${(b.sandboxCpuMs / b.concurrent).toFixed(0)} ms a CNF (alone ${b.aloneSandboxCpuMs.toFixed(0)})`);
      row('    vnfm CPU for the 20 (all processes)', `${b.vnfmCpuMs.toFixed(0)} ms`, `${(b.vnfmCpuMs / b.concurrent).toFixed(0)} ms a CNF (alone ${b.aloneVnfmCpuMs.toFixed(0)})`);
      row(`    CPU floor: (sandbox + vnfm CPU) / ${b.cores} cores`, `${b.cpuFloorMs.toFixed(0)} ms`, `${(b.cpuFloorMs / b.aloneMs).toFixed(2)}x one alone`);
    }
    const c = result.cnfCpu;
    if (c) {
      row(`(c) ${c.objects}-object CNF: sandbox CPU under vnfm / under kubectl`, `${c.ratio.toFixed(2)}x`, 'target <= 1x');
      row('    sandbox CPU, vnfm vnf-instantiate', `${c.vnfmSandboxCpuMs.toFixed(0)} ms`);
      row('    sandbox CPU, kubectl apply + wait', `${c.kubectlSandboxCpuMs.toFixed(0)} ms`);
      row('    wall, vnfm vnf-instantiate', `${c.vnfmMs.toFixed(0)} ms`);
      row('    wall, kubectl apply + wait', `${c.kubectlMs.toFixed(0)} ms`);
    }
  }
} catch (err) {
  console.error(`bench: ${err.message}`);
  process.exitCode = 1;
} finally {
  for (const child of sandboxes) child.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
}
