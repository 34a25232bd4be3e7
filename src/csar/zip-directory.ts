/**
 * The zip's central directory read over positioned reads: the end record
 * (ZIP64 too), then one record per member with its raw name, sizes and
 * attributes. Nothing is trusted yet: zip-members.ts judges each record.
 */
import type { FileHandle } from 'node:fs/promises';
import { PackageError } from './package-error.js';
import { LIMIT_FLAGS, MiB, type PackageLimits } from './package-limits.js';
import { utf8 } from './package-reader.js';

/** A member the reader admitted: where its data lies and what it declares. */
export interface ZipEntry {
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

/** One central-directory record as written. */
export interface CdRecord extends Omit<ZipEntry, 'path' | 'limit'> {
  name: string;
  madeBy: number;
  externalAttrs: number;
}

export const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_EOCD = 0x06054b50;
const SIG_EOCD64 = 0x06064b50;
const SIG_LOCATOR64 = 0x07064b50;
const MAX_CD_BYTES = 256 * MiB;

export async function readAt(fh: FileHandle, pos: number, len: number): Promise<Buffer> {
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

/** The errors that make a whole zip unreadable, each naming the file. */
export function zipFaults(origin: string) {
  const fatal = (code: string, message: string, hint?: string): PackageError => new PackageError({ severity: 'error', code, file: origin, message: `${origin}: ${message}`, hint });
  const corrupt = (what: string): PackageError => fatal('zip-corrupt', what, 'the file is damaged or truncated: download or build it again');
  const multiDisk = (): PackageError => fatal('zip-multi-disk', 'is a multi-volume zip', 'join the volumes into one zip file');
  return { fatal, corrupt, multiDisk };
}
type Faults = ReturnType<typeof zipFaults>;

interface DirectoryLocation {
  entryCount: number;
  cdSize: number;
  cdOffset: number;
  /** Where the central directory must end: the (ZIP64) end record. */
  cdEndLimit: number;
}

/** Finds the end of central directory record (and its ZIP64 form) and where the directory lies. */
async function locateDirectory(fh: FileHandle, fileSize: number, faults: Faults): Promise<DirectoryLocation> {
  const { fatal, corrupt, multiDisk } = faults;
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
  const disk = tail.readUInt16LE(eocd + 4);
  const cdDisk = tail.readUInt16LE(eocd + 6);
  const found: DirectoryLocation = {
    entryCount: tail.readUInt16LE(eocd + 10),
    cdSize: tail.readUInt32LE(eocd + 12),
    cdOffset: tail.readUInt32LE(eocd + 16),
    cdEndLimit: tailStart + eocd,
  };

  // ZIP64: a locator right before the EOCD points at the ZIP64 EOCD record.
  if (eocd >= 20 && tail.readUInt32LE(eocd - 20) === SIG_LOCATOR64) {
    const z64Pos = readU64(tail, eocd - 20 + 8);
    if (tail.readUInt32LE(eocd - 20 + 16) > 1) throw multiDisk();
    const rec = await readAt(fh, z64Pos, 56);
    if (rec.length < 56 || rec.readUInt32LE(0) !== SIG_EOCD64) throw corrupt('the ZIP64 end of central directory record is missing');
    if (rec.readUInt32LE(16) !== 0 || rec.readUInt32LE(20) !== 0) throw multiDisk();
    return { entryCount: readU64(rec, 32), cdSize: readU64(rec, 40), cdOffset: readU64(rec, 48), cdEndLimit: z64Pos };
  }
  if ((disk !== 0 && disk !== 0xffff) || (cdDisk !== 0 && cdDisk !== 0xffff)) throw multiDisk();
  return found;
}

/** The records of the central directory, and where it starts (the end of the last member's data). */
export async function readCentralDirectory(origin: string, fh: FileHandle, fileSize: number, lim: PackageLimits): Promise<{ records: CdRecord[]; cdOffset: number }> {
  const faults = zipFaults(origin);
  const { entryCount, cdSize, cdOffset, cdEndLimit } = await locateDirectory(fh, fileSize, faults);
  if (entryCount > lim.maxMembers) {
    throw faults.fatal(
      'too-many-members',
      `holds ${entryCount} members, more than the limit of ${lim.maxMembers}`,
      `split the package, or raise the limit if it is genuine: ${LIMIT_FLAGS.maxMembers} ${entryCount}`,
    );
  }
  if (cdOffset + cdSize > cdEndLimit || cdSize > MAX_CD_BYTES) {
    throw faults.corrupt('the central directory lies outside the file (truncated zip?)');
  }
  const cd = await readAt(fh, cdOffset, cdSize);
  if (cd.length !== cdSize) throw faults.corrupt('the central directory is truncated');
  return { records: parseRecords(cd, entryCount, faults), cdOffset };
}

function parseRecords(cd: Buffer, entryCount: number, faults: Faults): CdRecord[] {
  const { corrupt, multiDisk } = faults;
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
    const sizes = zip64Sizes({ compressedSize: cd.readUInt32LE(p + 20), size: cd.readUInt32LE(p + 24), localOffset: cd.readUInt32LE(p + 42) }, extra, () =>
      corrupt(`member ${i + 1} needs ZIP64 sizes but has no ZIP64 extra field`),
    );
    const diskStart = cd.readUInt16LE(p + 34);
    records.push({
      name: decodeName(rawName),
      rawName,
      madeBy: cd.readUInt16LE(p + 4),
      flags: cd.readUInt16LE(p + 8),
      method: cd.readUInt16LE(p + 10),
      crc: cd.readUInt32LE(p + 16),
      ...sizes,
      externalAttrs: cd.readUInt32LE(p + 38),
    });
    if (diskStart !== 0 && diskStart !== 0xffff) throw multiDisk();
    p += 46 + nameLen + extraLen + commentLen;
  }
  return records;
}

interface Sizes {
  compressedSize: number;
  size: number;
  localOffset: number;
}

/** The ZIP64 extra field holds, in this order, only the fields whose 32/16-bit value is saturated. */
function zip64Sizes(written: Sizes, extra: Buffer, missing: () => PackageError): Sizes {
  let { compressedSize, size, localOffset } = written;
  if (size !== 0xffffffff && compressedSize !== 0xffffffff && localOffset !== 0xffffffff) return written;
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
    if (!z64 || q + 8 > z64.length) throw missing();
    const v = readU64(z64, q);
    q += 8;
    return v;
  };
  if (size === 0xffffffff) size = next();
  if (compressedSize === 0xffffffff) compressedSize = next();
  if (localOffset === 0xffffffff) localOffset = next();
  return { compressedSize, size, localOffset };
}

function decodeName(rawName: Buffer): string {
  try {
    return utf8.decode(rawName);
  } catch {
    // Neither UTF-8 nor flagged otherwise: show it byte for byte rather than guess a code page.
    return rawName.toString('latin1');
  }
}
