/**
 * The package reader's safety limits as flags, on the commands that open a
 * package the operator gives (vnfpkg-validate, vnfpkg-onboard).
 */
import type { Command } from 'commander';
import type { PackageLimits } from '../../../csar/index.js';
import { UsageError } from '../../../errors.js';

export interface LimitFlags {
  maxUnpackedSize?: string;
  maxMembers?: string;
  maxRatio?: string;
}

export function addPackageLimitOptions(cmd: Command): Command {
  return cmd
    .option('--max-unpacked-size <size>', 'refuse a package that unpacks to more than this (default 8GiB): bytes, or 500MiB, 16GiB')
    .option('--max-members <n>', 'refuse a package with more files and folders than this (default 10000)')
    .option('--max-ratio <n>', 'refuse a package (or a member over 16 MiB) that inflates more than N times its compressed size (default 200)');
}

/** The limits the flags set; those not given keep the reader's defaults. */
export function packageLimits(flags: LimitFlags): Partial<PackageLimits> {
  return {
    ...(flags.maxUnpackedSize !== undefined ? { maxTotalBytes: parseSize('--max-unpacked-size', flags.maxUnpackedSize) } : {}),
    ...(flags.maxMembers !== undefined ? { maxMembers: parseCount('--max-members', flags.maxMembers) } : {}),
    ...(flags.maxRatio !== undefined ? { maxRatio: parseCount('--max-ratio', flags.maxRatio) } : {}),
  };
}

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** `8GiB`, `8G`, `500MiB`, `1048576` → bytes (binary units whichever way they are written). */
export function parseSize(flag: string, value: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?$/i.exec(value.trim());
  const bytes = m ? Math.floor(Number(m[1]) * UNITS[m[2]!.toLowerCase()]!) : NaN;
  if (!m || !(bytes > 0) || !Number.isSafeInteger(bytes)) {
    throw new UsageError(`${flag} "${value}" is not a size`, { hint: `e.g. ${flag} 16GiB, 500MiB or a number of bytes` });
  }
  return bytes;
}

export function parseCount(flag: string, value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${flag} "${value}" is not a positive whole number`, { hint: `e.g. ${flag} 20000` });
  }
  return Number(value);
}
