/**
 * The shared store blocks the main thread on each statement; while one waits
 * for the store's write lock held by another client, the command must still
 * answer Ctrl-C, SIGTERM and its --timeout as documented, not once the other
 * client lets go. The real program against a private PostgreSQL server and
 * the Kubernetes sandbox: the test holds the write lock (the advisory lock
 * every vnfm write takes) while an operation runs, signals the operation once
 * its backend waits for that lock, and checks the process ended with the lock
 * still held, what it said, and what the occurrence is left as.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateFernetKey } from '../../src/crypto/fernet.js';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { BIN, newHome, okWith, vnfm } from '../support/cli.js';
import { startPostgres, type PgServer } from '../support/postgres.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');
const KEY = generateFernetKey();
/** The store's write lock (store/postgres/database.ts). */
const WRITE_LOCK = 'SELECT pg_advisory_xact_lock(1986946669, 1)';

let cluster: E2eCluster;
let server: PgServer;
let dir: string;
let namespaces = 0;

beforeAll(async () => {
  // Pods take a while to be ready, so that an operation is still running when the test takes the write lock.
  [cluster, server] = await Promise.all([e2eCluster('e2e-signals', { controllers: { readyDelayMs: 2500, terminationDelayMs: 20 } }), startPostgres()]);
  dir = mkdtempSync(join(tmpdir(), 'vnfm-signals-e2e-'));
});

afterAll(async () => {
  await Promise.all([cluster?.close(), server?.stop()]);
});

/** A namespace of its own for each test's CNF (the sample's objects have fixed names), and its instantiate request. */
async function namespaceWithRequest(): Promise<string> {
  const ns = `${cluster.namespace}-sig${++namespaces}`;
  const made = await cluster.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  expect(made.status).toBe(201);
  const body = JSON.parse(readFileSync(join(SAMPLE, 'requests', 'instantiate.json'), 'utf8')) as { additionalParams?: { namespace?: string } };
  body.additionalParams = { ...body.additionalParams, namespace: ns };
  const path = join(dir, `instantiate-${ns}.json`);
  writeFileSync(path, JSON.stringify(body, null, 2));
  return path;
}

interface Machine {
  home: string;
  env: Record<string, string>;
  ok: (args: string[]) => Promise<{ stdout: string; stderr: string }>;
  run: (args: string[]) => Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** A machine on a fresh database with the sample CNF instantiated as `web`. */
async function machineWithCnf(): Promise<{ m: Machine; db: string }> {
  const db = await server.createDatabase();
  const home = newHome();
  const env = { VNFM_MASTER_KEY: KEY, VNFM_DATABASE_URL: server.url(db) };
  const run = (args: string[]) => vnfm(args, { home, env });
  const m: Machine = { home, env, run, ok: okWith(run) };
  const vimConfig = join(home, '..', 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, cluster.namespace);
  await m.ok(['vim-register', '--config-file', vimConfig, 'sandbox']);
  await m.ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf']);
  await m.ok(['vnf-create', '--package', 'basic-cnf', '--name', 'web']);
  await m.ok(['vnf-instantiate', 'web', '--request-file', await namespaceWithRequest()]);
  return { m, db };
}

function client(db: string): pg.Client {
  return new pg.Client({ host: server.dir, port: server.port, user: server.user, password: server.password, database: db });
}

/** Polls `check` (a query's row count) until it finds a row, or fails when the child ended first. */
async function until(c: pg.Client, sql: string, child: { exitCode: number | null }, what: string): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    if ((await c.query(sql)).rowCount) return;
    if (child.exitCode !== null) throw new Error(`the operation ended before ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`never saw ${what}`);
}

/**
 * Starts `args` on machine m, takes the store's write lock once the
 * operation is PROCESSING, waits until the program's backend waits for that
 * lock, sends `signal` (none: the program's own deadline ends the wait), and
 * gives back how the program ended, decided while the test still held the lock.
 */
async function blockedThenStopped(m: Machine, db: string, args: string[], signal?: NodeJS.Signals) {
  const holder = client(db);
  const watcher = client(db);
  await Promise.all([holder.connect(), watcher.connect()]);
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env['PATH'], HOME: m.home.replace(/\/home$/, ''), VNFM_HOME: m.home, ...m.env } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.resume();
  const exited = new Promise<{ code: number | null; signal: string | null }>((ok) => child.once('exit', (code, sig) => ok({ code, signal: sig })));
  let lockHeldAtExit = false;
  try {
    await until(watcher, "SELECT 1 FROM lcm_op_occs WHERE operation_state = 'PROCESSING'", child, 'it was PROCESSING');
    await holder.query('BEGIN');
    await holder.query(WRITE_LOCK);
    await until(watcher, "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted", child, 'it waited for the write lock');
    if (signal) child.kill(signal);
    // The lock is held until the program has ended, or for a minute at most (then the test fails below).
    const ended = await Promise.race([exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 60_000).unref())]);
    lockHeldAtExit = ended !== undefined;
  } finally {
    await holder.query('ROLLBACK').catch(() => undefined);
    await Promise.all([holder.end(), watcher.end()]);
  }
  const how = await exited;
  return { ...how, stderr, lockHeldAtExit };
}

async function occurrences(m: Machine): Promise<{ operation: string; operationState: string }[]> {
  return JSON.parse((await m.ok(['op-list', '-o', 'json'])).stdout) as { operation: string; operationState: string }[];
}

describe("an operation waiting for the shared store's write lock", () => {
  it('ends at SIGTERM while the other client still holds the lock: exit 143, the wait named, the scale FAILED_TEMP and retried afterwards', async () => {
    const { m, db } = await machineWithCnf();
    const r = await blockedThenStopped(m, db, ['vnf-scale', 'web', '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect'], 'SIGTERM');
    expect(r.lockHeldAtExit).toBe(true);
    expect(r.code, r.stderr).toBe(143);
    expect(r.stderr).toMatch(/terminated \(SIGTERM\) while waiting \d+\.\d s for the database/);
    // The occurrence could not be written while the lock was held: the next command finds its holder gone and records FAILED_TEMP.
    const refused = await m.run(['vnf-scale', 'web', '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']);
    expect(refused.code, refused.stderr).toBe(4);
    expect((await occurrences(m)).find((o) => o.operation === 'SCALE')?.operationState).toBe('FAILED_TEMP');
    const scale = (await occurrences(m)).find((o) => o.operation === 'SCALE') as unknown as { id: string };
    await m.ok(['op-retry', scale.id]);
    expect((await occurrences(m)).find((o) => o.operation === 'SCALE')?.operationState).toBe('COMPLETED');
  });

  it('ends at Ctrl-C (SIGINT) the same way: exit 130', async () => {
    const { m, db } = await machineWithCnf();
    const r = await blockedThenStopped(m, db, ['vnf-scale', 'web', '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect'], 'SIGINT');
    expect(r.lockHeldAtExit).toBe(true);
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toMatch(/interrupted while waiting \d+\.\d s for the database/);
  });

  it('ends at its --timeout, which a blocked main thread cannot time itself: exit 124', async () => {
    const { m, db } = await machineWithCnf();
    const r = await blockedThenStopped(m, db, ['vnf-scale', 'web', '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect', '--timeout', '4']);
    expect(r.lockHeldAtExit).toBe(true);
    expect(r.code, r.stderr).toBe(124);
    expect(r.stderr).toMatch(/timed out after 4.* while waiting \d+\.\d s for the database/);
  });
});

describe('a command without an operation, waiting for the write lock', () => {
  it('is still ended by SIGTERM itself, as on SQLite: the signal, not an exit code, and nothing written', async () => {
    const db = await server.createDatabase();
    const home = newHome();
    const env = { VNFM_MASTER_KEY: KEY, VNFM_DATABASE_URL: server.url(db) };
    const ok = okWith((args) => vnfm(args, { home, env }));
    const vimConfig = join(home, '..', 'vim-config.yaml');
    cluster.writeVimConfig(vimConfig, cluster.namespace);
    await ok(['vim-register', '--config-file', vimConfig, 'sandbox']);
    const holder = client(db);
    const watcher = client(db);
    await Promise.all([holder.connect(), watcher.connect()]);
    await holder.query('BEGIN');
    await holder.query(WRITE_LOCK);
    const child = spawn(process.execPath, [BIN, 'vim-update', 'sandbox', '--description', 'changed'], {
      env: { PATH: process.env['PATH'], HOME: home.replace(/\/home$/, ''), VNFM_HOME: home, ...env } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    const exited = new Promise<string | null>((done) => child.once('exit', (_c, sig) => done(sig)));
    try {
      await until(watcher, "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted", child, 'it waited for the write lock');
      child.kill('SIGTERM');
      expect(await exited).toBe('SIGTERM');
    } finally {
      await holder.query('ROLLBACK');
      await Promise.all([holder.end(), watcher.end()]);
    }
    expect(JSON.parse((await ok(['vim-show', 'sandbox', '-o', 'json'])).stdout)).not.toMatchObject({ description: 'changed' });
  });
});
