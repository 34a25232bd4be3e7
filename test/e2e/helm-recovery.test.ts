/**
 * A Helm CNF whose helm is killed mid-upgrade, with the real program and the
 * real helm on the sandbox: the release is left pending-upgrade and the
 * occurrence FAILED_TEMP; op-retry brings the release back (helm rollback to
 * its last deployed revision) and runs the step again, op-rollback rolls it
 * back to the revision the instance records; `helm list` agrees with
 * vnf-show after each. And the release's namespace, checked as for a
 * manifest CNF: a missing one is refused before anything is recorded (exit
 * 6), created (labelled managed-by vnfm) only when the request asks.
 *
 * helm is held mid-upgrade by the sandbox answering its PATCH of a
 * Deployment 429 with a long Retry-After (Helm's client waits and asks
 * again), after Helm has written the pending release; the test then kills
 * that helm process (SIGKILL), found through a wrapper script given to vnfm
 * as VNFM_HELM that records each helm process's pid and subcommand.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderKubeconfig } from '@vnfm/kube-sandbox';
import { BIN, newHome, okWith, vnfm } from '../support/cli.js';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { helmPath, listReleases, runHelm } from '../support/helm.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/helm-cnf');

let cluster: E2eCluster;
let home: string;
let dir: string;
let kubeconfig: string;
let wrapper: string;
let pidLog: string;
let NS: string;

const json = <T = Record<string, unknown>>(out: string) => JSON.parse(out) as T;
const env = () => ({ VNFM_HELM: wrapper });
const run = (args: string[]) => vnfm(args, { home, env: env() });

const ok = okWith(run);
const helm = (...args: string[]) => runHelm(kubeconfig, dir, args);
const helmList = (namespace = NS) => listReleases(kubeconfig, dir, namespace);

async function history(release: string): Promise<{ revision: number; status: string }[]> {
  const r = await helm('history', release, '--namespace', NS, '-o', 'json');
  return r.code === 0 ? json<{ revision: number; status: string }[]>(r.stdout) : [];
}

interface Shown {
  instantiationState: string;
  instantiatedVnfInfo?: {
    scaleStatus: { aspectId: string; scaleLevel: number }[];
    vnfcInfo: { vduId: string }[];
    metadata: { release_name: string; revision: number; namespace: string; vduReplicas: Record<string, number> };
  };
}

const show = async (vnf: string) => json<Shown>((await ok(['vnf-show', vnf, '-o', 'json'])).stdout);

/** `helm list` agrees with vnf-show: the release deployed at the revision the instance records. */
async function agrees(vnf: string): Promise<Shown> {
  const shown = await show(vnf);
  const m = shown.instantiatedVnfInfo!.metadata;
  const release = (await helmList(m.namespace)).find((r) => r.name === m.release_name);
  expect(release, `helm list has release ${m.release_name}`).toBeDefined();
  expect(release).toMatchObject({ namespace: m.namespace, revision: String(m.revision), status: 'deployed', chart: 'helm-cnf-0.1.0' });
  return shown;
}

async function replicas(name: string): Promise<number | undefined> {
  const r = await cluster.request('GET', `/apis/apps/v1/namespaces/${NS}/deployments/${name}`);
  return r.status === 200 ? (r.json as { spec: { replicas: number } }).spec.replicas : undefined;
}

/** A copy of the sample's request, its namespace set to `namespace` (default this file's). */
function request(name: string, edit?: (body: Record<string, any>) => void): string {
  const body = json<Record<string, any>>(readFileSync(join(SAMPLE, 'requests', name), 'utf8'));
  if (body.additionalParams?.namespace !== undefined) body.additionalParams.namespace = NS;
  edit?.(body);
  const path = join(dir, 'requests', `${name.replace(/\.json$/, '')}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(body, null, 2));
  return path;
}

async function create(name: string): Promise<string> {
  return json<{ id: string }>((await ok(['vnf-create', '--package', 'helm-cnf', '--name', name, '-o', 'json'])).stdout).id;
}

/** Resolves once `check` holds, asking again each time the sandbox changes or 50 ms pass. */
async function until(what: string, check: () => Promise<boolean>, exited: () => boolean): Promise<void> {
  while (!(await check())) {
    if (exited()) throw new Error(`vnfm ended before ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Runs vnfm `args` while the sandbox holds helm's write (`method`) of
 * Deployment `deployment`, kills that helm `subcommand` (SIGKILL) once the
 * release's last revision is `pending`, and returns how vnfm ended.
 */
async function killedMidway(
  args: string[],
  held: { release: string; deployment: string; method: 'PATCH' | 'POST'; subcommand: 'upgrade' | 'install'; pending: string },
): Promise<{ code: number | null; stderr: string }> {
  const path = `/apis/apps/v1/namespaces/${NS}/deployments${held.method === 'PATCH' ? `/${held.deployment}` : ''}`;
  const lift = cluster.sandbox!.faults.failRequests({ status: 429, method: held.method, path, retryAfterSeconds: 600 });
  writeFileSync(pidLog, '');
  try {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env['PATH'], HOME: home.replace(/\/home$/, ''), VNFM_HOME: home, ...env() } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const ended = new Promise<number | null>((done, fail) => {
      child.on('error', fail);
      child.on('close', (code) => done(code));
    });
    let exited = false;
    void ended.then(() => (exited = true));
    await until(
      `helm left the release ${held.pending}`,
      async () => (await history(held.release)).at(-1)?.status === held.pending,
      () => exited,
    );
    const helmRun = () =>
      readFileSync(pidLog, 'utf8')
        .split('\n')
        .find((l) => l.endsWith(` ${held.subcommand}`));
    await until(
      `the helm ${held.subcommand} was recorded`,
      async () => helmRun() !== undefined,
      () => exited,
    );
    process.kill(Number(helmRun()!.split(' ')[0]), 'SIGKILL');
    return { code: await ended, stderr };
  } finally {
    lift();
  }
}

const scaleOutKilled = (vnf: string, release: string) =>
  killedMidway(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect'], {
    release,
    deployment: `vdu1-${release}`,
    method: 'PATCH',
    subcommand: 'upgrade',
    pending: 'pending-upgrade',
  });

beforeAll(async () => {
  cluster = await e2eCluster('e2e-helm-recovery', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  NS = cluster.namespace;
  dir = mkdtempSync(join(tmpdir(), 'vnfm-helm-recovery-'));
  mkdirSync(join(dir, 'requests'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, renderKubeconfig({ url: cluster.server, token: cluster.token, caPem: cluster.caPem }, NS), { mode: 0o600 });
  // helm as vnfm runs it, each process's pid and subcommand recorded (exec keeps the pid).
  pidLog = join(dir, 'helm-pids');
  wrapper = join(dir, 'helm-wrapper');
  writeFileSync(wrapper, `#!/bin/sh\necho "$$ $1" >> '${pidLog}'\nexec '${helmPath()}' "$@"\n`);
  chmodSync(wrapper, 0o755);
  home = newHome();
  const vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, NS);
  await ok(['vim-register', '--config-file', vimConfig, '--is-default', 'sandbox']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'helm-cnf']);
});

afterAll(async () => {
  await cluster?.close();
});

// Two steps on one instance, in order: the second starts from the revision the first left.
describe('helm killed mid-upgrade', () => {
  let vnf: string;
  let release: string;

  beforeAll(async () => {
    vnf = await create('killed');
    release = `vnf${vnf.replace(/-/g, '')}`;
    await ok(['vnf-instantiate', vnf, '--request-file', request('instantiate.json')]);
    expect((await agrees(vnf)).instantiatedVnfInfo!.metadata.revision).toBe(1);
  }, 300_000);

  it('leaves the occurrence FAILED_TEMP and the release pending-upgrade; op-retry rolls the release back to revision 1, then scales', async () => {
    const killed = await scaleOutKilled(vnf, release);
    expect(killed.code).not.toBe(0);
    expect(killed.stderr).toMatch(/helm was killed by SIGKILL/);
    expect(killed.stderr).toMatch(/hint: .*vnfm op-retry rolls it back to its last deployed revision/);
    expect(await history(release)).toEqual([expect.objectContaining({ revision: 1, status: 'deployed' }), expect.objectContaining({ revision: 2, status: 'pending-upgrade' })]);
    const op = json<{ id: string; operation: string }[]>((await ok(['op-list', '--vnf', vnf, '--state', 'FAILED_TEMP', '-o', 'json'])).stdout)[0]!;
    expect(op.operation).toBe('SCALE');

    const retried = await ok(['op-retry', op.id, '-o', 'json']);
    expect(json(retried.stdout)).toMatchObject({ operationState: 'COMPLETED' });
    expect(retried.stderr).toMatch(/left pending-upgrade at revision 2 by a helm run that did not finish: rolled back to revision 1/);
    const shown = await agrees(vnf);
    // 2 pending, 3 the rollback to 1, 4 the scale.
    expect(shown.instantiatedVnfInfo!.metadata).toMatchObject({ revision: 4, vduReplicas: { VDU1: 2, VDU2: 1 } });
    expect(shown.instantiatedVnfInfo!.scaleStatus).toContainEqual({ aspectId: 'vdu1_aspect', scaleLevel: 1 });
    expect(shown.instantiatedVnfInfo!.vnfcInfo.filter((v) => v.vduId === 'VDU1')).toHaveLength(2);
    expect(await replicas(`vdu1-${release}`)).toBe(2);
    // Helm leaves the abandoned revision as it was: only the last one decides what helm allows next.
    expect((await history(release)).map((r) => r.status)).toEqual(['superseded', 'pending-upgrade', 'superseded', 'deployed']);
  }, 300_000);

  it('op-rollback of the killed step: helm rollback of the pending release to the revision the instance records', async () => {
    const killed = await scaleOutKilled(vnf, release);
    expect(killed.code).not.toBe(0);
    expect((await history(release)).at(-1)).toMatchObject({ revision: 5, status: 'pending-upgrade' });
    const op = json<{ id: string }[]>((await ok(['op-list', '--vnf', vnf, '--state', 'FAILED_TEMP', '-o', 'json'])).stdout)[0]!;

    const back = await ok(['op-rollback', op.id, '-o', 'json']);
    expect(json(back.stdout)).toMatchObject({ operationState: 'ROLLED_BACK' });
    expect(back.stderr).toMatch(/rolled back to revision 4/);
    const shown = await agrees(vnf);
    expect(shown.instantiatedVnfInfo!.metadata).toMatchObject({ revision: 6, vduReplicas: { VDU1: 2, VDU2: 1 } });
    expect(shown.instantiatedVnfInfo!.scaleStatus).toContainEqual({ aspectId: 'vdu1_aspect', scaleLevel: 1 });
    expect(await replicas(`vdu1-${release}`)).toBe(2);

    await ok(['vnf-terminate', vnf, '--yes']);
    expect((await helmList()).map((r) => r.name)).not.toContain(release);
    expect(await replicas(`vdu1-${release}`)).toBeUndefined();
  }, 300_000);
});

describe('helm killed mid-install', () => {
  it('op-retry uninstalls the release left pending-install (it never had a deployed revision), then installs it', async () => {
    const vnf = await create('killed-install');
    const release = `vnf${vnf.replace(/-/g, '')}`;
    const killed = await killedMidway(['vnf-instantiate', vnf, '--request-file', request('instantiate.json')], {
      release,
      deployment: `vdu1-${release}`,
      method: 'POST',
      subcommand: 'install',
      pending: 'pending-install',
    });
    expect(killed.code).not.toBe(0);
    expect(await history(release)).toEqual([expect.objectContaining({ revision: 1, status: 'pending-install' })]);
    const op = json<{ id: string; operation: string }[]>((await ok(['op-list', '--vnf', vnf, '--state', 'FAILED_TEMP', '-o', 'json'])).stdout)[0]!;
    expect(op.operation).toBe('INSTANTIATE');

    const retried = await ok(['op-retry', op.id, '-o', 'json']);
    expect(json(retried.stdout)).toMatchObject({ operationState: 'COMPLETED' });
    expect(retried.stderr).toMatch(/left pending-install at revision 1 by a helm run that did not finish: uninstalling it/);
    const shown = await agrees(vnf);
    expect(shown.instantiatedVnfInfo!.metadata.revision).toBe(1);
    expect(await replicas(`vdu1-${release}`)).toBe(1);
    await ok(['vnf-terminate', vnf, '--yes']);
    expect((await helmList()).map((r) => r.name)).not.toContain(release);
  }, 300_000);
});

describe('helm killed mid-install, then op-rollback', () => {
  it('uninstalls the pending-install release and waits until its objects are gone', async () => {
    const vnf = await create('killed-install-back');
    const release = `vnf${vnf.replace(/-/g, '')}`;
    const killed = await killedMidway(['vnf-instantiate', vnf, '--request-file', request('instantiate.json')], {
      release,
      deployment: `vdu1-${release}`,
      method: 'POST',
      subcommand: 'install',
      pending: 'pending-install',
    });
    expect(killed.code).not.toBe(0);
    const op = json<{ id: string }[]>((await ok(['op-list', '--vnf', vnf, '--state', 'FAILED_TEMP', '-o', 'json'])).stdout)[0]!;
    expect((await cluster.request('GET', `/api/v1/namespaces/${NS}/services/web-${release}`)).status).toBe(200);

    const back = await ok(['op-rollback', op.id, '-o', 'json']);
    expect(json(back.stdout)).toMatchObject({ operationState: 'ROLLED_BACK' });
    expect(back.stderr).toMatch(/uninstalled/);
    expect((await helmList()).map((r) => r.name)).not.toContain(release);
    expect(await history(release)).toEqual([]);
    // What helm had created before it was killed (the ConfigMap and the Service come before the Deployments) is gone.
    expect((await cluster.request('GET', `/api/v1/namespaces/${NS}/services/web-${release}`)).status).toBe(404);
    expect((await cluster.request('GET', `/api/v1/namespaces/${NS}/configmaps/content-${release}`)).status).toBe(404);
    expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
  }, 300_000);
});

describe("the release's namespace", () => {
  const nsPath = (name: string) => `/api/v1/namespaces/${name}`;

  it('a namespace the cluster lacks: exit 6 before anything is recorded or installed', async () => {
    const vnf = await create('no-namespace');
    const r = await run(['vnf-instantiate', vnf, '--request-file', request('instantiate.json', (b) => (b.additionalParams.namespace = 'helm-absent'))]);
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/namespace "helm-absent" does not exist on the cluster of VIM sandbox/);
    expect(r.stderr).toMatch(/vnfm_create_namespace/);
    expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
    expect(json((await ok(['op-list', '--vnf', vnf, '-o', 'json'])).stdout)).toEqual([]);
    expect((await cluster.request('GET', nsPath('helm-absent'))).status).toBe(404);
    expect(await helmList('helm-absent')).toEqual([]);
  }, 300_000);

  it('--create-namespace: created labelled managed-by vnfm, the release installed in it; terminate leaves it', async () => {
    const vnf = await create('made-namespace');
    const r = await ok(['vnf-instantiate', vnf, '--create-namespace', '--request-file', request('instantiate.json', (b) => (b.additionalParams.namespace = 'helm-made'))]);
    expect(r.stderr).toMatch(/Namespace\/helm-made.*created \(vnfm_create_namespace\)/);
    const made = await cluster.request('GET', nsPath('helm-made'));
    expect(made.status).toBe(200);
    expect((made.json as { metadata: { labels: Record<string, string> } }).metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'vnfm' });
    const shown = await agrees(vnf);
    expect(shown.instantiatedVnfInfo!.metadata.namespace).toBe('helm-made');
    await ok(['vnf-terminate', vnf, '--yes']);
    expect(await helmList('helm-made')).toEqual([]);
    expect((await cluster.request('GET', nsPath('helm-made'))).status).toBe(200);
  }, 300_000);

  it('additionalParams.vnfm_create_namespace that is not a boolean: exit 2, nothing recorded', async () => {
    const vnf = await create('bad-flag');
    const r = await run([
      'vnf-instantiate',
      vnf,
      '--request-file',
      request('instantiate.json', (b) => Object.assign(b.additionalParams, { namespace: 'helm-absent', vnfm_create_namespace: 'yes' })),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/additionalParams\.vnfm_create_namespace: "yes" is not true or false/);
    expect(json((await ok(['op-list', '--vnf', vnf, '-o', 'json'])).stdout)).toEqual([]);
  }, 300_000);
});
