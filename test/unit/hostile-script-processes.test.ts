/**
 * The hostile corpus, processes: a consented package script that leaves
 * processes behind — `nohup sleep &`, `setsid sleep &`, a double fork into a
 * session of its own, a child that ignores SIGTERM — has none of them left
 * once its hook is over: when it exits 0, when it fails, and when the hook
 * times out. Each way vnfm contains them is run here, as root (nobody, in
 * the namespaces) and as an unprivileged user (the script's user making a
 * user namespace, the Perl subreaper, /proc tracking); the closing test
 * counts what is left over all of them: 0.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VnfmError } from '../../src/errors.js';
import type { VimConnection, VnfInstance } from '../../src/lcm/index.js';
import { resolveScriptIsolation, runPackageScript, type HookContext, type ScriptIsolation, type SealedValue } from '../../src/mgmt/index.js';
import { PRCTL_SYSCALL } from '../../src/mgmt/script-processes.js';

const open = async (v: SealedValue) => v.sealed;
const root = process.getuid?.() === 0;
const NOBODY = { name: 'nobody', uid: 65534, gid: 65534 };

const instance: VnfInstance = {
  id: 'inst-1',
  vnfInstanceDescription: '',
  vnfdId: 'd',
  vnfPkgId: 'p',
  vnfProvider: '',
  vnfProductName: '',
  vnfSoftwareVersion: '',
  vnfdVersion: '',
  instantiationState: 'NOT_INSTANTIATED',
  vimId: 'vim-id',
  createdAt: '',
  updatedAt: '',
};
const vim: VimConnection = {
  id: 'vim-id',
  name: 'edge',
  inline: false,
  spec: { type: 'kubernetes', authUrl: 'https://127.0.0.1:6443', auth: { method: 'bearer-token' }, verifyTls: true },
  secrets: {},
};

/**
 * Starts the kinds of leftover — `nohup`, `setsid`, a double fork into a
 * session of its own, a child deaf to SIGTERM and, unless the request says
 * `scrubbed: no`, a double fork that also clears its environment — each a
 * `sleep` marked with the run's token and writing its pid (as the script
 * sees it) to the file the request names; once all have, says `started`
 * and waits for the test's `go` file; then ends as the request says:
 * `exit N`, or `hang` (sleeps until stopped).
 */
const LEAVE = `#!/bin/bash
payload=$(cat)
param() { printf '%s' "$payload" | sed -n "s/.*\\"$1\\":\\"\\([^\\"]*\\)\\".*/\\1/p"; }
pids=$(param pids)
t=$(param token)
nohup sleep 300.$t >/dev/null 2>&1 &
echo $! >> "$pids"
setsid sleep 301.$t &
echo $! >> "$pids"
( setsid sh -c 'sleep "$2" >/dev/null 2>&1 & echo $! >> "$1"' sh "$pids" 302.$t & )
sh -c 'trap "" TERM HUP INT; exec sleep "$1"' sh 303.$t >/dev/null 2>&1 &
echo $! >> "$pids"
n=4
if [ "$(param scrubbed)" != no ]; then
  ( env -i /usr/bin/setsid /bin/sh -c '/bin/sleep "$2" </dev/null >/dev/null 2>&1 & echo $! >> "$1"' sh "$pids" 304.$t & )
  n=5
fi
while [ "$(wc -l < "$pids")" -lt $n ]; do sleep 0.02; done
# Each has become its sleep (the test finds them by their command line).
for p in $(cat "$pids"); do while ! grep -q "$t" "/proc/$p/cmdline" 2>/dev/null; do sleep 0.02; done; done
echo started
while [ ! -e "$pids.go" ]; do sleep 0.02; done
case "$(param end)" in
  hang) sleep 300 ;;
  *) exit "$(param end)" ;;
esac
`;

const work = mkdtempSync(join(tmpdir(), 'vnfm-leftovers-'));
// The script, run as nobody, writes its pids here.
chmodSync(work, 0o1777);
const pkgDir = join(work, 'package');
mkdirSync(join(pkgDir, 'Scripts'), { recursive: true });
writeFileSync(join(pkgDir, 'Scripts', 'leave.sh'), LEAVE);

/** Every leftover a run started (pids as this process sees them), to count what is left at the end of the file. */
const started: number[] = [];
/** Every run's token. */
const tokens: string[] = [];

function ctx(signal: AbortSignal, request: unknown, log: (l: string) => void): HookContext {
  return {
    hook: 'instantiate_end',
    vnfInstanceId: 'inst-1',
    operation: 'INSTANTIATE',
    request,
    implementation: { implementation: 'configure', artifactFile: 'Scripts/leave.sh' },
    packageDir: pkgDir,
    signal,
    report: () => {},
    log,
    vim,
    instance,
    acceptHostKeys: [],
    allowPackageScripts: true,
  };
}

/**
 * Runs the script under `iso` and ends it as `end` says. While the four
 * leftovers run, finds them by their token in /proc and maps the pids the
 * script wrote (its own PID namespace's, where it has one) to this
 * process's (the last and first NSpid). Returns those pids, how the hook
 * ended, and the log.
 */
async function leave(iso: ScriptIsolation, end: 'ok' | 'fail' | 'timeout', scrubbed = true): Promise<{ pids: number[]; outcome: unknown; logs: string[]; token: string }> {
  const token = String(100000 + Math.floor(Math.random() * 899999));
  tokens.push(token);
  const pidsFile = join(mkdtempSync(join(work, 'run-')), 'pids');
  writeFileSync(pidsFile, '');
  chmodSync(pidsFile, 0o666);
  chmodSync(join(pidsFile, '..'), 0o777);
  const controller = new AbortController();
  const logs: string[] = [];
  let pids: number[] = [];
  const request = { additionalParams: { pids: pidsFile, token, scrubbed: scrubbed ? 'yes' : 'no', end: { ok: '0', fail: '3', timeout: 'hang' }[end] } };
  const c = ctx(controller.signal, request, (l) => {
    logs.push(l);
    if (!l.endsWith(': started')) return;
    const written = readFileSync(pidsFile, 'utf8').split('\n').filter(Boolean).map(Number);
    const marked = withToken(token);
    pids = written.map((inner) => marked.find((m) => m.inner === inner)?.pid ?? -inner);
    started.push(...pids.filter((p) => p > 0));
    if (end === 'timeout') controller.abort(new Error('timed out after 40s'));
    else writeFileSync(`${pidsFile}.go`, '');
  });
  const outcome = await runPackageScript(c, c.implementation!, { open, env: { PATH: process.env['PATH'] }, isolation: iso, killGraceMs: 300 }).catch((e: unknown) => e);
  return { pids, outcome, logs, token };
}

/** The processes whose command line carries `token`: their pid here, and in the innermost PID namespace (NSpid). */
function withToken(token: string): { pid: number; inner: number }[] {
  const out: { pid: number; inner: number }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(`.${token}`)) continue;
      const nspid = /^NSpid:\s+(.*)$/m
        .exec(readFileSync(`/proc/${name}/status`, 'utf8'))?.[1]
        ?.trim()
        .split(/\s+/)
        .map(Number) ?? [Number(name)];
      if (leftOf([Number(name)]).length) out.push({ pid: Number(name), inner: nspid.at(-1)! });
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/**
 * The pids still running: /proc/<pid> there and not a zombie, or a zombie
 * whose parent is this process (one of ours, never reaped).
 */
function leftOf(pids: readonly number[]): number[] {
  return pids.filter((pid) => {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return false;
    }
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return state !== 'Z' || Number(ppid) === process.pid;
  });
}

function expectEnded(run: { outcome: unknown }, end: 'ok' | 'fail' | 'timeout'): void {
  if (end === 'ok') expect(run.outcome).toEqual({});
  else expect(run.outcome).toBeInstanceOf(VnfmError);
  if (end === 'fail') expect((run.outcome as Error).message).toContain('exited with code 3');
  if (end === 'timeout') expect((run.outcome as Error).message).toContain('was stopped: timed out after 40s');
}

/** The leftovers were seen running, by the pids the script wrote; none of them, nor anything with the run's token, runs now. */
function expectNoneLeft(run: { pids: number[]; token: string }, kinds = 5): void {
  expect(run.pids).toHaveLength(kinds);
  expect(run.pids.every((p) => p > 0)).toBe(true);
  expect(leftOf(run.pids)).toEqual([]);
  expect(withToken(run.token)).toEqual([]);
}

const ENDS = ['ok', 'fail', 'timeout'] as const;

afterAll(() => {
  // Whatever a failing case left is not left for the next file.
  for (const pid of leftOf(started)) spawnSync('kill', ['-9', String(pid)]);
});

describe('what a package script starts does not outlive its hook', () => {
  const resolved = resolveScriptIsolation({ uid: process.getuid?.(), hide: [join(work, 'hidden')], path: process.env['PATH'] });

  it('vnfm picks a PID namespace where the host allows one (as root: with the mount namespace)', () => {
    expect(resolved.processes).toMatchObject({ kind: 'pid-namespace', userNamespace: !root });
    if (root) expect(resolved).toMatchObject({ kind: 'other-user', user: { name: 'nobody' }, namespace: {} });
  });

  for (const end of ENDS) {
    it(`as vnfm runs them by default (${root ? 'root: nobody, mount and PID namespaces' : 'its own user, user and PID namespaces'}): none left after ${end}`, async () => {
      const run = await leave(resolved, end);
      expectEnded(run, end);
      expectNoneLeft(run);
      expect(run.logs[0]).toContain('in a PID namespace of its own');
    });
  }

  describe('as an unprivileged user (the script run as nobody by vnfm as root, as vnfm run by nobody would run it)', () => {
    // Run by a non-root user, these are skipped and say why in their names: the cases above are then the unprivileged path.
    const skipped = root ? '' : ' (skipped: starting the script as nobody needs root)';
    const base = { kind: 'other-user', user: NOBODY, hide: [] } as const;
    const userNs = () => resolveScriptIsolation({ uid: 0, hide: [], path: '/usr/bin:/bin' });

    it.skipIf(!root)(`the user namespace nobody makes: a PID namespace without any privilege${skipped}`, async () => {
      const unshare = userNs().processes as { unshare: string; setpriv: string };
      const iso: ScriptIsolation = { ...base, processes: { kind: 'pid-namespace', unshare: unshare.unshare, setpriv: unshare.setpriv, userNamespace: true } };
      for (const end of ENDS) {
        const run = await leave(iso, end);
        expectEnded(run, end);
        expectNoneLeft(run);
      }
    });

    it.skipIf(!root)(`the Perl supervisor (no namespace on the host): a child subreaper kills even the double fork${skipped}`, async () => {
      const prctl = PRCTL_SYSCALL[process.arch];
      expect(prctl, `no prctl number for ${process.arch}`).toBeDefined();
      const iso: ScriptIsolation = { ...base, processes: { kind: 'subreaper', perl: '/usr/bin/perl', prctl: prctl! } };
      for (const end of ENDS) {
        const run = await leave(iso, end);
        expectEnded(run, end);
        expectNoneLeft(run);
        expect(run.logs[0]).toContain('stopped with it by a supervisor');
        if (end === 'fail') expect(run.logs).toContain('Scripts/leave.sh: exited with code 3');
      }
    });

    it.skipIf(!root)(`/proc tracking (neither): by session, process group, parent and inherited environment${skipped}`, async () => {
      for (const end of ENDS) {
        // The documented limit: a double fork that also clears its environment escapes tracking, so that kind is left out here.
        const run = await leave(base, end, false);
        expectEnded(run, end);
        expectNoneLeft(run, 4);
        if (end !== 'timeout') expect(run.logs).toContain('Scripts/leave.sh: stopped 4 processes it left running');
      }
    });
  });

  it("the same as vnfm's own user, without a namespace: the supervisor and /proc tracking", async () => {
    const prctl = PRCTL_SYSCALL[process.arch]!;
    for (const iso of [{ kind: 'same-user', processes: { kind: 'subreaper', perl: '/usr/bin/perl', prctl } }, { kind: 'same-user' }] as ScriptIsolation[]) {
      for (const end of ENDS) {
        const run = await leave(iso, end, Boolean(iso.processes));
        expectEnded(run, end);
        expectNoneLeft(run, iso.processes ? 5 : 4);
      }
    }
  });

  it('processes left: 0, over every case of this file', () => {
    // 3 ends each: as root 4 ways with 5 kinds and 2 tracked with 4; not root 2 ways with 5 and 1 with 4.
    expect(started).toHaveLength(3 * (root ? 4 * 5 + 2 * 4 : 2 * 5 + 4));
    expect(leftOf(started)).toEqual([]);
    expect(tokens.flatMap(withToken)).toEqual([]);
  });
});
