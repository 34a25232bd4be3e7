/**
 * The driver's Cluster API suite (kubernetes-driver-capi-suite.ts) on the
 * sandbox, its Cluster API emulation slowed down so that a driver not
 * waiting for the controllers would return before any Machine exists.
 */
import { startSandbox } from '@vnfm/kube-sandbox';
import { describeDriverCapi } from './kubernetes-driver-capi-suite.js';

describeDriverCapi(async () => {
  const sandbox = await startSandbox({ host: '127.0.0.1', port: 0, controllers: { readyDelayMs: 150, terminationDelayMs: 20 } });
  return { endpoint: { server: sandbox.url, token: sandbox.token, caPem: sandbox.caPem }, stop: () => sandbox.close() };
});
