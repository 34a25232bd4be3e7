/**
 * The Helm CNF sample through its whole life with the real program and the
 * real helm (test/support/helm.ts) on the sandbox, in Tacker's v2 form
 * (helm_chart_path, helm_value_names) and v1 form (a VIM registered with
 * extra.use_helm, use_helm, using_helm_install_param, helm_replica_values):
 * after each step `helm list` (read with the helm binary itself) agrees with
 * `vnf-show`. And the refusals that change nothing: a chart path the package
 * lacks, a replica value the chart does not read, a VDU without a replica
 * value, a release name already taken, a template that does not render.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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
let NS: string;

const json = <T = Record<string, unknown>>(out: string) => JSON.parse(out) as T;
const run = (args: string[]) => vnfm(args, { home, env: { VNFM_HELM: helmPath() } });

const ok = okWith(run);
const helm = (...args: string[]) => runHelm(kubeconfig, dir, args);
const helmList = () => listReleases(kubeconfig, dir, NS);

interface Shown {
  id: string;
  instantiationState: string;
  vnfSoftwareVersion: string;
  instantiatedVnfInfo?: {
    scaleStatus: { aspectId: string; scaleLevel: number }[];
    vnfcInfo: { id: string; vduId: string }[];
    vnfcResourceInfo: { id: string; vduId: string; computeResource: { resourceId: string } }[];
    metadata: { release_name: string; revision: number; namespace: string; helm_chart_path: string; vduReplicas: Record<string, number> };
  };
}

const show = async (vnf: string) => json<Shown>((await ok(['vnf-show', vnf, '-o', 'json'])).stdout);

/** `helm list` agrees with vnf-show: one deployed release, of the instance's name, revision and chart version. */
async function agrees(vnf: string, chart: string): Promise<Shown> {
  const shown = await show(vnf);
  const m = shown.instantiatedVnfInfo!.metadata;
  const release = (await helmList()).find((r) => r.name === m.release_name);
  expect(release, `helm list has release ${m.release_name}`).toBeDefined();
  expect(release).toMatchObject({ namespace: m.namespace, revision: String(m.revision), status: 'deployed', chart });
  return shown;
}

async function deployment(name: string): Promise<{ spec: { replicas: number } } | undefined> {
  const r = await cluster.request('GET', `/apis/apps/v1/namespaces/${NS}/deployments/${name}`);
  return r.status === 200 ? r.json : undefined;
}

async function pods(selector: string): Promise<string[]> {
  const r = await cluster.request('GET', `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(selector)}`);
  return (r.json as { items: { metadata: { name: string; deletionTimestamp?: string } }[] }).items
    .filter((p) => !p.metadata.deletionTimestamp)
    .map((p) => p.metadata.name)
    .sort();
}

/** A copy of the sample's request, its namespace set to this file's. */
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

beforeAll(async () => {
  cluster = await e2eCluster('e2e-helm', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  NS = cluster.namespace;
  dir = mkdtempSync(join(tmpdir(), 'vnfm-helm-e2e-'));
  mkdirSync(join(dir, 'requests'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, renderKubeconfig({ url: cluster.server, token: cluster.token, caPem: cluster.caPem }, NS), { mode: 0o600 });
  home = newHome();
  const vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, NS);
  await ok(['vim-register', '--config-file', vimConfig, '--is-default', 'sandbox']);
  // The same cluster registered as Tacker's Helm VIM (extra.use_helm: true).
  const helmVim = join(dir, 'vim-helm.yaml');
  writeFileSync(helmVim, `${readFileSync(vimConfig, 'utf8')}extra:\n  use_helm: true\n`, { mode: 0o600 });
  await ok(['vim-register', '--config-file', helmVim, 'sandbox-helm']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'helm-cnf']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package-v2'), '--name', 'helm-cnf-v2']);
});

afterAll(async () => {
  await cluster?.close();
});

describe('the Helm CNF, Tacker v2 form', () => {
  it('instantiate, scale out and in, heal, change package, terminate: helm list agrees with vnf-show at each step', async () => {
    const vnf = await create('helm-v2');
    const release = `vnf${vnf.replace(/-/g, '')}`;
    const inst = await ok(['vnf-instantiate', vnf, '--request-file', request('instantiate.json'), '-o', 'json']);
    expect(json(inst.stdout)).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED' });
    // vnfm's own progress lines, per object of the release's manifest.
    expect(inst.stderr).toContain(`Deployment/vdu1-${release} (${NS}): ready`);
    expect(inst.stderr).toContain(`Deployment/vdu2-${release} (${NS}): ready`);
    let shown = await agrees(vnf, 'helm-cnf-0.1.0');
    expect(shown.instantiatedVnfInfo!.metadata).toMatchObject({
      release_name: release,
      revision: 1,
      namespace: NS,
      helm_chart_path: 'Files/kubernetes/helm-cnf',
      vduReplicas: { VDU1: 1, VDU2: 1 },
    });
    expect(shown.instantiatedVnfInfo!.vnfcInfo.map((v) => v.vduId).sort()).toEqual(['VDU1', 'VDU2']);
    expect((await helm('get', 'values', release, '--namespace', NS, '-o', 'json')).stdout).toContain('"port":8080');

    await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']);
    shown = await agrees(vnf, 'helm-cnf-0.1.0');
    expect(shown.instantiatedVnfInfo!.metadata.revision).toBe(2);
    expect((await deployment(`vdu1-${release}`))!.spec.replicas).toBe(2);
    expect(shown.instantiatedVnfInfo!.vnfcInfo.filter((v) => v.vduId === 'VDU1')).toHaveLength(2);
    expect(shown.instantiatedVnfInfo!.scaleStatus).toContainEqual({ aspectId: 'vdu1_aspect', scaleLevel: 1 });
    const values = json<{ vdu1: { replicaCount: number }; service: { port: number } }>((await helm('get', 'values', release, '--namespace', NS, '-o', 'json')).stdout);
    expect(values).toMatchObject({ vdu1: { replicaCount: 2 }, service: { port: 8080 } });

    const beyond = await run(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect', '--number-of-steps', '2']);
    expect(beyond.code).toBe(2);
    expect(beyond.stderr).toMatch(/max_scale_level 2/);

    await ok(['vnf-scale', vnf, '--type', 'SCALE_IN', '--aspect-id', 'vdu1_aspect']);
    shown = await agrees(vnf, 'helm-cnf-0.1.0');
    expect(shown.instantiatedVnfInfo!.metadata.revision).toBe(3);
    expect((await deployment(`vdu1-${release}`))!.spec.replicas).toBe(1);
    expect(await pods(`app.kubernetes.io/instance=${release},app.kubernetes.io/component=vdu1`)).toHaveLength(1);

    const victim = shown.instantiatedVnfInfo!.vnfcInfo.find((v) => v.vduId === 'VDU2')!;
    const healed = json<{ resourceChanges: { affectedVnfcs: { id: string; changeType: string }[] } }>(
      (await ok(['vnf-heal', vnf, '--vnfc-instance', victim.id, '-o', 'json'])).stdout,
    );
    expect(healed.resourceChanges.affectedVnfcs).toContainEqual(expect.objectContaining({ id: victim.id, changeType: 'REMOVED' }));
    shown = await agrees(vnf, 'helm-cnf-0.1.0');
    // Heal replaces pods; Helm's release is not touched.
    expect(shown.instantiatedVnfInfo!.metadata.revision).toBe(3);
    expect(shown.instantiatedVnfInfo!.vnfcInfo.map((v) => v.id)).not.toContain(victim.id);

    await ok(['vnf-change-package', vnf, '--request-file', request('change-package.json')]);
    shown = await agrees(vnf, 'helm-cnf-0.2.0');
    expect(shown).toMatchObject({ vnfSoftwareVersion: '2.0' });
    expect(shown.instantiatedVnfInfo!.metadata.revision).toBe(4);
    const image = ((await deployment(`vdu1-${release}`)) as unknown as { spec: { template: { spec: { containers: { image: string }[] } } } }).spec.template.spec.containers[0]!
      .image;
    expect(image).toBe('docker.io/library/nginx:1.27-alpine');

    await ok(['vnf-terminate', vnf, '--yes']);
    expect((await helmList()).map((r) => r.name)).not.toContain(release);
    expect(await deployment(`vdu1-${release}`)).toBeUndefined();
    expect(await deployment(`vdu2-${release}`)).toBeUndefined();
    expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
    await ok(['vnf-delete', vnf, '--yes']);
  }, 300_000);
});

describe('the Helm CNF, Tacker v1 form on a VIM registered with extra.use_helm', () => {
  it('vim-show says the VIM is used through Helm', async () => {
    const shown = await ok(['vim-show', 'sandbox-helm']);
    expect(shown.stdout).toMatch(/deployed_with\s+helm/);
    expect((await ok(['vim-list'])).stdout).toMatch(/sandbox-helm\s+kubernetes \(helm\)/);
  }, 300_000);

  it('instantiate, scale through helm_replica_values, heal, a failed scale rolled back with helm rollback, terminate', async () => {
    const vnf = await create('helm-v1');
    const body = request('instantiate-v1.json', (b) => {
      b.vimConnectionInfo = [{ id: 'vim1', vimId: 'sandbox-helm', vimType: 'kubernetes' }];
    });
    await ok(['vnf-instantiate', vnf, '--request-file', body]);
    let shown = await agrees(vnf, 'helm-cnf-0.1.0');
    expect(shown.instantiatedVnfInfo!.metadata).toMatchObject({ release_name: 'helm-cnf', revision: 1 });

    await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu2_aspect']);
    shown = await agrees(vnf, 'helm-cnf-0.1.0');
    expect(shown.instantiatedVnfInfo!.metadata.revision).toBe(2);
    expect((await deployment('vdu2-helm-cnf'))!.spec.replicas).toBe(2);

    // Heal replaces a pod; the release stays at its revision.
    const victim = shown.instantiatedVnfInfo!.vnfcInfo.find((v) => v.vduId === 'VDU2')!;
    await ok(['vnf-heal', vnf, '--vnfc-instance', victim.id]);
    shown = await agrees(vnf, 'helm-cnf-0.1.0');
    expect(shown.instantiatedVnfInfo!.metadata.revision).toBe(2);
    expect(shown.instantiatedVnfInfo!.vnfcInfo.map((v) => v.id)).not.toContain(victim.id);
    expect(shown.instantiatedVnfInfo!.vnfcInfo.filter((v) => v.vduId === 'VDU2')).toHaveLength(2);

    // A scale out whose new pod never becomes ready: FAILED_TEMP, then rolled back to revision 2.
    const lift = await cluster.neverReady({ kind: 'Deployment', name: 'vdu1-helm-cnf' });
    // Stopped (Ctrl-C) once vnfm waits for the new pod: the upgrade is done, the occurrence FAILED_TEMP.
    const failed = await new Promise<string>((done, fail) => {
      const child = spawn(process.execPath, [BIN, 'vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect'], {
        env: { PATH: process.env['PATH'], HOME: home.replace(/\/home$/, ''), VNFM_HOME: home, VNFM_HELM: helmPath() } as NodeJS.ProcessEnv,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (stderr.includes(`Deployment/vdu1-helm-cnf (${NS}): waiting`)) child.kill('SIGINT');
      });
      child.on('error', fail);
      child.on('exit', (code, signal) => done(signal ?? String(code)));
    });
    // Interrupted: exit 130, or the SIGINT raised again once the occurrence is recorded FAILED_TEMP.
    expect(['130', 'SIGINT']).toContain(failed);
    const op = json<{ id: string }[]>((await ok(['op-list', '--vnf', vnf, '--state', 'FAILED_TEMP', '-o', 'json'])).stdout)[0]!;
    expect((await helmList()).find((r) => r.name === 'helm-cnf')).toMatchObject({ revision: '3' });
    await lift();
    const back = await ok(['op-rollback', op.id, '-o', 'json']);
    expect(json(back.stdout)).toMatchObject({ operationState: 'ROLLED_BACK' });
    expect(back.stderr).toMatch(/rolled back to revision 2/);
    shown = await agrees(vnf, 'helm-cnf-0.1.0');
    expect(shown.instantiatedVnfInfo!.metadata.revision).toBe(4);
    expect((await deployment('vdu1-helm-cnf'))!.spec.replicas).toBe(1);
    expect(shown.instantiatedVnfInfo!.scaleStatus).toContainEqual({ aspectId: 'vdu1_aspect', scaleLevel: 0 });

    await ok(['vnf-terminate', vnf, '--yes']);
    expect((await helmList()).map((r) => r.name)).not.toContain('helm-cnf');
    expect(await deployment('vdu1-helm-cnf')).toBeUndefined();
  }, 300_000);
});

describe('Helm requests refused before anything changes', () => {
  it("a chart path the package does not have: exit 2, naming the package's charts", async () => {
    const vnf = await create('bad-path');
    const r = await run(['vnf-instantiate', vnf, '--request-file', request('instantiate.json', (b) => (b.additionalParams.helm_chart_path = 'Files/kubernetes/other-0.1.0.tgz'))]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/additionalParams\.helm_chart_path: "Files\/kubernetes\/other-0\.1\.0\.tgz" is not a Helm chart of the package/);
    expect(r.stderr).toContain('Files/kubernetes/helm-cnf');
    expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
    expect(json((await ok(['op-list', '--vnf', vnf, '-o', 'json'])).stdout)).toEqual([]);
  }, 300_000);

  it('a replica value the chart does not read: exit 2, nothing installed', async () => {
    const vnf = await create('bad-value');
    const r = await run(['vnf-instantiate', vnf, '--request-file', request('instantiate.json', (b) => (b.additionalParams.helm_value_names.VDU1.replica = 'replicaCount'))]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/helm_value_names\.VDU1\.replica: "replicaCount" is not a value the chart/);
    expect((await helmList()).map((x) => x.name)).not.toContain(`vnf${vnf.replace(/-/g, '')}`);
  }, 300_000);

  it('a scale of a VDU with no replica value fails before touching the release', async () => {
    const vnf = await create('no-value');
    await ok(['vnf-instantiate', vnf, '--request-file', request('instantiate.json', (b) => delete b.additionalParams.helm_value_names.VDU2)]);
    const before = await agrees(vnf, 'helm-cnf-0.1.0');
    const r = await run(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu2_aspect']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/helm_value_names\.VDU2\.replica/);
    const after = await agrees(vnf, 'helm-cnf-0.1.0');
    expect(after.instantiatedVnfInfo!.metadata.revision).toBe(before.instantiatedVnfInfo!.metadata.revision);
    await ok(['vnf-terminate', vnf, '--yes']);
  }, 300_000);

  it('a release name already used in the namespace: refused, the other release untouched', async () => {
    const chart = join(dir, 'chart');
    cpSync(join(SAMPLE, 'package/Files/kubernetes/helm-cnf'), chart, { recursive: true });
    const theirs = await helm('install', 'taken', chart, '--namespace', NS);
    expect(theirs.code, theirs.stderr).toBe(0);
    const vnf = await create('taken');
    const r = await run([
      'vnf-instantiate',
      vnf,
      '--request-file',
      request('instantiate-v1.json', (b) => (b.additionalParams.using_helm_install_param[0].helmreleasename = 'taken')),
    ]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/a Helm release taken already exists in namespace/);
    expect((await helmList()).find((x) => x.name === 'taken')).toMatchObject({ revision: '1', status: 'deployed' });
    expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
    expect(json((await ok(['op-list', '--vnf', vnf, '-o', 'json'])).stdout)).toEqual([]);
    await helm('uninstall', 'taken', '--namespace', NS);
  }, 300_000);

  it("a template that does not render: Helm's message, exit 2, nothing installed", async () => {
    const tree = join(dir, 'broken-package');
    cpSync(join(SAMPLE, 'package'), tree, { recursive: true });
    for (const f of readdirSync(join(tree, 'Definitions'))) {
      const p = join(tree, 'Definitions', f);
      writeFileSync(p, readFileSync(p, 'utf8').split('5b5c8e1e-6f0a-4c55-9d0b-2f6b0c1a7e31').join('0d6c4a1e-0000-4000-8000-00000000b0ce'));
    }
    // TOSCA.meta's hash blocks would no longer match the changed chart.
    writeFileSync(join(tree, 'TOSCA-Metadata/TOSCA.meta'), readFileSync(join(tree, 'TOSCA-Metadata/TOSCA.meta'), 'utf8').split('\n\nName:')[0] + '\n');
    writeFileSync(
      join(tree, 'Files/kubernetes/helm-cnf/templates/configmap.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ required "page.title is required" .Values.page.title }}\n',
    );
    await ok(['vnfpkg-onboard', tree, '--name', 'helm-broken']);
    const vnf = json<{ id: string }>((await ok(['vnf-create', '--package', 'helm-broken', '-o', 'json'])).stdout).id;
    const r = await run(['vnf-instantiate', vnf, '--request-file', request('instantiate.json')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/does not render: .*configmap\.yaml/);
    expect((await helmList()).map((x) => x.name)).not.toContain(`vnf${vnf.replace(/-/g, '')}`);
  }, 300_000);
});

describe('vnfm demo --helm', () => {
  it('runs the Helm chart sample through its whole life on an in-process sandbox', async () => {
    const r = await vnfm(['demo', '--helm', '-o', 'json'], { home: newHome(), env: { VNFM_HELM: helmPath() } });
    expect(r.code, r.stderr).toBe(0);
    const steps = json<{ step: string; result: string }[]>(r.stdout);
    expect(steps.map((s) => s.step.replace(/ \(.*\)$/, ''))).toEqual([
      'onboard the packages',
      'create the VNF instance',
      'instantiate',
      'scale out vdu1_aspect',
      'heal one VNFC',
      'scale in vdu1_aspect',
      'change to package v2',
      'terminate',
      'delete the VNF instance',
    ]);
    expect(steps[0]!.result).toContain('5b5c8e1e-6f0a-4c55-9d0b-2f6b0c1a7e31');
    expect(steps[2]!.result).toBe('INSTANTIATE COMPLETED, 2 VNFCs');
    expect(steps[3]!.result).toBe('SCALE COMPLETED, 3 VNFCs');
    expect(r.stderr).toMatch(/Release\/vnf[0-9a-f]{32}.*installed chart helm-cnf-0\.1\.0 \(revision 1\)/);
  }, 300_000);

  it('without helm: exit 2 naming VNFM_HELM and PATH, before anything runs', async () => {
    const r = await vnfm(['demo', '--helm'], { home: newHome(), env: { PATH: '/nonexistent', VNFM_HELM: undefined } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/VNFM_HELM/);
    expect(r.stderr).toMatch(/PATH/);
    expect(r.stderr).not.toMatch(/sandbox:/);
  }, 300_000);
});
