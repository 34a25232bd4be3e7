/**
 * A raw zip writer for tests: it writes exactly what it is told, so tests
 * can craft the hostile and broken archives a real tool refuses to make.
 */
import { constants, deflateRawSync, crc32 } from 'node:zlib';

export interface RawEntry {
  name: string | Buffer;
  /** Uncompressed content (default empty). */
  data?: Buffer | string;
  /** 0 = STORE, 8 = DEFLATE (default), or any other number to test refusal. */
  method?: number;
  /** The bytes written as the member's data, instead of `data` compressed. */
  payload?: Buffer;
  /** Declared uncompressed size, instead of the real one. */
  size?: number;
  /** Declared compressed size, instead of the payload's. */
  compressedSize?: number;
  crc?: number;
  flags?: number;
  /** Unix mode (e.g. 0o120777 for a symlink); written with "made by" Unix. */
  mode?: number;
  /** Raw external attributes, instead of `mode`. */
  externalAttrs?: number;
  /** Force ZIP64 extra fields (sizes and offset) in both headers. */
  zip64?: boolean;
  /** A different name in the local header. */
  localName?: string;
  /** Point the central record at another member's local header (index into entries). */
  sameOffsetAs?: number;
}

export interface BuildZipOptions {
  /** Write ZIP64 end records (with saturated classic fields). */
  zip64End?: boolean;
  /** Cut this many bytes off the start of the central directory (it then points past its own data). */
  truncateCentralDirectory?: number;
  /** Declare another entry count in the end record. */
  entryCount?: number;
  /** Declare a non-zero disk number. */
  diskNumber?: number;
}

const U32 = 0xffffffff;

export function buildZip(entries: RawEntry[], opts: BuildZipOptions = {}): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  const offsets: number[] = [];
  let pos = 0;
  const push = (b: Buffer): void => {
    parts.push(b);
    pos += b.length;
  };
  for (const e of entries) {
    const name = typeof e.name === 'string' ? Buffer.from(e.name, 'utf8') : e.name;
    const data = typeof e.data === 'string' ? Buffer.from(e.data) : (e.data ?? Buffer.alloc(0));
    const method = e.method ?? 8;
    const payload = e.payload ?? (method === 8 ? deflateRawSync(data) : data);
    const size = e.size ?? data.length;
    const csize = e.compressedSize ?? payload.length;
    const crc = e.crc ?? crc32(data);
    const flags = e.flags ?? 0;
    const localName = e.localName !== undefined ? Buffer.from(e.localName) : name;
    const offset = pos;
    offsets.push(offset);

    const localExtra = e.zip64 ? z64(size, csize) : Buffer.alloc(0);
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0);
    lh.writeUInt16LE(e.zip64 ? 45 : 20, 4);
    lh.writeUInt16LE(flags, 6);
    lh.writeUInt16LE(method, 8);
    lh.writeUInt16LE(0, 10);
    lh.writeUInt16LE(0x21, 12);
    lh.writeUInt32LE(crc >>> 0, 14);
    lh.writeUInt32LE(e.zip64 ? U32 : csize, 18);
    lh.writeUInt32LE(e.zip64 ? U32 : size, 22);
    lh.writeUInt16LE(localName.length, 26);
    lh.writeUInt16LE(localExtra.length, 28);
    if (e.sameOffsetAs === undefined) {
      push(lh);
      push(localName);
      push(localExtra);
      push(payload);
    }

    const recOffset = e.sameOffsetAs !== undefined ? offsets[e.sameOffsetAs]! : offset;
    const cExtra = e.zip64 ? z64(size, csize, recOffset) : Buffer.alloc(0);
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0);
    ch.writeUInt16LE(((e.mode !== undefined ? 3 : 0) << 8) | (e.zip64 ? 45 : 20), 4);
    ch.writeUInt16LE(e.zip64 ? 45 : 20, 6);
    ch.writeUInt16LE(flags, 8);
    ch.writeUInt16LE(method, 10);
    ch.writeUInt16LE(0, 12);
    ch.writeUInt16LE(0x21, 14);
    ch.writeUInt32LE(crc >>> 0, 16);
    ch.writeUInt32LE(e.zip64 ? U32 : csize, 20);
    ch.writeUInt32LE(e.zip64 ? U32 : size, 24);
    ch.writeUInt16LE(name.length, 28);
    ch.writeUInt16LE(cExtra.length, 30);
    ch.writeUInt32LE(e.externalAttrs ?? (e.mode !== undefined ? (e.mode << 16) >>> 0 : 0), 38);
    ch.writeUInt32LE(e.zip64 ? U32 : recOffset, 42);
    central.push(Buffer.concat([ch, name, cExtra]));
  }
  let cd = Buffer.concat(central);
  const cdOffset = pos;
  const cdSize = cd.length;
  if (opts.truncateCentralDirectory) cd = cd.subarray(opts.truncateCentralDirectory);
  push(cd);
  const count = opts.entryCount ?? entries.length;
  if (opts.zip64End) {
    const eocd64Offset = pos;
    const rec = Buffer.alloc(56);
    rec.writeUInt32LE(0x06064b50, 0);
    rec.writeBigUInt64LE(44n, 4);
    rec.writeUInt16LE(45, 12);
    rec.writeUInt16LE(45, 14);
    rec.writeBigUInt64LE(BigInt(count), 24);
    rec.writeBigUInt64LE(BigInt(count), 32);
    rec.writeBigUInt64LE(BigInt(cdSize), 40);
    rec.writeBigUInt64LE(BigInt(cdOffset), 48);
    push(rec);
    const loc = Buffer.alloc(20);
    loc.writeUInt32LE(0x07064b50, 0);
    loc.writeBigUInt64LE(BigInt(eocd64Offset), 8);
    loc.writeUInt32LE(1, 16);
    push(loc);
  }
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(opts.diskNumber ?? 0, 4);
  eocd.writeUInt16LE(opts.zip64End ? 0xffff : count, 8);
  eocd.writeUInt16LE(opts.zip64End ? 0xffff : count, 10);
  eocd.writeUInt32LE(opts.zip64End ? U32 : cdSize, 12);
  eocd.writeUInt32LE(opts.zip64End ? U32 : cdOffset, 16);
  push(eocd);
  return Buffer.concat(parts);
}

function z64(size: number, csize: number, offset?: number): Buffer {
  const n = offset === undefined ? 2 : 3;
  const b = Buffer.alloc(4 + 8 * n);
  b.writeUInt16LE(1, 0);
  b.writeUInt16LE(8 * n, 2);
  b.writeBigUInt64LE(BigInt(size), 4);
  b.writeBigUInt64LE(BigInt(csize), 12);
  if (offset !== undefined) b.writeBigUInt64LE(BigInt(offset), 20);
  return b;
}

/**
 * A raw deflate stream that inflates to `chunks` × 16 MiB of zeros while
 * staying about 16 KiB per chunk: one sync-flushed block repeated, then a
 * final empty block. Built without ever holding the inflated bytes.
 */
export function zeroBomb(chunks: number): { payload: Buffer; size: number } {
  const block = 16 * 1024 * 1024;
  const one = deflateRawSync(Buffer.alloc(block), { finishFlush: constants.Z_SYNC_FLUSH });
  const end = deflateRawSync(Buffer.alloc(0));
  return { payload: Buffer.concat([...Array.from({ length: chunks }, () => one), end]), size: chunks * block };
}

/** A minimal valid package as members. */
export function goodPackageMembers(): RawEntry[] {
  return [
    { name: 'TOSCA-Metadata/TOSCA.meta', data: 'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: test\nEntry-Definitions: Definitions/top.yaml\n' },
    { name: 'Definitions/top.yaml', data: 'tosca_definitions_version: tosca_simple_yaml_1_2\n' },
  ];
}
