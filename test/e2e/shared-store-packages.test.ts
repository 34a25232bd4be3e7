/**
 * Packages on the shared store, and moving a store, through the real
 * program against a private PostgreSQL server and the Kubernetes sandbox:
 * two VNFM_HOMEs stand for two machines on one database. A package
 * onboarded on one is run on the other (its zip fetched from the
 * database); an upload killed mid-way leaves no package; deleting removes
 * the zip. store-export / store-import move a SQLite store to PostgreSQL
 * and back with secrets still sealed under the same key.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateFernetKey } from '../../src/crypto/fernet.js';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { BIN, newHome, vnfm, okWith, type RunResult } from '../support/cli.js';
import { startPostgres, type PgServer } from '../support/postgres.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');
const KEY = generateFernetKey();

let cluster: E2eCluster;
let server: PgServer;
let dir: string;
let vimConfig: string;
let requests: string;

const json = <T = Record<string, unknown>>(out: string) => JSON.parse(out) as T;

/** A machine: its own VNFM_HOME, on the shared database `url` (or its own SQLite file without one). */
function machine(url?: string, key = KEY) {
  const home = newHome();
  const env = { VNFM_MASTER_KEY: key, ...(url ? { VNFM_DATABASE_URL: url } : {}) };
  const run = (args: string[]): Promise<RunResult> => vnfm(args, { home, env });
  return { home, env, run, ok: okWith(run) };
}

async function sql(database: string, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const c = new pg.Client({ host: server.dir, port: server.port, user: server.user, password: server.password, database });
  await c.connect();
  try {
    return await c.query(text, values);
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  [cluster, server] = await Promise.all([e2eCluster('e2e-shared', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } }), startPostgres()]);
  dir = mkdtempSync(join(tmpdir(), 'vnfm-shared-e2e-'));
  vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, cluster.namespace);
  requests = join(dir, 'requests');
  mkdirSync(requests, { recursive: true });
  for (const f of readdirSync(join(SAMPLE, 'requests'))) {
    const body = JSON.parse(readFileSync(join(SAMPLE, 'requests', f), 'utf8')) as { additionalParams?: { namespace?: string } };
    if (body.additionalParams?.namespace !== undefined) body.additionalParams.namespace = cluster.namespace;
    writeFileSync(join(requests, f), JSON.stringify(body, null, 2));
  }
});

afterAll(async () => {
  await Promise.all([cluster?.close(), server?.stop()]);
});

/** A VIM, the sample package and an instance of it, instantiated on the sandbox: what both halves of this file start from. */
async function instantiated(m: ReturnType<typeof machine>, name: string): Promise<{ vnf: string; pkgId: string; opId: string }> {
  await m.ok(['vim-register', '--config-file', vimConfig, 'sandbox']);
  const pkgId = json<{ id: string }>((await m.ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf', '-o', 'json'])).stdout).id;
  const vnf = json<{ id: string }>((await m.ok(['vnf-create', '--package', 'basic-cnf', '--name', name, '-o', 'json'])).stdout).id;
  const op = json<{ id: string; operationState: string }>((await m.ok(['vnf-instantiate', name, '--request-file', join(requests, 'instantiate.json'), '-o', 'json'])).stdout);
  expect(op.operationState).toBe('COMPLETED');
  return { vnf, pkgId, opId: op.id };
}

describe('packages on the shared store', () => {
  it('machine A onboards and instantiates; machine B, with no package files, scales and terminates; delete removes the zip', async () => {
    const db = await server.createDatabase();
    const url = server.url(db);
    const a = machine(url);
    const b = machine(url);
    const { pkgId } = await instantiated(a, 'web');

    const stored = (await sql(db, 'SELECT size_bytes, sha256, chunk_count, complete FROM package_contents WHERE package_id = $1', [pkgId])).rows[0] as Record<string, unknown>;
    const record = json<{ checksum: { hash: string } }>((await a.ok(['vnfpkg-show', pkgId, '-o', 'json'])).stdout);
    expect(stored).toMatchObject({ sha256: record.checksum.hash, size_bytes: String(statSync(join(a.home, 'packages', pkgId, 'package.zip')).size), complete: 1 });
    expect(Number(stored['chunk_count'])).toBeGreaterThan(0);
    expect(existsSync(join(b.home, 'packages', pkgId))).toBe(false);

    const scaled = json<{ operationState: string }>((await b.ok(['vnf-scale', 'web', '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect', '-o', 'json'])).stdout);
    expect(scaled.operationState).toBe('COMPLETED');
    // B now holds the package as onboarding left it on A: the same zip, and nothing else (read in place, not unpacked).
    expect(readFileSync(join(b.home, 'packages', pkgId, 'package.zip')).equals(readFileSync(join(a.home, 'packages', pkgId, 'package.zip')))).toBe(true);
    expect(readdirSync(join(b.home, 'packages', pkgId))).toEqual(['package.zip']);
    expect(readdirSync(join(a.home, 'packages', pkgId))).toEqual(['package.zip']);
    expect(readdirSync(join(b.home, 'packages')).filter((n) => n.startsWith('.'))).toEqual([]);

    await b.ok(['vnf-terminate', 'web', '--yes', '--graceful-termination-timeout', '0']);
    expect(json<{ instantiationState: string }>((await a.ok(['vnf-show', 'web', '-o', 'json'])).stdout).instantiationState).toBe('NOT_INSTANTIATED');
    // vnfpkg-vnfd and vnfpkg-download on a third machine read the package from the database too, two at once.
    const c = machine(url);
    const both = await Promise.all([c.ok(['vnfpkg-vnfd', pkgId]), c.ok(['vnfpkg-download', pkgId, '--file', join(dir, 'downloaded.zip')])]);
    expect(both[0].stdout).toContain('tosca_definitions_version');
    expect(readFileSync(join(dir, 'downloaded.zip')).equals(readFileSync(join(a.home, 'packages', pkgId, 'package.zip')))).toBe(true);
    expect(readdirSync(join(c.home, 'packages'))).toEqual([pkgId]);

    await b.ok(['vnf-delete', 'web', '--yes']);
    await b.ok(['vnfpkg-delete', '--yes', pkgId]);
    expect((await sql(db, 'SELECT count(*)::int AS n FROM package_contents')).rows[0]).toEqual({ n: 0 });
    expect((await sql(db, 'SELECT count(*)::int AS n FROM package_content_chunks')).rows[0]).toEqual({ n: 0 });
  });

  it('an onboarding killed while it writes the zip leaves no package, and the same package onboards again', async () => {
    const db = await server.createDatabase();
    const url = server.url(db);
    const a = machine(url);
    // Hold the chunks' table so that the upload stops at its first chunk, then kill it there.
    const holder = new pg.Client({ host: server.dir, port: server.port, user: server.user, password: server.password, database: db });
    await holder.connect();
    await a.ok(['store-info']);
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE package_content_chunks IN SHARE MODE');
    const child = spawn(process.execPath, [BIN, 'vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf'], {
      env: { PATH: process.env['PATH'], HOME: a.home.replace(/\/home$/, ''), VNFM_HOME: a.home, ...a.env } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<string | null>((ok) => child.once('exit', (_c, signal) => ok(signal)));
    try {
      for (;;) {
        const waiting = await holder.query("SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'package_content_chunks' AND NOT l.granted");
        if (waiting.rowCount) break;
        if (child.exitCode !== null) throw new Error('the onboarding ended before it wrote the zip');
        await new Promise((r) => setImmediate(r));
      }
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect((await sql(db, 'SELECT complete FROM package_contents')).rows).toEqual([{ complete: 0 }]);
    const b = machine(url);
    expect(json((await b.ok(['vnfpkg-list', '-o', 'json'])).stdout)).toEqual([]);
    const again = json<{ id: string }>((await b.ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf', '-o', 'json'])).stdout);
    expect((await sql(db, 'SELECT package_id, complete FROM package_contents WHERE complete = 1')).rows).toEqual([{ package_id: again.id, complete: 1 }]);
  });
});

describe('store-export and store-import', () => {
  it('moves a SQLite store to PostgreSQL and back: the same instances, occurrences and VIMs, secrets open with the same key', async () => {
    const local = machine();
    const { vnf, opId, pkgId } = await instantiated(local, 'moved');
    const file = join(dir, 'state.json');
    await local.ok(['store-export', file]);
    const doc = readFileSync(file, 'utf8');
    expect(json<{ vnfmExport: number }>(doc).vnfmExport).toBe(1);

    const db = await server.createDatabase();
    const shared = machine(server.url(db));
    const imported = await shared.ok(['store-import', file]);
    expect(imported.stderr).toMatch(/imported 1 vims, 1 vnf_packages, 1 vnf_instances, 1 lcm_op_occs/);
    for (const args of [
      ['vnf-show', vnf],
      ['op-show', opId],
      ['vim-show', 'sandbox'],
      ['vnfpkg-show', pkgId],
    ]) {
      expect(json((await shared.ok([...args, '-o', 'json'])).stdout)).toEqual(json((await local.ok([...args, '-o', 'json'])).stdout));
    }
    await shared.ok(['vim-check', 'sandbox']);

    const again = await shared.run(['store-import', file]);
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(/is not empty .*refusing to import/);
    const merged = await shared.ok(['store-import', '--merge', file]);
    expect(merged.stderr).toMatch(/imported 0 vims, 0 vnf_packages, 0 vnf_instances, 0 lcm_op_occs/);
    expect(merged.stderr).toContain(`vnf_instances/${vnf}`);

    // The PostgreSQL side runs the instance on with the package from the database, then exports it back.
    await shared.ok(['vnf-scale', 'moved', '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']);
    const back = join(dir, 'back.json');
    await shared.ok(['store-export', back]);
    const returned = machine();
    await returned.ok(['store-import', back]);
    for (const args of [['vnf-show', vnf], ['vim-show', 'sandbox'], ['op-list']]) {
      expect(json((await returned.ok([...args, '-o', 'json'])).stdout)).toEqual(json((await shared.ok([...args, '-o', 'json'])).stdout));
    }
    await returned.ok(['vnf-terminate', 'moved', '--yes', '--graceful-termination-timeout', '0']);
    expect(readFileSync(join(returned.home, 'packages', pkgId, 'package.zip')).equals(readFileSync(join(local.home, 'packages', pkgId, 'package.zip')))).toBe(true);
  });

  it('refuses a master key that does not open the secrets before writing anything; without contents, records only', async () => {
    const local = machine();
    await local.ok(['vim-register', '--config-file', vimConfig, 'sandbox']);
    await local.ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf']);
    const file = join(dir, 'keyed.json');
    await local.ok(['store-export', file]);

    const db = await server.createDatabase();
    const wrong = machine(server.url(db), generateFernetKey());
    const refused = await wrong.run(['store-import', file]);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toMatch(/does not open the secrets in .*keyed\.json.*nothing was imported/);
    for (const t of ['vims', 'vnf_packages', 'package_contents']) expect((await sql(db, `SELECT count(*)::int AS n FROM ${t}`)).rows[0]).toEqual({ n: 0 });

    const slim = (await local.ok(['store-export', '--without-package-contents', '-'])).stdout;
    expect(slim).not.toMatch(/"chunks"/);
    expect(json<{ tables: { vnf_packages: unknown[] } }>(slim).tables.vnf_packages).toHaveLength(1);
  });
});
