/** The bounds a package reader holds a package to, and how sizes read in its messages. */

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
export const MiB = 1024 ** 2;

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

/** Default bound of `readText`: descriptors and metadata are small. */
export const DEFAULT_TEXT_BYTES = 4 * MiB;

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
export function sizeAtLeast(n: number): string {
  const unit = formatBytes(n).split(' ')[1]!;
  const power = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'].indexOf(unit);
  return power === 0 ? String(n) : `${Math.ceil(n / 1024 ** power)}${unit}`;
}
