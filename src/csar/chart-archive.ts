/**
 * Chart archives (`helm package` output: a gzipped tar of one chart
 * directory), read in memory and judged member by member as the zip reader
 * judges a package's members: a name that could land outside the chart's
 * directory, a link, a device or FIFO is refused and named; the archive is
 * bounded in unpacked bytes, members and inflation ratio.
 */
import { gunzipSync } from 'node:zlib';
import { nameEscape } from './member-name.js';
import { DEFAULT_LIMITS, formatBytes, MiB } from './package-limits.js';

/** One regular file of a tar archive. */
export interface TarEntry {
  name: string;
  data: Buffer;
}

/** Why an archive, or one of its members, is refused. */
export interface ArchiveProblem {
  code: 'chart-slip' | 'chart-link' | 'chart-special-file' | 'chart-archive-limit';
  message: string;
  hint: string;
  /** The member refused, as the archive names it (none for a limit). */
  member?: string;
}

/** An archive read: its regular files, and the members refused. */
export interface TarArchive {
  entries: TarEntry[];
  refused: ArchiveProblem[];
}

/** The archive holds members that are refused, or passes a limit: each problem names the member or the limit. */
export class ChartArchiveError extends Error {
  constructor(readonly problems: ArchiveProblem[]) {
    super(problems.map((p) => p.message).join('; '));
  }
}

/** Bounds of a chart archive: a chart is a few dozen KiB of text. */
export interface ChartArchiveLimits {
  /** Unpacked bytes the archive may expand to. */
  maxUnpackedBytes: number;
  /** Members (files, folders, links) it may hold. */
  maxMembers: number;
  /** Largest ratio of unpacked to compressed bytes... */
  maxRatio: number;
  /** ...once it unpacks to more than this. */
  ratioFloorBytes: number;
}

export const CHART_ARCHIVE_LIMITS: Readonly<ChartArchiveLimits> = Object.freeze({
  maxUnpackedBytes: 64 * MiB,
  maxMembers: DEFAULT_LIMITS.maxMembers,
  maxRatio: DEFAULT_LIMITS.maxRatio,
  ratioFloorBytes: DEFAULT_LIMITS.ratioFloorBytes,
});

const PACK_HINT = 'make the archive with "helm package CHART_DIR" (a gzipped tar of one chart directory)';
const ROOT = "the chart's directory";

/** Tar types that are neither a file nor a folder, as the messages call them. */
const SPECIAL: Record<string, string> = { '3': 'a character device', '4': 'a block device', '6': 'a FIFO' };

/** Headers that describe the next member (pax, GNU long names) rather than being one. */
const EXTENSIONS = new Set(['x', 'g', 'L', 'K']);

/** Unpacks the gzip, bounded by the size and ratio limits; the bytes are the tar. */
function gunzipBounded(gz: Buffer, lim: ChartArchiveLimits): Buffer {
  // Inflating stops at whichever limit comes first: the ratio one, once past its floor, or the size one.
  const byRatio = Math.max(lim.ratioFloorBytes, lim.maxRatio * gz.length);
  const max = Math.min(lim.maxUnpackedBytes, byRatio);
  try {
    return gunzipSync(gz, { maxOutputLength: max });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code !== 'ERR_BUFFER_TOO_LARGE' && !/larger than/i.test(e.message)) throw new Error(`is not a gzip archive (${e.message})`);
    const problem: ArchiveProblem =
      max < lim.maxUnpackedBytes
        ? {
            code: 'chart-archive-limit',
            message: `inflates ${gz.length} compressed bytes to more than ${max} (${formatBytes(max)}, ratio above ${lim.maxRatio}): refused as a gzip bomb`,
            hint: 'a chart is text of a few dozen KiB: keep large data out of it (in a container image, or a ConfigMap the VNF fetches)',
          }
        : {
            code: 'chart-archive-limit',
            message: `unpacks to more than ${formatBytes(max)}, the limit of a chart archive`,
            hint: 'a chart is text of a few dozen KiB: keep large data out of it (in a container image, or a ConfigMap the VNF fetches)',
          };
    throw new ChartArchiveError([problem]);
  }
}

/** A header's number: octal text, or GNU's base-256 (high bit of the first byte set). */
function headerNumber(field: Buffer): number {
  if ((field[0]! & 0x80) !== 0) {
    let n = field[0]! & 0x7f;
    for (const b of field.subarray(1)) n = n * 256 + b;
    return n;
  }
  const text = field.toString('latin1').replace(/\0.*$/s, '').trim();
  return text === '' ? 0 : /^[0-7]+$/.test(text) ? parseInt(text, 8) : NaN;
}

/** The header's checksum holds: the sum of its bytes, the checksum field counted as spaces. */
function checksumHolds(header: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : header[i]!;
  return headerNumber(header.subarray(148, 156)) === sum;
}

/** The records of a pax extended header (`LEN key=value\n`). */
function paxRecords(body: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let at = 0;
  while (at < body.length && body[at] !== 0) {
    const space = body.indexOf(0x20, at);
    const len = space > at ? Number(body.subarray(at, space).toString('latin1')) : NaN;
    if (!Number.isInteger(len) || len <= space - at || at + len > body.length || body[at + len - 1] !== 0x0a) throw new Error('is not a tar archive (a pax header is malformed)');
    const record = body.subarray(space + 1, at + len - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq > 0) records.set(record.slice(0, eq), record.slice(eq + 1));
    at += len;
  }
  return records;
}

/** What the next member's extension headers (pax `x`, GNU `L` and `K`) said. */
interface Pending {
  path?: string;
  linkpath?: string;
  size?: number;
}

/**
 * The regular files of a gzipped tar (ustar, with GNU long names and pax
 * records, as `helm package` writes them). Throws a ChartArchiveError naming
 * every member refused (a name that escapes the chart's directory, a link,
 * a device or FIFO, a type that is no file or folder) or the limit passed,
 * and an Error with a plain message on a broken archive.
 */
export function readTarGz(gz: Buffer, limits: Partial<ChartArchiveLimits> = {}): TarEntry[] {
  const read = readTarArchive(gz, limits);
  if (read.refused.length > 0) throw new ChartArchiveError(read.refused);
  return read.entries;
}

/**
 * The archive's regular files and, apart, the members refused: whether a
 * refusal matters is the caller's (a tarball that holds no chart is not
 * judged as one). A limit passed throws a ChartArchiveError, a broken
 * archive an Error.
 */
export function readTarArchive(gz: Buffer, limits: Partial<ChartArchiveLimits> = {}): TarArchive {
  const lim = { ...CHART_ARCHIVE_LIMITS, ...limits };
  const tar = gunzipBounded(gz, lim);
  const entries: TarEntry[] = [];
  const problems: ArchiveProblem[] = [];
  let offset = 0;
  let members = 0;
  let pending: Pending = {};
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    if (!checksumHolds(header)) throw new Error(`is not a tar archive (the header at byte ${offset} has a wrong checksum)`);
    const text = (start: number, len: number) =>
      header
        .subarray(start, start + len)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const type = String.fromCharCode(header[156] ?? 0);
    // A pax size is the next member's, not an extension header's.
    const size = (EXTENSIONS.has(type) ? undefined : pending.size) ?? headerNumber(header.subarray(124, 136));
    if (!Number.isSafeInteger(size) || size < 0) throw new Error('is not a tar archive (a header has no size)');
    const body = tar.subarray(offset + 512, offset + 512 + size);
    if (body.length < size) throw new Error('is truncated');
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x') {
      const records = paxRecords(body);
      const paxSize = records.has('size') ? Number(records.get('size')) : undefined;
      pending = { ...pending, ...(records.has('path') ? { path: records.get('path')! } : {}), ...(records.has('linkpath') ? { linkpath: records.get('linkpath')! } : {}) };
      if (paxSize !== undefined) pending.size = paxSize;
      continue;
    }
    if (type === 'g') continue;
    if (type === 'L' || type === 'K') {
      const long = body.toString('utf8').replace(/\0.*$/s, '');
      pending = type === 'L' ? { ...pending, path: long } : { ...pending, linkpath: long };
      continue;
    }
    // POSIX ustar ("ustar\0") splits a long name into prefix/name; old GNU ("ustar  ") uses that room for other fields.
    const posix = header.subarray(257, 263).toString('latin1') === 'ustar\0';
    const name = pending.path ?? (posix && text(345, 155) ? `${text(345, 155)}/${text(0, 100)}` : text(0, 100));
    const link = pending.linkpath ?? text(157, 100);
    pending = {};
    if (++members > lim.maxMembers) {
      throw new ChartArchiveError([
        {
          code: 'chart-archive-limit',
          message: `holds more than ${lim.maxMembers} members, the limit of a chart archive`,
          hint: 'a chart holds a few dozen files: check that the right archive is packed',
        },
      ]);
    }
    const problem = memberProblem(name, type, link);
    if (problem) {
      problems.push({ ...problem, member: name });
      continue;
    }
    if (type === '0' || type === '\0' || type === '7') {
      const path = name
        .replace(/\\/g, '/')
        .split('/')
        .filter((s) => s !== '' && s !== '.')
        .join('/');
      entries.push({ name: path, data: Buffer.from(body) });
    }
  }
  return { entries, refused: problems };
}

/** Why a member is refused: its name, or its type. Folders and regular files pass. */
function memberProblem(name: string, type: string, link: string): ArchiveProblem | undefined {
  const member = JSON.stringify(name);
  const why = nameEscape(name, ROOT);
  if (why !== undefined) return { code: 'chart-slip', message: `member name ${member} ${why}`, hint: PACK_HINT };
  if (type === '1' || type === '2') {
    return {
      code: 'chart-link',
      message: `member ${member} is a ${type === '2' ? 'symbolic' : 'hard'} link to ${JSON.stringify(link)}; links could point outside the chart`,
      hint: 'replace the link by the file it points to ("helm package" stores the file a link in the chart directory points to)',
    };
  }
  if (type !== '5' && name.split(/[\\/]/).every((s) => s === '' || s === '.')) {
    return { code: 'chart-slip', message: `member name ${member} names no file`, hint: PACK_HINT };
  }
  const special = SPECIAL[type];
  if (special || !['0', '\0', '7', '5'].includes(type)) {
    return {
      code: 'chart-special-file',
      message: `member ${member} is ${special ?? `a tar entry of type ${JSON.stringify(type)}`}, not a regular file or folder`,
      hint: 'a chart archive holds only regular files and folders: ' + PACK_HINT,
    };
  }
  return undefined;
}
