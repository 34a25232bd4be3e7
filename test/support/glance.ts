/**
 * A real Glance (Debian's `python3-glance` and `glance-common`) for the
 * tests: glance-api as one eventlet process on 127.0.0.1 against a test
 * Keystone (keystone.ts), with its own glance-api.conf, SQLite database,
 * file store and log in a temp dir. Nothing under /etc/glance is written;
 * Glance reads only glance-api-paste.ini from there. Starting it registers
 * the `glance` service user and the image endpoints in that Keystone: a
 * test that starts one Keystone of its own gets Glance in its catalog, and
 * no other test's.
 *
 * Cheap (a few seconds: db_sync, then the API importing Glance); the full
 * cloud with Nova and Neutron is real-openstack.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KeystoneInfo } from './keystone.js';
import { glanceFileStore } from './real-openstack-conf.js';
import { freePort, pythonEnv, randomSecret, runTool, signalGroup, stopProcessGroup, type RunOptions, serviceLogTails } from './openstack-process.js';

export interface GlanceServer {
  /** `http://127.0.0.1:<port>`: the catalog's image endpoint. */
  url: string;
  /** The temp dir holding glance-api.conf, the database, the store and the log. */
  dir: string;
  /** The file store: one file per image id. */
  storeDir: string;
  /** Stops glance-api (its whole process group) and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

const PYTHON = '/usr/bin/python3';
const SEED_SCRIPT = fileURLToPath(new URL('./glance-seed.py', import.meta.url));
/** Debian ships the API's entry point in the glance-api package; the module is in python3-glance. */
const API_MAIN = 'import sys; from glance.cmd.api import main; sys.argv[0] = "glance-api"; sys.exit(main())';
const START_TIMEOUT_MS = 90_000;
const PROBE_INTERVAL_MS = 200;

/** Starts Glance against `keystone` and puts its endpoints in that Keystone's catalog. */
export async function startGlance(keystone: KeystoneInfo): Promise<GlanceServer> {
  const dir = await mkdtemp(join(tmpdir(), 'vnfm-glance-'));
  let api: ChildProcess | undefined;
  const onProcessExit = () => {
    if (api?.pid !== undefined && api.exitCode === null && api.signalCode === null) signalGroup(api.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onProcessExit);
  const stop = async (): Promise<void> => {
    process.off('exit', onProcessExit);
    if (api) await stopProcessGroup(api);
    api = undefined;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const password = randomSecret();
    const storeDir = join(dir, 'images');
    for (const sub of ['images', 'staging', 'tasks', 'lock']) await mkdir(join(dir, sub));
    const conf = join(dir, 'glance-api.conf');
    await writeFile(conf, glanceConf(dir, port, keystone, password));
    await Promise.all([
      run(PYTHON, [SEED_SCRIPT], {
        dir,
        input: JSON.stringify({ url: keystone.url, adminPassword: keystone.adminPassword, glancePassword: password, imageUrl: url, region: keystone.region }),
      }),
      run('glance-manage', ['--config-file', conf, 'db_sync'], { dir }),
    ]);
    api = spawnApi(dir, conf);
    await waitUntilServing(api, url, dir);
    return { url, dir, storeDir, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function glanceConf(dir: string, port: number, keystone: KeystoneInfo, password: string): string {
  return `[DEFAULT]
log_file = ${join(dir, 'glance-api.log')}
use_stderr = false
bind_host = 127.0.0.1
bind_port = ${port}
# One process: the API in eventlet, no forked workers.
workers = 0
enabled_backends = fs:file

[database]
connection = sqlite:///${join(dir, 'glance.sqlite')}

${glanceFileStore(dir)}[oslo_concurrency]
lock_path = ${join(dir, 'lock')}

[keystone_authtoken]
www_authenticate_uri = ${keystone.url}
# The test Keystone's catalog has public endpoints only (the default is internal).
interface = public
auth_type = password
auth_url = ${keystone.url.replace(/\/v3\/?$/, '')}
username = glance
password = ${password}
user_domain_name = Default
project_name = service
project_domain_name = Default
`;
}

function spawnApi(dir: string, conf: string): ChildProcess {
  const log = openSync(join(dir, 'glance-api.out'), 'a');
  try {
    // Its own process group, so stop() reaches it and anything it forks.
    return spawn(PYTHON, ['-c', API_MAIN, '--config-file', conf], { cwd: dir, detached: true, stdio: ['ignore', log, log], env: pythonEnv() });
  } finally {
    closeSync(log);
  }
}

/** Probes `GET /` (the versions document, HTTP 300) until it answers; fails at once, with the logs, if glance-api exits. */
async function waitUntilServing(child: ChildProcess, url: string, dir: string): Promise<void> {
  let exited: string | undefined;
  const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
    exited = signal ? `killed by ${signal}` : `exited with code ${code}`;
  };
  child.once('exit', onExit);
  try {
    const deadline = Date.now() + START_TIMEOUT_MS;
    let lastProblem = 'no answer yet';
    while (Date.now() < deadline && !exited) {
      try {
        const res = await fetch(`${url}/`, { signal: AbortSignal.timeout(2_000) });
        await res.arrayBuffer();
        if (res.status === 300 || res.status === 200) return;
        lastProblem = `GET ${url}/ answered HTTP ${res.status}`;
      } catch (err) {
        lastProblem = `GET ${url}/: ${(err as Error).cause ?? (err as Error).message}`;
      }
      await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
    }
    const why = exited ? `glance-api ${exited}` : `not serving after ${START_TIMEOUT_MS / 1000} s (${lastProblem})`;
    throw new Error(`test Glance did not start: ${why}\n${await logTails(dir)}`);
  } finally {
    child.off('exit', onExit);
  }
}

const logTails = (dir: string): Promise<string> => serviceLogTails(dir, ['glance-api.out', 'glance-api.log']);

/** A Glance tool run to completion; its failure shows Glance's log. */
const run = (command: string, args: string[], opts: Omit<RunOptions, 'logTails'>): Promise<string> => runTool(command, args, { ...opts, logTails });
