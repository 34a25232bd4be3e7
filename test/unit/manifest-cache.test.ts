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

  const shared = { k: 'v' };
  it.each([
    ['a Date (a YAML timestamp)', parse('at: 2001-12-14\n')[0]],
    ['binary data', parse('b: !!binary aGVsbG8=\n')[0]],
    ['-0', { n: -0 }],
    ['NaN', { n: NaN }],
    ['Infinity (.inf)', parse('n: .inf\n')[0]],
    ['undefined', { u: undefined }],
    ['an object reached twice (a YAML alias)', parse('a: &x {k: v}\nb: *x\n')[0]],
    ['the same object in two documents', [shared, shared]],
    ['a sparse array', [1, , 3]],
    ['a class instance', { m: new Map() }],
  ])('refuses %s', (_, v) => expect(jsonExact(v)).toBe(false));
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
    const aliased = 'a: &x {k: v}\nb: *x\n';
    cache.save(aliased, parse(aliased));
    expect(cache.load(aliased)).toBeUndefined();
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
