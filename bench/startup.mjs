#!/usr/bin/env node
// Start-up benchmark, for bin/vnfm (Node running
// build/vnfm.cjs) and the single executable (dist/vnfm-<platform>-<arch>),
// each figure beside its anchor and its goal:
//
//  1. start-up: `--version`, `vim-list` and `vnf-list` on an empty store, CPU
//     time against `node -e 0` (goals: bin/vnfm <= 1.35x; the executable's
//     `--version` and `vim-list` <= 1.25x, its `vnf-list` <= 1.35x). bin/vnfm
//     is measured warm, with the code cache it keeps under VNFM_HOME; the cold
//     first start is shown too.
//  2. lists of 10 000: `vnf-list` and `op-list`, table and `-o json`, over
//     10 000 INSTANTIATED instances and 20 000 operation occurrences (goal:
//     CPU <= 2x `vnf-list` on the empty store, peak RSS <= 80 MiB): the
//     instances, and the 10 000 scale-out occurrences (`op-list --operation
//     SCALE`); all 20 000 occurrences are shown for reference; -o json
//     prints the simple attributes, as Tacker's API lists do, and `-o json
//     --all-fields` (every attribute) is shown for reference. The rows
//     are copies of a real instance: the basic-cnf sample instantiated on the
//     sandbox and scaled out, so each carries the instance info, the journals
//     and the prior state an operator's store holds.
//
// Medians over RUNS runs (default 40), interleaved so machine noise hits every
// command alike. CPU time (user + system, all threads) comes from `perf stat`
// (task-clock, sub-millisecond) when perf works here, else from `/usr/bin/time`,
// else from bash's `times` (10 ms resolution). Wall time is perf's
// duration_time, else measured around the spawn. Peak RSS from GNU time's %M
// (median of RSS_RUNS runs, default 5), when /usr/bin/time is there.
//
//   node bench/startup.mjs [--json] [--startup]     (npm run bench builds first)
//
// --startup measures the start-up figures alone (no store of 10 000 rows, no
// sandbox), RUNS defaulting to 21. VNFM_BENCH_BEFORE=DIR measures another
// build beside this one in the same runs (DIR/bin/vnfm, and
// DIR/dist/vnfm-<platform>-<arch> when there): a copy of bin/, build/ and
// dist/ taken before a change, with node_modules beside them (a link will do),
// each with its own VNFM_HOME (a build removes another build's code caches).
//
// NODE_EXTRA_CA_CERTS and NODE_OPTIONS are removed from the environment of
// every command measured, the anchor included (a CA file adds ~40 ms to each).
//
// VNFM_BENCH_STORE=DIR keeps the stores in DIR: built there on the first run,
// used as they are by the next ones (the 10 000 rows take minutes to make).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const startupOnly = process.argv.includes('--startup');
const RUNS = Number(process.env.RUNS ?? (startupOnly ? 21 : 40));
const RSS_RUNS = Number(process.env.RSS_RUNS ?? 5);
const ROWS = 10_000;
const root = resolve(import.meta.dirname, '..');
const bin = join(root, 'bin', 'vnfm');
const exe = join(root, 'dist', `vnfm-${process.platform}-${process.arch}`);
const kept = process.env.VNFM_BENCH_STORE ? resolve(process.env.VNFM_BENCH_STORE) : undefined;
const work = kept ?? mkdtempSync(join(tmpdir(), 'vnfm-bench-'));
const reused = kept !== undefined && existsSync(join(kept, 'home', 'vnfm.db'));
// A kept store made by --startup has its VIMs but not the 10 000 rows (marked so): those are made when a full run needs them.
const noLists = join(work, 'no-lists');
const listsMade = reused && !existsSync(noLists);
const home = join(work, 'home');
const emptyHome = join(work, 'empty-home');
const coldHome = join(work, 'cold-home');
// NODE_EXTRA_CA_CERTS makes every Node start read and parse a CA file (~40 ms here, in the anchor as in vnfm):
// it and NODE_OPTIONS are left out of every command measured, so the ratios compare the programs, not the file.
const { NODE_EXTRA_CA_CERTS: _extraCa, NODE_OPTIONS: _nodeOptions, ...inherited } = process.env;
const env = { ...inherited, VNFM_HOME: home, NO_COLOR: '1' };
const emptyEnv = { ...env, VNFM_HOME: emptyHome };

if (!existsSync(join(root, 'build', 'vnfm.cjs'))) {
  console.error('bench: build/vnfm.cjs is missing; run npm run build (npm run bench does)');
  process.exit(1);
}
const vnfm = (args, e = env) => execFileSync(process.execPath, [bin, ...args], { env: e, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

// A store with a few VIMs, so vim-list reads real rows; an empty one for the start-up figures.
if (!reused) {
  const vimConfig = join(root, 'templates', 'vim-config-kubernetes.yaml');
  for (let i = 0; i < 5; i++) vnfm(['vim-register', '--no-check', '--config-file', vimConfig, `vim-${i}`]);
  vnfm(['vim-list'], emptyEnv);
  if (startupOnly) writeFileSync(noLists, '');
}
if (!listsMade && !startupOnly) {
  // One real instance: basic-cnf instantiated on the sandbox, then scaled out.
  {
    const sandbox = await new Promise((resolvePromise, reject) => {
      const child = spawn(process.execPath, [bin, 'sandbox', '--listen', '127.0.0.1:0', '-o', 'json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d) => {
        out += d;
        try {
          resolvePromise({ child, ...JSON.parse(out) });
        } catch {
          // not the whole document yet
        }
      });
      child.on('exit', (code) => reject(new Error(`vnfm sandbox exited (${code}) before listening`)));
    });
    try {
      const sample = join(root, 'csar-samples', 'basic-cnf');
      vnfm(['vim-register', '--is-default', '--config-file', sandbox.vim_config, 'sandbox']);
      vnfm(['vnfpkg-onboard', join(sample, 'package'), '--name', 'bench']);
      const { id } = JSON.parse(vnfm(['vnf-create', '--package', 'bench', '--name', 'vnf-template', '-o', 'json']));
      vnfm(['vnf-instantiate', id, '--request-file', join(sample, 'requests', 'instantiate.json')]);
      vnfm(['vnf-scale', id, '--request-file', join(sample, 'requests', 'scale-out.json')]);
    } finally {
      sandbox.child.removeAllListeners('exit');
      sandbox.child.kill('SIGTERM');
      await new Promise((r) => sandbox.child.once('exit', r));
    }
  }

  // ... copied to 10 000 instances, each with its two operation occurrences.
  {
    const { createRequire } = await import('node:module');
    const Database = createRequire(import.meta.url)('better-sqlite3');
    const db = new Database(join(home, 'vnfm.db'));
    const copier = (table, rows) => {
      if (!rows.length) throw new Error(`bench: the template has no ${table} row`);
      const cols = Object.keys(rows[0]);
      const insert = db.prepare(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((c) => '@' + c).join(', ')})`);
      return (changes) => rows.forEach((row) => insert.run({ ...row, ...changes(row) }));
    };
    const instance = db.prepare("SELECT * FROM vnf_instances WHERE name = 'vnf-template'").get();
    const ops = db.prepare('SELECT * FROM lcm_op_occs WHERE vnf_instance_id = ? ORDER BY start_time').all(instance.id);
    if (instance.instantiation_state !== 'INSTANTIATED' || ops.length !== 2) throw new Error('bench: the template instance did not instantiate and scale');
    // Each row's large JSON columns, in the side tables keyed by its id.
    const sides = (table, id) => db.prepare(`SELECT * FROM ${table} WHERE id = ?`).all(id);
    const copyInstance = copier('vnf_instances', [instance]);
    const copyDetails = copier('vnf_instance_details', sides('vnf_instance_details', instance.id));
    const copyOps = ops.map((op) => [
      copier('lcm_op_occs', [op]),
      copier('lcm_op_occ_details', sides('lcm_op_occ_details', op.id)),
      copier('lcm_op_occ_prior_states', sides('lcm_op_occ_prior_states', op.id)),
    ]);
    db.transaction(() => {
      for (let i = 1; i < ROWS; i++) {
        const id = randomUUID();
        copyInstance(() => ({ id, name: `vnf-${String(i).padStart(5, '0')}` }));
        copyDetails(() => ({ id }));
        for (const copies of copyOps) {
          const opId = randomUUID();
          for (const copy of copies) copy((row) => ({ id: opId, ...('vnf_instance_id' in row ? { vnf_instance_id: id } : {}) }));
        }
      }
    })();
    db.close();
  }
  rmSync(noLists, { force: true });
}

const commands = {
  'node -e 0': [process.execPath, '-e', '0'],
  'bin/vnfm --version': [process.execPath, bin, '--version'],
  'bin/vnfm vim-list': [process.execPath, bin, 'vim-list'],
  'bin/vnfm vim-list -o json': [process.execPath, bin, 'vim-list', '-o', 'json'],
  'bin/vnfm vnf-list (empty store)': { argv: [process.execPath, bin, 'vnf-list'], env: emptyEnv },
  'bin/vnfm vim-list (cold, no cache)': {
    argv: [process.execPath, bin, 'vim-list'],
    env: { ...env, VNFM_HOME: coldHome },
    before: () => rmSync(join(coldHome, 'cache'), { recursive: true, force: true }),
  },
};
const listCommands = {
  'bin/vnfm vnf-list (10 000)': [process.execPath, bin, 'vnf-list'],
  'bin/vnfm vnf-list -o json (10 000)': [process.execPath, bin, 'vnf-list', '-o', 'json'],
  // Each instance has two occurrences (instantiate, scale out): the scale ones are a list of 10 000, the whole a list of 20 000.
  'bin/vnfm op-list --operation SCALE (10 000)': [process.execPath, bin, 'op-list', '--operation', 'SCALE'],
  'bin/vnfm op-list --operation SCALE -o json (10 000)': [process.execPath, bin, 'op-list', '--operation', 'SCALE', '-o', 'json'],
  'bin/vnfm op-list (20 000)': [process.execPath, bin, 'op-list'],
  'bin/vnfm op-list -o json (20 000)': [process.execPath, bin, 'op-list', '-o', 'json'],
  // Every attribute (SOL013 --all-fields): what -o json printed before it left out the complex ones.
  'bin/vnfm vnf-list -o json --all-fields': [process.execPath, bin, 'vnf-list', '-o', 'json', '--all-fields'],
  'bin/vnfm op-list -o json --all-fields': [process.execPath, bin, 'op-list', '-o', 'json', '--all-fields'],
};
if (!startupOnly) Object.assign(commands, listCommands);
vnfm(['vim-list'], { ...env, VNFM_HOME: coldHome });
if (existsSync(exe)) {
  commands['executable --version'] = [exe, '--version'];
  commands['executable vim-list'] = [exe, 'vim-list'];
  commands['executable vim-list -o json'] = [exe, 'vim-list', '-o', 'json'];
  commands['executable vnf-list (empty store)'] = { argv: [exe, 'vnf-list'], env: emptyEnv };
  if (!startupOnly) commands['executable vnf-list (10 000)'] = [exe, 'vnf-list'];
  // The first run writes the SQLite addon into VNFM_HOME's cache; time the runs after it.
  execFileSync(exe, ['vim-list'], { env, stdio: 'ignore' });
  execFileSync(exe, ['vim-list'], { env: emptyEnv, stdio: 'ignore' });
} else {
  console.error(`bench: ${exe} is missing (npm run dist builds it); measuring bin/vnfm only`);
}

// Another build, in the same runs: its start-up figures beside this build's, each in a copy of the stores.
const beforeDir = process.env.VNFM_BENCH_BEFORE ? resolve(process.env.VNFM_BENCH_BEFORE) : undefined;
if (beforeDir) {
  const beforeBin = join(beforeDir, 'bin', 'vnfm');
  const beforeExe = join(beforeDir, 'dist', `vnfm-${process.platform}-${process.arch}`);
  const copyOf = (from, name) => {
    const to = join(work, name);
    rmSync(to, { recursive: true, force: true });
    mkdirSync(to, { mode: 0o700 });
    for (const f of ['vnfm.db', 'master.key']) if (existsSync(join(from, f))) cpSync(join(from, f), join(to, f));
    return to;
  };
  const bEnv = { ...env, VNFM_HOME: copyOf(home, 'before-home') };
  const bEmptyEnv = { ...env, VNFM_HOME: copyOf(emptyHome, 'before-empty-home') };
  for (const [who, argv0] of [['before bin/vnfm', [process.execPath, beforeBin]], ...(existsSync(beforeExe) ? [['before executable', [beforeExe]]] : [])]) {
    commands[`${who} --version`] = { argv: [...argv0, '--version'], env: bEnv };
    commands[`${who} vim-list`] = { argv: [...argv0, 'vim-list'], env: bEnv };
    commands[`${who} vnf-list (empty store)`] = { argv: [...argv0, 'vnf-list'], env: bEmptyEnv };
    execFileSync(argv0[0], [...argv0.slice(1), 'vim-list'], { env: bEnv, stdio: 'ignore' });
    execFileSync(argv0[0], [...argv0.slice(1), 'vnf-list'], { env: bEmptyEnv, stdio: 'ignore' });
  }
}
const spec = (c) => (Array.isArray(c) ? { argv: c, env } : { env, ...c });

/** Each target: the figure, its anchor and the goal (ratio of CPU; RSS in MiB). */
const TARGETS = [
  ...['bin/vnfm', 'executable'].flatMap((who) =>
    ['--version', 'vim-list', 'vnf-list (empty store)'].map((what) => ({
      target: 1,
      command: `${who} ${what}`,
      anchor: 'node -e 0',
      goal: who === 'executable' && what !== 'vnf-list (empty store)' ? 1.25 : 1.35,
    })),
  ),
  // The build measured beside this one (VNFM_BENCH_BEFORE), for the before/after.
  ...['before bin/vnfm', 'before executable'].flatMap((who) =>
    ['--version', 'vim-list', 'vnf-list (empty store)'].map((what) => ({ target: 1, command: `${who} ${what}`, anchor: 'node -e 0', reference: true })),
  ),
  ...['vnf-list (10 000)', 'vnf-list -o json (10 000)', 'op-list --operation SCALE (10 000)', 'op-list --operation SCALE -o json (10 000)'].map((what) => ({
    target: 2,
    command: `bin/vnfm ${what}`,
    anchor: 'bin/vnfm vnf-list (empty store)',
    goal: 2,
    rssGoalMiB: 80,
  })),
  { target: 2, command: 'executable vnf-list (10 000)', anchor: 'executable vnf-list (empty store)', goal: 2, rssGoalMiB: 80 },
  // Beside the same anchor, for reference: twice the goal's rows, and the whole items, which are not what the goal is about.
  ...['op-list (20 000)', 'op-list -o json (20 000)', 'vnf-list -o json --all-fields', 'op-list -o json --all-fields'].map((what) => ({
    target: 2,
    command: `bin/vnfm ${what}`,
    anchor: 'bin/vnfm vnf-list (empty store)',
    rssGoalMiB: 80,
    reference: true,
  })),
];

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

function sample({ argv, env: e, before }) {
  before?.();
  const start = process.hrtime.bigint();
  if (method.startsWith('perf')) {
    const r = spawnSync('perf', ['stat', '-x,', '-e', 'task-clock,duration_time', '-o', perfOut, '--', ...argv], { env: e, stdio: 'ignore' });
    if (r.status !== 0) throw new Error(`${argv.join(' ')} failed`);
    const lines = readFileSync(perfOut, 'utf8').split('\n');
    const value = (event) => Number(lines.find((l) => l.split(',')[2] === event)?.split(',')[0]);
    return { cpu: value('task-clock'), wall: value('duration_time') / 1e6 };
  }
  if (method.startsWith('/usr/bin/time')) {
    const r = spawnSync('/usr/bin/time', ['-f', '%U %S', '-o', perfOut, ...argv], { env: e, stdio: 'ignore' });
    const wall = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0) throw new Error(`${argv.join(' ')} failed`);
    const [u, s] = readFileSync(perfOut, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
    return { cpu: (u + s) * 1000, wall };
  }
  const r = spawnSync('bash', ['-c', `${argv.map(quote).join(' ')} >/dev/null 2>&1; times`], { env: e, encoding: 'utf8' });
  const wall = Number(process.hrtime.bigint() - start) / 1e6;
  const children = r.stdout.trim().split('\n')[1]?.split(/\s+/) ?? [];
  return { wall, cpu: (toSeconds(children[0]) + toSeconds(children[1])) * 1000 };
}

/** Peak RSS in MiB (GNU time's %M), or NaN without GNU time. */
function peakRss({ argv, env: e, before }) {
  before?.();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', '-o', perfOut, ...argv], { env: e, stdio: 'ignore' });
  if (r.error || r.status !== 0) return NaN;
  return Number(readFileSync(perfOut, 'utf8').trim().split('\n').at(-1)) / 1024;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const results = Object.fromEntries(Object.keys(commands).map((k) => [k, { wall: [], cpu: [], rss: [] }]));
for (const c of Object.values(commands)) sample(spec(c)); // warm the file cache
for (let i = 0; i < RUNS; i++) {
  for (const [name, c] of Object.entries(commands)) {
    const s = sample(spec(c));
    results[name].wall.push(s.wall);
    results[name].cpu.push(s.cpu);
  }
}
for (let i = 0; i < RSS_RUNS; i++) for (const [name, c] of Object.entries(commands)) results[name].rss.push(peakRss(spec(c)));
if (!kept) rmSync(work, { recursive: true, force: true });

const base = median(results['node -e 0'].cpu);
const rows = Object.entries(results).map(([name, r]) => ({
  command: name,
  wall_ms: median(r.wall),
  cpu_ms: median(r.cpu),
  cpu_vs_node: median(r.cpu) / base,
  peak_rss_mib: median(r.rss),
}));
const cpuOf = (name) => rows.find((r) => r.command === name)?.cpu_ms;
const targets = TARGETS.filter((t) => cpuOf(t.command) !== undefined).map((t) => {
  const ratio = cpuOf(t.command) / cpuOf(t.anchor);
  const rss = rows.find((r) => r.command === t.command).peak_rss_mib;
  const met = (t.reference || ratio <= t.goal) && (t.rssGoalMiB === undefined || !(rss > t.rssGoalMiB));
  return { ...t, ratio, ...(t.rssGoalMiB === undefined ? {} : { peak_rss_mib: rss }), met };
});
if (process.argv.includes('--json')) {
  console.log(JSON.stringify({ node: process.version, runs: RUNS, cpu: method, loadAverage: loadavg(), results: rows, targets }, null, 2));
} else {
  console.log(`start-up and lists, ${RUNS} runs each, medians (node ${process.version}; CPU from ${method}; peak RSS over ${RSS_RUNS} runs)`);
  const width = Math.max(40, ...rows.map((r) => r.command.length + 1));
  console.log('command'.padEnd(width) + 'wall ms'.padStart(10) + 'cpu ms'.padStart(10) + 'rss MiB'.padStart(10) + '  cpu vs node -e 0');
  for (const r of rows) {
    console.log(
      r.command.padEnd(width) + r.wall_ms.toFixed(1).padStart(10) + r.cpu_ms.toFixed(1).padStart(10) + r.peak_rss_mib.toFixed(1).padStart(10) + `  ${r.cpu_vs_node.toFixed(2)}x`,
    );
  }
  console.log('\ngoals: each figure beside its anchor');
  for (const t of targets) {
    const rss = t.rssGoalMiB === undefined ? '' : `, ${t.peak_rss_mib.toFixed(1)} MiB (goal <= ${t.rssGoalMiB})`;
    const goal = t.reference ? 'for reference' : `goal <= ${t.goal}x`;
    console.log(`  ${t.target}. ${t.command}: ${t.ratio.toFixed(2)}x ${t.anchor} (${goal})${rss}${t.reference ? '' : t.met ? '  met' : '  NOT MET'}`);
  }
  console.log(
    `load average at the end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (${availableParallelism()} CPUs)`,
  );
}
