#!/usr/bin/env node
// OpenStack lifecycle benchmark: the heat-vnf sample instantiated, scaled out
// (VDU1 1 → 2) and terminated by vnfm, beside the same stack driven by the
// OpenStack CLI (Debian's python3-openstackclient with python3-heatclient):
// `openstack stack create --wait`, `stack update --existing --wait` with the
// new desired_capacity, `stack delete --yes --wait` — on the same Keystone
// and Heat (test/support: heat-all on 127.0.0.1, the Nova/Neutron stand-in
// environment of test/fixtures/heat/env/). The CLI gets the same template,
// nested template, environment and `nfv` parameter vnfm sent (read back
// from Heat after vnfm's first instantiate).
//
// Rounds are interleaved (vnfm, CLI, vnfm, ...); medians over RUNS rounds
// (default 3). Also printed: how long starting Keystone and Heat took, and the
// machine's load average. Goals (wall time, medians of the same run): vnfm's
// instantiate <= 1.1x `stack create --wait`, its scale <= 1.1x `stack update
// --wait`; terminate beside `stack delete --wait` for reference.
// Needs the Debian packages of test/support/install-debian-deps.sh; takes
// several minutes, so bench/all.mjs runs it only with --all.
//
//   node bench/openstack-lifecycle.mjs [--json]   (builds the bundle if it is missing)
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const RUNS = Number(process.env.RUNS ?? 3);
/** vnfm's figure against the OpenStack CLI's for the same stack: instantiate and scale have goals, terminate is shown for reference. */
const GOALS = { instantiate: 1.1, scale: 1.1, terminate: undefined };
const root = resolve(import.meta.dirname, '..');
const bin = join(root, 'bin', 'vnfm');
const SAMPLE = join(root, 'csar-samples/heat-vnf');
const STANDINS = join(root, 'test/fixtures/heat/env/nova-neutron-standins.yaml');
const VNFD_ID = '72c3c844-4146-4e33-a2ab-fe1fbd9927fc';

if (!existsSync(join(root, 'build', 'vnfm.cjs'))) {
  console.error('bench: build/vnfm.cjs is missing; running npm run build');
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
}

// The test support modules (TypeScript) bundled beside their seed scripts,
// under node_modules so that better-sqlite3 resolves (build/ is rebuilt by others).
const supportDir = join(root, 'node_modules', '.cache', 'vnfm-bench-openstack');
mkdirSync(supportDir, { recursive: true });
const esbuild = await import(join(root, 'node_modules', 'esbuild', 'lib', 'main.js'));
await esbuild.build({
  stdin: {
    contents: "export { startHeat, projectToken } from './heat.ts';\nexport { startKeystone } from './keystone.ts';\n",
    resolveDir: join(root, 'test/support'),
    loader: 'ts',
  },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: join(supportDir, 'heat.mjs'),
  external: ['better-sqlite3'],
  logLevel: 'error',
});
// The Python scripts the support modules start, found beside the bundle as they are beside the sources.
for (const seed of ['heat-seed.py', 'heat-launch.py', 'keystone-seed.py']) copyFileSync(join(root, 'test/support', seed), join(supportDir, seed));
const { startHeat, startKeystone, projectToken } = await import(join(supportDir, 'heat.mjs'));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Runs a command; resolves with its output and the wall time in ms, rejects on a non-zero exit. */
function timed(command, args, env) {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      if (code === 0) resolvePromise({ ms, stdout });
      else reject(new Error(`${command} ${args.join(' ')} exited ${code}\n${stderr.slice(-2000)}`));
    });
  });
}

const work = mkdtempSync(join(tmpdir(), 'vnfm-bench-openstack-'));
let servers;
try {
  const setupStarted = performance.now();
  const keystone = await startKeystone();
  const keystoneMs = performance.now() - setupStarted;
  const heat = await startHeat(keystone);
  servers = { keystone, heat };
  const setupMs = performance.now() - setupStarted;

  const home = join(work, 'home');
  const vnfmEnv = { PATH: process.env.PATH, HOME: work, VNFM_HOME: home };
  const vnfm = (...args) => timed(process.execPath, [bin, ...args], vnfmEnv);
  writeFileSync(
    join(work, 'vim.yaml'),
    [
      `auth_url: "${keystone.url}"`,
      `username: "${keystone.user.name}"`,
      `password: "${keystone.user.password}"`,
      `project_name: "${keystone.project}"`,
      'project_domain_name: Default',
      'user_domain_name: Default',
      '',
    ].join('\n'),
  );
  await vnfm('vim-register', '--config-file', join(work, 'vim.yaml'), '--is-default', 'os1');
  await vnfm('vnfpkg-build', join(SAMPLE, 'package'), '-o', join(work, 'heat-vnf.zip'));
  await vnfm('vnfpkg-onboard', join(work, 'heat-vnf.zip'));
  const request = readFileSync(join(SAMPLE, 'requests/instantiate.json'), 'utf8').replace('REPLACE-WITH-EXTERNAL-NETWORK-ID', 'net-public-1');
  writeFileSync(join(work, 'instantiate.json'), request);

  // The CLI reads the nested template relative to the top one, by the name the top one uses.
  const hot = join(work, 'hot');
  mkdirSync(hot);
  copyFileSync(join(SAMPLE, 'package/BaseHOT/simple/heat_vnf.yaml'), join(hot, 'heat_vnf.yaml'));
  copyFileSync(join(SAMPLE, 'package/BaseHOT/simple/nested/VDU1.yaml'), join(hot, 'VDU1.yaml'));
  const osEnv = {
    PATH: `/usr/sbin:/usr/bin:/sbin:/bin:${process.env.PATH}`,
    HOME: work,
    OS_AUTH_URL: keystone.url,
    OS_IDENTITY_API_VERSION: '3',
    OS_USERNAME: keystone.user.name,
    OS_PASSWORD: keystone.user.password,
    OS_PROJECT_NAME: keystone.project,
    OS_USER_DOMAIN_NAME: 'Default',
    OS_PROJECT_DOMAIN_NAME: 'Default',
    OS_REGION_NAME: keystone.region,
  };
  const openstack = (...args) => timed('/usr/bin/openstack', args, osEnv);

  let nfv;
  const rows = { vnfm: { instantiate: [], scale: [], terminate: [] }, cli: { instantiate: [], scale: [], terminate: [] } };
  for (let round = 1; round <= RUNS; round++) {
    const vnf = JSON.parse((await vnfm('vnf-create', '--package', VNFD_ID, '--name', `bench-${round}`, '-o', 'json')).stdout).id;
    rows.vnfm.instantiate.push((await vnfm('vnf-instantiate', vnf, '--request-file', join(work, 'instantiate.json'), '--heat-environment', STANDINS)).ms);
    if (!nfv) {
      const token = await projectToken(keystone);
      const res = await fetch(`${heat.url}/stacks/vnf-${vnf}`, { headers: { 'x-auth-token': token, accept: 'application/json' } });
      const raw = (await res.json()).stack.parameters.nfv;
      nfv = typeof raw === 'string' ? JSON.parse(raw) : raw;
    }
    rows.vnfm.scale.push((await vnfm('vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect')).ms);
    rows.vnfm.terminate.push((await vnfm('vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes')).ms);
    await vnfm('vnf-delete', vnf, '--yes');

    const name = `bench-cli-${round}`;
    const scaled = { ...nfv, VDU: { ...nfv.VDU, VDU1: { ...nfv.VDU.VDU1, desired_capacity: 2 } } };
    rows.cli.instantiate.push(
      (await openstack('stack', 'create', '-t', join(hot, 'heat_vnf.yaml'), '-e', STANDINS, '--parameter', `nfv=${JSON.stringify(nfv)}`, '--wait', name)).ms,
    );
    rows.cli.scale.push((await openstack('stack', 'update', '--existing', '--parameter', `nfv=${JSON.stringify(scaled)}`, '--wait', name)).ms);
    rows.cli.terminate.push((await openstack('stack', 'delete', '--yes', '--wait', name)).ms);
    console.error(`round ${round}/${RUNS} done`);
  }

  const result = {
    runs: RUNS,
    setup: { keystoneMs: Math.round(keystoneMs), heatMs: Math.round(setupMs - keystoneMs), totalMs: Math.round(setupMs) },
    medianMs: Object.fromEntries(Object.entries(rows).map(([who, ops]) => [who, Object.fromEntries(Object.entries(ops).map(([op, xs]) => [op, Math.round(median(xs))]))])),
    loadAverage: loadavg().map((l) => Number(l.toFixed(2))),
  };
  result.goals = Object.entries(GOALS).map(([op, goal]) => {
    const ratio = result.medianMs.vnfm[op] / result.medianMs.cli[op];
    return { operation: op, ratio: Number(ratio.toFixed(3)), ...(goal === undefined ? { reference: true } : { goal, met: ratio <= goal }) };
  });
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(result, null, 2));
  } else {
    const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
    console.log(`Keystone + Heat started in ${s(result.setup.totalMs)} (Keystone ${s(result.setup.keystoneMs)}, Heat ${s(result.setup.heatMs)})`);
    console.log(`heat-vnf sample, medians of ${RUNS} rounds:`);
    console.log('operation     vnfm        openstack stack ... --wait   vnfm / CLI');
    for (const g of result.goals) {
      const verdict = g.reference ? 'for reference' : `goal <= ${g.goal}x  ${g.met ? 'met' : 'NOT MET'}`;
      console.log(
        `${g.operation.padEnd(12)}  ${s(result.medianMs.vnfm[g.operation]).padEnd(10)}  ${s(result.medianMs.cli[g.operation]).padEnd(27)}  ${g.ratio.toFixed(2)}x (${verdict})`,
      );
    }
    console.log(`load average ${result.loadAverage.join(' ')}`);
  }
} finally {
  await servers?.heat.stop();
  await servers?.keystone.stop();
  rmSync(work, { recursive: true, force: true });
}
