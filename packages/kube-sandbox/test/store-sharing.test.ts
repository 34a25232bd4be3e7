/**
 * The sandbox store keeps one frozen copy of each object and shares it with
 * events, watches and read-only readers: no caller — a client handed a copy,
 * a controller reading the shared object, a listener — can change what is
 * stored. Its label index answers as a scan of every object would, through
 * creates, relabelling updates and deletes.
 */
import { describe, expect, it } from 'vitest';
import { ObjectStore, type StoreEvent } from '../src/store.js';
import type { KubeObject } from '../src/resources.js';
import { parseLabelSelectorParts } from '../src/selectors.js';

const cm = (namespace: string, name: string, labels?: Record<string, string>, data: Record<string, string> = { k: 'v' }): KubeObject =>
  ({ metadata: { name, namespace, uid: `uid-${namespace}-${name}`, ...(labels ? { labels } : {}) }, data }) as unknown as KubeObject;

describe('sandbox store: frozen, shared objects', () => {
  it('hands out copies from get, list, create and update; changing them or the written object leaves the store as it was', () => {
    const store = new ObjectStore();
    const input = cm('ns', 'a', { app: 'x' });
    const created = store.create('', 'configmaps', input);
    (input.metadata.labels as Record<string, string>).app = 'changed-input';
    (created as any).data.k = 'changed-created';
    const got = store.get('', 'configmaps', 'ns', 'a')!;
    got.metadata.name = 'changed-get';
    (got as any).data.k = 'changed-get';
    const listed = store.list('', 'configmaps', 'ns').items[0]!;
    (listed.metadata.labels as Record<string, string>).app = 'changed-list';
    const updated = store.update('', 'configmaps', cm('ns', 'a', { app: 'x' }, { k: 'w' }));
    (updated as any).data.k = 'changed-updated';
    const stored = store.peek('', 'configmaps', 'ns', 'a')!;
    expect(stored.metadata.labels).toEqual({ app: 'x' });
    expect((stored as any).data).toEqual({ k: 'w' });
    expect(store.select('', 'configmaps', 'ns', { app: 'x' })!.map((o) => o.metadata.name)).toEqual(['a']);
    expect(store.select('', 'configmaps', 'ns', { app: 'changed-input' })).toEqual([]);
  });

  it('freezes what it shares: a write to a peeked, scanned, selected or dependent object throws, deep down too', () => {
    const store = new ObjectStore();
    store.create('', 'configmaps', cm('ns', 'a', { app: 'x' }));
    store.create('', 'pods', {
      metadata: { name: 'p', namespace: 'ns', uid: 'p1', ownerReferences: [{ uid: 'owner-1', kind: 'ReplicaSet', name: 'rs' }] },
    } as unknown as KubeObject);
    const shared = [
      store.peek('', 'configmaps', 'ns', 'a')!,
      store.scan('', 'configmaps').items[0]!,
      store.select('', 'configmaps', undefined, { app: 'x' })![0]!,
      store.peekDependents('owner-1')[0]!.object,
      store.peekByUid('p1')!.object,
    ];
    for (const obj of shared) {
      expect(Object.isFrozen(obj)).toBe(true);
      expect(() => {
        obj.metadata.name = 'other';
      }).toThrow(TypeError);
      expect(() => {
        (obj.metadata as any).labels = { app: 'y' };
      }).toThrow(TypeError);
    }
    expect(() => {
      ((store.peek('', 'configmaps', 'ns', 'a') as any).data as Record<string, string>).k = 'changed';
    }).toThrow(TypeError);
    expect((store.get('', 'configmaps', 'ns', 'a') as any).data).toEqual({ k: 'v' });
    expect(store.peek('', 'configmaps', 'ns', 'a')!.metadata.name).toBe('a');
  });

  it('gives listeners the stored objects themselves, frozen: the event, the store and the old state share one copy', () => {
    const store = new ObjectStore();
    const events: StoreEvent[] = [];
    store.subscribe((e) => events.push(e));
    store.create('', 'configmaps', cm('ns', 'a', { app: 'x' }));
    const first = store.peek('', 'configmaps', 'ns', 'a')!;
    store.update('', 'configmaps', cm('ns', 'a', { app: 'y' }));
    const second = store.peek('', 'configmaps', 'ns', 'a')!;
    store.delete('', 'configmaps', 'ns', 'a');
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(events[0]!.object).toBe(first);
    expect(events[1]!.object).toBe(second);
    expect(events[1]!.old).toBe(first);
    expect(events[2]!.object.metadata.resourceVersion).toBe('3');
    expect(events[2]!.object.metadata.labels).toEqual({ app: 'y' });
    for (const e of events) {
      expect(Object.isFrozen(e.object)).toBe(true);
      expect(() => {
        e.object.metadata.name = 'other';
      }).toThrow(TypeError);
    }
    // What the first event carried is still the first revision.
    expect(first.metadata).toMatchObject({ resourceVersion: '1', labels: { app: 'x' } });
  });
});

describe('sandbox store: label index', () => {
  /** A small deterministic generator, so a failure repeats. */
  function random(seed: number): () => number {
    let s = seed;
    return () => {
      s = (s * 1103515245 + 12345) % 2 ** 31;
      return s / 2 ** 31;
    };
  }

  it('selects what a scan of every object filtered by the labels selects, through creates, relabelling and deletes', () => {
    const store = new ObjectStore();
    const next = random(7);
    const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)]!;
    const apps = ['a', 'b', 'c'];
    const tiers = ['web', 'db'];
    const randomLabels = (): Record<string, string> | undefined => {
      const r = next();
      if (r < 0.15) return undefined;
      const labels: Record<string, string> = { app: pick(apps) };
      if (r > 0.4) labels.tier = pick(tiers);
      if (r > 0.8) labels['example.com/zone'] = pick(['1', '2']);
      return labels;
    };
    const selectors: Record<string, string>[] = [{ app: 'a' }, { app: 'b', tier: 'web' }, { tier: 'db' }, { 'example.com/zone': '1', app: 'c' }, { app: 'none' }];
    const check = (): void => {
      for (const ns of [undefined, 'ns1', 'ns2', 'ns3']) {
        for (const sel of selectors) {
          const scanned = store
            .scan('', 'configmaps', ns)
            .items.filter((o) => Object.entries(sel).every(([k, v]) => o.metadata.labels?.[k] === v))
            .map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
          const selected = store.select('', 'configmaps', ns, sel)!.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
          expect(selected).toEqual(scanned);
        }
      }
    };
    const live = new Set<string>();
    for (let step = 0; step < 600; step++) {
      const ns = pick(['ns1', 'ns2', 'ns3']);
      const name = `cm-${Math.floor(next() * 60)}`;
      const k = `${ns}/${name}`;
      if (!live.has(k)) {
        store.create('', 'configmaps', cm(ns, name, randomLabels()));
        live.add(k);
      } else if (next() < 0.7) {
        store.update('', 'configmaps', cm(ns, name, randomLabels()));
      } else {
        store.delete('', 'configmaps', ns, name);
        live.delete(k);
      }
      if (step % 50 === 0) check();
    }
    check();
    // Other resources with the same labels are not mixed in.
    store.create('', 'secrets', cm('ns1', 'cm-1', { app: 'a' }));
    check();
    expect(store.select('', 'secrets', 'ns1', { app: 'a' })!.map((o) => o.metadata.name)).toEqual(['cm-1']);
    // Nothing to narrow by: the caller scans.
    expect(store.select('', 'configmaps', 'ns1', {})).toBeUndefined();
  });

  it('takes from a label selector only the labels every match must carry', () => {
    expect(parseLabelSelectorParts('app=a,tier==web').equalities).toEqual({ app: 'a', tier: 'web' });
    expect(parseLabelSelectorParts('app in (a),tier in (web,db)').equalities).toEqual({ app: 'a' });
    expect(parseLabelSelectorParts('app!=a,!tier,zone,n>1,x notin (y)').equalities).toEqual({});
    expect(parseLabelSelectorParts('app=').equalities).toEqual({ app: '' });
    expect(parseLabelSelectorParts(null).equalities).toEqual({});
    const { matches } = parseLabelSelectorParts('app=a,tier!=db');
    expect(matches(cm('ns', 'x', { app: 'a', tier: 'web' }))).toBe(true);
    expect(matches(cm('ns', 'x', { app: 'a', tier: 'db' }))).toBe(false);
  });
});
