/**
 * Instantiate asks the cluster for the namespace its objects go to before
 * anything is recorded: a missing (or terminating) namespace is refused with
 * exit 6 and no occurrence; --create-namespace (additionalParams
 * vnfm_create_namespace) creates it, and terminate leaves it.
 */
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, writeSandboxConfigs, type Sandbox } from '@vnfm/kube-sandbox';
import { newHome, vnfm } from '../support/cli.js';
import { kubeRequest, type KubeEndpoint } from '../support/kube-http.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');

let sandbox: Sandbox;
let dir: string;
let vimConfig: string;
let endpoint: KubeEndpoint;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vnfm-namespace-'));
  sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
  vimConfig = join(dir, 'vim.yaml');
  writeSandboxConfigs(sandbox, { vimConfigPath: vimConfig, kubeconfigPath: join(dir, 'kubeconfig') });
  endpoint = { server: sandbox.url, token: sandbox.token, caPem: sandbox.caPem };
});

afterAll(async () => {
  await sandbox?.close();
});

/** The sample's instantiate request with `additionalParams` changed. */
function request(name: string, params: Record<string, unknown>): string {
  const body = JSON.parse(readFileSync(join(SAMPLE, 'requests/instantiate.json'), 'utf8')) as { additionalParams: Record<string, unknown> };
  body.additionalParams = { ...body.additionalParams, ...params };
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(body));
  return path;
}

describe('instantiate into a namespace', () => {
  it('refuses a namespace the cluster lacks (exit 6, nothing recorded); --create-namespace creates it; terminate leaves it', async () => {
    const home = newHome();
    const run = (args: string[]) => vnfm(args, { home, cwd: process.cwd() });
    const ok = async (args: string[]) => {
      const r = await run(args);
      expect(r.code, `vnfm ${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r;
    };
    await ok(['vim-register', '--config-file', vimConfig, '--is-default', 'edge']);
    await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf']);
    await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'web']);

    const missing = request('missing', { namespace: 'team-a' });
    const refused = await run(['vnf-instantiate', 'web', missing]);
    expect(refused.code, refused.stderr).toBe(6);
    expect(refused.stderr).toContain(`error: namespace "team-a" does not exist on the cluster at ${sandbox.url}`);
    expect(refused.stderr).toMatch(/hint: create it first \(kubectl create namespace team-a\).*vnf-instantiate --create-namespace/);
    expect(JSON.parse((await ok(['op-list', '-o', 'json'])).stdout)).toEqual([]);
    expect((JSON.parse((await ok(['vnf-show', 'web', '-o', 'json'])).stdout) as { instantiationState: string }).instantiationState).toBe('NOT_INSTANTIATED');
    expect((await kubeRequest(endpoint, 'GET', '/api/v1/namespaces/team-a')).status).toBe(404);

    // A value that is not a boolean is a bad request, before the cluster is asked.
    const bad = await run(['vnf-instantiate', 'web', request('bad', { namespace: 'team-a', vnfm_create_namespace: 'yes' })]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/additionalParams\.vnfm_create_namespace: "yes" is not true or false/);

    const made = await ok(['vnf-instantiate', 'web', missing, '--create-namespace', '-o', 'json']);
    const op = JSON.parse(made.stdout) as { operationState: string; operationParams: { additionalParams: Record<string, unknown> } };
    expect(op.operationState).toBe('COMPLETED');
    expect(op.operationParams.additionalParams['vnfm_create_namespace']).toBe(true);
    const ns = await kubeRequest(endpoint, 'GET', '/api/v1/namespaces/team-a');
    expect(ns.status).toBe(200);
    expect(ns.json.metadata.labels['app.kubernetes.io/managed-by']).toBe('vnfm');
    const deployments = await kubeRequest(endpoint, 'GET', '/apis/apps/v1/namespaces/team-a/deployments');
    expect((deployments.json.items as { metadata: { name: string } }[]).map((d) => d.metadata.name).sort()).toEqual(['vdu1', 'vdu2']);

    await ok(['vnf-terminate', 'web', '--yes']);
    expect((await kubeRequest(endpoint, 'GET', '/api/v1/namespaces/team-a')).status).toBe(200);

    // A namespace being deleted takes nothing new: refused the same way.
    await kubeRequest(endpoint, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'going', finalizers: ['example.com/hold'] } });
    await kubeRequest(endpoint, 'DELETE', '/api/v1/namespaces/going');
    const opsBefore = (JSON.parse((await ok(['op-list', '-o', 'json'])).stdout) as unknown[]).length;
    const going = await run(['vnf-instantiate', 'web', request('going', { namespace: 'going' }), '--create-namespace']);
    expect(going.code, going.stderr).toBe(6);
    expect(going.stderr).toMatch(/namespace "going" on the cluster at .* is being deleted/);
    expect(JSON.parse((await ok(['op-list', '-o', 'json'])).stdout)).toHaveLength(opsBefore);
  }, 120_000);
});
