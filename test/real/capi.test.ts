/**
 * The Cluster API suites on the real kube-apiserver of this tier, with
 * test/support/stand-in-capi.ts in place of the Cluster API controllers:
 * what the controllers do (test/e2e/capi-controllers-suite.ts, the suite the
 * sandbox's emulation passes too), the driver with Cluster API kinds (test/e2e/kubernetes-driver-capi-suite.ts),
 * capi-credentials (test/e2e/capi-credentials-suite.ts), then the Cluster
 * API CNFs (test/e2e/capi-suite.ts). One after the other in one file, since
 * all define the Cluster API CRDs on the one cluster of the tier. A
 * change of package is failed the way a real cluster can fail it: the
 * OpenStackMachineTemplate the new version adds already exists, made by
 * someone else.
 */
import { afterAll, beforeAll, describe, expect, inject } from 'vitest';
import { describeCapiControllers } from '../e2e/capi-controllers-suite.js';
import { describeCapiCredentials } from '../e2e/capi-credentials-suite.js';
import { capoV2WorkerTemplate, describeCapiCnfs } from '../e2e/capi-suite.js';
import { describeDriverCapi } from '../e2e/kubernetes-driver-capi-suite.js';
import { kubeRequest, type KubeEndpoint } from '../support/kube-http.js';
import '../support/real-apiserver-setup.js';
import { startStandInCapi, type StandInCapi } from '../support/stand-in-capi.js';

const real = inject('realCluster');
if (!real) throw new Error('test/real runs only in the real-apiserver project, whose global setup starts the control plane');
const endpoint: KubeEndpoint = { server: real.server, token: real.token, caPem: real.caPem };

let capi: StandInCapi;
const errors: Error[] = [];

beforeAll(async () => {
  capi = await startStandInCapi(endpoint, { stepMs: 300, onError: (err) => void errors.push(err) });
});

afterAll(async () => {
  await capi?.stop();
  if (errors.length > 0) process.stderr.write(`stand-in Cluster API controllers: ${errors.length} error(s), first: ${errors[0]!.message}\n`);
});

describe('on a real API server', () => {
  describe('Cluster API controllers (stand-in)', () => {
    describeCapiControllers(async () => ({
      endpoint,
      workloadServers: () => capi.workloadClusters(),
      async checkWorkloadEndpoint(workload) {
        // The same API server behind a port of its own (TLS passed through), reached with a ServiceAccount token of its own.
        expect(workload.caPem).toBe(endpoint.caPem);
        const review = await kubeRequest(endpoint, 'POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          spec: { token: workload.token },
        });
        expect(review.json.status).toMatchObject({ authenticated: true, user: { username: 'system:serviceaccount:stand-in-capi:default-wl' } });
      },
      stop: async () => undefined,
    }));
  });

  describe('the Kubernetes driver with Cluster API kinds', () => {
    describeDriverCapi(async () => ({ endpoint, stop: async () => undefined }));
  });

  describe('capi-credentials', () => {
    describeCapiCredentials(async () => ({ endpoint, stop: async () => undefined }));
  });

  describe('Cluster API CNFs', () => {
    describeCapiCnfs(async () => ({
      endpoint,
      async failChange() {
        const blocker = capoV2WorkerTemplate();
        const path = '/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/default/openstackmachinetemplates';
        const made = await kubeRequest(endpoint, 'POST', path, blocker);
        if (made.status !== 201) throw new Error(`cannot create the blocking OpenStackMachineTemplate: HTTP ${made.status}: ${made.text}`);
        return async () => {
          await kubeRequest(endpoint, 'DELETE', `${path}/${blocker.metadata.name}`);
        };
      },
      stop: async () => undefined,
    }));
  });
});
