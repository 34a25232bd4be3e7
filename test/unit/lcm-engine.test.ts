/**
 * The operation engine with a real store, the basic-cnf sample onboarded,
 * and an in-memory infra-driver: the occurrence state machine, locks across
 * processes, the journal, and cancellation.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { onboardPackage } from '../../src/csar/index.js';
import { ConflictError, InterruptedError, TerminatedError, TimeoutError, UsageError, ValidationError, VimCheckError, VnfmError } from '../../src/errors.js';
import {
  changeVnfPackage,
  createVnf,
  deleteVnf,
  failOpOcc,
  getOpOcc,
  getVnf,
  healVnf,
  instantiateVnf,
  listOpOccs,
  retryOpOcc,
  rollbackOpOcc,
  scaleVnf,
  terminateVnf,
  type LcmDeps,
  type LcmEvent,
  type VnfInstance,
} from '../../src/lcm/index.js';
import type { HookContext } from '../../src/mgmt/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { SqliteStoreDb } from '../../src/store/database.js';
import type { Vim } from '../../src/vim/index.js';
import { FakeInfraDriver } from '../support/fake-infra-driver.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');
const request = (name: string) => JSON.parse(readFileSync(join(SAMPLE, 'requests', name), 'utf8')) as Record<string, unknown>;
const V1 = '1191aa45-a57a-4232-8201-6a7a66d41e38';
const V2 = '97ff675b-d247-4664-8486-5c302ccf37fc';

function vim(over: Partial<Vim> = {}): Vim {
  return {
    id: 'vim-k8s',
    name: 'k8s',
    description: '',
    isDefault: true,
    spec: { type: 'kubernetes', authUrl: 'https://127.0.0.1:6443', projectName: 'vnf-ns', auth: { method: 'bearer-token' }, verifyTls: false },
    secretNames: [],
    status: 'REACHABLE',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

/** A pid that belonged to a process which has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '']);
  return r.pid!;
}

let home: string;
let store: Store;
let driver: FakeInfraDriver;
let deps: LcmDeps;
let hooks: string[];

beforeEach(async () => {
  home = join(mkdtempSync(join(tmpdir(), 'vnfm-lcm-')), 'home');
  store = openStore(home);
  const pkgDeps = { packages: store.packages, home, now: () => new Date() };
  await onboardPackage(pkgDeps, { path: join(SAMPLE, 'package') });
  await onboardPackage(pkgDeps, { path: join(SAMPLE, 'package-v2') });
  await store.vims.insert(vim(), undefined);
  await store.vims.insert(
    vim({
      id: 'vim-os',
      name: 'openstack',
      isDefault: false,
      spec: { type: 'openstack', authUrl: 'http://127.0.0.1:5000/v3', auth: { method: 'password', username: 'u' }, verifyTls: true },
    }),
    undefined,
  );
  driver = new FakeInfraDriver();
  hooks = [];
  deps = {
    store,
    home,
    now: () => new Date(),
    openVimSecrets: async () => ({ bearerToken: 'token' }),
    kubernetesDriver: () => driver,
    mgmt: { runHook: async (ctx: HookContext) => void hooks.push(ctx.hook) },
  };
});

afterEach(async () => await store.close());

async function instantiated(): Promise<VnfInstance> {
  const vnf = await createVnf(deps, { vnfdId: V1, name: 'web' });
  await instantiateVnf(deps, vnf.id, request('instantiate.json'));
  return await getVnf(deps, vnf.id);
}

describe('instances', () => {
  it('create makes the package IN_USE, delete of the last instance NOT_IN_USE', async () => {
    const vnf = await createVnf(deps, { vnfdId: V1, name: 'web', description: 'front' });
    expect(vnf).toMatchObject({ instantiationState: 'NOT_INSTANTIATED', vnfdId: V1, vnfInstanceName: 'web', vnfSoftwareVersion: '1.0' });
    expect((await store.packages.get(V1)).usageState).toBe('IN_USE');
    const second = await createVnf(deps, { package: V1 });
    await deleteVnf(deps, vnf.id);
    expect((await store.packages.get(V1)).usageState).toBe('IN_USE');
    await deleteVnf(deps, second.id);
    expect((await store.packages.get(V1)).usageState).toBe('NOT_IN_USE');
  });

  it('refuses a disabled package, a taken name, and deleting an INSTANTIATED instance', async () => {
    await store.packages.setStates((await store.packages.get(V2)).id, { operationalState: 'DISABLED' }, new Date().toISOString());
    await expect(createVnf(deps, { vnfdId: V2 })).rejects.toThrow(/DISABLED/);
    const vnf = await instantiated();
    await expect(createVnf(deps, { vnfdId: V1, name: 'web' })).rejects.toThrow(ConflictError);
    await expect(deleteVnf(deps, vnf.id)).rejects.toThrow(/INSTANTIATED/);
  });
});

describe('the VIM asked before an operation is recorded', () => {
  it('a registered VIM that does not answer: VimCheckError (exit 6), no occurrence, the VIM UNREACHABLE; once it answers, REACHABLE and the scale runs', async () => {
    const vnf = await instantiated();
    let answering = false;
    const asked: string[] = [];
    deps.checkInlineVim = async (v) => {
      asked.push(v.name);
      if (!answering) throw new VimCheckError(`cannot reach ${v.spec.authUrl} (ECONNREFUSED)`);
    };
    const before = (await store.opOccs.list()).length;
    const err = await scaleVnf(deps, vnf.id, request('scale-out.json')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VimCheckError);
    expect((err as VimCheckError).exitCode).toBe(6);
    expect(await store.opOccs.list()).toHaveLength(before);
    expect(driver.callsOf('scale')).toEqual([]);
    expect((await store.vims.get('vim-k8s')).status).toBe('UNREACHABLE');
    answering = true;
    const r = await scaleVnf(deps, vnf.id, request('scale-out.json'));
    expect(r.opOcc.operationState).toBe('COMPLETED');
    expect((await store.vims.get('vim-k8s')).status).toBe('REACHABLE');
    expect(asked).toEqual(['k8s', 'k8s']);
  });
});

describe('operations that complete', () => {
  it('instantiate: replicas from the level, namespace from the request, VNFCs and resources recorded, hooks around the driver', async () => {
    const vnf = await createVnf(deps, { vnfdId: V1 });
    const events: LcmEvent[] = [];
    const { opOcc, vnfInstance } = await instantiateVnf(
      deps,
      vnf.id,
      { ...request('instantiate.json'), instantiationLevelId: 'instantiation_level_2' },
      { onEvent: (e) => events.push(e) },
    );
    expect(opOcc).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED', vnfInstanceId: vnf.id });
    expect(opOcc.pid).toBeUndefined();
    const deploy = driver.callsOf('deploy')[0]!.input as { namespace: string; replicas: Record<string, number>; objects: unknown[] };
    expect(deploy.namespace).toBe('default');
    expect(deploy.replicas).toEqual({ 'Deployment/vdu1': 2, 'Deployment/vdu2': 2 });
    expect(deploy.objects).toHaveLength(4);
    const info = vnfInstance.instantiatedVnfInfo!;
    expect(vnfInstance).toMatchObject({ instantiationState: 'INSTANTIATED', vimId: 'vim-k8s' });
    expect(info.scaleStatus).toEqual([
      { aspectId: 'vdu1_aspect', scaleLevel: 1 },
      { aspectId: 'vdu2_aspect', scaleLevel: 1 },
    ]);
    expect(info.maxScaleLevels).toEqual([
      { aspectId: 'vdu1_aspect', scaleLevel: 2 },
      { aspectId: 'vdu2_aspect', scaleLevel: 1 },
    ]);
    expect(info.vnfcInfo).toHaveLength(4);
    expect(info.vnfcInfo[0]!.id).toMatch(/^VDU1-vdu1-/);
    expect(info.resources.map((r) => `${r.kind}/${r.name}`)).toEqual(['ConfigMap/basic-cnf-content', 'Service/basic-cnf-web', 'Deployment/vdu1', 'Deployment/vdu2']);
    expect(opOcc.resourceChanges!.affectedVnfcs.map((a) => a.changeType)).toEqual(['ADDED', 'ADDED', 'ADDED', 'ADDED']);
    expect(hooks).toEqual(['instantiate_start', 'instantiate_end']);
    expect(events.filter((e) => e.type === 'occurrence').map((e) => (e as { opOcc: { operationState: string } }).opOcc.operationState)).toEqual([
      'STARTING',
      'PROCESSING',
      'COMPLETED',
    ]);
    expect(opOcc.journal.filter((s) => s.state === 'done')).toHaveLength(4);
    expect(await store.opOccs.lock(vnf.id)).toBeUndefined();
  });

  it('records each journal step in the store before the driver takes it', async () => {
    const vnf = await createVnf(deps, { vnfdId: V1 });
    const seen: number[] = [];
    // Read at once (the driver takes the step as record returns), through the store's own SQLite connection.
    const sqlite = (store.db as SqliteStoreDb).sqlite;
    driver.onRecord = (step) => {
      const op = sqlite.prepare('SELECT id FROM lcm_op_occs WHERE vnf_instance_id = ?').pluck().get(vnf.id) as string;
      const persisted = (sqlite.prepare('SELECT step FROM lcm_op_occ_journal_steps WHERE op_id = ? ORDER BY seq').pluck().all(op) as string[]).map(
        (text) => JSON.parse(text) as unknown,
      );
      expect(persisted.at(-1)).toEqual(step);
      seen.push(persisted.length);
    };
    await instantiateVnf(deps, vnf.id, request('instantiate.json'));
    expect(seen).toEqual([1, 3, 5, 7]);
  });

  it('scale out and in, heal, change package, terminate', async () => {
    const vnf = await instantiated();
    const out = await scaleVnf(deps, vnf.id, request('scale-out.json'));
    expect(driver.callsOf('scale')[0]!.input).toMatchObject({ resource: { kind: 'Deployment', name: 'vdu1', namespace: 'default' }, replicas: 2 });
    expect(out.vnfInstance.instantiatedVnfInfo!.scaleStatus[0]).toEqual({ aspectId: 'vdu1_aspect', scaleLevel: 1 });
    expect(out.opOcc.resourceChanges!.affectedVnfcs).toEqual([expect.objectContaining({ vduId: 'VDU1', changeType: 'ADDED' })]);

    const vnfc = out.vnfInstance.instantiatedVnfInfo!.vnfcInfo[0]!;
    const healed = await healVnf(deps, vnf.id, { vnfcInstanceId: [vnfc.id], cause: 'test' });
    expect((driver.callsOf('heal')[0]!.input as { vnfcs: { id: string }[] }).vnfcs.map((v) => v.id)).toEqual([vnfc.id]);
    expect(healed.opOcc.resourceChanges!.affectedVnfcs.map((a) => a.changeType).sort()).toEqual(['ADDED', 'REMOVED']);

    const back = await scaleVnf(deps, vnf.id, request('scale-in.json'));
    expect(back.vnfInstance.instantiatedVnfInfo!.metadata.vduReplicas).toEqual({ VDU1: 1, VDU2: 1 });

    const changed = await changeVnfPackage(deps, vnf.id, request('change-package.json'));
    expect(changed.vnfInstance).toMatchObject({ vnfdId: V2, vnfSoftwareVersion: '2.0' });
    expect(changed.vnfInstance.instantiatedVnfInfo!.metadata['lcm-kubernetes-def-files'][0]).toBe('Files/new_kubernetes/configmap.yaml');
    expect((await store.packages.get(V1)).usageState).toBe('NOT_IN_USE');
    expect((await store.packages.get(V2)).usageState).toBe('IN_USE');

    const ended = await terminateVnf(deps, vnf.id, request('terminate.json'));
    expect(driver.callsOf('remove')[0]!.input).toMatchObject({ gracePeriodSeconds: 30 });
    expect(ended.vnfInstance.instantiationState).toBe('NOT_INSTANTIATED');
    expect(ended.vnfInstance.instantiatedVnfInfo).toBeUndefined();
    expect(driver.resources.size).toBe(0);
    expect(hooks).toContain('change_current_package_end');
    await deleteVnf(deps, vnf.id);
    expect((await store.packages.get(V2)).usageState).toBe('NOT_IN_USE');
    expect(await store.opOccs.list()).toEqual([]);
  });
});

describe('requests refused before anything changes', () => {
  const cases: [string, (vnf: VnfInstance) => Promise<unknown>, RegExp][] = [
    ['unknown flavour', (v) => instantiateVnf(deps, v.id, { flavourId: 'big' }), /flavourId: "big" is not a flavour/],
    ['unknown level', (v) => instantiateVnf(deps, v.id, { flavourId: 'simple', instantiationLevelId: 'x' }), /instantiationLevelId/],
    [
      'def-file not in the package',
      (v) => instantiateVnf(deps, v.id, { flavourId: 'simple', additionalParams: { 'lcm-kubernetes-def-files': ['Files/kubernetes/nope.yaml'] } }),
      /lcm-kubernetes-def-files\[0\]: "Files\/kubernetes\/nope.yaml" is not a file of the package/,
    ],
    ['unknown VIM', (v) => instantiateVnf(deps, v.id, { flavourId: 'simple', vimConnectionInfo: { vim1: { vimId: 'nope' } } }), /vimConnectionInfo\.vim1\.vimId: no VIM "nope"/],
    [
      'a CNF package on an OpenStack VIM',
      (v) => instantiateVnf(deps, v.id, { flavourId: 'simple', vimConnectionInfo: { vim1: { vimId: 'openstack' } } }),
      /flavourId: package .* has no Base HOT for flavour "simple" \(BaseHOT\/simple\/\), and the HOT of flavour simple cannot be made from its VNFD .*: VDUs? .* no virtual_compute size/,
    ],
  ];
  for (const [name, run, message] of cases) {
    it(name, async () => {
      const vnf = await createVnf(deps, { vnfdId: V1 });
      const err = await run(vnf).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).toMatch(message);
      expect(await store.opOccs.list()).toEqual([]);
      expect(driver.calls).toEqual([]);
    });
  }
  it('scale of a NOT_INSTANTIATED instance: a state conflict (exit 4, as on every command), nothing recorded', async () => {
    const vnf = await createVnf(deps, { vnfdId: V1 });
    const err = await scaleVnf(deps, vnf.id, request('scale-out.json')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as ConflictError).exitCode).toBe(4);
    expect((err as Error).message).toMatch(/NOT_INSTANTIATED/);
    expect(await store.opOccs.list()).toEqual([]);
    expect(driver.calls).toEqual([]);
  });

  it('a second instantiate, scale beyond max_scale_level or below 0, an unknown VNFC', async () => {
    const vnf = await instantiated();
    const before = (await store.opOccs.list()).length;
    await expect(instantiateVnf(deps, vnf.id, request('instantiate.json'))).rejects.toThrow(/already INSTANTIATED/);
    await expect(scaleVnf(deps, vnf.id, { ...request('scale-out.json'), numberOfSteps: 3 })).rejects.toThrow(/numberOfSteps: .*beyond its max_scale_level 2/);
    await expect(scaleVnf(deps, vnf.id, request('scale-in.json'))).rejects.toThrow(/below 0/);
    await expect(scaleVnf(deps, vnf.id, { type: 'SCALE_OUT', aspectId: 'nope' })).rejects.toThrow(ValidationError);
    await expect(healVnf(deps, vnf.id, { vnfcInstanceId: ['VDU1-gone'] })).rejects.toThrow(/vnfcInstanceId\[0\]: "VDU1-gone" is not a VNFC/);
    await expect(changeVnfPackage(deps, vnf.id, { vnfdId: 'nope' })).rejects.toThrow(/vnfdId: no onboarded package/);
    expect(await store.opOccs.list()).toHaveLength(before);
  });

  it("the infra-driver's preflight refusal (package or unreachable cluster) leaves no occurrence, runs no hook and writes nothing", async () => {
    const vnf = await createVnf(deps, { vnfdId: V1 });
    driver.failOnce('check', new ValidationError('Files/kubernetes/x.yaml', undefined, 'VDU VDU1 maps to Widget w, whose kind has no /scale subresource'));
    await expect(instantiateVnf(deps, vnf.id, request('instantiate.json'))).rejects.toThrow(/x\.yaml: VDU VDU1 maps to Widget w/);
    driver.failOnce('check', new VimCheckError('cannot check the package against the cluster at https://127.0.0.1:6443: no answer'));
    await expect(instantiateVnf(deps, vnf.id, request('instantiate.json'))).rejects.toThrow(VimCheckError);
    expect(await store.opOccs.list()).toEqual([]);
    expect(hooks).toEqual([]);
    expect(driver.calls.map((c) => c.method)).toEqual(['check', 'check']);
    expect((driver.calls[0]!.input as { vdus: Array<{ vduId: string }> }).vdus.map((v) => v.vduId).sort()).toEqual(['VDU1', 'VDU2']);

    await instantiateVnf(deps, vnf.id, request('instantiate.json'));
    const before = (await store.opOccs.list()).length;
    driver.failOnce('check', new UsageError('no CustomResourceDefinition provides Widget (example.com/v1)'));
    await expect(changeVnfPackage(deps, vnf.id, request('change-package.json'))).rejects.toThrow(/no CustomResourceDefinition provides Widget/);
    expect(await store.opOccs.list()).toHaveLength(before);
    expect(driver.callsOf('changePackage')).toEqual([]);
    expect((await getVnf(deps, vnf.id)).vnfdId).toBe(V1);
  });
});

describe('failure, retry, rollback, fail', () => {
  it('a driver failure leaves FAILED_TEMP with problem details, blocks the instance, and retry completes', async () => {
    const vnf = await createVnf(deps, { vnfdId: V1 });
    driver.failOnce('deploy', new Error('the API server answered 500'), 2);
    const err = await instantiateVnf(deps, vnf.id, request('instantiate.json')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VnfmError);
    expect((err as VnfmError).message).toMatch(/INSTANTIATE of vnf instance .* failed: the API server answered 500; occurrence .* is FAILED_TEMP/);
    expect((err as VnfmError).hint).toMatch(/op-retry .*op-rollback .*op-fail/);
    const [op] = await listOpOccs(deps, { vnf: vnf.id });
    expect(op).toMatchObject({ operationState: 'FAILED_TEMP', error: { status: 500, detail: 'the API server answered 500' } });
    expect(await store.opOccs.lock(vnf.id)).toBeUndefined();
    expect((await getVnf(deps, vnf.id)).instantiationState).toBe('NOT_INSTANTIATED');

    await expect(instantiateVnf(deps, vnf.id, request('instantiate.json'))).rejects.toThrow(ConflictError);
    await expect(instantiateVnf(deps, vnf.id, request('instantiate.json'))).rejects.toThrow(new RegExp(`FAILED_TEMP INSTANTIATE occurrence \\(${op!.id}\\)`));
    await expect(deleteVnf(deps, vnf.id)).rejects.toThrow(ConflictError);

    const retried = await retryOpOcc(deps, op!.id);
    expect(retried.opOcc).toMatchObject({ id: op!.id, operationState: 'COMPLETED' });
    expect(retried.opOcc.error).toBeUndefined();
    expect(driver.callsOf('deploy')[1]!.journalBefore).toBe(4);
    expect(retried.vnfInstance.instantiationState).toBe('INSTANTIATED');
    await expect(retryOpOcc(deps, op!.id)).rejects.toThrow(/COMPLETED: only a FAILED_TEMP occurrence can be retried/);
  });

  it('rollback of an instantiate removes what the journal says was created, in reverse', async () => {
    const vnf = await createVnf(deps, { vnfdId: V1 });
    driver.failOnce('deploy', new Error('boom'), 2);
    await instantiateVnf(deps, vnf.id, request('instantiate.json')).catch(() => undefined);
    const [op] = await listOpOccs(deps, { vnf: vnf.id, state: 'FAILED_TEMP' });
    const states: string[] = [];
    const { opOcc, vnfInstance } = await rollbackOpOcc(deps, op!.id, { onEvent: (e) => e.type === 'occurrence' && states.push(e.opOcc.operationState) });
    expect(states).toEqual(['ROLLING_BACK', 'ROLLED_BACK']);
    expect(opOcc.operationState).toBe('ROLLED_BACK');
    expect((driver.callsOf('remove')[0]!.input as { resources: { name: string }[] }).resources.map((r) => r.name)).toEqual(['basic-cnf-content', 'basic-cnf-web']);
    expect(driver.resources.size).toBe(0);
    expect(vnfInstance.instantiationState).toBe('NOT_INSTANTIATED');
    await instantiateVnf(deps, vnf.id, request('instantiate.json'));
  });

  it('a failed rollback is FAILED_TEMP again; rollback of a scale out scales back; heal cannot be rolled back', async () => {
    const vnf = await instantiated();
    driver.failOnce('scale', new Error('scale refused'));
    await expect(scaleVnf(deps, vnf.id, request('scale-out.json'))).rejects.toThrow(/scale refused/);
    const op = (await listOpOccs(deps, { state: 'FAILED_TEMP' }))[0]!;
    driver.failOnce('scale', new Error('still refused'));
    await expect(rollbackOpOcc(deps, op.id)).rejects.toThrow(/rollback of SCALE .* failed: still refused/);
    expect(await getOpOcc(deps, op.id)).toMatchObject({ operationState: 'FAILED_TEMP', error: { detail: 'still refused' } });
    await rollbackOpOcc(deps, op.id);
    expect(driver.callsOf('scale').at(-1)!.input).toMatchObject({ replicas: 1 });
    expect((await getVnf(deps, vnf.id)).instantiatedVnfInfo!.scaleStatus[0]!.scaleLevel).toBe(0);

    driver.failOnce('heal', new Error('pods stuck'));
    await expect(healVnf(deps, vnf.id, {})).rejects.toThrow(/pods stuck/);
    const heal = (await listOpOccs(deps, { state: 'FAILED_TEMP' }))[0]!;
    await expect(rollbackOpOcc(deps, heal.id)).rejects.toThrow(/HEAL, which cannot be rolled back/);
    expect((await failOpOcc(deps, heal.id)).operationState).toBe('FAILED');
    await expect(failOpOcc(deps, heal.id)).rejects.toThrow(/FAILED: only a FAILED_TEMP occurrence can be failed/);
    await scaleVnf(deps, vnf.id, request('scale-out.json'));
  });

  it('rollback of a change of package re-applies the old manifests', async () => {
    const vnf = await instantiated();
    driver.failOnce('changePackage', new Error('rollout stuck'), 3);
    await expect(changeVnfPackage(deps, vnf.id, request('change-package.json'))).rejects.toThrow(/rollout stuck/);
    const op = (await listOpOccs(deps, { state: 'FAILED_TEMP' }))[0]!;
    await rollbackOpOcc(deps, op.id);
    const input = driver.callsOf('changePackage')[1]!.input as { objects: { metadata: { name: string } }[]; current: unknown[] };
    expect(input.objects.map((o) => o.metadata.name)).toEqual(['basic-cnf-content', 'basic-cnf-web', 'vdu1', 'vdu2']);
    expect(await getVnf(deps, vnf.id)).toMatchObject({ vnfdId: V1 });
    expect((await store.packages.get(V1)).usageState).toBe('IN_USE');
  });
});

describe('locks and cancellation', () => {
  it('a lock left by a dead process turns its occurrence FAILED_TEMP, which then blocks', async () => {
    const vnf = await instantiated();
    const ghost = deadPid();
    driver.hang('scale');
    const ac = new AbortController();
    const entered = driver.entering('scale');
    const running = scaleVnf({ ...deps, pid: ghost }, vnf.id, request('scale-out.json'), { signal: ac.signal }).catch((e: unknown) => e);
    await entered;
    expect((await store.opOccs.lock(vnf.id))!.pid).toBe(ghost);

    const err = await healVnf(deps, vnf.id, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as Error).message).toMatch(/FAILED_TEMP SCALE occurrence/);
    const op = (await listOpOccs(deps, { vnf: vnf.id, state: 'FAILED_TEMP' }))[0]!;
    expect(op.error!.detail).toMatch(
      new RegExp(`vnfm process \\(pid ${ghost} on host \\S+\\) running this SCALE stopped before finishing it \\(killed or crashed: no process has pid ${ghost}\\)`),
    );
    expect(await store.opOccs.lock(vnf.id)).toBeUndefined();

    ac.abort(new InterruptedError('interrupted'));
    await running;
    driver.unhang('scale');
    const done = await retryOpOcc(deps, op.id);
    expect(done.opOcc.operationState).toBe('COMPLETED');
  });

  it('a live lock is a conflict naming the process; Ctrl-C ends FAILED_TEMP and the lock is released', async () => {
    const vnf = await createVnf(deps, { vnfdId: V1 });
    driver.hang('deploy');
    const ac = new AbortController();
    const entered = driver.entering('deploy');
    const running = instantiateVnf(deps, vnf.id, request('instantiate.json'), { signal: ac.signal }).catch((e: unknown) => e);
    await entered;
    await expect(instantiateVnf(deps, vnf.id, request('instantiate.json'))).rejects.toThrow(
      new RegExp(`vnf instance ${vnf.id} is locked by vnfm pid ${process.pid} on host \\S+ since \\S+ \\(operation INSTANTIATE, occurrence `),
    );
    await expect(failOpOcc(deps, (await listOpOccs(deps))[0]!.id)).rejects.toThrow(/PROCESSING/);
    ac.abort(new InterruptedError('interrupted'));
    const err = await running;
    expect(err).toBeInstanceOf(InterruptedError);
    expect((err as Error).message).toMatch(/INSTANTIATE of vnf instance .* interrupted; occurrence .* is FAILED_TEMP/);
    expect((await listOpOccs(deps))[0]).toMatchObject({ operationState: 'FAILED_TEMP', error: { title: 'Interrupted' } });
    expect(await store.opOccs.lock(vnf.id)).toBeUndefined();
  });

  it('SIGTERM ends FAILED_TEMP with TerminatedError (exit 143), naming the occurrence and what to do', async () => {
    const vnf = await createVnf(deps, { vnfdId: V1 });
    driver.hang('deploy');
    const ac = new AbortController();
    const entered = driver.entering('deploy');
    const running = instantiateVnf(deps, vnf.id, request('instantiate.json'), { signal: ac.signal }).catch((e: unknown) => e);
    await entered;
    ac.abort(new TerminatedError('terminated (SIGTERM)'));
    const err = (await running) as TerminatedError;
    expect(err).toBeInstanceOf(TerminatedError);
    expect(err.exitCode).toBe(143);
    const op = (await listOpOccs(deps))[0]!;
    expect(err.message).toBe(`INSTANTIATE of vnf instance ${vnf.id} terminated (SIGTERM); occurrence ${op.id} is FAILED_TEMP`);
    expect(err.hint).toBe(`retry it: vnfm op-retry ${op.id}; or undo it: vnfm op-rollback ${op.id}; or give up on it: vnfm op-fail ${op.id}`);
    expect(op).toMatchObject({ operationState: 'FAILED_TEMP', error: { status: 503, title: 'Terminated', detail: 'terminated (SIGTERM)' } });
    expect(await store.opOccs.lock(vnf.id)).toBeUndefined();
  });

  it('--timeout ends FAILED_TEMP with TimeoutError', async () => {
    const vnf = await createVnf(deps, { vnfdId: V1 });
    driver.hang('deploy');
    const ac = new AbortController();
    const entered = driver.entering('deploy');
    const running = instantiateVnf(deps, vnf.id, request('instantiate.json'), { signal: ac.signal }).catch((e: unknown) => e);
    await entered;
    ac.abort(new TimeoutError('timed out after 5s'));
    const err = await running;
    expect(err).toBeInstanceOf(TimeoutError);
    expect((await listOpOccs(deps))[0]).toMatchObject({ operationState: 'FAILED_TEMP', error: { status: 504, detail: 'timed out after 5s' } });
  });
});
