/**
 * vnf-adopt with the real program: the basic CNF sample's objects created
 * through the Kubernetes API as Tacker creates them (v2: a POST of each
 * manifest with the level's replicas; v1 here: a server-side apply as
 * `kubectl apply --server-side` would), and Tacker's own description of the
 * instance written in the shapes of its API (v2: the VnfInstance of
 * /vnflcm/v2, its namespace and definition files in
 * instantiatedVnfInfo.metadata; v1: `openstack vnflcm show -f json`, display
 * names, vimConnectionInfo a list, additionalParams kept). Refusals name each
 * difference and record nothing; an adoption restarts nothing (pod uids and
 * workload generations unchanged); the instance then scales, heals, changes
 * package and terminates with vnfm; op-rollback of an ADOPT forgets the
 * instance and leaves the cluster as it is.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { newHome, okWith, vnfm } from '../support/cli.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');
const VNFD_ID = '1191aa45-a57a-4232-8201-6a7a66d41e38';
const DEF_FILES = ['Files/kubernetes/configmap.yaml', 'Files/kubernetes/service.yaml', 'Files/kubernetes/deployment_vdu1.yaml', 'Files/kubernetes/deployment_vdu2.yaml'];
const TACKER_VIM_ID = '0c3a2a8e-5f7d-4c5e-9a57-3f0d1b2c4e6f';
const V2_ID = '8d3f7c52-1e4b-4a36-9b0e-6c1d2a3b4c5d';
const V1_ID = 'b2e9a4c1-7f3d-4e8a-a1b2-c3d4e5f6a7b8';

let cluster: E2eCluster;
let home: string;
let dir: string;
let NS: string;
let NS1: string;

const ok = okWith((args) => vnfm(args, { home }));
const json = <T = Record<string, unknown>>(out: string) => JSON.parse(out) as T;

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; uid?: string; generation?: number; labels?: Record<string, string>; deletionTimestamp?: string; ownerReferences?: unknown[] };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
};

async function api(method: string, path: string, body?: unknown, contentType?: string): Promise<Record<string, unknown>> {
  const r = await cluster.request(method, path, body, contentType);
  if (r.status >= 300) throw new Error(`${method} ${path}: HTTP ${r.status}: ${r.text}`);
  return r.json as Record<string, unknown>;
}

/** Asks again until `check` holds: the controllers act on their own time (no fixed sleep). */
async function until<T>(read: () => Promise<T>, check: (v: T) => boolean): Promise<T> {
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The package's manifests, as its definition files give them. */
function manifests(): Obj[] {
  return DEF_FILES.map((f) => yaml.load(readFileSync(join(SAMPLE, 'package', f), 'utf8')) as Obj);
}

const collection = (o: Obj, ns: string) => `${o.apiVersion === 'v1' ? '/api/v1' : `/apis/${o.apiVersion}`}/namespaces/${ns}/${o.kind.toLowerCase()}s`;
const path = (o: Obj, ns: string) => `${collection(o, ns)}/${o.metadata.name}`;

/** The objects as Tacker v2 creates them: each manifest POSTed in the namespace, a VDU's replicas those of its level. */
async function createAsTackerV2(ns: string, replicas: Record<string, number>): Promise<void> {
  for (const o of manifests()) {
    const body = structuredClone(o);
    body.metadata.namespace = ns;
    if (body.spec && replicas[o.metadata.name] !== undefined) body.spec['replicas'] = replicas[o.metadata.name];
    await api('POST', collection(o, ns), body);
  }
}

/** As `kubectl apply --server-side` writes them (field manager kubectl), with images replaced where asked. */
async function applyAsKubectl(ns: string, replicas: Record<string, number>, images: Record<string, string> = {}): Promise<void> {
  for (const o of manifests()) {
    const body = structuredClone(o);
    body.metadata.namespace = ns;
    if (body.spec && replicas[o.metadata.name] !== undefined) body.spec['replicas'] = replicas[o.metadata.name];
    const containers = ((body.spec?.['template'] as { spec?: { containers?: { name: string; image: string }[] } } | undefined)?.spec?.containers ?? []) as {
      name: string;
      image: string;
    }[];
    for (const c of containers) if (images[`${o.metadata.name}/${c.name}`]) c.image = images[`${o.metadata.name}/${c.name}`]!;
    await api('PATCH', `${path(o, ns)}?fieldManager=kubectl&force=true`, body, 'application/apply-patch+yaml');
  }
}

async function deployment(ns: string, name: string): Promise<Obj> {
  return (await api('GET', `/apis/apps/v1/namespaces/${ns}/deployments/${name}`)) as unknown as Obj;
}

/** The live pods of the sample's VDUs in `ns`, by name → uid, once each Deployment has all its replicas ready and no others. */
async function settledPods(ns: string, want: Record<string, number>): Promise<Map<string, Obj>> {
  const [, pods] = await until(
    async () => {
      // Deployments first: a rollout the controller has not begun yet still shows the old pods ready.
      const deployments = (await api('GET', `/apis/apps/v1/namespaces/${ns}/deployments`))['items'] as Obj[];
      const list = (await api('GET', `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent('app.kubernetes.io/name=basic-cnf')}`))['items'] as Obj[];
      return [deployments, new Map(list.map((p) => [p.metadata.name, p]))] as const;
    },
    ([deployments, pods]) => {
      for (const d of deployments) {
        const st = (d.status ?? {}) as { observedGeneration?: number; updatedReplicas?: number; replicas?: number; readyReplicas?: number };
        const replicas = (d.spec?.['replicas'] as number | undefined) ?? 1;
        if ((st.observedGeneration ?? 0) < (d.metadata.generation ?? 0) || st.updatedReplicas !== replicas || st.replicas !== replicas || st.readyReplicas !== replicas)
          return false;
      }
      for (const [app, n] of Object.entries(want)) {
        const mine = [...pods.values()].filter((p) => p.metadata.labels?.['app.kubernetes.io/component'] === app);
        const ready = mine.filter(
          (p) =>
            !p.metadata.deletionTimestamp && (p.status?.['conditions'] as { type: string; status: string }[] | undefined)?.some((c) => c.type === 'Ready' && c.status === 'True'),
        );
        if (mine.length !== n || ready.length !== n) return false;
      }
      return true;
    },
  );
  return pods;
}

const uids = (pods: Map<string, Obj>) => Object.fromEntries([...pods].map(([name, p]) => [name, p.metadata.uid]));

/** Tacker v2's VnfInstance (GET /vnflcm/v2/vnf_instances/ID), as sol_refactored records a CNF. */
function tackerV2Instance(ns: string, pods: Map<string, Obj>, level: number): Record<string, unknown> {
  const vnfcResourceInfo = [...pods.values()].map((p) => {
    const vdu = p.metadata.labels?.['app.kubernetes.io/component'] === 'vdu1' ? 'VDU1' : 'VDU2';
    return { id: p.metadata.name, vduId: vdu, computeResource: { resourceId: p.metadata.name, vimLevelResourceType: 'Deployment' }, metadata: {} };
  });
  return {
    id: V2_ID,
    vnfInstanceName: 'web',
    vnfInstanceDescription: 'basic CNF, instantiated by Tacker',
    vnfdId: VNFD_ID,
    vnfProvider: 'vnfm',
    vnfProductName: 'basic-cnf',
    vnfSoftwareVersion: '1.0',
    vnfdVersion: '1.0',
    vimConnectionInfo: { vim1: { vimId: TACKER_VIM_ID, vimType: 'kubernetes', interfaceInfo: { endpoint: cluster.server }, accessInfo: {} } },
    instantiationState: 'INSTANTIATED',
    instantiatedVnfInfo: {
      flavourId: 'simple',
      vnfState: 'STARTED',
      scaleStatus: [
        { aspectId: 'vdu1_aspect', scaleLevel: level },
        { aspectId: 'vdu2_aspect', scaleLevel: 0 },
      ],
      maxScaleLevels: [
        { aspectId: 'vdu1_aspect', scaleLevel: 2 },
        { aspectId: 'vdu2_aspect', scaleLevel: 1 },
      ],
      vnfcResourceInfo,
      vnfcInfo: vnfcResourceInfo.map((r) => ({ id: `${r.vduId}-${r.id}`, vduId: r.vduId, vnfcResourceInfoId: r.id, vnfcState: 'STARTED' })),
      metadata: { namespace: ns, tenant: ns, vdu_reses: {}, 'lcm-kubernetes-def-files': DEF_FILES },
    },
    metadata: {},
    _links: { self: { href: `http://tacker:9890/vnflcm/v2/vnf_instances/${V2_ID}` } },
  };
}

/** Tacker v1's `openstack vnflcm show ID -f json`: tackerclient's display names, vimConnectionInfo a list, the request's additionalParams kept. */
function tackerV1Show(ns: string, vimId: string): Record<string, unknown> {
  return {
    ID: V1_ID,
    'Instantiated Vnf Info': {
      flavourId: 'simple',
      vnfState: 'STARTED',
      scaleStatus: [
        { aspectId: 'vdu1_aspect', scaleLevel: 0 },
        { aspectId: 'vdu2_aspect', scaleLevel: 0 },
      ],
      extCpInfo: [],
      vnfcResourceInfo: [],
      additionalParams: { 'lcm-kubernetes-def-files': DEF_FILES, namespace: ns },
    },
    'Instantiation State': 'INSTANTIATED',
    Links: { self: { href: `/vnflcm/v1/vnf_instances/${V1_ID}` } },
    'VIM Connection Info': [{ id: 'c1d2e3f4-0000-4000-8000-000000000001', vimId, vimType: 'kubernetes', interfaceInfo: {}, accessInfo: {}, extra: {} }],
    'VNF Instance Description': '',
    'VNF Instance Name': 'legacy',
    'VNF Product Name': 'basic-cnf',
    'VNF Provider': 'vnfm',
    'VNF Software Version': '1.0',
    'VNFD ID': VNFD_ID,
    'VNFD Version': '1.0',
    vnfPkgId: '5a1c3e2b-0000-4000-8000-000000000002',
    metadata: { namespace: ns },
  };
}

function writeJson(name: string, doc: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(doc, null, 2));
  return file;
}

interface Shown {
  id: string;
  vnfInstanceName?: string;
  instantiationState: string;
  vimId?: string;
  instantiatedVnfInfo: {
    flavourId: string;
    scaleStatus: { aspectId: string; scaleLevel: number }[];
    vnfcInfo: { id: string; vduId: string; vnfcResourceInfoId: string }[];
    resources: { kind: string; name: string; namespace?: string }[];
    metadata: { namespace: string; vduReplicas: Record<string, number>; 'lcm-kubernetes-def-files': string[] };
  };
}

beforeAll(async () => {
  cluster = await e2eCluster('e2e-adopt', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  NS = cluster.namespace;
  NS1 = `${NS === 'default' ? 'legacy' : NS}-v1`;
  await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS1 } });
  dir = mkdtempSync(join(tmpdir(), 'vnfm-adopt-e2e-'));
  const vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, NS);
  home = newHome();
  await ok(['vim-register', '--config-file', vimConfig, 'sandbox']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package-v2'), '--name', 'basic-cnf-v2']);
});

afterAll(async () => {
  if (cluster && cluster.flavour === 'real') await cluster.request('DELETE', `/api/v1/namespaces/${NS1}`);
  await cluster?.close();
});

describe('vnf-adopt --from-tacker', () => {
  it('takes over a Tacker v2 CNF as it runs (no pod restarted), then scales, heals, changes package and terminates it', async () => {
    await createAsTackerV2(NS, { vdu1: 2, vdu2: 1 });
    const before = await settledPods(NS, { vdu1: 2, vdu2: 1 });
    const generations = { vdu1: (await deployment(NS, 'vdu1')).metadata.generation, vdu2: (await deployment(NS, 'vdu2')).metadata.generation };
    const file = writeJson('web-v2.json', tackerV2Instance(NS, before, 1));

    // Refusals, before anything is recorded: a package that is not the instance's (2); Tacker's VIM id, not registered here (3).
    const wrongPackage = await vnfm(['vnf-adopt', '--from-tacker', file, '--package', 'basic-cnf-v2', '--vim', 'sandbox'], { home });
    expect(wrongPackage.code).toBe(2);
    expect(wrongPackage.stderr).toContain(`is ${VNFD_ID}, and package basic-cnf-v2 has vnfdId 97ff675b-d247-4664-8486-5c302ccf37fc: it is not the package of this instance`);
    const unknownVim = await vnfm(['vnf-adopt', '--from-tacker', file], { home });
    expect(unknownVim.code).toBe(3);
    expect(unknownVim.stderr).toContain(`no registered VIM has the id or name ${TACKER_VIM_ID}`);
    expect(unknownVim.stderr).toContain('--vim NAME');
    // Tacker says level 0 where 2 replicas run: the difference is named.
    const wrongLevel = await vnfm(['vnf-adopt', '--from-tacker', writeJson('web-level0.json', tackerV2Instance(NS, before, 0)), '--vim', 'sandbox'], { home });
    expect(wrongLevel.code).toBe(4);
    expect(wrongLevel.stderr).toContain("Deployment vdu1 (VDU1) runs 2 replicas; Tacker's scale level 0 of vdu1_aspect gives 1");

    // --dry-run: what would be adopted, nothing recorded.
    const dry = json<Record<string, unknown>[]>((await ok(['vnf-adopt', '--from-tacker', file, '--vim', 'sandbox', '--dry-run', '-o', 'json'])).stdout);
    expect(dry).toHaveLength(1);
    expect(dry[0]).toMatchObject({ vnfInstanceId: V2_ID, vnfInstanceName: 'web', namespace: NS, dryRun: true, tacker: { api: 'v2' } });
    expect((dry[0]!['vnfcs'] as string[]).length).toBe(3);
    expect(json<unknown[]>((await ok(['vnf-list', '-o', 'json'])).stdout)).toEqual([]);
    expect(json<unknown[]>((await ok(['op-list', '-o', 'json'])).stdout)).toEqual([]);

    const adopted = await ok(['vnf-adopt', '--from-tacker', file, '--vim', 'sandbox']);
    expect(adopted.stderr).toContain(`ADOPT of vnf instance ${V2_ID} COMPLETED`);
    expect(adopted.stdout).toMatch(new RegExp(`^${V2_ID.slice(0, 8)}.*\\s+web\\s+sandbox\\s+${NS}\\s+4\\s+3\\s+INSTANTIATED \\(ADOPT COMPLETED\\)`, 'm'));

    // Nothing restarted, no spec changed: the same pods, the same generations; the label is vnfm's field alone.
    const after = await settledPods(NS, { vdu1: 2, vdu2: 1 });
    expect(uids(after)).toEqual(uids(before));
    for (const p of after.values()) expect(p.metadata.labels?.['vnfm/vnf-instance-id']).toBe(V2_ID);
    const vdu1 = await deployment(NS, 'vdu1');
    expect({ vdu1: vdu1.metadata.generation, vdu2: (await deployment(NS, 'vdu2')).metadata.generation }).toEqual(generations);
    expect(vdu1.metadata.labels?.['vnfm/vnf-instance-id']).toBe(V2_ID);
    const managers = (vdu1.metadata as { managedFields?: { manager: string; operation: string; fieldsV1?: unknown }[] }).managedFields ?? [];
    const mine = managers.find((m) => m.manager === 'vnfm');
    expect(mine?.operation).toBe('Apply');
    expect(JSON.stringify(mine?.fieldsV1)).not.toContain('spec');

    // Recorded as an instantiate would have: INSTANTIATED on the VIM, its VNFCs, scale levels and replicas, and an occurrence ADOPT.
    const shown = json<Shown>((await ok(['vnf-show', V2_ID, '-o', 'json'])).stdout);
    expect(shown).toMatchObject({ id: V2_ID, vnfInstanceName: 'web', instantiationState: 'INSTANTIATED' });
    const vims = json<{ id: string; name: string }[]>((await ok(['vim-list', '-o', 'json'])).stdout);
    expect(shown.vimId).toBe(vims.find((v) => v.name === 'sandbox')!.id);
    expect(shown.instantiatedVnfInfo.scaleStatus).toEqual([
      { aspectId: 'vdu1_aspect', scaleLevel: 1 },
      { aspectId: 'vdu2_aspect', scaleLevel: 0 },
    ]);
    expect(shown.instantiatedVnfInfo.metadata).toMatchObject({ namespace: NS, vduReplicas: { VDU1: 2, VDU2: 1 }, 'lcm-kubernetes-def-files': DEF_FILES });
    expect(shown.instantiatedVnfInfo.vnfcInfo.map((v) => v.vnfcResourceInfoId).sort()).toEqual([...before.keys()].sort());
    expect(shown.instantiatedVnfInfo.resources.map((r) => `${r.kind}/${r.name}`)).toEqual([
      'ConfigMap/basic-cnf-content',
      'Service/basic-cnf-web',
      'Deployment/vdu1',
      'Deployment/vdu2',
    ]);
    const ops = json<{ id: string; operation: string; operationState: string }[]>((await ok(['op-list', '--vnf', V2_ID, '-o', 'json'])).stdout);
    expect(ops.map((o) => `${o.operation} ${o.operationState}`)).toEqual(['ADOPT COMPLETED']);
    expect((await ok(['op-list', '--operation', 'ADOPT'])).stdout).toContain('ADOPT');
    expect(json<{ ready: boolean; drift: string[] }>((await ok(['vnf-describe', V2_ID, '-o', 'json'])).stdout)).toMatchObject({ ready: true, drift: [] });

    // Adopting it again is a conflict (4).
    const again = await vnfm(['vnf-adopt', '--from-tacker', file, '--vim', 'sandbox'], { home });
    expect(again.code).toBe(4);
    expect(again.stderr).toContain(`vnf instance ${V2_ID} is recorded already`);

    // vnfm's operations from here on.
    await ok(['vnf-scale', 'web', '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']);
    const scaled = await settledPods(NS, { vdu1: 3, vdu2: 1 });
    expect(json<Shown>((await ok(['vnf-show', 'web', '-o', 'json'])).stdout).instantiatedVnfInfo.scaleStatus[0]).toEqual({ aspectId: 'vdu1_aspect', scaleLevel: 2 });
    // Once vnfm has operated, the adoption is no longer undone by forgetting.
    const late = await vnfm(['op-rollback', ops[0]!.id], { home });
    expect(late.code).toBe(4);
    expect(late.stderr).toContain('the adoption can no longer be rolled back');

    await ok(['vnf-heal', 'web']);
    const healed = await settledPods(NS, { vdu1: 3, vdu2: 1 });
    for (const uid of Object.values(uids(scaled))) expect(Object.values(uids(healed))).not.toContain(uid);

    await ok(['vnf-change-package', 'web', '--request-file', join(SAMPLE, 'requests', 'change-package.json')]);
    const changed = await deployment(NS, 'vdu1');
    expect((changed.spec!['template'] as { spec: { containers: { image: string }[] } }).spec.containers[0]!.image).toBe('docker.io/library/nginx:1.27-alpine');
    expect(changed.spec!['replicas']).toBe(3);

    await ok(['vnf-terminate', 'web', '--yes']);
    for (const o of manifests()) expect((await cluster.request('GET', path(o, NS))).status).toBe(404);
    expect(json<Shown>((await ok(['vnf-show', 'web', '-o', 'json'])).stdout).instantiationState).toBe('NOT_INSTANTIATED');
  });

  it('refuses a Tacker v1 CNF whose objects are missing or changed, naming each difference; adopts it from a list; op-rollback forgets it', async () => {
    const vimId = json<{ id: string; name: string }[]>((await ok(['vim-list', '-o', 'json'])).stdout).find((v) => v.name === 'sandbox')!.id;
    // A list of one, as GET /vnflcm/v1/vnf_instances gives them; vimId the id vnfm gave the VIM Tacker used.
    const file = writeJson('legacy-v1.json', [tackerV1Show(NS1, vimId)]);

    const missing = await vnfm(['vnf-adopt', '--from-tacker', file], { home });
    expect(missing.code).toBe(4);
    for (const what of ['ConfigMap basic-cnf-content', 'Service basic-cnf-web', 'Deployment vdu1', 'Deployment vdu2'])
      expect(missing.stderr).toMatch(new RegExp(`${what}[^\\n]*: missing`));
    expect(missing.stderr).toContain('nothing was recorded');

    await applyAsKubectl(NS1, { vdu1: 1, vdu2: 1 }, { 'vdu1/web': 'docker.io/library/nginx:1.25-alpine' });
    await settledPods(NS1, { vdu1: 1, vdu2: 1 });
    const changedImage = await vnfm(['vnf-adopt', '--from-tacker', file], { home });
    expect(changedImage.code).toBe(4);
    expect(changedImage.stderr).toMatch(
      /Deployment vdu1[^\n]*: container web runs image docker\.io\/library\/nginx:1\.25-alpine, the package defines docker\.io\/library\/nginx:1\.26-alpine/,
    );
    expect(json<{ id: string }[]>((await ok(['vnf-list', '-o', 'json'])).stdout).map((i) => i.id)).not.toContain(V1_ID);

    await applyAsKubectl(NS1, { vdu1: 1, vdu2: 1 });
    const before = await settledPods(NS1, { vdu1: 1, vdu2: 1 });
    const adopted = json<{ vnfInstanceId: string; tacker: { api: string }; opOccId: string; instantiationState: string }[]>(
      (await ok(['vnf-adopt', '--from-tacker', file, '-o', 'json'])).stdout,
    );
    expect(adopted).toEqual([expect.objectContaining({ vnfInstanceId: V1_ID, tacker: { api: 'v1', source: `${file}[0]` }, instantiationState: 'INSTANTIATED' })]);
    const shown = json<Shown>((await ok(['vnf-show', 'legacy', '-o', 'json'])).stdout);
    expect(shown.instantiatedVnfInfo.metadata).toMatchObject({ namespace: NS1, vduReplicas: { VDU1: 1, VDU2: 1 } });
    expect(uids(await settledPods(NS1, { vdu1: 1, vdu2: 1 }))).toEqual(uids(before));

    // op-rollback of the ADOPT: the instance is forgotten, the cluster left as it is.
    const rolled = await ok(['op-rollback', adopted[0]!.opOccId]);
    expect(rolled.stderr).toContain(`ADOPT of vnf instance ${V1_ID} ROLLED_BACK`);
    expect((await vnfm(['vnf-show', V1_ID], { home })).code).toBe(3);
    expect(uids(await settledPods(NS1, { vdu1: 1, vdu2: 1 }))).toEqual(uids(before));
    for (const o of manifests()) expect((await cluster.request('GET', path(o, NS1))).status).toBe(200);
    // And it can be adopted again.
    await ok(['vnf-adopt', '--from-tacker', file]);
    expect(json<Shown>((await ok(['vnf-show', 'legacy', '-o', 'json'])).stdout).instantiationState).toBe('INSTANTIATED');
  });
});
