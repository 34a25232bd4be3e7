/**
 * vnf-update (Tacker `vnflcm update`) run as the real program against the
 * sandbox: a rename and a metadata change leave the cluster untouched; a
 * vnfdId of another version of the same VNF is Tacker's container update
 * (the Deployment takes the new package's image, the instance records the
 * new package); a vnfdId of another provider, and malformed requests, are
 * refused with exit 2 and nothing recorded; vnf-change-ext-conn is refused
 * for a Kubernetes VNF.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { newHome, vnfm, okWith } from '../support/cli.js';
import { packageVariant } from '../support/package-variant.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');
const V1 = '1191aa45-a57a-4232-8201-6a7a66d41e38';
const V11 = '2b7e3f0a-6d1e-4c58-9a55-3c0f6b1d2e11';
const OTHER = 'c4a1e9d2-7b3f-4e0a-8f61-5d2c9b0a7e33';
const V12 = 'e8d0b7a6-1c2d-4e3f-9a0b-7c6d5e4f3a12';
const CONFIG2 = 'Files/kubernetes/configmap_2.yaml';
const OLD_IMAGE = 'docker.io/library/nginx:1.26-alpine';
const NEW_IMAGE = 'docker.io/library/nginx:1.27-alpine';

let cluster: E2eCluster;
let home: string;
let dir: string;
let NS: string;

const json = <T = Record<string, unknown>>(out: string) => JSON.parse(out) as T;
const run = (args: string[]) => vnfm(args, { home });

const ok = okWith((args) => run(args));

function writeRequest(name: string, body: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(body, null, 2));
  return path;
}

async function deployment(name: string): Promise<{ image: string; generation: number }> {
  const r = await cluster.request('GET', `/apis/apps/v1/namespaces/${NS}/deployments/${name}`);
  expect(r.status).toBe(200);
  return { image: r.json.spec.template.spec.containers[0].image as string, generation: r.json.metadata.generation as number };
}

async function occurrences(vnf: string): Promise<{ operation: string; operationState: string }[]> {
  return json((await ok(['op-list', '--vnf', vnf, '-o', 'json'])).stdout);
}

beforeAll(async () => {
  cluster = await e2eCluster('e2e-vnf-update', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  NS = cluster.namespace;
  dir = mkdtempSync(join(tmpdir(), 'vnfm-update-'));
  const vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, NS);
  home = newHome();
  await ok(['vim-register', '--config-file', vimConfig, 'sandbox']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf']);
  await ok([
    'vnfpkg-onboard',
    packageVariant(join(SAMPLE, 'package'), { fromVnfdId: V1, vnfdId: V11, softwareVersion: '1.1', replace: [[OLD_IMAGE, NEW_IMAGE]] }),
    '--name',
    'basic-cnf-1.1',
  ]);
  await ok(['vnfpkg-onboard', packageVariant(join(SAMPLE, 'package'), { fromVnfdId: V1, vnfdId: OTHER, provider: 'another vendor' }), '--name', 'other-vendor']);
  const config = readFileSync(join(SAMPLE, 'package', 'Files/kubernetes/configmap.yaml'), 'utf8').replace('version 1.0 is running', 'version 1.2 is running');
  await ok([
    'vnfpkg-onboard',
    packageVariant(join(SAMPLE, 'package'), { fromVnfdId: V1, vnfdId: V12, softwareVersion: '1.2', add: [[CONFIG2, config]] }),
    '--name',
    'basic-cnf-1.2',
  ]);
  const instantiate = json<{ additionalParams: { namespace?: string } }>(readFileSync(join(SAMPLE, 'requests', 'instantiate.json'), 'utf8'));
  instantiate.additionalParams.namespace = NS;
  await ok(['vnf-create', V1, '--name', 'web']);
  await ok(['vnf-instantiate', 'web', writeRequest('instantiate.json', instantiate)]);
});

afterAll(async () => {
  await cluster?.close();
});

describe('vnf-update', () => {
  it('rename, description and metadata: MODIFY_INFO COMPLETED, the cluster untouched', async () => {
    const before = await deployment('vdu1');
    const r = await ok([
      'vnf-update',
      'web',
      writeRequest('rename.json', { vnfInstanceName: 'web-2', vnfInstanceDescription: 'new description', metadata: { 'dummy-key': 'dummy-value' } }),
      '-o',
      'json',
    ]);
    expect(json(r.stdout)).toMatchObject({ operation: 'MODIFY_INFO', operationState: 'COMPLETED' });
    const vnf = json((await ok(['vnf-show', 'web-2', '-o', 'json'])).stdout);
    expect(vnf).toMatchObject({ vnfInstanceName: 'web-2', vnfInstanceDescription: 'new description', metadata: { 'dummy-key': 'dummy-value' }, vnfdId: V1 });
    expect(await deployment('vdu1')).toEqual(before);
    // The --request-file form, a merge patch removing the key.
    await ok(['vnf-update', 'web-2', '--request-file', writeRequest('unset.json', { metadata: { 'dummy-key': null } })]);
    // Tacker's spelling.
    await ok(['vnf-update', 'web-2', '--I', writeRequest('describe.json', { vnfInstanceDescription: 'via --I' })]);
    expect(json((await ok(['vnf-show', 'web-2', '-o', 'json'])).stdout)).toMatchObject({ vnfInstanceDescription: 'via --I' });
    expect(json((await ok(['vnf-show', 'web-2', '-o', 'json'])).stdout)).not.toHaveProperty('metadata');
  });

  it('a vnfdId of another provider: refused (exit 2), nothing recorded', async () => {
    const count = (await occurrences('web-2')).length;
    const r = await run(['vnf-update', 'web-2', writeRequest('other.json', { vnfdId: OTHER })]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/other\.json: vnfdId: .*"another vendor".*same vnfProvider and vnfProductName/);
    expect(await occurrences('web-2')).toHaveLength(count);
    expect(json((await ok(['vnf-show', 'web-2', '-o', 'json'])).stdout)).toMatchObject({ vnfdId: V1 });
  });

  it('bad requests (an unknown field, a wrong type): exit 2, nothing recorded', async () => {
    const count = (await occurrences('web-2')).length;
    const unknown = await run(['vnf-update', 'web-2', writeRequest('typo.json', { vnfInstanceNam: 'x' })]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/typo\.json: vnfInstanceNam: is not a field of a VnfInfoModificationRequest/);
    const wrong = await run(['vnf-update', 'web-2', writeRequest('type.json', { metadata: 'x' })]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/type\.json: metadata: must be an object/);
    expect(await occurrences('web-2')).toHaveLength(count);
  });

  it("a vnfdId of the same VNF's next version: the Deployment's image changes, the instance records the new package", async () => {
    expect((await deployment('vdu1')).image).toBe(OLD_IMAGE);
    const r = await ok(['vnf-update', 'web-2', writeRequest('modify-vnfd.json', { vnfdId: V11 }), '-o', 'json']);
    expect(json(r.stdout)).toMatchObject({ operation: 'MODIFY_INFO', operationState: 'COMPLETED' });
    expect((await deployment('vdu1')).image).toBe(NEW_IMAGE);
    const vnf = json((await ok(['vnf-show', 'web-2', '-o', 'json'])).stdout);
    expect(vnf).toMatchObject({ vnfdId: V11, vnfSoftwareVersion: '1.1' });
    const pkgs = json<{ name: string; usageState: string }[]>((await ok(['vnfpkg-list', '-o', 'json'])).stdout);
    expect(pkgs.find((p) => p.name === 'basic-cnf-1.1')?.usageState).toBe('IN_USE');
    expect(pkgs.find((p) => p.name === 'basic-cnf')?.usageState).toBe('NOT_IN_USE');
  });

  it("metadata.configmap_secret_paths: the ConfigMap takes the new package's data, the Deployment using it rolls out, the instance records the file", async () => {
    const r = await ok(['vnf-update', 'web-2', writeRequest('modify-config.json', { vnfdId: V12, metadata: { configmap_secret_paths: [CONFIG2] } }), '-o', 'json']);
    expect(json(r.stdout)).toMatchObject({ operation: 'MODIFY_INFO', operationState: 'COMPLETED' });
    const cm = await cluster.request('GET', `/api/v1/namespaces/${NS}/configmaps/basic-cnf-content`);
    expect(cm.json.data['index.html']).toMatch(/version 1.2 is running/);
    const dep = await cluster.request('GET', `/apis/apps/v1/namespaces/${NS}/deployments/vdu1`);
    expect(dep.json.spec.template.metadata.annotations['kubectl.kubernetes.io/restartedAt']).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    // 1.2 carries 1.0's image again.
    expect(dep.json.spec.template.spec.containers[0].image).toBe(OLD_IMAGE);
    const vnf = json<{ vnfdId: string; instantiatedVnfInfo: { metadata: { 'lcm-kubernetes-def-files': string[] } } }>((await ok(['vnf-show', 'web-2', '-o', 'json'])).stdout);
    expect(vnf.vnfdId).toBe(V12);
    expect(vnf.instantiatedVnfInfo.metadata['lcm-kubernetes-def-files']).toContain(CONFIG2);
  });

  it("vnf-create's name rules and uniqueness: a bad name exit 2, a taken one exit 4, nothing recorded; both names still find their instance", async () => {
    await ok(['vnf-create', '--package', 'other-vendor', '--name', 'db']);
    try {
      const count = (await occurrences('web-2')).length;
      for (const [file, body, code, says] of [
        ['escape.json', { vnfInstanceName: 'web\u001b]0;pwned\u0007' }, 2, /escape\.json: vnfInstanceName: "web\\u001b\]0;pwned\\u0007" is not a usable instance name/],
        ['newline.json', { vnfInstanceName: 'web\nroot' }, 2, /newline\.json: vnfInstanceName: "web\\nroot" is not a usable instance name/],
        ['empty.json', { vnfInstanceName: '' }, 2, /empty\.json: vnfInstanceName: "" is not a usable instance name/],
        ['taken.json', { vnfInstanceName: 'db' }, 4, /a VNF instance named "db" already exists/],
      ] as const) {
        const r = await run(['vnf-update', 'web-2', writeRequest(file, body)]);
        expect(r.code, r.stderr).toBe(code);
        expect(r.stderr).toMatch(says);
      }
      // The instance not yet instantiated is held to the same rules.
      const idle = await run(['vnf-update', 'db', writeRequest('taken-2.json', { vnfInstanceName: 'web-2' })]);
      expect(idle.code, idle.stderr).toBe(4);
      expect(await occurrences('web-2')).toHaveLength(count);
      expect(await occurrences('db')).toHaveLength(0);
      expect(json((await ok(['vnf-show', 'web-2', '-o', 'json'])).stdout)).toMatchObject({ vnfInstanceName: 'web-2' });
      expect(json((await ok(['vnf-show', 'db', '-o', 'json'])).stdout)).toMatchObject({ vnfInstanceName: 'db' });
    } finally {
      await ok(['vnf-delete', 'db', '--yes']);
    }
  });

  it('vnf-change-ext-conn on a Kubernetes VNF: refused (exit 2), as Tacker refuses it', async () => {
    const r = await run(['vnf-change-ext-conn', 'web-2', writeRequest('ext.json', { extVirtualLinks: [] })]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not supported for Kubernetes VNFs/);
  });
});
