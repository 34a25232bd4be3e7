/**
 * The sandbox's object store answers lists, namespace contents and
 * dependents from its indexes: the same answers as a scan of every object,
 * kept right through creates, updates (owner references changed) and deletes.
 */
import { describe, expect, it } from 'vitest';
import { ObjectStore } from '../src/store.js';
import type { KubeObject } from '../src/resources.js';

const pod = (namespace: string | undefined, name: string, owners: string[] = []): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      uid: `uid-${namespace}-${name}`,
      ...(owners.length ? { ownerReferences: owners.map((uid) => ({ uid, kind: 'ReplicaSet', name: uid })) } : {}),
    },
  }) as unknown as KubeObject;

const names = (objs: KubeObject[]) => objs.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`);

describe('sandbox object store indexes', () => {
  it('lists by namespace then name as the keys sort, in one namespace or all, with copies', () => {
    const store = new ObjectStore();
    for (const [ns, name] of [
      ['a', 'z'],
      ['a-b', 'y'],
      ['a', 'x.1'],
      ['a', 'x-1'],
      ['b', 'a'],
      ['a-b', 'a'],
    ] as const)
      store.create('', 'pods', pod(ns, name));
    store.create('', 'nodes', pod(undefined, 'n2'));
    store.create('', 'nodes', pod(undefined, 'n1'));
    expect(names(store.list('', 'pods').items)).toEqual(['a-b/a', 'a-b/y', 'a/x-1', 'a/x.1', 'a/z', 'b/a']);
    expect(names(store.list('', 'pods', 'a').items)).toEqual(['a/x-1', 'a/x.1', 'a/z']);
    expect(names(store.list('', 'pods', 'none').items)).toEqual([]);
    expect(names(store.list('', 'nodes').items)).toEqual(['/n1', '/n2']);
    expect(names(store.list('apps', 'deployments').items)).toEqual([]);
    const listed = store.list('', 'pods', 'b').items[0]!;
    listed.metadata.name = 'changed';
    expect(names(store.list('', 'pods', 'b').items)).toEqual(['b/a']);
  });

  it('follows creates, updates and deletes: lists, namespace contents, dependents', () => {
    const store = new ObjectStore();
    store.create('', 'pods', pod('ns', 'p1', ['rs-1']));
    store.create('', 'pods', pod('ns', 'p2', ['rs-1', 'rs-2']));
    store.create('', 'pods', pod('other', 'p3', ['rs-1']));
    expect(
      store
        .dependentsOf('rs-1')
        .map((d) => d.object.metadata.name)
        .sort(),
    ).toEqual(['p1', 'p2', 'p3']);
    // an update that drops one owner and names another
    store.update('', 'pods', pod('ns', 'p2', ['rs-3']));
    expect(
      store
        .dependentsOf('rs-1')
        .map((d) => d.object.metadata.name)
        .sort(),
    ).toEqual(['p1', 'p3']);
    expect(store.dependentsOf('rs-2')).toEqual([]);
    expect(store.dependentsOf('rs-3').map((d) => [d.group, d.resource, d.object.metadata.name])).toEqual([['', 'pods', 'p2']]);
    expect(store.namespaceContents('ns').map((c) => c.object.metadata.name)).toEqual(['p1', 'p2']);
    store.delete('', 'pods', 'ns', 'p1');
    expect(names(store.list('', 'pods').items)).toEqual(['ns/p2', 'other/p3']);
    expect(store.namespaceContents('ns').map((c) => c.object.metadata.name)).toEqual(['p2']);
    expect(store.dependentsOf('rs-1').map((d) => d.object.metadata.name)).toEqual(['p3']);
    store.delete('', 'pods', 'ns', 'p2');
    expect(store.namespaceContents('ns')).toEqual([]);
    expect(store.list('', 'pods', 'ns').items).toEqual([]);
    // created again: listed again, at its place
    store.create('', 'pods', pod('ns', 'p0'));
    store.create('', 'pods', pod('ns', 'p1'));
    expect(names(store.list('', 'pods', 'ns').items)).toEqual(['ns/p0', 'ns/p1']);
    expect(store.getByUid('uid-ns-p1')?.object.metadata.name).toBe('p1');
  });
});
