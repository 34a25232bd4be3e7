/**
 * "Why did it fail?" with the real program on the sandbox, and in the real
 * API server tier on the real kube-apiserver with the stand-in kubelet: an
 * instantiate whose vdu1 pod never gets ready (its kubelet posting the
 * failed readiness probe, as a real one does) times out, and the error
 * names the object, its pod and that warning; vnf-describe then shows the
 * FAILED_TEMP instance from what the operation's journal records as
 * created (the instance itself records nothing at the VIM), which objects
 * are not ready and their events, and again after op-fail; vnf-logs reads
 * the logs of its pods; after op-rollback there is nothing to describe.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { newHome, okWith, vnfm } from '../support/cli.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');

let cluster: E2eCluster;
let home: string;
let requests: string;

const run = (args: string[]) => vnfm(args, { home });
const ok = okWith(run);

interface Node {
  kind: string;
  name: string;
  exists: boolean;
  ready: boolean;
  events: { type: string; reason: string; message: string }[];
  children: Node[];
}
interface Live {
  ready: boolean;
  namespace: string;
  objects: Node[];
  lastOperation?: { id: string; operation: string; operationState: string; error?: string; fromJournal: boolean };
}
const flat = (nodes: Node[]): Node[] => nodes.flatMap((n) => [n, ...flat(n.children)]);

beforeAll(async () => {
  cluster = await e2eCluster('e2e-why-failed', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-why-failed-'));
  const vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, cluster.namespace);
  requests = join(dir, 'requests');
  mkdirSync(requests);
  for (const f of readdirSync(join(SAMPLE, 'requests'))) {
    const body = JSON.parse(readFileSync(join(SAMPLE, 'requests', f), 'utf8')) as { additionalParams?: { namespace?: string } };
    if (body.additionalParams?.namespace !== undefined) body.additionalParams.namespace = cluster.namespace;
    writeFileSync(join(requests, f), JSON.stringify(body, null, 2));
  }
  home = newHome();
  await ok(['vim-register', '--config-file', vimConfig, 'sandbox']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf']);
});

afterAll(async () => {
  await cluster?.close();
});

describe('why an instantiate failed', () => {
  it('the timeout names the pod not ready and its last warning; vnf-describe shows what the journal recorded, after FAILED_TEMP and FAILED', async () => {
    const lift = await cluster.neverReady({ kind: 'Deployment', name: 'vdu1' });
    try {
      await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'stuck']);
      const timedOut = await run(['vnf-instantiate', 'stuck', join(requests, 'instantiate.json'), '--timeout', '10s']);
      expect(timedOut.code, timedOut.stderr).toBe(124);
      const error = timedOut.stderr.split('\n').find((l) => l.startsWith('error: '))!;
      expect(error).toMatch(/timed out after 10s while waiting for Deployment vdu1 in namespace \S+ \(waiting for 0\/1 replicas ready\)/);
      expect(error).toMatch(/Not ready: Deployment vdu1 in namespace \S+: pod vdu1-[a-z0-9]+-[a-z0-9]+ \([^)]*; last warning Unhealthy: Readiness probe failed: /);
      expect(error).toMatch(/occurrence [0-9a-f-]{36} is FAILED_TEMP/);

      // The instance records nothing at the VIM; describe reads what the operation's journal says it created.
      const shown = await run(['vnf-describe', 'stuck', '-o', 'json']);
      expect(shown.code, shown.stderr).toBe(0);
      const live = JSON.parse(shown.stdout) as Live;
      expect(live.lastOperation).toMatchObject({ operation: 'INSTANTIATE', operationState: 'FAILED_TEMP', fromJournal: true });
      expect(live.lastOperation!.error).toMatch(/Not ready: Deployment vdu1 /);
      expect(live.ready).toBe(false);
      expect(live.namespace).toBe(cluster.namespace);
      const all = flat(live.objects);
      expect(all.find((n) => n.kind === 'Deployment' && n.name === 'vdu1')).toMatchObject({ exists: true, ready: false });
      expect(all.find((n) => n.kind === 'Deployment' && n.name === 'vdu2')).toMatchObject({ exists: true, ready: true });
      const pod = all.find((n) => n.kind === 'Pod' && n.name.startsWith('vdu1-'))!;
      expect(pod.ready).toBe(false);
      expect(pod.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'Unhealthy' }));

      const table = await run(['vnf-describe', 'stuck']);
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toMatch(/^last operation: INSTANTIATE FAILED_TEMP \(occurrence [0-9a-f-]{36}\): Timed out: /m);
      expect(table.stdout).toContain('What it created, as its journal records it:');
      expect(table.stdout).toMatch(/^Deployment\/vdu1 +False /m);
      expect(table.stdout).toContain('Events of what is not ready:');
      expect(table.stdout).toMatch(/Warning {2}Unhealthy: Readiness probe failed/);
      expect(table.stdout).toMatch(/vnfm op-retry [0-9a-f]{8} tries the INSTANTIATE again; vnfm op-rollback [0-9a-f]{8} undoes it/);

      // Its pods' logs too: those of what the journal records, the instance recording no VNFC yet.
      const logs = await run(['vnf-logs', 'stuck']);
      expect(logs.code, logs.stderr).toBe(0);
      expect(logs.stdout).toMatch(new RegExp(`^\\[pod/${pod.name}\\] web: started on `, 'm'));
      expect(logs.stdout).not.toMatch(new RegExp(`^\\[pod/${pod.name}\\] web: ready$`, 'm'));
      expect(logs.stdout).toMatch(/^\[pod\/vdu2-\S+\] \S+: ready$/m);
      const one = await run(['vnf-logs', 'stuck', '--vnfc', pod.name, '--tail', '1']);
      expect(one.code, one.stderr).toBe(0);
      expect(one.stdout).toMatch(/^web: started on /);
      expect((await run(['vnf-logs', 'stuck', '--vdu', 'VDU1'])).stderr).toMatch(/records no VDUs yet: its instantiate is FAILED_TEMP/);

      const op = live.lastOperation!.id;
      await ok(['op-fail', op, '--yes']);
      const failed = JSON.parse((await ok(['vnf-describe', 'stuck', '-o', 'json'])).stdout) as Live;
      expect(failed.lastOperation).toMatchObject({ id: op, operationState: 'FAILED', fromJournal: true });
      expect(flat(failed.objects).some((n) => n.kind === 'Deployment' && n.name === 'vdu1')).toBe(true);
    } finally {
      await lift();
    }
  }, 120_000);

  it('after a rollback there is nothing to describe (exit 4)', async () => {
    // A namespace of its own: the first test's FAILED instance keeps its objects.
    const namespace = `${cluster.namespace}-undone`;
    const lift = await cluster.neverReady({ kind: 'Deployment', name: 'vdu1', namespace });
    try {
      await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'undone']);
      const body = JSON.parse(readFileSync(join(requests, 'instantiate.json'), 'utf8')) as { additionalParams: Record<string, unknown> };
      body.additionalParams['namespace'] = namespace;
      body.additionalParams['vnfm_create_namespace'] = true;
      writeFileSync(join(requests, 'undone.json'), JSON.stringify(body));
      const timedOut = await run(['vnf-instantiate', 'undone', join(requests, 'undone.json'), '--timeout', '10s']);
      expect(timedOut.code, timedOut.stderr).toBe(124);
    } finally {
      await lift();
    }
    const ops = JSON.parse((await ok(['op-list', '--vnf', 'undone', '-o', 'json'])).stdout) as { id: string }[];
    await ok(['op-rollback', ops[0]!.id]);
    const refused = await run(['vnf-describe', 'undone']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/vnf instance undone is NOT_INSTANTIATED/);
  }, 120_000);
});
