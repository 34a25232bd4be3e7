/**
 * A zip/CSAR file read as a package: the central directory read and judged
 * (zip-directory.ts, zip-members.ts), the package's declared totals held to
 * the limits, then each member streamed from the shared file handle through
 * an inflater and the guard of its declared size and CRC.
 */
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import { PackageError } from './package-error.js';
import { formatBytes, LIMIT_FLAGS, MiB, type PackageLimits, sizeAtLeast } from './package-limits.js';
import { MemberGuard, type OpenedPackage, PackageReader } from './package-reader.js';
import { readAt, readCentralDirectory, SIG_LOCAL, type ZipEntry, zipFaults } from './zip-directory.js';
import { admitMembers } from './zip-members.js';
import { FilePass, type FileTap } from './zip-pass.js';

/**
 * With a `tap`, the members validation streams are served by one sequential
 * reading of the whole file that also hands the tap every byte (zip-pass.ts).
 */
export async function openZip(origin: string, fileSize: number, lim: PackageLimits, tap?: FileTap): Promise<OpenedPackage> {
  const fh = await open(origin, 'r');
  try {
    return await readZip(origin, fh, fileSize, lim, tap);
  } catch (err) {
    await fh.close();
    throw err;
  }
}

async function readZip(origin: string, fh: FileHandle, fileSize: number, lim: PackageLimits, tap?: FileTap): Promise<OpenedPackage> {
  const { records, cdOffset } = await readCentralDirectory(origin, fh, fileSize, lim);
  const { entries, findings, total, compressedTotal } = admitMembers(records, cdOffset, lim);
  const { fatal } = zipFaults(origin);
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
  return new ZipPackage(origin, entries, findings, lim, fh, tap ? new FilePass(fh, fileSize, tap) : undefined);
}

class ZipPackage extends PackageReader<ZipEntry> {
  readonly kind = 'zip' as const;

  constructor(
    origin: string,
    entries: Map<string, ZipEntry>,
    findings: PackageReader<ZipEntry>['findings'],
    limits: Readonly<PackageLimits>,
    private readonly fh: FileHandle,
    private readonly pass?: FilePass,
  ) {
    super(origin, entries, findings, limits);
  }

  /**
   * Orders `paths` as their data lies in the file and, with a tap, plans
   * them into the one pass over the file, which starts reading now: stream
   * them in this order (a planned member is waited for where its data begins).
   */
  override async planReading(paths: readonly string[]): Promise<string[]> {
    const ordered = paths.filter((p) => this.has(p)).sort((a, b) => this.entry(a).localOffset - this.entry(b).localOffset);
    if (!this.pass || this.pass.started) return ordered;
    const ranges: { path: string; start: number; end: number }[] = [];
    for (const path of ordered) {
      const e = this.entry(path);
      if (e.compressedSize === 0) continue;
      const header = await readAt(this.fh, e.localOffset, 30);
      // A damaged header is stream()'s finding: the member is read by position then.
      if (header.length < 30 || header.readUInt32LE(0) !== SIG_LOCAL) continue;
      const start = e.localOffset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
      if (start + e.compressedSize > e.limit) continue;
      ranges.push({ path, start, end: start + e.compressedSize });
    }
    this.pass.start(ranges);
    return ordered;
  }

  override async finishReading(): Promise<void> {
    await this.pass?.finish();
  }

  async stream(path: string): Promise<Readable> {
    try {
      return await this.streamMember(path);
    } finally {
      // Refused before its bytes were asked for (or served by position): the pass does not wait for it.
      this.pass?.drop(path);
    }
  }

  private async streamMember(path: string): Promise<Readable> {
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
    const raw = this.pass?.take(path) ?? rangeStream(this.fh, start, e.compressedSize);
    const wrap = (err: Error): PackageError => (err instanceof PackageError ? err : bad('zip-corrupt', `member ${path} cannot be inflated: ${err.message}`));
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
    await this.pass?.abort();
    await this.fh.close().catch(() => undefined);
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
