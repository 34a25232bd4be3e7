/**
 * Instance locks and who holds them: a lock names its holder by host, boot,
 * pid and process start time, so a reused pid, a restarted host and a holder
 * on another host are told apart; op-fail --force releases a lock whose
 * holder is gone, and refuses while it runs. Real store, real processes.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { onboardPackage } from '../../src/csar/index.js';
import { ConflictError } from '../../src/errors.js';
import {
  createVnf,
  failOpOcc,
  failTarget,
  getOpOcc,
  healVnf,
  holderOf,
  holderStatus,
  instantiateVnf,
  listOpOccs,
  thisHost,
  type LcmDeps,
  type LcmOpOcc,
} from '../../src/lcm/index.js';
import { openStore, type Store, type VnfLock } from '../../src/store/index.js';
import { FakeInfraDriver } from '../support/fake-infra-driver.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');
const V1 = '1191aa45-a57a-4232-8201-6a7a66d41e38';
const SINCE = '2026-03-01T10:00:00.000Z';

let home: string;
let store: Store;
let deps: LcmDeps;
let sleeper: ChildProcess;

beforeEach(async () => {
  home = join(mkdtempSync(join(tmpdir(), 'vnfm-locks-')), 'home');
  store = openStore(home);
  await onboardPackage({ packages: store.packages, home, now: () => new Date() }, { path: join(SAMPLE, 'package') });
  await store.vims.insert(
    {
      id: 'vim-k8s',
      name: 'k8s',
      description: '',
      isDefault: true,
      spec: { type: 'kubernetes', authUrl: 'https://127.0.0.1:6443', projectName: 'vnf-ns', auth: { method: 'bearer-token' }, verifyTls: false },
      secretNames: [],
      status: 'REACHABLE',
      createdAt: SINCE,
      updatedAt: SINCE,
    },
    undefined,
  );
  const driver = new FakeInfraDriver();
  deps = { store, home, now: () => new Date(), openVimSecrets: async () => ({ bearerToken: 'token' }), kubernetesDriver: () => driver };
  // A live process that is not vnfm: its pid stands for a pid reused since a lock was taken.
  sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });
  await new Promise((ok) => sleeper.once('spawn', ok));
});

afterEach(async () => {
  sleeper.kill('SIGKILL');
  await store.close();
});

/** A pid that belonged to a process which has exited. */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;

/** An instance with an INSTANTIATE occurrence left PROCESSING under a lock held by `holder`. */
async function lockedInstance(holder: Omit<VnfLock, 'vnfInstanceId' | 'opId' | 'acquiredAt'>): Promise<LcmOpOcc> {
  const vnf = await createVnf(deps, { vnfdId: V1, name: 'web' });
  const op: LcmOpOcc = {
    id: 'a1b2c3d4-0000-4000-8000-000000000001',
    vnfInstanceId: vnf.id,
    operation: 'INSTANTIATE',
    operationState: 'PROCESSING',
    stateEnteredTime: SINCE,
    startTime: SINCE,
    operationParams: { flavourId: 'simple' },
    journal: [],
    isAutomaticInvocation: false,
    pid: holder.pid,
  };
  await store.opOccs.exclusive(async () => {
    await store.opOccs.insert(op, { vnfPkgId: vnf.vnfPkgId, vnfdId: vnf.vnfdId, instantiationState: 'NOT_INSTANTIATED' });
    await store.opOccs.takeLock({ vnfInstanceId: vnf.id, opId: op.id, acquiredAt: SINCE, ...holder });
  });
  return op;
}

const request = () => JSON.parse(readFileSync(join(SAMPLE, 'requests', 'instantiate.json'), 'utf8')) as Record<string, unknown>;

describe('lock holders', () => {
  it('records host, boot, pid and start time of the process that takes the lock', async () => {
    const driver = new FakeInfraDriver().hang('deploy');
    const entered = driver.entering('deploy');
    const ac = new AbortController();
    const vnf = await createVnf(deps, { vnfdId: V1 });
    const running = instantiateVnf({ ...deps, kubernetesDriver: () => driver }, vnf.id, request(), { signal: ac.signal }).catch((e: unknown) => e);
    await entered;
    const lock = (await store.opOccs.lock(vnf.id))!;
    expect(lock).toMatchObject({
      pid: process.pid,
      hostName: thisHost().hostName,
      hostId: thisHost().hostId,
      bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
    });
    const stat = readFileSync(`/proc/${process.pid}/stat`, 'utf8');
    expect(lock.startTime).toBe(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    expect(holderStatus(lock).state).toBe('running');
    ac.abort();
    await running;
  });

  it('a live pid that is another process (pid reused) is a stale lock: the occurrence becomes FAILED_TEMP and the instance is free', async () => {
    const real = holderOf(sleeper.pid!);
    expect(real.startTime).toMatch(/^\d+$/);
    const op = await lockedInstance({ ...real, startTime: String(Number(real.startTime) - 1) });
    const swept = await getOpOcc(deps, op.id);
    expect(swept).toMatchObject({ operationState: 'FAILED_TEMP', error: { title: 'vnfm process died' } });
    expect(swept.error!.detail).toContain(`pid ${sleeper.pid} is now another process`);
    expect(await store.opOccs.lock(op.vnfInstanceId)).toBeUndefined();
    expect((await failOpOcc(deps, op.id)).operationState).toBe('FAILED');
  });

  it('a lock held by "pid 1" (always alive here) that started at another time is stale', async () => {
    const init = holderOf(1);
    const op = await lockedInstance({ ...init, startTime: String(Number(init.startTime ?? 0) + 12345) });
    expect((await listOpOccs(deps))[0]).toMatchObject({ id: op.id, operationState: 'FAILED_TEMP' });
  });

  it('a lock from another boot of this host is stale, even when its pid and start time match a live process', async () => {
    const op = await lockedInstance({ ...holderOf(sleeper.pid!), bootId: '00000000-0000-4000-8000-000000000000' });
    const swept = await getOpOcc(deps, op.id);
    expect(swept.operationState).toBe('FAILED_TEMP');
    expect(swept.error!.detail).toMatch(/the host has been restarted since/);
  });

  it('a lock from another host is not stale, even with a pid dead here; the refusal names the host, pid, time and operation', async () => {
    const op = await lockedInstance({ pid: deadPid(), hostName: 'far-away', hostId: 'another-machine pid:[1]', bootId: 'b', startTime: '42' });
    expect((await getOpOcc(deps, op.id)).operationState).toBe('PROCESSING');
    const err = await healVnf(deps, op.vnfInstanceId, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as Error).message).toBe(
      `vnf instance ${op.vnfInstanceId} is locked by vnfm pid ${op.pid} on host far-away since ${SINCE} (operation INSTANTIATE, occurrence ${op.id})`,
    );
    expect((err as ConflictError).hint).toContain(`vnfm op-fail --force ${op.id}`);
    expect(await store.opOccs.lock(op.vnfInstanceId)).toMatchObject({ opId: op.id, pid: op.pid });
  });

  it('a lock from another container on this host (same boot, another pid namespace) is not stale', async () => {
    const here = holderOf(sleeper.pid!);
    const op = await lockedInstance({ ...here, pid: 1, hostId: `${here.hostId!.split(' ')[0]} pid:[4026530000]`, startTime: '1' });
    expect((await getOpOcc(deps, op.id)).operationState).toBe('PROCESSING');
  });

  it('a lock held by a live process with the recorded start time holds', async () => {
    const op = await lockedInstance(holderOf(sleeper.pid!));
    expect((await getOpOcc(deps, op.id)).operationState).toBe('PROCESSING');
    await expect(healVnf(deps, op.vnfInstanceId, {})).rejects.toThrow(new RegExp(`locked by vnfm pid ${sleeper.pid} on host ${thisHost().hostName} since`));
  });
});

describe('locks taken before holders were recorded (pid alone)', () => {
  it('a dead pid is stale; a live one holds, and op-fail --force may release it since it cannot be verified', async () => {
    const gone = await lockedInstance({ pid: deadPid() });
    expect((await getOpOcc(deps, gone.id)).operationState).toBe('FAILED_TEMP');
    expect((await failOpOcc(deps, gone.id)).operationState).toBe('FAILED');
    await store.db.prepare('DELETE FROM vnf_instances').run();

    const live = await lockedInstance({ pid: sleeper.pid! });
    expect((await getOpOcc(deps, live.id)).operationState).toBe('PROCESSING');
    await expect(failOpOcc(deps, live.id)).rejects.toThrow(/locked by vnfm pid \d+ on host \(not recorded\) since/);
    expect((await failOpOcc(deps, live.id, { force: true })).operationState).toBe('FAILED');
    expect(await store.opOccs.lock(live.vnfInstanceId)).toBeUndefined();
  });
});

describe('op-fail --force', () => {
  it('without --force a PROCESSING occurrence is refused, with the way out in the hint', async () => {
    const op = await lockedInstance({ pid: deadPid(), hostName: 'far-away', hostId: 'another-machine', startTime: '1' });
    const err = await failOpOcc(deps, op.id).then(
      () => undefined,
      (e: unknown) => e as ConflictError,
    );
    expect(err).toBeInstanceOf(ConflictError);
    expect(err!.message).toMatch(/is PROCESSING: only a FAILED_TEMP occurrence can be failed; vnf instance .* is locked by vnfm pid \d+ on host far-away/);
    expect(err!.hint).toContain(`vnfm op-fail --force ${op.id}`);
  });

  it('gives up on a PROCESSING occurrence whose holder is gone (pid reused): FAILED, lock released', async () => {
    const real = holderOf(sleeper.pid!);
    const op = await lockedInstance({ ...real, startTime: `${real.startTime}0` });
    expect((await failOpOcc(deps, op.id, { force: true })).operationState).toBe('FAILED');
    expect(await store.opOccs.lock(op.vnfInstanceId)).toBeUndefined();
  });

  it('gives up on one held on another host: FAILED, the error names the holder, the instance is free', async () => {
    const op = await lockedInstance({ pid: 7, hostName: 'far-away', hostId: 'another-machine', bootId: 'b', startTime: '42' });
    const failed = await failOpOcc(deps, op.id, { force: true });
    expect(failed).toMatchObject({ operationState: 'FAILED', error: { title: 'Failed by the operator' } });
    expect(failed.error!.detail).toBe(`op-fail --force while PROCESSING, run by vnfm pid 7 on host far-away since ${SINCE}; the instance may be partly changed`);
    expect(await store.opOccs.lock(op.vnfInstanceId)).toBeUndefined();
    expect((await instantiateVnf(deps, op.vnfInstanceId, request())).opOcc.operationState).toBe('COMPLETED');
  });

  it('refuses when the lock changed hands after the operator confirmed it', async () => {
    const op = await lockedInstance({ pid: 7, hostName: 'far-away', hostId: 'another-machine', startTime: '42' });
    const seen = (await failTarget(deps, op.id, { force: true })).lock!;
    await store.db.prepare("UPDATE vnf_locks SET pid = 8, acquired_at = '2026-03-02T00:00:00.000Z'").run();
    await expect(failOpOcc(deps, op.id, { force: true, confirmed: seen })).rejects.toThrow(
      /changed hands while you were asked: .* locked by vnfm pid 8 on host far-away since 2026-03-02/,
    );
    expect((await store.opOccs.lock(op.vnfInstanceId))!.pid).toBe(8);
    expect((await failOpOcc(deps, op.id, { force: true, confirmed: (await store.opOccs.lock(op.vnfInstanceId))! })).operationState).toBe('FAILED');
  });

  it('refuses while the holder runs on this host, naming it', async () => {
    const op = await lockedInstance(holderOf(sleeper.pid!));
    await expect(failOpOcc(deps, op.id, { force: true })).rejects.toThrow(
      new RegExp(`refusing to force occurrence ${op.id} to FAILED: vnf instance .* is locked by vnfm pid ${sleeper.pid} on host .*, and that process is running`),
    );
    expect((await getOpOcc(deps, op.id)).operationState).toBe('PROCESSING');
    expect((await store.opOccs.lock(op.vnfInstanceId))!.pid).toBe(sleeper.pid);
  });
});

describe('vnfm op-fail --force (command)', () => {
  function stream(tty: boolean) {
    const s = new PassThrough() as PassThrough & { isTTY?: boolean };
    if (tty) s.isTTY = true;
    let text = '';
    s.on('data', (d: Buffer) => (text += d.toString()));
    return { s, text: () => text };
  }
  async function vnfm(argv: string[]) {
    const [stdin, stdout, stderr] = [stream(false), stream(false), stream(false)];
    const code = await main(argv, { env: { VNFM_HOME: home }, cwd: home, streams: { stdin: stdin.s, stdout: stdout.s, stderr: stderr.s } });
    return { code, stdout: stdout.text(), stderr: stderr.text() };
  }

  it('needs --yes without a terminal when the holder cannot be checked; refuses (exit 4) a running holder', async () => {
    const op = await lockedInstance({ pid: 7, hostName: 'far-away', hostId: 'another-machine', startTime: '42' });
    const asked = await vnfm(['op-fail', '--force', op.id]);
    expect(asked.code).toBe(2);
    expect(asked.stderr).toMatch(
      /refusing to force occurrence .* to FAILED without confirmation: there is no terminal to ask on \(vnf instance .* is locked by vnfm pid 7 on host far-away since/,
    );
    expect(asked.stderr).toContain(`hint: make sure that vnfm is gone, then pass --yes: vnfm op-fail --force --yes ${op.id}`);
    expect(await store.opOccs.lock(op.vnfInstanceId)).toMatchObject({ opId: op.id });
    const plain = await vnfm(['op-fail', op.id]);
    expect(plain.code).toBe(4);

    const done = await vnfm(['op-fail', '--force', '--yes', op.id, '-o', 'json']);
    expect(done.code).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ id: op.id, operationState: 'FAILED' });
    expect(done.stderr).toMatch(/INSTANTIATE occurrence .* FAILED; vnf instance .* released/);
    expect(await store.opOccs.lock(op.vnfInstanceId)).toBeUndefined();
  });

  it('refuses with exit 4 while the holder runs on this host, even with --yes', async () => {
    const op = await lockedInstance(holderOf(sleeper.pid!));
    const r = await vnfm(['op-fail', '--force', '--yes', op.id]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/that process is running\nhint: stop it \(Ctrl-C, or kill -TERM \d+\): it leaves the occurrence FAILED_TEMP/);
  });
});
