/**
 * Request bodies shaped like those Tacker's functional tests send, through
 * the real program on a Kubernetes API with no VIM registered: the VIM given
 * inline (the cluster's endpoint, CA and token in the request) in the v2
 * map. Instantiate, scale, heal (by v2 vnfcInfo ids), retry after a killed
 * vnfm and terminate all reach the cluster with the credentials kept,
 * sealed, with the instance. The v1 array is read as Tacker v1 reads it: an
 * entry without vimId is the default VIM, whatever endpoint and token it
 * carries (a notice says they are not used), one with a vimId that VIM, and
 * a vimId not registered is refused (exit 2); heal takes v1
 * vnfcResourceInfo ids.
 * The request's namespace wins over the manifests' and is used by every
 * operation. A wrong inline token is refused (exit 6) before anything is
 * recorded; a request mixing the v1 and v2 forms is refused (exit 2). A v2
 * inline VIM without ssl_ca_cert, which Tacker uses without TLS
 * verification, takes the CA of a registered VIM with the same endpoint;
 * without one it is refused (exit 6) with the fix, and with
 * --insecure-inline-vims it is used unverified, a warning each time.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { BIN, newHome, vnfm, okWith } from '../support/cli.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf/package');
const DEF_FILES = ['Files/kubernetes/configmap.yaml', 'Files/kubernetes/service.yaml', 'Files/kubernetes/deployment_vdu1.yaml', 'Files/kubernetes/deployment_vdu2.yaml'];

let cluster: E2eCluster;
let home: string;
let dir: string;
let NS: string;

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const json = <T = Record<string, unknown>>(out: string) => JSON.parse(out) as T;

const ok = okWith((args) => vnfm(args, { home }));

function write(name: string, body: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(body, null, 2));
  return path;
}

/** Tacker v2's inline VIM (sol_kubernetes_v2 paramgen shape): endpoint, CA, bearer token, extra. */
const v2Vim = (token: string) => ({
  vim1: {
    vimId: '0b8e0c1a-6e6f-4d2b-9a43-9c1c2d3e4f50',
    vimType: 'ETSINFV.KUBERNETES.V_1',
    interfaceInfo: { endpoint: cluster.server, ssl_ca_cert: cluster.caPem },
    accessInfo: { bearer_token: token },
    extra: { 'dummy-key': 'dummy-val' },
  },
});

/** SOL003 2.6.1's array with a vimId no VIM has and a VIM's endpoint and token beside it: Tacker v1 looks the vimId up, and uses nothing else. */
const v1Vim = (token: string) => [
  {
    id: '7c8f9d0e-1a2b-4c3d-8e9f-0a1b2c3d4e5f',
    vimId: 'b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e',
    vimType: 'kubernetes',
    interfaceInfo: { endpoint: cluster.server, ssl_ca_cert: cluster.caPem },
    accessInfo: { bearer_token: token },
  },
];

const instantiateBody = (vimConnectionInfo: unknown) => ({
  flavourId: 'simple',
  instantiationLevelId: 'instantiation_level_1',
  vimConnectionInfo,
  additionalParams: { 'lcm-kubernetes-def-files': DEF_FILES, namespace: NS },
});

/** Objects of an instance in a namespace, by its label, as `Kind/name`. */
async function objectsOf(instanceId: string, namespace = NS): Promise<string[]> {
  const paths = [`/api/v1/namespaces/${namespace}/configmaps`, `/api/v1/namespaces/${namespace}/services`, `/apis/apps/v1/namespaces/${namespace}/deployments`];
  const names: string[] = [];
  for (const path of paths) {
    const r = await cluster.request('GET', `${path}?labelSelector=${encodeURIComponent(`vnfm/vnf-instance-id=${instanceId}`)}`);
    if (r.status !== 200) throw new Error(`GET ${path}: HTTP ${r.status}: ${r.text}`);
    const list = r.json as { kind: string; items: { metadata: { name: string } }[] };
    names.push(...list.items.map((i) => `${list.kind.replace(/List$/, '')}/${i.metadata.name}`));
  }
  return names.sort();
}

/** Every file under VNFM_HOME, read as text: the token must be in none of them. */
function homeText(): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(readFileSync(p).toString('latin1'));
    }
  };
  walk(home);
  return out.join('\n');
}

beforeAll(async () => {
  cluster = await e2eCluster('e2e-tacker-req', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  NS = cluster.namespace;
  dir = mkdtempSync(join(tmpdir(), 'vnfm-tacker-req-'));
  // The package's Deployments name a namespace of their own, which the request's namespace overrides (as in Tacker).
  const pkg = join(dir, 'package');
  cpSync(SAMPLE, pkg, { recursive: true });
  const metaPath = join(pkg, 'TOSCA-Metadata/TOSCA.meta');
  let meta = readFileSync(metaPath, 'utf8');
  for (const f of ['deployment_vdu1.yaml', 'deployment_vdu2.yaml']) {
    const path = join(pkg, 'Files/kubernetes', f);
    const before = readFileSync(path);
    writeFileSync(path, before.toString('utf8').replace(/^( {2}name: vdu\d)$/m, '$1\n  namespace: written-in-the-manifest'));
    meta = meta.replace(sha256(before), sha256(readFileSync(path)));
  }
  writeFileSync(metaPath, meta);
  home = newHome();
  await ok(['vnfpkg-onboard', pkg, '--name', 'basic-cnf']);
});

afterAll(async () => {
  await cluster?.close();
});

describe('the VIM inline, as Tacker v2 requests give it', () => {
  it('instantiate, scale out and in, heal by vnfcInfo id, terminate: no VIM registered, the token kept only sealed', async () => {
    expect(json((await ok(['vim-list', '-o', 'json'])).stdout)).toEqual([]);
    const vnf = json<{ id: string }>((await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'v2-inline', '-o', 'json'])).stdout).id;
    const inst = await ok(['vnf-instantiate', 'v2-inline', write('v2-instantiate.json', instantiateBody(v2Vim(cluster.token))), '-o', 'json']);
    expect(json(inst.stdout)).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED' });
    // The request's namespace, not the manifests' own.
    expect(await objectsOf(vnf)).toEqual(['ConfigMap/basic-cnf-content', 'Deployment/vdu1', 'Deployment/vdu2', 'Service/basic-cnf-web']);
    expect(await objectsOf(vnf, 'written-in-the-manifest')).toEqual([]);

    const shown = json<{ vimConnectionInfo: Record<string, { interfaceInfo: Record<string, unknown>; extra: unknown }>; instantiatedVnfInfo: { metadata: { namespace: string } } }>(
      (await ok(['vnf-show', 'v2-inline', '-o', 'json'])).stdout,
    );
    expect(shown.instantiatedVnfInfo.metadata.namespace).toBe(NS);
    expect(shown.vimConnectionInfo['vim1']).toMatchObject({ vimType: 'ETSINFV.KUBERNETES.V_1', interfaceInfo: { endpoint: cluster.server }, extra: { 'dummy-key': 'dummy-val' } });
    // What is kept sealed is shown masked, as vim-show masks a VIM's secrets.
    expect(shown.vimConnectionInfo['vim1']).toMatchObject({ accessInfo: { bearer_token: '***' }, interfaceInfo: { ssl_ca_cert: '***' } });
    const showOp = (await ok(['op-show', json<{ id: string }>(inst.stdout).id, '-o', 'json'])).stdout;
    expect(showOp).not.toMatch(/"sealed"|keyId/);

    // Tacker v2's scale body; the VIM comes from the instance.
    write('scale-out.json', { type: 'SCALE_OUT', aspectId: 'vdu1_aspect', numberOfSteps: 1, additionalParams: {} });
    const out = json<{ resourceChanges: { affectedVnfcs: { changeType: string }[] } }>(
      (await ok(['vnf-scale', 'v2-inline', '--request-file', join(dir, 'scale-out.json'), '-o', 'json'])).stdout,
    );
    expect(out.resourceChanges.affectedVnfcs.map((a) => a.changeType)).toEqual(['ADDED']);

    const info = json<{ instantiatedVnfInfo: { vnfcInfo: { id: string; vduId: string }[] } }>((await ok(['vnf-show', 'v2-inline', '-o', 'json'])).stdout).instantiatedVnfInfo;
    const target = info.vnfcInfo.find((v) => v.vduId === 'VDU1')!;
    const healed = json<{ resourceChanges: { affectedVnfcs: { id: string; changeType: string }[] } }>(
      (await ok(['vnf-heal', 'v2-inline', '--request-file', write('heal-v2.json', { vnfcInstanceId: [target.id], additionalParams: {} }), '-o', 'json'])).stdout,
    );
    expect(healed.resourceChanges.affectedVnfcs).toContainEqual(expect.objectContaining({ id: target.id, changeType: 'REMOVED' }));

    await ok(['vnf-scale', 'v2-inline', '--type', 'SCALE_IN', '--aspect-id', 'vdu1_aspect']);
    expect(homeText()).not.toContain(cluster.token);

    await ok(['vnf-terminate', 'v2-inline', '--yes', '--termination-type', 'FORCEFUL']);
    expect(await objectsOf(vnf)).toEqual([]);
    // Let go with the resources: the instance keeps no credentials once terminated.
    expect(json((await ok(['vnf-show', 'v2-inline', '-o', 'json'])).stdout)['vimConnectionInfo']).toBeUndefined();
    await ok(['vnf-delete', 'v2-inline', '--yes']);
  });

  it('a vnfm killed mid-instantiate: op-retry reaches the VIM with the credentials the occurrence kept', async () => {
    const vnf = json<{ id: string }>((await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'v2-retry', '-o', 'json'])).stdout).id;
    const request = write('v2-retry.json', instantiateBody(v2Vim(cluster.token)));
    const lift = await cluster.neverReady({ kind: 'Deployment', name: 'vdu2' });
    await new Promise<void>((done, fail) => {
      const child = spawn(process.execPath, [BIN, 'vnf-instantiate', 'v2-retry', request], {
        env: { PATH: process.env['PATH'], HOME: home.replace(/\/home$/, ''), VNFM_HOME: home } as NodeJS.ProcessEnv,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (stderr.includes(`Deployment/vdu2 (${NS}): waiting for 0/1 replicas ready`)) child.kill('SIGKILL');
      });
      child.on('error', fail);
      child.on('exit', (_code, signal) => (signal === 'SIGKILL' ? done() : fail(new Error(`vnf-instantiate was not killed mid-way: ${stderr}`))));
    });
    await lift();
    // The next command turns the dead process's occurrence FAILED_TEMP.
    await ok(['op-list', '--vnf', vnf]);
    const [op] = json<{ id: string; operationState: string }[]>((await ok(['op-list', '--vnf', vnf, '--state', 'FAILED_TEMP', '-o', 'json'])).stdout);
    expect(op).toMatchObject({ id: expect.any(String), operationState: 'FAILED_TEMP' });
    expect(homeText()).not.toContain(cluster.token);
    expect(json((await ok(['op-retry', op!.id, '-o', 'json'])).stdout)).toMatchObject({ operationState: 'COMPLETED' });
    expect(await objectsOf(vnf)).toHaveLength(4);
    await ok(['vnf-terminate', 'v2-retry', '--yes', '--termination-type', 'FORCEFUL']);
    expect(await objectsOf(vnf)).toEqual([]);
  });
});

describe('the v1 array, as Tacker v1 reads it: a registered VIM by vimId, else the default VIM; never a VIM inline', () => {
  /** A home of its own with the cluster registered as the default VIM, and the package onboarded. */
  async function withDefaultVim(name: string) {
    const own = newHome();
    const run = okWith((args) => vnfm(args, { home: own }));
    const vimConfig = join(dir, `${name}-vim.yaml`);
    cluster.writeVimConfig(vimConfig, NS);
    await run(['vim-register', '--config-file', vimConfig, '--is-default', name]);
    await run(['vnfpkg-onboard', join(dir, 'package'), '--name', 'basic-cnf']);
    const vimId = json<{ id: string }>((await run(['vim-show', name, '-o', 'json'])).stdout).id;
    return { own, run, vimId };
  }

  it('an entry without vimId, its endpoint and token for a cluster that does not answer: instantiated on the default VIM (a notice says so), heal by vnfcResourceInfo id, terminate', async () => {
    const { run, vimId } = await withDefaultVim('k8s-default');
    const vnf = json<{ id: string }>((await run(['vnf-create', '--package', 'basic-cnf', '--name', 'v1-default', '-o', 'json'])).stdout).id;
    const v1 = [
      {
        id: '7c8f9d0e-1a2b-4c3d-8e9f-0a1b2c3d4e5f',
        vimType: 'kubernetes',
        interfaceInfo: { endpoint: 'https://127.0.0.1:1/', ssl_ca_cert: cluster.caPem },
        accessInfo: { bearer_token: 'a-token-for-another-cluster' },
      },
    ];
    const inst = await run(['vnf-instantiate', 'v1-default', '--request-file', write('v1-default.json', instantiateBody(v1)), '-o', 'json']);
    expect(json(inst.stdout)).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED' });
    expect(inst.stderr).toContain(
      `vimConnectionInfo[0]: interfaceInfo (endpoint, ssl_ca_cert), accessInfo (bearer_token) not used, as in Tacker v1, where a v1 (array) entry names a registered VIM by vimId (none: the default VIM)`,
    );
    expect(inst.stderr).toContain(`the default VIM "k8s-default" (${vimId}) is used;`);
    expect(await objectsOf(vnf)).toHaveLength(4);
    const shown = json<{ vimId?: string; vimConnectionInfo?: unknown; instantiatedVnfInfo: { vnfcResourceInfo: { id: string; vduId: string }[] } }>(
      (await run(['vnf-show', 'v1-default', '-o', 'json'])).stdout,
    );
    expect(shown.vimId).toBe(vimId);
    expect(shown.vimConnectionInfo).toBeUndefined();
    const pod = shown.instantiatedVnfInfo.vnfcResourceInfo.find((r) => r.vduId === 'VDU1')!.id;
    const healed = json<{ resourceChanges: { affectedVnfcs: { id: string; changeType: string }[] } }>(
      (await run(['vnf-heal', 'v1-default', '--vnfc-instance', pod, '-o', 'json'])).stdout,
    );
    expect(healed.resourceChanges.affectedVnfcs).toContainEqual(expect.objectContaining({ id: `VDU1-${pod}`, changeType: 'REMOVED' }));
    await run(['vnf-terminate', 'v1-default', '--yes', '--termination-type', 'FORCEFUL']);
    expect(await objectsOf(vnf)).toEqual([]);
    // What the body carried was never kept.
    expect(JSON.stringify(json((await run(['op-list', '--vnf', vnf, '-o', 'json'])).stdout))).not.toContain('a-token-for-another-cluster');
  });

  it("base.py's entry naming the registered VIM by vimId, with the extra Tacker's v1 Helm test adds: instantiated there; a vimId not registered: exit 2, nothing recorded", async () => {
    const { own, run } = await withDefaultVim('k8s-named');
    await run(['vim-register', '--config-file', join(dir, 'k8s-named-vim.yaml'), 'k8s-other']);
    const otherId = json<{ id: string }>((await run(['vim-show', 'k8s-other', '-o', 'json'])).stdout).id;
    const vnf = json<{ id: string }>((await run(['vnf-create', '--package', 'basic-cnf', '--name', 'v1-named', '-o', 'json'])).stdout).id;
    const entry = { id: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d', vimId: otherId, vimType: 'kubernetes', extra: { 'dummy-key': 'dummy-val' } };
    const inst = await run(['vnf-instantiate', 'v1-named', write('v1-named.json', instantiateBody([entry])), '-o', 'json']);
    expect(json(inst.stdout)).toMatchObject({ operationState: 'COMPLETED' });
    expect(inst.stderr).toContain(`extra not used, as in Tacker v1`);
    expect(inst.stderr).toContain(`VIM "k8s-other" (${otherId}) is used;`);
    expect(json<{ vimId: string }>((await run(['vnf-show', 'v1-named', '-o', 'json'])).stdout).vimId).toBe(otherId);
    await run(['vnf-terminate', 'v1-named', '--yes', '--termination-type', 'FORCEFUL']);
    expect(await objectsOf(vnf)).toEqual([]);

    const r = await vnfm(['vnf-instantiate', 'v1-named', write('v1-unknown.json', instantiateBody(v1Vim(cluster.token)))], { home: own });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/vimConnectionInfo\.7c8f9d0e-1a2b-4c3d-8e9f-0a1b2c3d4e5f\.vimId: no VIM "?b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e"? is registered/);
    expect(r.stderr).toMatch(/a v1 array entry always names a registered VIM, as in Tacker v1/);
    expect(r.stderr).not.toContain(cluster.token);
    expect(json<{ operation: string }[]>((await run(['op-list', '--vnf', vnf, '-o', 'json'])).stdout).map((o) => o.operation)).toEqual(['INSTANTIATE', 'TERMINATE']);
  });
});

describe('bad input', () => {
  it('a wrong inline token is refused with exit 6 before anything is recorded', async () => {
    const vnf = json<{ id: string }>((await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'wrong-token', '-o', 'json'])).stdout).id;
    const r = await vnfm(['vnf-instantiate', 'wrong-token', '--request-file', write('wrong-token.json', instantiateBody(v2Vim('not-the-token')))], { home });
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/bearer token/);
    expect(r.stderr).not.toContain('not-the-token');
    expect(json((await ok(['op-list', '--vnf', vnf, '-o', 'json'])).stdout)).toEqual([]);
    expect(json((await ok(['vnf-show', vnf, '-o', 'json'])).stdout)).toMatchObject({ instantiationState: 'NOT_INSTANTIATED' });
    expect(json((await ok(['vnf-show', vnf, '-o', 'json'])).stdout)['vimConnectionInfo']).toBeUndefined();
    expect(await objectsOf(vnf)).toEqual([]);
  });

  it('a request mixing the v1 and v2 forms is refused with exit 2, naming both', async () => {
    const vnf = json<{ id: string }>((await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'mixed', '-o', 'json'])).stdout).id;
    // A v2 map entry with the v1 array's id.
    const mixed = { vim1: { id: 'vim1', ...v2Vim(cluster.token).vim1 } };
    const r = await vnfm(['vnf-instantiate', 'mixed', '--request-file', write('mixed.json', instantiateBody(mixed))], { home });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/vimConnectionInfo\.vim1\.id: .*mixes the v1 and v2 forms/);
    expect(r.stderr).toMatch(/v1 array .*v2 map/);
    expect(json((await ok(['op-list', '--vnf', vnf, '-o', 'json'])).stdout)).toEqual([]);
  });
});

describe('a v2 inline VIM without ssl_ca_cert (Tacker does not verify it; vnfm does, or is told not to)', () => {
  /** Tacker v2's inline VIM, as its functional tests write it when the cluster's CA is left out. */
  const v2VimWithoutCa = (token: string) => {
    const { ssl_ca_cert: _ca, ...interfaceInfo } = v2Vim(token).vim1.interfaceInfo;
    return { vim1: { ...v2Vim(token).vim1, interfaceInfo } };
  };

  it('takes the CA of the registered VIM at the same endpoint: instantiate, scale, terminate', async () => {
    const own = newHome();
    const run = okWith((args) => vnfm(args, { home: own }));
    const vimConfig = join(dir, 'registered-vim.yaml');
    cluster.writeVimConfig(vimConfig, NS);
    await run(['vim-register', '--config-file', vimConfig, 'edge']);
    await run(['vnfpkg-onboard', join(dir, 'package'), '--name', 'basic-cnf']);
    const vnf = json<{ id: string }>((await run(['vnf-create', '--package', 'basic-cnf', '--name', 'inline-no-ca', '-o', 'json'])).stdout).id;
    const inst = await run(['vnf-instantiate', 'inline-no-ca', write('inline-no-ca.json', instantiateBody(v2VimWithoutCa(cluster.token))), '-o', 'json']);
    expect(json(inst.stdout)).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED' });
    expect(inst.stderr).not.toMatch(/without TLS verification/);
    expect(await objectsOf(vnf)).toHaveLength(4);
    // The instance keeps the inline VIM (no CA of its own); the operations after instantiate take the registered CA again.
    const shown = json<{ vimId?: string; vimConnectionInfo: Record<string, { interfaceInfo: Record<string, unknown> }> }>((await run(['vnf-show', vnf, '-o', 'json'])).stdout);
    expect(shown.vimId).toBeUndefined();
    expect(shown.vimConnectionInfo['vim1']!.interfaceInfo).toEqual({ endpoint: cluster.server });
    await run(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']);
    await run(['vnf-terminate', vnf, '--yes', '--termination-type', 'FORCEFUL']);
    expect(await objectsOf(vnf)).toEqual([]);
  });

  it('without a registered VIM at that endpoint: refused (exit 6) with the fix, before anything is recorded', async () => {
    expect(json((await ok(['vim-list', '-o', 'json'])).stdout)).toEqual([]);
    const vnf = json<{ id: string }>((await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'no-ca-refused', '-o', 'json'])).stdout).id;
    const r = await vnfm(['vnf-instantiate', 'no-ca-refused', write('no-ca-refused.json', instantiateBody(v2VimWithoutCa(cluster.token)))], { home });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain(`inline VIM ${cluster.server}: the TLS certificate of ${cluster.server} could not be verified`);
    expect(r.stderr).toMatch(/no interfaceInfo\.ssl_ca_cert, and no registered VIM has this endpoint/);
    expect(r.stderr).toContain('add "ssl_ca_cert": "<the cluster CA in PEM>" to the vimConnectionInfo entry\'s interfaceInfo');
    expect(r.stderr).toContain(`register the VIM with its CA (vnfm vim-register --config-file FILE NAME, auth_url ${cluster.server})`);
    expect(r.stderr).toContain('give --insecure-inline-vims to the command');
    expect(r.stderr).not.toContain(cluster.token);
    expect(json((await ok(['op-list', '--vnf', vnf, '-o', 'json'])).stdout)).toEqual([]);
    expect(json((await ok(['vnf-show', vnf, '-o', 'json'])).stdout)).toMatchObject({ instantiationState: 'NOT_INSTANTIATED' });
    expect(await objectsOf(vnf)).toEqual([]);
  });

  it('with --insecure-inline-vims: used without verification, as Tacker does, a warning naming the endpoint each time', async () => {
    const vnf = json<{ id: string }>((await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'no-ca-insecure', '-o', 'json'])).stdout).id;
    const warning = `warning: inline VIM ${cluster.server} is used without TLS verification (--insecure-inline-vims)`;
    const inst = await ok([
      'vnf-instantiate',
      'no-ca-insecure',
      write('no-ca-insecure.json', instantiateBody(v2VimWithoutCa(cluster.token))),
      '--insecure-inline-vims',
      '-o',
      'json',
    ]);
    expect(json(inst.stdout)).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED' });
    expect(inst.stderr).toContain(warning);
    expect(await objectsOf(vnf)).toHaveLength(4);
    // Each command decides again: without the flag the kept inline VIM is refused, with it the warning comes again.
    const refusedScale = await vnfm(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect'], { home });
    expect(refusedScale.code).toBe(6);
    expect(refusedScale.stderr).toContain('--insecure-inline-vims');
    expect((await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect', '--insecure-inline-vims'])).stderr).toContain(warning);
    expect((await ok(['vnf-terminate', vnf, '--yes', '--termination-type', 'FORCEFUL', '--insecure-inline-vims'])).stderr).toContain(warning);
    expect(await objectsOf(vnf)).toEqual([]);
  });
});
