/**
 * Tacker v2's change of package for a CNF (its functional test
 * test_change_vnf_pkg_with_deployment), in its shape: an instance of the
 * package's old version deploys Files/kubernetes/deployment.yaml; the change
 * request names the new package's vnfdId, `upgrade_type: RollingUpdate`,
 * the coordinate scripts, `lcm-kubernetes-def-files` of the new version and
 * `vdu_params`, exactly as Tacker's test sends it. On Kubernetes Tacker's
 * infra-driver runs no coordinate script (only its OpenStack driver does), so
 * neither does vnfm: the Deployment rolls to the new image and the instance
 * moves to the new VNFD.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, vnfm } from '../support/cli.js';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { packageVariant } from '../support/package-variant.js';

const SHAPE = resolve(import.meta.dirname, '../fixtures/tacker-shapes/v2-change-vnf-pkg-with-deployment');
const NEW_VNFD = '5b0e8c52-8f0e-4b51-9a63-0c7c1e0a1a06';
const OLD_VNFD = '5b0e8c52-8f0e-4b51-9a63-0c7c1e0a0001';

describe("Tacker v2 change of package (RollingUpdate) with Tacker's request body", () => {
  let cluster: E2eCluster;
  const home = newHome();
  const ok = async (args: string[]) => {
    const r = await vnfm(args, { home });
    if (r.code !== 0) throw new Error(`vnfm ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r;
  };

  beforeAll(async () => {
    cluster = await e2eCluster('e2e-tacker-chgpkg', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
    const vimConfig = resolve(home, '..', 'vim-config.yaml');
    cluster.writeVimConfig(vimConfig);
    await ok(['vim-register', '--config-file', vimConfig, 'edge']);
    const old = packageVariant(SHAPE, { fromVnfdId: NEW_VNFD, vnfdId: OLD_VNFD, softwareVersion: '2.0' });
    await ok(['vnfpkg-onboard', old, '--name', 'swap-old']);
    await ok(['vnfpkg-onboard', SHAPE, '--name', 'swap-new']);
  });

  afterAll(async () => {
    await cluster?.close();
  });

  it('instantiates the old version, then rolls VDU2 to the new package and records the new vnfdId', async () => {
    const instantiate = resolve(home, '..', 'instantiate.json');
    writeFileSync(
      instantiate,
      JSON.stringify({
        flavourId: 'simple',
        vimConnectionInfo: { vim1: { vimId: 'edge', vimType: 'kubernetes' } },
        additionalParams: { 'lcm-kubernetes-def-files': ['Files/kubernetes/deployment.yaml'], namespace: cluster.namespace },
      }),
    );
    await ok(['vnf-create', OLD_VNFD, '--name', 'swap']);
    await ok(['vnf-instantiate', 'swap', instantiate]);
    const before = await cluster.request('GET', `/apis/apps/v1/namespaces/${cluster.namespace}/deployments/swap-b`);
    expect((before.json as any).spec.template.spec.containers[0].image).toBe('registry.example.test/swap:1.0');

    // Tacker's body, as its functional test sends it.
    const change = resolve(home, '..', 'change.json');
    writeFileSync(
      change,
      JSON.stringify({
        vnfdId: NEW_VNFD,
        additionalParams: {
          upgrade_type: 'RollingUpdate',
          'lcm-operation-coordinate-old-vnf': './Scripts/coordinate_old_vnf.py',
          'lcm-operation-coordinate-new-vnf': './Scripts/coordinate_new_vnf.py',
          'lcm-kubernetes-def-files': ['Files/new_kubernetes/new_deployment.yaml'],
          vdu_params: [{ vdu_id: 'VDU2' }],
        },
      }),
    );
    const r = await vnfm(['vnf-change-package', 'swap', change, '-o', 'json'], { home });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ operation: 'CHANGE_VNFPKG', operationState: 'COMPLETED' });
    // The coordinate scripts are not run on Kubernetes (as Tacker): nothing of theirs on stderr.
    expect(r.stderr).not.toMatch(/VNF coordinated/);

    const after = await cluster.request('GET', `/apis/apps/v1/namespaces/${cluster.namespace}/deployments/swap-b`);
    expect((after.json as any).spec.template.spec.containers[0].image).toBe('registry.example.test/swap:2.0');
    const shown = JSON.parse((await ok(['vnf-show', 'swap', '-o', 'json'])).stdout);
    expect(shown.vnfdId).toBe(NEW_VNFD);
    expect(shown.instantiatedVnfInfo.vnfcResourceInfo.map((v: { vduId: string }) => v.vduId)).toEqual(['VDU2']);

    await ok(['vnf-terminate', 'swap', '--yes']);
    expect((await cluster.request('GET', `/apis/apps/v1/namespaces/${cluster.namespace}/deployments/swap-b`)).status).toBe(404);
  });
});
