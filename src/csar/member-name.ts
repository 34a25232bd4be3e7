/** The names of a package's members: what may stand in a zip, and the path each is read as. */
import type { Finding } from '../model/package-files.js';

interface NameCheck {
  path?: string;
  isDir: boolean;
  finding?: Omit<Finding, 'file'>;
  backslash: boolean;
}

const SLIP_HINT = 'rebuild the package with paths relative to its root (vnfm vnfpkg-build does this)';

/**
 * Why a member name could land outside the folder it is unpacked in
 * (`root`, in the message), or undefined when it cannot: a NUL byte, an
 * absolute path, a drive letter, a `..` segment (backslashes counting as
 * separators).
 */
export function nameEscape(raw: string, root = 'the package root'): string | undefined {
  if (raw.includes('\0')) return 'contains a NUL byte';
  const name = raw.replace(/\\/g, '/');
  if (name.startsWith('/')) return 'is an absolute path';
  if (/^[A-Za-z]:/.test(name)) return 'starts with a drive letter';
  if (name.split('/').includes('..')) return `has a '..' segment, which could land outside ${root}`;
  return undefined;
}

/** Validates and normalises a member name; every escape is a `zip-slip` finding. */
export function checkMemberName(raw: string): NameCheck {
  const why = nameEscape(raw);
  if (why !== undefined) {
    return { isDir: false, backslash: false, finding: { severity: 'error', code: 'zip-slip', message: `member name ${JSON.stringify(raw)} ${why}`, hint: SLIP_HINT } };
  }
  const backslash = raw.includes('\\');
  const name = raw.replace(/\\/g, '/');
  const segments = name.split('/');
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
