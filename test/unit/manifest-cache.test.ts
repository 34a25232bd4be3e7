/**
 * The parsed-manifest cache (lcm/manifest-cache.ts): a definition file read
 * again gives the same objects as parsing it, only what JSON gives back
 * exactly is kept, and only entries of vnfm's own user that no one else can
 * write are read.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCsar } from '../../src/csar/build.js';
import { jsonExact, manifestCache } from '../../src/lcm/manifest-cache.js';
import { readPackageObjects } from '../../src/lcm/package-content.js';

const samples = resolve(import.meta.dirname, '../../csar-samples');
let work: string;
const homes: string[] = [];

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'vnfm-manifests-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A VNFM_HOME that exists, as the store makes it. */
function home(): string {
  const h = join(work, `home-${homes.length}`);
  mkdirSync(h, { mode: 0o700 });
  homes.push(h);
  return h;
}

const parse = (text: string) => yaml.loadAll(text, undefined, { schema: yaml.DEFAULT_SCHEMA });
const entries = (h: string) => readdirSync(join(h, 'cache', 'manifests'));

describe('jsonExact', () => {
  it.each([
    ['nested plain values', { a: [1, 'x', true, null, { b: 2.5 }], c: {} }],
    ['an own __proto__ key, as js-yaml keeps one', parse('__proto__: 1\nx: 2\n')[0]],
  ])('keeps %s', (_, v) => expect(jsonExact(v)).toBe(true));

  it.each([
    ['a Date (a YAML timestamp)', parse('at: 2001-12-14\n')[0]],
    ['binary data', parse('b: !!binary aGVsbG8=\n')[0]],
    ['-0', { n: -0 }],
    ['NaN', { n: NaN }],
    ['Infinity (.inf)', parse('n: .inf\n')[0]],
    ['undefined', { u: undefined }],
    ['a sparse array', [1, , 3]],
    ['a class instance', { m: new Map() }],
  ])('refuses %s', (_, v) => expect(jsonExact(v)).toBe(false));

  it('lists where an object met before is reached again, with where it was first met', () => {
    const shared = { k: 'v' };
    const links: unknown[] = [];
    expect(jsonExact([{ a: shared, b: [shared] }, shared], [], new Map(), links as never)).toBe(true);
    expect(links).toEqual([
      [
        [0, 'b', 0],
        [0, 'a'],
      ],
      [[1], [0, 'a']],
    ]);
  });
});

describe('manifestCache', () => {
  const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: "1"\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: b\n';

  it('gives back what was parsed, as new objects, for the same text only', () => {
    const h = home();
    const cache = manifestCache(h);
    expect(cache.load(text)).toBeUndefined();
    const docs = parse(text);
    cache.save(text, docs);
    const again = cache.load(text)!;
    expect(again).toEqual(docs);
    expect(again[0]).not.toBe(docs[0]);
    expect(cache.load(text + '\n# changed\n')).toBeUndefined();
    expect(manifestCache(h).load(text)).toEqual(docs);
  });

  it('keeps nothing that JSON would not give back exactly', () => {
    const h = home();
    const cache = manifestCache(h);
    const dated = 'kind: X\nmetadata: {at: 2001-12-14}\n';
    cache.save(dated, parse(dated));
    expect(cache.load(dated)).toBeUndefined();
  });

  it('gives back an object a YAML alias reaches twice as one object, as js-yaml does', () => {
    const h = home();
    const cache = manifestCache(h);
    const text = 'metadata: {labels: &l {app: web}}\nspec:\n  selector: {matchLabels: *l}\n  template: {metadata: {labels: *l}}\n  __proto__: *l\n';
    const docs = parse(text) as { metadata: { labels: object }; spec: Record<string, { matchLabels?: object; metadata?: { labels: object } }> }[];
    cache.save(text, docs);
    const again = cache.load(text) as typeof docs;
    expect(again).toEqual(docs);
    const labels = again[0]!.metadata.labels;
    expect(again[0]!.spec['selector']!.matchLabels).toBe(labels);
    expect(again[0]!.spec['template']!.metadata!.labels).toBe(labels);
    expect(Object.getOwnPropertyDescriptor(again[0]!.spec, '__proto__')?.value).toBe(labels);
    expect(Object.getPrototypeOf(again[0]!.spec)).toBe(Object.prototype);
  });

  it('writes nothing into a VNFM_HOME that does not exist', () => {
    const h = join(work, 'absent');
    manifestCache(h).save(text, parse(text));
    expect(manifestCache(h).load(text)).toBeUndefined();
    expect(() => readdirSync(h)).toThrow();
  });

  it('reads no entry that others can write, nor from a directory others can write', () => {
    const h = home();
    const cache = manifestCache(h);
    cache.save(text, parse(text));
    const [entry] = entries(h);
    const file = join(h, 'cache', 'manifests', entry!);
    chmodSync(file, 0o666);
    expect(cache.load(text)).toBeUndefined();
    chmodSync(file, 0o600);
    expect(cache.load(text)).toEqual(parse(text));
    chmodSync(join(h, 'cache', 'manifests'), 0o777);
    expect(cache.load(text)).toBeUndefined();
    chmodSync(join(h, 'cache', 'manifests'), 0o700);
    // A damaged entry is no entry: the file is parsed again.
    writeFileSync(file, '{"not": "a list"', { mode: 0o600 });
    expect(cache.load(text)).toBeUndefined();
  });

  it('gives readPackageObjects the objects and sources parsing gives, first and second time', async () => {
    const zip = join(work, 'cnf.zip');
    await buildCsar(join(samples, 'basic-cnf/package'), zip);
    const files = ['Files/kubernetes/deployment_vdu1.yaml', 'Files/kubernetes/service.yaml'];
    const h = home();
    const parsed = await readPackageObjects(zip, files);
    const first = await readPackageObjects(zip, files, manifestCache(h));
    expect(entries(h)).toHaveLength(2);
    const second = await readPackageObjects(zip, files, manifestCache(h));
    expect(first).toEqual(parsed);
    expect(second).toEqual(parsed);
    expect(second.objects.map((o) => o.kind)).toEqual(['Deployment', 'Service']);
  });
});
