/**
 * The Helm planner's plans run by the operation engine (the actions tier):
 * a real store, the sandbox over HTTPS, the real Kubernetes driver watching
 * and the real helm (test/support/helm.ts) installing. After each step
 * `helm list` (the helm binary itself) agrees with the instance; refusals
 * leave no occurrence and no release.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onboardPackage } from '../../src/csar/index.js';
import { ConflictError, ValidationError } from '../../src/errors.js';
import { createHelmChartTool, createHelmClient } from '../../src/infra/helm/index.js';
import { createKubernetesDriver, type KubernetesDriver } from '../../src/infra/kubernetes/index.js';
import { execute, resumeOccurrence, runOperation, type LcmDeps, type OperationOptions } from '../../src/lcm/engine.js';
import { createVnf, modifyVnfInfo, type VnfInstance } from '../../src/lcm/index.js';
import { claimsHelm, helmPlanner, type HelmServices } from '../../src/lcm/planners/helm.js';
import { renderKubeconfig } from '@vnfm/kube-sandbox';
import { openStore, type Store } from '../../src/store/index.js';
import { kubeAccessOf } from '../../src/vim/access.js';
import type { Vim } from '../../src/vim/index.js';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { helmPath, runHelm, type HelmResult } from '../support/helm.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/helm-cnf');
const V2 = 'd1b9a0f4-3c2e-4d57-8a86-7e0c5b9f2a14';

let cluster: E2eCluster;
let store: Store;
let deps: LcmDeps;
let dir: string;
let kubeconfig: string;
let NS: string;
const drivers: KubernetesDriver[] = [];
let lines: string[] = [];

const req = (name: string, edit?: (b: Record<string, any>) => void): Record<string, any> => {
  const body = JSON.parse(readFileSync(join(SAMPLE, 'requests', name), 'utf8')) as Record<string, any>;
  if (body.additionalParams?.namespace !== undefined) body.additionalParams.namespace = NS;
  edit?.(body);
  return body;
};

const opts = (): OperationOptions => ({
  source: 'request.json',
  onEvent: (e) => (e.type === 'driver' ? lines.push(`${e.event.resource ? `${e.event.resource.kind}/${e.event.resource.name}: ` : ''}${e.event.message}`) : undefined),
});

async function run(instance: VnfInstance, operation: 'instantiate' | 'scale' | 'heal' | 'terminate' | 'changePackage', body: unknown) {
  lines = [];
  const fresh = await deps.store.instances.get(instance.id);
  expect(await claimsHelm(deps, fresh, body)).toBe(true);
  return runOperation(deps, fresh, () => helmPlanner[operation](deps, fresh, body, 'request.json', false, opts()), opts());
}

async function rollback(opId: string) {
  lines = [];
  const op = await deps.store.opOccs.get(opId);
  const instance = await deps.store.instances.get(op.vnfInstanceId);
  expect(await claimsHelm(deps, instance, op.operationParams, op)).toBe(true);
  const plan = await helmPlanner.rollback(deps, instance, op, 'occurrence');
  return execute(deps, await resumeOccurrence(deps, op.id, 'ROLLING_BACK'), plan, 'ROLLING_BACK', 'ROLLED_BACK', opts());
}

const helm = (...args: string[]): Promise<HelmResult> => runHelm(kubeconfig, dir, args);

async function helmList(): Promise<{ name: string; namespace: string; revision: string; status: string; chart: string }[]> {
  const r = await helm('list', '--namespace', NS, '--all', '-o', 'json');
  if (r.code !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

/** helm list agrees with the instance: its release, revision and chart. */
async function agrees(id: string, chart: string): Promise<VnfInstance> {
  const instance = await deps.store.instances.get(id);
  const m = instance.instantiatedVnfInfo!.metadata;
  expect((await helmList()).find((r) => r.name === m.release_name)).toMatchObject({ namespace: m.namespace, revision: String(m.revision), status: 'deployed', chart });
  return instance;
}

async function replicas(name: string): Promise<number | undefined> {
  const r = await cluster.request('GET', `/apis/apps/v1/namespaces/${NS}/deployments/${name}`);
  return r.status === 200 ? r.json.spec.replicas : undefined;
}

const create = async (name: string) => await createVnf(deps, { vnfdId: '5b5c8e1e-6f0a-4c55-9d0b-2f6b0c1a7e31', name });

beforeAll(async () => {
  cluster = await e2eCluster('e2e-helm-plan', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  NS = cluster.namespace;
  dir = mkdtempSync(join(tmpdir(), 'vnfm-helm-plan-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, renderKubeconfig({ url: cluster.server, token: cluster.token, caPem: cluster.caPem }, NS), { mode: 0o600 });
  const home = join(dir, 'home');
  store = openStore(home);
  const pkgDeps = { packages: store.packages, home, now: () => new Date() };
  await onboardPackage(pkgDeps, { path: join(SAMPLE, 'package') });
  await onboardPackage(pkgDeps, { path: join(SAMPLE, 'package-v2') });
  const vim = (id: string, extra?: Record<string, unknown>): Vim => ({
    id,
    name: id,
    description: '',
    isDefault: id === 'sandbox',
    spec: { type: 'kubernetes', authUrl: cluster.server, projectName: NS, auth: { method: 'bearer-token' }, verifyTls: true, ...(extra ? { extra } : {}) },
    secretNames: [],
    status: 'REACHABLE',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  });
  await store.vims.insert(vim('sandbox'), undefined);
  await store.vims.insert(vim('sandbox-helm', { use_helm: true }), undefined);
  const secrets = { bearerToken: cluster.token, caCert: cluster.caPem };
  const helmServices: HelmServices = {
    client: async (v) => createHelmClient({ access: await kubeAccessOf(v.spec, v.secrets), executable: helmPath(), env: {} }),
    chartTool: () => createHelmChartTool({ executable: helmPath(), env: {} }),
  };
  deps = Object.assign(
    {
      store,
      home,
      now: () => new Date(),
      openVimSecrets: async () => secrets,
      kubernetesDriver: async (v: { spec: Vim['spec']; secrets: typeof secrets }) => {
        const d = createKubernetesDriver(await kubeAccessOf(v.spec, v.secrets));
        drivers.push(d);
        return d;
      },
    } as unknown as LcmDeps,
    { helm: helmServices },
  );
});

afterAll(async () => {
  drivers.forEach((d) => d.close());
  await cluster?.close();
});

describe('the Helm planner, Tacker v2 request', () => {
  it('instantiate, scale out and in, heal, change package, terminate: helm list agrees at each step', async () => {
    const vnf = await create('v2');
    const release = `vnf${vnf.id.replace(/-/g, '')}`;
    const done = await run(vnf, 'instantiate', req('instantiate.json'));
    expect(done.opOcc.operationState).toBe('COMPLETED');
    expect(lines).toContain(`Deployment/vdu1-${release}: ready`);
    let i = await agrees(vnf.id, 'helm-cnf-0.1.0');
    expect(i.instantiatedVnfInfo!.metadata).toMatchObject({ release_name: release, revision: 1, namespace: NS, vduReplicas: { VDU1: 1, VDU2: 1 } });
    expect(i.instantiatedVnfInfo!.vnfcInfo.map((v) => v.vduId).sort()).toEqual(['VDU1', 'VDU2']);

    await run(vnf, 'scale', req('scale-out.json'));
    i = await agrees(vnf.id, 'helm-cnf-0.1.0');
    expect(i.instantiatedVnfInfo!.metadata.revision).toBe(2);
    expect(await replicas(`vdu1-${release}`)).toBe(2);
    expect(i.instantiatedVnfInfo!.vnfcInfo.filter((v) => v.vduId === 'VDU1')).toHaveLength(2);
    const values = JSON.parse((await helm('get', 'values', release, '--namespace', NS, '-o', 'json')).stdout);
    expect(values).toMatchObject({ vdu1: { replicaCount: 2 }, service: { port: 8080 } });

    await run(vnf, 'scale', req('scale-in.json'));
    i = await agrees(vnf.id, 'helm-cnf-0.1.0');
    expect(i.instantiatedVnfInfo!.metadata.revision).toBe(3);
    expect(await replicas(`vdu1-${release}`)).toBe(1);

    const victim = i.instantiatedVnfInfo!.vnfcInfo.find((v) => v.vduId === 'VDU2')!;
    const healed = await run(vnf, 'heal', { vnfcInstanceId: [victim.id] });
    expect(healed.opOcc.resourceChanges?.affectedVnfcs).toContainEqual(expect.objectContaining({ id: victim.id, changeType: 'REMOVED' }));
    i = await agrees(vnf.id, 'helm-cnf-0.1.0');
    expect(i.instantiatedVnfInfo!.metadata.revision).toBe(3);

    // vnf-update does not move a release to another package's chart: refused before anything is recorded.
    const occurrences = (await deps.store.opOccs.list({ vnfInstanceId: vnf.id })).length;
    await expect(modifyVnfInfo(deps, vnf.id, { vnfdId: V2 }, opts())).rejects.toThrow(/moves a Helm VNF to another package/);
    await expect(modifyVnfInfo(deps, vnf.id, { vnfdId: V2 }, opts())).rejects.toMatchObject({
      constructor: ValidationError,
      hint: expect.stringContaining('vnfm vnf-change-package'),
    });
    expect(await deps.store.opOccs.list({ vnfInstanceId: vnf.id })).toHaveLength(occurrences);
    i = await agrees(vnf.id, 'helm-cnf-0.1.0');
    expect(i.vnfdId).not.toBe(V2);

    await run(vnf, 'changePackage', req('change-package.json'));
    i = await agrees(vnf.id, 'helm-cnf-0.2.0');
    expect(i).toMatchObject({ vnfdId: V2, vnfSoftwareVersion: '2.0' });
    expect(i.instantiatedVnfInfo!.metadata.revision).toBe(4);
    // The new chart's defaults (its images), with the values the instance was given.
    const upgraded = (await cluster.request('GET', `/apis/apps/v1/namespaces/${NS}/deployments/vdu1-${release}`)).json;
    expect(upgraded.spec.template.spec.containers[0].image).toBe('docker.io/library/nginx:1.27-alpine');
    expect(JSON.parse((await helm('get', 'values', release, '--namespace', NS, '-o', 'json')).stdout)).toMatchObject({ service: { port: 8080 }, vdu1: { replicaCount: 1 } });

    await run(vnf, 'terminate', req('terminate.json'));
    expect((await helmList()).map((r) => r.name)).not.toContain(release);
    expect(await replicas(`vdu1-${release}`)).toBeUndefined();
    expect((await deps.store.instances.get(vnf.id)).instantiationState).toBe('NOT_INSTANTIATED');
  }, 300_000);
});

describe('the Helm planner, Tacker v1 request on a VIM with extra.use_helm', () => {
  it('instantiate, scale, a failed scale rolled back by helm rollback, terminate', async () => {
    const vnf = await create('v1');
    const body = req('instantiate-v1.json', (b) => (b.vimConnectionInfo = { vim1: { vimId: 'sandbox-helm', vimType: 'kubernetes' } }));
    delete body.additionalParams.use_helm;
    // The VIM's extra.use_helm alone makes it Helm's, even without use_helm in the request.
    expect(await claimsHelm(deps, await deps.store.instances.get(vnf.id), { vimConnectionInfo: body.vimConnectionInfo })).toBe(true);
    await run(vnf, 'instantiate', body);
    let i = await agrees(vnf.id, 'helm-cnf-0.1.0');
    expect(i.instantiatedVnfInfo!.metadata).toMatchObject({ release_name: 'helm-cnf', revision: 1, helm_replica_values: { vdu1_aspect: 'vdu1.replicaCount' } });

    await run(vnf, 'scale', { type: 'SCALE_OUT', aspectId: 'vdu2_aspect' });
    i = await agrees(vnf.id, 'helm-cnf-0.1.0');
    expect(await replicas('vdu2-helm-cnf')).toBe(2);

    const lift = await cluster.neverReady({ kind: 'Deployment', name: 'vdu1-helm-cnf' });
    const abort = new AbortController();
    const fresh = await deps.store.instances.get(vnf.id);
    const failing = runOperation(deps, fresh, () => helmPlanner.scale(deps, fresh, { type: 'SCALE_OUT', aspectId: 'vdu1_aspect' }, 'request.json', false, opts()), {
      ...opts(),
      signal: abort.signal,
      onEvent: (e) => {
        if (e.type === 'driver' && /vdu1-helm-cnf/.test(e.event.resource?.name ?? '') && /waiting/.test(e.event.message)) abort.abort(new Error('stop'));
      },
    });
    await expect(failing).rejects.toThrow();
    const op = (await deps.store.opOccs.list({ vnfInstanceId: vnf.id })).find((o) => o.operationState === 'FAILED_TEMP')!;
    expect((await helmList()).find((r) => r.name === 'helm-cnf')).toMatchObject({ revision: '3' });
    await lift();
    const back = await rollback(op.id);
    expect(back.opOcc.operationState).toBe('ROLLED_BACK');
    expect(lines.join('\n')).toMatch(/rolled back to revision 2/);
    i = await agrees(vnf.id, 'helm-cnf-0.1.0');
    expect(i.instantiatedVnfInfo!.metadata.revision).toBe(4);
    expect(await replicas('vdu1-helm-cnf')).toBe(1);

    await run(vnf, 'terminate', {});
    expect((await helmList()).map((r) => r.name)).not.toContain('helm-cnf');
  }, 300_000);
});

describe('Helm requests refused before anything changes', () => {
  it('a chart path the package does not have', async () => {
    const vnf = await create('bad-path');
    const err = await run(
      vnf,
      'instantiate',
      req('instantiate.json', (b) => (b.additionalParams.helm_chart_path = 'Files/kubernetes/other-0.1.0.tgz')),
    ).catch((e) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toMatch(/additionalParams\.helm_chart_path: "Files\/kubernetes\/other-0\.1\.0\.tgz" is not a Helm chart of the package/);
    expect(err.exitCode).toBe(2);
    expect(await deps.store.opOccs.list({ vnfInstanceId: vnf.id })).toEqual([]);
  }, 300_000);

  it('a replica value the chart does not read: nothing installed', async () => {
    const vnf = await create('bad-value');
    const err = await run(
      vnf,
      'instantiate',
      req('instantiate.json', (b) => (b.additionalParams.helm_value_names.VDU1.replica = 'replicaCount')),
    ).catch((e) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toMatch(/helm_value_names\.VDU1\.replica: "replicaCount" is not a value the chart/);
    expect((await helmList()).map((x) => x.name)).not.toContain(`vnf${vnf.id.replace(/-/g, '')}`);
  }, 300_000);

  it('a scale of a VDU without a replica value fails before touching the release', async () => {
    const vnf = await create('no-value');
    await run(
      vnf,
      'instantiate',
      req('instantiate.json', (b) => delete b.additionalParams.helm_value_names.VDU2),
    );
    const before = await agrees(vnf.id, 'helm-cnf-0.1.0');
    const err = await run(vnf, 'scale', { type: 'SCALE_OUT', aspectId: 'vdu2_aspect' }).catch((e) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toMatch(/helm_value_names\.VDU2\.replica/);
    const after = await agrees(vnf.id, 'helm-cnf-0.1.0');
    expect(after.instantiatedVnfInfo!.metadata.revision).toBe(before.instantiatedVnfInfo!.metadata.revision);
    await run(vnf, 'terminate', {});
  }, 300_000);

  it('a release name already used in the namespace: refused, the other release untouched', async () => {
    const chart = join(dir, 'chart');
    cpSync(join(SAMPLE, 'package/Files/kubernetes/helm-cnf'), chart, { recursive: true });
    expect((await helm('install', 'taken', chart, '--namespace', NS)).code).toBe(0);
    const vnf = await create('taken');
    const err = await run(
      vnf,
      'instantiate',
      req('instantiate-v1.json', (b) => (b.additionalParams.using_helm_install_param[0].helmreleasename = 'taken')),
    ).catch((e) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err.message).toMatch(/a Helm release taken already exists in namespace/);
    expect((await helmList()).find((x) => x.name === 'taken')).toMatchObject({ revision: '1', status: 'deployed' });
    expect(await deps.store.opOccs.list({ vnfInstanceId: vnf.id })).toEqual([]);
    await helm('uninstall', 'taken', '--namespace', NS);
  }, 300_000);
});
