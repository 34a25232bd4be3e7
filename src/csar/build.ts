/**
 * `vnfpkg-build`: turns an unpacked package tree into a CSAR, refreshing the
 * `Algorithm:`/`Hash:` lines of TOSCA.meta's file blocks and of the
 * manifest's `Source:` blocks from the files' bytes.
 *
 * The tree is left untouched: the updated TOSCA.meta and manifest are written
 * into the zip only, so building never edits what is under version control.
 *
 * The zip is reproducible: entries sorted, one fixed timestamp, permissions
 * reduced to 0644/0755, no extra fields beyond what ZIP64 needs, deflate at a
 * fixed level. The same tree gives the same bytes with the same Node.js (its
 * bundled zlib decides the deflate output). Contents are streamed; large and
 * already-compressed members are stored, not deflated. The zip is written to
 * a temporary file beside the target and renamed into place, so a failed
 * build leaves no half-written file.
 */
import { createHash, randomBytes } from 'node:crypto';
import { lstat, open, rename, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { createDeflateRaw, crc32 } from 'node:zlib';
import { UsageError } from '../errors.js';
import { type HashAlgorithm, algorithmLabel, hashMember, mapLimit, parseAlgorithm } from './hashes.js';
import { parseManifest } from './manifest.js';
import { detectEol, splitLines } from './meta-text.js';
import type { Finding } from '../model/package-files.js';
import { type OpenedPackage, openPackage } from './open-package.js';
import { PackageError } from './package-error.js';
import { TOSCA_META_PATH, parseToscaMeta } from './tosca-meta.js';

export interface BuildCsarOptions {
  /**
   * The timestamp of every entry, in seconds since the epoch (the command
   * passes SOURCE_DATE_EPOCH). Default 1980-01-01T00:00:00Z, the earliest a
   * zip can hold.
   */
  sourceDateEpoch?: number;
  /** Members at least this large are stored rather than deflated. Default 64 MiB. */
  storeAbove?: number;
}

export interface BuildCsarResult {
  entries: number;
  bytes: number;
  /** Warnings and notes about the tree (errors are thrown as a PackageError). */
  findings: Finding[];
}

const MiB = 1024 ** 2;
const DEFLATE_LEVEL = 9;
/** Extensions of formats that are compressed already: deflating them again wastes time. */
const STORED_EXTENSIONS = /\.(gz|tgz|bz2|xz|zst|lz4|zip|jar|war|csar|qcow2|img|iso|vmdk|vhd|vhdx|vdi|raw|png|jpe?g|gif|webp)$/i;

interface Block {
  path?: string;
  algorithm?: string;
  algorithmLine?: number;
  hashLine?: number;
  lastLine: number;
}

export async function buildCsar(dir: string, outFile: string, opts: BuildCsarOptions = {}): Promise<BuildCsarResult> {
  const files = await openPackage(dir);
  try {
    if (files.kind !== 'directory') {
      throw new UsageError(`${dir} is a file; vnfpkg-build takes the directory of an unpacked package`, {
        hint: 'give the folder that holds TOSCA-Metadata/TOSCA.meta',
      });
    }
    return await build(files, dir, outFile, opts);
  } finally {
    await files.close();
  }
}

async function build(files: OpenedPackage, dir: string, outFile: string, opts: BuildCsarOptions): Promise<BuildCsarResult> {
  const errors = (fs: readonly Finding[]): Finding[] => fs.filter((f) => f.severity === 'error');
  const notes: Finding[] = files.findings.filter((f) => f.severity !== 'error');
  if (errors(files.findings).length > 0) throw new PackageError(errors(files.findings));

  // Leave the output out of its own package when it is written inside the tree.
  const outRel = relative(resolve(dir), resolve(outFile));
  const inside = outRel !== '' && !outRel.startsWith(`..${sep}`) && outRel !== '..' && !isAbsolute(outRel);
  const excluded = inside ? outRel.split(sep).join('/') : undefined;
  const members = files.list().filter((p) => p !== excluded);

  if (!files.has(TOSCA_META_PATH)) {
    throw new PackageError({
      severity: 'error',
      code: 'tosca-meta-missing',
      file: TOSCA_META_PATH,
      message: `${dir} has no ${TOSCA_META_PATH}`,
      hint: 'create it with TOSCA-Meta-File-Version: 1.0, CSAR-Version: 1.1, Created-By and Entry-Definitions: <top VNFD>',
    });
  }
  const metaText = await files.readText(TOSCA_META_PATH);
  const { meta } = parseToscaMeta(metaText);
  const fatal: Finding[] = [];
  if (meta.entryDefinitions && !files.has(meta.entryDefinitions)) {
    fatal.push({
      severity: 'error',
      code: 'entry-definitions-missing',
      file: TOSCA_META_PATH,
      message: `Entry-Definitions names ${meta.entryDefinitions}, which is not in ${dir}`,
      hint: 'correct Entry-Definitions to the path of the top VNFD',
    });
  }
  const mfPath = meta.entryManifest && files.has(meta.entryManifest) ? meta.entryManifest : undefined;
  const mfText = mfPath ? await files.readText(mfPath) : undefined;
  const manifest = mfText !== undefined ? parseManifest(mfText, mfPath!).manifest : undefined;

  const metaBlocks: Block[] = meta.entries.filter((e) => e.path && files.has(e.path));
  const mfBlocks: Block[] = (manifest?.artifacts ?? []).filter((a) => a.path && files.has(a.path));
  const selfRef = metaBlocks.some((b) => b.path === TOSCA_META_PATH) || (mfPath !== undefined && mfBlocks.some((b) => b.path === mfPath));
  const metaNamesMf = mfPath !== undefined && metaBlocks.some((b) => b.path === mfPath);
  const mfNamesMeta = mfBlocks.some((b) => b.path === TOSCA_META_PATH);
  if (selfRef || (metaNamesMf && mfNamesMeta)) {
    fatal.push({
      severity: 'error',
      code: 'hash-cycle',
      file: selfRef ? TOSCA_META_PATH : mfPath,
      message: selfRef ? 'a metadata file lists its own hash, which cannot be computed' : 'TOSCA.meta and the manifest list each other, so neither hash can be computed',
      hint: 'remove the block that lists TOSCA.meta or the manifest itself',
    });
  }
  if (fatal.length > 0) throw new PackageError(fatal);

  // One pass over every listed member, feeding each algorithm it needs. A
  // block with an unknown algorithm is left as it is: the final parse reports it.
  const algOf = (b: Block): HashAlgorithm => (b.algorithm ? parseAlgorithm(b.algorithm) : undefined) ?? 'sha256';
  const needs = new Map<string, Set<HashAlgorithm>>();
  for (const b of [...metaBlocks, ...mfBlocks]) {
    if (b.path === TOSCA_META_PATH || b.path === mfPath) continue;
    if (b.algorithm && !parseAlgorithm(b.algorithm)) continue;
    const set = needs.get(b.path!) ?? new Set();
    set.add(algOf(b));
    needs.set(b.path!, set);
  }
  const digests = new Map<string, Map<HashAlgorithm, string>>();
  await mapLimit([...needs.entries()], 4, async ([path, algs]) => {
    digests.set(path, await hashMember(files, path, [...algs]));
  });
  const digestOf = (b: Block, rewritten: Map<string, Buffer>): string | undefined => {
    if (b.algorithm && !parseAlgorithm(b.algorithm)) return undefined;
    const own = rewritten.get(b.path!);
    if (own) return createHash(algOf(b)).update(own).digest('hex');
    return digests.get(b.path!)?.get(algOf(b));
  };

  const rewritten = new Map<string, Buffer>();
  const doManifest = (): void => {
    if (mfPath && mfText !== undefined) rewritten.set(mfPath, Buffer.from(fillHashes(mfText, mfBlocks, (b) => digestOf(b, rewritten), false)));
  };
  const doMeta = (): void => {
    rewritten.set(TOSCA_META_PATH, Buffer.from(fillHashes(metaText, metaBlocks, (b) => digestOf(b, rewritten), true)));
  };
  if (mfNamesMeta) {
    doMeta();
    doManifest();
  } else {
    doManifest();
    doMeta();
  }

  const final = checkRewritten(files, dir, meta.entryManifest, mfPath, rewritten);
  if (errors(final).length > 0) throw new PackageError(errors(final));
  notes.push(...final);

  const stamp = dosDateTime(opts.sourceDateEpoch);
  const plan = await planEntries(files, dir, members, rewritten, opts.storeAbove ?? 64 * MiB);
  const bytes = await writeZip(plan, outFile, stamp, files);
  return { entries: plan.length, bytes, findings: notes };
}

/** What goes into the zip must pass the same parsers a validator runs: the rewritten TOSCA.meta and manifest, read back. */
function checkRewritten(files: OpenedPackage, dir: string, entryManifest: string | undefined, mfPath: string | undefined, rewritten: Map<string, Buffer>): Finding[] {
  const finalMeta = parseToscaMeta(rewritten.get(TOSCA_META_PATH)!.toString('utf8'));
  const final: Finding[] = [...finalMeta.findings];
  for (const e of finalMeta.meta.entries) {
    if (e.path && !files.has(e.path)) {
      final.push({
        severity: 'error',
        code: 'listed-member-missing',
        file: TOSCA_META_PATH,
        line: e.line,
        message: `${TOSCA_META_PATH} lists ${e.name}, which is not in ${dir}`,
        hint: `add ${e.name}, or remove its block`,
      });
    }
  }
  if (entryManifest && !mfPath) {
    final.push({
      severity: 'error',
      code: 'manifest-missing',
      file: TOSCA_META_PATH,
      message: `ETSI-Entry-Manifest names ${entryManifest}, which is not in ${dir}`,
      hint: 'add the manifest, or remove the ETSI-Entry-Manifest line',
    });
  }
  if (mfPath) {
    const finalMf = parseManifest(rewritten.get(mfPath)!.toString('utf8'), mfPath);
    final.push(...finalMf.findings);
    for (const a of finalMf.manifest.artifacts) {
      if (a.path && !files.has(a.path)) {
        final.push({
          severity: 'error',
          code: 'listed-member-missing',
          file: mfPath,
          line: a.line,
          message: `${mfPath} lists ${a.source}, which is not in ${dir}`,
          hint: `add ${a.source}, or remove its block`,
        });
      }
    }
  }
  return final;
}

/** The zip's entries in name order: each member's mode, and whether it is stored rather than deflated. */
async function planEntries(files: OpenedPackage, dir: string, members: readonly string[], rewritten: Map<string, Buffer>, storeAbove: number): Promise<PlannedEntry[]> {
  const plan: PlannedEntry[] = [];
  for (const path of members) {
    const st = await lstat(join(dir, ...path.split('/')));
    const data = rewritten.get(path);
    plan.push({
      name: path,
      abs: join(dir, ...path.split('/')),
      data,
      size: data ? data.length : files.size(path),
      mode: st.mode & 0o100 ? 0o755 : 0o644,
      store: STORED_EXTENSIONS.test(path) || (data ? data.length : files.size(path)) >= storeAbove,
    });
  }
  plan.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return plan;
}

/**
 * Rewrites the `Hash:` line of each block (adding `Algorithm: SHA-256` and
 * `Hash:` where missing), keeping every other line and the file's line ending.
 */
function fillHashes(text: string, blocks: Block[], digest: (b: Block) => string | undefined, continuation: boolean): string {
  const eol = detectEol(text);
  const lines = splitLines(text);
  const endsWithEol = /\r\n$|\r$|\n$/.test(text);
  // Bottom-up, so earlier line numbers stay valid while lines are inserted.
  const sorted = [...blocks].sort((a, b) => b.lastLine - a.lastLine);
  for (const b of sorted) {
    const hex = digest(b);
    if (hex === undefined) continue;
    if (b.hashLine !== undefined) {
      let extra = 0;
      while (continuation && (lines[b.hashLine + extra] ?? '').startsWith(' ')) extra++;
      lines.splice(b.hashLine - 1, 1 + extra, `Hash: ${hex}`);
    } else if (b.algorithmLine !== undefined) {
      lines.splice(b.lastLine, 0, `Hash: ${hex}`);
    } else {
      const alg = algorithmLabel('sha256');
      lines.splice(b.lastLine, 0, `Algorithm: ${alg}`, `Hash: ${hex}`);
    }
  }
  return lines.join(eol) + (endsWithEol || lines.length > 0 ? eol : '');
}

// ---------------------------------------------------------------------------
// Zip writing

interface PlannedEntry {
  name: string;
  abs: string;
  /** Contents replaced in the zip (the refreshed TOSCA.meta and manifest). */
  data?: Buffer;
  size: number;
  mode: number;
  store: boolean;
}

interface Written {
  entry: PlannedEntry;
  nameBytes: Buffer;
  method: number;
  crc: number;
  compressedSize: number;
  offset: number;
}

const U32 = 0xffffffff;

function dosDateTime(epochSeconds: number | undefined): { date: number; time: number } {
  if (epochSeconds === undefined) return { date: (1 << 5) | 1, time: 0 };
  const d = new Date(epochSeconds * 1000);
  const year = d.getUTCFullYear();
  if (year < 1980) return { date: (1 << 5) | 1, time: 0 };
  if (year > 2107) return { date: (127 << 9) | (12 << 5) | 31, time: (23 << 11) | (59 << 5) | 29 };
  return {
    date: ((year - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate(),
    time: (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | (d.getUTCSeconds() >> 1),
  };
}

async function writeZip(plan: PlannedEntry[], outFile: string, stamp: { date: number; time: number }, files: OpenedPackage): Promise<number> {
  const tmp = join(dirname(resolve(outFile)), `.${basename(outFile)}.${randomBytes(6).toString('hex')}.tmp`);
  let fh: FileHandle;
  try {
    fh = await open(tmp, 'wx', 0o644);
  } catch (err) {
    throw new UsageError(`cannot write ${outFile}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, {
      hint: 'check that the output folder exists and is writable',
      cause: err,
    });
  }
  try {
    let pos = 0;
    const writeAt = async (buf: Buffer, at: number): Promise<void> => {
      let done = 0;
      while (done < buf.length) {
        const { bytesWritten } = await fh.write(buf, done, buf.length - done, at + done);
        done += bytesWritten;
      }
    };
    const put = async (buf: Buffer): Promise<void> => {
      await writeAt(buf, pos);
      pos += buf.length;
    };
    const written: Written[] = [];
    for (const entry of plan) {
      const nameBytes = Buffer.from(entry.name, 'utf8');
      const zip64 = entry.size >= U32;
      const offset = pos;
      await put(localHeader(nameBytes, 0, 0, 0, 0, zip64, stamp));
      const dataStart = pos;
      let result = await writeData(entry, files, entry.store || zip64 ? 0 : 8, put);
      if (result.method === 8 && result.compressedSize >= entry.size) {
        // Deflate did not help: store it instead, overwriting in place.
        pos = dataStart;
        result = await writeData(entry, files, 0, put);
        await fh.truncate(pos);
      }
      // Sizes and CRC are known only now: patch them in, rather than adding a data descriptor.
      await writeAt(localHeader(nameBytes, result.method, result.crc, result.compressedSize, entry.size, zip64, stamp), offset);
      written.push({ entry, nameBytes, method: result.method, crc: result.crc, compressedSize: result.compressedSize, offset });
    }
    const cdOffset = pos;
    for (const w of written) await put(centralHeader(w, stamp));
    const cdSize = pos - cdOffset;
    const needs64 = written.length >= 0xffff || cdOffset >= U32 || cdSize >= U32;
    if (needs64) {
      const eocd64Offset = pos;
      const rec = Buffer.alloc(56);
      rec.writeUInt32LE(0x06064b50, 0);
      rec.writeBigUInt64LE(44n, 4);
      rec.writeUInt16LE((3 << 8) | 45, 12);
      rec.writeUInt16LE(45, 14);
      rec.writeBigUInt64LE(BigInt(written.length), 24);
      rec.writeBigUInt64LE(BigInt(written.length), 32);
      rec.writeBigUInt64LE(BigInt(cdSize), 40);
      rec.writeBigUInt64LE(BigInt(cdOffset), 48);
      await put(rec);
      const loc = Buffer.alloc(20);
      loc.writeUInt32LE(0x07064b50, 0);
      loc.writeBigUInt64LE(BigInt(eocd64Offset), 8);
      loc.writeUInt32LE(1, 16);
      await put(loc);
    }
    const eocd = Buffer.alloc(22);
    eocd.writeUInt32LE(0x06054b50, 0);
    eocd.writeUInt16LE(Math.min(written.length, 0xffff), 8);
    eocd.writeUInt16LE(Math.min(written.length, 0xffff), 10);
    eocd.writeUInt32LE(Math.min(cdSize, U32), 12);
    eocd.writeUInt32LE(Math.min(cdOffset, U32), 16);
    await put(eocd);
    await fh.sync();
    await fh.close();
    await rename(tmp, outFile);
    return pos;
  } catch (err) {
    await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw err;
  }

  async function writeData(
    entry: PlannedEntry,
    pkg: OpenedPackage,
    method: number,
    put: (b: Buffer) => Promise<void>,
  ): Promise<{ method: number; crc: number; compressedSize: number }> {
    let crc = 0;
    let compressedSize = 0;
    const source = entry.data ? [entry.data] : await pkg.stream(entry.name);
    if (method === 0) {
      for await (const chunk of source) {
        crc = crc32(chunk as Buffer, crc);
        compressedSize += (chunk as Buffer).length;
        await put(chunk as Buffer);
      }
      return { method, crc: crc >>> 0, compressedSize };
    }
    const deflate = createDeflateRaw({ level: DEFLATE_LEVEL });
    const feeding = (async () => {
      try {
        for await (const chunk of source) {
          crc = crc32(chunk as Buffer, crc);
          if (!deflate.write(chunk)) await new Promise((r) => deflate.once('drain', r));
        }
        deflate.end();
      } catch (err) {
        deflate.destroy(err as Error);
      }
    })();
    for await (const out of deflate) {
      compressedSize += (out as Buffer).length;
      await put(out as Buffer);
    }
    await feeding;
    return { method, crc: crc >>> 0, compressedSize };
  }
}

function localHeader(name: Buffer, method: number, crc: number, compressedSize: number, size: number, zip64: boolean, stamp: { date: number; time: number }): Buffer {
  const extra = zip64 ? Buffer.alloc(20) : Buffer.alloc(0);
  if (zip64) {
    extra.writeUInt16LE(0x0001, 0);
    extra.writeUInt16LE(16, 2);
    extra.writeBigUInt64LE(BigInt(size), 4);
    extra.writeBigUInt64LE(BigInt(compressedSize), 12);
  }
  const h = Buffer.alloc(30);
  h.writeUInt32LE(0x04034b50, 0);
  h.writeUInt16LE(zip64 ? 45 : 20, 4);
  h.writeUInt16LE(isAscii(name) ? 0 : 0x0800, 6);
  h.writeUInt16LE(method, 8);
  h.writeUInt16LE(stamp.time, 10);
  h.writeUInt16LE(stamp.date, 12);
  h.writeUInt32LE(crc >>> 0, 14);
  h.writeUInt32LE(zip64 ? U32 : compressedSize, 18);
  h.writeUInt32LE(zip64 ? U32 : size, 22);
  h.writeUInt16LE(name.length, 26);
  h.writeUInt16LE(extra.length, 28);
  return Buffer.concat([h, name, extra]);
}

function centralHeader(w: Written, stamp: { date: number; time: number }): Buffer {
  const size = w.entry.size;
  const fields: bigint[] = [];
  if (size >= U32) fields.push(BigInt(size));
  if (w.compressedSize >= U32) fields.push(BigInt(w.compressedSize));
  if (w.offset >= U32) fields.push(BigInt(w.offset));
  const extra = Buffer.alloc(fields.length ? 4 + 8 * fields.length : 0);
  if (fields.length) {
    extra.writeUInt16LE(0x0001, 0);
    extra.writeUInt16LE(8 * fields.length, 2);
    fields.forEach((v, i) => extra.writeBigUInt64LE(v, 4 + 8 * i));
  }
  const version = fields.length || size >= U32 ? 45 : 20;
  const h = Buffer.alloc(46);
  h.writeUInt32LE(0x02014b50, 0);
  h.writeUInt16LE((3 << 8) | version, 4);
  h.writeUInt16LE(version, 6);
  h.writeUInt16LE(isAscii(w.nameBytes) ? 0 : 0x0800, 8);
  h.writeUInt16LE(w.method, 10);
  h.writeUInt16LE(stamp.time, 12);
  h.writeUInt16LE(stamp.date, 14);
  h.writeUInt32LE(w.crc >>> 0, 16);
  h.writeUInt32LE(Math.min(w.compressedSize, U32), 20);
  h.writeUInt32LE(Math.min(size, U32), 24);
  h.writeUInt16LE(w.nameBytes.length, 28);
  h.writeUInt16LE(extra.length, 30);
  h.writeUInt32LE(((0o100000 | w.entry.mode) << 16) >>> 0, 38);
  h.writeUInt32LE(Math.min(w.offset, U32), 42);
  return Buffer.concat([h, w.nameBytes, extra]);
}

function isAscii(b: Buffer): boolean {
  for (const c of b) if (c > 0x7f) return false;
  return true;
}
