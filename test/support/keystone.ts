/**
 * A real Keystone (Debian's `keystone` package) for the tests, served by
 * uwsgi on 127.0.0.1 from a temp dir: its own keystone.conf, SQLite database,
 * fernet keys and logs. Nothing under /etc/keystone is read or written.
 *
 * Needs the packages from `install-debian-deps.sh`. Facts behind the choices
 * below are in notes/openstack-test-env.md (WAL, one thread per worker, no
 * keep-alive, /usr/bin/python3).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { freePort, pythonEnv, randomSecret, runTool, settleAll, signalGroup, stopProcessGroup, type RunOptions, serviceLogTails } from './openstack-process.js';

/** Connection facts of a running test Keystone; plain data, so it can cross process boundaries. */
export interface KeystoneInfo {
  /** `http://127.0.0.1:<port>/v3` */
  url: string;
  /** Password of `admin` (project `admin`, domain `Default`). */
  adminPassword: string;
  /** Name of the project the test user works in (`vnf`). */
  project: string;
  projectId: string;
  /** The test user (`vnfuser`), with the `member` and `admin` roles on `project`. */
  user: { name: string; id: string; password: string; domain: string };
  /** An application credential of the test user, bound to `project`. */
  appCredential: { id: string; secret: string };
  /** Region of every catalog entry. */
  region: string;
  /** The temp dir holding keystone.conf, the database and the logs. */
  dir: string;
}

export interface KeystoneServer extends KeystoneInfo {
  /** Stops uwsgi and keeps its data: Keystone is down until `resume`. */
  pause(): Promise<void>;
  /** Starts uwsgi again on the same port and data; resolves once it answers. */
  resume(): Promise<void>;
  /** Stops uwsgi (its whole process group) and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

export interface KeystoneOptions {
  /** Keystone's `[token] expiration`: how long a token lives, in seconds (Keystone's default is 3600). */
  tokenExpirationSeconds?: number;
}

const REGION = 'RegionOne';
const PROJECT = 'vnf';
const USER = 'vnfuser';
/** A placeholder until `startHeat` (heat.ts) moves it to the port Heat really listens on. */
const ORCHESTRATION_URL = 'http://127.0.0.1:8004/v1/%(tenant_id)s';
const PYTHON = '/usr/bin/python3';
const SEED_SCRIPT = fileURLToPath(new URL('./keystone-seed.py', import.meta.url));
const START_TIMEOUT_MS = 90_000;
const PROBE_INTERVAL_MS = 200;
const PROBE_TIMEOUT_MS = 2_000;

/** Environment variable through which `keystoneGlobalSetup` hands `KeystoneInfo` to test workers. */
export const KEYSTONE_ENV = 'VNFM_TEST_KEYSTONE';

/**
 * Starts a Keystone with project `vnf`, user `vnfuser`, an application
 * credential and an `orchestration` catalog entry. Takes a few seconds
 * (`keystone-manage` and uwsgi each import all of Keystone).
 */
export async function startKeystone(opts: KeystoneOptions = {}): Promise<KeystoneServer> {
  const dir = await mkdtemp(join(tmpdir(), 'vnfm-keystone-'));
  let uwsgi: ChildProcess | undefined;
  // A test process that ends without stop() (a timed-out hook, a crash)
  // must not leave uwsgi or the temp dir behind. Only synchronous work runs here.
  const onProcessExit = () => {
    if (uwsgi?.pid !== undefined && uwsgi.exitCode === null && uwsgi.signalCode === null) signalGroup(uwsgi.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onProcessExit);
  const stop = async (): Promise<void> => {
    process.off('exit', onProcessExit);
    if (uwsgi) await stopProcessGroup(uwsgi);
    uwsgi = undefined;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/v3`;
    const adminPassword = randomSecret();
    const userPassword = randomSecret();
    const conf = join(dir, 'keystone.conf');
    await writeFile(conf, keystoneConf(dir, opts));

    const owner = await processOwner();
    const manage = (...args: string[]) => run('keystone-manage', ['--config-file', conf, ...args], { dir, env: { OS_BOOTSTRAP_PASSWORD: adminPassword } });
    // Every step imports all of Keystone (~2 s): run what does not depend on
    // each other at once. Key repositories need no database; uwsgi needs the
    // schema to exist and answers GET /v3 before bootstrap is done.
    await settleAll([
      manage('fernet_setup', '--keystone-user', owner.user, '--keystone-group', owner.group),
      manage('credential_setup', '--keystone-user', owner.user, '--keystone-group', owner.group),
      (async () => {
        await manage('db_sync');
        useWal(join(dir, 'keystone.sqlite'));
        const child = spawnUwsgi(dir, conf, port);
        uwsgi = child;
        await settleAll([
          manage(
            'bootstrap',
            '--bootstrap-username',
            'admin',
            '--bootstrap-project-name',
            'admin',
            '--bootstrap-role-name',
            'admin',
            '--bootstrap-service-name',
            'keystone',
            '--bootstrap-region-id',
            REGION,
            '--bootstrap-public-url',
            url,
          ),
          waitUntilServing(child, url, dir),
        ]);
      })(),
    ]);

    const seeded = JSON.parse(
      await run(PYTHON, [SEED_SCRIPT], {
        dir,
        input: JSON.stringify({
          url,
          adminPassword,
          project: PROJECT,
          username: USER,
          password: userPassword,
          orchestrationUrl: ORCHESTRATION_URL,
          region: REGION,
        }),
      }),
    ) as { projectId: string; userId: string; appCredential: { id: string; secret: string } };

    return {
      url,
      adminPassword,
      project: PROJECT,
      projectId: seeded.projectId,
      user: { name: USER, id: seeded.userId, password: userPassword, domain: 'Default' },
      appCredential: seeded.appCredential,
      region: REGION,
      dir,
      pause: async () => {
        if (uwsgi) await stopProcessGroup(uwsgi);
      },
      resume: async () => {
        if (uwsgi && uwsgi.exitCode === null && uwsgi.signalCode === null) return;
        const child = spawnUwsgi(dir, conf, port);
        uwsgi = child;
        await waitUntilServing(child, url, dir);
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * For a vitest `globalSetup` file:
 * `export { keystoneGlobalSetup as default } from '../support/keystone.js'`.
 * Starts one Keystone for the whole run, hands its `KeystoneInfo` to the
 * workers in `VNFM_TEST_KEYSTONE` (read it with `keystoneFromEnv`), and
 * returns the teardown.
 */
export async function keystoneGlobalSetup(): Promise<() => Promise<void>> {
  const server = await startKeystone();
  const { stop, ...info } = server;
  process.env[KEYSTONE_ENV] = JSON.stringify(info);
  return async () => {
    delete process.env[KEYSTONE_ENV];
    await stop();
  };
}

/** The Keystone a global setup started, if any. */
export function keystoneFromEnv(): KeystoneInfo | undefined {
  const raw = process.env[KEYSTONE_ENV];
  return raw ? (JSON.parse(raw) as KeystoneInfo) : undefined;
}

/**
 * The Keystone of the global setup when there is one, else a new one that
 * `stop()` stops; lets a test file run alone or in the whole suite.
 */
export async function useKeystone(): Promise<KeystoneServer> {
  const shared = keystoneFromEnv();
  if (shared) {
    const notOurs = () => Promise.reject(new Error('the shared test Keystone cannot be paused from a test file; start one with startKeystone'));
    return { ...shared, pause: notOurs, resume: notOurs, stop: async () => {} };
  }
  return startKeystone();
}

function keystoneConf(dir: string, opts: KeystoneOptions): string {
  return `[DEFAULT]
log_file = ${join(dir, 'keystone.log')}
use_stderr = false

[database]
connection = sqlite:///${join(dir, 'keystone.sqlite')}

[identity]
# bcrypt's least cost: the test users' passwords are random and live for one
# run, and every vnfm command authenticates (the default cost, 12, takes
# ~0.3 s of CPU per token on these cores).
password_hash_rounds = 4

[token]
provider = fernet
${opts.tokenExpirationSeconds ? `expiration = ${opts.tokenExpirationSeconds}\n` : ''}
[fernet_tokens]
key_repository = ${join(dir, 'fernet-keys')}

[fernet_receipts]
key_repository = ${join(dir, 'fernet-keys')}

[credential]
key_repository = ${join(dir, 'credential-keys')}
`;
}

/**
 * In rollback-journal mode a request that keeps a read transaction open
 * blocks every writer ("database is locked", HTTP 500). WAL mode is stored in
 * the file, so setting it once here holds for every Keystone process.
 */
function useWal(file: string): void {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
  } finally {
    db.close();
  }
}

function spawnUwsgi(dir: string, conf: string, port: number): ChildProcess {
  const log = openSync(join(dir, 'uwsgi.log'), 'a');
  try {
    const child = spawn(
      'uwsgi',
      [
        '--plugins',
        'python3',
        '--http-socket',
        `127.0.0.1:${port}`,
        '--wsgi-file',
        '/usr/bin/keystone-wsgi-public',
        '--master',
        '--processes',
        '2',
        // More threads per worker bring back "database is locked" on SQLite.
        '--threads',
        '1',
        // Each worker opens its own database connections after the fork.
        '--lazy-apps',
        '--need-app',
        '--die-on-term',
        '--buffer-size',
        '65535',
        // --http-socket closes every connection after one response but does
        // not say so; clients reusing the connection then get a reset
        // (keystoneauth's POSTs are not retried). Say it.
        '--add-header',
        'Connection: close',
      ],
      {
        cwd: dir,
        // Its own process group, so stop() reaches master and workers at once.
        detached: true,
        stdio: ['ignore', log, log],
        env: { ...pythonEnv(), OS_KEYSTONE_CONFIG_FILES: conf },
      },
    );
    return child;
  } finally {
    closeSync(log);
  }
}

/** Probes `GET /v3` until it answers 200; fails at once, with the logs, if uwsgi exits. */
async function waitUntilServing(child: ChildProcess, url: string, dir: string): Promise<void> {
  let exited: string | undefined;
  const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
    exited = signal ? `killed by ${signal}` : `exited with code ${code}`;
  };
  child.once('exit', onExit);
  try {
    const deadline = Date.now() + START_TIMEOUT_MS;
    let lastProblem = 'no answer yet';
    while (Date.now() < deadline) {
      if (exited) break;
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
        await res.arrayBuffer();
        if (res.status === 200) return;
        lastProblem = `GET ${url} answered HTTP ${res.status}`;
      } catch (err) {
        lastProblem = `GET ${url}: ${(err as Error).cause ?? (err as Error).message}`;
      }
      if (exited) break;
      await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
    }
    const why = exited ? `uwsgi ${exited}` : `not serving after ${START_TIMEOUT_MS / 1000} s (${lastProblem})`;
    throw new Error(`test Keystone did not start: ${why}\n${await logTails(dir)}`);
  } finally {
    child.off('exit', onExit);
  }
}

const logTails = (dir: string): Promise<string> => serviceLogTails(dir, ['uwsgi.log', 'keystone.log']);

/** A Keystone tool run to completion; its failure shows Keystone's log. */
const run = (command: string, args: string[], opts: Omit<RunOptions, 'logTails'>): Promise<string> => runTool(command, args, { ...opts, logTails });

async function processOwner(): Promise<{ user: string; group: string }> {
  if (process.getuid?.() === 0) return { user: 'root', group: 'root' };
  const group = (await run('id', ['-gn'], { dir: tmpdir() })).trim();
  return { user: userInfo().username, group };
}
