/**
 * store-export / store-import on each backend (store/transfer.ts with the
 * package zips of csar/packages.ts): a round trip keeps every row and zip
 * (and, on SQLite, the lists' kept items follow the imported rows);
 * a document cut short, a zip that does not match its record, a key that
 * does not open the secrets and a non-empty target leave the target as it
 * was; --merge skips and lists what the target has.
 */
import { createReadStream, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { onboardPackage, packageContentIo } from '../../src/csar/packages.js';
import { ConflictError, SecretKeyError, UsageError, VnfmError } from '../../src/errors.js';
import type { LcmOpOcc } from '../../src/lcm/index.js';
import type { Store } from '../../src/store/index.js';
import { exportStore, importStore, linesOf, type ImportOptions } from '../../src/store/transfer.js';
import { STORE_BACKENDS, tempHome, useStoreBackend } from '../support/store-backends.js';
import { instanceRecord } from '../support/store-records.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf/package');
/** vnfm's ids are UUIDs (store-import refuses others): the seeded VIM, instance and operation. */
const VIM = '00000000-0000-4000-8000-00000000000a';
const INST = '00000000-0000-4000-8000-00000000000b';
const OP = '00000000-0000-4000-8000-00000000000c';
const homeOf = (s: Store) => (s as Store & { home?: string }).home!;
/** An operation's journal: a step written with the operation, then two appended (one with text JSON escapes). */
const JOURNAL = [
  { action: 'create', resource: { kind: 'Deployment', name: 'web' }, state: 'intended' },
  { action: 'create', resource: { kind: 'Deployment', name: 'web' }, state: 'done', detail: 'quote " backslash \\ tab \t é ☃' },
  { action: 'wait', resource: { kind: 'Deployment', name: 'web' }, state: 'done' },
] as never[];

describe.each(STORE_BACKENDS)('store-export and store-import on %s', (name) => {
  const backend = useStoreBackend(name);

  async function open(): Promise<Store> {
    const s = await backend.open();
    // The store's home: its SQLite file's directory, or (PostgreSQL) a VNFM_HOME of its own for package copies.
    return Object.assign(s, { home: s.backend === 'sqlite' ? s.location.replace(/\/vnfm\.db$/, '') : tempHome() });
  }
  const io = (s: Store) => packageContentIo({ home: homeOf(s), contents: s.packageContents });

  async function seeded(): Promise<{ store: Store; pkgId: string }> {
    const store = await open();
    const { pkg } = await onboardPackage({ packages: store.packages, contents: store.packageContents, home: homeOf(store), now: () => new Date() }, { path: SAMPLE });
    await store.db
      .prepare(
        `INSERT INTO vims (id, name, type, is_default, auth_url, auth_method, verify_tls, status, secrets_token, secrets_key_id, created_at, updated_at) VALUES ('${VIM}', 'edge', 'kubernetes', 1, 'https://h', 'bearer-token', 1, 'REACHABLE', 'sealed-token', 'key-1', 't0', 't0')`,
      )
      .run();
    await store.db.prepare("INSERT INTO ssh_host_keys (server_id, address, key_type, fingerprint, pinned_at) VALUES ('srv-1', '10.0.0.1', 'ssh-ed25519', 'SHA256:x', 't0')").run();
    await store.instances.insert(instanceRecord({ id: INST, vnfInstanceName: 'web-1', vnfPkgId: pkg.id, vnfdId: pkg.vnfdId }));
    const op = { id: OP, vnfInstanceId: INST, operation: 'INSTANTIATE', operationState: 'COMPLETED', stateEnteredTime: 't1', startTime: 't0' };
    await store.opOccs.insert({ ...op, operationParams: {}, journal: [JOURNAL[0]], isAutomaticInvocation: false } as unknown as LcmOpOcc, {} as never);
    for (const step of JOURNAL.slice(1)) await store.opOccs.appendJournal(OP, step);
    return { store, pkgId: pkg.id };
  }

  async function exported(store: Store, withPackageContents = true): Promise<string> {
    const file = join(tempHome() + '-export.json');
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (d: Buffer) => chunks.push(d));
    await exportStore(store, out, { withPackageContents, now: new Date('2026-01-01T00:00:00Z'), contents: io(store) });
    writeFileSync(file, Buffer.concat(chunks));
    return file;
  }

  const opts = (target: Store, file: string, more: Partial<ImportOptions> = {}): ImportOptions => ({
    merge: false,
    source: file,
    contents: io(target),
    checkSealed: () => undefined,
    ...more,
  });
  const load = (target: Store, file: string, more: Partial<ImportOptions> = {}) =>
    importStore(target, linesOf(createReadStream(file, { encoding: 'utf8' })), opts(target, file, more));

  const rows = async (s: Store, table: string) => ((await s.db.prepare(`SELECT * FROM ${table} ORDER BY 1`).all()) as Record<string, unknown>[]).map(({ rowid: _r, ...r }) => r);
  const nothingIn = async (s: Store) => {
    const kept = s.backend === 'sqlite' ? ['vnf_instance_json_items', 'lcm_op_occ_json_items'] : [];
    for (const t of ['vims', 'vnf_packages', 'ssh_host_keys', 'package_contents', 'vnf_instances', 'lcm_op_occs', ...kept]) expect(await rows(s, t)).toEqual([]);
    const dir = join(homeOf(s), 'packages');
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  };

  it('a round trip keeps every row and the package zip, which the target can unpack and read', async () => {
    const { store, pkgId } = await seeded();
    const file = await exported(store);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ vnfmExport: 1, sealedCheck: { token: 'sealed-token', keyId: 'key-1' }, source: { backend: name } });
    const target = await open();
    const checked: string[] = [];
    const r = await load(target, file, { checkSealed: (token, keyId, place) => void checked.push(`${keyId}:${token} at ${place}`) });
    // The header's sample first, then every sealed value of the document, each named by its line, row and field.
    expect(checked).toEqual(['key-1:sealed-token at line 1: sealedCheck', `key-1:sealed-token at line 4: vims "${VIM}": secrets_token`]);
    expect(r).toMatchObject({ imported: { vims: 1, vnf_packages: 1, ssh_host_keys: 1 }, skipped: [], packageContents: 1 });
    for (const t of ['vims', 'vnf_packages', 'ssh_host_keys', 'vnf_instances', 'lcm_op_occs', 'lcm_op_occ_details', 'lcm_op_occ_journal_steps']) {
      expect(await rows(target, t)).toEqual(await rows(store, t));
    }
    // The journal travels as one JSON array in its operation's details row (the document's shape from before migration 14), and comes back step by step.
    const details = (JSON.parse(readFileSync(file, 'utf8')) as { tables: Record<string, Record<string, unknown>[]> }).tables['lcm_op_occ_details']!;
    expect(details.map((d) => [d['id'], JSON.parse(String(d['journal']))])).toEqual([[OP, JOURNAL]]);
    expect(await target.opOccs.journal(OP)).toEqual(JOURNAL);
    expect((await target.opOccs.get(OP)).journal).toEqual(JOURNAL);
    // The lists' kept -o json items (SQLite) are made again from the imported rows.
    const json = (s: Store) => [s.instances.jsonText({}, {}), s.opOccs.jsonText({}, {})].map((pages) => pages && [...pages].join(''));
    expect(json(target)).toEqual(json(store));
    if (name === 'sqlite') expect(json(target).every((text) => text?.includes('"id": "'))).toBe(true);
    const zip = readFileSync(join(homeOf(store), 'packages', pkgId, 'package.zip'));
    const back: Buffer[] = [];
    for await (const c of (await io(target).read(pkgId))!) back.push(Buffer.from(c));
    expect(Buffer.concat(back).equals(zip)).toBe(true);

    const again = await load(target, file, { merge: true });
    expect(again).toMatchObject({ imported: { vims: 0, vnf_packages: 0 }, packageContents: 0 });
    expect(again.skipped).toEqual(expect.arrayContaining([`vims/${VIM}`, `vnf_packages/${pkgId}`, 'ssh_host_keys/srv-1']));
    await expect(load(target, file)).rejects.toThrow(ConflictError);
  });

  it('a document cut short, a zip that does not match its record, or a key that does not open the secrets: nothing is written', async () => {
    const { store } = await seeded();
    const file = await exported(store);
    const lines = readFileSync(file, 'utf8').split('\n');
    const cut = `${file}.cut`;
    writeFileSync(cut, lines.slice(0, lines.length - 4).join('\n'));
    const t1 = await open();
    await expect(load(t1, cut)).rejects.toThrow(/line \d+: the document ends early/);
    await nothingIn(t1);

    const chunkLine = lines.findIndex((l) => /^"[A-Za-z0-9+/=]+",?$/.test(l));
    const altered = [...lines];
    altered[chunkLine] = altered[chunkLine]!.replace(/^"(.)/, (_m, a: string) => `"${a === 'A' ? 'B' : 'A'}`);
    const bad = `${file}.bad`;
    writeFileSync(bad, altered.join('\n'));
    const t2 = await open();
    await expect(load(t2, bad)).rejects.toThrow(/line \d+: package [-0-9a-f]{36}'s zip is not the one its record describes/);
    await expect(load(t2, bad)).rejects.toThrow(UsageError);
    await nothingIn(t2);

    // A journal that is not a JSON array: named, and nothing written.
    const detailsLine = lines.findIndex((l) => l.includes('"journal":"['));
    const noArray = [...lines];
    noArray[detailsLine] = noArray[detailsLine]!.replace(/"journal":"\[/, '"journal":"{');
    const notArray = `${file}.journal`;
    writeFileSync(notArray, noArray.join('\n'));
    const t4 = await open();
    await expect(load(t4, notArray)).rejects.toThrow(new RegExp(`the journal of operation ${OP} is not a JSON array`));
    await nothingIn(t4);
    expect(await rows(t4, 'lcm_op_occ_journal_steps')).toEqual([]);

    const t3 = await open();
    await expect(
      load(t3, file, {
        checkSealed: () => {
          throw new SecretKeyError('that key does not open it');
        },
      }),
    ).rejects.toThrow(SecretKeyError);
    await nothingIn(t3);
  });

  it('refuses a document from a newer schema, and one that is not an export', async () => {
    const { store } = await seeded();
    const file = await exported(store, false);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('"chunks"');
    const newer = `${file}.newer`;
    writeFileSync(
      newer,
      text.replace(/"schemaVersion":(\d+)/, (_m, v: string) => `"schemaVersion":${Number(v) + 1}`),
    );
    const target = await open();
    await expect(load(target, newer)).rejects.toThrow(VnfmError);
    await expect(load(target, newer)).rejects.toThrow(/exported from a store at schema version \d+; this vnfm knows up to/);
    const pretty = `${file}.pretty`;
    writeFileSync(pretty, JSON.stringify(JSON.parse(text), null, 2));
    await expect(load(target, pretty)).rejects.toThrow(UsageError);
    await nothingIn(target);
  });
});
