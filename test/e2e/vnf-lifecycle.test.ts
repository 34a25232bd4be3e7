/**
 * The real program runs the basic CNF sample's whole life against a
 * Kubernetes API over HTTPS (the sandbox, and in the real API server tier a
 * real kube-apiserver with its controllers), and recovers from a vnfm
 * process killed mid-instantiate by retry and by rollback.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { BIN, newHome, vnfm, okWith } from '../support/cli.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');

let cluster: E2eCluster;
let home: string;
let vimConfig: string;
let requests: string;
/** The namespace the instances deploy into. */
let NS: string;

/** A request of the sample, with its namespace set to this file's (as is on the sandbox's `default`). */
const REQ = (name: string) => join(requests, name);

function writeRequests(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(join(SAMPLE, 'requests'))) {
    const body = JSON.parse(readFileSync(join(SAMPLE, 'requests', f), 'utf8')) as { additionalParams?: { namespace?: string } };
    if (body.additionalParams?.namespace !== undefined) body.additionalParams.namespace = NS;
    writeFileSync(join(dir, f), JSON.stringify(body, null, 2));
  }
}

/** Objects of an instance in the cluster, by its label, as `Kind/name`. */
async function objectsOf(instanceId: string): Promise<string[]> {
  const paths = [`/api/v1/namespaces/${NS}/configmaps`, `/api/v1/namespaces/${NS}/services`, `/apis/apps/v1/namespaces/${NS}/deployments`];
  const names: string[] = [];
  for (const path of paths) {
    const r = await cluster.request('GET', `${path}?labelSelector=${encodeURIComponent(`vnfm/vnf-instance-id=${instanceId}`)}`);
    if (r.status !== 200) throw new Error(`GET ${path}: HTTP ${r.status}: ${r.text}`);
    const list = r.json as { kind: string; items: { metadata: { name: string } }[] };
    names.push(...list.items.map((i) => `${list.kind.replace(/List$/, '')}/${i.metadata.name}`));
  }
  return names.sort();
}

/** Whether vnfm's progress says it waits for Deployment `name` with none of its replicas ready. */
const waitingFor = (name: string, stderr: string): boolean => stderr.includes(`Deployment/${name} (${NS}): waiting for 0/1 replicas ready`);

const json = <T = Record<string, unknown>>(out: string) => JSON.parse(out) as T;

const ok = okWith((args) => vnfm(args, { home }));

async function createInstance(name: string): Promise<string> {
  return json<{ id: string }>((await ok(['vnf-create', '--package', 'basic-cnf', '--name', name, '-o', 'json'])).stdout).id;
}

/** Starts vnf-instantiate and kills it (SIGKILL) once it waits for the never-ready vdu2. */
function instantiateAndKill(vnf: string): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, 'vnf-instantiate', vnf, '--request-file', REQ('instantiate.json')], {
      env: { PATH: process.env['PATH'], HOME: home.replace(/\/home$/, ''), VNFM_HOME: home } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (waitingFor('vdu2', stderr)) child.kill('SIGKILL');
    });
    child.on('error', fail);
    child.on('exit', (_code, signal) => (signal === 'SIGKILL' ? done() : fail(new Error(`vnf-instantiate was not killed mid-way: ${stderr}`))));
  });
}

beforeAll(async () => {
  cluster = await e2eCluster('e2e-lcm', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  NS = cluster.namespace;
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-lcm-e2e-'));
  vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, NS);
  requests = join(dir, 'requests');
  writeRequests(requests);
  home = newHome();
  await ok(['vim-register', '--config-file', vimConfig, 'sandbox']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package-v2'), '--name', 'basic-cnf-v2']);
});

afterAll(async () => {
  await cluster?.close();
});

describe('the basic CNF through its whole life', () => {
  it('create, instantiate, show, scale out and in, heal, change package, terminate, delete', async () => {
    const vnf = await createInstance('web');
    expect(json((await ok(['vnfpkg-show', 'basic-cnf', '-o', 'json'])).stdout)['usageState']).toBe('IN_USE');

    const inst = await ok(['vnf-instantiate', 'web', '--request-file', REQ('instantiate.json'), '-o', 'json']);
    expect(json(inst.stdout)).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED', vnfInstanceId: vnf });
    expect(inst.stderr).toContain(`Deployment/vdu1 (${NS}): ready`);
    expect(await objectsOf(vnf)).toEqual(['ConfigMap/basic-cnf-content', 'Deployment/vdu1', 'Deployment/vdu2', 'Service/basic-cnf-web']);

    const shown = await ok(['vnf-show', 'web']);
    expect(shown.stdout).toMatch(/instantiationState\s+INSTANTIATED/);
    expect(shown.stdout).toMatch(/scaleStatus\s+vdu1_aspect=0\/2, vdu2_aspect=0\/1/);
    expect(shown.stdout).toMatch(/VDU1-vdu1-\S+\s+VDU1\s+vdu1-\S+\s+STARTED\s+Deployment\/vdu1/);

    const out = json<{ resourceChanges: { affectedVnfcs: { changeType: string }[] } }>(
      (await ok(['vnf-scale', 'web', '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect', '-o', 'json'])).stdout,
    );
    expect(out.resourceChanges.affectedVnfcs.map((a) => a.changeType)).toEqual(['ADDED']);
    const beyond = await vnfm(['vnf-scale', 'web', '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect', '--number-of-steps', '2'], { home });
    expect(beyond.code).toBe(2);
    expect(beyond.stderr).toMatch(/numberOfSteps: .*beyond its max_scale_level 2/);

    const info = json<{ instantiatedVnfInfo: { vnfcInfo: { id: string }[] } }>((await ok(['vnf-show', 'web', '-o', 'json'])).stdout).instantiatedVnfInfo;
    expect(info.vnfcInfo).toHaveLength(3);
    const healed = json<{ resourceChanges: { affectedVnfcs: { id: string; changeType: string }[] } }>(
      (await ok(['vnf-heal', 'web', '--vnfc-instance', info.vnfcInfo[0]!.id, '-o', 'json'])).stdout,
    );
    expect(healed.resourceChanges.affectedVnfcs).toContainEqual(expect.objectContaining({ id: info.vnfcInfo[0]!.id, changeType: 'REMOVED' }));

    await ok(['vnf-scale', 'web', '--type', 'SCALE_IN', '--aspect-id', 'vdu1_aspect']);
    const changed = await ok(['vnf-change-package', 'web', '--request-file', REQ('change-package.json'), '-o', 'json']);
    expect(json(changed.stdout)['operationState']).toBe('COMPLETED');
    expect(json((await ok(['vnf-show', 'web', '-o', 'json'])).stdout)).toMatchObject({ vnfSoftwareVersion: '2.0' });
    expect(json((await ok(['vnfpkg-show', 'basic-cnf', '-o', 'json'])).stdout)['usageState']).toBe('NOT_IN_USE');

    const refused = await vnfm(['vnf-terminate', 'web'], { home });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--yes/);
    await ok(['vnf-terminate', 'web', '--yes', '--graceful-termination-timeout', '0']);
    expect(await objectsOf(vnf)).toEqual([]);
    await ok(['vnf-delete', 'web', '--yes']);
    expect(json((await ok(['vnfpkg-show', 'basic-cnf-v2', '-o', 'json'])).stdout)['usageState']).toBe('NOT_IN_USE');
    expect(json((await ok(['op-list', '-o', 'json'])).stdout)).toEqual([]);
  });
});

describe('two vnfm processes on one instance', () => {
  it('the second is refused while the first runs, naming its pid, host and operation; op-fail --force is refused too', async () => {
    const vnf = await createInstance('raced');
    await ok(['vnf-instantiate', 'raced', '--request-file', REQ('instantiate.json')]);
    const lift = await cluster.neverReady({ kind: 'Deployment', name: 'vdu1' });
    const first = spawn(process.execPath, [BIN, 'vnf-scale', 'raced', '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect'], {
      env: { PATH: process.env['PATH'], HOME: home.replace(/\/home$/, ''), VNFM_HOME: home } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    await new Promise<void>((waiting) =>
      first.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (stderr.includes(`Deployment/vdu1 (${NS}): waiting`)) waiting();
      }),
    );
    const second = await vnfm(['vnf-heal', 'raced'], { home });
    expect(second.code).toBe(4);
    const [running] = json<{ id: string }[]>((await ok(['op-list', '--vnf', vnf, '--state', 'PROCESSING', '-o', 'json'])).stdout);
    expect(second.stderr).toMatch(new RegExp(`vnf instance ${vnf} is locked by vnfm pid ${first.pid} on host \\S+ since \\S+ \\(operation SCALE, occurrence ${running!.id}\\)`));
    const forced = await vnfm(['op-fail', '--force', '--yes', running!.id], { home });
    expect(forced.code).toBe(4);
    expect(forced.stderr).toContain(`locked by vnfm pid ${first.pid}`);
    expect(forced.stderr).toMatch(/and that process is running/);
    const exited = new Promise<number | null>((done) => first.on('exit', done));
    await lift();
    expect(await exited).toBe(0);
    await ok(['vnf-terminate', 'raced', '--yes']);
  });
});

describe('a vnfm killed mid-instantiate', () => {
  it('leaves a stale lock the next command turns into FAILED_TEMP, which blocks until op-retry completes it', async () => {
    const vnf = await createInstance('killed-retry');
    const lift = await cluster.neverReady({ kind: 'Deployment', name: 'vdu2' });
    await instantiateAndKill('killed-retry');

    const blocked = await vnfm(['vnf-scale', 'killed-retry', '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect'], { home });
    expect(blocked.code).toBe(4);
    expect(blocked.stderr).toMatch(/has a FAILED_TEMP INSTANTIATE occurrence/);
    const ops = json<{ id: string; operationState: string; error: { detail: string } }[]>(
      (await ok(['op-list', '--vnf', vnf, '-o', 'json', '--fields', 'error', '--exclude-default'])).stdout,
    );
    expect(ops).toHaveLength(1);
    expect(ops[0]).toMatchObject({
      operationState: 'FAILED_TEMP',
      error: {
        detail: expect.stringMatching(/vnfm process \(pid \d+ on host \S+\) running this INSTANTIATE stopped before finishing it \(killed or crashed: no process has pid \d+\)/),
      },
    });
    const again = await vnfm(['vnf-instantiate', 'killed-retry', '--request-file', REQ('instantiate.json')], { home });
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(new RegExp(`FAILED_TEMP INSTANTIATE occurrence \\(${ops[0]!.id}\\)`));
    expect(again.stderr).toMatch(/hint: retry it: vnfm op-retry/);

    await lift();
    const retried = await ok(['op-retry', ops[0]!.id.slice(0, 8), '-o', 'json']);
    expect(json(retried.stdout)).toMatchObject({ id: ops[0]!.id, operationState: 'COMPLETED' });
    expect(await objectsOf(vnf)).toHaveLength(4);
    await ok(['vnf-terminate', 'killed-retry', '--yes', '--termination-type', 'FORCEFUL']);
  });

  it('op-rollback leaves no object of the instance in the cluster', async () => {
    const vnf = await createInstance('killed-rollback');
    const lift = await cluster.neverReady({ kind: 'Deployment', name: 'vdu2' });
    await instantiateAndKill('killed-rollback');
    await lift();
    const [op] = json<{ id: string; operationState: string }[]>((await ok(['op-list', '--vnf', vnf, '--state', 'FAILED_TEMP', '-o', 'json'])).stdout);
    expect(await objectsOf(vnf)).not.toEqual([]);
    const rolled = await ok(['op-rollback', op!.id, '-o', 'json']);
    expect(json(rolled.stdout)).toMatchObject({ operationState: 'ROLLED_BACK' });
    expect(await objectsOf(vnf)).toEqual([]);
    expect(json((await ok(['vnf-show', vnf, '-o', 'json'])).stdout)['instantiationState']).toBe('NOT_INSTANTIATED');
    await ok(['vnf-delete', vnf, '--yes']);
  });

  it('Ctrl-C (SIGINT) ends FAILED_TEMP with exit 130 and releases the lock', async () => {
    const vnf = await createInstance('interrupted');
    const lift = await cluster.neverReady({ kind: 'Deployment', name: 'vdu2' });
    const child = spawn(process.execPath, [BIN, 'vnf-instantiate', 'interrupted', '--request-file', REQ('instantiate.json')], {
      env: { PATH: process.env['PATH'], HOME: home.replace(/\/home$/, ''), VNFM_HOME: home } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const exited = new Promise<number | null>((done) => child.on('exit', done));
    let sent = false;
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (!sent && waitingFor('vdu2', stderr)) sent = child.kill('SIGINT');
    });
    expect(await exited).toBe(130);
    await lift();
    expect(stderr).toMatch(/INSTANTIATE of vnf instance .* interrupted; occurrence .* is FAILED_TEMP/);
    const [op] = json<{ id: string; error: { title: string } }[]>((await ok(['op-list', '--vnf', vnf, '-o', 'json', '--fields', 'error', '--exclude-default'])).stdout);
    expect(op).toMatchObject({ operationState: 'FAILED_TEMP', error: { title: 'Interrupted' } });
    expect(json((await ok(['op-rollback', op!.id, '-o', 'json'])).stdout)['operationState']).toBe('ROLLED_BACK');
    expect(await objectsOf(vnf)).toEqual([]);
  });

  it('SIGTERM ends FAILED_TEMP with exit 143, saying so and what to do, and releases the lock', async () => {
    const vnf = await createInstance('terminated');
    const lift = await cluster.neverReady({ kind: 'Deployment', name: 'vdu2' });
    const child = spawn(process.execPath, [BIN, 'vnf-instantiate', 'terminated', '--request-file', REQ('instantiate.json')], {
      env: { PATH: process.env['PATH'], HOME: home.replace(/\/home$/, ''), VNFM_HOME: home } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((done) => child.on('exit', (code, signal) => done([code, signal])));
    let sent = false;
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (!sent && waitingFor('vdu2', stderr)) sent = child.kill('SIGTERM');
    });
    expect(await exited).toEqual([143, null]);
    await lift();
    const [op] = json<{ id: string; error: { title: string } }[]>((await ok(['op-list', '--vnf', vnf, '-o', 'json', '--fields', 'error', '--exclude-default'])).stdout);
    expect(stderr).toContain(`error: INSTANTIATE of vnf instance ${vnf} terminated (SIGTERM); occurrence ${op!.id} is FAILED_TEMP`);
    expect(stderr).toContain(`hint: retry it: vnfm op-retry ${op!.id}; or undo it: vnfm op-rollback ${op!.id}; or give up on it: vnfm op-fail ${op!.id}`);
    expect(op).toMatchObject({ operationState: 'FAILED_TEMP', error: { title: 'Terminated' } });
    expect(json((await ok(['op-rollback', op!.id, '-o', 'json'])).stdout)['operationState']).toBe('ROLLED_BACK');
    expect(await objectsOf(vnf)).toEqual([]);
  });

  it('a --timeout ends FAILED_TEMP with exit 124, and op-fail frees the instance', async () => {
    const vnf = await createInstance('slow');
    const lift = await cluster.neverReady({ kind: 'Deployment', name: 'vdu2' });
    const r = await vnfm(['vnf-instantiate', 'slow', '--request-file', REQ('instantiate.json'), '--timeout', '8s', '-o', 'json'], { home });
    await lift();
    expect(r.code).toBe(124);
    expect(r.stderr).toMatch(
      /INSTANTIATE of vnf instance .* timed out after 8s while waiting for Deployment vdu2 in namespace \S+ \(waiting for [^)]*\)\. Not ready: Deployment vdu2 in namespace \S+: pod vdu2-\S+ \(.*\); occurrence .* is FAILED_TEMP/,
    );
    const op = json<{ id: string; operationState: string; error: { status: number } }>(r.stdout);
    expect(op).toMatchObject({ operationState: 'FAILED_TEMP', error: { status: 504 } });
    expect(json((await ok(['op-fail', op.id, '-o', 'json'])).stdout)['operationState']).toBe('FAILED');
    const rollback = await vnfm(['op-rollback', op.id], { home });
    expect(rollback.code).toBe(4);
    await ok(['vnf-instantiate', 'slow', '--request-file', REQ('instantiate.json')]);
    await ok(['vnf-terminate', 'slow', '--yes']);
  });

  it('refuses bad requests with exit 2 naming the field, before anything changes', async () => {
    const vnf = await createInstance('bad');
    const dir = mkdtempSync(join(tmpdir(), 'vnfm-req-'));
    const file = join(dir, 'req.json');
    writeFileSync(file, JSON.stringify({ flavourId: 'simple', additionalParams: { 'lcm-kubernetes-def-files': ['Files/kubernetes/missing.yaml'] } }));
    const r = await vnfm(['vnf-instantiate', 'bad', '--request-file', file], { home });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/req\.json: additionalParams\.lcm-kubernetes-def-files\[0\]: "Files\/kubernetes\/missing\.yaml" is not a file of the package/);
    writeFileSync(file, JSON.stringify({ flavourId: 'simple', vimConnectionInfo: { vim1: { vimId: 'elsewhere' } } }));
    expect((await vnfm(['vnf-instantiate', 'bad', '--request-file', file], { home })).stderr).toMatch(/vimConnectionInfo\.vim1\.vimId: no VIM "elsewhere"/);
    expect(json((await ok(['op-list', '--vnf', vnf, '-o', 'json'])).stdout)).toEqual([]);
    expect(await objectsOf(vnf)).toEqual([]);
  });
});

describe('a VIM in use', () => {
  it('cannot be deleted while an instance runs on it; after terminate it can', async () => {
    const id = await createInstance('vim-user');
    await ok(['vnf-instantiate', id, '--request-file', REQ('instantiate.json')]);
    const refused = await vnfm(['vim-delete', '--yes', 'sandbox'], { home });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/vim "sandbox" is used by 1 VNF instance\(s\): vim-user/);
    expect(refused.stderr).toMatch(/hint: terminate those instances first/);
    expect(json<unknown[]>((await ok(['vim-list', '-o', 'json'])).stdout)).toHaveLength(1);
    await ok(['vnf-terminate', id, '--yes']);
    await ok(['vnf-delete', id, '--yes']);
  });
});
