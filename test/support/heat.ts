/**
 * A real Heat (Debian's `heat-api` and `heat-engine` packages) for the tests:
 * `heat-all` runs the API and one engine in a single process on 127.0.0.1,
 * with its own heat.conf, SQLite database and log in a temp dir, and
 * oslo.messaging's in-process `fake://` transport instead of RabbitMQ.
 * Nothing under /etc/heat is written; Heat reads only api-paste.ini and its
 * policy defaults from there. heat-all is started through heat-launch.py,
 * which fixes at start-up what bookworm's oslo.messaging breaks in
 * OS::Heat::ScalingPolicy signals.
 *
 * There is no Nova or Neutron: stacks use the environment in
 * test/fixtures/heat/env/ to stand in for servers and ports.
 * Facts behind the choices below are in notes/openstack-test-env.md
 * (AUTOINCREMENT, fake://, /usr/bin/python3).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, get as httpGet } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { startKeystone, type KeystoneInfo, type KeystoneServer } from './keystone.js';
import { freePort, pythonEnv, randomSecret, runTool, signalGroup, stopProcessGroup, type RunOptions, serviceLogTails } from './openstack-process.js';

/** Connection facts of a running test Heat; plain data, so it can cross process boundaries. */
export interface HeatInfo {
  /** The orchestration endpoint of the test project: `http://127.0.0.1:<port>/v1/<project id>`. */
  url: string;
  port: number;
  /** The catalog's endpoint template, `http://127.0.0.1:<port>/v1/%(tenant_id)s`. */
  endpointTemplate: string;
  /** The temp dir holding heat.conf, the database and heat.log. */
  dir: string;
  /** Milliseconds from `startHeat` being called to Heat answering (seeding Keystone included). */
  startMs: number;
}

export interface HeatServer extends HeatInfo {
  /**
   * Stops heat-all and starts it again on the same port and database (what a
   * restarted heat-api looks like to a client). Resolves once it answers again.
   */
  restart(): Promise<void>;
  /** Stops heat-all (its whole process group) and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

/** Keystone and Heat together, as `useOpenStack` gives them. */
export interface OpenStackServers {
  keystone: KeystoneInfo;
  heat: HeatServer;
  /** Stops Heat, then Keystone (when this call started them). Idempotent. */
  stop(): Promise<void>;
}

const PYTHON = '/usr/bin/python3';
const SEED_SCRIPT = fileURLToPath(new URL('./heat-seed.py', import.meta.url));
/** heat-all with the run-time fix ScalingPolicy signals need on bookworm (see the script). */
const LAUNCH_SCRIPT = fileURLToPath(new URL('./heat-launch.py', import.meta.url));
const START_TIMEOUT_MS = 90_000;
const PROBE_INTERVAL_MS = 200;
const PROBE_TIMEOUT_MS = 5_000;

/** Environment variable through which `openStackGlobalSetup` hands both servers' facts to test workers. */
export const OPENSTACK_ENV = 'VNFM_TEST_OPENSTACK';

/**
 * Starts Heat against `keystone` (a Keystone from `startKeystone`): seeds
 * Heat's identity into it (service user `heat`, roles `heat_stack_owner` and
 * `heat_stack_user`, the `heat` domain and its admin) and points the
 * catalog's orchestration endpoints at the port Heat listens on. One Heat per
 * Keystone: a second one would take the catalog entry over.
 */
export async function startHeat(keystone: KeystoneInfo): Promise<HeatServer> {
  const started = Date.now();
  const dir = await mkdtemp(join(tmpdir(), 'vnfm-heat-'));
  let heat: ChildProcess | undefined;
  // A test process that ends without stop() must not leave heat-all or the
  // temp dir behind. Only synchronous work runs here.
  const onProcessExit = () => {
    if (heat?.pid !== undefined && heat.exitCode === null && heat.signalCode === null) signalGroup(heat.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onProcessExit);
  const stop = async (): Promise<void> => {
    process.off('exit', onProcessExit);
    if (heat) await stopProcessGroup(heat);
    heat = undefined;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    const endpointTemplate = `http://127.0.0.1:${port}/v1/%(tenant_id)s`;
    const url = `http://127.0.0.1:${port}/v1/${keystone.projectId}`;
    const heatPassword = randomSecret();
    const domainAdminPassword = randomSecret();
    const conf = join(dir, 'heat.conf');
    await writeFile(conf, heatConf({ dir, port, keystone, heatPassword, domainAdminPassword }));

    await Promise.all([
      run(PYTHON, [SEED_SCRIPT], {
        dir,
        input: JSON.stringify({
          url: keystone.url,
          adminPassword: keystone.adminPassword,
          username: keystone.user.name,
          project: keystone.project,
          heatPassword,
          domainAdminPassword,
          orchestrationUrl: endpointTemplate,
          region: keystone.region,
        }),
      }),
      (async () => {
        await run('heat-manage', ['--config-file', conf, 'db_sync'], { dir });
        useAutoincrement(join(dir, 'heat.sqlite'));
      })(),
    ]);

    const launch = async () => {
      heat = spawnHeat(dir, conf);
      await waitUntilServing(heat, url, keystone, dir);
    };
    await launch();

    return {
      url,
      port,
      endpointTemplate,
      dir,
      startMs: Date.now() - started,
      stop,
      restart: async () => {
        if (heat) await stopProcessGroup(heat);
        await launch();
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * For a vitest `globalSetup` file:
 * `export { openStackGlobalSetup as default } from '../support/heat.js'`.
 * Starts one Keystone and one Heat for the whole run and hands their facts to
 * the workers in `VNFM_TEST_OPENSTACK`; `useOpenStack` picks them up.
 */
export async function openStackGlobalSetup(): Promise<() => Promise<void>> {
  const servers = await startOpenStack();
  process.env[OPENSTACK_ENV] = JSON.stringify(sharedFacts(servers));
  return async () => {
    delete process.env[OPENSTACK_ENV];
    await servers.stop();
  };
}

/** Environment variable naming the broker (`openStackBrokerSetup`) that starts the run's Keystone and Heat when a file first asks. */
export const OPENSTACK_BROKER_ENV = 'VNFM_TEST_OPENSTACK_BROKER';

/**
 * For a vitest `globalSetup` file: one Keystone and one Heat for the whole
 * run, started only if a test file asks for them (`useOpenStack`,
 * `useKeystone`), so a run of files that never touch OpenStack starts
 * nothing. The run's main process owns them (a worker ends with its file)
 * and stops them at teardown; the workers ask a broker on 127.0.0.1 for
 * their facts, and the first question starts them.
 */
export async function openStackBrokerSetup(): Promise<() => Promise<void>> {
  let servers: Promise<OpenStackServers> | undefined;
  const broker = createHttpServer((req, res) => {
    if (req.url !== '/openstack') {
      res.writeHead(404).end();
      return;
    }
    servers ??= startOpenStack();
    servers.then(
      (s) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(sharedFacts(s))),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(err instanceof Error ? (err.stack ?? err.message) : String(err)),
    );
  });
  // A start takes minutes on busy cores: no request or header timeout may cut the answer off.
  broker.requestTimeout = 0;
  broker.headersTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    broker.once('error', reject);
    broker.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = broker.address() as AddressInfo;
  process.env[OPENSTACK_BROKER_ENV] = `http://127.0.0.1:${port}/openstack`;
  return async () => {
    delete process.env[OPENSTACK_BROKER_ENV];
    broker.closeAllConnections();
    await new Promise<void>((resolve) => broker.close(() => resolve()));
    const started = await servers?.catch(() => undefined);
    await started?.stop();
  };
}

/** The broker's Keystone and Heat (starting them if no file has yet), or undefined when the run has no broker. */
export async function brokeredOpenStack(): Promise<SharedFacts | undefined> {
  const url = process.env[OPENSTACK_BROKER_ENV];
  if (!url) return undefined;
  const res = await fetchNoTimeout(url);
  if (res.status !== 200) throw new Error(`the run's test Keystone and Heat did not start:\n${res.body}`);
  return JSON.parse(res.body) as SharedFacts;
}

/** A GET on 127.0.0.1 that waits as long as the answer takes (fetch gives up on headers after 300 s). */
function fetchNoTimeout(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpGet(url, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

type SharedFacts = { keystone: KeystoneInfo; heat: HeatInfo };

function sharedFacts(servers: OpenStackServers): SharedFacts {
  const { stop: _stopHeat, restart: _restart, ...heat } = servers.heat;
  return { keystone: servers.keystone, heat };
}

/**
 * The Keystone and Heat of the run (a global setup's, or the broker's) when
 * there are, else a new pair that `stop()` stops. The run's `restart` throws:
 * a file that restarts Heat starts its own with `startOpenStack`.
 */
export async function useOpenStack(): Promise<OpenStackServers> {
  const raw = process.env[OPENSTACK_ENV];
  const shared = raw ? (JSON.parse(raw) as SharedFacts) : await brokeredOpenStack();
  if (shared) {
    return {
      keystone: shared.keystone,
      heat: {
        ...shared.heat,
        stop: async () => {},
        restart: () => Promise.reject(new Error('the shared test Heat cannot be restarted from a test file; start one with startOpenStack')),
      },
      stop: async () => {},
    };
  }
  return startOpenStack();
}

/** A Keystone and a Heat of the caller's own, which `stop()` stops. */
export async function startOpenStack(): Promise<OpenStackServers> {
  const keystone: KeystoneServer = await startKeystone();
  let heat: HeatServer;
  try {
    heat = await startHeat(keystone);
  } catch (err) {
    await keystone.stop();
    throw err;
  }
  const { stop: stopKeystone, ...keystoneInfo } = keystone;
  return {
    keystone: keystoneInfo,
    heat,
    stop: async () => {
      await heat.stop();
      await stopKeystone();
    },
  };
}

/** A token of the test user scoped to the test project, from `POST /v3/auth/tokens`. */
export async function projectToken(keystone: KeystoneInfo): Promise<string> {
  const res = await fetch(`${keystone.url}/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: {
          methods: ['password'],
          password: {
            user: { name: keystone.user.name, domain: { id: 'default' }, password: keystone.user.password },
          },
        },
        scope: { project: { id: keystone.projectId } },
      },
    }),
    signal: AbortSignal.timeout(PROBE_TIMEOUT_MS * 4),
  });
  await res.arrayBuffer();
  const token = res.headers.get('x-subject-token');
  if (res.status !== 201 || !token) throw new Error(`test Keystone refused a token for ${keystone.user.name}: HTTP ${res.status}`);
  return token;
}

interface ConfFacts {
  dir: string;
  port: number;
  keystone: KeystoneInfo;
  heatPassword: string;
  domainAdminPassword: string;
}

function heatConf({ dir, port, keystone, heatPassword, domainAdminPassword }: ConfFacts): string {
  const unversioned = keystone.url.replace(/\/v3\/?$/, '');
  const serviceUser = `auth_type = password
auth_url = ${unversioned}
username = heat
password = ${heatPassword}
user_domain_name = Default`;
  return `[DEFAULT]
log_file = ${join(dir, 'heat.log')}
use_stderr = false
transport_url = fake://
# fake:// lives inside one process: one engine, not one per CPU.
num_engine_workers = 1
host = vnfm-test-heat
# oslo.service waits this long for running work on SIGTERM (60 s by default).
graceful_shutdown_timeout = 2
region_name_for_services = ${keystone.region}
auth_encryption_key = ${randomBytes(16).toString('hex')}
stack_user_domain_name = heat
stack_domain_admin = heat_domain_admin
stack_domain_admin_password = ${domainAdminPassword}
heat_metadata_server_url = http://127.0.0.1:${port}
heat_waitcondition_server_url = http://127.0.0.1:${port}/v1/waitcondition

[heat_all]
enabled_services = api,engine

[heat_api]
bind_host = 127.0.0.1
bind_port = ${port}
# One green pool in this process, no forked API workers.
workers = 1

[database]
connection = sqlite:///${join(dir, 'heat.sqlite')}

[oslo_messaging_notifications]
driver = noop

[keystone_authtoken]
www_authenticate_uri = ${keystone.url}
# The test Keystone's catalog has public endpoints only (the default is internal).
interface = public
${serviceUser}
project_name = service
project_domain_name = Default

[trustee]
${serviceUser}

[clients_keystone]
auth_uri = ${unversioned}

[clients]
endpoint_type = public
`;
}

/**
 * SQLite hands the highest rowid out again once its row is deleted, and Heat
 * deletes `resource_properties_data` rows by ids it remembered, so after a
 * mark-unhealthy an update could delete a row another resource now owns
 * ("ResourcePropertiesData with id N not found"). AUTOINCREMENT never reuses
 * ids. The tables are still empty right after db_sync, so they are simply
 * recreated. WAL keeps readers from blocking the engine's writes.
 */
function useAutoincrement(file: string): void {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = OFF');
    const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string; sql: string }[];
    db.transaction(() => {
      for (const { name, sql } of tables) {
        if (!/^\s*id INTEGER NOT NULL,/m.test(sql) || !/PRIMARY KEY \(id\)/.test(sql)) continue;
        const { n } = db.prepare(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number };
        if (n !== 0) throw new Error(`Heat table ${name} is not empty after db_sync; cannot recreate it`);
        const indexes = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL").all(name) as { sql: string }[];
        const recreated = sql.replace(/^(\s*)id INTEGER NOT NULL,/m, '$1id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,').replace(/,\s*PRIMARY KEY \(id\)/, '');
        db.exec(`DROP TABLE "${name}"`);
        db.exec(recreated);
        for (const index of indexes) db.exec(index.sql);
      }
    })();
  } finally {
    db.close();
  }
}

function spawnHeat(dir: string, conf: string): ChildProcess {
  const log = openSync(join(dir, 'heat-all.out'), 'a');
  try {
    return spawn(PYTHON, [LAUNCH_SCRIPT, '--config-file', conf], {
      cwd: dir,
      // Its own process group, so stop() reaches it and anything it forks.
      detached: true,
      stdio: ['ignore', log, log],
      env: pythonEnv(),
    });
  } finally {
    closeSync(log);
  }
}

/**
 * Probes `GET /v1/<project>/stacks` with a token until it answers 200, which
 * needs the API, keystonemiddleware and the engine (over the in-process
 * transport) all working; fails at once, with the logs, if heat-all exits.
 */
async function waitUntilServing(child: ChildProcess, url: string, keystone: KeystoneInfo, dir: string): Promise<void> {
  let exited: string | undefined;
  const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
    exited = signal ? `killed by ${signal}` : `exited with code ${code}`;
  };
  child.once('exit', onExit);
  try {
    const token = await projectToken(keystone);
    const deadline = Date.now() + START_TIMEOUT_MS;
    let lastProblem = 'no answer yet';
    while (Date.now() < deadline && !exited) {
      try {
        const res = await fetch(`${url}/stacks`, {
          headers: { 'x-auth-token': token, accept: 'application/json' },
          signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
        });
        const body = await res.text();
        if (res.status === 200) return;
        lastProblem = `GET ${url}/stacks answered HTTP ${res.status}: ${body.slice(0, 300)}`;
      } catch (err) {
        lastProblem = `GET ${url}/stacks: ${(err as Error).cause ?? (err as Error).message}`;
      }
      if (exited) break;
      await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
    }
    const why = exited ? `heat-all ${exited}` : `not serving after ${START_TIMEOUT_MS / 1000} s (${lastProblem})`;
    throw new Error(`test Heat did not start: ${why}\n${await logTails(dir)}`);
  } finally {
    child.off('exit', onExit);
  }
}

// Access-log lines of the readiness probes would hide the traceback.
const logTails = (dir: string): Promise<string> =>
  serviceLogTails(dir, ['heat-all.out', 'heat.log'], { lines: 40, omit: (line) => line.includes(' eventlet.wsgi.server '), omitted: 'access log' });

/** A Heat tool run to completion; its failure shows Heat's log. */
const run = (command: string, args: string[], opts: Omit<RunOptions, 'logTails'>): Promise<string> => runTool(command, args, { ...opts, logTails });

/** A Tacker vim-config.yaml for the test user and project of `keystone` (OpenStack VIM). */
export function openStackVimConfig(keystone: KeystoneInfo, opts: { region?: boolean } = {}): string {
  return [
    `auth_url: "${keystone.url}"`,
    `username: "${keystone.user.name}"`,
    `password: "${keystone.user.password}"`,
    `project_name: "${keystone.project}"`,
    'project_domain_name: Default',
    'user_domain_name: Default',
    'cert_verify: "True"',
    ...(opts.region === false ? [] : [`region_name: "${keystone.region}"`]),
    '',
  ].join('\n');
}
