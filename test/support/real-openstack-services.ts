/**
 * How each service of the real OpenStack tier is prepared and started in the
 * cloud's namespace (real-openstack.ts puts them in order): the database
 * schema first, then the long-running processes. Facts behind the choices
 * are in notes/openstack-test-env.md and the real-openstack recipe:
 * PostgreSQL for every service (under eventlet, SQLite's locks block whole
 * processes), the PortForwarding model imported into neutron-server after
 * eventlet's monkey-patching, Nova's processes started from python3-nova
 * (the nova-compute package would bring a hypervisor).
 */
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { pythonEnv } from './openstack-process.js';
import type { CloudNamespace } from './cloud-namespace.js';
import { keystoneUrl, logDir, pgUrl, type CloudLayout } from './real-openstack-conf.js';
import { seedKeystone } from './real-openstack-seed.js';

const PYTHON = '/usr/bin/python3';
/** heat-all with the run-time fix ScalingPolicy signals need on bookworm (see the script). */
const HEAT_LAUNCH = fileURLToPath(new URL('./heat-launch.py', import.meta.url));
const PROBE_INTERVAL_MS = 500;

export const DATABASES = ['keystone', 'heat', 'placement', 'glance', 'neutron', 'nova_api', 'nova_cell0', 'nova'];
export const conf = (l: CloudLayout, file: string): string => join(l.dir, file);

/** Polls `check` until it gives a value; fails at once when a service of the cloud has exited. */
export async function waitFor<T>(ns: CloudNamespace, what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    const gone = ns.exited();
    if (gone) throw new Error(`real OpenStack: ${gone} exited while waiting for ${what}; logs in ${join(ns.dir, 'log')}`);
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = String((err as Error).cause ?? (err as Error).message);
    }
    await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
  }
  throw new Error(`real OpenStack: no ${what} after ${timeoutMs / 1000} s (${last}); logs in ${join(ns.dir, 'log')}`);
}

/** Resolves once `url` answers one of `statuses` (through the relay, as the tests reach it). */
export function waitForHttp(ns: CloudNamespace, what: string, url: string, statuses: number[]): Promise<boolean> {
  return waitFor(ns, what, 180_000, async () => {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    await res.arrayBuffer();
    if (statuses.includes(res.status)) return true;
    throw new Error(`GET ${url} answered HTTP ${res.status}`);
  });
}

/** One query to a database of the cloud's PostgreSQL (over its socket, as `postgres`). */
export async function query<R>(l: CloudLayout, database: string, sql: string): Promise<R[]> {
  const client = new pg.Client({ host: l.pgSocketDir, port: l.pgPort, user: 'postgres', database });
  await client.connect();
  try {
    return (await client.query(sql)).rows as R[];
  } finally {
    await client.end();
  }
}

function postgresBin(): string {
  const base = '/usr/lib/postgresql';
  const version = existsSync(base)
    ? readdirSync(base)
        .filter((v) => /^\d+$/.test(v))
        .sort((a, b) => Number(b) - Number(a))[0]
    : undefined;
  if (!version) throw new Error('PostgreSQL is not installed (/usr/lib/postgresql/<version>/bin): run test/support/install-debian-deps.sh');
  return join(base, version, 'bin');
}

function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  if (!uid) throw new Error('there is no postgres user to run PostgreSQL as (it refuses root)');
  return { uid, gid: id('-g') };
}

/**
 * A private PostgreSQL with no TCP listener: its socket in the cloud's
 * directory, `trust` for the local user postgres, durability off (a test
 * cloud lives one run), and the databases of every service.
 */
export async function startPostgres(ns: CloudNamespace, l: CloudLayout): Promise<void> {
  const bin = postgresBin();
  const as = postgresUser();
  mkdirSync(l.pgSocketDir, { recursive: true });
  chownSync(l.pgSocketDir, as.uid, as.gid);
  const data = join(l.pgSocketDir, 'data');
  const onHost = { onHost: true, ...as };
  await ns.run(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-locale', '--no-sync'], onHost);
  const settings = ['listen_addresses=', 'fsync=off', 'synchronous_commit=off', 'full_page_writes=off', 'max_connections=300', 'shared_buffers=64MB'];
  const args = ['-D', data, '-k', l.pgSocketDir, '-p', String(l.pgPort), ...settings.flatMap((s) => ['-c', s])];
  ns.start('postgres', join(bin, 'postgres'), args, { ...onHost, stopSignal: 'SIGINT' });
  await waitFor(ns, 'PostgreSQL', 60_000, async () => (await query(l, 'postgres', 'SELECT 1')).length || undefined);
  for (const db of DATABASES) await query(l, 'postgres', `CREATE DATABASE ${db}`);
}

/** epmd and RabbitMQ as root with their own home, cookie, database and logs, on the namespace's loopback only. */
export async function startRabbit(ns: CloudNamespace, l: CloudLayout): Promise<void> {
  const home = join(l.dir, 'rabbitmq');
  mkdirSync(join(logDir(l), 'rabbitmq'), { recursive: true });
  mkdirSync(home, { recursive: true });
  ns.start('epmd', 'epmd', ['-address', '127.0.0.1', '-port', '4369']);
  ns.start('rabbitmq', '/usr/lib/rabbitmq/bin/rabbitmq-server', [], {
    env: {
      ...pythonEnv(),
      HOME: home,
      ERL_EPMD_ADDRESS: '127.0.0.1',
      RABBITMQ_CONF_ENV_FILE: '/dev/null',
      RABBITMQ_NODENAME: 'rabbit@localhost',
      RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
      RABBITMQ_NODE_PORT: '5672',
      RABBITMQ_DIST_PORT: '25672',
      RABBITMQ_MNESIA_BASE: join(home, 'mnesia'),
      RABBITMQ_LOG_BASE: join(logDir(l), 'rabbitmq'),
      RABBITMQ_PID_FILE: join(home, 'rabbitmq.pid'),
      RABBITMQ_ENABLED_PLUGINS_FILE: join(home, 'enabled_plugins'),
      RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
    },
  });
  const out = join(logDir(l), 'rabbitmq.out');
  await waitFor(ns, 'RabbitMQ', 120_000, async () => /completed with \d+ plugins/.test(readFileSync(out, 'utf8')) || undefined);
}

/**
 * Keystone under uwsgi (two single-threaded workers, forked from a master
 * that loaded it once: on PostgreSQL, unlike SQLite, nothing of the
 * database is shared by the fork), bootstrapped with admin and every
 * interface's identity endpoint, then seeded with the other services
 * (real-openstack-seed.ts).
 */
export async function startKeystone(ns: CloudNamespace, l: CloudLayout, adminPassword: string, mark: (name: string) => void): Promise<void> {
  const file = conf(l, 'keystone/keystone.conf');
  const url = keystoneUrl(l);
  const manage = (...args: string[]) => ns.run('keystone-manage', ['--config-file', file, ...args], { env: { ...pythonEnv(), OS_BOOTSTRAP_PASSWORD: adminPassword } });
  const owner = ['--keystone-user', 'root', '--keystone-group', 'root'];
  await Promise.all([manage('fernet_setup', ...owner), manage('credential_setup', ...owner), manage('db_sync')]);
  mark('keystone schema');
  const endpoints = ['public', 'internal', 'admin'].flatMap((i) => [`--bootstrap-${i}-url`, url]);
  await manage(
    'bootstrap',
    '--bootstrap-username',
    'admin',
    '--bootstrap-project-name',
    'admin',
    '--bootstrap-role-name',
    'admin',
    ...endpoints,
    '--bootstrap-region-id',
    l.region,
  );
  const uwsgi = ['--plugins', 'python3', '--http-socket', `127.0.0.1:${l.ports.keystone}`, '--wsgi-file', '/usr/bin/keystone-wsgi-public', '--master'];
  const workers = ['--processes', '2', '--threads', '1', '--need-app', '--die-on-term', '--buffer-size', '65535', '--add-header', 'Connection: close'];
  ns.start('keystone', 'uwsgi', [...uwsgi, ...workers], { env: { ...pythonEnv(), OS_KEYSTONE_CONFIG_FILES: file } });
  await waitForHttp(ns, 'Keystone', url, [200]);
  mark('keystone serving');

  await seedKeystone(l, adminPassword);
}

/** Heat's schema (no Keystone needed for that). */
export async function migrateHeat(ns: CloudNamespace, l: CloudLayout): Promise<void> {
  await ns.run('heat-manage', ['--config-file', conf(l, 'heat/heat.conf'), 'db_sync']);
}

/** heat-all through heat-launch.py; ready when the admin's stack list answers: the API, keystonemiddleware and the engine (over the in-process transport) all work. */
export async function startHeat(ns: CloudNamespace, l: CloudLayout, token: () => Promise<{ token: string; projectId: string }>): Promise<void> {
  ns.start('heat', PYTHON, [HEAT_LAUNCH, '--config-file', conf(l, 'heat/heat.conf')]);
  await waitFor(ns, 'Heat', 180_000, async () => {
    const admin = await token();
    const url = `http://127.0.0.1:${l.ports.heat}/v1/${admin.projectId}/stacks`;
    const res = await fetch(url, { headers: { 'x-auth-token': admin.token, accept: 'application/json' }, signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    if (res.status === 200) return true;
    throw new Error(`GET ${url} answered HTTP ${res.status}`);
  });
}

export async function startPlacement(ns: CloudNamespace, l: CloudLayout): Promise<void> {
  await ns.run('placement-manage', ['--config-file', conf(l, 'placement/placement.conf'), 'db', 'sync']);
  const uwsgi = ['--plugins', 'python3', '--http-socket', `127.0.0.1:${l.ports.placement}`, '--wsgi-file', '/usr/bin/placement-api', '--master'];
  const workers = ['--processes', '1', '--threads', '1', '--die-on-term', '--need-app', '--buffer-size', '65535', '--add-header', 'Connection: close'];
  ns.start('placement', 'uwsgi', [...uwsgi, ...workers], { env: { ...pythonEnv(), OS_PLACEMENT_CONFIG_DIR: join(l.dir, 'placement') } });
  await waitForHttp(ns, 'Placement', `http://127.0.0.1:${l.ports.placement}/`, [200]);
}

export async function startGlance(ns: CloudNamespace, l: CloudLayout): Promise<void> {
  const file = conf(l, 'glance/glance-api.conf');
  await ns.run('glance-manage', ['--config-file', file, 'db_sync']);
  const main = 'import sys; from glance.cmd.api import main; sys.argv[0] = "glance-api"; sys.exit(main())';
  ns.start('glance-api', PYTHON, ['-c', main, '--config-file', file]);
  await waitForHttp(ns, 'Glance', `http://127.0.0.1:${l.ports.glance}/`, [200, 300]);
}

/**
 * Without a port forwarding service plugin an API worker may never load the
 * PortForwarding model that adds Port.port_forwardings, and GET or DELETE of
 * a port fails with HTTP 500; it is imported here, after neutron.cmd.eventlet
 * has monkey-patched (imported before, oslo.db's thread-locals are shared
 * between green threads).
 */
const NEUTRON_SERVER =
  'import sys, neutron.cmd.eventlet, neutron.db.models.port_forwarding; from neutron.cmd.eventlet.server import main; sys.argv[0] = "neutron-server"; sys.exit(main())';

export async function startNeutron(ns: CloudNamespace, l: CloudLayout): Promise<void> {
  const files = ['--config-file', conf(l, 'neutron/neutron.conf'), '--config-file', conf(l, 'neutron/ml2.ini')];
  await ns.run('neutron-db-manage', [...files, 'upgrade', 'heads']);
  ns.start('neutron-server', PYTHON, ['-c', NEUTRON_SERVER, ...files, '--log-file', join(logDir(l), 'neutron-server.log')]);
  ns.start('neutron-linuxbridge-agent', 'neutron-linuxbridge-agent', [...files, '--log-file', join(logDir(l), 'neutron-linuxbridge-agent.log')]);
  await waitForHttp(ns, 'Neutron', `http://127.0.0.1:${l.ports.neutron}/`, [200]);
}

const novaMain = (service: string) => `import sys; from nova.cmd.${service} import main; sys.argv[0] = "nova-${service}"; sys.exit(main())`;

export function startNovaService(ns: CloudNamespace, l: CloudLayout, service: 'api' | 'conductor' | 'scheduler' | 'compute'): void {
  ns.start(`nova-${service}`, PYTHON, ['-c', novaMain(service), '--config-file', conf(l, 'nova/nova.conf'), '--log-file', join(logDir(l), `nova-${service}.log`)]);
}

/** Cells v2: the API database, cell0, cell1 (on the RabbitMQ), then the cell database. */
export async function migrateNova(ns: CloudNamespace, l: CloudLayout): Promise<void> {
  const manage = (...args: string[]) => ns.run('nova-manage', ['--config-file', conf(l, 'nova/nova.conf'), ...args]);
  await manage('api_db', 'sync');
  await manage('cell_v2', 'map_cell0', '--database_connection', pgUrl(l, 'nova_cell0'));
  await manage('cell_v2', 'create_cell', '--name', 'cell1');
  await manage('db', 'sync');
}

/**
 * Ready to schedule: the compute node is in the cell database, mapped to the
 * cell (the scheduler does not look by itself), and its inventory is in
 * Placement; the Linux bridge agent of the compute host has reported.
 */
export async function waitForCompute(ns: CloudNamespace, l: CloudLayout): Promise<void> {
  const count = async (db: string, sql: string) => Number((await query<{ n: string }>(l, db, sql))[0]?.n ?? 0);
  await waitFor(ns, 'compute node', 240_000, async () => (await count('nova', 'SELECT count(*) AS n FROM compute_nodes WHERE deleted = 0')) || undefined);
  await ns.run('nova-manage', ['--config-file', conf(l, 'nova/nova.conf'), 'cell_v2', 'discover_hosts']);
  await waitFor(ns, 'compute host mapping', 60_000, async () => (await count('nova_api', 'SELECT count(*) AS n FROM host_mappings')) || undefined);
  await waitFor(ns, 'compute inventory in Placement', 240_000, async () => (await count('placement', 'SELECT count(*) AS n FROM inventories')) || undefined);
  const agent = `SELECT count(*) AS n FROM agents WHERE agent_type = 'Linux bridge agent' AND host = '${l.computeHost}'`;
  await waitFor(ns, 'Linux bridge agent', 240_000, async () => (await count('neutron', agent)) || undefined);
}
