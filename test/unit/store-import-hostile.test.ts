/**
 * store-import of hostile and damaged documents, and package ids that are
 * not vnfm's (issue 27, items 1, 6–10 and 13): on each store backend, one
 * test per defect through importStore, each asserting that nothing of the
 * refused document was written (all or nothing); then the hostile corpus
 * through the command line (in-process main(), argv in, exit code and stderr
 * out), counted: cases, exit codes, crashes, files touched outside
 * VNFM_HOME. Also package records another client wrote with an id that is a
 * path (`../../../x`): fetching, downloading and deleting refuse them
 * without touching a file; and an onboarding on PostgreSQL stopped by
 * SIGTERM or Ctrl-C removes its chunks before it ends.
 *
 * test/unit/hostile-inputs.test.ts is the corpus of the other commands.
 */
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { createKeyring } from '../../src/crypto/keyring.js';
import { generateFernetKey } from '../../src/crypto/index.js';
import { deletePackage, downloadPackage, ensurePackageContent, onboardPackage, packageContentIo } from '../../src/csar/packages.js';
import { ConflictError, SecretKeyError, UsageError, VnfmError } from '../../src/errors.js';
import type { LcmOpOcc } from '../../src/lcm/index.js';
import { connectStore, type Store } from '../../src/store/index.js';
import { exportStore, importStore, linesOf, type ImportOptions } from '../../src/store/transfer.js';
import { BIN } from '../support/cli.js';
import { STORE_BACKENDS, tempHome, useStoreBackend } from '../support/store-backends.js';
import { instanceRecord } from '../support/store-records.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf/package');
const MiB = 1024 * 1024;
const VIM = '00000000-0000-4000-8000-00000000000a';
const VIM2 = '00000000-0000-4000-8000-00000000000d';
const INST = '00000000-0000-4000-8000-00000000000b';
const OP = '00000000-0000-4000-8000-00000000000c';

/** A directory outside every VNFM_HOME, with a file in it, and the package id that points at it from `<tmp>/<x>/home/packages/`. */
function plantVictim(root: string): { dir: string; id: string; intact: () => boolean } {
  const dir = mkdtempSync(join(root, 'victim-'));
  writeFileSync(join(dir, 'precious.txt'), 'keep me');
  writeFileSync(join(dir, 'package.zip'), 'not a zip');
  mkdirSync(join(dir, 'content'));
  writeFileSync(join(dir, 'content', 'also.txt'), 'keep me too');
  return {
    dir,
    id: `../../../${basename(dir)}`,
    intact: () => existsSync(join(dir, 'precious.txt')) && readFileSync(join(dir, 'package.zip'), 'utf8') === 'not a zip' && existsSync(join(dir, 'content', 'also.txt')),
  };
}

/** The document's lines, and the line indexes of a table's rows. */
const rowIndexes = (lines: string[], table: string): number[] => {
  const start = lines.findIndex((l) => l === `"${table}":[` || l === `,"${table}":[`);
  const out: number[] = [];
  for (let i = start + 1; lines[i] !== ']' && lines[i] !== '],'; i++) out.push(i);
  return out;
};
const rowAt = (line: string): Record<string, unknown> => JSON.parse(line.replace(/,$/, '')) as Record<string, unknown>;
/** `lines` with `row` added as the first row of `table`. */
const withRow = (lines: string[], table: string, row: Record<string, unknown>): string[] => {
  const first = lines.findIndex((l) => l === `"${table}":[` || l === `,"${table}":[`) + 1;
  return [...lines.slice(0, first), `${JSON.stringify(row)},`, ...lines.slice(first)];
};
/** `lines` with the row at `i` changed by `fn`. */
const changeRow = (lines: string[], i: number, fn: (row: Record<string, unknown>) => Record<string, unknown>): string[] => {
  const out = [...lines];
  out[i] = JSON.stringify(fn(rowAt(lines[i]!))) + (lines[i]!.endsWith(',') ? ',' : '');
  return out;
};
/**
 * Gives a package record the id `to`, as another client of the store could
 * write it with straight SQL: the record and (PostgreSQL) its complete
 * contents, moved to the new id.
 */
async function renamePackage(store: Store, from: string, to: string): Promise<void> {
  await store.db.prepare('UPDATE vnf_packages SET id = ? WHERE id = ?').run(to, from);
  if (!store.packageContents) return;
  await store.db
    .prepare(
      'INSERT INTO package_contents (package_id, size_bytes, sha256, chunk_count, complete, updated_at) SELECT ?, size_bytes, sha256, chunk_count, complete, updated_at FROM package_contents WHERE package_id = ?',
    )
    .run(to, from);
  await store.db.prepare('INSERT INTO package_content_chunks (package_id, seq, data) SELECT ?, seq, data FROM package_content_chunks WHERE package_id = ?').run(to, from);
  await store.db.prepare('DELETE FROM package_contents WHERE package_id = ?').run(from);
}
const chunkIndexes = (lines: string[]) => lines.flatMap((l, i) => (/^"[A-Za-z0-9+/=]*",?$/.test(l) ? [i] : []));

describe('linesOf: a line is bounded before it is held', () => {
  it('refuses a line past the default 64 MiB at its first bytes over, having pulled no more than that', async () => {
    const piece = Buffer.alloc(MiB, 0x61);
    let pulled = 0;
    // 80 MiB without a newline, as one reused 1 MiB buffer: the reader holds views of it, not copies.
    const source = (async function* () {
      for (let i = 0; i < 80; i++) {
        pulled++;
        yield piece;
      }
      yield Buffer.from('\n');
    })();
    const reading = (async () => {
      for await (const line of linesOf(source)) void line;
    })();
    await expect(reading).rejects.toThrow(/line 1 is longer than 67108864 bytes/);
    expect(pulled).toBeLessThanOrEqual(66);
  });

  it('splits on \\n (and \\r\\n) across chunks, multi-byte characters whole, as store-export writes', async () => {
    const text = 'ab\r\n"é☃"\nlast';
    const bytes = Buffer.from(text);
    const pieces = Array.from(bytes, (b) => Buffer.from([b]));
    const got: string[] = [];
    for await (const line of linesOf(Readable.from(pieces), 16)) got.push(line);
    expect(got).toEqual(['ab', '"é☃"', 'last']);
  });
});

describe.each(STORE_BACKENDS)('store-import of a hostile document on %s', (name) => {
  const backend = useStoreBackend(name);
  const homeOf = (s: Store) => (s as Store & { home?: string }).home!;

  async function open(): Promise<Store> {
    const s = await backend.open();
    return Object.assign(s, { home: s.backend === 'sqlite' ? s.location.replace(/\/vnfm\.db$/, '') : tempHome() });
  }
  const io = (s: Store) => packageContentIo({ home: homeOf(s), contents: s.packageContents });

  /** A store with the sample package, a default VIM (secrets sealed under key-1), an instance and an operation; its export's lines. */
  async function exported(): Promise<{ lines: string[]; pkgId: string }> {
    const store = await open();
    const { pkg } = await onboardPackage({ packages: store.packages, contents: store.packageContents, home: homeOf(store), now: () => new Date() }, { path: SAMPLE });
    await store.db
      .prepare(
        `INSERT INTO vims (id, name, type, is_default, auth_url, auth_method, verify_tls, status, secrets_token, secrets_key_id, created_at, updated_at) VALUES ('${VIM}', 'edge', 'kubernetes', 1, 'https://h', 'bearer-token', 1, 'REACHABLE', 'sealed-token', 'key-1', 't0', 't0')`,
      )
      .run();
    await store.instances.insert(instanceRecord({ id: INST, vnfPkgId: pkg.id, vnfdId: pkg.vnfdId }));
    const op = { id: OP, vnfInstanceId: INST, operation: 'INSTANTIATE', operationState: 'COMPLETED', stateEnteredTime: 't1', startTime: 't0' };
    await store.opOccs.insert({ ...op, operationParams: {}, journal: [], isAutomaticInvocation: false } as unknown as LcmOpOcc, {} as never);
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (d: Buffer) => chunks.push(d));
    await exportStore(store, out, { withPackageContents: true, now: new Date('2026-01-01T00:00:00Z'), contents: io(store) });
    await store.close();
    return { lines: Buffer.concat(chunks).toString('utf8').split('\n'), pkgId: pkg.id };
  }

  /** This side's master key opens what is sealed under key-1 only. */
  const checkSealed: ImportOptions['checkSealed'] = (_token, keyId, place) => {
    if (keyId !== 'key-1') throw new SecretKeyError(`the master key here does not open ${place}`);
  };

  async function load(target: Store, lines: string[], more: Partial<ImportOptions> & { lineBytes?: number } = {}) {
    const file = `${tempHome()}-doc.json`;
    writeFileSync(file, lines.join('\n'));
    return importStore(target, linesOf(createReadStream(file), more.lineBytes), { merge: false, source: file, contents: io(target), checkSealed, ...more });
  }

  const rows = (s: Store, table: string) => s.db.prepare(`SELECT * FROM ${table}`).all();
  /** Nothing of the document was written: no row, no staged chunk, no package directory. */
  async function nothingIn(s: Store): Promise<void> {
    for (const t of ['vims', 'vnf_packages', 'vnf_instances', 'lcm_op_occs', 'lcm_op_occ_details', 'ssh_host_keys', 'package_contents', 'package_content_chunks']) {
      expect(await rows(s, t), t).toEqual([]);
    }
    const dir = join(homeOf(s), 'packages');
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  }

  /** Imports `lines` into a new store: refused with an error of `type` saying `says`; nothing written. */
  async function refused(lines: string[], type: typeof VnfmError, says: RegExp, more: Partial<ImportOptions> & { lineBytes?: number } = {}): Promise<void> {
    const target = await open();
    try {
      const err = await load(target, lines, more).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(type);
      expect((err as Error).message).toMatch(says);
      await nothingIn(target);
    } finally {
      await target.close();
    }
  }

  it('1: a package id that is a path is refused before it reaches one; the directory it names survives', async () => {
    const { lines, pkgId } = await exported();
    const victim = plantVictim(tmpdir());
    // Everywhere the package's id appears: its row, the instance's reference, its zip's entry.
    const hostile = lines.map((l) => l.replaceAll(pkgId, victim.id));
    await refused(hostile, UsageError, new RegExp(`line 7: vnf_packages "${victim.id.replaceAll('.', '\\.')}": id is not a UUID`));
    expect(victim.intact()).toBe(true);
    // The zip's entry alone, or a VIM's id: refused as well.
    const entry = lines.findIndex((l) => l.includes('"chunks":['));
    await refused(
      lines.map((l, i) => (i === entry ? l.replace(pkgId, victim.id) : l)),
      UsageError,
      /the contents of package "\.\.\/\.\.\/\.\.\/victim-\w+": packageId is not a UUID/,
    );
    await refused(
      changeRow(lines, rowIndexes(lines, 'vims')[0]!, (r) => ({ ...r, id: '../vim' })),
      UsageError,
      /line 4: vims "\.\.\/vim": id is not a UUID/,
    );
    expect(victim.intact()).toBe(true);
    rmSync(victim.dir, { recursive: true, force: true });
  });

  it('1: a package record another client wrote with a path for an id: fetching, downloading and deleting it refuse, touching no file', async () => {
    const store = await open();
    const victim = plantVictim(tmpdir());
    try {
      const { pkg } = await onboardPackage({ packages: store.packages, contents: store.packageContents, home: homeOf(store), now: () => new Date() }, { path: SAMPLE });
      await renamePackage(store, pkg.id, victim.id);
      // On PostgreSQL this machine has no copy: it would fetch one.
      if (store.packageContents) rmSync(join(homeOf(store), 'packages', pkg.id), { recursive: true });
      const deps = { packages: store.packages, contents: store.packageContents, home: homeOf(store), now: () => new Date() };
      const hostile = await store.packages.get(victim.id);
      await expect(ensurePackageContent(deps, hostile)).rejects.toThrow(/package id "\.\.\/\.\.\/\.\.\/victim-\w+" is not a UUID: refusing to make a path of it/);
      await expect(downloadPackage(deps, victim.id, join(tmpdir(), `vnfm-dl-${process.pid}.zip`))).rejects.toThrow(/is not a UUID/);
      await expect(deletePackage(deps, victim.id)).rejects.toThrow(/is not a UUID/);
      expect(victim.intact()).toBe(true);
      // Refused before anything changed: the record (and its contents) are still there.
      expect((await store.packages.get(victim.id)).id).toBe(victim.id);
      if (store.packageContents) expect((await store.packageContents.info(victim.id))?.complete).toBe(true);
    } finally {
      await store.close();
      rmSync(victim.dir, { recursive: true, force: true });
    }
  });

  it('6: every sealed value must open with the key here, not the header sample alone; the record is named (exit 5)', async () => {
    const { lines } = await exported();
    const vim = rowAt(lines[rowIndexes(lines, 'vims')[0]!]!);
    const other = { ...vim, id: VIM2, name: 'edge-2', is_default: 0, secrets_key_id: 'key-other' };
    await refused(withRow(lines, 'vims', other), SecretKeyError, new RegExp(`line 4: vims "${VIM2}": secrets_token`));
    // A sealed value inside a JSON column (where management drivers seal), as a rotation finds it.
    const details = rowIndexes(lines, 'vnf_instance_details')[0]!;
    const sealedMeta = changeRow(lines, details, (r) => ({ ...r, metadata: JSON.stringify({ registry: { password: { sealed: 'gAAAA', keyId: 'key-other' } } }) }));
    await refused(sealedMeta, SecretKeyError, new RegExp(`vnf_instance_details "${INST}": metadata \\$\\.registry\\.password`));
  });

  it("7: the package row's checksum and size must be its zip's (exit 2, naming the package)", async () => {
    const { lines, pkgId } = await exported();
    const pkgRow = rowIndexes(lines, 'vnf_packages')[0]!;
    const says = new RegExp(`package ${pkgId}'s zip \\(SHA-256 [0-9a-f]{64}, \\d+ bytes\\) is not the one its record describes \\(.* line 7: vnf_packages "${pkgId}"`);
    await refused(
      changeRow(lines, pkgRow, (r) => ({ ...r, checksum_hash: 'ab'.repeat(32) })),
      UsageError,
      says,
    );
    await refused(
      changeRow(lines, pkgRow, (r) => ({ ...r, size_bytes: Number(r['size_bytes']) + 1 })),
      UsageError,
      says,
    );
    // Row and entry agreeing with each other, not with the bytes.
    const entry = lines.findIndex((l) => l.includes('"chunks":['));
    const lied = changeRow(lines, pkgRow, (r) => ({ ...r, checksum_hash: 'ab'.repeat(32) })).map((l, i) =>
      i === entry ? l.replace(/"sha256":"[0-9a-f]+"/, `"sha256":"${'ab'.repeat(32)}"`) : l,
    );
    await refused(lied, UsageError, /zip is not the one its record describes \(the chunks from line \d+: SHA-256/);
  });

  it('8: a line over the bound, more rows than the bound, a chunk over 4 MiB: refused naming the line and the limit', async () => {
    const { lines } = await exported();
    const long = changeRow(lines, rowIndexes(lines, 'vims')[0]!, (r) => ({ ...r, description: 'd'.repeat(2 * MiB) }));
    await refused(long, UsageError, /line 4: the line is longer than the limit of 1 MiB/, { lineBytes: MiB });
    await refused(lines, UsageError, /line \d+: more than 3 rows, the limit/, { limits: { records: 3 } });
    const chunk = chunkIndexes(lines)[0]!;
    const big = [...lines];
    big[chunk] = `"${Buffer.alloc(5 * MiB, 1).toString('base64')}"${lines[chunk]!.endsWith(',') ? ',' : ''}`;
    await refused(big, UsageError, new RegExp(`line ${chunk + 1}: a chunk of package [-0-9a-f]{36}'s zip is over 4 MiB`));
  });

  it('9: a document that repeats an id is refused, with or without --merge, naming the table and the id', async () => {
    const { lines } = await exported();
    const vim = rowAt(lines[rowIndexes(lines, 'vims')[0]!]!);
    const twice = withRow(lines, 'vims', { ...vim, name: 'other', is_default: 0 });
    const says = new RegExp(`line 5: vims "${VIM}" a second time \\(first on line 4\\)`);
    await refused(twice, UsageError, says);
    await refused(twice, UsageError, says, { merge: true });
    // The same package's zip twice.
    const entry = lines.findIndex((l) => l.includes('"chunks":['));
    const end = lines.findIndex((l, i) => i > entry && /^\]\},?$/.test(l));
    const zip = lines.slice(entry, end + 1);
    const again = [...lines.slice(0, end), ']},', `,${zip[0]!.replace(/^,/, '')}`, ...zip.slice(1), ...lines.slice(end + 1)];
    await refused(again, UsageError, /the contents of package [-0-9a-f]{36} a second time/);
  });

  it('4: a name the commands would refuse (control characters, a bidi override) or an instance name another instance holds: refused naming the row', async () => {
    const { lines } = await exported();
    const inst = rowIndexes(lines, 'vnf_instances')[0]!;
    await refused(
      changeRow(lines, inst, (r) => ({ ...r, name: 'web\u001b]52;c;cHduZWQ=\u0007' })),
      UsageError,
      /vnf_instances "[-0-9a-f]+": name: "web\\u001b\]52;c;cHduZWQ=\\u0007" is not a usable instance name/,
    );
    const vim = rowIndexes(lines, 'vims')[0]!;
    await refused(
      changeRow(lines, vim, (r) => ({ ...r, name: 'edge\u202e1' })),
      UsageError,
      /vims "[-0-9a-f]+": name: .* is not a usable VIM name/,
    );
    const row = rowAt(lines[inst]!);
    const twin = withRow(lines, 'vnf_instances', { ...row, id: '00000000-0000-4000-8000-00000000000e', name: 'web' });
    const named = changeRow(twin, rowIndexes(twin, 'vnf_instances')[1]!, (r) => ({ ...r, name: 'web' }));
    await refused(named, ConflictError, /vnf_instances "[-0-9a-f]+": a VNF instance named "web" already exists/);
  });

  it('10: two default VIMs, bad base64, a zip that is not its hash, a value no column takes: exit 2 naming the record; a clash with this store: exit 4', async () => {
    const { lines } = await exported();
    const vim = rowAt(lines[rowIndexes(lines, 'vims')[0]!]!);
    await refused(withRow(lines, 'vims', { ...vim, id: VIM2, name: 'edge-2' }), UsageError, /line 5: vims "[-0-9a-f]+": is_default = 1: a second default VIM \(line 4 is one\)/);
    const chunk = chunkIndexes(lines)[0]!;
    const bad64 = [...lines];
    bad64[chunk] = lines[chunk]!.replace(/^"(....)/, '"!!!!');
    await refused(bad64, UsageError, new RegExp(`line ${chunk + 1}: a chunk of package [-0-9a-f]{36}'s zip is not a base64 string`));
    const flipped = [...lines];
    flipped[chunk] = lines[chunk]!.replace(/^"(.)/, (_m, a: string) => `"${a === 'A' ? 'B' : 'A'}`);
    await refused(flipped, UsageError, /zip is not the one its record describes/);
    const vimRow = rowIndexes(lines, 'vims')[0]!;
    await refused(
      changeRow(lines, vimRow, (r) => ({ ...r, settings: { not: 'text' } })),
      UsageError,
      new RegExp(`line 4: vims "${VIM}": settings is \\{"not":"text"\\}, not a string, a number or null`),
    );
    await refused(
      changeRow(lines, vimRow, (r) => ({ ...r, type: 'aws' })),
      UsageError,
      new RegExp(`line 4: vims "${VIM}": refused by the store: .*check constraint`, 'i'),
    );
    // --merge into a store whose own VIM has the name: a conflict with this store (exit 4), named; nothing written.
    const target = await open();
    try {
      await target.db
        .prepare(
          `INSERT INTO vims (id, name, type, is_default, auth_url, auth_method, verify_tls, status, created_at, updated_at) VALUES ('${VIM2}', 'edge', 'kubernetes', 0, 'https://h', 'bearer-token', 1, 'REACHABLE', 't0', 't0')`,
        )
        .run();
      const err = await load(target, lines, { merge: true }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConflictError);
      expect((err as Error).message).toMatch(new RegExp(`line 4: vims "${VIM}": this store has a row that holds the same value \\(UNIQUE constraint failed`));
      expect(((await rows(target, 'vims')) as { id: string }[]).map((v) => v.id)).toEqual([VIM2]);
      expect(await rows(target, 'vnf_packages')).toEqual([]);
      expect(await rows(target, 'package_contents')).toEqual([]);
    } finally {
      await target.close();
    }
  });
});

describe.each(STORE_BACKENDS)('the store-import hostile corpus through the command line on %s', (name) => {
  const backend = useStoreBackend(name);
  const root = mkdtempSync(join(tmpdir(), 'vnfm-import-hostile-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const KEY = generateFernetKey();
  const userHome = join(root, 'user');
  mkdirSync(userHome);
  const victim = plantVictim(root);

  async function run(argv: string[], home: string, url: string | undefined) {
    const out = new PassThrough();
    const err = new PassThrough();
    let stdout = '';
    let stderr = '';
    out.on('data', (d: Buffer) => (stdout += d.toString()));
    err.on('data', (d: Buffer) => (stderr += d.toString()));
    const env: Record<string, string> = { VNFM_HOME: home, HOME: userHome, VNFM_MASTER_KEY: KEY, ...(url ? { VNFM_DATABASE_URL: url } : {}) };
    const code = await main(argv, { env, cwd: root, streams: { stdin: new PassThrough(), stdout: out, stderr: err } });
    return { code, stdout, stderr };
  }
  /** A new VNFM_HOME under `root` (`root/h-…/home`, so that `../../../victim-…` from its packages/ is the victim), and its database. */
  async function target(): Promise<{ home: string; url: string | undefined }> {
    const home = join(mkdtempSync(join(root, 'h-')), 'home');
    const server = backend.server();
    return { home, url: server ? server.url(await server.createDatabase()) : undefined };
  }

  /** Every file and directory under `root` outside the VNFM_HOMEs, with its size and time: what a case must leave as it was. */
  function outside(): Map<string, string> {
    const seen = new Map<string, string>();
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir)) {
        const path = join(dir, entry);
        const rel = relative(root, path);
        if (/^h-\w+\/home$/.test(rel)) continue;
        const st = statSync(path);
        // A VNFM_HOME's parent (made by the test) changes as the home is made in it: its other entries count.
        if (!/^h-\w+$/.test(rel)) seen.set(path, `${st.size} ${st.mtimeMs} ${st.mode}`);
        if (st.isDirectory()) walk(path);
      }
    };
    walk(root);
    return seen;
  }
  const changedBetween = (a: Map<string, string>, b: Map<string, string>) => [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k));

  let base: { lines: string[]; pkgId: string; vimId: string } | undefined;
  /** The document of a store with the sample package and a default VIM, written by store-export. */
  async function document(): Promise<NonNullable<typeof base>> {
    if (base) return base;
    const src = await target();
    const config = join(root, 'kube.yaml');
    writeFileSync(config, 'auth_url: https://127.0.0.1:6443\ntype: kubernetes\nproject_name: default\nbearer_token: t\n');
    for (const argv of [
      ['vnfpkg-onboard', SAMPLE],
      ['vim-register', 'edge', '--no-check', '--config-file', config],
      ['store-export', join(root, 'doc.json')],
    ]) {
      const r = await run(argv, src.home, src.url);
      if (r.code !== 0) throw new Error(`${argv.join(' ')}: ${r.stderr}`);
    }
    const lines = readFileSync(join(root, 'doc.json'), 'utf8').split('\n');
    const pkgId = String(rowAt(lines[rowIndexes(lines, 'vnf_packages')[0]!]!)['id']);
    const vimId = String(rowAt(lines[rowIndexes(lines, 'vims')[0]!]!)['id']);
    base = { lines, pkgId, vimId };
    return base;
  }

  interface Case {
    name: string;
    /** The document, from store-export's lines. */
    doc: (d: NonNullable<typeof base>) => string[];
    flags?: string[];
    code: number;
    says: RegExp[];
  }
  const entryOf = (lines: string[]) => lines.findIndex((l) => l.includes('"chunks":['));
  const otherKey = createKeyring([generateFernetKey()], 'env').encrypt('{"bearer_token":"t"}');
  const cases: Case[] = [
    {
      name: 'a package id ../../../victim-… in its row, its zip and its references',
      doc: (d) => d.lines.map((l) => l.replaceAll(d.pkgId, victim.id)),
      code: 2,
      says: [/doc-\d+\.json line 7: vnf_packages "\.\.\/\.\.\/\.\.\/victim-\w+": id is not a UUID/, /hint: give the document as store-export wrote it/],
    },
    {
      name: "a package id ../../../victim-… in its zip's entry alone",
      doc: (d) => d.lines.map((l, i) => (i === entryOf(d.lines) ? l.replace(d.pkgId, victim.id) : l)),
      code: 2,
      says: [/the contents of package "\.\.\/\.\.\/\.\.\/victim-\w+": packageId is not a UUID/],
    },
    { name: 'a VIM id that is a path', doc: (d) => d.lines.map((l) => l.replaceAll(d.vimId, '../../etc')), code: 2, says: [/vims "\.\.\/\.\.\/etc": id is not a UUID/] },
    {
      name: 'a second VIM sealed under another key',
      doc: (d) =>
        withRow(d.lines, 'vims', {
          ...rowAt(d.lines[rowIndexes(d.lines, 'vims')[0]!]!),
          id: VIM2,
          name: 'edge-2',
          is_default: 0,
          secrets_token: otherKey.token,
          secrets_key_id: otherKey.keyId,
        }),
      code: 5,
      says: [
        new RegExp(
          `the master key here does not open the secrets in .*doc-\\d+\\.json: line 4: vims "${VIM2}": secrets_token is sealed under key ${otherKey.keyId}; nothing was imported`,
        ),
      ],
    },
    {
      name: "a package row whose checksum_hash is not its zip's",
      doc: (d) => changeRow(d.lines, rowIndexes(d.lines, 'vnf_packages')[0]!, (r) => ({ ...r, checksum_hash: 'ab'.repeat(32) })),
      code: 2,
      says: [/line \d+: package [-0-9a-f]{36}'s zip \(SHA-256 [0-9a-f]{64}, \d+ bytes\) is not the one its record describes/, /hint: export the store again/],
    },
    {
      name: "a package row whose size_bytes is not its zip's",
      doc: (d) => changeRow(d.lines, rowIndexes(d.lines, 'vnf_packages')[0]!, (r) => ({ ...r, size_bytes: 1 })),
      code: 2,
      says: [/is not the one its record describes .*size_bytes 1\)/],
    },
    {
      name: 'a 3 MiB line past --max-line-size 1MiB',
      doc: (d) => changeRow(d.lines, rowIndexes(d.lines, 'vims')[0]!, (r) => ({ ...r, description: 'd'.repeat(3 * MiB) })),
      flags: ['--max-line-size', '1MiB'],
      code: 2,
      says: [/line 4: the line is longer than the limit of 1 MiB/, /hint: .*--max-line-size/],
    },
    {
      name: 'a document of one 3 MiB line without a newline',
      doc: () => ['x'.repeat(3 * MiB)],
      flags: ['--max-line-size', '2MiB'],
      code: 2,
      says: [/line 1: the line is longer than the limit of 2 MiB/],
    },
    { name: 'more rows than --max-records', doc: (d) => d.lines, flags: ['--max-records', '1'], code: 2, says: [/line \d+: more than 1 rows, the limit/, /--max-records/] },
    {
      name: 'a chunk of 5 MiB',
      doc: (d) => {
        const out = [...d.lines];
        const i = chunkIndexes(d.lines)[0]!;
        out[i] = `"${Buffer.alloc(5 * MiB, 7).toString('base64')}"${d.lines[i]!.endsWith(',') ? ',' : ''}`;
        return out;
      },
      code: 2,
      says: [/a chunk of package [-0-9a-f]{36}'s zip is over 4 MiB/],
    },
    {
      name: 'a VIM id twice (rows that differ)',
      doc: (d) => withRow(d.lines, 'vims', { ...rowAt(d.lines[rowIndexes(d.lines, 'vims')[0]!]!), name: 'other', is_default: 0 }),
      code: 2,
      says: [/line 5: vims "[-0-9a-f]{36}" a second time \(first on line 4\)/],
    },
    {
      name: 'a VIM id twice, with --merge',
      doc: (d) => withRow(d.lines, 'vims', { ...rowAt(d.lines[rowIndexes(d.lines, 'vims')[0]!]!), name: 'other', is_default: 0 }),
      flags: ['--merge'],
      code: 2,
      says: [/vims "[-0-9a-f]{36}" a second time/],
    },
    {
      name: 'the table vims twice',
      doc: (d) => {
        const start = d.lines.indexOf('"vims":[');
        const end = rowIndexes(d.lines, 'vims').at(-1)! + 1;
        return [...d.lines.slice(0, end + 1), ...d.lines.slice(start, end + 1), ...d.lines.slice(end + 1)];
      },
      code: 2,
      says: [/the table vims a second time/],
    },
    {
      name: 'two default VIMs',
      doc: (d) => withRow(d.lines, 'vims', { ...rowAt(d.lines[rowIndexes(d.lines, 'vims')[0]!]!), id: VIM2, name: 'edge-2' }),
      code: 2,
      says: [/line 5: vims "[-0-9a-f]{36}": is_default = 1: a second default VIM \(line 4 is one\)/, /hint: keep it on one row of vims and unset it on the other/],
    },
    {
      name: 'two VIMs of one name',
      doc: (d) => withRow(d.lines, 'vims', { ...rowAt(d.lines[rowIndexes(d.lines, 'vims')[0]!]!), id: VIM2, is_default: 0 }),
      code: 2,
      says: [/line 5: vims "[-0-9a-f]{36}": name "edge", as line 4 has; the store keeps it unique/],
    },
    {
      name: 'bad base64 in a chunk',
      doc: (d) => {
        const out = [...d.lines];
        const i = chunkIndexes(d.lines)[0]!;
        out[i] = d.lines[i]!.replace(/^"(....)/, '"!@#$');
        return out;
      },
      code: 2,
      says: [/a chunk of package [-0-9a-f]{36}'s zip is not a base64 string/],
    },
    {
      name: "a chunk's bytes changed (the zip's SHA-256 is not its record's)",
      doc: (d) => {
        const out = [...d.lines];
        const i = chunkIndexes(d.lines)[0]!;
        out[i] = d.lines[i]!.replace(/^"(.)/, (_m, a: string) => `"${a === 'A' ? 'B' : 'A'}`);
        return out;
      },
      code: 2,
      says: [/zip is not the one its record describes \(the chunks from line \d+/],
    },
    {
      name: "a zip's entry with a negative size",
      doc: (d) => d.lines.map((l, i) => (i === entryOf(d.lines) ? l.replace(/"sizeBytes":\d+/, '"sizeBytes":-1') : l)),
      code: 2,
      says: [/sizeBytes -1 is not a size/],
    },
    {
      name: 'the zip of a package the document has no record of',
      doc: (d) => d.lines.map((l, i) => (i === entryOf(d.lines) ? l.replace(d.pkgId, VIM2) : l)),
      code: 2,
      says: [new RegExp(`the contents of package ${VIM2}, which the document has no record of`)],
    },
    {
      name: 'a VIM whose settings are an object, not text',
      doc: (d) => changeRow(d.lines, rowIndexes(d.lines, 'vims')[0]!, (r) => ({ ...r, settings: { a: 1 } })),
      code: 2,
      says: [/vims "[-0-9a-f]{36}": settings is \{"a":1\}, not a string, a number or null/],
    },
    {
      name: 'a VIM of a type the store does not take',
      doc: (d) => changeRow(d.lines, rowIndexes(d.lines, 'vims')[0]!, (r) => ({ ...r, type: 'aws' })),
      code: 2,
      says: [/line 4: vims "[-0-9a-f]{36}": refused by the store: .*check constraint/i],
    },
  ];

  /** What each case did, for the figures. */
  const seen: Array<{ name: string; code: number; crashed: boolean; outside: number }> = [];

  it.each(cases)(
    '$name: refused, saying what and where; nothing written, nothing outside VNFM_HOME touched',
    async ({ name: caseName, doc, flags, code, says }) => {
      const file = join(root, `doc-${seen.length}.json`);
      writeFileSync(file, doc(await document()).join('\n'));
      const t = await target();
      const before = outside();
      const r = await run(['store-import', file, ...(flags ?? [])], t.home, t.url);
      const touched = changedBetween(before, outside());
      seen.push({ name: caseName, code: r.code, crashed: /unexpected failure|RangeError|\n\s+at /.test(r.stderr), outside: touched.length });
      expect(r.stderr).not.toMatch(/unexpected failure|RangeError/);
      expect(r.code).toBe(code);
      for (const re of says) expect(r.stderr).toMatch(re);
      expect(touched).toEqual([]);
      expect(victim.intact()).toBe(true);
      // Nothing of the document is in the store (all or nothing).
      const store = await connectStore(t.home, { databaseUrl: t.url });
      try {
        for (const table of ['vims', 'vnf_packages', 'package_contents', 'package_content_chunks'])
          expect(await store.db.prepare(`SELECT * FROM ${table}`).all(), table).toEqual([]);
      } finally {
        await store.close();
      }
      expect(existsSync(join(t.home, 'packages')) ? readdirSync(join(t.home, 'packages')) : []).toEqual([]);
      expect(Math.max(...r.stderr.split('\n').map((l) => l.length))).toBeLessThan(2500);
    },
    60_000,
  );

  it('vnfpkg-delete and vnfpkg-download of a record another client wrote with a path for its id: refused, the directory survives', async () => {
    const t = await target();
    expect((await run(['vnfpkg-onboard', SAMPLE], t.home, t.url)).code).toBe(0);
    const store = await connectStore(t.home, { databaseUrl: t.url });
    try {
      await renamePackage(store, (await store.packages.ids())[0]!, victim.id);
    } finally {
      await store.close();
    }
    const before = outside();
    for (const argv of [
      ['vnfpkg-download', victim.id, '--file', join(t.home, 'out.zip')],
      ['vnfpkg-delete', victim.id, '--yes'],
    ]) {
      const r = await run(argv, t.home, t.url);
      seen.push({ name: argv[0]!, code: r.code, crashed: /unexpected failure/.test(r.stderr), outside: changedBetween(before, outside()).length });
      expect(r.stderr).not.toMatch(/unexpected failure/);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/package id "\.\.\/\.\.\/\.\.\/victim-\w+" is not a UUID: refusing to make a path of it/);
    }
    expect(changedBetween(before, outside())).toEqual([]);
    expect(victim.intact()).toBe(true);
  });

  afterAll(() => {
    const by = (c: number) => seen.filter((s) => s.code === c).length;
    console.info(
      `store-import hostile corpus on ${name}: ${seen.length} cases, ${by(2)} refused with exit 2, ${by(5)} with exit 5, ${by(1)} with exit 1 (records not vnfm's), ` +
        `${seen.filter((s) => s.crashed).length} crashes, ${seen.reduce((n, s) => n + s.outside, 0)} files touched outside VNFM_HOME`,
    );
  });
});

describe('an onboarding on PostgreSQL stopped by a signal', () => {
  const backend = useStoreBackend('postgres');

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s: the chunks it wrote are removed before it ends, not an hour later',
    async (signal) => {
      const server = backend.server()!;
      const database = await server.createDatabase();
      const home = tempHome();
      const url = server.url(database);
      // The schema first (a client opens it).
      await (await connectStore(home, { databaseUrl: url })).close();
      const sql = () => new pg.Client({ host: server.dir, port: server.port, user: server.user, password: server.password, database });
      const locker = sql();
      const watcher = sql();
      await Promise.all([locker.connect(), watcher.connect()]);
      try {
        // Holds the chunks' table: the upload starts, then waits on its first chunk.
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE package_content_chunks IN EXCLUSIVE MODE');
        const child = spawn(process.execPath, [BIN, 'vnfpkg-onboard', SAMPLE], {
          env: { PATH: process.env['PATH'], HOME: home, VNFM_HOME: home, VNFM_DATABASE_URL: url, VNFM_MASTER_KEY: generateFernetKey() },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) => child.on('close', (code, sig) => ok({ code, signal: sig })));
        const waiting = async () =>
          Number(
            (await watcher.query("SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO package_content_chunks%'")).rows[0].n,
          ) > 0;
        for (let i = 0; !(await waiting()); i++) {
          if (child.exitCode !== null || i > 600) throw new Error(`the onboarding never reached its first chunk: ${stderr}`);
          await new Promise((r) => setTimeout(r, 50));
        }
        expect(Number((await watcher.query('SELECT count(*) AS n FROM package_contents')).rows[0].n)).toBe(1);
        child.kill(signal);
        await locker.query('COMMIT');
        const end = await ended;
        expect(end.signal === signal || end.code === (signal === 'SIGTERM' ? 143 : 130), `${JSON.stringify(end)} ${stderr}`).toBe(true);
        expect((await watcher.query('SELECT package_id FROM package_contents')).rows).toEqual([]);
        expect((await watcher.query('SELECT package_id FROM package_content_chunks')).rows).toEqual([]);
        expect((await watcher.query('SELECT id FROM vnf_packages')).rows).toEqual([]);
      } finally {
        await locker.query('ROLLBACK').catch(() => undefined);
        await Promise.all([locker.end(), watcher.end()]);
      }
    },
    60_000,
  );
});
