/**
 * vnf-describe's text (cli/output/live-view.ts) pinned by golden files:
 * the tree with READY/REASON/DRIFT, the events of what is not ready, the
 * drift list, in table and wide form. Run with UPDATE_GOLDEN=1 to write the
 * files again, then read the diff before committing it.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { IO } from '../../src/cli/io.js';
import { renderLive } from '../../src/cli/output/live-view.js';
import type { LiveNode, VnfLiveState } from '../../src/model/live.js';

const GOLDEN = resolve(import.meta.dirname, '../fixtures/golden');
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';

const node = (kind: string, name: string, extra: Partial<LiveNode> = {}): LiveNode => ({
  kind,
  name,
  namespace: 'cnf',
  applied: false,
  exists: true,
  ready: true,
  reason: 'ready',
  drift: [],
  events: [],
  children: [],
  ...extra,
});

const state: VnfLiveState = {
  vnfInstanceId: '00000001-0000-4000-8000-000000000000',
  vnfInstanceName: 'web',
  vimType: 'kubernetes',
  vim: 'vim-sandbox',
  vimId: '00000002-0000-4000-8000-000000000000',
  namespace: 'cnf',
  objects: [
    node('ConfigMap', 'basic-cnf-content', { applied: true }),
    node('Service', 'basic-cnf-web', { applied: true, drift: ['changed by kubectl-edit at 2026-03-01T10:00:00Z: spec.sessionAffinity'] }),
    node('Deployment', 'vdu1', {
      applied: true,
      replicas: 3,
      drift: ['scaled elsewhere: 3, recorded 1'],
      children: [node('ReplicaSet', 'vdu1-6b7d9c', { children: [node('Pod', 'vdu1-6b7d9c-2xkqz'), node('Pod', 'vdu1-6b7d9c-9fhtw'), node('Pod', 'vdu1-6b7d9c-qq7lm')] })],
    }),
    node('Deployment', 'vdu2', {
      applied: true,
      ready: false,
      reason: '0/1 replicas ready',
      replicas: 1,
      events: [{ type: 'Warning', reason: 'ProgressDeadlineExceeded', message: 'ReplicaSet "vdu2-5d8f" has timed out progressing.', count: 2, time: '2026-03-01T10:01:00Z' }],
      children: [
        node('ReplicaSet', 'vdu2-5d8f', {
          ready: false,
          reason: '0/1 replicas ready',
          children: [node('Pod', 'vdu2-5d8f-kx2mz', { ready: false, reason: 'waiting for the pod to be ready' })],
        }),
      ],
    }),
    node('Secret', 'gone', { applied: true, exists: false, ready: false, reason: 'deleted', drift: ['deleted'] }),
  ],
  drift: [
    'Service/basic-cnf-web: changed by kubectl-edit at 2026-03-01T10:00:00Z: spec.sessionAffinity',
    'Deployment/vdu1: scaled elsewhere: 3, recorded 1',
    'Secret/gone: deleted',
    'Pod/vdu1-6b7d9c-9fhtw: not recorded as a VNFC',
  ],
  ready: false,
};

function render(wide: boolean, headers = true): string {
  const io = new IO({ stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() }, {});
  return renderLive(io, state, { wide, headers });
}

function golden(name: string, text: string): void {
  const path = join(GOLDEN, name);
  if (UPDATE) writeFileSync(path, text);
  else if (!existsSync(path)) throw new Error(`${path} is missing: run with UPDATE_GOLDEN=1 to write it`);
  expect(text, `${name} differs from its golden file (UPDATE_GOLDEN=1 to accept)`).toBe(readFileSync(path, 'utf8'));
}

describe('vnf-describe text', () => {
  it('table', () => golden('vnf-describe.table.txt', render(false)));
  it('wide', () => golden('vnf-describe.wide.txt', render(true)));
  it('no headers', () => expect(render(false, false)).not.toMatch(/^OBJECT/m));
  it('all ready and in sync', () => {
    const io = new IO({ stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() }, {});
    const text = renderLive(io, { ...state, objects: [node('ConfigMap', 'c', { applied: true })], drift: [], ready: true }, { wide: false, headers: true });
    expect(text.split('\n').slice(-3)).toEqual(['No drift from what vnfm recorded.', 'Everything is ready.', '']);
  });
});
