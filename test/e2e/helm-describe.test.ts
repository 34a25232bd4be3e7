/**
 * vnf-describe and vnf-sync of a Helm CNF (the helm-cnf sample installed
 * by the real helm on the sandbox): the release's objects as recorded, no
 * drift for what helm wrote; a Deployment scaled behind vnfm's back is
 * drift until vnf-sync records it.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, vnfm, okWith } from '../support/cli.js';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { helmPath } from '../support/helm.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/helm-cnf');

let cluster: E2eCluster;
let home: string;
let dir: string;
let NS: string;

const ok = okWith((args) => vnfm(args, { home, env: { VNFM_HELM: helmPath() } }));
const json = <T = Record<string, unknown>>(out: string) => JSON.parse(out) as T;

interface Node {
  kind: string;
  name: string;
  applied: boolean;
  ready: boolean;
  replicas?: number;
  drift: string[];
  children: Node[];
}
const flat = (nodes: Node[]): Node[] => nodes.flatMap((n) => [n, ...flat(n.children)]);

beforeAll(async () => {
  cluster = await e2eCluster('e2e-helm-describe', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  NS = cluster.namespace;
  dir = mkdtempSync(join(tmpdir(), 'vnfm-helm-describe-'));
  mkdirSync(join(dir, 'requests'));
  home = newHome();
  const vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, NS);
  await ok(['vim-register', '--config-file', vimConfig, '--is-default', 'sandbox']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'helm-cnf']);
  const body = json<{ additionalParams: { namespace?: string } }>(readFileSync(join(SAMPLE, 'requests', 'instantiate.json'), 'utf8'));
  body.additionalParams.namespace = NS;
  writeFileSync(join(dir, 'requests', 'instantiate.json'), JSON.stringify(body));
});

afterAll(async () => {
  await cluster?.close();
});

describe('vnf-describe on a Helm release', () => {
  it('shows the release objects without drift, then a hand scale as drift that vnf-sync records', async () => {
    await ok(['vnf-create', '--package', 'helm-cnf', '--name', 'hc']);
    await ok(['vnf-instantiate', 'hc', '--request-file', join(dir, 'requests', 'instantiate.json')]);
    const fresh = json<{ vimType: string; ready: boolean; drift: string[]; objects: Node[] }>((await ok(['vnf-describe', 'hc', '-o', 'json'])).stdout);
    expect(fresh).toMatchObject({ vimType: 'helm', ready: true, drift: [] });
    const deployments = flat(fresh.objects).filter((n) => n.kind === 'Deployment' && n.applied);
    expect(deployments.length).toBeGreaterThan(0);
    expect(flat(fresh.objects).some((n) => n.kind === 'Pod')).toBe(true);

    const shown = json<{
      instantiatedVnfInfo: { vnfcResourceInfo: { vduId: string; metadata: { owner?: { name: string } } }[]; metadata: { vduReplicas: Record<string, number> } };
    }>((await ok(['vnf-show', 'hc', '-o', 'json'])).stdout).instantiatedVnfInfo;
    const workload = shown.vnfcResourceInfo.find((r) => r.vduId === 'VDU1')!.metadata.owner!.name;
    const before = shown.metadata.vduReplicas['VDU1']!;
    const scalePath = `/apis/apps/v1/namespaces/${NS}/deployments/${workload}/scale`;
    const scale = (await cluster.request('GET', scalePath)).json as Record<string, unknown>;
    expect((await cluster.request('PUT', `${scalePath}?fieldManager=kubectl`, { ...scale, spec: { replicas: before + 1 } })).status).toBe(200);

    const drifted = json<{ drift: string[] }>((await ok(['vnf-describe', 'hc', '-o', 'json'])).stdout);
    expect(drifted.drift).toContain(`Deployment/${workload}: scaled elsewhere: ${before + 1}, recorded ${before}`);
    const synced = await ok(['vnf-sync', 'hc']);
    expect(synced.stdout).toContain(`VDU1 replicas ${before} → ${before + 1}\n`);
    expect(synced.stdout).toMatch(/^vdu1_aspect scale level \d → \d$/m);
    const after = json<{ drift: string[] }>((await ok(['vnf-describe', 'hc', '-o', 'json'])).stdout);
    expect(after.drift.filter((d) => d.includes('scaled elsewhere'))).toEqual([]);
  });
});
