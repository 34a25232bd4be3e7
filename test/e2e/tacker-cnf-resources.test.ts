/**
 * The Tacker v2 test_instantiate_cnf_resources shape (tacker-cnf-resources-suite.ts)
 * on the sandbox; test/real/tacker-cnf-resources.test.ts runs it on a real
 * kube-apiserver and kube-controller-manager. Here also what only the
 * sandbox can hold back: a StatefulSet's claim that stays Pending keeps
 * the instantiate waiting after the StatefulSet's pods are ready, as Tacker
 * v2's StatefulSet readiness reads its claims.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { newHome, vnfm } from '../support/cli.js';
import { buildPackage, describeTackerCnfResources } from './tacker-cnf-resources-suite.js';

describeTackerCnfResources();

describe('a StatefulSet is ready once its claims are Bound', () => {
  let cluster: E2eCluster;
  let home: string;

  beforeAll(async () => {
    cluster = await e2eCluster('e2e-cnf-claims', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
    home = newHome();
    const vimConfig = join(home, 'vim-config.yaml');
    cluster.writeVimConfig(vimConfig);
    expect((await vnfm(['vim-register', '--config-file', vimConfig, 'edge'], { home })).code).toBe(0);
    const pkg = buildPackage(cluster.namespace, 'held');
    expect((await vnfm(['vnfpkg-onboard', pkg, '--name', 'stack'], { home })).code).toBe(0);
  });

  afterAll(async () => {
    await cluster?.close();
  });

  it('instantiate waits for the claim after the pods are ready, and completes once it binds', { timeout: 120_000 }, async () => {
    expect((await vnfm(['vnf-create', '--package', 'stack', '--name', 'held'], { home })).code).toBe(0);
    const lift = await cluster.neverReady({ kind: 'PersistentVolumeClaim', name: 'data-stack-e-0' });
    const files = ['Files/kubernetes/storage-class.yaml', 'Files/kubernetes/persistent-volume-0.yaml', 'Files/kubernetes/statefulset.yaml'];
    const requestFile = join(home, 'held.json');
    writeFileSync(
      requestFile,
      JSON.stringify({ flavourId: 'simple', vimConnectionInfo: { vim1: { vimId: 'edge', vimType: 'kubernetes' } }, additionalParams: { 'lcm-kubernetes-def-files': files } }),
    );
    let finished = false;
    const run = vnfm(['vnf-instantiate', 'held', requestFile, '--allow-package-scripts'], { home }).finally(() => {
      finished = true;
    });
    const sts = `/apis/apps/v1/namespaces/${cluster.namespace}/statefulsets/stack-e`;
    const deadline = Date.now() + 60_000;
    while (((await cluster.request('GET', sts)).json as { status?: { readyReplicas?: number } }).status?.readyReplicas !== 1) {
      if (Date.now() > deadline) throw new Error('the StatefulSet never became ready');
      await new Promise((r) => setTimeout(r, 50));
    }
    // Its pod is ready, its claim Pending: the instantiate is still waiting.
    await new Promise((r) => setTimeout(r, 1500));
    expect(
      ((await cluster.request('GET', `/api/v1/namespaces/${cluster.namespace}/persistentvolumeclaims/data-stack-e-0`)).json as { status: { phase: string } }).status.phase,
    ).toBe('Pending');
    expect(finished).toBe(false);
    await lift();
    const r = await run;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/StatefulSet\/stack-e.*waiting for its claims to be bound: data-stack-e-0/);
    expect(r.stderr).toMatch(/StatefulSet\/stack-e.*1 claims bound/);
  });
});
