/**
 * Two clients of one shared store on a real PostgreSQL server (a private
 * cluster on 127.0.0.1), each with a VNFM_HOME of its own, through the
 * command line: the database named in VNFM_HOME/config.yaml (and what wins
 * over it), and a client with another master key, which opens no secret
 * and writes nothing; the database restarted inside an operation's final
 * write transaction.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { generateFernetKey } from '../../src/crypto/index.js';
import { bundleTestProgram } from '../support/bundle-test-program.js';
import { startPostgres, type PgServer } from '../support/postgres.js';
import { passwordFromPgpass } from '../../src/store/postgres/pgpass.js';

const SAMPLES = resolve(import.meta.dirname, '../../csar-samples');

let server: PgServer;
let writer: string;

beforeAll(async () => {
  [server, writer] = await Promise.all([startPostgres(), bundleTestProgram(resolve(import.meta.dirname, '../support/store-write-client.ts'))]);
});

afterAll(async () => {
  await server?.stop();
});

/** A new VNFM_HOME (created, 0700, as vnfm makes it). */
function newHome(): string {
  const home = join(mkdtempSync(join(tmpdir(), 'vnfm-clients-')), 'home');
  mkdirSync(home, { mode: 0o700 });
  return home;
}

async function vnfm(home: string, argv: string[], env: Record<string, string | undefined> = {}) {
  const out = { stdout: '', stderr: '' };
  const stream = (key: 'stdout' | 'stderr') => {
    const s = new PassThrough();
    s.on('data', (d: Buffer) => (out[key] += d.toString()));
    return s;
  };
  const code = await main(argv, {
    env: { PATH: process.env['PATH'], VNFM_HOME: home, ...env },
    cwd: home,
    streams: { stdin: new PassThrough(), stdout: stream('stdout'), stderr: stream('stderr') },
  });
  return { code, ...out };
}

async function query(database: string, sql: string): Promise<Record<string, unknown>[]> {
  const c = new pg.Client({ host: server.dir, port: server.port, user: server.user, password: server.password, database });
  await c.connect();
  try {
    return (await c.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await c.end();
  }
}

/** Every row of every table of `database`, in a stable order: what a refused command must leave as it was. */
async function dump(database: string): Promise<Record<string, unknown[]>> {
  const c = new pg.Client({ host: server.dir, port: server.port, user: server.user, password: server.password, database });
  await c.connect();
  try {
    const tables = (await c.query("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")).rows as { t: string }[];
    const out: Record<string, unknown[]> = {};
    for (const { t } of tables) out[t] = (await c.query(`SELECT * FROM "${t}"`)).rows.map((r) => JSON.stringify(r)).sort();
    return out;
  } finally {
    await c.end();
  }
}

function vimConfig(dir: string, name: string, token: string): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, `auth_url: https://127.0.0.1:6443\ntype: kubernetes\nproject_name: default\nbearer_token: ${token}\nssl_ca_cert: None\n`);
  return path;
}

describe('VNFM_HOME/config.yaml names the shared store', () => {
  it('database: the URL every command uses; store-info says where it came from; VNFM_DATABASE_URL and --database-url win over it', async () => {
    const db = await server.createDatabase();
    const url = server.url(db);
    const key = generateFernetKey();
    const home = newHome();
    const config = join(home, 'config.yaml');
    writeFileSync(config, `# the team's store\ndatabase: '${url}'\n`, { mode: 0o600 });
    expect((await vnfm(home, ['vnf-list', '-o', 'json'], { VNFM_MASTER_KEY: key })).code).toBe(0);
    const info = await vnfm(home, ['store-info', '-o', 'json'], { VNFM_MASTER_KEY: key });
    expect(info.code, info.stderr).toBe(0);
    const shown = JSON.parse(info.stdout) as Record<string, unknown>;
    expect(shown).toMatchObject({ backend: 'postgres', locationFrom: config });
    expect(shown['location']).toMatch(/^postgres:\/\/vnfm:\*\*\*@127\.0\.0\.1:\d+\//);
    expect(info.stdout).not.toContain(server.password);

    // The environment wins over the file, and the flag over both: the file's URL (a port nothing listens on) is never tried.
    writeFileSync(config, `database: '${url.replace(`:${server.port}/`, ':1/')}'\n`, { mode: 0o600 });
    const fromEnv = JSON.parse((await vnfm(home, ['store-info', '-o', 'json'], { VNFM_MASTER_KEY: key, VNFM_DATABASE_URL: url })).stdout) as Record<string, unknown>;
    expect(fromEnv).toMatchObject({ backend: 'postgres', locationFrom: 'VNFM_DATABASE_URL' });
    const fromFlag = JSON.parse(
      (await vnfm(home, ['--database-url', url, 'store-info', '-o', 'json'], { VNFM_MASTER_KEY: key, VNFM_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/x' })).stdout,
    ) as Record<string, unknown>;
    expect(fromFlag).toMatchObject({ backend: 'postgres', locationFrom: '--database-url' });
    const down = await vnfm(home, ['vnf-list'], { VNFM_MASTER_KEY: key });
    expect(down.code).toBe(6);
    expect(down.stderr).not.toContain(server.password);

    // Completion reads the store the file names, though this home has no vnfm.db.
    writeFileSync(config, `database: '${url}'\n`, { mode: 0o600 });
    expect((await vnfm(home, ['vnfpkg-onboard', join(SAMPLES, 'basic-cnf', 'package'), '--name', 'basic-cnf'], { VNFM_MASTER_KEY: key })).code).toBe(0);
    expect((await vnfm(home, ['vnf-create', '--package', 'basic-cnf', '--name', 'web'], { VNFM_MASTER_KEY: key })).code).toBe(0);
    const completed = await vnfm(home, ['__complete', '--', 'vnf-show', ''], { VNFM_MASTER_KEY: key });
    expect(completed.code, completed.stderr).toBe(0);
    expect(completed.stdout).toMatch(/^web\t/m);
    expect(existsSync(join(home, 'vnfm.db'))).toBe(false);

    // No file, no variable: the SQLite file under VNFM_HOME.
    const local = JSON.parse((await vnfm(newHome(), ['store-info', '-o', 'json'], { VNFM_MASTER_KEY: key })).stdout) as Record<string, unknown>;
    expect(local).toMatchObject({ backend: 'sqlite', locationFrom: 'default' });
  });

  it('a file others may read is refused while it holds a password (chmod 600 named); without a password, or 0600, it is read', async () => {
    const db = await server.createDatabase();
    const home = newHome();
    const config = join(home, 'config.yaml');
    writeFileSync(config, `database: '${server.url(db)}'\n`);
    chmodSync(config, 0o644);
    const refused = await vnfm(home, ['vnf-list'], { VNFM_MASTER_KEY: generateFernetKey() });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`the configuration file ${config} holds a database password and other users may read it (mode 0644)`);
    expect(refused.stderr).toContain(`chmod 600 ${config}`);
    expect(refused.stderr).not.toContain(server.password);
    chmodSync(config, 0o600);
    expect((await vnfm(home, ['vnf-list'], { VNFM_MASTER_KEY: generateFernetKey() })).code).toBe(0);

    // The password elsewhere (PGPASSWORD, read by the driver): the file may be readable.
    const noPassword = server.url(db).replace(`:${encodeURIComponent(server.password)}@`, '@');
    writeFileSync(config, `database: '${noPassword}'\n`);
    chmodSync(config, 0o644);
    const saved = process.env['PGPASSWORD'];
    process.env['PGPASSWORD'] = server.password;
    try {
      const r = await vnfm(home, ['store-info', '-o', 'json'], { VNFM_MASTER_KEY: generateFernetKey() });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ backend: 'postgres', locationFrom: config });
    } finally {
      if (saved === undefined) delete process.env['PGPASSWORD'];
      else process.env['PGPASSWORD'] = saved;
    }
  });

  it('an unknown key, a value that is not a postgres:// URL, or a document that is not a mapping: exit 2 naming the file (and the key)', async () => {
    const home = newHome();
    const config = join(home, 'config.yaml');
    const cases: [string, string][] = [
      ['databse: postgres://vnfm@db/vnfm\n', `the configuration file ${config} has the key "databse", which vnfm does not know`],
      ['database: mysql://vnfm@db/vnfm\n', `the configuration file ${config}: database is not a postgres:// URL`],
      ['- database\n', `the configuration file ${config} is not a mapping of keys to values`],
      ['database: [unclosed\n', `${config}: is not valid YAML`],
    ];
    for (const [text, message] of cases) {
      writeFileSync(config, text, { mode: 0o600 });
      const r = await vnfm(home, ['vnf-list'], { VNFM_MASTER_KEY: generateFernetKey() });
      expect(r.code, text).toBe(2);
      expect(r.stderr).toContain(message);
    }
    // --help opens no store, so it reads no configuration file.
    expect((await vnfm(home, ['vnf-list', '--help'])).code).toBe(0);
  });
});

describe('the password outside the URL', () => {
  it('the password file is read as libpq reads it: wildcards, escapes, the first line that matches, a socket as localhost', () => {
    const text = ['# comment', 'db.example.net:5432:vnfm:vnfm:first', '*:*:vnfm:vnfm:second', 'localhost:5433:*:ops:pa\\:ss\\\\word', 'short:line'].join('\n');
    const target = { host: 'db.example.net', port: 5432, database: 'vnfm', user: 'vnfm' };
    expect(passwordFromPgpass(text, target)).toBe('first');
    expect(passwordFromPgpass(text, { ...target, host: 'other' })).toBe('second');
    expect(passwordFromPgpass(text, { host: '/run/postgresql', port: 5433, database: 'x', user: 'ops' })).toBe('pa:ss\\word');
    expect(passwordFromPgpass(text, { ...target, database: 'other' })).toBeUndefined();
  });

  it('PGPASSFILE (0600) gives the password to a URL without one; a file others may read is ignored, as libpq does, and the refused login says where vnfm looked', async () => {
    const db = await server.createDatabase();
    const url = server.url(db).replace(`:${encodeURIComponent(server.password)}@`, '@');
    const file = join(mkdtempSync(join(tmpdir(), 'vnfm-pgpass-')), 'pgpass');
    writeFileSync(file, `# vnfm\n127.0.0.1:${server.port}:${db}:${server.user}:${server.password.replace(/[:\\]/g, '\\$&')}\n`, { mode: 0o600 });
    const saved = { file: process.env['PGPASSFILE'], password: process.env['PGPASSWORD'] };
    process.env['PGPASSFILE'] = file;
    delete process.env['PGPASSWORD'];
    try {
      const env = { VNFM_DATABASE_URL: url, VNFM_MASTER_KEY: generateFernetKey() };
      const r = await vnfm(newHome(), ['store-info', '-o', 'json'], env);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ backend: 'postgres', locationFrom: 'VNFM_DATABASE_URL' });
      chmodSync(file, 0o640);
      const refused = await vnfm(newHome(), ['vnf-list'], env);
      expect(refused.code, refused.stderr).toBe(6);
      expect(refused.stderr).toContain(`refused the login: the server asks for a password, and neither the URL, PGPASSWORD nor the password file ${file}`);
    } finally {
      for (const [name, value] of [
        ['PGPASSFILE', saved.file],
        ['PGPASSWORD', saved.password],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

describe('a client with another master key', () => {
  it('every command that would open or seal a secret refuses (exit 5) and nothing is written; without any key, no key file is made', async () => {
    const db = await server.createDatabase();
    const url = server.url(db);
    const dir = mkdtempSync(join(tmpdir(), 'vnfm-wrongkey-'));
    const [a, b] = [newHome(), newHome()];
    const keyA = generateFernetKey();
    const envA = { VNFM_DATABASE_URL: url, VNFM_MASTER_KEY: keyA };
    for (const argv of [
      ['vim-register', '--no-check', '--is-default', '--config-file', vimConfig(dir, 'edge', 'token-edge'), 'edge'],
      ['vnfpkg-onboard', join(SAMPLES, 'basic-cnf', 'package'), '--name', 'basic-cnf'],
      ['vnf-create', '--package', 'basic-cnf', '--name', 'web'],
    ]) {
      const r = await vnfm(a, argv, envA);
      expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
    }
    const before = await dump(db);
    const keyB = generateFernetKey();
    const secretFile = join(dir, 'key-b');
    writeFileSync(secretFile, keyB);
    const wrongKeys: Record<string, Record<string, string>> = {
      VNFM_MASTER_KEY: { VNFM_DATABASE_URL: url, VNFM_MASTER_KEY: keyB },
      VNFM_MASTER_KEY_COMMAND: { VNFM_DATABASE_URL: url, VNFM_MASTER_KEY_COMMAND: `cat '${secretFile}'` },
      'the key file': { VNFM_DATABASE_URL: url },
    };
    const commands = [
      ['vim-register', '--no-check', '--config-file', vimConfig(dir, 'core', 'token-core'), 'core'],
      ['vim-update', 'edge', '--config-file', vimConfig(dir, 'edge2', 'token-edge-2')],
      ['vim-check', 'edge'],
      ['vnf-instantiate', 'web', '--request-file', join(SAMPLES, 'basic-cnf', 'requests', 'instantiate.json')],
      ['key-rotate'],
    ];
    for (const [how, env] of Object.entries(wrongKeys)) {
      for (const argv of commands) {
        const r = await vnfm(b, argv, env);
        expect(r.code, `${how}: ${argv.join(' ')}: ${r.stderr}`).toBe(5);
        expect(r.stderr).toMatch(/encrypted with key [0-9a-f]{16}, which .* does not hold|master\.key is missing/);
        expect(r.stderr).not.toContain(keyB);
        expect(r.stderr).not.toContain('token-edge');
      }
    }
    expect(await dump(db)).toEqual(before);
    expect(existsSync(join(b, 'master.key'))).toBe(false);
    // Reads that open no secret still answer, and the right key still opens everything.
    const listed = await vnfm(b, ['vnf-list', '-o', 'json'], wrongKeys['VNFM_MASTER_KEY']);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { vnfInstanceName: string }[]).map((i) => i.vnfInstanceName)).toEqual(['web']);
    expect((await vnfm(b, ['vim-register', '--no-check', '--config-file', vimConfig(dir, 'core', 'token-core'), 'core'], envA)).code).toBe(0);
  });
});

describe('the database restarted inside an operation', () => {
  it('while the final transaction is open: none of it lands, the occurrence ends FAILED_TEMP with its lock released on a new connection, nothing lost or half-written', async () => {
    const db = await server.createDatabase();
    const url = server.url(db);
    const env = { VNFM_DATABASE_URL: url, VNFM_MASTER_KEY: generateFernetKey() };
    const home = newHome();
    expect((await vnfm(home, ['vnfpkg-onboard', join(SAMPLES, 'basic-cnf', 'package'), '--name', 'basic-cnf'], env)).code).toBe(0);
    const created = await vnfm(home, ['vnf-create', '--package', 'basic-cnf', '--name', 'web', '-o', 'json'], env);
    const instanceId = (JSON.parse(created.stdout) as { id: string }).id;

    const child = spawn(process.execPath, [writer, url, instanceId], { env: { PATH: process.env['PATH'], VNFM_HOME: newHome() }, stdio: ['pipe', 'pipe', 'pipe'] });
    const lines: string[] = [];
    let stderr = '';
    let partial = '';
    const waiters: (() => void)[] = [];
    child.stdout!.on('data', (d: Buffer) => {
      partial += d.toString();
      const parts = partial.split('\n');
      partial = parts.pop()!;
      lines.push(...parts);
      for (const w of waiters.splice(0)) w();
    });
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    const lineStarting = (prefix: string) =>
      new Promise<string>((ok, fail) => {
        const check = () => {
          const line = lines.find((l) => l.startsWith(prefix));
          if (line !== undefined) ok(line);
          else if (child.exitCode !== null) fail(new Error(`the writer exited without ${prefix}: ${lines.join(' | ')} ${stderr}`));
          else waiters.push(check);
        };
        check();
        void exited.then(() => waiters.push(check)).then(() => check());
      });

    const opId = (await lineStarting('STARTED ')).slice('STARTED '.length);
    await lineStarting('IN_TX');
    // Inside the final transaction: the instance and the occurrence's COMPLETED are written, not committed.
    expect(await query(db, `SELECT operation_state FROM lcm_op_occs WHERE id = '${opId}'`)).toEqual([{ operation_state: 'PROCESSING' }]);
    await server.restart();
    child.stdin!.write('go\n');
    expect(await exited).toBe(0);
    expect(lines.slice(2)).toEqual([expect.stringMatching(/^FAILED 6 /), 'FAILED_TEMP']);
    expect(stderr).not.toContain(server.password);

    expect(await query(db, `SELECT operation_state FROM lcm_op_occs WHERE id = '${opId}'`)).toEqual([{ operation_state: 'FAILED_TEMP' }]);
    expect(await query(db, `SELECT description FROM vnf_instances WHERE id = '${instanceId}'`)).toEqual([{ description: '' }]);
    expect(await query(db, 'SELECT vnf_instance_id FROM vnf_locks')).toEqual([]);
    // The occurrence is ready for op-retry / op-fail from any client.
    const shown = await vnfm(newHome(), ['op-show', opId, '-o', 'json'], env);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: opId, operationState: 'FAILED_TEMP' });
  });
});
