/**
 * Opens a package (a zip/CSAR file or an unpacked directory) as a read-only
 * `PackageFiles`, refusing whatever could escape the package root or blow
 * up on decompression.
 *
 * The zip reader is written here over positioned reads rather than taken
 * from a library: adm-zip reads whole archives into memory, and the checks
 * below (names, symlink modes, overlapping members, declared sizes) need the
 * raw central-directory fields anyway. Member contents are streamed, so
 * memory stays flat whatever the member size.
 *
 * Problems with single members are collected as findings on the returned
 * object (`OpenedPackage.findings`) and those members are left out of
 * `list()`, so validation can go on and report everything else. Problems
 * that make the whole container unreadable (not a zip, a corrupt central
 * directory, too many members, too many bytes in all) throw a
 * `PackageError`. Problems only visible while inflating (bytes beyond the
 * declared size, CRC mismatch, corrupt deflate data) make the member stream
 * fail with a `PackageError`.
 */
import { constants } from 'node:fs';
import { lstat, open, readdir, readlink, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { Readable, Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import { createInflateRaw, crc32 } from 'node:zlib';
import type { Finding, PackageFiles } from '../model/package-files.js';
import { PackageError } from './package-error.js';

/** Bounds that keep a hostile package from exhausting memory, disk or time. */
export interface PackageLimits {
  /** Most members (files and directories) a package may hold. */
  maxMembers: number;
  /** Largest uncompressed size of one member, in bytes. */
  maxMemberBytes: number;
  /** Largest uncompressed size of all members together, in bytes. */
  maxTotalBytes: number;
  /** Largest ratio of uncompressed to compressed bytes, for one member and for all members together... */
  maxRatio: number;
  /** ...once they inflate to more than this (small text files compress very well). */
  ratioFloorBytes: number;
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/**
 * Room for real packages (a VM image of a few GiB, a container image tarball,
 * thousands of chart files) while a bomb of many small, highly compressed
 * members is refused before anything is inflated: besides each member, the
 * package as a whole may not inflate more than `maxRatio` times its
 * compressed bytes once it passes `ratioFloorBytes`.
 */
export const DEFAULT_LIMITS: Readonly<PackageLimits> = Object.freeze({
  maxMembers: 10_000,
  maxMemberBytes: 64 * GiB,
  maxTotalBytes: 8 * GiB,
  maxRatio: 200,
  ratioFloorBytes: 16 * MiB,
});

/** The command-line flag that raises each limit, named in the hints of refusals. */
export const LIMIT_FLAGS = {
  maxMembers: '--max-members',
  maxTotalBytes: '--max-unpacked-size',
  maxRatio: '--max-ratio',
} as const;

/** `5368709120` → `5 GiB`, `1536` → `1.5 KiB`: sizes in messages. */
export function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  if (i === 0) return `${n} bytes`;
  return `${Number.isInteger(v) ? v : v.toFixed(1)} ${units[i]}`;
}

/** A flag value at least `n` bytes, in whole units: `5033164800` → `5GiB`. */
function sizeAtLeast(n: number): string {
  const unit = formatBytes(n).split(' ')[1]!;
  const power = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'].indexOf(unit);
  return power === 0 ? String(n) : `${Math.ceil(n / 1024 ** power)}${unit}`;
}

/** Default bound of `readText`: descriptors and metadata are small. */
export const DEFAULT_TEXT_BYTES = 4 * MiB;

/** `PackageFiles` plus what the reader found while opening it. */
export interface OpenedPackage extends PackageFiles {
  /** Findings about members the reader refused (they are not in `list()`). */
  readonly findings: readonly Finding[];
  readonly kind: 'zip' | 'directory';
  readonly limits: Readonly<PackageLimits>;
}

/** The findings a package's reader gathered while opening it, if it kept any. */
export function openFindings(files: PackageFiles): Finding[] {
  const f = (files as Partial<OpenedPackage>).findings;
  return Array.isArray(f) ? [...f] : [];
}

export async function openPackage(path: string, limits: Partial<PackageLimits> = {}): Promise<OpenedPackage> {
  const lim = { ...DEFAULT_LIMITS, ...limits };
  let st;
  try {
    st = await stat(path);
  } catch (err) {
    throw new PackageError({
      severity: 'error',
      code: 'package-not-found',
      file: path,
      message: `cannot open package ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      hint: 'give the path of a .zip/.csar file or of an unpacked package directory',
    });
  }
  if (st.isDirectory()) return openDirectory(path, lim);
  if (st.isFile()) return openZip(path, st.size, lim);
  throw new PackageError({
    severity: 'error',
    code: 'not-a-zip',
    file: path,
    message: `${path} is neither a regular file nor a directory`,
    hint: 'give the path of a .zip/.csar file or of an unpacked package directory',
  });
}

// ---------------------------------------------------------------------------
// Member names

interface NameCheck {
  path?: string;
  isDir: boolean;
  finding?: Omit<Finding, 'file'>;
  backslash: boolean;
}

const SLIP_HINT = 'rebuild the package with paths relative to its root (vnfm vnfpkg-build does this)';

/** Validates and normalises a member name; every escape is a `zip-slip` finding. */
export function checkMemberName(raw: string): NameCheck {
  const slip = (why: string): NameCheck => ({
    isDir: false,
    backslash: false,
    finding: { severity: 'error', code: 'zip-slip', message: `member name ${JSON.stringify(raw)} ${why}`, hint: SLIP_HINT },
  });
  if (raw.includes('\0')) return slip('contains a NUL byte');
  const backslash = raw.includes('\\');
  const name = raw.replace(/\\/g, '/');
  if (name.startsWith('/')) return slip('is an absolute path');
  if (/^[A-Za-z]:/.test(name)) return slip('starts with a drive letter');
  const segments = name.split('/');
  if (segments.includes('..')) return slip("has a '..' segment, which could land outside the package root");
  const isDir = name.endsWith('/');
  const kept = segments.filter((s) => s !== '' && s !== '.');
  if (kept.length === 0) {
    if (isDir) return { isDir, backslash };
    return {
      isDir,
      backslash,
      finding: { severity: 'error', code: 'bad-name', message: `member name ${JSON.stringify(raw)} is empty`, hint: SLIP_HINT },
    };
  }
  return { path: kept.join('/'), isDir, backslash };
}

// ---------------------------------------------------------------------------
// Zip

interface ZipEntry {
  path: string;
  rawName: Buffer;
  method: number;
  flags: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
  /** Where the next member (or the central directory) starts: this member's data must end before it. */
  limit: number;
}

interface CdRecord extends Omit<ZipEntry, 'path' | 'limit'> {
  name: string;
  madeBy: number;
  externalAttrs: number;
}

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_EOCD = 0x06054b50;
const SIG_EOCD64 = 0x06064b50;
const SIG_LOCATOR64 = 0x07064b50;
const MAX_CD_BYTES = 256 * MiB;

const utf8 = new TextDecoder('utf-8', { fatal: true });

async function readAt(fh: FileHandle, pos: number, len: number): Promise<Buffer> {
  const buf = Buffer.alloc(len);
  let done = 0;
  while (done < len) {
    const { bytesRead } = await fh.read(buf, done, len - done, pos + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done === len ? buf : buf.subarray(0, done);
}

function readU64(buf: Buffer, off: number): number {
  const v = buf.readBigUInt64LE(off);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError('64-bit field too large');
  return Number(v);
}

async function openZip(origin: string, fileSize: number, lim: PackageLimits): Promise<OpenedPackage> {
  const fh = await open(origin, 'r');
  try {
    return await readZip(origin, fh, fileSize, lim);
  } catch (err) {
    await fh.close();
    throw err;
  }
}

async function readZip(origin: string, fh: FileHandle, fileSize: number, lim: PackageLimits): Promise<OpenedPackage> {
  const fatal = (code: string, message: string, hint?: string): PackageError =>
    new PackageError({ severity: 'error', code, file: origin, message: `${origin}: ${message}`, hint });
  const corrupt = (what: string): PackageError =>
    fatal('zip-corrupt', what, 'the file is damaged or truncated: download or build it again');

  // End of central directory: 22 bytes plus a comment of up to 64 KiB.
  const tailLen = Math.min(fileSize, 22 + 0xffff + 20);
  const tailStart = fileSize - tailLen;
  const tail = await readAt(fh, tailStart, tailLen);
  let eocd = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === SIG_EOCD && i + 22 + tail.readUInt16LE(i + 20) <= tail.length) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) {
    const head = await readAt(fh, 0, 4);
    if (head.length === 4 && head.readUInt32LE(0) === SIG_LOCAL) {
      throw corrupt('the end of the central directory is missing (truncated zip?)');
    }
    throw fatal('not-a-zip', 'is not a zip file', 'a CSAR is a zip: build one with vnfm vnfpkg-build DIR -o FILE');
  }
  const eocdPos = tailStart + eocd;
  const disk = tail.readUInt16LE(eocd + 4);
  const cdDisk = tail.readUInt16LE(eocd + 6);
  let entryCount = tail.readUInt16LE(eocd + 10);
  let cdSize = tail.readUInt32LE(eocd + 12);
  let cdOffset = tail.readUInt32LE(eocd + 16);
  let cdEndLimit = eocdPos;

  // ZIP64: a locator right before the EOCD points at the ZIP64 EOCD record.
  if (eocd >= 20 && tail.readUInt32LE(eocd - 20) === SIG_LOCATOR64) {
    const z64Pos = readU64(tail, eocd - 20 + 8);
    if (tail.readUInt32LE(eocd - 20 + 16) > 1) {
      throw fatal('zip-multi-disk', 'is a multi-volume zip', 'join the volumes into one zip file');
    }
    const rec = await readAt(fh, z64Pos, 56);
    if (rec.length < 56 || rec.readUInt32LE(0) !== SIG_EOCD64) throw corrupt('the ZIP64 end of central directory record is missing');
    if (rec.readUInt32LE(16) !== 0 || rec.readUInt32LE(20) !== 0) {
      throw fatal('zip-multi-disk', 'is a multi-volume zip', 'join the volumes into one zip file');
    }
    entryCount = readU64(rec, 32);
    cdSize = readU64(rec, 40);
    cdOffset = readU64(rec, 48);
    cdEndLimit = z64Pos;
  } else if ((disk !== 0 && disk !== 0xffff) || (cdDisk !== 0 && cdDisk !== 0xffff)) {
    throw fatal('zip-multi-disk', 'is a multi-volume zip', 'join the volumes into one zip file');
  }

  if (entryCount > lim.maxMembers) {
    throw fatal(
      'too-many-members',
      `holds ${entryCount} members, more than the limit of ${lim.maxMembers}`,
      `split the package, or raise the limit if it is genuine: ${LIMIT_FLAGS.maxMembers} ${entryCount}`,
    );
  }
  if (cdOffset + cdSize > cdEndLimit || cdSize > MAX_CD_BYTES) {
    throw corrupt('the central directory lies outside the file (truncated zip?)');
  }
  const cd = await readAt(fh, cdOffset, cdSize);
  if (cd.length !== cdSize) throw corrupt('the central directory is truncated');

  const records: CdRecord[] = [];
  let p = 0;
  for (let i = 0; i < entryCount; i++) {
    if (p + 46 > cd.length || cd.readUInt32LE(p) !== SIG_CENTRAL) {
      throw corrupt(`central directory record ${i + 1} of ${entryCount} is missing or damaged`);
    }
    const nameLen = cd.readUInt16LE(p + 28);
    const extraLen = cd.readUInt16LE(p + 30);
    const commentLen = cd.readUInt16LE(p + 32);
    if (p + 46 + nameLen + extraLen + commentLen > cd.length) {
      throw corrupt(`central directory record ${i + 1} runs past the end of the directory`);
    }
    const rawName = cd.subarray(p + 46, p + 46 + nameLen);
    const extra = cd.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen);
    let compressedSize = cd.readUInt32LE(p + 20);
    let size = cd.readUInt32LE(p + 24);
    let localOffset = cd.readUInt32LE(p + 42);
    const diskStart = cd.readUInt16LE(p + 34);
    // The ZIP64 extra field holds, in this order, only the fields whose 32/16-bit value is saturated.
    if (size === 0xffffffff || compressedSize === 0xffffffff || localOffset === 0xffffffff) {
      let x = 0;
      let z64: Buffer | undefined;
      while (x + 4 <= extra.length) {
        const id = extra.readUInt16LE(x);
        const len = extra.readUInt16LE(x + 2);
        if (id === 0x0001) z64 = extra.subarray(x + 4, x + 4 + len);
        x += 4 + len;
      }
      let q = 0;
      const next = (): number => {
        if (!z64 || q + 8 > z64.length) throw corrupt(`member ${i + 1} needs ZIP64 sizes but has no ZIP64 extra field`);
        const v = readU64(z64, q);
        q += 8;
        return v;
      };
      if (size === 0xffffffff) size = next();
      if (compressedSize === 0xffffffff) compressedSize = next();
      if (localOffset === 0xffffffff) localOffset = next();
    }
    let name: string;
    try {
      name = utf8.decode(rawName);
    } catch {
      // Neither UTF-8 nor flagged otherwise: show it byte for byte rather than guess a code page.
      name = rawName.toString('latin1');
    }
    records.push({
      name,
      rawName,
      madeBy: cd.readUInt16LE(p + 4),
      flags: cd.readUInt16LE(p + 8),
      method: cd.readUInt16LE(p + 10),
      crc: cd.readUInt32LE(p + 16),
      compressedSize,
      size,
      localOffset,
      externalAttrs: cd.readUInt32LE(p + 38),
    });
    if (diskStart !== 0 && diskStart !== 0xffff) {
      throw fatal('zip-multi-disk', 'is a multi-volume zip', 'join the volumes into one zip file');
    }
    p += 46 + nameLen + extraLen + commentLen;
  }

  // Each member's data must end before the next member starts: overlapping
  // members are how the densest zip bombs reuse one compressed stream.
  const byOffset = [...records].sort((a, b) => a.localOffset - b.localOffset);
  const limitOf = new Map<CdRecord, number>();
  byOffset.forEach((r, i) => limitOf.set(r, i + 1 < byOffset.length ? byOffset[i + 1]!.localOffset : cdOffset));

  const findings: Finding[] = [];
  const entries = new Map<string, ZipEntry>();
  const seenLower = new Map<string, string>();
  const duplicates = new Set<string>();
  const dirs = new Set<string>();
  let total = 0;
  let compressedTotal = 0;
  for (const r of records) {
    const file = r.name;
    const add = (f: Omit<Finding, 'file'>): void => {
      findings.push({ ...f, file });
    };
    const check = checkMemberName(r.name);
    if (check.finding) {
      add(check.finding);
      continue;
    }
    const unix = r.madeBy >> 8 === 3 || r.madeBy >> 8 === 19;
    const type = unix ? (r.externalAttrs >>> 16) & 0o170000 : 0;
    if (type === 0o120000) {
      add({
        severity: 'error',
        code: 'symlink',
        message: `member ${file} is a symbolic link; links could point outside the package`,
        hint: 'replace the link by the file it points to',
      });
      continue;
    }
    const isDir = check.isDir || type === 0o040000 || (!unix && (r.externalAttrs & 0x10) !== 0);
    if (type !== 0 && type !== 0o100000 && type !== 0o040000) {
      add({
        severity: 'error',
        code: 'special-file',
        message: `member ${file} is a device, FIFO or socket (mode ${((r.externalAttrs >>> 16) & 0xffff).toString(8)})`,
        hint: 'a package holds only regular files and directories',
      });
      continue;
    }
    if (check.backslash) {
      add({
        severity: 'warning',
        code: 'backslash-name',
        message: `member ${JSON.stringify(file)} uses backslashes as separators; read as ${check.path ?? ''}`,
        hint: "zip member names separate folders with '/': rebuild the package with vnfm vnfpkg-build",
      });
    }
    if (isDir) {
      if (check.path) dirs.add(check.path);
      continue;
    }
    const path = check.path!;
    if (r.flags & 0x41 || r.method === 99) {
      add({
        severity: 'error',
        code: 'zip-encrypted',
        message: `member ${path} is encrypted`,
        hint: 'build the package without encryption (SOL004 packages are signed, not encrypted)',
      });
      continue;
    }
    if (r.method !== 0 && r.method !== 8) {
      add({
        severity: 'error',
        code: 'zip-unsupported-method',
        message: `member ${path} uses compression method ${r.method}; only STORE (0) and DEFLATE (8) are read`,
        hint: 'rebuild the package with vnfm vnfpkg-build or a zip tool using deflate',
      });
      continue;
    }
    if (entries.has(path) || duplicates.has(path)) {
      duplicates.add(path);
      add({
        severity: 'error',
        code: 'duplicate-name',
        message: `member ${path} appears more than once in the zip`,
        hint: 'keep one copy of each file: extractors disagree on which one wins',
      });
      entries.delete(path);
      continue;
    }
    const lower = path.toLowerCase();
    const other = seenLower.get(lower);
    if (other !== undefined) {
      add({
        severity: 'warning',
        code: 'case-conflict',
        message: `members ${other} and ${path} differ only in letter case`,
        hint: 'rename one: they collide when the package is unpacked on a case-insensitive file system',
      });
    }
    seenLower.set(lower, path);
    if (r.size > lim.maxMemberBytes) {
      add({
        severity: 'error',
        code: 'member-too-large',
        message: `member ${path} declares ${r.size} bytes, more than the limit of ${lim.maxMemberBytes}`,
        hint: 'split the member, or raise the member size limit if it is genuine',
      });
      continue;
    }
    if (r.size > lim.ratioFloorBytes && r.size > lim.maxRatio * Math.max(r.compressedSize, 1)) {
      add({
        severity: 'error',
        code: 'zip-bomb',
        message: `member ${path} inflates ${r.compressedSize} bytes to ${r.size} (ratio above ${lim.maxRatio}): refused as a zip bomb`,
        hint: `store such members uncompressed, or raise the limit if it is genuine: ${LIMIT_FLAGS.maxRatio} ${Math.ceil(r.size / Math.max(r.compressedSize, 1))}`,
      });
      continue;
    }
    if (r.method === 0 && r.compressedSize !== r.size) {
      add({
        severity: 'error',
        code: 'zip-size-mismatch',
        message: `stored member ${path} declares ${r.size} bytes but occupies ${r.compressedSize}`,
        hint: 'the zip is damaged: build it again',
      });
      continue;
    }
    const limit = limitOf.get(r)!;
    if (r.localOffset + 30 + r.rawName.length + r.compressedSize > limit) {
      add({
        severity: 'error',
        code: 'zip-overlap',
        message: `member ${path} overlaps the next member or the central directory`,
        hint: 'overlapping members are a zip-bomb technique or damage: build the package again',
      });
      continue;
    }
    total += r.size;
    compressedTotal += r.compressedSize;
    entries.set(path, {
      path,
      rawName: r.rawName,
      method: r.method,
      flags: r.flags,
      crc: r.crc,
      compressedSize: r.compressedSize,
      size: r.size,
      localOffset: r.localOffset,
      limit,
    });
  }
  for (const path of entries.keys()) {
    // A file whose path is also used as a directory cannot be unpacked.
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      if (entries.has(prefix)) {
        findings.push({
          severity: 'error',
          code: 'path-conflict',
          file: prefix,
          message: `${prefix} is a file, but ${path} uses it as a folder`,
          hint: 'rename one of them',
        });
      }
    }
  }
  for (const d of dirs) {
    if (entries.has(d)) {
      findings.push({
        severity: 'error',
        code: 'path-conflict',
        file: d,
        message: `${d} is both a file and a folder in the zip`,
        hint: 'rename one of them',
      });
    }
  }
  // Declared sizes, checked before anything is inflated; MemberGuard holds
  // every member to its declared size, so these bound what reading can produce.
  if (total > lim.maxTotalBytes) {
    throw fatal(
      'package-too-large',
      `declares ${total} uncompressed bytes (${formatBytes(total)}), more than the limit of ${formatBytes(lim.maxTotalBytes)}`,
      `split the package, or raise the limit if it is genuine: ${LIMIT_FLAGS.maxTotalBytes} ${sizeAtLeast(total)}`,
    );
  }
  if (total > lim.ratioFloorBytes && total > lim.maxRatio * Math.max(compressedTotal, 1)) {
    const ratio = Math.round(total / Math.max(compressedTotal, 1));
    throw fatal(
      'zip-bomb',
      `inflates ${compressedTotal} compressed bytes to ${total} (${formatBytes(total)}, ratio ${ratio}), more than the ratio limit of ${lim.maxRatio}: refused as a zip bomb`,
      `a genuine package this compressible (a raw disk image of mostly zeros, say) can be let in: ${LIMIT_FLAGS.maxRatio} ${ratio + 1}`,
    );
  }
  return new ZipPackage(origin, fh, entries, findings, lim);
}

class ZipPackage implements OpenedPackage {
  readonly kind = 'zip' as const;
  private readonly sorted: string[];

  constructor(
    readonly origin: string,
    private readonly fh: FileHandle,
    private readonly entries: Map<string, ZipEntry>,
    readonly findings: readonly Finding[],
    readonly limits: Readonly<PackageLimits>,
  ) {
    this.sorted = [...entries.keys()].sort();
  }

  list(): string[] {
    return [...this.sorted];
  }
  has(path: string): boolean {
    return this.entries.has(path);
  }
  size(path: string): number {
    return this.entry(path).size;
  }
  readText(path: string, maxBytes = DEFAULT_TEXT_BYTES): Promise<string> {
    return readTextFrom(this, path, maxBytes);
  }

  async stream(path: string): Promise<Readable> {
    const e = this.entry(path);
    const bad = (code: string, message: string, hint = 'the zip is damaged: build or download it again'): PackageError =>
      new PackageError({ severity: 'error', code, file: path, message, hint });
    const header = await readAt(this.fh, e.localOffset, 30);
    if (header.length < 30 || header.readUInt32LE(0) !== SIG_LOCAL) {
      throw bad('zip-corrupt', `the local header of member ${path} is missing or damaged`);
    }
    const nameLen = header.readUInt16LE(26);
    const extraLen = header.readUInt16LE(28);
    const localName = await readAt(this.fh, e.localOffset + 30, nameLen);
    if (!localName.equals(e.rawName)) {
      throw bad(
        'zip-header-mismatch',
        `member ${path} is named ${JSON.stringify(localName.toString('latin1'))} in its local header`,
        'tools disagree on which name wins: build the package again',
      );
    }
    const start = e.localOffset + 30 + nameLen + extraLen;
    if (start + e.compressedSize > e.limit) {
      throw bad('zip-overlap', `member ${path} overlaps the next member or the central directory`);
    }
    const guard = new MemberGuard(e, path);
    if (e.compressedSize === 0) {
      guard.end();
      return guard;
    }
    const raw = rangeStream(this.fh, start, e.compressedSize);
    const wrap = (err: Error): PackageError =>
      err instanceof PackageError ? err : bad('zip-corrupt', `member ${path} cannot be inflated: ${err.message}`);
    raw.on('error', (err) => guard.destroy(wrap(err)));
    if (e.method === 8) {
      const inflate = createInflateRaw({ chunkSize: 256 * 1024 });
      inflate.on('error', (err) => guard.destroy(wrap(err)));
      raw.pipe(inflate).pipe(guard);
      guard.on('close', () => {
        raw.destroy();
        inflate.destroy();
      });
    } else {
      raw.pipe(guard);
      guard.on('close', () => raw.destroy());
    }
    return guard;
  }

  async close(): Promise<void> {
    await this.fh.close().catch(() => undefined);
  }

  private entry(path: string): ZipEntry {
    const e = this.entries.get(path);
    if (!e) throw missingMember(this.origin, path);
    return e;
  }
}

/**
 * Bytes `start..start+length` of a file shared by every member stream. Not
 * fs.createReadStream: destroying one of those closes the descriptor even
 * with autoClose off, and the handle outlives each member.
 */
function rangeStream(fh: FileHandle, start: number, length: number): Readable {
  let pos = start;
  let left = length;
  return new Readable({
    highWaterMark: 2 * MiB,
    read() {
      const n = Math.min(left, 2 * MiB);
      if (n === 0) {
        this.push(null);
        return;
      }
      const buf = Buffer.allocUnsafe(n);
      fh.read(buf, 0, n, pos).then(
        ({ bytesRead }) => {
          if (bytesRead === 0) {
            this.destroy(new Error('unexpected end of file'));
            return;
          }
          pos += bytesRead;
          left -= bytesRead;
          this.push(bytesRead === n ? buf : buf.subarray(0, bytesRead));
        },
        (err: Error) => this.destroy(err),
      );
    },
  });
}

function missingMember(origin: string, path: string): PackageError {
  return new PackageError({
    severity: 'error',
    code: 'member-missing',
    file: path,
    message: `${path} is not in package ${origin}`,
    hint: 'add the file to the package, or correct the reference to it',
  });
}

/**
 * Counts and checksums a member's bytes as they pass: the declared size is a
 * claim to check, not a fact, and a stream that goes past it is stopped there.
 */
class MemberGuard extends Transform {
  private count = 0;
  private crc = 0;

  constructor(
    private readonly e: { size: number; crc?: number },
    private readonly path: string,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.count += chunk.length;
    if (this.count > this.e.size) {
      cb(
        new PackageError({
          severity: 'error',
          code: 'zip-size-mismatch',
          file: this.path,
          message: `member ${this.path} inflates past its declared size of ${this.e.size} bytes: refused as a zip bomb or damage`,
          hint: 'build the package again with a correct zip tool',
        }),
      );
      return;
    }
    if (this.e.crc !== undefined) this.crc = crc32(chunk, this.crc);
    cb(null, chunk);
  }

  override _flush(cb: TransformCallback): void {
    if (this.count !== this.e.size) {
      cb(
        new PackageError({
          severity: 'error',
          code: 'zip-size-mismatch',
          file: this.path,
          message: `member ${this.path} has ${this.count} bytes, not the ${this.e.size} it declares`,
          hint: 'the package is damaged or changed while being read: build it again',
        }),
      );
      return;
    }
    if (this.e.crc !== undefined && this.crc >>> 0 !== this.e.crc >>> 0) {
      cb(
        new PackageError({
          severity: 'error',
          code: 'zip-crc-mismatch',
          file: this.path,
          message: `member ${this.path} fails its CRC-32 check`,
          hint: 'the zip is damaged: build or download it again',
        }),
      );
      return;
    }
    cb();
  }
}

async function readTextFrom(files: PackageFiles, path: string, maxBytes: number): Promise<string> {
  const size = files.size(path);
  if (size > maxBytes) {
    throw new PackageError({
      severity: 'error',
      code: 'text-too-large',
      file: path,
      message: `${path} is ${size} bytes, more than the ${maxBytes} read as text`,
      hint: 'descriptors and metadata files are small: check that the right file is referenced',
    });
  }
  const chunks: Buffer[] = [];
  for await (const chunk of await files.stream(path)) chunks.push(chunk as Buffer);
  const buf = Buffer.concat(chunks);
  let text: string;
  try {
    text = utf8.decode(buf);
  } catch {
    throw new PackageError({
      severity: 'error',
      code: 'not-utf8',
      file: path,
      message: `${path} is not UTF-8 text`,
      hint: 'save the file as UTF-8',
    });
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

// ---------------------------------------------------------------------------
// Directory

interface DirEntry {
  abs: string;
  size: number;
}

async function openDirectory(origin: string, lim: PackageLimits): Promise<OpenedPackage> {
  const root = resolve(origin);
  const entries = new Map<string, DirEntry>();
  const findings: Finding[] = [];
  let members = 0;
  let total = 0;

  const walk = async (dir: string): Promise<void> => {
    const names = (await readdir(dir)).sort();
    for (const name of names) {
      members++;
      if (members > lim.maxMembers) {
        throw new PackageError({
          severity: 'error',
          code: 'too-many-members',
          file: origin,
          message: `${origin} holds more than ${lim.maxMembers} files and folders`,
          hint: `split the package, or raise the limit if it is genuine: ${LIMIT_FLAGS.maxMembers} N`,
        });
      }
      const abs = join(dir, name);
      const rel = relative(root, abs).split(sep).join('/');
      const st = await lstat(abs);
      if (st.isSymbolicLink()) {
        const target = await readlink(abs).catch(() => '?');
        const resolved = resolve(dir, target);
        const outside = resolved !== root && !resolved.startsWith(root + sep);
        findings.push({
          severity: 'error',
          code: 'symlink',
          file: rel,
          message: `${rel} is a symbolic link to ${target}${outside ? ', outside the package' : ''}`,
          hint: 'replace the link by the file it points to: a package holds only regular files',
        });
      } else if (st.isDirectory()) {
        await walk(abs);
      } else if (st.isFile()) {
        if (st.size > lim.maxMemberBytes) {
          findings.push({
            severity: 'error',
            code: 'member-too-large',
            file: rel,
            message: `${rel} is ${st.size} bytes, more than the limit of ${lim.maxMemberBytes}`,
            hint: 'split the file, or raise the member size limit if it is genuine',
          });
          continue;
        }
        total += st.size;
        entries.set(rel, { abs, size: st.size });
      } else {
        findings.push({
          severity: 'error',
          code: 'special-file',
          file: rel,
          message: `${rel} is a device, FIFO or socket`,
          hint: 'a package holds only regular files and folders',
        });
      }
    }
  };
  await walk(root);
  if (total > lim.maxTotalBytes) {
    throw new PackageError({
      severity: 'error',
      code: 'package-too-large',
      file: origin,
      message: `${origin} holds ${total} bytes (${formatBytes(total)}), more than the limit of ${formatBytes(lim.maxTotalBytes)}`,
      hint: `split the package, or raise the limit if it is genuine: ${LIMIT_FLAGS.maxTotalBytes} ${sizeAtLeast(total)}`,
    });
  }
  return new DirectoryPackage(origin, entries, findings, lim);
}

class DirectoryPackage implements OpenedPackage {
  readonly kind = 'directory' as const;
  private readonly sorted: string[];

  constructor(
    readonly origin: string,
    private readonly entries: Map<string, DirEntry>,
    readonly findings: readonly Finding[],
    readonly limits: Readonly<PackageLimits>,
  ) {
    this.sorted = [...entries.keys()].sort();
  }

  list(): string[] {
    return [...this.sorted];
  }
  has(path: string): boolean {
    return this.entries.has(path);
  }
  size(path: string): number {
    return this.entry(path).size;
  }
  readText(path: string, maxBytes = DEFAULT_TEXT_BYTES): Promise<string> {
    return readTextFrom(this, path, maxBytes);
  }

  async stream(path: string): Promise<Readable> {
    const e = this.entry(path);
    // O_NOFOLLOW: a file swapped for a link after the walk is refused, not followed;
    // O_NONBLOCK and the fstat: one swapped for a FIFO is refused instead of blocking the read.
    const fd = await open(e.abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((err: NodeJS.ErrnoException) => {
      throw new PackageError({
        severity: 'error',
        code: err.code === 'ELOOP' ? 'symlink' : 'read-failed',
        file: path,
        message: `cannot read ${path}: ${err.code ?? err.message}`,
      });
    });
    if (!(await fd.stat()).isFile()) {
      await fd.close();
      throw new PackageError({
        severity: 'error',
        code: 'special-file',
        file: path,
        message: `${path} is no longer a regular file (a device, FIFO or socket took its place)`,
        hint: 'a package holds only regular files and folders',
      });
    }
    const raw = fd.createReadStream({ highWaterMark: MiB });
    const guard = new MemberGuard({ size: e.size }, path);
    raw.on('error', (err) => guard.destroy(err));
    raw.pipe(guard);
    guard.on('close', () => raw.destroy());
    return guard;
  }

  async close(): Promise<void> {}

  private entry(path: string): DirEntry {
    const e = this.entries.get(path);
    if (!e) throw missingMember(this.origin, path);
    return e;
  }
}
