/**
 * The shared store on a real PostgreSQL server (a private cluster on
 * 127.0.0.1): several clients, as processes of their own standing for other
 * machines, on one database. Operation leases across machines, migrations
 * applied once by racing clients, an older client refused, TLS verified,
 * the password never shown.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { VnfPackage } from '../../src/model/package.js';
import { ConflictError, StoreUnreachableError } from '../../src/errors.js';
import { assertInstanceFree, resumeOccurrence, sweepStaleLock, type LcmDeps } from '../../src/lcm/engine.js';
import { holderOf, holderStatus } from '../../src/lcm/lock-holder.js';
import type { VnfInstance } from '../../src/model/lcm.js';
import { migrations } from '../../src/store/migrations/index.js';
import { connectStore, ROTATION_LOCK, type Store } from '../../src/store/index.js';
import { makeServingPki } from '../support/openssl-pki.js';
import { bundleTestProgram } from '../support/bundle-test-program.js';
import { startPostgres, type PgServer } from '../support/postgres.js';
import { packageRecord } from '../support/store-records.js';

const SAMPLES = resolve(import.meta.dirname, '../../csar-samples');
const LATEST = Math.max(...migrations.map((m) => m.version));
const NOW = '2026-01-01T00:00:00.000Z';
const home = () => join(mkdtempSync(join(tmpdir(), 'vnfm-shared-')), 'home');

let server: PgServer;
let program: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  [server, program] = await Promise.all([startPostgres(), bundleTestProgram(resolve(import.meta.dirname, '../support/shared-store-client.ts'))]);
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await server?.stop();
});

interface Client {
  child: ChildProcess;
  /** The first stdout line, or the exit code when the process ends first. */
  first: Promise<{ line?: string; code?: number | null; stderr: string }>;
}

function client(args: string[], env: Record<string, string> = {}): Client {
  const child = spawn(process.execPath, [program, ...args], {
    env: { PATH: process.env['PATH'], VNFM_HOME: home(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const first = new Promise<{ line?: string; code?: number | null; stderr: string }>((ok) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) ok({ line: out.slice(0, nl), stderr });
    });
    child.once('exit', (code) => ok({ code, stderr }));
  });
  return { child, first };
}

const pkg = (): VnfPackage => packageRecord();

const instance = {
  id: 'inst-1',
  vnfInstanceName: 'web',
  vnfInstanceDescription: '',
  vnfdId: 'vnfd-1',
  vnfPkgId: 'p1',
  vnfProvider: 'ACME',
  vnfProductName: 'cnf',
  vnfSoftwareVersion: '1.0',
  vnfdVersion: '1.0',
  instantiationState: 'INSTANTIATED',
  createdAt: NOW,
  updatedAt: NOW,
} as VnfInstance;

/** A new database with one instance in it, and this process's store on it. */
async function seeded(): Promise<{ db: string; url: string; store: Store; deps: LcmDeps }> {
  const db = await server.createDatabase();
  const url = server.url(db);
  const store = await connectStore(home(), { databaseUrl: url, leaseTimeoutMs: 60_000 });
  await store.packages.insert(pkg());
  await store.instances.insert(instance);
  return { db, url, store, deps: { store, home: home(), now: () => new Date() } as unknown as LcmDeps };
}

async function query(database: string, sql: string): Promise<pg.QueryResult> {
  const c = new pg.Client({ host: server.dir, port: server.port, user: server.user, password: server.password, database });
  await c.connect();
  try {
    return await c.query(sql);
  } finally {
    await c.end();
  }
}

async function vnfmOn(homeDir: string, argv: string[], env: Record<string, string>, out = { stdout: '', stderr: '' }) {
  const stream = (key: 'stdout' | 'stderr') => {
    const s = new PassThrough();
    s.on('data', (d: Buffer) => (out[key] += d.toString()));
    return s;
  };
  const code = await main(argv, { env: { VNFM_HOME: homeDir, ...env }, cwd: homeDir, streams: { stdin: new PassThrough(), stdout: stream('stdout'), stderr: stream('stderr') } });
  return { code, ...out };
}

describe('operations across machines', () => {
  it('two clients start an operation on one VNF at once: one holds it, the other is refused (exit 4) with who holds it and since when; reads do not wait', async () => {
    const { url, store } = await seeded();
    try {
      const [b, c] = [client(['hold', url, 'inst-1'], { VNFM_TEST_HOST: 'machine-b' }), client(['hold', url, 'inst-1'], { VNFM_TEST_HOST: 'machine-c' })];
      const results = await Promise.all([b.first, c.first]);
      const held = results.filter((r) => r.line?.startsWith('HELD '));
      const refused = results.filter((r) => r.code !== undefined);
      expect(held).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(refused[0]!.code).toBe(4);
      expect(refused[0]!.stderr).toMatch(/vnf instance inst-1 is locked by vnfm pid \d+ on host machine-[bc] since \d{4}-\d\d-\d\dT[\d:.]+Z \(operation SCALE/);
      // Reads from a third client go on while the lock is held.
      expect((await store.instances.list()).map((i) => i.id)).toEqual(['inst-1']);
      expect((await store.opOccs.list()).map((o) => o.operationState)).toEqual(['PROCESSING']);
      expect(await store.opOccs.lock('inst-1')).toMatchObject({
        hostName: expect.stringMatching(/^machine-[bc]$/),
        heartbeatAt: expect.any(String),
        leaseExpiresAt: expect.any(String),
      });
      // store-info names the holder and its lease.
      expect((await store.info()).locks).toEqual([
        expect.objectContaining({ lock: 'vnf/inst-1', hostName: expect.stringMatching(/^machine-[bc]$/), since: expect.any(String), leaseExpiresAt: expect.any(String) }),
      ]);
    } finally {
      await store.close();
    }
  });

  it('a holder killed with -9 on another machine is taken for gone once its lease runs out: its occurrence becomes FAILED_TEMP and is retried from here', async () => {
    const { url, store, deps } = await seeded();
    try {
      const b = client(['hold', url, 'inst-1'], { VNFM_TEST_HOST: 'machine-b', VNFM_LEASE_TIMEOUT: '1.5' });
      const { line } = await b.first;
      expect(line).toMatch(/^HELD /);
      const opId = line!.slice('HELD '.length);
      // Alive (its heartbeat moves the lease on): nothing to sweep, and a new operation is refused.
      expect(await sweepStaleLock(deps, 'inst-1')).toEqual([]);
      await expect(assertInstanceFree(deps, 'inst-1')).rejects.toThrow(ConflictError);
      const firstBeat = (await store.opOccs.lock('inst-1'))!.heartbeatAt!;
      await until(async () => (await store.opOccs.lock('inst-1'))!.heartbeatAt! > firstBeat);

      b.child.kill('SIGKILL');
      let swept: Awaited<ReturnType<typeof sweepStaleLock>> = [];
      await until(async () => (swept = await sweepStaleLock(deps, 'inst-1')).length > 0);
      expect(swept[0]).toMatchObject({ id: opId, operationState: 'FAILED_TEMP' });
      expect(swept[0]!.error?.detail).toMatch(/pid \d+ on host machine-b.*its lease ran out at/);
      expect(await store.opOccs.lock('inst-1')).toBeUndefined();

      const resumed = await resumeOccurrence(deps, opId, 'PROCESSING');
      expect(resumed.operationState).toBe('PROCESSING');
      expect(await store.opOccs.lock('inst-1')).toMatchObject({ opId, pid: process.pid });
    } finally {
      await store.close();
    }
  });

  it('a holder whose lease was taken over records nothing more: its state change is refused and rolled back', async () => {
    const { db, store } = await seeded();
    try {
      const ops = store.opOccs;
      const op = {
        id: 'op-1',
        vnfInstanceId: 'inst-1',
        operation: 'SCALE',
        operationState: 'PROCESSING',
        stateEnteredTime: NOW,
        startTime: NOW,
        operationParams: {},
        journal: [],
        isAutomaticInvocation: false,
      } as never;
      await ops.exclusive(async () => {
        await ops.insert(op, { vnfPkgId: 'p1', vnfdId: 'vnfd-1', instantiationState: 'INSTANTIATED' });
        await ops.takeLock({ vnfInstanceId: 'inst-1', opId: 'op-1', pid: process.pid, acquiredAt: NOW, hostId: 'here', startTime: '1' });
      });
      // Another client takes the lease over (as after this one stalled past its expiry).
      await query(db, "UPDATE vnf_locks SET pid = 1, host_id = 'machine-c-id', host_name = 'machine-c'");
      await expect(
        ops.exclusive(async () => {
          await store.instances.update({ ...(await store.instances.get('inst-1')), vnfInstanceDescription: 'stale write', updatedAt: NOW });
          await ops.setState('op-1', 'COMPLETED', NOW);
        }),
      ).rejects.toThrow(/lease of this vnfm on vnf instance inst-1 ran out and vnfm pid 1 on host machine-c holds it/);
      expect((await store.instances.get('inst-1')).vnfInstanceDescription).toBe('');
      expect((await ops.get('op-1')).operationState).toBe('PROCESSING');
    } finally {
      await store.close();
    }
  });
});

describe('key rotation on the shared store', () => {
  it("a rotation's lock held on another machine refuses a second rotation and every new operation lock from here", async () => {
    const { url, store } = await seeded();
    const other = await connectStore(home(), { databaseUrl: url });
    try {
      const alive = () => true;
      await other.secrets.acquireLock(ROTATION_LOCK, { pid: 4242, hostName: 'machine-b', hostId: 'machine-b-id', startTime: '1' }, NOW, alive);
      await expect(store.secrets.acquireLock(ROTATION_LOCK, { pid: process.pid }, NOW, alive)).rejects.toThrow(
        /a master key rotation is in progress by pid 4242 on machine-b since/,
      );
      await expect(store.opOccs.exclusive(() => store.opOccs.takeLock({ vnfInstanceId: 'inst-1', opId: 'x', pid: process.pid, acquiredAt: NOW }))).rejects.toThrow(ConflictError);
      await other.secrets.releaseLock(ROTATION_LOCK, { pid: 4242, startTime: '1' });
      expect(await store.secrets.lockHolder(ROTATION_LOCK)).toBeUndefined();
    } finally {
      await other.close();
      await store.close();
    }
  });

  it("a rotation's lock is a lease: once the holder on another machine stopped beating, a rotation from here takes it over", async () => {
    const { db, url, store } = await seeded();
    const other = await connectStore(home(), { databaseUrl: url, leaseTimeoutMs: 60_000 });
    try {
      const b = { pid: 4242, hostName: 'machine-b', hostId: 'machine-b-id', startTime: '1' };
      await other.secrets.acquireLock(ROTATION_LOCK, b, NOW, () => true);
      const held = (await store.secrets.lockHolder(ROTATION_LOCK))!;
      expect(Date.parse(held.leaseExpiresAt!) - Date.parse(held.heartbeatAt!)).toBe(60_000);
      const running = (h: Parameters<typeof holderStatus>[0]) => holderStatus(h).state !== 'gone';
      await expect(store.secrets.acquireLock(ROTATION_LOCK, holderOf(), NOW, running)).rejects.toThrow(/in progress by pid 4242 on machine-b/);
      // machine-b is gone: its heartbeat stopped and the lease ran out.
      await other.close();
      await query(db, "UPDATE store_locks SET lease_expires_at = '2000-01-01T00:00:00.000Z'");
      const { staleHolder } = await store.secrets.acquireLock(ROTATION_LOCK, holderOf(), NOW, running);
      expect(staleHolder).toMatchObject({ pid: 4242, hostName: 'machine-b' });
      expect(await store.secrets.lockHolder(ROTATION_LOCK)).toMatchObject({ pid: process.pid });
      await store.secrets.releaseLock(ROTATION_LOCK, holderOf());
    } finally {
      await other.close();
      await store.close();
    }
  });
});

describe('the command line on the shared store', () => {
  it('two machines (two VNFM_HOMEs) with one master key see one state; an unreachable database is exit 6 with the password masked', async () => {
    const url = server.url(await server.createDatabase());
    const key = (await vnfmOn(home(), ['key-generate'], {})).stdout.trim();
    const env = { VNFM_DATABASE_URL: url, VNFM_MASTER_KEY: key };
    const [a, b] = [home(), home()];
    const onboard = await vnfmOn(a, ['vnfpkg-onboard', join(SAMPLES, 'basic-cnf', 'package'), '--name', 'basic-cnf'], env);
    expect(onboard.stderr).toMatch(/onboarded/);
    expect(onboard.code).toBe(0);
    expect((await vnfmOn(a, ['vnf-create', '--package', 'basic-cnf', '--name', 'web'], env)).code).toBe(0);
    const listed = await vnfmOn(b, ['vnf-list', '-o', 'json'], env);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { vnfInstanceName: string }[]).map((i) => i.vnfInstanceName)).toEqual(['web']);
    const info = JSON.parse((await vnfmOn(b, ['store-info', '-o', 'json'], env)).stdout) as Record<string, unknown>;
    expect(info).toMatchObject({ backend: 'postgres', schemaVersion: LATEST, knownSchemaVersion: LATEST, engineVersion: expect.stringMatching(/^PostgreSQL \d+/), locks: [] });
    expect(info['location']).toMatch(/^postgres:\/\/vnfm:\*\*\*@127\.0\.0\.1:\d+\//);
    const local = JSON.parse((await vnfmOn(home(), ['store-info', '-o', 'json'], { VNFM_MASTER_KEY: key })).stdout) as Record<string, unknown>;
    expect(local).toMatchObject({ backend: 'sqlite', location: expect.stringMatching(/vnfm\.db$/), schemaVersion: LATEST, engineVersion: expect.stringMatching(/^SQLite 3\./) });
    // --database-url names the shared store as VNFM_DATABASE_URL does.
    const flagged = await vnfmOn(home(), ['--database-url', url, 'vnf-list', '-o', 'json'], { VNFM_MASTER_KEY: key });
    expect((JSON.parse(flagged.stdout) as { vnfInstanceName: string }[]).map((i) => i.vnfInstanceName)).toEqual(['web']);
    expect((await vnfmOn(b, ['vnf-delete', 'web', '--yes'], env)).code).toBe(0);
    expect(JSON.parse((await vnfmOn(a, ['vnf-list', '-o', 'json'], env)).stdout)).toEqual([]);

    const down = await vnfmOn(b, ['vnf-list'], { ...env, VNFM_DATABASE_URL: url.replace(`:${server.port}/`, ':1/') });
    expect(down.code).toBe(6);
    expect(down.stderr).toMatch(/cannot reach the database postgres:\/\/vnfm:\*\*\*@127\.0\.0\.1:1\//);
    expect(down.stderr).not.toContain(server.password);
    expect(down.stderr).not.toContain(encodeURIComponent(server.password));
  });
});

describe('following an operation from another machine', () => {
  it('op-watch shows the steps another client records, then its final state (exit 0), or FAILED_TEMP (exit 1)', async () => {
    const { url, store } = await seeded();
    try {
      const ops = store.opOccs;
      const start = async (id: string) =>
        await ops.exclusive(async () => {
          await ops.insert(
            {
              id,
              vnfInstanceId: 'inst-1',
              operation: 'SCALE',
              operationState: 'PROCESSING',
              stateEnteredTime: NOW,
              startTime: NOW,
              operationParams: {},
              journal: [],
              isAutomaticInvocation: false,
            } as never,
            {
              vnfPkgId: 'p1',
              vnfdId: 'vnfd-1',
              instantiationState: 'INSTANTIATED',
            },
          );
          await ops.takeLock({ vnfInstanceId: 'inst-1', opId: id, pid: 4242, acquiredAt: NOW, hostName: 'machine-b', hostId: 'machine-b-id', startTime: '1' });
        });
      const env = { VNFM_DATABASE_URL: url };
      await start('op-1');
      const live = { stdout: '', stderr: '' };
      const watching = vnfmOn(home(), ['op-watch', 'op-1', '--interval', '0.05'], env, live);
      await until(() => live.stderr.includes('PROCESSING'));
      await ops.appendJournal('op-1', { action: 'scale', resource: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'default' }, state: 'intended' });
      await until(() => live.stderr.includes('scale Deployment/web (default): intended'));
      await ops.exclusive(async () => {
        await ops.setState('op-1', 'COMPLETED', NOW);
        await ops.releaseLock('inst-1', 'op-1');
      });
      const done = await watching;
      expect(done.code).toBe(0);
      expect(live.stdout).toBe('COMPLETED\n');
      expect(live.stderr).toMatch(/occurrence op-1 \(SCALE of inst-1\): COMPLETED/);

      await start('op-2');
      const failing = vnfmOn(home(), ['op-watch', 'op-2', '--interval', '0.05'], env);
      await ops.exclusive(async () => {
        await ops.setState('op-2', 'FAILED_TEMP', NOW, { error: { status: 500, title: 'Infra-driver error', detail: 'pods did not start' } });
        await ops.releaseLock('inst-1', 'op-2');
      });
      const failed = await failing;
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(/occurrence op-2 \(SCALE\) ended FAILED_TEMP: pods did not start/);
    } finally {
      await store.close();
    }
  });
});

describe('faults', () => {
  it('the database restarted while an operation holds its lease: the next statements reconnect, the heartbeat goes on, nothing is lost', async () => {
    const { store } = await seeded();
    try {
      const ops = store.opOccs;
      const op = {
        id: 'op-1',
        vnfInstanceId: 'inst-1',
        operation: 'SCALE',
        operationState: 'PROCESSING',
        stateEnteredTime: NOW,
        startTime: NOW,
        operationParams: {},
        journal: [],
        isAutomaticInvocation: false,
      } as never;
      const lock = { vnfInstanceId: 'inst-1', opId: 'op-1', pid: process.pid, acquiredAt: NOW, hostId: 'here', startTime: '1' };
      await ops.exclusive(async () => {
        await ops.insert(op, { vnfPkgId: 'p1', vnfdId: 'vnfd-1', instantiationState: 'INSTANTIATED' });
        await ops.takeLock(lock);
      });
      await ops.appendJournal('op-1', { step: 1 } as never);
      await server.restart();
      // A read, a write outside a transaction, a heartbeat and a transaction, each on a new connection as needed.
      expect(await ops.journal('op-1')).toEqual([{ step: 1 }]);
      await ops.appendJournal('op-1', { step: 2 } as never);
      expect(await ops.renew(lock)).toBe(true);
      await ops.exclusive(async () => {
        await ops.setState('op-1', 'COMPLETED', NOW);
        await ops.releaseLock('inst-1', 'op-1');
      });
      expect(await ops.get('op-1')).toMatchObject({ operationState: 'COMPLETED', journal: [{ step: 1 }, { step: 2 }] });
      expect(await ops.lock('inst-1')).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});

describe('schema', () => {
  it('clients racing on an empty database apply each migration once', async () => {
    const db = await server.createDatabase();
    const url = server.url(db);
    const results = await Promise.all([1, 2, 3, 4].map(() => client(['open', url]).first));
    expect(results.map((r) => [r.line, r.stderr])).toEqual(results.map(() => [`OPEN ${LATEST}`, '']));
    expect((await query(db, 'SELECT version FROM vnfm_schema')).rows).toEqual([{ version: LATEST }]);
  });

  it('a client older than the schema refuses with a clear message and changes nothing', async () => {
    const db = await server.createDatabase();
    const url = server.url(db);
    (await connectStore(home(), { databaseUrl: url })).close();
    await query(db, `UPDATE vnfm_schema SET version = ${LATEST + 1}`);
    await expect(connectStore(home(), { databaseUrl: url })).rejects.toThrow(
      new RegExp(`has schema version ${LATEST + 1}, and this vnfm knows only up to ${LATEST}: another client has upgraded it`),
    );
    expect((await query(db, 'SELECT version FROM vnfm_schema')).rows).toEqual([{ version: LATEST + 1 }]);
  });
});

describe('connection', () => {
  it('TLS: verify-full against the certificate for 127.0.0.1 passes; another CA, or none given (verify-full by default), fails with exit 6', async () => {
    const db = await server.createDatabase();
    const store = await connectStore(home(), { databaseUrl: server.url(db) });
    expect(store.backend).toBe('postgres');
    expect((await query(db, 'SELECT count(*)::int AS n FROM pg_stat_ssl WHERE ssl AND pid <> pg_backend_pid()')).rows[0].n).toBeGreaterThan(0);
    await store.close();
    const other = makeServingPki(mkdtempSync(join(tmpdir(), 'vnfm-other-ca-')), { ips: ['127.0.0.1'], dns: [] });
    for (const url of [server.url(db, { sslrootcert: other.caCertPath }), server.url(db).replace(/[?].*$/, '')]) {
      const err = await connectStore(home(), { databaseUrl: url }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreUnreachableError);
      expect((err as StoreUnreachableError).exitCode).toBe(6);
      expect((err as Error).message).toMatch(/TLS: .*(certificate|self.signed)/i);
    }
    (await connectStore(home(), { databaseUrl: server.url(db, { sslmode: 'disable' }) })).close();
  });

  it('the password never appears: not in a refused login, not when the server is unreachable', async () => {
    const db = await server.createDatabase();
    const wrong = 'Wr0ng-pw-' + 'x'.repeat(12);
    const refused = (await connectStore(home(), { databaseUrl: server.url(db).replace(encodeURIComponent(server.password), wrong) }).catch(
      (e: unknown) => e,
    )) as StoreUnreachableError;
    expect(refused).toBeInstanceOf(StoreUnreachableError);
    expect(refused.message).toMatch(/refused the login: password authentication failed/);
    const down = (await connectStore(home(), { databaseUrl: server.url(db).replace(`:${server.port}/`, ':1/') }).catch((e: unknown) => e)) as StoreUnreachableError;
    expect(down.exitCode).toBe(6);
    expect(down.message).toMatch(/cannot reach the database postgres:\/\/vnfm:\*\*\*@127\.0\.0\.1:1\//);
    for (const e of [refused, down]) {
      const shown = `${e.message} ${e.hint ?? ''} ${String((e as { cause?: unknown }).cause ?? '')}`;
      expect(shown).not.toContain(wrong);
      expect(shown).not.toContain(server.password);
    }
  });
});

/** Polls `check` until it holds (the test's own timeout bounds the wait). */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 100));
}
