/**
 * vnf-describe and vnf-sync with the real program: the basic CNF sample
 * instantiated, then changed behind vnfm's back through the Kubernetes API
 * as kubectl would (a Deployment scaled, a Service edited, a Pod deleted,
 * an event posted as a controller would); describe shows the tree, the
 * events of what is not ready and the drift; sync records the new replicas,
 * scale level and VNFCs, then says the instance is in sync.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { newHome, vnfm, okWith } from '../support/cli.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');

let cluster: E2eCluster;
let home: string;
let requests: string;
let NS: string;

const ok = okWith((args) => vnfm(args, { home }));
const json = <T = Record<string, unknown>>(out: string) => JSON.parse(out) as T;

interface Node {
  kind: string;
  name: string;
  applied: boolean;
  exists: boolean;
  ready: boolean;
  reason: string;
  replicas?: number;
  drift: string[];
  events: { type: string; reason: string; message: string }[];
  children: Node[];
}
interface Live {
  vnfInstanceId: string;
  namespace: string;
  ready: boolean;
  drift: string[];
  objects: Node[];
}
interface Shown {
  instantiatedVnfInfo: {
    scaleStatus: { aspectId: string; scaleLevel: number }[];
    vnfcInfo: { id: string; vduId: string; vnfcResourceInfoId: string }[];
    metadata: { vduReplicas: Record<string, number> };
  };
}

const flat = (nodes: Node[]): Node[] => nodes.flatMap((n) => [n, ...flat(n.children)]);
const find = (s: Live, kind: string, name: string) => flat(s.objects).find((n) => n.kind === kind && n.name === name);

async function api(method: string, path: string, body?: unknown, contentType?: string): Promise<Record<string, unknown>> {
  const r = await cluster.request(method, path, body, contentType);
  if (r.status >= 300) throw new Error(`${method} ${path}: HTTP ${r.status}: ${r.text}`);
  return r.json as Record<string, unknown>;
}

type Pod = { metadata: { name: string; deletionTimestamp?: string; labels?: Record<string, string> }; status?: { conditions?: { type: string; status: string }[] } };

/** The pods of a VDU of the sample (its app.kubernetes.io/component label), not being deleted. */
async function podsOf(app: string): Promise<Pod[]> {
  const list = await api('GET', `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(`app.kubernetes.io/component=${app}`)}`);
  return (list['items'] as Pod[]).filter((p) => !p.metadata.deletionTimestamp);
}

/** Asks again until `check` holds: the controllers act on their own time (no fixed sleep). */
async function until<T>(read: () => Promise<T>, check: (v: T) => boolean): Promise<T> {
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    await new Promise((r) => setImmediate(r));
  }
}

beforeAll(async () => {
  cluster = await e2eCluster('e2e-describe', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  NS = cluster.namespace;
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-describe-e2e-'));
  const vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, NS);
  requests = join(dir, 'requests');
  mkdirSync(requests, { recursive: true });
  for (const f of readdirSync(join(SAMPLE, 'requests'))) {
    const body = JSON.parse(readFileSync(join(SAMPLE, 'requests', f), 'utf8')) as { additionalParams?: { namespace?: string } };
    if (body.additionalParams?.namespace !== undefined) body.additionalParams.namespace = NS;
    writeFileSync(join(requests, f), JSON.stringify(body, null, 2));
  }
  home = newHome();
  await ok(['vim-register', '--config-file', vimConfig, 'sandbox']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf']);
});

afterAll(async () => {
  await cluster?.close();
});

describe('vnf-describe and vnf-sync', () => {
  it('refuse an unknown instance (3) and one NOT_INSTANTIATED (4), saying so', async () => {
    const unknown = await vnfm(['vnf-describe', 'no-such-vnf'], { home });
    expect(unknown.code).toBe(3);
    await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'idle']);
    const idle = await vnfm(['vnf-describe', 'idle'], { home });
    expect(idle.code).toBe(4);
    expect(idle.stderr).toMatch(/vnf instance idle is NOT_INSTANTIATED/);
    expect(idle.stderr).toMatch(/vnfm vnf-instantiate idle/);
    const sync = await vnfm(['vnf-sync', 'idle'], { home });
    expect(sync.code).toBe(4);
    await ok(['vnf-delete', 'idle', '--yes']);
  });

  it('shows the live tree, then the drift and events of what changed by hand; sync records it once', async () => {
    await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'web']);
    await ok(['vnf-instantiate', 'web', '--request-file', join(requests, 'instantiate.json')]);

    // All ready, nothing drifted: the tree has what each Deployment owns.
    const fresh = json<Live>((await ok(['vnf-describe', 'web', '-o', 'json'])).stdout);
    expect(fresh).toMatchObject({ ready: true, drift: [], namespace: NS });
    expect(fresh.objects.map((o) => `${o.kind}/${o.name}`).sort()).toEqual(['ConfigMap/basic-cnf-content', 'Deployment/vdu1', 'Deployment/vdu2', 'Service/basic-cnf-web']);
    const vdu1 = find(fresh, 'Deployment', 'vdu1')!;
    expect(vdu1).toMatchObject({ applied: true, ready: true, replicas: 1 });
    expect(vdu1.children.map((c) => c.kind)).toEqual(['ReplicaSet']);
    expect(vdu1.children[0]!.children.map((c) => c.kind)).toEqual(['Pod']);
    const table = await ok(['vnf-describe', 'web']);
    expect(table.stdout).toMatch(/^OBJECT\s+READY\s+REASON\s+DRIFT$/m);
    expect(table.stdout).toMatch(/^Deployment\/vdu1\s+True$/m);
    expect(table.stdout).toMatch(/^└─ReplicaSet\/vdu1-\S+\s+True$/m);
    expect(table.stdout).toMatch(/^ {2}└─Pod\/vdu1-\S+\s+True$/m);
    expect(table.stdout).toContain('No drift from what vnfm recorded.');
    expect((await ok(['vnf-sync', 'web'])).stdout).toBe('vnf instance web: in sync\n');

    // Behind vnfm's back, as kubectl would: scale vdu1 to 3 (level 2), edit the Service,
    // hold vdu2 back and delete its pod (the replacement never gets ready), and an event about it.
    const before = json<Shown>((await ok(['vnf-show', 'web', '-o', 'json'])).stdout).instantiatedVnfInfo;
    const scalePath = `/apis/apps/v1/namespaces/${NS}/deployments/vdu1/scale`;
    const scale = await api('GET', scalePath);
    await api('PUT', `${scalePath}?fieldManager=kubectl`, { ...scale, spec: { replicas: 3 } });
    await api('PATCH', `/api/v1/namespaces/${NS}/services/basic-cnf-web?fieldManager=kubectl-edit`, { spec: { sessionAffinity: 'ClientIP' } }, 'application/merge-patch+json');
    await cluster.neverReady({ kind: 'Deployment', name: 'vdu2' });
    const [oldVdu2] = await podsOf('vdu2');
    await api('DELETE', `/api/v1/namespaces/${NS}/pods/${oldVdu2!.metadata.name}`);
    await until(
      () => podsOf('vdu2'),
      (pods) => pods.length === 1 && pods[0]!.metadata.name !== oldVdu2!.metadata.name,
    );
    await until(
      () => podsOf('vdu1'),
      (pods) => pods.length === 3,
    );
    await api('POST', `/api/v1/namespaces/${NS}/events`, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'vdu2.describe-test', namespace: NS },
      involvedObject: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'vdu2', namespace: NS },
      reason: 'ProgressDeadlineExceeded',
      message: 'ReplicaSet "vdu2" has timed out progressing.',
      type: 'Warning',
      count: 2,
      firstTimestamp: '2026-01-01T00:00:00Z',
      lastTimestamp: '2026-01-01T00:01:00Z',
      source: { component: 'deployment-controller' },
    });

    const drifted = await until(
      async () => json<Live>((await ok(['vnf-describe', 'web', '-o', 'json'])).stdout),
      (s) => find(s, 'Deployment', 'vdu2')?.ready === false,
    );
    expect(drifted.ready).toBe(false);
    expect(find(drifted, 'Deployment', 'vdu1')!.drift).toEqual(['scaled elsewhere: 3, recorded 1']);
    // A real API server also defaults spec.sessionAffinityConfig, owned by the same edit.
    expect(find(drifted, 'Service', 'basic-cnf-web')!.drift).toEqual([
      expect.stringMatching(/^changed by kubectl-edit at \S+: spec\.sessionAffinity(, spec\.sessionAffinityConfig)?$/),
    ]);
    expect(find(drifted, 'ConfigMap', 'basic-cnf-content')!.drift).toEqual([]);
    const vdu2 = find(drifted, 'Deployment', 'vdu2')!;
    // A real cluster's deployment controller adds its own (ScalingReplicaSet).
    expect(vdu2.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'ProgressDeadlineExceeded', message: 'ReplicaSet "vdu2" has timed out progressing.' }));
    const oldVnfc = before.vnfcInfo.find((v) => v.vduId === 'VDU2')!;
    expect(drifted.drift).toContain(`VNFC ${oldVnfc.id}: pod ${oldVdu2!.metadata.name} is gone`);
    expect(drifted.drift).toContain('Deployment/vdu1: scaled elsewhere: 3, recorded 1');
    expect(drifted.drift.filter((d) => /^Pod\/vdu1-\S+: not recorded as a VNFC$/.test(d))).toHaveLength(2);

    const shownTable = await ok(['vnf-describe', 'web']);
    expect(shownTable.stdout).toMatch(/^Deployment\/vdu2\s+False\s+.+$/m);
    expect(shownTable.stdout).toContain('Events of what is not ready:');
    expect(shownTable.stdout).toMatch(/Warning {2}ProgressDeadlineExceeded \(x2\): ReplicaSet "vdu2" has timed out progressing\./);
    expect(shownTable.stdout).toMatch(/^ {2}Deployment\/vdu1: scaled elsewhere: 3, recorded 1$/m);

    // --dry-run says what would change and records nothing.
    const dry = await ok(['vnf-sync', 'web', '--dry-run']);
    expect(dry.stdout).toContain('vdu1_aspect scale level 0 → 2\n');
    expect(dry.stdout).toContain('VDU1 replicas 1 → 3\n');
    expect(dry.stdout).toContain(`vnfc removed: ${oldVnfc.id} (${oldVdu2!.metadata.name})\n`);
    expect(dry.stderr).toContain('nothing recorded (--dry-run)');
    expect(json<Shown>((await ok(['vnf-show', 'web', '-o', 'json'])).stdout).instantiatedVnfInfo).toEqual(before);

    const synced = await ok(['vnf-sync', 'web']);
    expect(synced.stdout).toBe(dry.stdout);
    expect(synced.stdout.match(/^vnfc added: VDU1-vdu1-\S+ \(Pod vdu1-\S+\)$/gm)).toHaveLength(2);
    expect(synced.stdout).toMatch(/^vnfc added: VDU2-vdu2-\S+ \(Pod vdu2-\S+\)$/m);
    const after = json<Shown>((await ok(['vnf-show', 'web', '-o', 'json'])).stdout).instantiatedVnfInfo;
    expect(after.scaleStatus).toEqual([
      { aspectId: 'vdu1_aspect', scaleLevel: 2 },
      { aspectId: 'vdu2_aspect', scaleLevel: 0 },
    ]);
    expect(after.metadata.vduReplicas).toEqual({ VDU1: 3, VDU2: 1 });
    const livePods = [...(await podsOf('vdu1')), ...(await podsOf('vdu2'))].map((p) => p.metadata.name).sort();
    expect(after.vnfcInfo.map((v) => v.vnfcResourceInfoId).sort()).toEqual(livePods);

    // Recorded now: no scale drift, no VNFC drift; the hand edit of the Service stays.
    const again = json<Live>((await ok(['vnf-describe', 'web', '-o', 'json'])).stdout);
    expect(again.drift).toEqual([expect.stringMatching(/^Service\/basic-cnf-web: changed by kubectl-edit/)]);
    expect((await ok(['vnf-sync', 'web'])).stdout).toBe('vnf instance web: in sync\n');
    expect(json((await ok(['vnf-sync', 'web', '-o', 'json'])).stdout)).toMatchObject({ inSync: true, written: false, changes: [] });
  });

  it('refuses to sync (4, nothing recorded) while an operation waits in FAILED_TEMP', async () => {
    // vdu2 is held back from becoming ready (above): its scale-out times out and waits in FAILED_TEMP.
    const scaled = await vnfm(['vnf-scale', 'web', '--type', 'SCALE_OUT', '--aspect-id', 'vdu2_aspect', '--timeout', '5s'], { home });
    expect(scaled.code).not.toBe(0);
    const refused = await vnfm(['vnf-sync', 'web'], { home });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/FAILED_TEMP SCALE occurrence .* must be resolved first/);
    // describe still reads (it writes nothing).
    expect((await vnfm(['vnf-describe', 'web', '-o', 'json'], { home })).code).toBe(0);
  });
});
