/**
 * A private PostgreSQL cluster for tests: initdb into a temp directory, the
 * server on a free port of 127.0.0.1 with its socket in that directory, TLS
 * with a serving certificate for 127.0.0.1 signed by a throw-away CA, and
 * password (SCRAM) authentication. PostgreSQL refuses to run as root: when
 * the tests run as root, initdb and the server run as the `postgres` user
 * (the Debian package creates it), in a directory that user owns.
 *
 * Needs the Debian `postgresql` package (test/support/install-debian-deps.sh).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { makeServingPki } from './openssl-pki.js';

export interface PgServer {
  readonly port: number;
  readonly dir: string;
  /** The CA that signed the server's certificate (a file). */
  readonly caPath: string;
  readonly user: string;
  readonly password: string;
  /** The URL of `database` (created by createDatabase), TLS verified against the test CA unless `query` says otherwise. */
  url(database: string, query?: Record<string, string>): string;
  /** Creates an empty database and returns its name. */
  createDatabase(): Promise<string>;
  /** Stops the server (ending every session) and starts it again on the same port and data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function pgBin(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => /^\d+$/.test(v))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions[0]) throw new Error('PostgreSQL is not installed (/usr/lib/postgresql/<version>/bin): apt-get install postgresql');
  return join(base, versions[0], 'bin');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The uid/gid to run PostgreSQL as: this user, or `postgres` when this is root. */
function runAs(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const out = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error('running as root and there is no postgres user to run PostgreSQL as');
  return { uid: Number(out.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

let serial = 0;

export async function startPostgres(): Promise<PgServer> {
  const bin = pgBin();
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-pg-'));
  const as = runAs();
  const own = (path: string) => as && chownSync(path, as.uid, as.gid);
  own(dir);
  chmodSync(dir, 0o700);
  const user = 'vnfm';
  const password = 'pg-S3cret-' + Math.random().toString(36).slice(2);
  const pwfile = join(dir, 'pw');
  writeFileSync(pwfile, password + '\n', { mode: 0o600 });
  own(pwfile);
  const data = join(dir, 'data');
  const init = spawnSync(join(bin, 'initdb'), ['-D', data, '-U', user, '--pwfile', pwfile, '--auth', 'scram-sha-256', '-E', 'UTF8', '--no-locale'], {
    encoding: 'utf8',
    ...(as ?? {}),
  });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const pki = makeServingPki(dir, { ips: ['127.0.0.1'], dns: ['localhost'] });
  for (const f of [pki.certPath, pki.keyPath]) own(f);
  chmodSync(pki.keyPath, 0o600);
  const port = await freePort();
  const launch = async (): Promise<ChildProcess> => {
    const child = spawn(
      join(bin, 'postgres'),
      [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'ssl=on',
        '-c',
        `ssl_cert_file=${pki.certPath}`,
        '-c',
        `ssl_key_file=${pki.keyPath}`,
        '-c',
        'max_connections=100',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], ...(as ?? {}) },
    );
    let log = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (b: Buffer) => {
        log += b.toString();
        if (log.includes('ready to accept connections')) resolve();
      };
      child.stderr!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`postgres exited (${code}): ${log}`)));
    });
    child.stderr!.resume();
    return child;
  };
  const halt = async (child: ChildProcess): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    // SIGINT: PostgreSQL's fast shutdown (ends the sessions, then stops).
    process.kill(child.pid!, 'SIGINT');
    await exited;
  };
  let server = await launch();
  const url = (database: string, query: Record<string, string> = {}) => {
    const q = new URLSearchParams({ sslmode: 'verify-full', sslrootcert: pki.caCertPath, ...query });
    return `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}?${q}`;
  };
  return {
    port,
    dir,
    caPath: pki.caCertPath,
    user,
    password,
    url,
    async createDatabase() {
      const name = `t${process.pid}_${++serial}`;
      const client = new pg.Client({ host: dir, port, user, password, database: 'postgres' });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return name;
    },
    async restart() {
      await halt(server);
      server = await launch();
    },
    async stop() {
      await halt(server);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
