/**
 * Package scripts through the real program against the sandbox: the basic
 * CNF with an instantiate_end hook implemented by Scripts/record.sh, which
 * writes the JSON it reads on stdin to the file the request names. Without
 * the operator's consent the operation is refused before anything is
 * recorded; with --allow-package-scripts the script sees the operation, the
 * request and the instance with its VNFCs; a failing script leaves
 * FAILED_TEMP with its output in the error and in `vnfm op-log`, and op-retry
 * runs it again only with the flag. vnfm running as root (as these tests
 * do) runs the script as nobody in a namespace hiding VNFM_HOME: it reads
 * neither the master key (vnfm's environment) nor the key file nor the
 * database. What the script starts (nohup, setsid, a double fork) is gone
 * when its hook ends, fails or times out, and when vnfm is stopped or
 * killed — with namespaces, with processes tracked in /proc (no util-linux
 * nor Perl on the PATH), and with vnfm run by nobody.
 */
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, writeSandboxConfigs, type Sandbox } from '../../src/sandbox/index.js';
import { BIN, newHome, onTerminal, vnfm, okWith } from '../support/cli.js';
import { kubeRequest } from '../support/kube-http.js';

const BASIC = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');

// Reads the operation, keeps it where the request says, and fails while the request's marker file exists.
const RECORD_SH = `#!/bin/bash
set -e
payload=$(cat)
param() { printf '%s' "$payload" | sed -n "s/.*\\"$1\\":\\"\\([^\\"]*\\)\\".*/\\1/p"; }
out=$(param record_to)
if [ -n "$out" ]; then printf '%s' "$payload" > "$out"; fi
echo "recorded $VNFM_HOOK of $VNFM_VNF_INSTANCE_ID to \${out:-nowhere}"
home=$(param probe_home)
if [ -n "$home" ]; then
  echo "probe uid=$(id -u)"
  echo "probe parent environ: $(tr '\\0' ' ' 2>&1 < /proc/$PPID/environ)"
  echo "probe own environ: $(env | tr '\\n' ' ')"
  echo "probe key file: $(cat "$home/master.key" 2>&1)"
  echo "probe database: $(head -c 15 "$home/vnfm.db" 2>&1)"
  echo "probe home: [$(ls -A "$home" 2>&1 | tr '\\n' ' ')]"
  echo "probe open in home: $(for f in /proc/$$/fd/*; do readlink "$f"; done | grep -c "^$home" || true)"
fi
token=$(param leave_token)
if [ -n "$token" ]; then
  # Leaves three behind, marked with the token: nohup, setsid, and a double fork into a session of its own.
  nohup sleep 300.$token >/dev/null 2>&1 &
  setsid sleep 301.$token &
  ( setsid sh -c 'sleep "$1" >/dev/null 2>&1 &' sh 302.$token & )
  while [ "$(pgrep -fc "^sleep 30[0-9]\\.$token")" -lt 3 ]; do sleep 0.05; done
  echo "left 3 behind"
  if [ "$(param hang)" = yes ]; then sleep 300; fi
fi
marker=$(param fail_while)
if [ -n "$marker" ] && [ -e "$marker" ]; then
  echo "cannot configure: $marker is there" >&2
  exit 7
fi
`;

let sandbox: Sandbox;
let home: string;
let work: string;

function buildPackage(dir: string): string {
  const pkg = join(dir, 'scripted-cnf');
  cpSync(join(BASIC, 'package'), pkg, { recursive: true });
  mkdirSync(join(pkg, 'Scripts'));
  writeFileSync(join(pkg, 'Scripts/record.sh'), RECORD_SH);
  const hash = createHash('sha256').update(RECORD_SH).digest('hex');
  appendFileSync(join(pkg, 'TOSCA-Metadata/TOSCA.meta'), `\nName: Scripts/record.sh\nContent-Type: text/x-shellscript\nAlgorithm: SHA-256\nHash: ${hash}\n`);
  const df = join(
    pkg,
    'Definitions',
    readdirSync(join(pkg, 'Definitions')).find((f) => f.includes('_df_'))!,
  );
  const text = readFileSync(df, 'utf8').replace(
    /    VNF:\n      type: vnfm.samples.BasicCnf\n/,
    [
      '    VNF:',
      '      type: vnfm.samples.BasicCnf',
      '      interfaces:',
      '        Vnflcm:',
      '          instantiate_end: {implementation: record}',
      '          terminate_end: {implementation: record}',
      '      artifacts:',
      '        record:',
      '          description: Records the operation it is given',
      '          type: tosca.artifacts.Implementation.Bash',
      '          file: ../Scripts/record.sh',
      '',
    ].join('\n'),
  );
  expect(text).toContain('implementation: record');
  writeFileSync(df, text);
  return pkg;
}

function request(extra: Record<string, unknown>): string {
  const base = JSON.parse(readFileSync(join(BASIC, 'requests/instantiate.json'), 'utf8')) as { additionalParams: Record<string, unknown> };
  Object.assign(base.additionalParams, extra);
  const file = join(work, `req-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(base));
  return file;
}

const run = (args: string[]) => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okWith((args) => run(args));
const json = <T = any>(s: string) => JSON.parse(s) as T;
const create = async (name: string) => json<{ id: string }>((await ok(['vnf-create', '--package', 'scripted-cnf', '--name', name, '-o', 'json'])).stdout).id;
const ops = async (vnf: string) => json<any[]>((await ok(['op-list', '--vnf', vnf, '-o', 'json', '--all-fields'])).stdout);

beforeAll(async () => {
  sandbox = await startSandbox({ host: '127.0.0.1', port: 0, controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  work = mkdtempSync(join(tmpdir(), 'vnfm-pkg-scripts-'));
  // The script, run as nobody when the tests run as root, writes what it records here.
  chmodSync(work, 0o1777);
  const vimConfig = join(work, 'vim-config.yaml');
  writeSandboxConfigs(sandbox, { vimConfigPath: vimConfig, kubeconfigPath: join(work, 'kubeconfig') });
  home = newHome();
  await ok(['vim-register', '--config-file', vimConfig, 'sandbox']);
  await ok(['vnfpkg-onboard', buildPackage(work), '--name', 'scripted-cnf']);
}, 60_000);

afterAll(async () => {
  await sandbox?.close();
});

describe('package scripts', () => {
  it('without --allow-package-scripts (and no terminal to ask on) the operation is refused before it starts', async () => {
    const vnf = await create('refused');
    const out = join(work, 'refused.json');
    const r = await run(['vnf-instantiate', vnf, '--request-file', request({ record_to: out })]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('package scripts were not allowed: hook instantiate_end runs Scripts/record.sh (artifact record)');
    expect(r.stderr).toContain('hint: review the script, then run again with --allow-package-scripts');
    expect(await ops(vnf)).toEqual([]);
    expect(existsSync(out)).toBe(false);
    expect(json((await ok(['vnf-show', vnf, '-o', 'json'])).stdout)).toMatchObject({ instantiationState: 'NOT_INSTANTIATED' });
  }, 60_000);

  it('with --allow-package-scripts the script gets the operation, the request and the instance with its VNFCs', async () => {
    const vnf = await create('allowed');
    const out = join(work, 'allowed.json');
    const r = await ok(['vnf-instantiate', vnf, '--request-file', request({ record_to: out }), '--allow-package-scripts', '--timeout', '60s']);
    expect(r.stderr).toContain('running package script Scripts/record.sh');
    const payload = json(readFileSync(out, 'utf8'));
    expect(payload).toMatchObject({
      operation: 'instantiate_end',
      lcmOperation: 'INSTANTIATE',
      request: { flavourId: 'simple', additionalParams: { record_to: out, namespace: 'default' } },
      vim: { name: 'sandbox', type: 'kubernetes' },
      vnf_instance_before: { id: vnf, instantiationState: 'NOT_INSTANTIATED' },
    });
    expect(Object.keys(payload.vim).sort()).toEqual(['id', 'name', 'type']);
    // As root, the script reads a copy of the package (removed when it ends); else the package itself.
    if (process.getuid?.() === 0) expect(payload.package_dir).toMatch(/\/vnfm-script-\w+\/package$/);
    else expect(payload.package_dir).toContain(home);
    const vnfcs = payload.vnf_instance.instantiatedVnfInfo.vnfcResourceInfo as { vduId: string }[];
    expect(vnfcs.map((v) => v.vduId).sort()).toEqual(['VDU1', 'VDU2']);

    const [op] = await ops(vnf);
    expect(op.operationState).toBe('COMPLETED');
    const log = (await ok(['op-log', op.id])).stdout;
    expect(log).toMatch(/^\S+ \[instantiate_end\] running Scripts\/record\.sh: \/bin\/bash /m);
    expect(log).toContain(`[instantiate_end] Scripts/record.sh: recorded instantiate_end of ${vnf} to ${out}`);
    expect(log).toContain('[instantiate_end] Scripts/record.sh: exited with code 0');

    // An operation without package scripts needs no consent, and logs nothing.
    await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect', '--timeout', '60s']);
    const scale = (await ops(vnf)).find((o) => o.operation === 'SCALE');
    const noLog = await ok(['op-log', scale.id]);
    expect(noLog.stdout).toBe('');
    expect(noLog.stderr).toContain(`occurrence ${scale.id} (SCALE COMPLETED) has no log`);

    // --yes answers the terminate question, not the package-script one.
    const refused = await run(['vnf-terminate', vnf, '--yes', '--timeout', '60s']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('package scripts were not allowed: hook terminate_end runs Scripts/record.sh (artifact record)');
    expect((await ops(vnf)).filter((o) => o.operation === 'TERMINATE')).toEqual([]);
    await ok(['vnf-terminate', vnf, '--yes', '--allow-package-scripts', '--timeout', '60s']);
    const terminate = (await ops(vnf)).find((o) => o.operation === 'TERMINATE');
    expect((await ok(['op-log', terminate.id])).stdout).toContain(`[terminate_end] Scripts/record.sh: recorded terminate_end of ${vnf} to nowhere`);
  }, 90_000);

  it('a failing script leaves FAILED_TEMP with its output; op-retry runs it again only with the flag', async () => {
    const vnf = await create('failing');
    const out = join(work, 'failing.json');
    const marker = join(work, 'not-ready');
    writeFileSync(marker, '');
    const r = await run(['vnf-instantiate', vnf, '--request-file', request({ record_to: out, fail_while: marker }), '--allow-package-scripts', '--timeout', '60s']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('hook instantiate_end: package script Scripts/record.sh (hook instantiate_end, artifact record) exited with code 7; its last output:');
    expect(r.stderr).toContain(`  cannot configure: ${marker} is there`);
    const [op] = await ops(vnf);
    expect(op.operationState).toBe('FAILED_TEMP');
    expect(op.error.detail).toContain('exited with code 7');
    const log = (await ok(['op-log', op.id.slice(0, 8)])).stdout;
    expect(log).toContain(`[instantiate_end] Scripts/record.sh [stderr]: cannot configure: ${marker} is there`);
    expect(log).toContain('[instantiate_end] Scripts/record.sh: exited with code 7');

    rmSync(marker);
    const refused = await run(['op-retry', op.id, '--timeout', '60s']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('package scripts were not allowed: hook instantiate_end runs Scripts/record.sh (artifact record)');
    expect((await ops(vnf))[0]).toMatchObject({ id: op.id, operationState: 'FAILED_TEMP' });

    await ok(['op-retry', op.id, '--allow-package-scripts', '--timeout', '60s']);
    expect((await ops(vnf))[0]).toMatchObject({ id: op.id, operationState: 'COMPLETED' });
    expect(json(readFileSync(out, 'utf8')).operation).toBe('instantiate_end');
    const after = (await ok(['op-log', op.id])).stdout;
    expect(after.match(/running Scripts\/record\.sh/g)).toHaveLength(2);
    expect(after).toContain('[instantiate_end] Scripts/record.sh: exited with code 0');
    await ok(['vnf-terminate', vnf, '--yes', '--allow-package-scripts', '--timeout', '60s']);
  }, 120_000);

  it('a script given consent cannot read the master key, the key file or the database (vnfm as root)', async () => {
    const vnf = await create('probed');
    const key = readFileSync(join(home, 'master.key'), 'utf8').split('\n')[0]!;
    expect(key).toMatch(/^[\w-]{43}=$/);
    // The directory above VNFM_HOME open to all, so that what keeps the script out is the namespace, not a 0700 parent.
    chmodSync(dirname(home), 0o755);
    // The key in vnfm's start-up environment, where /proc/<pid>/environ shows it.
    const r = await vnfm(['vnf-instantiate', vnf, '--request-file', request({ probe_home: home }), '--allow-package-scripts', '--timeout', '60s'], {
      home,
      env: { VNFM_MASTER_KEY: key },
    });
    const [op] = await ops(vnf);
    const log = (await ok(['op-log', op.id])).stdout;
    await ok(['vnf-terminate', vnf, '--yes', '--allow-package-scripts', '--timeout', '60s']);
    chmodSync(dirname(home), 0o700);
    expect(r.code, r.stderr).toBe(0);
    const probe = (what: string) => log.match(new RegExp(`Scripts/record\\.sh: probe ${what}: ?(.*)$`, 'm'))?.[1];
    expect(log).not.toContain(key);
    expect(log).not.toContain('SQLite format');
    expect(probe('own environ')).not.toMatch(/VNFM_MASTER_KEY|VNFM_HOME/);
    expect(probe('open in home')).toBe('0');
    if (process.getuid?.() === 0) {
      expect(log).toMatch(/running Scripts\/record\.sh: .* as nobody \(uid 65534\) in a private mount namespace hiding /);
      expect(log).toContain('Scripts/record.sh: probe uid=65534');
      expect(probe('parent environ')).toMatch(/Permission denied/);
      expect(probe('key file')).toMatch(/No such file or directory/);
      expect(probe('database')).toMatch(/No such file or directory/);
      expect(probe('home')).toBe('[]');
    }
  }, 90_000);

  it('on a terminal vnfm asks: "n" refuses (nothing recorded), "y" runs the script', async () => {
    const vnf = await create('asked');
    const out = join(work, 'asked.json');
    const req = request({ record_to: out });
    const no = await onTerminal(['vnf-instantiate', 'asked', '--request-file', req, '--timeout', '60s'], home, 'n', work);
    // The question as shown, without colours and the terminal's line wrapping.
    const text = no.screen.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r?\n/g, '');
    expect(text).toContain('Run package script Scripts/record.sh (hook instantiate_end, artifact record) for vnf instance asked? (y/N)');
    expect(no.code).toBe(2);
    expect(await ops(vnf)).toEqual([]);

    const yes = await onTerminal(['vnf-instantiate', 'asked', '--request-file', req, '--timeout', '60s'], home, 'y', work);
    expect(yes.code).toBe(0);
    expect(json(readFileSync(out, 'utf8')).vnf_instance.id).toBe(vnf);
    expect((await ops(vnf))[0].operationState).toBe('COMPLETED');
  }, 90_000);

  it('a VNFM_SCRIPT_USER that does not exist is refused before the operation starts (exit 2)', async () => {
    const vnf = await create('no-user');
    const r = await vnfm(['vnf-instantiate', vnf, '--request-file', request({}), '--allow-package-scripts'], {
      home,
      env: { VNFM_MASTER_KEY: undefined, VNFM_SCRIPT_USER: 'no-such-user-vnfm' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(process.getuid?.() === 0 ? 'VNFM_SCRIPT_USER=no-such-user-vnfm: no such user' : 'VNFM_SCRIPT_USER=no-such-user-vnfm');
    expect(await ops(vnf)).toEqual([]);
  });

  it('op-log of an unknown occurrence is exit 3', async () => {
    const unknown = await run(['op-log', '00000000-0000-0000-0000-000000000000']);
    expect(unknown.code).toBe(3);
    expect(unknown.stdout).toBe('');
  });
});

/** The leftovers of a run: `sleep 30N.<token>` processes running (a zombie has ended). */
function leftovers(token: string): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        const cmd = readFileSync(`/proc/${n}/cmdline`, 'utf8');
        const stat = readFileSync(`/proc/${n}/stat`, 'utf8');
        return /^sleep\x0030\d\./.test(cmd) && cmd.endsWith(`.${token}\x00`) && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Waits (at most `ms`) until `cond` holds; returns whether it does. */
async function until(cond: () => boolean, ms = 20_000): Promise<boolean> {
  for (let waited = 0; !cond() && waited < ms; waited += 50) await new Promise((r) => setTimeout(r, 50));
  return cond();
}

/** A namespace of its own for each instance these tests leave behind (instantiated, or FAILED_TEMP). */
async function namespace(name: string): Promise<string> {
  const r = await kubeRequest({ server: sandbox.url, token: sandbox.token, caPem: sandbox.caPem }, 'POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name },
  });
  expect(r.status).toBe(201);
  return name;
}

let tokens = 0;
const newToken = () => `${process.pid}${++tokens}`;

/** vnfm started in the background (as `uid` when given), to be signalled. */
function startVnfm(args: string[], opts: { home: string; env?: Record<string, string | undefined>; uid?: number }) {
  const node = [process.execPath, BIN, ...args];
  const [command, ...argv] = opts.uid === undefined ? node : ['setpriv', `--reuid=${opts.uid}`, `--regid=${opts.uid}`, '--clear-groups', '--', ...node];
  const child = spawn(command!, argv, {
    cwd: dirname(opts.home),
    env: { PATH: process.env['PATH'], HOME: dirname(opts.home), VNFM_HOME: opts.home, VNFM_MASTER_KEY: undefined, ...opts.env } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; stdout: string }>((done) =>
    child.on('close', (code, signal) => done({ code, signal, stderr, stdout })),
  );
  return { child, exited };
}

/**
 * Stops vnfm with `sig` while its script runs with three processes left
 * behind, and returns how vnfm ended and what of them is left once it has
 * (at once for the signals vnfm handles; after a moment for those it dies
 * of, whose clean-up is the kernel's or a supervisor's).
 */
async function stopWhileScriptRuns(vnf: string, sig: NodeJS.Signals, opts: { home: string; env?: Record<string, string | undefined>; uid?: number }) {
  const token = newToken();
  const bg = startVnfm(
    [
      'vnf-instantiate',
      vnf,
      '--request-file',
      request({ namespace: await namespace(`p-${token}`), leave_token: token, hang: 'yes' }),
      '--allow-package-scripts',
      '--timeout',
      '120s',
    ],
    opts,
  );
  const seen = await until(() => leftovers(token).length === 3, 60_000);
  bg.child.kill(sig);
  const ended = await bg.exited;
  const atExit = leftovers(token);
  await until(() => leftovers(token).length === 0);
  return { seen, ended, atExit, after: leftovers(token) };
}

describe('what a package script starts ends with it, through the program (processes left: 0)', () => {
  it('after the hook, after a failing hook, and at --timeout', async () => {
    const done = newToken();
    const vnf = await create('leaves-ok');
    await ok(['vnf-instantiate', vnf, '--request-file', request({ namespace: await namespace(`p-${done}`), leave_token: done }), '--allow-package-scripts', '--timeout', '60s']);
    expect(leftovers(done)).toEqual([]);
    const [op] = await ops(vnf);
    const log = (await ok(['op-log', op.id])).stdout;
    expect(log).toContain('[instantiate_end] Scripts/record.sh: left 3 behind');
    if (process.getuid?.() === 0) expect(log).toContain('in a PID namespace of its own: what it starts ends with it');

    const failed = newToken();
    const marker = join(work, 'leaves-not-ready');
    writeFileSync(marker, '');
    const bad = await run([
      'vnf-instantiate',
      await create('leaves-fail'),
      '--request-file',
      request({ namespace: await namespace(`p-${failed}`), leave_token: failed, fail_while: marker }),
      '--allow-package-scripts',
      '--timeout',
      '60s',
    ]);
    expect(bad.code, bad.stderr).toBe(1);
    expect(bad.stderr).toContain('exited with code 7');
    expect(leftovers(failed)).toEqual([]);

    const hung = newToken();
    const late = await run([
      'vnf-instantiate',
      await create('leaves-hang'),
      '--request-file',
      request({ namespace: await namespace(`p-${hung}`), leave_token: hung, hang: 'yes' }),
      '--allow-package-scripts',
      '--timeout',
      '8s',
    ]);
    expect(late.code, late.stderr).toBe(124);
    expect(late.stderr).toContain('was stopped: timed out after 8s');
    expect(leftovers(hung)).toEqual([]);
  }, 120_000);

  it('when vnfm is stopped while the script runs: Ctrl-C, SIGTERM, SIGHUP, even SIGKILL', async () => {
    for (const [sig, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
      ['SIGHUP', null],
      ['SIGKILL', null],
    ] as const) {
      const r = await stopWhileScriptRuns(await create(`leaves-${sig.toLowerCase()}`), sig, { home });
      expect(r.seen, sig).toBe(true);
      if (code !== null) {
        expect(r.ended.code, `${sig}: ${r.ended.stderr}`).toBe(code);
        // The hook ended the script before vnfm ended.
        expect(r.atExit, sig).toEqual([]);
      } else expect(r.ended.signal).toBe(sig);
      expect(r.after, sig).toEqual([]);
    }
  }, 240_000);

  it('without util-linux or Perl on the PATH (processes tracked in /proc): after the hook, at SIGTERM and SIGHUP', async () => {
    // A PATH with what the script uses and nothing that makes a namespace or a supervisor.
    const bin = join(work, 'bare-bin');
    mkdirSync(bin, { recursive: true });
    for (const tool of ['bash', 'sh', 'cat', 'sed', 'sleep', 'setsid', 'nohup', 'pgrep', 'wc']) {
      const at = ['/usr/bin', '/bin'].map((d) => join(d, tool)).find((f) => existsSync(f))!;
      if (!existsSync(join(bin, tool))) symlinkSync(at, join(bin, tool));
    }
    const env = { VNFM_MASTER_KEY: undefined, PATH: bin };
    const token = newToken();
    const vnf = await create('tracked-ok');
    const r = await vnfm(
      ['vnf-instantiate', vnf, '--request-file', request({ namespace: await namespace(`p-${token}`), leave_token: token }), '--allow-package-scripts', '--timeout', '60s'],
      { home, env },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(leftovers(token)).toEqual([]);
    const log = (await ok(['op-log', (await ops(vnf))[0].id])).stdout;
    expect(log).toContain('what it starts followed in /proc and stopped with it');
    expect(log).toContain('[instantiate_end] Scripts/record.sh: stopped 3 processes it left running');
    for (const [sig, code] of [
      ['SIGTERM', 143],
      ['SIGHUP', null],
    ] as const) {
      const stopped = await stopWhileScriptRuns(await create(`tracked-${sig.toLowerCase()}`), sig, { home, env });
      expect(stopped.seen, sig).toBe(true);
      if (code !== null) expect(stopped.ended.code, stopped.ended.stderr).toBe(code);
      else expect(stopped.ended.signal).toBe(sig);
      // vnfm stops them itself, before it ends.
      expect(stopped.atExit, sig).toEqual([]);
    }
  }, 180_000);

  it('with Perl but no util-linux on the PATH (the subreaper supervisor): after the hook, and when vnfm is killed by SIGKILL', async () => {
    const bin = join(work, 'perl-bin');
    mkdirSync(bin, { recursive: true });
    for (const tool of ['bash', 'sh', 'cat', 'sed', 'sleep', 'setsid', 'nohup', 'pgrep', 'wc', 'perl']) {
      const at = ['/usr/bin', '/bin'].map((d) => join(d, tool)).find((f) => existsSync(f))!;
      if (!existsSync(join(bin, tool))) symlinkSync(at, join(bin, tool));
    }
    const env = { VNFM_MASTER_KEY: undefined, PATH: bin };
    const token = newToken();
    const vnf = await create('subreaper-ok');
    const r = await vnfm(
      ['vnf-instantiate', vnf, '--request-file', request({ namespace: await namespace(`p-${token}`), leave_token: token }), '--allow-package-scripts', '--timeout', '60s'],
      { home, env },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(leftovers(token)).toEqual([]);
    expect((await ok(['op-log', (await ops(vnf))[0].id])).stdout).toContain('what it starts stopped with it by a supervisor (no PID namespace on this host)');
    // The supervisor outlives vnfm just long enough to kill what the script started.
    const killed = await stopWhileScriptRuns(await create('subreaper-sigkill'), 'SIGKILL', { home, env });
    expect(killed.seen).toBe(true);
    expect(killed.ended.signal).toBe('SIGKILL');
    expect(killed.after).toEqual([]);
  }, 120_000);

  const root = process.getuid?.() === 0;
  it.skipIf(!root)(
    `vnfm run by an unprivileged user (nobody): a PID namespace in a user namespace${root ? '' : ' (skipped: needs root to start vnfm as nobody; run as non-root, the cases above are that path)'}`,
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'vnfm-nobody-'));
      chownSync(dir, 65534, 65534);
      const nobodyHome = join(dir, 'home');
      const vimConfig = join(dir, 'vim-config.yaml');
      cpSync(join(work, 'vim-config.yaml'), vimConfig);
      chownSync(vimConfig, 65534, 65534);
      const asNobody = async (args: string[]) => {
        const bg = startVnfm(args, { home: nobodyHome, uid: 65534 });
        const ended = await bg.exited;
        if (ended.code !== 0) throw new Error(`vnfm ${args.join(' ')} as nobody exited ${ended.code}\n${ended.stderr}`);
        return ended.stdout;
      };
      await asNobody(['vim-register', '--config-file', vimConfig, 'sandbox']);
      await asNobody(['vnfpkg-onboard', join(work, 'scripted-cnf'), '--name', 'scripted-cnf']);
      await asNobody(['vnf-create', '--package', 'scripted-cnf', '--name', 'nobody-ok']);
      const token = newToken();
      await asNobody([
        'vnf-instantiate',
        'nobody-ok',
        '--request-file',
        request({ namespace: await namespace(`p-${token}`), leave_token: token }),
        '--allow-package-scripts',
        '--timeout',
        '60s',
      ]);
      expect(leftovers(token)).toEqual([]);
      const [op] = json<{ id: string }[]>(await asNobody(['op-list', '--vnf', 'nobody-ok', '-o', 'json']));
      const log = await asNobody(['op-log', op!.id]);
      expect(log).toContain("as vnfm's own user, in a PID namespace of its own (in a user namespace): what it starts ends with it");
      expect(log).toContain('[instantiate_end] Scripts/record.sh: left 3 behind');
      await asNobody(['vnf-create', '--package', 'scripted-cnf', '--name', 'nobody-killed']);
      const killed = await stopWhileScriptRuns('nobody-killed', 'SIGKILL', { home: nobodyHome, uid: 65534 });
      expect(killed.seen).toBe(true);
      expect(killed.ended.signal).toBe('SIGKILL');
      expect(killed.after).toEqual([]);
    },
    180_000,
  );
});
