/**
 * What Helm 3 needs from the API server, checked with the real helm binary
 * (test/support/helm.ts) and with the raw requests it sends: release
 * storage in Secrets (protobuf bodies, `owner=helm` label selectors, a
 * protobuf DeleteOptions when a release is purged), discovery and OpenAPI
 * for validating what it renders, create/patch/delete of the chart's
 * objects, server-side dry runs, and CRDs from a chart's `crds/`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHelm, type HelmResult } from '../support/helm.js';
import { connect, type Cluster } from './cluster.js';

let c: Cluster;
let ns: string;
let dir: string;
let kubeconfig: string;

const helm = (...args: string[]): Promise<HelmResult> => runHelm(kubeconfig, dir, args);

async function helmOk(...args: string[]): Promise<string> {
  const r = await helm(...args);
  if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

function writeChart(root: string, files: Record<string, string>): string {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(root, name, '..'), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  return root;
}

const WEB_CHART = {
  'Chart.yaml': 'apiVersion: v2\nname: web\nversion: 0.1.0\nappVersion: "1.0"\n',
  'values.yaml': 'replicaCount: 1\nimage: nginx:1.27\ngreeting: hello\n',
  'templates/deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  labels: {app.kubernetes.io/name: web, app.kubernetes.io/instance: {{ .Release.Name }}}
spec:
  replicas: {{ .Values.replicaCount }}
  selector: {matchLabels: {app.kubernetes.io/instance: {{ .Release.Name }}}}
  template:
    metadata: {labels: {app.kubernetes.io/instance: {{ .Release.Name }}}}
    spec:
      containers:
        - name: web
          image: {{ .Values.image }}
          ports: [{containerPort: 80}]
`,
  'templates/service.yaml': `apiVersion: v1
kind: Service
metadata: {name: {{ .Release.Name }}-web}
spec:
  selector: {app.kubernetes.io/instance: {{ .Release.Name }}}
  ports: [{port: 80, targetPort: 80}]
`,
  'templates/configmap.yaml': `apiVersion: v1
kind: ConfigMap
metadata: {name: {{ .Release.Name }}-config}
data: {greeting: {{ .Values.greeting | quote }}}
`,
};

const CRD_CHART = {
  'Chart.yaml': 'apiVersion: v2\nname: gadgets\nversion: 0.2.0\n',
  'values.yaml': 'size: 1\n',
  'crds/gadgets.yaml': `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.helm-conformance.vnfm.test}
spec:
  group: helm-conformance.vnfm.test
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, properties: {size: {type: integer}}}
`,
  'templates/gadget.yaml': `apiVersion: helm-conformance.vnfm.test/v1
kind: Gadget
metadata: {name: {{ .Release.Name }}-gadget}
spec: {size: {{ .Values.size }}}
`,
};

let webChart: string;
let crdChart: string;

beforeAll(async () => {
  c = await connect('conf-helm');
  ns = c.namespace;
  dir = mkdtempSync(join(tmpdir(), 'vnfm-conf-helm-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, c.kc.exportConfig(), { mode: 0o600 });
  webChart = writeChart(join(dir, 'web'), WEB_CHART);
  crdChart = writeChart(join(dir, 'gadgets'), CRD_CHART);
});
afterAll(async () => {
  await c?.request('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.helm-conformance.vnfm.test');
  await c?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const releaseSecrets = async (release: string, extra = '') =>
  (await c.request('GET', `/api/v1/namespaces/${ns}/secrets?labelSelector=${encodeURIComponent(`owner=helm,name=${release}${extra}`)}`)).json.items as any[];

describe('a release through install, upgrade, rollback and uninstall', () => {
  it('installs: the chart objects carry the release annotations, the release is a Secret labelled owner=helm', async () => {
    const installed = JSON.parse(await helmOk('install', 'web1', webChart, '--namespace', ns, '--output', 'json'));
    expect(installed).toMatchObject({ name: 'web1', namespace: ns, version: 1, info: { status: 'deployed' } });

    const dep = await c.request('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web1-web`);
    expect(dep.status).toBe(200);
    expect(dep.json.spec.replicas).toBe(1);
    expect(dep.json.metadata.annotations).toMatchObject({ 'meta.helm.sh/release-name': 'web1', 'meta.helm.sh/release-namespace': ns });
    expect(dep.json.metadata.labels['app.kubernetes.io/managed-by']).toBe('Helm');
    expect((await c.request('GET', `/api/v1/namespaces/${ns}/services/web1-web`)).status).toBe(200);
    expect((await c.request('GET', `/api/v1/namespaces/${ns}/configmaps/web1-config`)).json.data).toEqual({ greeting: 'hello' });

    const secrets = await releaseSecrets('web1');
    expect(secrets.map((s) => s.metadata.name)).toEqual(['sh.helm.release.v1.web1.v1']);
    expect(secrets[0].type).toBe('helm.sh/release.v1');
    expect(secrets[0].metadata.labels).toMatchObject({ owner: 'helm', name: 'web1', status: 'deployed', version: '1' });
    expect(typeof secrets[0].data.release).toBe('string');
  });

  it('status, get manifest and list read the release back', async () => {
    expect(JSON.parse(await helmOk('status', 'web1', '--namespace', ns, '--output', 'json'))).toMatchObject({ version: 1, info: { status: 'deployed' } });
    const manifest = await helmOk('get', 'manifest', 'web1', '--namespace', ns);
    expect(manifest).toContain('name: web1-web');
    expect(manifest).toContain('kind: Deployment');
    expect(manifest).toContain('kind: ConfigMap');
    const list = JSON.parse(await helmOk('list', '--namespace', ns, '--all', '--output', 'json'));
    expect(list).toEqual([expect.objectContaining({ name: 'web1', namespace: ns, revision: '1', status: 'deployed', chart: 'web-0.1.0' })]);
  });

  it('upgrades with --reuse-values --set: the object is patched, revision 1 is superseded', async () => {
    await helmOk('upgrade', 'web1', webChart, '--namespace', ns, '--reuse-values', '--set', 'replicaCount=3', '--set', 'greeting=hi');
    expect((await c.request('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web1-web`)).json.spec.replicas).toBe(3);
    expect((await c.request('GET', `/api/v1/namespaces/${ns}/configmaps/web1-config`)).json.data).toEqual({ greeting: 'hi' });
    const history = JSON.parse(await helmOk('history', 'web1', '--namespace', ns, '--output', 'json'));
    expect(history.map((h: any) => [h.revision, h.status])).toEqual([
      [1, 'superseded'],
      [2, 'deployed'],
    ]);
    expect(JSON.parse(await helmOk('get', 'values', 'web1', '--namespace', ns, '--output', 'json'))).toEqual({ replicaCount: 3, greeting: 'hi' });
    const deployed = await releaseSecrets('web1', ',status=deployed');
    expect(deployed.map((s) => s.metadata.name)).toEqual(['sh.helm.release.v1.web1.v2']);
  });

  it('rolls back to revision 1: the objects return to its values', async () => {
    await helmOk('rollback', 'web1', '1', '--namespace', ns);
    expect((await c.request('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web1-web`)).json.spec.replicas).toBe(1);
    expect((await c.request('GET', `/api/v1/namespaces/${ns}/configmaps/web1-config`)).json.data).toEqual({ greeting: 'hello' });
    const status = JSON.parse(await helmOk('status', 'web1', '--namespace', ns, '--output', 'json'));
    expect(status).toMatchObject({ version: 3, info: { status: 'deployed', description: 'Rollback to 1' } });
  });

  it('refuses a second release of the same name', async () => {
    const again = await helm('install', 'web1', webChart, '--namespace', ns);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('cannot re-use a name that is still in use');
  });

  it('validates against the server without installing: template --validate, install --dry-run=server', async () => {
    const rendered = await helmOk('template', 'dry1', webChart, '--namespace', ns, '--validate');
    expect(rendered).toContain('name: dry1-web');
    const dry = JSON.parse(await helmOk('install', 'dry1', webChart, '--namespace', ns, '--dry-run=server', '--output', 'json'));
    expect(dry.info.status).toBe('pending-install');
    expect((await c.request('GET', `/apis/apps/v1/namespaces/${ns}/deployments/dry1-web`)).status).toBe(404);
    expect(await releaseSecrets('dry1')).toEqual([]);
  });

  it('uninstalls: the objects and every release Secret are deleted', async () => {
    expect(await helmOk('uninstall', 'web1', '--namespace', ns)).toContain('release "web1" uninstalled');
    expect(await releaseSecrets('web1')).toEqual([]);
    expect((await c.request('GET', `/api/v1/namespaces/${ns}/configmaps/web1-config`)).status).toBe(404);
    expect((await c.request('GET', `/api/v1/namespaces/${ns}/services/web1-web`)).status).toBe(404);
    await c.waitForGone(`/apis/apps/v1/namespaces/${ns}/deployments`, 'web1-web');
    expect(JSON.parse(await helmOk('list', '--namespace', ns, '--all', '--output', 'json'))).toEqual([]);
  });
});

describe('a chart with a CRD', () => {
  it('installs the CRD from crds/ before the custom resource, upgrades and uninstalls it (the CRD stays)', async () => {
    await helmOk('install', 'gad1', crdChart, '--namespace', ns);
    const crd = await c.waitFor('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', 'gadgets.helm-conformance.vnfm.test', () => true);
    expect(crd.spec.names.kind).toBe('Gadget');
    const path = `/apis/helm-conformance.vnfm.test/v1/namespaces/${ns}/gadgets/gad1-gadget`;
    expect((await c.request('GET', path)).json.spec).toEqual({ size: 1 });
    await helmOk('upgrade', 'gad1', crdChart, '--namespace', ns, '--set', 'size=4');
    expect((await c.request('GET', path)).json.spec).toEqual({ size: 4 });
    await helmOk('uninstall', 'gad1', '--namespace', ns);
    await c.waitForGone(`/apis/helm-conformance.vnfm.test/v1/namespaces/${ns}/gadgets`, 'gad1-gadget');
    expect((await c.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.helm-conformance.vnfm.test')).status).toBe(200);
  });
});

describe("the helm-cnf sample's charts (csar-samples/helm-cnf)", () => {
  const sample = (pkg: string) => join(__dirname, '../../csar-samples/helm-cnf', pkg, 'Files/kubernetes/helm-cnf');

  it('install, scale by --reuse-values --set, upgrade to the v2 package chart, roll back, uninstall', async () => {
    const installed = JSON.parse(await helmOk('install', 'sample', sample('package'), '--namespace', ns, '--output', 'json'));
    expect(installed.info.status).toBe('deployed');
    const kinds = (await helmOk('get', 'manifest', 'sample', '--namespace', ns)).match(/^kind: \S+/gm) ?? [];
    expect(kinds.length).toBeGreaterThanOrEqual(4);
    const deployments = () => c.request('GET', `/apis/apps/v1/namespaces/${ns}/deployments?labelSelector=${encodeURIComponent('app.kubernetes.io/managed-by=Helm')}`);
    expect((await deployments()).json.items).toHaveLength(2);

    await helmOk('upgrade', 'sample', sample('package'), '--namespace', ns, '--reuse-values', '--set', 'vdu1.replicaCount=3');
    const scaled = (await deployments()).json.items.map((d: any) => d.spec.replicas).sort();
    expect(scaled).toContain(3);

    const upgraded = JSON.parse(await helmOk('upgrade', 'sample', sample('package-v2'), '--namespace', ns, '--output', 'json'));
    expect(upgraded).toMatchObject({ version: 3, info: { status: 'deployed' }, chart: { metadata: { version: '0.2.0' } } });
    await helmOk('rollback', 'sample', '2', '--namespace', ns);
    expect(JSON.parse(await helmOk('history', 'sample', '--namespace', ns, '--output', 'json')).at(-1)).toMatchObject({ revision: 4, status: 'deployed', chart: 'helm-cnf-0.1.0' });
    expect((await deployments()).json.items.map((d: any) => d.spec.replicas)).toContain(3);

    await helmOk('uninstall', 'sample', '--namespace', ns);
    expect(await releaseSecrets('sample')).toEqual([]);
    for (const d of (await deployments()).json.items) await c.waitForGone(`/apis/apps/v1/namespaces/${ns}/deployments`, d.metadata.name);
  });
});

/** A request with a binary body and Accept, as client-go's typed clients send protobuf. */
async function rawRequest(method: string, path: string, body: Buffer | undefined, headers: Record<string, string>): Promise<{ status: number; contentType: string; body: Buffer }> {
  const server = new URL(c.kc.getCurrentCluster()!.server);
  const opts: RequestOptions = {
    method,
    hostname: server.hostname,
    port: server.port || 443,
    path,
    headers: { ...headers, ...(body ? { 'Content-Length': String(body.length) } : {}) },
  };
  await c.kc.applyToHTTPSOptions(opts);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(opts, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the requests behind release storage', () => {
  it('deletes a Secret with a protobuf DeleteOptions body (what helm uninstall sends)', async () => {
    const name = 'sh.helm.release.v1.raw.v1';
    const created = await c.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name, labels: { owner: 'helm', name: 'raw' } }, type: 'helm.sh/release.v1', data: { release: 'e30=' } },
    });
    expect(created.status).toBe(201);
    // k8s\0 + runtime.Unknown{typeMeta{apiVersion v1, kind DeleteOptions}, raw: an empty DeleteOptions}.
    const body = Buffer.from('6b3873000a130a027631120d44656c6574654f7074696f6e7312001a002200', 'hex');
    const res = await rawRequest('DELETE', `/api/v1/namespaces/${ns}/secrets/${name}`, body, {
      'Content-Type': 'application/vnd.kubernetes.protobuf',
      Accept: 'application/vnd.kubernetes.protobuf,application/json',
    });
    expect(res.status).toBe(200);
    expect((await c.request('GET', `/api/v1/namespaces/${ns}/secrets/${name}`)).status).toBe(404);
  });

  it('selects release Secrets by owner, name and status labels', async () => {
    for (const [n, status] of [
      ['one', 'superseded'],
      ['two', 'deployed'],
    ] as const) {
      const r = await c.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
        body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `sh.helm.release.v1.sel.${n}`, labels: { owner: 'helm', name: 'sel', status } }, type: 'helm.sh/release.v1' },
      });
      expect(r.status).toBe(201);
    }
    await c.request('POST', `/api/v1/namespaces/${ns}/secrets`, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'not-helm', labels: { name: 'sel' } } } });
    expect((await releaseSecrets('sel')).map((s) => s.metadata.name).sort()).toEqual(['sh.helm.release.v1.sel.one', 'sh.helm.release.v1.sel.two']);
    expect((await releaseSecrets('sel', ',status=deployed')).map((s) => s.metadata.name)).toEqual(['sh.helm.release.v1.sel.two']);
    const all = (await c.request('GET', `/api/v1/namespaces/${ns}/secrets?labelSelector=owner%3Dhelm`)).json.items.map((s: any) => s.metadata.name);
    expect(all).not.toContain('not-helm');
  });
});

/** Field 1 (`swagger`) and the definition names of a gnostic openapi.v2.Document, read from the wire. */
function readOpenApiV2(buf: Buffer): { swagger: string; definitions: string[] } {
  const fields = (b: Buffer): Array<[number, Buffer]> => {
    const out: Array<[number, Buffer]> = [];
    let p = 0;
    const varint = () => {
      let n = 0;
      let shift = 0;
      for (;;) {
        const byte = b[p++]!;
        n += (byte & 0x7f) * 2 ** shift;
        if (!(byte & 0x80)) return n;
        shift += 7;
      }
    };
    while (p < b.length) {
      const key = varint();
      const wire = key & 7;
      if (wire === 0) varint();
      else if (wire === 1) p += 8;
      else if (wire === 5) p += 4;
      else if (wire === 2) {
        const len = varint();
        out.push([key >>> 3, b.subarray(p, p + len)]);
        p += len;
      } else throw new Error(`wire type ${wire}`);
    }
    return out;
  };
  const doc = fields(buf);
  const swagger = doc.find(([n]) => n === 1)?.[1].toString('utf8') ?? '';
  const definitions = doc
    .filter(([n]) => n === 9)
    .flatMap(([, d]) =>
      fields(d).map(
        ([, named]) =>
          fields(named)
            .find(([n]) => n === 1)?.[1]
            .toString('utf8') ?? '',
      ),
    );
  return { swagger, definitions };
}

describe('OpenAPI v2 as protobuf (client-go discovery: OpenAPISchema, kubectl explain --output plaintext-openapiv2)', () => {
  // What client-go's discovery sends (later servers also take the `…spec.v2.v1.0+protobuf` spelling; 1.25 does not).
  it.each(['application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json'])(
    'Accept: %s → a gnostic Document in protobuf',
    async (accept) => {
      const res = await rawRequest('GET', '/openapi/v2', undefined, { Accept: accept });
      expect(res.status).toBe(200);
      // Servers before kube-openapi named the type answer application/octet-stream; never the deprecated `@` spelling, which Go's mime parser refuses.
      expect(['application/com.github.proto-openapi.spec.v2.v1.0+protobuf', 'application/octet-stream']).toContain(res.contentType);
      const doc = readOpenApiV2(res.body);
      expect(doc.swagger).toBe('2.0');
      expect(doc.definitions).toEqual(expect.arrayContaining(['io.k8s.api.apps.v1.Deployment', 'io.k8s.api.core.v1.Secret', 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']));
    },
  );

  it('answers JSON when JSON comes first, and 406 for a type it does not have', async () => {
    const json = await rawRequest('GET', '/openapi/v2', undefined, { Accept: 'application/json, application/com.github.proto-openapi.spec.v2@v1.0+protobuf' });
    expect(json.status).toBe(200);
    expect(JSON.parse(json.body.toString('utf8')).swagger).toBe('2.0');
    expect((await rawRequest('GET', '/openapi/v2', undefined, { Accept: 'application/vnd.kubernetes.protobuf' })).status).toBe(406);
  });
});
