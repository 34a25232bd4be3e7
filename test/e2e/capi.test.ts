/**
 * The Cluster API CNFs suite (capi-suite.ts) on the sandbox, whose Cluster
 * API emulation takes readyDelayMs per step; here also what only the sandbox
 * can inject: a CRD that never becomes Established, and a change of package
 * failed by 500s on the MachineDeployment.
 */
import { expect, it } from 'vitest';
import { startSandbox } from '@vnfm/kube-sandbox';
import { describeCapiCnfs, MGMT, req } from './capi-suite.js';

describeCapiCnfs(
  async () => {
    const sandbox = await startSandbox({ host: '127.0.0.1', port: 0, controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
    return {
      sandbox,
      endpoint: { server: sandbox.url, token: sandbox.token, caPem: sandbox.caPem },
      async failChange() {
        const lift = sandbox.faults.failRequests({ status: 500, method: 'PATCH', path: /machinedeployments\/capo-cluster-1-md-0$/ });
        return async () => lift();
      },
      stop: () => sandbox.close(),
    };
  },
  ({ run, ok, createVnf, occurrences, get }, target) => {
    it('ends FAILED_TEMP at --timeout (124) on a CRD that never becomes Established, naming it; op-rollback removes what was created', async () => {
      const lift = target().sandbox.faults.neverEstablished({ name: 'machinedeployments.cluster.x-k8s.io' });
      try {
        const vnf = await createVnf('capi-mgmt', 'never-established');
        // Long enough for every object before the held definition to be written on a loaded machine: the
        // timeout must come while vnfm waits for that definition, which never becomes Established.
        const r = await run(['vnf-instantiate', vnf, '--request-file', req(MGMT, 'instantiate.json'), '--timeout', '15s']);
        expect(r.code).toBe(124);
        expect(r.stderr).toMatch(
          /INSTANTIATE of vnf instance .* timed out after 15s while waiting for CustomResourceDefinition machinedeployments\.cluster\.x-k8s\.io \(waiting for the definition to be established\); occurrence .* is FAILED_TEMP/,
        );
        const [op] = await occurrences(vnf);
        expect(op).toMatchObject({ operationState: 'FAILED_TEMP', error: { status: 504, detail: expect.stringMatching(/machinedeployments\.cluster\.x-k8s\.io/) } });
        // The other definitions were created and Established; nothing after them (the controllers) was.
        expect((await get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clusters.cluster.x-k8s.io')).status).toBe(200);
        expect((await get('/apis/apps/v1/namespaces/capi-system/deployments/capi-controller-manager')).status).toBe(404);
        await ok(['op-rollback', op.id, '--timeout', '30s']);
        expect(JSON.parse((await ok(['op-show', op.id, '-o', 'json'])).stdout).operationState).toBe('ROLLED_BACK');
        for (const crd of ['clusters.cluster.x-k8s.io', 'machinedeployments.cluster.x-k8s.io']) {
          expect((await get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`)).status, crd).toBe(404);
        }
        await ok(['vnf-delete', vnf, '--yes']);
      } finally {
        lift();
      }
    }, 60_000);
  },
);
