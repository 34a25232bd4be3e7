/**
 * The capi-credentials suite (capi-credentials-suite.ts) on the sandbox:
 * its Cluster API emulation provisions the Cluster and starts a second
 * sandbox API server for the workload cluster.
 */
import { startSandbox } from '@vnfm/kube-sandbox';
import { describeCapiCredentials } from './capi-credentials-suite.js';

describeCapiCredentials(async () => {
  const sandbox = await startSandbox({ host: '127.0.0.1', port: 0, controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  return { endpoint: { server: sandbox.url, token: sandbox.token, caPem: sandbox.caPem }, stop: () => sandbox.close() };
});
