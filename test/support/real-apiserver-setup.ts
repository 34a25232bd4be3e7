/**
 * Vitest global setup of the real API server tier: one control plane
 * (./real-apiserver.ts) for the whole run, whose endpoint the tests read with
 * `inject('realCluster')`. Stopped when the run ends.
 */
import type { TestProject } from 'vitest/node';
import { startRealCluster } from './real-apiserver.js';

/** What the tests of the real tier learn about the control plane. */
export interface ProvidedRealCluster {
  kubeconfigPath: string;
  server: string;
  token: string;
  caPem: string;
  gitVersion: string;
  nodes: string[];
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set in the real API server tier only. */
    realCluster: ProvidedRealCluster | undefined;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const t0 = Date.now();
  const errors: string[] = [];
  const cluster = await startRealCluster({ onKubeletError: (err) => void errors.push(err.message) });
  process.stderr.write(
    `real API server tier: kube-apiserver ${cluster.gitVersion} with kube-controller-manager, etcd and a stand-in kubelet ready in ${((Date.now() - t0) / 1000).toFixed(1)} s at ${cluster.server}\n`,
  );
  project.provide('realCluster', {
    kubeconfigPath: cluster.kubeconfigPath,
    server: cluster.server,
    token: cluster.token,
    caPem: cluster.caPem,
    gitVersion: cluster.gitVersion,
    nodes: [...cluster.nodes],
  });
  return async () => {
    await cluster.stop();
    if (errors.length) process.stderr.write(`real API server tier: the stand-in kubelet met ${errors.length} error(s), first: ${errors[0]}\n`);
  };
}
