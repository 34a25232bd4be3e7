/**
 * Watches as vnfm's readiness waits use them: events in order, selectors,
 * resume from a resourceVersion, and the client library's Watch class (410
 * Expired for a version too old: in crd.test.ts, where a kind's history
 * starts with its CRD on any server).
 */
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Cluster } from './cluster.js';

let c: Cluster;
let base: string;

beforeAll(async () => {
  c = await connect('conf-watch');
  base = `/api/v1/namespaces/${c.namespace}/configmaps`;
});
afterAll(async () => {
  await c?.close();
});

describe('watch', () => {
  it('streams ADDED, MODIFIED and DELETED for changes after a resourceVersion', async () => {
    const list = await c.request('GET', base);
    const from = list.json.metadata.resourceVersion;
    await c.request('POST', base, { body: { metadata: { name: 'w1' }, data: { a: '1' } } });
    await c.request('PATCH', `${base}/w1`, { body: { data: { a: '2' } }, contentType: 'application/merge-patch+json' });
    await c.request('DELETE', `${base}/w1`);
    const events = await c.watch(base, { resourceVersion: from }, (e) => e.type === 'DELETED' && e.object.metadata.name === 'w1');
    const mine = events.filter((e) => e.object.metadata.name === 'w1');
    expect(mine.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(mine[1]!.object).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1', data: { a: '2' } });
    const versions = mine.map((e) => Number(e.object.metadata.resourceVersion));
    expect([...versions].sort((a, b) => a - b)).toEqual(versions);
  });

  it('starts with the current objects as ADDED when no resourceVersion is given', async () => {
    await c.request('POST', base, { body: { metadata: { name: 'w-existing' } } });
    const events = await c.watch(base, { fieldSelector: 'metadata.name=w-existing' }, (e) => e.type === 'ADDED');
    expect(events[0]!.object.metadata.name).toBe('w-existing');
  });

  it('applies label selectors to events, as objects enter and leave the selection', async () => {
    const from = (await c.request('GET', base)).json.metadata.resourceVersion;
    await c.request('POST', base, { body: { metadata: { name: 'w-sel', labels: { pick: 'no' } } } });
    await c.request('PATCH', `${base}/w-sel`, { body: { metadata: { labels: { pick: 'yes' } } }, contentType: 'application/merge-patch+json' });
    const left = await c.request('PATCH', `${base}/w-sel`, {
      body: { metadata: { labels: { pick: 'no' } }, data: { after: 'leaving' } },
      contentType: 'application/merge-patch+json',
    });
    const events = await c.watch(base, { resourceVersion: from, labelSelector: 'pick=yes' }, (e) => e.type === 'DELETED');
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
    // The DELETED event carries the object as it was last seen in the
    // selection, at the resourceVersion of the change that took it out.
    expect(events[1]!.object.metadata.labels.pick).toBe('yes');
    expect(events[1]!.object.data).toBeUndefined();
    expect(events[1]!.object.metadata.resourceVersion).toBe(left.json.metadata.resourceVersion);
  });

  it('ends the stream after timeoutSeconds', async () => {
    const events = await c.watch(base, { timeoutSeconds: '1', fieldSelector: 'metadata.name=none' }, () => false, 10_000);
    expect(events).toEqual([]);
  });

  it('works with the client library Watch class, bookmarks allowed', async () => {
    const seen: string[] = [];
    const from = (await c.request('GET', base)).json.metadata.resourceVersion;
    let abort: AbortController | undefined;
    const done = new Promise<void>((resolve, reject) => {
      void new k8s.Watch(c.kc)
        .watch(
          base,
          { resourceVersion: from, allowWatchBookmarks: true },
          (type, obj) => {
            if (type === 'BOOKMARK') return;
            seen.push(`${type} ${obj.metadata.name}`);
            if (type === 'DELETED') resolve();
          },
          (err) => (err && err.name !== 'AbortError' ? reject(err) : resolve()),
        )
        .then((a) => (abort = a), reject);
    });
    await c.request('POST', base, { body: { metadata: { name: 'w-lib' } } });
    await c.request('DELETE', `${base}/w-lib`);
    await done;
    abort?.abort();
    expect(seen).toEqual(['ADDED w-lib', 'DELETED w-lib']);
  });
});
