/**
 * Vitest global setup of the real OpenStack tier: one cloud
 * (./real-openstack.ts) for the whole run. Its cold start takes minutes, and
 * vitest runs no test of any project until every global setup has returned,
 * so this one returns at once and the cloud starts alongside the other
 * tiers' tests: when it is ready (or has failed) its facts are written to the
 * file the tests read with `useRealOpenStack` (real-openstack-client.ts),
 * whose path they get with `inject('realOpenStackFile')`. Stopped when the run ends.
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startRealOpenStack, type RealOpenStack, type RealOpenStackInfo } from './real-openstack.js';

/** What the file holds once the start has ended. */
export type RealOpenStackState = { ready: true; info: RealOpenStackInfo } | { ready: false; error: string };

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set in the real OpenStack tier only: where the cloud's state appears. */
    realOpenStackFile: string | undefined;
  }
}

const MEMORY_SAMPLE_MS = 15_000;
const say = (line: string) => void process.stderr.write(`real OpenStack: ${line}\n`);

export default function setup(project: TestProject): () => Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), 'vnfm-realos-state-'));
  const file = join(stateDir, 'cloud.json');
  const publish = (state: RealOpenStackState) => {
    writeFileSync(`${file}.tmp`, JSON.stringify(state));
    renameSync(`${file}.tmp`, file);
  };
  project.provide('realOpenStackFile', file);
  let peak = 0;
  let sampler: NodeJS.Timeout | undefined;
  const starting: Promise<RealOpenStack | undefined> = startRealOpenStack(say).then(
    (cloud) => {
      const { memory: _memory, stop: _stop, ...info } = cloud;
      peak = cloud.figures.pssMiB;
      say(`ready in ${(cloud.figures.coldStartMs / 1000).toFixed(0)} s, ${cloud.figures.pssMiB} MiB PSS; logs in ${cloud.dir}/log`);
      sampler = setInterval(() => (peak = Math.max(peak, cloud.memory().pssMiB)), MEMORY_SAMPLE_MS);
      sampler.unref();
      publish({ ready: true, info });
      return cloud;
    },
    (err: unknown) => {
      say(`did not start: ${(err as Error).stack ?? String(err)}`);
      publish({ ready: false, error: (err as Error).message ?? String(err) });
      return undefined;
    },
  );
  return async () => {
    const cloud = await starting;
    clearInterval(sampler);
    if (cloud) {
      const now = cloud.memory();
      peak = Math.max(peak, now.pssMiB);
      const t0 = Date.now();
      await cloud.stop();
      say(`stopped in ${((Date.now() - t0) / 1000).toFixed(0)} s; ${now.processes} processes, ${now.pssMiB} MiB PSS at the end, ${peak} MiB at most`);
    }
    rmSync(stateDir, { recursive: true, force: true });
  };
}
