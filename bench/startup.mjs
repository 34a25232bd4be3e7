#!/usr/bin/env node
// Start-up benchmark: `vnfm --version`, `vnfm vim-list` (5 stored VIMs) and
// `vnfm vim-list -o json` beside `node -e 0`, for bin/vnfm (Node running
// build/vnfm.cjs) and for the single executable (dist/vnfm-<platform>-<arch>).
// Medians over RUNS runs (default 40), interleaved so machine noise hits every
// command alike. Goal: vim-list within 1.5x of `node -e 0` in CPU time.
//
// CPU time (user + system, all threads) comes from `perf stat` (task-clock,
// sub-millisecond) when perf works here, else from `/usr/bin/time`, else
// from bash's `times` (10 ms resolution). Wall time is perf's duration_time,
// else measured around the spawn.
//
// `vnf-list` runs over 10 000 stored instances (rows written straight into
// the bench's own store, with an onboarded package to point at).
//
//   node bench/startup.mjs [--json]     (npm run bench builds first)
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const RUNS = Number(process.env.RUNS ?? 40);
const root = resolve(import.meta.dirname, '..');
const bin = join(root, 'bin', 'vnfm');
const exe = join(root, 'dist', `vnfm-${process.platform}-${process.arch}`);
const work = mkdtempSync(join(tmpdir(), 'vnfm-bench-'));
const home = join(work, 'home');
const env = { ...process.env, VNFM_HOME: home, NO_COLOR: '1' };

if (!existsSync(join(root, 'build', 'vnfm.cjs'))) {
  console.error('bench: build/vnfm.cjs is missing; run npm run build (npm run bench does)');
  process.exit(1);
}

// A store with a few VIMs, so vim-list reads real rows.
const vimConfig = join(root, 'templates', 'vim-config-kubernetes.yaml');
for (let i = 0; i < 5; i++) {
  execFileSync(process.execPath, [bin, 'vim-register', '--no-check', '--config-file', vimConfig, `vim-${i}`], { env, stdio: 'ignore' });
}

// 10 000 VNF instances for vnf-list: one onboarded package, rows inserted in one transaction.
execFileSync(process.execPath, [bin, 'vnfpkg-onboard', join(root, 'csar-samples', 'basic-cnf', 'package'), '--name', 'bench'], { env, stdio: 'ignore' });
{
  const { createRequire } = await import('node:module');
  const Database = createRequire(import.meta.url)('better-sqlite3');
  const db = new Database(join(home, 'vnfm.db'));
  const pkg = db.prepare("SELECT id, vnfd_id FROM vnf_packages WHERE name = 'bench'").get();
  const insert = db.prepare(
    "INSERT INTO vnf_instances (id, name, vnfd_id, vnf_pkg_id, instantiation_state, created_at, updated_at) VALUES (?, ?, ?, ?, 'NOT_INSTANTIATED', ?, ?)",
  );
  const now = new Date().toISOString();
  db.transaction(() => {
    for (let i = 0; i < 10_000; i++) insert.run(`bench-${String(i).padStart(5, '0')}`, `vnf-${i}`, pkg.vnfd_id, pkg.id, now, now);
  })();
  db.close();
}

const commands = {
  'node -e 0': [process.execPath, '-e', '0'],
  'bin/vnfm --version': [process.execPath, bin, '--version'],
  'bin/vnfm vim-list': [process.execPath, bin, 'vim-list'],
  'bin/vnfm vim-list -o json': [process.execPath, bin, 'vim-list', '-o', 'json'],
  'bin/vnfm vnf-list (10 000)': [process.execPath, bin, 'vnf-list'],
  'bin/vnfm vnf-list -o json (10 000)': [process.execPath, bin, 'vnf-list', '-o', 'json'],
};
if (existsSync(exe)) {
  commands['executable --version'] = [exe, '--version'];
  commands['executable vim-list'] = [exe, 'vim-list'];
  commands['executable vim-list -o json'] = [exe, 'vim-list', '-o', 'json'];
  commands['executable vnf-list (10 000)'] = [exe, 'vnf-list'];
  // The first run writes the SQLite addon into VNFM_HOME's cache; time the runs after it.
  execFileSync(exe, ['vim-list'], { env, stdio: 'ignore' });
} else {
  console.error(`bench: ${exe} is missing (npm run dist builds it); measuring bin/vnfm only`);
}

const perfOut = join(work, 'perf.txt');
const works = (cmd, args) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
const method = works('perf', ['stat', '-x,', '-e', 'task-clock,duration_time', '-o', perfOut, '--', process.execPath, '-e', '0'])
  ? 'perf stat task-clock'
  : works('/usr/bin/time', ['-f', '%U', process.execPath, '-e', '0'])
    ? '/usr/bin/time (10 ms)'
    : 'bash times (10 ms)';

const quote = (a) => `'${a.replace(/'/g, `'\\''`)}'`;
const toSeconds = (t) => {
  const m = /(\d+)m([\d.]+)s/.exec(t);
  return m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
};

function sample(argv) {
  const start = process.hrtime.bigint();
  if (method.startsWith('perf')) {
    const r = spawnSync('perf', ['stat', '-x,', '-e', 'task-clock,duration_time', '-o', perfOut, '--', ...argv], { env, stdio: 'ignore' });
    if (r.status !== 0) throw new Error(`${argv.join(' ')} failed`);
    const lines = readFileSync(perfOut, 'utf8').split('\n');
    const value = (event) => Number(lines.find((l) => l.split(',')[2] === event)?.split(',')[0]);
    return { cpu: value('task-clock'), wall: value('duration_time') / 1e6 };
  }
  if (method.startsWith('/usr/bin/time')) {
    const r = spawnSync('/usr/bin/time', ['-f', '%U %S', '-o', perfOut, ...argv], { env, stdio: 'ignore' });
    const wall = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0) throw new Error(`${argv.join(' ')} failed`);
    const [u, s] = readFileSync(perfOut, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
    return { cpu: (u + s) * 1000, wall };
  }
  const r = spawnSync('bash', ['-c', `${argv.map(quote).join(' ')} >/dev/null 2>&1; times`], { env, encoding: 'utf8' });
  const wall = Number(process.hrtime.bigint() - start) / 1e6;
  const children = r.stdout.trim().split('\n')[1]?.split(/\s+/) ?? [];
  return { wall, cpu: (toSeconds(children[0]) + toSeconds(children[1])) * 1000 };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const results = Object.fromEntries(Object.keys(commands).map((k) => [k, { wall: [], cpu: [] }]));
for (const argv of Object.values(commands)) sample(argv); // warm the file cache
for (let i = 0; i < RUNS; i++) {
  for (const [name, argv] of Object.entries(commands)) {
    const s = sample(argv);
    results[name].wall.push(s.wall);
    results[name].cpu.push(s.cpu);
  }
}
rmSync(work, { recursive: true, force: true });

const base = median(results['node -e 0'].cpu);
const rows = Object.entries(results).map(([name, r]) => ({ command: name, wall_ms: median(r.wall), cpu_ms: median(r.cpu), cpu_vs_node: median(r.cpu) / base }));
if (process.argv.includes('--json')) {
  console.log(JSON.stringify({ node: process.version, runs: RUNS, cpu: method, results: rows }, null, 2));
} else {
  console.log(`start-up, ${RUNS} runs each, medians (node ${process.version}; CPU from ${method})`);
  console.log('command'.padEnd(38) + 'wall ms'.padStart(10) + 'cpu ms'.padStart(10) + '  cpu vs node -e 0');
  for (const r of rows) {
    console.log(r.command.padEnd(38) + r.wall_ms.toFixed(1).padStart(10) + r.cpu_ms.toFixed(1).padStart(10) + `  ${r.cpu_vs_node.toFixed(2)}x`);
  }
}
