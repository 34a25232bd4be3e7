/**
 * Judges each central-directory record before anything is inflated: its
 * name, its type (no links, no devices), its method, duplicates and case
 * conflicts, its declared size and ratio, and that its data ends before the
 * next member starts. A member refused is a finding and is left out; the
 * rest become the zip's entries.
 */
import type { Finding } from '../model/package-files.js';
import { checkMemberName } from './member-name.js';
import { LIMIT_FLAGS, type PackageLimits } from './package-limits.js';
import type { CdRecord, ZipEntry } from './zip-directory.js';

type Problem = Omit<Finding, 'file'>;

/** What the records left: the admitted entries, the findings, and the declared totals of the entries. */
export interface AdmittedMembers {
  entries: Map<string, ZipEntry>;
  findings: Finding[];
  total: number;
  compressedTotal: number;
}

export function admitMembers(records: CdRecord[], cdOffset: number, lim: PackageLimits): AdmittedMembers {
  // Each member's data must end before the next member starts: overlapping
  // members are how the densest zip bombs reuse one compressed stream.
  const byOffset = [...records].sort((a, b) => a.localOffset - b.localOffset);
  const limitOf = new Map<CdRecord, number>();
  byOffset.forEach((r, i) => limitOf.set(r, i + 1 < byOffset.length ? byOffset[i + 1]!.localOffset : cdOffset));

  const admitted: AdmittedMembers = { entries: new Map(), findings: [], total: 0, compressedTotal: 0 };
  const seenLower = new Map<string, string>();
  const duplicates = new Set<string>();
  const dirs = new Set<string>();
  for (const r of records) {
    const add = (f: Problem): void => {
      admitted.findings.push({ ...f, file: r.name });
    };
    const kind = memberKind(r, add);
    if (kind === undefined) continue;
    if (kind.isDir) {
      if (kind.path) dirs.add(kind.path);
      continue;
    }
    const path = kind.path!;
    const readable = methodProblem(r, path);
    if (readable) {
      add(readable);
      continue;
    }
    if (admitted.entries.has(path) || duplicates.has(path)) {
      duplicates.add(path);
      add({
        severity: 'error',
        code: 'duplicate-name',
        message: `member ${path} appears more than once in the zip`,
        hint: 'keep one copy of each file: extractors disagree on which one wins',
      });
      admitted.entries.delete(path);
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
    const limit = limitOf.get(r)!;
    const sizeProblem = declaredSizeProblem(r, path, limit, lim);
    if (sizeProblem) {
      add(sizeProblem);
      continue;
    }
    admitted.total += r.size;
    admitted.compressedTotal += r.compressedSize;
    const { rawName, method, flags, crc, compressedSize, size, localOffset } = r;
    admitted.entries.set(path, { path, rawName, method, flags, crc, compressedSize, size, localOffset, limit });
  }
  admitted.findings.push(...pathConflicts(admitted.entries, dirs));
  return admitted;
}

/**
 * The member's path and whether it is a folder, or undefined when its name or
 * type refuses it; a backslash name is read, with a warning.
 */
function memberKind(r: CdRecord, add: (f: Problem) => void): { path?: string; isDir: boolean } | undefined {
  const file = r.name;
  const check = checkMemberName(r.name);
  if (check.finding) {
    add(check.finding);
    return undefined;
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
    return undefined;
  }
  const isDir = check.isDir || type === 0o040000 || (!unix && (r.externalAttrs & 0x10) !== 0);
  if (type !== 0 && type !== 0o100000 && type !== 0o040000) {
    add({
      severity: 'error',
      code: 'special-file',
      message: `member ${file} is a device, FIFO or socket (mode ${((r.externalAttrs >>> 16) & 0xffff).toString(8)})`,
      hint: 'a package holds only regular files and directories',
    });
    return undefined;
  }
  if (check.backslash) {
    add({
      severity: 'warning',
      code: 'backslash-name',
      message: `member ${JSON.stringify(file)} uses backslashes as separators; read as ${check.path ?? ''}`,
      hint: "zip member names separate folders with '/': rebuild the package with vnfm vnfpkg-build",
    });
  }
  return { path: check.path, isDir };
}

/** Encrypted members and compression methods other than STORE and DEFLATE are not read. */
function methodProblem(r: CdRecord, path: string): Problem | undefined {
  if (r.flags & 0x41 || r.method === 99) {
    return {
      severity: 'error',
      code: 'zip-encrypted',
      message: `member ${path} is encrypted`,
      hint: 'build the package without encryption (SOL004 packages are signed, not encrypted)',
    };
  }
  if (r.method !== 0 && r.method !== 8) {
    return {
      severity: 'error',
      code: 'zip-unsupported-method',
      message: `member ${path} uses compression method ${r.method}; only STORE (0) and DEFLATE (8) are read`,
      hint: 'rebuild the package with vnfm vnfpkg-build or a zip tool using deflate',
    };
  }
  return undefined;
}

/** The declared sizes, checked before anything is inflated: the limits, the ratio, and the room before the next member. */
function declaredSizeProblem(r: CdRecord, path: string, limit: number, lim: PackageLimits): Problem | undefined {
  if (r.size > lim.maxMemberBytes) {
    return {
      severity: 'error',
      code: 'member-too-large',
      message: `member ${path} declares ${r.size} bytes, more than the limit of ${lim.maxMemberBytes}`,
      hint: 'split the member, or raise the member size limit if it is genuine',
    };
  }
  if (r.size > lim.ratioFloorBytes && r.size > lim.maxRatio * Math.max(r.compressedSize, 1)) {
    return {
      severity: 'error',
      code: 'zip-bomb',
      message: `member ${path} inflates ${r.compressedSize} bytes to ${r.size} (ratio above ${lim.maxRatio}): refused as a zip bomb`,
      hint: `store such members uncompressed, or raise the limit if it is genuine: ${LIMIT_FLAGS.maxRatio} ${Math.ceil(r.size / Math.max(r.compressedSize, 1))}`,
    };
  }
  if (r.method === 0 && r.compressedSize !== r.size) {
    return {
      severity: 'error',
      code: 'zip-size-mismatch',
      message: `stored member ${path} declares ${r.size} bytes but occupies ${r.compressedSize}`,
      hint: 'the zip is damaged: build it again',
    };
  }
  if (r.localOffset + 30 + r.rawName.length + r.compressedSize > limit) {
    return {
      severity: 'error',
      code: 'zip-overlap',
      message: `member ${path} overlaps the next member or the central directory`,
      hint: 'overlapping members are a zip-bomb technique or damage: build the package again',
    };
  }
  return undefined;
}

/** A file whose path is also used as a folder cannot be unpacked. */
function pathConflicts(entries: Map<string, ZipEntry>, dirs: Set<string>): Finding[] {
  const findings: Finding[] = [];
  for (const path of entries.keys()) {
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
  return findings;
}
