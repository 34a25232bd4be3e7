/**
 * Several Helm charts in one VNF instance, as Tacker v1 takes them: a
 * package in Tacker's shape (test/fixtures/helm-multi: two charts packed by
 * the real helm into Files/kubernetes/*.tgz, each named in TOSCA.meta) and
 * an InstantiateVnfRequest whose using_helm_install_param lists both, each
 * its own release, with vdu_mapping naming each VDU's workload and release.
 * With the real program and the real helm (test/support/helm.ts) on the
 * sandbox: both releases installed in the request's order and recorded, a
 * scale of the second chart's VDU upgrades that release alone, a heal of the
 * first's VNFC touches no release, vnf-describe and vnf-sync read both,
 * terminate uninstalls them in reverse order. A second chart that fails to
 * install leaves the occurrence FAILED_TEMP: op-rollback leaves no release,
 * op-retry (once what was in the way is gone) installs both. Requests Tacker
 * would take but vnfm cannot, or that contradict themselves, are refused
 * before anything is recorded.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderKubeconfig } from '@vnfm/kube-sandbox';
import { newHome, okWith, vnfm } from '../support/cli.js';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { helmPath, listReleases, runHelm } from '../support/helm.js';

const FIXTURE = resolve(import.meta.dirname, '../fixtures/helm-multi');

let cluster: E2eCluster;
let home: string;
let dir: string;
let kubeconfig: string;
let NS: string;

const json = <T = Record<string, unknown>>(out: string) => JSON.parse(out) as T;
const run = (args: string[]) => vnfm(args, { home, env: { VNFM_HELM: helmPath() } });
const ok = okWith(run);
const helm = (...args: string[]) => runHelm(kubeconfig, dir, args);
const helmList = () => listReleases(kubeconfig, dir, NS);

interface Release {
  release_name: string;
  revision: number;
  helm_chart_path: string;
  helm_parameters: Record<string, unknown>;
  vdus: string[];
}

interface Shown {
  instantiationState: string;
  instantiatedVnfInfo?: {
    scaleStatus: { aspectId: string; scaleLevel: number }[];
    vnfcInfo: { id: string; vduId: string }[];
    vnfcResourceInfo: { id: string; vduId: string; metadata: { release_name?: string; owner?: { kind: string; name: string } } }[];
    metadata: { release_name?: string; helm_releases?: Release[]; vdu_mapping?: Record<string, unknown>; vduReplicas: Record<string, number> };
  };
}

const show = async (vnf: string) => json<Shown>((await ok(['vnf-show', vnf, '-o', 'json'])).stdout);

/** Revision and status of each release in the namespace, as `helm list` has them. */
async function releases(): Promise<Record<string, string>> {
  return Object.fromEntries((await helmList()).map((r) => [r.name, `${r.chart} r${r.revision} ${r.status}`]));
}

async function object(path: string): Promise<{ spec: { replicas: number } } | undefined> {
  const r = await cluster.request('GET', `/apis/apps/v1/namespaces/${NS}/${path}`);
  return r.status === 200 ? r.json : undefined;
}

async function exists(path: string): Promise<boolean> {
  return (await cluster.request('GET', `/api/v1/namespaces/${NS}/${path}`)).status === 200;
}

/**
 * The fixture's request with release names `names` (vdu_mapping following
 * them), this file's namespace and the Helm VIM, changed by `edit`.
 */
function request(names: [string, string], edit?: (p: Record<string, any>) => void): string {
  const body = json<Record<string, any>>(readFileSync(join(FIXTURE, 'requests/instantiate.json'), 'utf8'));
  body.vimConnectionInfo[0].vimId = 'sandbox-helm';
  const p = body.additionalParams;
  p.namespace = NS;
  p.using_helm_install_param[0].helmreleasename = names[0];
  p.using_helm_install_param[1].helmreleasename = names[1];
  p.vdu_mapping = {
    VDU1: { name: `${names[0]}-webfront`, kind: 'Deployment', helmreleasename: names[0] },
    VDU2: { name: `${names[1]}-kvcache`, kind: 'StatefulSet', helmreleasename: names[1] },
  };
  edit?.(p);
  const path = join(dir, 'requests', `instantiate-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(body, null, 2));
  return path;
}

async function create(name: string, pkg = 'duo'): Promise<string> {
  return json<{ id: string }>((await ok(['vnf-create', '--package', pkg, '--name', name, '-o', 'json'])).stdout).id;
}

/** The fixture's package with its charts packed by helm into Files/kubernetes/, each named in TOSCA.meta, as Tacker's packages carry them. */
async function buildPackage(into: string, edit?: (tree: string) => void): Promise<string> {
  cpSync(join(FIXTURE, 'package'), into, { recursive: true });
  mkdirSync(join(into, 'Files/kubernetes'), { recursive: true });
  edit?.(into);
  for (const chart of ['webfront', 'kvcache']) {
    const packed = await helm('package', join(FIXTURE, 'charts', chart), '--destination', join(into, 'Files/kubernetes'));
    expect(packed.code, packed.stderr).toBe(0);
    const member = `Files/kubernetes/${chart}-0.1.0.tgz`;
    const hash = createHash('sha256')
      .update(readFileSync(join(into, member)))
      .digest('hex');
    appendFileSync(join(into, 'TOSCA-Metadata/TOSCA.meta'), `\nName: ${member}\nContent-Type: application/tar+gzip\nAlgorithm: SHA-256\nHash: ${hash}\n`);
  }
  return into;
}

beforeAll(async () => {
  cluster = await e2eCluster('e2e-helm-multi', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  NS = cluster.namespace;
  dir = mkdtempSync(join(tmpdir(), 'vnfm-helm-multi-'));
  mkdirSync(join(dir, 'requests'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, renderKubeconfig({ url: cluster.server, token: cluster.token, caPem: cluster.caPem }, NS), { mode: 0o600 });
  home = newHome();
  // Tacker's Helm VIM: a Kubernetes VIM registered with extra.use_helm.
  const vimConfig = join(dir, 'vim-helm.yaml');
  cluster.writeVimConfig(vimConfig, NS);
  writeFileSync(vimConfig, `${readFileSync(vimConfig, 'utf8')}extra:\n  use_helm: true\n`, { mode: 0o600 });
  await ok(['vim-register', '--config-file', vimConfig, '--is-default', 'sandbox-helm']);
  await ok(['vnfpkg-onboard', await buildPackage(join(dir, 'package')), '--name', 'duo']);
}, 120_000);

afterAll(async () => {
  await cluster?.close();
});

describe('two charts in one instance (Tacker v1 using_helm_install_param)', () => {
  it('installs both, scales the second, heals the first, describes and syncs both, uninstalls both', async () => {
    const vnf = await create('duo');
    const inst = await ok(['vnf-instantiate', vnf, '--request-file', request(['vdu1', 'vdu2']), '-o', 'json']);
    expect(json(inst.stdout)).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED' });
    // Installed in the request's order.
    const installed = [inst.stderr.indexOf('Release/vdu1'), inst.stderr.indexOf('Release/vdu2')];
    expect(installed[0]).toBeGreaterThanOrEqual(0);
    expect(installed[0]).toBeLessThan(installed[1]!);
    expect(await releases()).toEqual({ vdu1: 'webfront-0.1.0 r1 deployed', vdu2: 'kvcache-0.1.0 r1 deployed' });
    expect((await object('deployments/vdu1-webfront'))!.spec.replicas).toBe(1);
    expect((await object('statefulsets/vdu2-kvcache'))!.spec.replicas).toBe(1);
    // Each release with its own values.
    expect(json((await helm('get', 'values', 'vdu1', '--namespace', NS, '-o', 'json')).stdout)).toEqual({ replicaCount: 1, service: { port: '8081' } });
    expect(json((await helm('get', 'values', 'vdu2', '--namespace', NS, '-o', 'json')).stdout)).toEqual({ replicaCount: 1, maxMemory: '32mb', tier: 'cache' });

    let shown = await show(vnf);
    let info = shown.instantiatedVnfInfo!;
    expect(info.metadata.release_name).toBeUndefined();
    expect(info.metadata.helm_releases).toEqual([
      { release_name: 'vdu1', revision: 1, helm_chart_path: 'Files/kubernetes/webfront-0.1.0.tgz', helm_parameters: { 'service.port': '8081' }, vdus: ['VDU1'] },
      { release_name: 'vdu2', revision: 1, helm_chart_path: 'Files/kubernetes/kvcache-0.1.0.tgz', helm_parameters: { maxMemory: '32mb', tier: 'cache' }, vdus: ['VDU2'] },
    ]);
    expect(info.metadata.vdu_mapping).toMatchObject({ VDU2: { name: 'vdu2-kvcache', kind: 'StatefulSet', helmreleasename: 'vdu2' } });
    expect(info.vnfcResourceInfo.map((r) => [r.vduId, r.metadata.release_name, r.metadata.owner?.kind]).sort()).toEqual([
      ['VDU1', 'vdu1', 'Deployment'],
      ['VDU2', 'vdu2', 'StatefulSet'],
    ]);
    // The journal has each release, in install order.
    const op = json<{ journal: { action: string; resource: { kind: string; name: string }; state: string }[] }>(
      (await ok(['op-show', json<{ id: string }>(inst.stdout).id, '-o', 'json'])).stdout,
    );
    expect(op.journal.filter((s) => s.resource.kind === 'Release' && s.state === 'done').map((s) => `${s.action} ${s.resource.name}`)).toEqual(['create vdu1', 'create vdu2']);

    // A scale of VDU2 upgrades its release alone.
    await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu2_aspect']);
    expect(await releases()).toEqual({ vdu1: 'webfront-0.1.0 r1 deployed', vdu2: 'kvcache-0.1.0 r2 deployed' });
    expect((await object('statefulsets/vdu2-kvcache'))!.spec.replicas).toBe(2);
    expect((await object('deployments/vdu1-webfront'))!.spec.replicas).toBe(1);
    expect(json((await helm('get', 'values', 'vdu2', '--namespace', NS, '-o', 'json')).stdout)).toEqual({ replicaCount: 2, maxMemory: '32mb', tier: 'cache' });
    shown = await show(vnf);
    info = shown.instantiatedVnfInfo!;
    expect(info.metadata.helm_releases!.map((r) => r.revision)).toEqual([1, 2]);
    expect(info.metadata.vduReplicas).toEqual({ VDU1: 1, VDU2: 2 });
    expect(info.scaleStatus).toContainEqual({ aspectId: 'vdu2_aspect', scaleLevel: 1 });
    expect(info.vnfcInfo.filter((v) => v.vduId === 'VDU2')).toHaveLength(2);
    expect(info.vnfcInfo.filter((v) => v.vduId === 'VDU1')).toHaveLength(1);

    // A heal of VDU1's VNFC replaces its pod; no release changes.
    const victim = info.vnfcInfo.find((v) => v.vduId === 'VDU1')!;
    await ok(['vnf-heal', vnf, '--vnfc-instance', victim.id]);
    expect(await releases()).toEqual({ vdu1: 'webfront-0.1.0 r1 deployed', vdu2: 'kvcache-0.1.0 r2 deployed' });
    info = (await show(vnf)).instantiatedVnfInfo!;
    expect(info.vnfcInfo.map((v) => v.id)).not.toContain(victim.id);
    expect(info.vnfcInfo.map((v) => v.vduId).sort()).toEqual(['VDU1', 'VDU2', 'VDU2']);

    // vnf-describe reads both releases' objects and names the releases.
    const described = json<{
      vimType: string;
      ready: boolean;
      drift: string[];
      releases: { name: string; revision: number; vdus: string[] }[];
      objects: { kind: string; name: string }[];
    }>((await ok(['vnf-describe', vnf, '-o', 'json'])).stdout);
    expect(described).toMatchObject({ vimType: 'helm', ready: true, drift: [] });
    expect(described.releases.map((r) => [r.name, r.revision, r.vdus])).toEqual([
      ['vdu1', 1, ['VDU1']],
      ['vdu2', 2, ['VDU2']],
    ]);
    expect(described.objects.map((o) => `${o.kind}/${o.name}`)).toEqual(
      expect.arrayContaining(['Deployment/vdu1-webfront', 'Service/vdu1-webfront', 'StatefulSet/vdu2-kvcache', 'ConfigMap/vdu2-kvcache-conf']),
    );
    // A hand scale of the first release's Deployment: vnf-sync records its new VNFC with its release.
    const scalePath = `/apis/apps/v1/namespaces/${NS}/deployments/vdu1-webfront/scale`;
    const scale = (await cluster.request('GET', scalePath)).json as Record<string, unknown>;
    expect((await cluster.request('PUT', `${scalePath}?fieldManager=kubectl`, { ...scale, spec: { replicas: 2 } })).status).toBe(200);
    const synced = await ok(['vnf-sync', vnf]);
    expect(synced.stdout).toContain('VDU1 replicas 1 → 2\n');
    info = (await show(vnf)).instantiatedVnfInfo!;
    expect(info.vnfcResourceInfo.filter((r) => r.vduId === 'VDU1').map((r) => r.metadata.release_name)).toEqual(['vdu1', 'vdu1']);
    expect(info.vnfcResourceInfo.filter((r) => r.vduId === 'VDU2').map((r) => r.metadata.release_name)).toEqual(['vdu2', 'vdu2']);

    // Terminate: the second release first, then the first.
    const term = await ok(['vnf-terminate', vnf, '--yes']);
    const uninstalled = [term.stderr.indexOf('Release/vdu2'), term.stderr.indexOf('Release/vdu1')];
    expect(uninstalled[0]).toBeGreaterThanOrEqual(0);
    expect(uninstalled[0]).toBeLessThan(uninstalled[1]!);
    expect(await helmList()).toEqual([]);
    expect(await object('deployments/vdu1-webfront')).toBeUndefined();
    expect(await object('statefulsets/vdu2-kvcache')).toBeUndefined();
    expect(await exists('configmaps/vdu2-kvcache-conf')).toBe(false);
    expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
    await ok(['vnf-delete', vnf, '--yes']);
  }, 300_000);

  it('a bad value in the second chart: FAILED_TEMP with the first installed; op-rollback leaves no release and no object', async () => {
    const vnf = await create('duo-bad');
    const body = request(['bad1', 'bad2'], (p) => (p.using_helm_install_param[1].helmparameter = ['tier=not a label!']));
    const r = await run(['vnf-instantiate', vnf, '--request-file', body]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/StatefulSet.*bad2-kvcache.*Invalid value/s);
    expect(await releases()).toEqual({ bad1: 'webfront-0.1.0 r1 deployed', bad2: 'kvcache-0.1.0 r1 failed' });
    const op = json<{ id: string; operation: string }[]>((await ok(['op-list', '--vnf', vnf, '--state', 'FAILED_TEMP', '-o', 'json'])).stdout)[0]!;
    expect(op.operation).toBe('INSTANTIATE');

    const back = await ok(['op-rollback', op.id, '-o', 'json']);
    expect(json(back.stdout)).toMatchObject({ operationState: 'ROLLED_BACK' });
    expect(await helmList()).toEqual([]);
    expect(await object('deployments/bad1-webfront')).toBeUndefined();
    expect(await exists('services/bad2-kvcache')).toBe(false);
    expect(await exists('configmaps/bad2-kvcache-conf')).toBe(false);
    expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
  }, 300_000);

  it('an object in the way of the second chart: FAILED_TEMP; once it is gone, op-retry installs both', async () => {
    const squatter = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late2-kvcache-conf' }, data: { owner: 'someone else' } };
    expect((await cluster.request('POST', `/api/v1/namespaces/${NS}/configmaps`, squatter)).status).toBe(201);
    const vnf = await create('duo-late');
    const r = await run(['vnf-instantiate', vnf, '--request-file', request(['late1', 'late2'])]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/late2-kvcache-conf.*exists and cannot be imported/s);
    expect(await releases()).toEqual({ late1: 'webfront-0.1.0 r1 deployed' });
    const op = json<{ id: string }[]>((await ok(['op-list', '--vnf', vnf, '--state', 'FAILED_TEMP', '-o', 'json'])).stdout)[0]!;

    expect((await cluster.request('DELETE', `/api/v1/namespaces/${NS}/configmaps/late2-kvcache-conf`)).status).toBe(200);
    const retried = await ok(['op-retry', op.id, '-o', 'json']);
    expect(json(retried.stdout)).toMatchObject({ operationState: 'COMPLETED' });
    // The first release, its own, upgraded with the request's values (as Tacker takes up a release on retry); the second installed.
    expect(await releases()).toEqual({ late1: 'webfront-0.1.0 r2 deployed', late2: 'kvcache-0.1.0 r1 deployed' });
    const info = (await show(vnf)).instantiatedVnfInfo!;
    expect(info.metadata.helm_releases!.map((x) => [x.release_name, x.revision])).toEqual([
      ['late1', 2],
      ['late2', 1],
    ]);
    expect(info.vnfcInfo.map((v) => v.vduId).sort()).toEqual(['VDU1', 'VDU2']);

    // A scale out of the second chart's VDU whose new pod never becomes ready: op-rollback rolls that release back alone.
    const lift = await cluster.neverReady({ kind: 'StatefulSet', name: 'late2-kvcache' });
    const stuck = await run(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu2_aspect', '--timeout', '3s']);
    expect(stuck.code).toBe(124);
    expect(await releases()).toEqual({ late1: 'webfront-0.1.0 r2 deployed', late2: 'kvcache-0.1.0 r2 deployed' });
    await lift();
    const scaleOp = json<{ id: string }[]>((await ok(['op-list', '--vnf', vnf, '--state', 'FAILED_TEMP', '-o', 'json'])).stdout)[0]!;
    const back = await ok(['op-rollback', scaleOp.id]);
    expect(back.stderr).toMatch(/Release\/late2 .*rolled back to revision 1 \(now revision 3\)/);
    expect(back.stderr).not.toMatch(/Release\/late1 .*rolled back/);
    expect(await releases()).toEqual({ late1: 'webfront-0.1.0 r2 deployed', late2: 'kvcache-0.1.0 r3 deployed' });
    expect((await object('statefulsets/late2-kvcache'))!.spec.replicas).toBe(1);
    const after = (await show(vnf)).instantiatedVnfInfo!;
    expect(after.metadata.helm_releases!.map((x) => x.revision)).toEqual([2, 3]);
    expect(after.scaleStatus).toContainEqual({ aspectId: 'vdu2_aspect', scaleLevel: 0 });

    await ok(['vnf-terminate', vnf, '--yes']);
    expect(await helmList()).toEqual([]);
  }, 300_000);

  it('without vdu_mapping, a VDU belongs to the release whose chart renders a workload named for it', async () => {
    // VDUs named as Tacker v2 names them (vdu1, vdu2): each found by name, in one release only.
    const tree = await buildPackage(join(dir, 'named-package'), (t) => {
      for (const f of readdirSync(join(t, 'Definitions'))) {
        const p = join(t, 'Definitions', f);
        const text = readFileSync(p, 'utf8').split('df7ccd5a-1682-4c89-ba5d-93341867b2fc').join('4b0b6f52-1d1e-4b43-9c3e-7a0f3c1d2e55');
        writeFileSync(p, text.replace('name: VDU1', 'name: vdu1').replace('name: VDU2', 'name: vdu2'));
      }
    });
    await ok(['vnfpkg-onboard', tree, '--name', 'duo-named']);
    const vnf = await create('duo-named', 'duo-named');
    await ok(['vnf-instantiate', vnf, '--request-file', request(['vdu1', 'vdu2'], (p) => delete p.vdu_mapping)]);
    let info = (await show(vnf)).instantiatedVnfInfo!;
    expect(info.metadata.helm_releases!.map((x) => [x.release_name, x.vdus])).toEqual([
      ['vdu1', ['VDU1']],
      ['vdu2', ['VDU2']],
    ]);
    await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']);
    expect(await releases()).toEqual({ vdu1: 'webfront-0.1.0 r2 deployed', vdu2: 'kvcache-0.1.0 r1 deployed' });
    expect((await object('deployments/vdu1-webfront'))!.spec.replicas).toBe(2);
    info = (await show(vnf)).instantiatedVnfInfo!;
    expect(info.vnfcInfo.filter((v) => v.vduId === 'VDU1')).toHaveLength(2);
    await ok(['vnf-terminate', vnf, '--yes']);
    expect(await helmList()).toEqual([]);
  }, 300_000);
});

describe('several charts refused before anything is recorded', () => {
  const refusals: Array<[string, (p: Record<string, any>) => void, RegExp]> = [
    [
      "an external repository chart (Tacker's second entry form)",
      (p) =>
        (p.using_helm_install_param[1] = {
          exthelmchart: 'true',
          helmreleasename: 'r2',
          helmrepositoryname: 'examplerepo',
          helmchartname: 'apache',
          exthelmrepo_url: 'https://charts.example.invalid/repo',
        }),
      /using_helm_install_param\[1\]\.exthelmchart: asks for the chart "examplerepo\/apache" from "https:\/\/charts\.example\.invalid\/repo"/,
    ],
    [
      'the same release name twice',
      (p) => (p.using_helm_install_param[1].helmreleasename = 'r1'),
      /using_helm_install_param\[1\]\.helmreleasename: "r1" is the release name of entry 0 too/,
    ],
    [
      'vdu_mapping naming a release the request does not install',
      (p) => (p.vdu_mapping.VDU2.helmreleasename = 'other'),
      /vdu_mapping\.VDU2\.helmreleasename: "other" is not a helmreleasename/,
    ],
    ['vdu_mapping without the release, with several', (p) => delete p.vdu_mapping.VDU1.helmreleasename, /vdu_mapping\.VDU1\.helmreleasename: is required/],
    [
      'vdu_mapping naming a workload its release does not render',
      (p) => (p.vdu_mapping.VDU2.name = 'r2-cache'),
      /vdu_mapping\.VDU2: release r2 \(chart Files\/kubernetes\/kvcache-0\.1\.0\.tgz\) renders no StatefulSet "r2-cache"/,
    ],
  ];

  it.each(refusals)(
    '%s: exit 2, no occurrence, no release',
    async (_name, edit, message) => {
      const vnf = await create(`refused-${Math.random().toString(36).slice(2, 8)}`);
      const r = await run(['vnf-instantiate', vnf, '--request-file', request(['r1', 'r2'], edit)]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(json((await ok(['op-list', '--vnf', vnf, '-o', 'json'])).stdout)).toEqual([]);
      expect(await helmList()).toEqual([]);
      await ok(['vnf-delete', vnf, '--yes']);
    },
    120_000,
  );
});
