/**
 * The Cluster API CNFs suite (test/e2e/capi-suite.ts) on the real
 * kube-apiserver of this tier, with test/support/stand-in-capi.ts in place
 * of the Cluster API controllers. A change of package is failed the way a
 * real cluster can fail it: the OpenStackMachineTemplate the new version
 * adds already exists, made by someone else.
 */
import { inject } from 'vitest';
import { describeCapiCnfs, capoV2WorkerTemplate } from '../e2e/capi-suite.js';
import { kubeRequest, type KubeEndpoint } from '../support/kube-http.js';
import '../support/real-apiserver-setup.js';
import { startStandInCapi } from '../support/stand-in-capi.js';

const real = inject('realCluster');
if (!real) throw new Error('test/real runs only in the real-apiserver project, whose global setup starts the control plane');
const endpoint: KubeEndpoint = { server: real.server, token: real.token, caPem: real.caPem };

describeCapiCnfs(async () => {
  const errors: Error[] = [];
  const capi = await startStandInCapi(endpoint, { stepMs: 300, onError: (err) => void errors.push(err) });
  return {
    endpoint,
    async failChange() {
      const blocker = capoV2WorkerTemplate();
      const path = `/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/default/openstackmachinetemplates`;
      const made = await kubeRequest(endpoint, 'POST', path, blocker);
      if (made.status !== 201) throw new Error(`cannot create the blocking OpenStackMachineTemplate: HTTP ${made.status}: ${made.text}`);
      return async () => {
        await kubeRequest(endpoint, 'DELETE', `${path}/${blocker.metadata.name}`);
      };
    },
    async stop() {
      await capi.stop();
      if (errors.length > 0) process.stderr.write(`stand-in Cluster API controllers: ${errors.length} error(s), first: ${errors[0]!.message}\n`);
    },
  };
});
