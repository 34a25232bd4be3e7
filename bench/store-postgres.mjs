#!/usr/bin/env node
// The shared store on PostgreSQL beside the SQLite store, through the real
// program (bin/vnfm running build/vnfm.cjs):
//
//  1. 8 clients at once, each on an instance of its own: 8 processes of
//     vnfm, each with a VNFM_HOME of its own ("8 machines"), on one
//     PostgreSQL database; then 8 processes on one VNFM_HOME (one SQLite
//     file). Each client creates its instance, runs ROUNDS rounds of
//     vnf-update (a MODIFY_INFO operation: the instance's lock, a lease on
//     PostgreSQL, taken and released) and vnf-show, then deletes it. Figures:
//     wall time of the whole run, per-command latency (median, p95), the
//     commands refused (exit 4: locked, or the store's write lock held past
//     its 15 s) or failed, and on PostgreSQL the lock waits seen (pg_locks
//     sampled every 20 ms: samples with a waiter, most waiters at once).
//  2. vnf-list over 10 000 instances, table and -o json, on both backends
//     (median and p95 of RUNS runs, default 10).
//
// PostgreSQL comes from the Debian package (test/support/install-debian-deps.sh):
// a private cluster on 127.0.0.1, started as the tests start it
// (test/support/postgres.ts, bundled here with esbuild), removed at the end.
//
//   node bench/store-postgres.mjs [--json]     (npm run bench builds first)
//   CLIENTS=8 ROUNDS=8 RUNS=10 ROWS=10000 node bench/store-postgres.mjs
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const CLIENTS = Number(process.env.CLIENTS ?? 8);
const ROUNDS = Number(process.env.ROUNDS ?? 8);
const RUNS = Number(process.env.RUNS ?? 10);
const ROWS = Number(process.env.ROWS ?? 10_000);
const root = resolve(import.meta.dirname, '..');
const bin = join(root, 'bin', 'vnfm');
const require = createRequire(import.meta.url);
const work = mkdtempSync(join(tmpdir(), 'vnfm-bench-pg-'));
const sample = join(root, 'csar-samples', 'basic-cnf', 'package');

if (!existsSync('/usr/lib/postgresql')) {
  console.log('bench: skipped, PostgreSQL is not installed (apt-get install postgresql; see test/support/install-debian-deps.sh)');
  process.exit(0);
}
if (!existsSync(join(root, 'build', 'vnfm.cjs'))) {
  console.error('bench: build/vnfm.cjs is missing; run npm run build (npm run bench does)');
  process.exit(1);
}

/** test/support/postgres.ts as a CommonJS module (esbuild, as the tests bundle their helper programs). */
async function loadPostgresHarness() {
  const esbuild = require('esbuild');
  const out = join(work, 'postgres-harness.cjs');
  await esbuild.build({
    entryPoints: [join(root, 'test', 'support', 'postgres.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: out,
    external: ['pg-native'],
    logLevel: 'error',
  });
  return require(out);
}

/** Runs vnfm; resolves with the exit code, output and wall time in ms. */
function vnfm(args, env) {
  return new Promise((resolvePromise, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH, HOME: work, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr, ms: Number(process.hrtime.bigint() - start) / 1e6 }));
  });
}

async function ok(args, env) {
  const r = await vnfm(args, env);
  if (r.code !== 0) throw new Error(`vnfm ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r;
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
};
const median = (xs) => quantile(xs, 0.5);

/** A new VNFM_HOME with the sample onboarded as `bench`; `copyTo` homes get its files too (package files stay per machine). */
async function prepareHomes(env, homes) {
  for (const h of homes) mkdirSync(h, { recursive: true, mode: 0o700 });
  await ok(['vnfpkg-onboard', sample, '--name', 'bench'], { ...env, VNFM_HOME: homes[0] });
  const pkgDir = join(homes[0], 'packages');
  for (const h of homes.slice(1)) if (existsSync(pkgDir) && !existsSync(join(h, 'packages'))) cpSync(pkgDir, join(h, 'packages'), { recursive: true });
}

/** One client: create, ROUNDS × (update, show), delete; every command's latency and exit code. */
async function client(i, env) {
  const times = {};
  const outcomes = [];
  const timed = async (what, args) => {
    const r = await vnfm(args, env);
    (times[what] ??= []).push(r.ms);
    outcomes.push({ what, code: r.code, stderr: r.stderr });
    return r;
  };
  const created = await timed('vnf-create', ['vnf-create', '--package', 'bench', '--name', `client-${i}`, '-o', 'json']);
  if (created.code !== 0) return { times, outcomes };
  const { id } = JSON.parse(created.stdout);
  const request = join(work, `modify-${i}-${randomUUID()}.json`);
  for (let r = 0; r < ROUNDS; r++) {
    writeFileSync(request, JSON.stringify({ vnfInstanceDescription: `client ${i}, round ${r}` }));
    await timed('vnf-update', ['vnf-update', id, '--request-file', request]);
    await timed('vnf-show', ['vnf-show', id, '-o', 'json']);
  }
  await timed('vnf-delete', ['vnf-delete', id, '--yes']);
  return { times, outcomes };
}

/** Samples pg_locks every 20 ms until stopped: how often a lock was waited for, and the most waiters at once. */
function sampleLockWaits(pg, config) {
  const c = new pg.Client(config);
  let stop = false;
  const seen = { samples: 0, withWaiter: 0, maxWaiters: 0 };
  const done = (async () => {
    await c.connect();
    while (!stop) {
      const { rows } = await c.query('SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted');
      seen.samples++;
      if (rows[0].n > 0) seen.withWaiter++;
      seen.maxWaiters = Math.max(seen.maxWaiters, rows[0].n);
      await new Promise((r) => setTimeout(r, 20));
    }
    await c.end();
  })();
  return async () => {
    stop = true;
    await done;
    return seen;
  };
}

async function concurrentRun(label, envOf) {
  const start = process.hrtime.bigint();
  const results = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i, envOf(i))));
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
  const times = {};
  for (const r of results) for (const [what, xs] of Object.entries(r.times)) (times[what] ??= []).push(...xs);
  const outcomes = results.flatMap((r) => r.outcomes);
  const refused = outcomes.filter((o) => o.code === 4);
  const failed = outcomes.filter((o) => o.code !== 0 && o.code !== 4);
  return {
    label,
    wallMs,
    commands: outcomes.length,
    latency: Object.fromEntries(Object.entries(times).map(([what, xs]) => [what, { n: xs.length, medianMs: median(xs), p95Ms: quantile(xs, 0.95) }])),
    refused: refused.length,
    failed: failed.length,
    firstProblem: [...refused, ...failed][0]?.stderr.trim().split('\n')[0],
  };
}

/** Copies `ROWS - 1` instances from the one instance the store holds (new id and name each). */
function seedSqlite(home) {
  const Database = require('better-sqlite3');
  const db = new Database(join(home, 'vnfm.db'));
  const template = db.prepare('SELECT * FROM vnf_instances LIMIT 1').get();
  // and its large JSON columns, in the side table keyed by its id
  const details = db.prepare('SELECT * FROM vnf_instance_details WHERE id = ?').get(template.id);
  const inserter = (table, row) => {
    const cols = Object.keys(row);
    return db.prepare(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((c) => '@' + c).join(', ')})`);
  };
  const insert = inserter('vnf_instances', template);
  const insertDetails = inserter('vnf_instance_details', details);
  db.transaction(() => {
    for (let i = 1; i < ROWS; i++) {
      const id = randomUUID();
      insert.run({ ...template, id, name: `vnf-${String(i).padStart(5, '0')}` });
      insertDetails.run({ ...details, id });
    }
  })();
  db.close();
}

async function seedPostgres(pg, config) {
  const c = new pg.Client(config);
  await c.connect();
  try {
    const { rows } = await c.query('SELECT * FROM vnf_instances LIMIT 1');
    const template = rows[0];
    // and its large JSON columns, in the side table keyed by its id
    const details = (await c.query('SELECT * FROM vnf_instance_details WHERE id = $1', [template.id])).rows[0];
    const columnsOf = (row) => Object.keys(row).filter((k) => k !== 'rowid');
    await c.query('BEGIN');
    const BATCH = 500;
    for (let from = 1; from < ROWS; from += BATCH) {
      const batch = { vnf_instances: { values: [], tuples: [] }, vnf_instance_details: { values: [], tuples: [] } };
      for (let i = from; i < Math.min(ROWS, from + BATCH); i++) {
        const id = randomUUID();
        for (const [table, row] of [
          ['vnf_instances', { ...template, id, name: `vnf-${String(i).padStart(5, '0')}` }],
          ['vnf_instance_details', { ...details, id }],
        ]) {
          const b = batch[table];
          b.tuples.push(
            `(${columnsOf(row)
              .map((col) => `$${b.values.push(row[col])}`)
              .join(', ')})`,
          );
        }
      }
      for (const [table, row] of [
        ['vnf_instances', template],
        ['vnf_instance_details', details],
      ]) {
        await c.query(`INSERT INTO ${table} (${columnsOf(row).join(', ')}) VALUES ${batch[table].tuples.join(', ')}`, batch[table].values);
      }
    }
    await c.query('COMMIT');
    await c.query('ANALYZE');
  } finally {
    await c.end();
  }
}

/** Median and p95 wall time of `args`, RUNS runs, the backends interleaved. */
async function listTimes(envs, args) {
  const out = Object.fromEntries(Object.keys(envs).map((k) => [k, []]));
  for (const env of Object.values(envs)) await ok(args, env); // warm the code cache
  for (let r = 0; r < RUNS; r++) for (const [k, env] of Object.entries(envs)) out[k].push((await ok(args, env)).ms);
  return Object.fromEntries(Object.entries(out).map(([k, xs]) => [k, { medianMs: median(xs), p95Ms: quantile(xs, 0.95) }]));
}

const { startPostgres } = await loadPostgresHarness();
const pg = require('pg');
const server = await startPostgres();
try {
  const database = await server.createDatabase();
  const url = server.url(database);
  const admin = { host: server.dir, port: server.port, user: server.user, password: server.password, database };
  const key = (await ok(['key-generate'], { VNFM_HOME: join(work, 'keygen') })).stdout.trim();

  // 1. Eight clients at once.
  const pgHomes = Array.from({ length: CLIENTS }, (_, i) => join(work, `pg-home-${i}`));
  const pgEnv = (i) => ({ VNFM_HOME: pgHomes[i], VNFM_DATABASE_URL: url, VNFM_MASTER_KEY: key });
  await prepareHomes(pgEnv(0), pgHomes);
  const sqliteHome = join(work, 'sqlite-home');
  const sqliteEnv = { VNFM_HOME: sqliteHome, VNFM_MASTER_KEY: key };
  await prepareHomes(sqliteEnv, [sqliteHome]);

  const stopSampling = sampleLockWaits(pg, admin);
  const onPg = await concurrentRun(`PostgreSQL, ${CLIENTS} VNFM_HOMEs`, pgEnv);
  onPg.lockWaits = await stopSampling();
  const onSqlite = await concurrentRun(`SQLite, ${CLIENTS} processes on one VNFM_HOME`, () => sqliteEnv);

  // 2. vnf-list over ROWS instances: one instance made by vnfm, copied.
  await ok(['vnf-create', '--package', 'bench', '--name', 'vnf-00000'], pgEnv(0));
  await ok(['vnf-create', '--package', 'bench', '--name', 'vnf-00000'], sqliteEnv);
  await seedPostgres(pg, admin);
  seedSqlite(sqliteHome);
  const listEnvs = { postgres: pgEnv(1), sqlite: sqliteEnv };
  const counted = JSON.parse((await ok(['vnf-list', '-o', 'json'], pgEnv(1))).stdout).length;
  if (counted !== ROWS) throw new Error(`bench: vnf-list on PostgreSQL shows ${counted} instances, not ${ROWS}`);
  const list = {
    [`vnf-list (${ROWS})`]: await listTimes(listEnvs, ['vnf-list']),
    [`vnf-list -o json (${ROWS})`]: await listTimes(listEnvs, ['vnf-list', '-o', 'json']),
  };

  const report = { clients: CLIENTS, rounds: ROUNDS, concurrent: [onPg, onSqlite], list };
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(report, null, 2));
  } else {
    const f = (ms) => `${(ms / 1000).toFixed(2)} s`;
    const m = (ms) => `${Math.round(ms)} ms`;
    for (const run of report.concurrent) {
      console.log(
        `\n${run.label}: ${run.commands} commands in ${f(run.wallMs)}; refused (exit 4) ${run.refused}, failed ${run.failed}${run.firstProblem ? ` (first: ${run.firstProblem})` : ''}`,
      );
      for (const [what, l] of Object.entries(run.latency))
        console.log(`  ${what.padEnd(11)} n=${String(l.n).padStart(3)}  median ${m(l.medianMs).padStart(7)}  p95 ${m(l.p95Ms).padStart(7)}`);
      if (run.lockWaits)
        console.log(`  lock waits: ${run.lockWaits.withWaiter} of ${run.lockWaits.samples} samples of pg_locks had a waiter (most at once: ${run.lockWaits.maxWaiters})`);
    }
    console.log(`\nvnf-list, ${RUNS} runs each (wall time, median / p95):`);
    for (const [what, byBackend] of Object.entries(list)) {
      console.log(
        `  ${what.padEnd(26)} PostgreSQL ${m(byBackend.postgres.medianMs)} / ${m(byBackend.postgres.p95Ms)}   SQLite ${m(byBackend.sqlite.medianMs)} / ${m(byBackend.sqlite.p95Ms)}`,
      );
    }
  }
  process.exitCode = onPg.failed + onSqlite.failed > 0 ? 1 : 0;
} finally {
  await server.stop();
  for (const name of readdirSync(work)) rmSync(join(work, name), { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
}
