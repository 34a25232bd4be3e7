/**
 * A Helm chart that reaches beyond its instance, instantiated with the real
 * program and the real helm (test/support/helm.ts) on the sandbox: a
 * ClusterRoleBinding to cluster-admin, a ClusterRole, and a ConfigMap in
 * another namespace than the instance's. Without --strict each is a warning
 * naming kind, name and namespace, and the chart is installed as asked; with
 * --strict (or additionalParams.vnfm_strict) the instantiate and the change
 * of package are refused with exit 2 before anything is installed.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderKubeconfig } from '@vnfm/kube-sandbox';
import { newHome, okWith, vnfm } from '../support/cli.js';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { helmPath, listReleases } from '../support/helm.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/helm-cnf');
const ELSEWHERE = 'vnfm-elsewhere';

let cluster: E2eCluster;
let home: string;
let dir: string;
let kubeconfig: string;
let NS: string;

const json = <T = Record<string, unknown>>(out: string) => JSON.parse(out) as T;
const run = (args: string[]) => vnfm(args, { home, env: { VNFM_HELM: helmPath() } });
const ok = okWith(run);

const REACHING = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ .Release.Name }}-reader
rules:
  - apiGroups: [""]
    resources: ["secrets"]
    verbs: ["get", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ .Release.Name }}-admin
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
  - kind: ServiceAccount
    name: default
    namespace: {{ .Release.Namespace }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: leak
  namespace: ${ELSEWHERE}
data:
  from: {{ .Release.Name }}
`;

/** A copy of the sample package `which`, its chart given the reaching templates; TOSCA.meta without the chart's hashes. */
function reachingPackage(which: 'package' | 'package-v2'): string {
  const pkg = join(dir, `reaching-${which}`);
  cpSync(join(SAMPLE, which), pkg, { recursive: true });
  const meta = join(pkg, 'TOSCA-Metadata/TOSCA.meta');
  writeFileSync(meta, readFileSync(meta, 'utf8').split('\n\nName:')[0] + '\n');
  writeFileSync(join(pkg, 'Files/kubernetes/helm-cnf/templates/reaching.yaml'), REACHING);
  return pkg;
}

/** A copy of the sample's request, its namespace set to this file's, changed by `edit`. */
function request(name: string, edit?: (body: Record<string, any>) => void): string {
  const body = json<Record<string, any>>(readFileSync(join(SAMPLE, 'requests', name), 'utf8'));
  if (body.additionalParams?.namespace !== undefined) body.additionalParams.namespace = NS;
  edit?.(body);
  const path = join(dir, 'requests', `${name.replace(/\.json$/, '')}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(body, null, 2));
  return path;
}

async function create(name: string): Promise<{ id: string; release: string }> {
  const id = json<{ id: string }>((await ok(['vnf-create', '--package', 'reaching', '--name', name, '-o', 'json'])).stdout).id;
  return { id, release: `vnf${id.replace(/-/g, '')}` };
}

const status = async (path: string) => (await cluster.request('GET', path)).status;
const bindingOf = (release: string) => `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${release}-admin`;

/** What the warnings or the refusal of `release`'s chart name: each object, with its kind, name and namespace. */
function namesEachObject(text: string, release: string): void {
  expect(text).toContain(`ClusterRoleBinding ${release}-admin (cluster-scoped; it grants ClusterRole cluster-admin)`);
  expect(text).toContain(`ClusterRole ${release}-reader (cluster-scoped)`);
  expect(text).toContain(`ConfigMap leak (in namespace ${ELSEWHERE})`);
}

beforeAll(async () => {
  cluster = await e2eCluster('e2e-helm-reach', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  NS = cluster.namespace;
  dir = mkdtempSync(join(tmpdir(), 'vnfm-helm-reach-'));
  mkdirSync(join(dir, 'requests'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, renderKubeconfig({ url: cluster.server, token: cluster.token, caPem: cluster.caPem }, NS), { mode: 0o600 });
  home = newHome();
  const vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, NS);
  await ok(['vim-register', '--config-file', vimConfig, '--is-default', 'sandbox']);
  expect((await cluster.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ELSEWHERE } })).status).toBe(201);
  await ok(['vnfpkg-onboard', reachingPackage('package'), '--name', 'reaching']);
  await ok(['vnfpkg-onboard', reachingPackage('package-v2'), '--name', 'reaching-v2']);
});

afterAll(async () => {
  await cluster?.close();
});

describe('a Helm chart that reaches beyond the instance', () => {
  it('vnf-instantiate --strict refuses it with exit 2, naming each object; nothing is installed or recorded', async () => {
    const vnf = await create('strict-flag');
    const r = await run(['vnf-instantiate', vnf.id, '--request-file', request('instantiate.json'), '--strict']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`the chart Files/kubernetes/helm-cnf creates objects beyond the instance's namespace ${NS}, which --strict refuses: `);
    namesEachObject(r.stderr, vnf.release);
    expect(r.stderr).toMatch(/nothing was installed or changed/);
    expect(await listReleases(kubeconfig, dir, NS)).toEqual([]);
    expect(await status(bindingOf(vnf.release))).toBe(404);
    expect(await status(`/api/v1/namespaces/${ELSEWHERE}/configmaps/leak`)).toBe(404);
    expect(json(await ok(['vnf-show', vnf.id, '-o', 'json']).then((x) => x.stdout))).toMatchObject({ instantiationState: 'NOT_INSTANTIATED' });
    expect(json((await ok(['op-list', '--vnf', vnf.id, '-o', 'json'])).stdout)).toEqual([]);
  });

  it('additionalParams.vnfm_strict: true in the request refuses it the same way; a value that is not a boolean is refused', async () => {
    const vnf = await create('strict-param');
    const r = await run(['vnf-instantiate', vnf.id, request('instantiate.json', (b) => (b.additionalParams.vnfm_strict = true))]);
    expect(r.code, r.stderr).toBe(2);
    namesEachObject(r.stderr, vnf.release);
    const bad = await run(['vnf-instantiate', vnf.id, request('instantiate.json', (b) => (b.additionalParams.vnfm_strict = 'yes'))]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/additionalParams\.vnfm_strict: "yes" is not true or false/);
    expect(await listReleases(kubeconfig, dir, NS)).toEqual([]);
  });

  it('without --strict: a warning for each object, the chart installed as asked; vnf-change-package --strict to a chart that reaches refuses it, the release untouched', async () => {
    const vnf = await create('warned');
    const r = await run(['vnf-instantiate', vnf.id, '--request-file', request('instantiate.json'), '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(json(r.stdout)).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED' });
    const warnings = r.stderr.split('\n').filter((l) => l.includes('warning: the chart Files/kubernetes/helm-cnf creates '));
    expect(warnings).toHaveLength(3);
    namesEachObject(warnings.join('\n'), vnf.release);
    expect(warnings.join('\n')).toContain(`ClusterRole ${vnf.release}-reader (cluster-scoped): it acts on the whole cluster, beyond the instance's namespace ${NS}`);
    expect(warnings.join('\n')).toContain(`ConfigMap leak (in namespace ${ELSEWHERE}): not in the instance's namespace ${NS}`);
    expect(r.stderr).toMatch(/hint: review what the chart creates beyond its instance before it is installed: .*--strict refuses such a chart/);
    // Installed as asked: the operator was told.
    expect(await status(bindingOf(vnf.release))).toBe(200);
    expect(await status(`/api/v1/namespaces/${ELSEWHERE}/configmaps/leak`)).toBe(200);

    const change = await run(['vnf-change-package', vnf.id, request('change-package.json'), '--strict']);
    expect(change.code, change.stderr).toBe(2);
    namesEachObject(change.stderr, vnf.release);
    const releases = await listReleases(kubeconfig, dir, NS);
    expect(releases.find((x) => x.name === vnf.release)).toMatchObject({ revision: '1', status: 'deployed', chart: 'helm-cnf-0.1.0' });

    await ok(['vnf-terminate', vnf.id, '--yes']);
    expect(await status(bindingOf(vnf.release))).toBe(404);
    expect(await status(`/api/v1/namespaces/${ELSEWHERE}/configmaps/leak`)).toBe(404);
  }, 180_000);
});
