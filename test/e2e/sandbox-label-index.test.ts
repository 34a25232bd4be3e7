/**
 * Lists and watches with a label selector, served through the sandbox's
 * label index, answer what the whole collection filtered by the selector
 * holds — across namespaces, after relabelling and deletes; and what the
 * sandbox answers is a copy: a client reading an object and sending a change
 * of it back is the only way to change the stored one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '@vnfm/kube-sandbox';
import { kubeRequest, kubeWatch, type KubeEndpoint, type KubeWatchEvent } from '../support/kube-http.js';

let sb: Sandbox;
let endpoint: KubeEndpoint;
const NAMESPACES = ['li-one', 'li-two'];

type Labels = Record<string, string> | undefined;
/** What each selector selects, decided here from the labels alone. */
const SELECTORS: [string, (l: Labels) => boolean][] = [
  ['app=a', (l) => l?.app === 'a'],
  ['app==b,tier=web', (l) => l?.app === 'b' && l?.tier === 'web'],
  ['app in (a),tier!=db', (l) => l?.app === 'a' && l?.tier !== 'db'],
  ['app in (a,b)', (l) => l?.app === 'a' || l?.app === 'b'],
  ['tier', (l) => l?.tier !== undefined],
  ['!tier,app=c', (l) => l?.tier === undefined && l?.app === 'c'],
  ['app=none', () => false],
];

const names = (items: any[]): string[] => items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);

async function ok(method: string, path: string, body?: unknown, contentType?: string): Promise<any> {
  const r = await kubeRequest(endpoint, method, path, body, contentType);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r.json;
}

/** Every selector's list, in all namespaces and in each, against the unfiltered list filtered here. */
async function expectListsMatch(): Promise<void> {
  for (const scope of ['/api/v1/configmaps', ...NAMESPACES.map((ns) => `/api/v1/namespaces/${ns}/configmaps`)]) {
    const all = (await ok('GET', scope)).items.filter((o: any) => NAMESPACES.includes(o.metadata.namespace));
    for (const [selector, selects] of SELECTORS) {
      const listed = (await ok('GET', `${scope}?labelSelector=${encodeURIComponent(selector)}`)).items;
      expect(names(listed), `${scope} ${selector}`).toEqual(names(all.filter((o: any) => selects(o.metadata.labels))));
    }
  }
}

beforeAll(async () => {
  sb = await startSandbox({ controllers: { enabled: false } });
  endpoint = { server: sb.url, token: sb.token, caPem: sb.caPem };
  for (const ns of NAMESPACES) await ok('POST', '/api/v1/namespaces', { metadata: { name: ns } });
  const labelSets: Labels[] = [{ app: 'a' }, { app: 'a', tier: 'web' }, { app: 'a', tier: 'db' }, { app: 'b', tier: 'web' }, { app: 'b' }, { app: 'c' }, undefined];
  for (const ns of NAMESPACES) {
    for (let i = 0; i < 14; i++) {
      const labels = labelSets[(i + ns.length) % labelSets.length];
      await ok('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: `cm-${String(i).padStart(2, '0')}`, ...(labels ? { labels } : {}) }, data: { i: String(i) } });
    }
  }
});

afterAll(async () => {
  await sb?.close();
});

describe('sandbox label index over HTTPS', () => {
  it('lists by label selector what the whole collection filtered by it holds, in list order', async () => {
    await expectListsMatch();
  });

  it('keeps answering so after relabelling, removing labels and deleting', async () => {
    const path = (ns: string, name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
    await ok('PATCH', path('li-one', 'cm-00'), { metadata: { labels: { app: 'c', tier: null } } }, 'application/merge-patch+json');
    await ok('PATCH', path('li-one', 'cm-01'), { metadata: { labels: null } }, 'application/merge-patch+json');
    await ok('PATCH', path('li-two', 'cm-05'), { metadata: { labels: { app: 'a', tier: 'web' } } }, 'application/merge-patch+json');
    await ok('DELETE', path('li-two', 'cm-03'));
    await ok('DELETE', path('li-one', 'cm-09'));
    await expectListsMatch();
  });

  it('pages a label-selected list as it pages the filtered collection', async () => {
    const all = (await ok('GET', '/api/v1/configmaps?labelSelector=app%3Da')).items;
    const paged: any[] = [];
    let token = '';
    do {
      const page = await ok('GET', `/api/v1/configmaps?labelSelector=app%3Da&limit=2${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
      expect(page.items.length).toBeLessThanOrEqual(2);
      paged.push(...page.items);
      token = page.metadata.continue ?? '';
    } while (token);
    expect(names(paged)).toEqual(names(all));
  });

  it('starts a label-selected watch with what the list holds, and follows objects entering and leaving the selection', async () => {
    const listed = (await ok('GET', '/api/v1/namespaces/li-two/configmaps?labelSelector=app%3Db')).items;
    const events: KubeWatchEvent[] = [];
    let seen: () => void = () => {};
    const w = kubeWatch(endpoint, '/api/v1/namespaces/li-two/configmaps', { labelSelector: 'app=b' }, (e) => {
      events.push(e);
      seen();
    });
    const waitFor = (n: number) =>
      new Promise<void>((resolve) => {
        seen = () => events.filter((e) => e.type !== 'BOOKMARK').length >= n && resolve();
        seen();
      });
    await waitFor(listed.length);
    expect(names(events.map((e) => e.object))).toEqual(names(listed));
    const leaving = listed[0].metadata.name;
    await ok('PATCH', `/api/v1/namespaces/li-two/configmaps/${leaving}`, { metadata: { labels: { app: 'z' } } }, 'application/merge-patch+json');
    await ok('PATCH', '/api/v1/namespaces/li-two/configmaps/cm-13', { metadata: { labels: { app: 'b' } } }, 'application/merge-patch+json');
    await waitFor(listed.length + 2);
    w.stop();
    const changes = events.slice(listed.length).map((e) => [e.type, e.object.metadata.name, e.object.metadata.labels?.app]);
    expect(changes).toEqual([
      ['DELETED', leaving, 'b'],
      ['ADDED', 'cm-13', 'b'],
    ]);
  });

  it('answers copies: what a client changes in an answer changes nothing stored until it is sent back', async () => {
    const path = '/api/v1/namespaces/li-one/configmaps/cm-02';
    const first = await ok('GET', path);
    first.data.i = 'changed by the client';
    first.metadata.labels = { app: 'changed' };
    const again = await ok('GET', path);
    expect(again.data.i).toBe('2');
    expect(again.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    const written = await ok('PUT', path, first);
    expect(written.data.i).toBe('changed by the client');
    expect((await ok('GET', path)).metadata.labels).toEqual({ app: 'changed' });
    expect(names((await ok('GET', '/api/v1/namespaces/li-one/configmaps?labelSelector=app%3Dchanged')).items)).toEqual(['li-one/cm-02']);
  });
});
