/** The names of a package's members: what may stand in a zip, and the path each is read as. */
import type { Finding } from '../model/package-files.js';

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
