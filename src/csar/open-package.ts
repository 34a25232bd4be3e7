/**
 * Opens a package (a zip/CSAR file or an unpacked directory) as a read-only
 * `PackageFiles`, refusing whatever could escape the package root or blow
 * up on decompression.
 *
 * The zip reader (zip-directory.ts, zip-members.ts, zip-package.ts) is
 * written over positioned reads rather than taken from a library: adm-zip
 * reads whole archives into memory, and its checks (names, symlink modes,
 * overlapping members, declared sizes) need the raw central-directory fields
 * anyway. The directory reader is directory-package.ts; both answer through
 * one base class (package-reader.ts). Member contents are streamed, so
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
import { stat } from 'node:fs/promises';
import { openDirectory } from './directory-package.js';
import { PackageError } from './package-error.js';
import { DEFAULT_LIMITS, type PackageLimits } from './package-limits.js';
import type { OpenedPackage } from './package-reader.js';
import { openZip } from './zip-package.js';
import type { FileTap } from './zip-pass.js';

export { checkMemberName } from './member-name.js';
export { DEFAULT_LIMITS, DEFAULT_TEXT_BYTES, formatBytes, LIMIT_FLAGS, type PackageLimits } from './package-limits.js';
export { openFindings, type OpenedPackage } from './package-reader.js';
export type { FileTap } from './zip-pass.js';

/**
 * `tap` (a zip only): every byte of the file is handed to it by the one
 * sequential reading that also serves the members planned with
 * `planReading`; `finishReading` reads whatever remains.
 */
export async function openPackage(path: string, limits: Partial<PackageLimits> = {}, tap?: FileTap): Promise<OpenedPackage> {
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
  if (st.isFile()) return openZip(path, st.size, lim, tap);
  throw new PackageError({
    severity: 'error',
    code: 'not-a-zip',
    file: path,
    message: `${path} is neither a regular file nor a directory`,
    hint: 'give the path of a .zip/.csar file or of an unpacked package directory',
  });
}
