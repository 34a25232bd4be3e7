/**
 * An image no kubelet can pull, on the real API server with the stand-in
 * kubelet (its registry's name does not resolve): the instantiate times
 * out naming the Deployment, its pod waiting in ImagePullBackOff and the
 * kubelet's last warning; vnf-describe shows the pod's Failed events
 * (the pull's own reason among them).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { newHome, okWith, vnfm } from '../support/cli.js';
import { packageVariant } from '../support/package-variant.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');
const VNFD_ID = '1191aa45-a57a-4232-8201-6a7a66d41e38';
const UNPULLABLE = 'registry.invalid/library/nginx:1.26-alpine';

let cluster: E2eCluster;
let home: string;
let request: string;

const run = (args: string[]) => vnfm(args, { home });
const ok = okWith(run);

interface Node {
  kind: string;
  name: string;
  ready: boolean;
  events: { type: string; reason: string; message: string }[];
  children: Node[];
}
const flat = (nodes: Node[]): Node[] => nodes.flatMap((n) => [n, ...flat(n.children)]);

beforeAll(async () => {
  cluster = await e2eCluster('real-image-pull');
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-image-pull-'));
  const vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, cluster.namespace);
  const body = JSON.parse(readFileSync(join(SAMPLE, 'requests/instantiate.json'), 'utf8')) as { additionalParams: Record<string, unknown> };
  body.additionalParams['namespace'] = cluster.namespace;
  request = join(dir, 'instantiate.json');
  writeFileSync(request, JSON.stringify(body));
  home = newHome();
  await ok(['vim-register', '--config-file', vimConfig, 'real']);
  const pkg = packageVariant(join(SAMPLE, 'package'), {
    fromVnfdId: VNFD_ID,
    vnfdId: '5f0c2b8e-3d1a-4e6b-9c7d-2a4b6c8d0e1f',
    replace: [['docker.io/library/nginx:1.26-alpine', UNPULLABLE]],
  });
  await ok(['vnfpkg-onboard', pkg, '--name', 'unpullable']);
});

afterAll(async () => {
  await cluster?.close();
});

describe('an image that cannot be pulled', () => {
  it('the timeout names the pod in ImagePullBackOff and the warning saying why; describe shows the events', async () => {
    await ok(['vnf-create', '--package', 'unpullable', '--name', 'nopull']);
    const timedOut = await run(['vnf-instantiate', 'nopull', request, '--timeout', '10s']);
    expect(timedOut.code, timedOut.stderr).toBe(124);
    const error = timedOut.stderr.split('\n').find((l) => l.startsWith('error: '))!;
    // The pod's container state, and the kubelet's warning saying why (not the "Error: ImagePullBackOff" that only repeats the state).
    expect(error).toContain(
      `(waiting for the pod to run (phase Pending; container web ImagePullBackOff: Back-off pulling image "${UNPULLABLE}"); last warning Failed: Failed to pull image "${UNPULLABLE}": `,
    );
    expect(error).toMatch(/: pod vdu1-[a-z0-9]+-[a-z0-9]+ \(waiting for the pod to run .*lookup registry\.invalid: no such host\)/);

    const live = JSON.parse((await ok(['vnf-describe', 'nopull', '-o', 'json'])).stdout) as { objects: Node[] };
    const pod = flat(live.objects).find((n) => n.kind === 'Pod' && n.name.startsWith('vdu1-'))!;
    expect(pod.ready).toBe(false);
    expect(pod.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'Failed', message: expect.stringContaining(`Failed to pull image "${UNPULLABLE}"`) }));
    expect(pod.events).toContainEqual(expect.objectContaining({ type: 'Normal', reason: 'BackOff', message: `Back-off pulling image "${UNPULLABLE}"` }));
  }, 120_000);
});
