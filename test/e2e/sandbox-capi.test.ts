/**
 * The Cluster API controllers suite (capi-controllers-suite.ts) on the
 * sandbox's emulation, where a workload cluster's endpoint is a second
 * sandbox API server with its own CA and token; closing the sandbox stops
 * it.
 */
import { expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '@vnfm/kube-sandbox';
import { call, CAPI, CRDS, createCluster, describeCapiControllers, kubeconfigOf, waitUntil } from './capi-controllers-suite.js';

const endpointOf = (sb: Sandbox) => ({ server: sb.url, caPem: sb.caPem, token: sb.token });

describeCapiControllers(
  async () => {
    const sandbox = await startSandbox({ controllers: { readyDelayMs: 10, terminationDelayMs: 10 } });
    const endpoint = endpointOf(sandbox);
    return {
      endpoint,
      workloadServers: () => sandbox.workloadClusters().map((w) => ({ namespace: w.namespace, name: w.name, server: w.url })),
      async checkWorkloadEndpoint(workload) {
        expect(workload.caPem).not.toBe(endpoint.caPem);
        // Its own credentials only: the management cluster's token, or trusting the management CA, fail.
        expect((await call({ ...workload, token: endpoint.token }, 'GET', '/api/v1/namespaces')).status).toBe(401);
        await expect(call({ ...workload, caPem: endpoint.caPem }, 'GET', '/version')).rejects.toThrow();
      },
      stop: () => sandbox.close(),
    };
  },
  () => {
    it('closing the sandbox stops the workload server', async () => {
      const own = await startSandbox({ controllers: { readyDelayMs: 10 } });
      const sb = endpointOf(own);
      for (const c of CRDS) await call(sb, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', c);
      await waitUntil(
        sb,
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
        (items) => [...items.values()].filter((c) => c.status?.conditions?.some((x: any) => x.type === 'Established' && x.status === 'True')).length === CRDS.length,
      );
      await createCluster(sb, 'kamaji', 'kamaji');
      await waitUntil(sb, `${CAPI}/clusters`, (items) => items.get('kamaji')?.status?.phase === 'Provisioned');
      const { endpoint } = await kubeconfigOf(sb, 'kamaji');
      expect((await call(endpoint, 'GET', '/version')).status).toBe(200);
      await own.close();
      await expect(call(endpoint, 'GET', '/version')).rejects.toThrow(/ECONNREFUSED/);
    });
  },
);
