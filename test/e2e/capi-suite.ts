/**
 * Cluster API as CNFs, with the real program, on any management cluster a
 * target provides: the sandbox (which emulates the Cluster API controllers)
 * or a real kube-apiserver (with test/support/stand-in-capi.ts for them).
 * The management cluster's CRDs and controllers, a CAPO workload cluster
 * through its whole life (Cluster Provisioned, workers scaled through the
 * MachineDeployment's /scale, a Machine healed, a change of package that
 * fails and is rolled back, then one that succeeds, terminate leaving no
 * custom resource), the Kamaji + KubeVirt workload cluster, and the bad
 * inputs: a missing CRD or a VDU without /scale (refused before any
 * occurrence exists), a schema the API rejects, a CRD whose names are never
 * accepted.
 */
import { createHash, randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, vnfm, type RunResult } from '../support/cli.js';
import { kubeRequest, type KubeEndpoint } from '../support/kube-http.js';

/** A management cluster the suite runs on. */
export interface CapiTarget {
  /** Where its API is, for vnfm's VIM and the suite's own reads. */
  endpoint: KubeEndpoint;
  /** Makes the next change of the CAPO package fail part-way; resolves to what lifts the failure. */
  failChange(): Promise<() => Promise<void>>;
  /** Stops what the target started. */
  stop(): Promise<void>;
}

export interface CapiHelpers {
  run(args: string[]): Promise<RunResult>;
  ok(args: string[]): Promise<RunResult>;
  createVnf(pkg: string, name: string): Promise<string>;
  occurrences(vnf: string): Promise<any[]>;
  get(path: string): Promise<{ status: number; body: any }>;
}

const SAMPLES = resolve(import.meta.dirname, '../../csar-samples');
export const MGMT = join(SAMPLES, 'capi-mgmt');
const CAPO = join(SAMPLES, 'capi-capo-workload');
const KAMAJI = join(SAMPLES, 'capi-kamaji-kubevirt-workload');
export const req = (sample: string, name: string) => join(sample, 'requests', name);

/** A VIM config for vnfm from an endpoint. */
export function vimConfig(endpoint: KubeEndpoint, path: string): string {
  writeFileSync(
    path,
    yaml.dump({ auth_url: endpoint.server, bearer_token: endpoint.token, ssl_ca_cert: endpoint.caPem, project_name: 'default', type: 'kubernetes' }, { lineWidth: -1 }),
    { mode: 0o600 },
  );
  return path;
}

/** The OpenStackMachineTemplate the CAPO package's version 2.0 adds, as someone else would create it first. */
export function capoV2WorkerTemplate(): any {
  const docs = yaml.loadAll(readFileSync(join(CAPO, 'package-v2/Files/new_kubernetes/workers.yaml'), 'utf8')) as any[];
  const omt = structuredClone(docs.find((d) => d?.kind === 'OpenStackMachineTemplate'));
  delete omt.metadata.labels;
  return omt;
}

/**
 * Registers the suite's hooks and tests; `start` makes the target in
 * beforeAll. `extraTests` adds tests only that target can run (fault
 * injection), after the refusals and before the management cluster exists.
 */
export function describeCapiCnfs<T extends CapiTarget>(start: () => Promise<T>, extraTests?: (helpers: CapiHelpers, target: () => T) => void): void {
  let current: T | undefined;
  const target = (): T => {
    if (!current) throw new Error('the management cluster did not start');
    return current;
  };
  let home: string;
  let work: string;

  const json = <T = any>(out: string) => JSON.parse(out) as T;
  const run = (args: string[]) => vnfm(args, { home });
  async function ok(args: string[]) {
    const r = await run(args);
    if (r.code !== 0) throw new Error(`vnfm ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r;
  }

  /** GET through the management cluster's API as a plain client. */
  async function get(path: string): Promise<{ status: number; body: any }> {
    const r = await kubeRequest(target().endpoint, 'GET', path);
    return { status: r.status, body: r.json };
  }

  async function items(path: string): Promise<any[]> {
    const r = await get(path);
    return r.status === 404 ? [] : (r.body.items as any[]);
  }

  const CAPI = '/apis/cluster.x-k8s.io/v1beta1';
  const machines = async (md: string) =>
    (await items(`${CAPI}/namespaces/default/machines?labelSelector=${encodeURIComponent(`cluster.x-k8s.io/deployment-name=${md}`)}`)).filter((m) => !m.metadata.deletionTimestamp);

  /** Every attribute of the instance's operation occurrences (a list leaves the complex ones out by default). */
  async function occurrences(vnf: string): Promise<any[]> {
    return json<any[]>((await ok(['op-list', '--vnf', vnf, '-o', 'json', '--all-fields'])).stdout);
  }

  async function createVnf(pkg: string, name: string): Promise<string> {
    return json<{ id: string }>((await ok(['vnf-create', '--package', pkg, '--name', name, '-o', 'json'])).stdout).id;
  }

  async function show(vnf: string): Promise<any> {
    return json((await ok(['vnf-show', vnf, '-o', 'json'])).stdout);
  }

  /** A copy of a sample package under a new vnfdId with `edit` applied to one file, its TOSCA.meta hash updated. */
  function variant(pkg: string, file: string, edit: (text: string) => string): string {
    const dir = mkdtempSync(join(work, 'pkg-'));
    cpSync(pkg, dir, { recursive: true });
    const defs = join(dir, 'Definitions');
    const vnfdId = /descriptor_id: (\S+)/.exec(
      readFileSync(
        join(
          defs,
          readdirSync(defs).find((f) => f.endsWith('_top.vnfd.yaml'))!,
        ),
        'utf8',
      ),
    )![1]!;
    for (const f of readdirSync(defs)) writeFileSync(join(defs, f), readFileSync(join(defs, f), 'utf8').replaceAll(vnfdId, randomUUID()));
    const path = join(dir, file);
    const before = readFileSync(path);
    const after = edit(before.toString('utf8'));
    writeFileSync(path, after);
    const meta = join(dir, 'TOSCA-Metadata', 'TOSCA.meta');
    const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
    writeFileSync(meta, readFileSync(meta, 'utf8').replace(sha(before), sha(after)));
    return dir;
  }

  beforeAll(async () => {
    current = await start();
    work = mkdtempSync(join(tmpdir(), 'vnfm-capi-e2e-'));
    home = newHome();
    await ok(['vim-register', '--config-file', vimConfig(target().endpoint, join(work, 'vim-config.yaml')), '--is-default', 'mgmt']);
    await ok(['vnfpkg-onboard', join(MGMT, 'package'), '--name', 'capi-mgmt']);
    await ok(['vnfpkg-onboard', join(CAPO, 'package'), '--name', 'capo']);
    await ok(['vnfpkg-onboard', join(CAPO, 'package-v2'), '--name', 'capo-v2']);
    await ok(['vnfpkg-onboard', join(KAMAJI, 'package'), '--name', 'kamaji']);
  }, 120_000);

  afterAll(async () => {
    await current?.stop();
  });

  describe('Cluster API CNFs', () => {
    it('refuses a workload cluster before the management cluster: every missing CRD named with its objects and files, nothing created', async () => {
      const vnf = await createVnf('capo', 'too-early');
      const r = await run(['vnf-instantiate', vnf, '--request-file', req(CAPO, 'instantiate.json')]);
      expect(r.code).toBe(2);
      expect(r.stderr).not.toMatch(/FAILED_TEMP/);
      expect(r.stderr).toMatch(/no CustomResourceDefinition provides /);
      expect(r.stderr).toMatch(/Cluster \(cluster.x-k8s.io\/v1beta1\), needed by capo-cluster-1 in Files\/kubernetes\/cluster.yaml/);
      expect(r.stderr).toMatch(/MachineDeployment \(cluster.x-k8s.io\/v1beta1\), needed by capo-cluster-1-md-0 in Files\/kubernetes\/workers.yaml/);
      expect(r.stderr).toMatch(
        /OpenStackMachineTemplate \(infrastructure.cluster.x-k8s.io\/v1beta1\), needed by capo-cluster-1-control-plane in Files\/kubernetes\/control-plane.yaml/,
      );
      expect(r.stderr).toMatch(/hint: install the definitions first/);
      expect((await get('/api/v1/namespaces/default/secrets/capo-cluster-1-cloud-config')).status).toBe(404);
      expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
      expect(await occurrences(vnf)).toEqual([]);
      await ok(['vnf-delete', vnf, '--yes']);
    });

    it('fails on a CRD whose names are never accepted (so never Established), naming it', async () => {
      // A second definition of kind Machine in cluster.x-k8s.io under another plural: the API server refuses its names.
      const dir = variant(join(MGMT, 'package'), 'Files/kubernetes/crds-cluster-api.yaml', (t) =>
        t
          .replace(/  name: machinehealthchecks.cluster.x-k8s.io\n/, '  name: machinehealthchecks2.cluster.x-k8s.io\n')
          .replace(/plural: machinehealthchecks\n/, 'plural: machinehealthchecks2\n')
          .replace(/kind: MachineHealthCheck\n/g, 'kind: Machine\n'),
      );
      const pkgArgs = ['vnfpkg-onboard', dir, '--name', 'mgmt-conflict'];
      await ok(pkgArgs);
      const vnf = await createVnf('mgmt-conflict', 'conflict');
      const r = await run(['vnf-instantiate', vnf, '--request-file', req(MGMT, 'instantiate.json'), '--timeout', '30s']);
      expect(r.code).toBe(1);
      // Which of the two definitions of Machine loses is the API server's choice.
      expect(r.stderr).toMatch(/CustomResourceDefinition machine\S*\.cluster\.x-k8s\.io will not become ready: its names were not accepted/);
      const op = json<any[]>((await ok(['op-list', '-o', 'json'])).stdout).find((o) => o.vnfInstanceId === vnf);
      await ok(['op-rollback', op.id]);
      expect((await get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clusters.cluster.x-k8s.io')).status).toBe(404);
    }, 60_000);

    extraTests?.({ run, ok, createVnf, occurrences, get }, target);

    it('instantiates the management cluster: CRDs Established before the controllers', async () => {
      const vnf = await createVnf('capi-mgmt', 'mgmt');
      const r = await ok(['vnf-instantiate', vnf, '--request-file', req(MGMT, 'instantiate.json')]);
      expect(r.stderr).toMatch(/CustomResourceDefinition\/machinedeployments.cluster.x-k8s.io/);
      for (const crd of [
        'clusters.cluster.x-k8s.io',
        'machinedeployments.cluster.x-k8s.io',
        'kubeadmcontrolplanes.controlplane.cluster.x-k8s.io',
        'openstackclusters.infrastructure.cluster.x-k8s.io',
        'kamajicontrolplanes.controlplane.cluster.x-k8s.io',
        'kubevirtmachinetemplates.infrastructure.cluster.x-k8s.io',
      ]) {
        const got = await get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`);
        expect(got.body.status.conditions.find((c: any) => c.type === 'Established').status, crd).toBe('True');
      }
      const info = (await show(vnf)).instantiatedVnfInfo;
      expect([...new Set(info.vnfcInfo.map((c: any) => c.vduId))].sort()).toEqual([
        'capi_controller',
        'capk_controller',
        'capo_controller',
        'kamaji_controller',
        'kubeadm_bootstrap_controller',
        'kubeadm_control_plane_controller',
      ]);
      expect((await get('/apis/apps/v1/namespaces/capo-system/deployments/capo-controller-manager')).body.status.readyReplicas).toBe(1);
    }, 60_000);

    let capo: string;

    it('instantiates the CAPO workload cluster: Cluster Provisioned, kubeconfig Secret, Machines as VNFCs', async () => {
      capo = await createVnf('capo', 'capo-1');
      await ok(['vnf-instantiate', capo, '--request-file', req(CAPO, 'instantiate.json')]);
      const cluster = (await get(`${CAPI}/namespaces/default/clusters/capo-cluster-1`)).body;
      expect(cluster.status.phase).toBe('Provisioned');
      const written = Buffer.from((await get('/api/v1/namespaces/default/secrets/capo-cluster-1-kubeconfig')).body.data.value, 'base64').toString('utf8');
      expect(yaml.load(written)).toMatchObject({ kind: 'Config', clusters: [{ cluster: { server: expect.stringMatching(/^https:\/\//) } }] });
      const info = (await show(capo)).instantiatedVnfInfo;
      const workers = info.vnfcResourceInfo.filter((r: any) => r.vduId === 'worker');
      expect(workers).toHaveLength(1);
      expect(workers[0].computeResource.vimLevelResourceType).toBe('MachineDeployment');
      expect(workers[0].metadata.kind).toBe('Machine');
      expect((await machines('capo-cluster-1-md-0')).map((m) => m.metadata.name)).toEqual([workers[0].computeResource.resourceId]);
      expect(info.vnfcInfo.filter((c: any) => c.vduId === 'control_plane')).toHaveLength(1);
      expect(info.metadata.vnfm_readiness['cluster.x-k8s.io/Cluster']).toEqual({ jsonPath: '.status.phase', values: ['Provisioned'], failedValues: ['Failed'] });
    }, 60_000);

    it('scales the workers out and in through the MachineDeployment', async () => {
      await ok(['vnf-scale', capo, '--type', 'SCALE_OUT', '--aspect-id', 'worker_aspect']);
      expect((await get(`${CAPI}/namespaces/default/machinedeployments/capo-cluster-1-md-0`)).body.spec.replicas).toBe(2);
      expect(await machines('capo-cluster-1-md-0')).toHaveLength(2);
      let info = (await show(capo)).instantiatedVnfInfo;
      expect(info.vnfcInfo.filter((c: any) => c.vduId === 'worker')).toHaveLength(2);
      expect(info.scaleStatus).toEqual([{ aspectId: 'worker_aspect', scaleLevel: 1 }]);
      await ok(['vnf-scale', capo, '--type', 'SCALE_IN', '--aspect-id', 'worker_aspect']);
      expect(await machines('capo-cluster-1-md-0')).toHaveLength(1);
      info = (await show(capo)).instantiatedVnfInfo;
      expect(info.vnfcInfo.filter((c: any) => c.vduId === 'worker')).toHaveLength(1);
    }, 60_000);

    it('heals one worker: its Machine is deleted and replaced', async () => {
      const before = (await show(capo)).instantiatedVnfInfo.vnfcInfo.find((c: any) => c.vduId === 'worker');
      const r = await ok(['vnf-heal', capo, '--vnfc-instance', before.id]);
      expect(r.stderr).toMatch(/Machine\/.*deleted, waiting for its replacement/);
      const now = await machines('capo-cluster-1-md-0');
      expect(now).toHaveLength(1);
      expect(now[0].metadata.name).not.toBe(before.vnfcResourceInfoId);
      expect(now[0].status.phase).toBe('Running');
      const after = (await show(capo)).instantiatedVnfInfo.vnfcInfo.find((c: any) => c.vduId === 'worker');
      expect(after.id).toBe(`worker-${now[0].metadata.name}`);
    }, 60_000);

    it('changes the package: a failed change is rolled back to version 1.0, then the change succeeds', async () => {
      const lift = await target().failChange();
      const failed = await run(['vnf-change-package', capo, '--request-file', req(CAPO, 'change-package.json')]);
      await lift();
      expect(failed.code, failed.stderr).not.toBe(0);
      expect(failed.stderr).toMatch(/FAILED_TEMP/);
      const op = json<any[]>((await ok(['op-list', '-o', 'json'])).stdout).find((o) => o.vnfInstanceId === capo && o.operationState === 'FAILED_TEMP');
      await ok(['op-rollback', op.id]);
      expect(json((await ok(['op-show', op.id, '-o', 'json'])).stdout).operationState).toBe('ROLLED_BACK');
      const md = (await get(`${CAPI}/namespaces/default/machinedeployments/capo-cluster-1-md-0`)).body;
      expect(md.spec.template.spec.version).toBe('v1.31.6');
      expect(md.spec.template.spec.infrastructureRef.name).toBe('capo-cluster-1-md-0');
      expect((await get('/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/default/openstackmachinetemplates/capo-cluster-1-md-0-v2')).status).toBe(404);

      await ok(['vnf-change-package', capo, '--request-file', req(CAPO, 'change-package.json')]);
      const v2 = (await get(`${CAPI}/namespaces/default/machinedeployments/capo-cluster-1-md-0`)).body;
      expect(v2.spec.template.spec.version).toBe('v1.32.2');
      expect(v2.spec.template.spec.infrastructureRef.name).toBe('capo-cluster-1-md-0-v2');
      expect((await get(`/apis/controlplane.cluster.x-k8s.io/v1beta1/namespaces/default/kubeadmcontrolplanes/capo-cluster-1-control-plane`)).body.spec.version).toBe('v1.32.2');
      // The old templates are no longer in the package: gone.
      expect((await get('/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/default/openstackmachinetemplates/capo-cluster-1-md-0')).status).toBe(404);
      const ms = await machines('capo-cluster-1-md-0');
      expect(ms).toHaveLength(1);
      expect(ms[0].spec.version).toBe('v1.32.2');
      expect((await show(capo)).vnfdId).toBe('c7d0b6a4-3e1f-4c2b-8a5d-2f9e6b1c0d22');
    }, 90_000);

    it('terminates the workload cluster leaving no custom resource', async () => {
      await ok(['vnf-terminate', capo, '--yes']);
      for (const kind of ['clusters', 'machinedeployments', 'machinesets', 'machines']) expect(await items(`${CAPI}/${kind}`), kind).toEqual([]);
      expect(await items('/apis/infrastructure.cluster.x-k8s.io/v1beta1/openstackclusters')).toEqual([]);
      expect(await items('/apis/controlplane.cluster.x-k8s.io/v1beta1/kubeadmcontrolplanes')).toEqual([]);
      expect((await get('/api/v1/namespaces/default/secrets/capo-cluster-1-kubeconfig')).status).toBe(404);
    }, 60_000);

    it('runs the Kamaji + KubeVirt workload cluster: instantiate, scale, terminate', async () => {
      const vnf = await createVnf('kamaji', 'kamaji-1');
      await ok(['vnf-instantiate', vnf, '--request-file', req(KAMAJI, 'instantiate.json')]);
      expect((await get(`${CAPI}/namespaces/default/clusters/kamaji-kubevirt-1`)).body.status.phase).toBe('Provisioned');
      expect(await machines('kamaji-kubevirt-1-md-0')).toHaveLength(2);
      let info = (await show(vnf)).instantiatedVnfInfo;
      expect(info.vnfcInfo.filter((c: any) => c.vduId === 'worker')).toHaveLength(2);
      // A control plane of pods owns no Machines: no VNFCs.
      expect(info.vnfcInfo.filter((c: any) => c.vduId === 'control_plane')).toEqual([]);
      await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'worker_aspect']);
      expect(await machines('kamaji-kubevirt-1-md-0')).toHaveLength(3);
      info = (await show(vnf)).instantiatedVnfInfo;
      expect(info.vnfcInfo.filter((c: any) => c.vduId === 'worker')).toHaveLength(3);
      await ok(['vnf-terminate', vnf, '--yes']);
      expect(await items(`${CAPI}/clusters`)).toEqual([]);
      expect(await items('/apis/controlplane.cluster.x-k8s.io/v1alpha1/kamajicontrolplanes')).toEqual([]);
      expect(await items('/apis/infrastructure.cluster.x-k8s.io/v1alpha1/kubevirtmachinetemplates')).toEqual([]);
    }, 60_000);
  });

  describe('custom resources the cluster refuses', () => {
    it('shows the API server message for a schema-rejected custom resource, with the object and its file', async () => {
      const dir = variant(join(CAPO, 'package'), 'Files/kubernetes/workers.yaml', (t) => t.replace('failureDomain: nova', 'failureDomain: [nova]'));
      await ok(['vnfpkg-onboard', dir, '--name', 'capo-bad-schema']);
      const vnf = await createVnf('capo-bad-schema', 'bad-schema');
      const r = await run(['vnf-instantiate', vnf, '--request-file', req(CAPO, 'instantiate.json')]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/cannot create MachineDeployment capo-cluster-1-md-0 in namespace default: the API server answered 422 Invalid: .*failureDomain/);
      expect(r.stderr).toMatch(/\(MachineDeployment capo-cluster-1-md-0 in namespace default, from Files\/kubernetes\/workers.yaml\)/);
      const op = json<any[]>((await ok(['op-list', '-o', 'json'])).stdout).find((o) => o.vnfInstanceId === vnf);
      await ok(['op-rollback', op.id]);
      expect(await items(`${CAPI}/clusters`)).toEqual([]);
    }, 60_000);

    it('refuses a VDU mapped to an object without /scale before creating anything', async () => {
      const dir = variant(join(CAPO, 'package'), 'Definitions/capi_capo_workload_df_default.yaml', (t) => t.replace('name: capo-cluster-1-control-plane', 'name: capo-cluster-1'));
      await ok(['vnfpkg-onboard', dir, '--name', 'capo-no-scale']);
      const vnf = await createVnf('capo-no-scale', 'no-scale');
      const r = await run(['vnf-instantiate', vnf, '--request-file', req(CAPO, 'instantiate.json')]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/VDU control_plane maps to Cluster capo-cluster-1, whose kind has no \/scale subresource/);
      expect(r.stderr).not.toMatch(/FAILED_TEMP/);
      expect(await occurrences(vnf)).toEqual([]);
      expect((await get('/api/v1/namespaces/default/secrets/capo-cluster-1-cloud-config')).status).toBe(404);
      expect(await items(`${CAPI}/clusters`)).toEqual([]);
    });
  });
}
