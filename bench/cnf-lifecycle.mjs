#!/usr/bin/env node
// CNF lifecycle benchmark: `vnfm vnf-instantiate` and `vnfm vnf-terminate` of
// a generated 50-object CNF, beside kubectl doing the same work on the same
// sandbox: `kubectl apply -f DIR` then `kubectl wait` for everything that has
// a readiness to wait for, and `kubectl delete -f DIR --wait`.
//
// The CNF: 10 Deployments (one VDU each, 1 replica), 10 Services (one per
// Deployment, so each gets endpoints), 10 ConfigMaps, 10 Secrets,
// 5 ServiceAccounts and 5 StatefulSets (1 replica, no VDU) = 50 objects.
//
// Also measured: the delay between the last object becoming ready, as vnfm
// reports it (the timestamp of the last "ready" progress line on stderr), and
// the vnfm process ending (its `close` event here, same clock).
//
// Rounds are interleaved (vnfm, kubectl, vnfm, ...) so machine noise hits both
// alike; medians over RUNS rounds (default 5). kubectl works in a fresh
// namespace each round; vnfm re-instantiates one instance in its own namespace.
// The kubectl delete uses foreground propagation, as vnfm's terminate does, so
// both wait until the pods are gone too. kubectl waits object by object
// (each `kubectl wait` or `delete --wait` costs it about 100 ms per object
// here, client-go's cache-sync poll), which is most of its time.
//
// Anything vnfm writes on stderr besides progress (a Node warning, say) is
// printed under the table: the point is to see vnfm under a load of 50 objects.
//
//   node bench/cnf-lifecycle.mjs [--json]     (builds the bundle if it is missing)
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import yaml from 'js-yaml';

const RUNS = Number(process.env.RUNS ?? 5);
const root = resolve(import.meta.dirname, '..');
const bin = join(root, 'bin', 'vnfm');

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

const VDUS = 10;
const STATEFULSETS = 5;
const DESCRIPTOR_ID = '5e0b3d47-1c2a-4f6e-9a8b-50b1ec0f0050';

function deployment(i) {
  const labels = { app: `vdu${i}` };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `vdu${i}`, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: `sa${((i - 1) % 5) + 1}`,
          containers: [
            {
              name: 'web',
              image: 'docker.io/library/nginx:1.26-alpine',
              ports: [{ name: 'http', containerPort: 80 }],
              envFrom: [{ configMapRef: { name: `config${i}` } }, { secretRef: { name: `secret${i}` } }],
            },
          ],
        },
      },
    },
  };
}

const objects = {
  'deployments.yaml': Array.from({ length: VDUS }, (_, k) => deployment(k + 1)),
  'services.yaml': Array.from({ length: 10 }, (_, k) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `svc${k + 1}` },
    spec: { selector: { app: `vdu${k + 1}` }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
  })),
  'configmaps.yaml': Array.from({ length: 10 }, (_, k) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `config${k + 1}` },
    data: { GREETING: `hello from ${k + 1}`, LOG_LEVEL: 'info' },
  })),
  'secrets.yaml': Array.from({ length: 10 }, (_, k) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `secret${k + 1}` },
    type: 'Opaque',
    stringData: { API_TOKEN: `token-${k + 1}` },
  })),
  'serviceaccounts.yaml': Array.from({ length: 5 }, (_, k) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: `sa${k + 1}` } })),
  'statefulsets.yaml': Array.from({ length: STATEFULSETS }, (_, k) => {
    const labels = { app: `store${k + 1}` };
    return {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: `store${k + 1}`, labels },
      spec: {
        replicas: 1,
        serviceName: `svc${k + 1}`,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'store', image: 'docker.io/library/busybox:1.36', command: ['sleep', 'infinity'] }] } },
      },
    };
  }),
};
const objectCount = Object.values(objects).reduce((n, list) => n + list.length, 0);

const yamlDocs = (list) => list.map((o) => yaml.dump(o, { lineWidth: -1 })).join('---\n');

function writePackage(dir) {
  const files = join(dir, 'Files', 'kubernetes');
  mkdirSync(files, { recursive: true });
  mkdirSync(join(dir, 'TOSCA-Metadata'));
  mkdirSync(join(dir, 'Definitions'));
  for (const [name, list] of Object.entries(objects)) writeFileSync(join(files, name), yamlDocs(list));
  writeFileSync(
    join(dir, 'TOSCA-Metadata', 'TOSCA.meta'),
    'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: vnfm bench\nEntry-Definitions: Definitions/bench_cnf_top.vnfd.yaml\n',
  );
  const imports = ['etsi_nfv_sol001_common_types.yaml', 'etsi_nfv_sol001_vnfd_types.yaml'];
  writeFileSync(
    join(dir, 'Definitions', 'bench_cnf_types.yaml'),
    `tosca_definitions_version: tosca_simple_yaml_1_2
imports: ${JSON.stringify(imports)}
node_types:
  vnfm.bench.Cnf50:
    derived_from: tosca.nodes.nfv.VNF
    properties:
      descriptor_id: { type: string, default: ${DESCRIPTOR_ID} }
      descriptor_version: { type: string, default: '1.0' }
      provider: { type: string, default: vnfm bench }
      product_name: { type: string, default: CNF of 50 objects }
      software_version: { type: string, default: '1.0' }
      vnfm_info: { type: list, entry_schema: { type: string }, default: [ Tacker ] }
      flavour_id: { type: string, default: simple }
      flavour_description: { type: string, default: '' }
    interfaces:
      Vnflcm:
        type: tosca.interfaces.nfv.Vnflcm
`,
  );
  const vdus = Array.from({ length: VDUS }, (_, k) => k + 1);
  writeFileSync(
    join(dir, 'Definitions', 'bench_cnf_df_simple.yaml'),
    `tosca_definitions_version: tosca_simple_yaml_1_2
imports: ${JSON.stringify([...imports, 'bench_cnf_types.yaml'])}
topology_template:
  substitution_mappings:
    node_type: vnfm.bench.Cnf50
    properties:
      flavour_id: simple
  node_templates:
    VNF:
      type: vnfm.bench.Cnf50
      properties:
        flavour_description: ${VDUS} Deployments, one per VDU
${vdus
  .map(
    (i) => `    VDU${i}:
      type: tosca.nodes.nfv.Vdu.Compute
      properties:
        name: vdu${i}
        description: Deployment vdu${i}
        vdu_profile: { min_number_of_instances: 1, max_number_of_instances: 1 }
`,
  )
  .join('')}  policies:
    - instantiation_levels:
        type: tosca.policies.nfv.InstantiationLevels
        properties:
          levels:
            instantiation_level_1:
              description: One replica of each VDU
          default_level: instantiation_level_1
    - vdu_instantiation_levels:
        type: tosca.policies.nfv.VduInstantiationLevels
        properties:
          levels:
            instantiation_level_1:
              number_of_instances: 1
        targets: ${JSON.stringify(vdus.map((i) => `VDU${i}`))}
`,
  );
  writeFileSync(
    join(dir, 'Definitions', 'bench_cnf_top.vnfd.yaml'),
    `tosca_definitions_version: tosca_simple_yaml_1_2
description: A generated CNF of ${objectCount} Kubernetes objects, for benchmarks
imports: ${JSON.stringify([...imports, 'bench_cnf_types.yaml', 'bench_cnf_df_simple.yaml'])}
topology_template:
  inputs:
    selected_flavour:
      type: string
  node_templates:
    VNF:
      type: vnfm.bench.Cnf50
      properties:
        flavour_id: { get_input: selected_flavour }
        descriptor_id: ${DESCRIPTOR_ID}
        provider: vnfm bench
        product_name: CNF of 50 objects
        software_version: '1.0'
        descriptor_version: '1.0'
        vnfm_info: [ Tacker ]
`,
  );
}

// ---- running commands -------------------------------------------------------------------------

/** Runs a command to its end; `endedAt` is Date.now() at the child's `close`. */
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
      const endedAt = Date.now();
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const r = { code, signal, stdout, stderr, ms, endedAt };
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
    const child = spawn(process.execPath, [bin, 'sandbox', '--listen', '127.0.0.1:0', '-o', 'json'], { env: baseEnv, stdio: ['ignore', 'pipe', 'pipe'] });
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

// ---- the benchmark ----------------------------------------------------------------------------

let sandbox;
try {
  sandbox = await startSandbox();
  const kenv = { ...process.env, KUBECONFIG: sandbox.kubeconfig, HOME: kubectlHome };
  const kubectl = (...args) => run('kubectl', args, { env: kenv });

  const pkgDir = join(work, 'package');
  writePackage(pkgDir);
  const manifests = join(pkgDir, 'Files', 'kubernetes');
  const zip = join(work, 'bench-cnf.zip');
  await vnfm('vnfpkg-build', pkgDir, '-o', zip);
  await vnfm('vnfpkg-onboard', zip, '-o', 'json');
  await vnfm('vim-register', '--is-default', '--config-file', sandbox.vim_config, 'sandbox', '-o', 'json');
  const instance = JSON.parse((await vnfm('vnf-create', '--vnfd-id', DESCRIPTOR_ID, '--name', 'bench-cnf', '-o', 'json')).stdout);
  const vnfNamespace = 'bench-vnfm';
  await kubectl('create', 'namespace', vnfNamespace);
  const request = join(work, 'instantiate.json');
  writeFileSync(
    request,
    JSON.stringify({
      flavourId: 'simple',
      instantiationLevelId: 'instantiation_level_1',
      additionalParams: {
        'lcm-kubernetes-def-files': Object.keys(objects).map((f) => `Files/kubernetes/${f}`),
        namespace: vnfNamespace,
      },
    }),
  );

  const samples = { vnfmInstantiate: [], vnfmTerminate: [], readyToExit: [], kubectlApplyWait: [], kubectlApply: [], kubectlDelete: [], opInstantiate: [] };
  // What kubectl waits for: what vnfm's driver waits for, kind by kind.
  const waits = [
    ['--for=condition=Available', 'deployment'],
    ['--for=jsonpath={.status.readyReplicas}=1', 'statefulset'],
    ['--for=jsonpath={.subsets[0].addresses[0].ip}', 'endpoints'],
  ];
  const warnings = new Set();
  const opMs = (occ) => (occ.startTime && occ.stateEnteredTime ? Date.parse(occ.stateEnteredTime) - Date.parse(occ.startTime) : NaN);

  for (let round = 0; round < RUNS; round++) {
    const inst = await vnfm('vnf-instantiate', instance.id, '--request-file', request, '-o', 'json');
    const occ = JSON.parse(inst.stdout);
    if (occ.operationState !== 'COMPLETED') throw new Error(`vnf-instantiate ended ${occ.operationState}:\n${inst.stderr}`);
    const created = new Set(inst.stderr.split('\n').flatMap((l) => /^\S+Z (.+): created$/.exec(l)?.[1] ?? []));
    if (created.size !== objectCount) throw new Error(`vnf-instantiate created ${created.size} objects, not ${objectCount}:\n${inst.stderr}`);
    const readyAt = lastReadyAt(inst.stderr);
    if (readyAt === undefined) throw new Error(`vnf-instantiate printed no "ready" progress line:\n${inst.stderr}`);
    samples.vnfmInstantiate.push(inst.ms);
    samples.readyToExit.push(inst.endedAt - readyAt);
    samples.opInstantiate.push(opMs(occ));
    const term = await vnfm('vnf-terminate', instance.id, '--yes', '-o', 'json');
    if (JSON.parse(term.stdout).operationState !== 'COMPLETED') throw new Error(`vnf-terminate did not complete:\n${term.stderr}`);
    samples.vnfmTerminate.push(term.ms);
    for (const [name, r] of [
      ['vnf-instantiate', inst],
      ['vnf-terminate', term],
    ]) {
      for (const line of otherLines(r.stderr)) warnings.add(`${name}: ${line.replace(/^\(node:\d+\)/, '(node:PID)')}`);
    }

    const ns = `bench-kubectl-${round}`;
    await kubectl('create', 'namespace', ns);
    const t0 = process.hrtime.bigint();
    const apply = await kubectl('apply', '-n', ns, '-f', manifests);
    samples.kubectlApply.push(apply.ms);
    for (const [cond, kind] of waits) await kubectl('wait', '-n', ns, '--timeout=120s', cond, kind, '--all');
    samples.kubectlApplyWait.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const del = await kubectl('delete', '-n', ns, '-f', manifests, '--wait', '--cascade=foreground');
    samples.kubectlDelete.push(del.ms);
    await kubectl('delete', 'namespace', ns, '--wait=false');
  }

  const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
  const result = {
    node: process.version,
    runs: RUNS,
    objects: objectCount,
    medians_ms: m,
    ratio: { instantiate: m.vnfmInstantiate / m.kubectlApplyWait, terminate: m.vnfmTerminate / m.kubectlDelete },
    samples_ms: samples,
    vnfm_stderr_other: [...warnings],
  };
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(result, null, 2));
  } else {
    const row = (name, ms, extra = '') => console.log(name.padEnd(52) + ms.toFixed(0).padStart(9) + (extra ? `  ${extra}` : ''));
    console.log(`CNF of ${objectCount} objects on vnfm sandbox, ${RUNS} rounds, medians (node ${process.version})`);
    console.log('step'.padEnd(52) + 'wall ms'.padStart(9));
    row('vnfm vnf-instantiate', m.vnfmInstantiate, `${result.ratio.instantiate.toFixed(2)}x kubectl`);
    row('  of which the operation (startTime to COMPLETED)', m.opInstantiate);
    row('kubectl apply -f DIR + kubectl wait (3 kinds)', m.kubectlApplyWait);
    row('  of which kubectl apply', m.kubectlApply);
    row('vnfm vnf-terminate --yes', m.vnfmTerminate, `${result.ratio.terminate.toFixed(2)}x kubectl`);
    row('kubectl delete -f DIR --wait --cascade=foreground', m.kubectlDelete);
    row('last object ready -> vnfm vnf-instantiate exits', m.readyToExit);
    if (warnings.size) console.log(`\nvnfm also wrote on stderr:\n${[...warnings].map((l) => `  ${l}`).join('\n')}`);
  }
} catch (err) {
  console.error(`bench: ${err.message}`);
  process.exitCode = 1;
} finally {
  if (sandbox) {
    sandbox.child.removeAllListeners('exit');
    const exited = new Promise((r) => sandbox.child.once('exit', r));
    sandbox.child.kill('SIGTERM');
    await exited;
  }
  rmSync(work, { recursive: true, force: true });
}
