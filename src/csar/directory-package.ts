/** An unpacked package directory read as a package: the walk that lists it and the reader of its files. */
import { constants } from 'node:fs';
import { lstat, open, readdir, readlink } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import type { Finding } from '../model/package-files.js';
import { PackageError } from './package-error.js';
import { formatBytes, LIMIT_FLAGS, MiB, type PackageLimits, sizeAtLeast } from './package-limits.js';
import { MemberGuard, type OpenedPackage, PackageReader } from './package-reader.js';

interface DirEntry {
  abs: string;
  size: number;
}

export async function openDirectory(origin: string, lim: PackageLimits): Promise<OpenedPackage> {
  const root = resolve(origin);
  const entries = new Map<string, DirEntry>();
  const findings: Finding[] = [];
  let members = 0;
  let total = 0;

  const walk = async (dir: string): Promise<void> => {
    const names = (await readdir(dir)).sort();
    for (const name of names) {
      members++;
      if (members > lim.maxMembers) {
        throw new PackageError({
          severity: 'error',
          code: 'too-many-members',
          file: origin,
          message: `${origin} holds more than ${lim.maxMembers} files and folders`,
          hint: `split the package, or raise the limit if it is genuine: ${LIMIT_FLAGS.maxMembers} N`,
        });
      }
      const abs = join(dir, name);
      const rel = relative(root, abs).split(sep).join('/');
      const st = await lstat(abs);
      if (st.isSymbolicLink()) {
        const target = await readlink(abs).catch(() => '?');
        const resolved = resolve(dir, target);
        const outside = resolved !== root && !resolved.startsWith(root + sep);
        findings.push({
          severity: 'error',
          code: 'symlink',
          file: rel,
          message: `${rel} is a symbolic link to ${target}${outside ? ', outside the package' : ''}`,
          hint: 'replace the link by the file it points to: a package holds only regular files',
        });
      } else if (st.isDirectory()) {
        await walk(abs);
      } else if (st.isFile()) {
        if (st.size > lim.maxMemberBytes) {
          findings.push({
            severity: 'error',
            code: 'member-too-large',
            file: rel,
            message: `${rel} is ${st.size} bytes, more than the limit of ${lim.maxMemberBytes}`,
            hint: 'split the file, or raise the member size limit if it is genuine',
          });
          continue;
        }
        total += st.size;
        entries.set(rel, { abs, size: st.size });
      } else {
        findings.push({
          severity: 'error',
          code: 'special-file',
          file: rel,
          message: `${rel} is a device, FIFO or socket`,
          hint: 'a package holds only regular files and folders',
        });
      }
    }
  };
  await walk(root);
  if (total > lim.maxTotalBytes) {
    throw new PackageError({
      severity: 'error',
      code: 'package-too-large',
      file: origin,
      message: `${origin} holds ${total} bytes (${formatBytes(total)}), more than the limit of ${formatBytes(lim.maxTotalBytes)}`,
      hint: `split the package, or raise the limit if it is genuine: ${LIMIT_FLAGS.maxTotalBytes} ${sizeAtLeast(total)}`,
    });
  }
  return new DirectoryPackage(origin, entries, findings, lim);
}

class DirectoryPackage extends PackageReader<DirEntry> {
  readonly kind = 'directory' as const;

  async stream(path: string): Promise<Readable> {
    const e = this.entry(path);
    // O_NOFOLLOW: a file swapped for a link after the walk is refused, not followed;
    // O_NONBLOCK and the fstat: one swapped for a FIFO is refused instead of blocking the read.
    const fd = await open(e.abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((err: NodeJS.ErrnoException) => {
      throw new PackageError({
        severity: 'error',
        code: err.code === 'ELOOP' ? 'symlink' : 'read-failed',
        file: path,
        message: `cannot read ${path}: ${err.code ?? err.message}`,
      });
    });
    if (!(await fd.stat()).isFile()) {
      await fd.close();
      throw new PackageError({
        severity: 'error',
        code: 'special-file',
        file: path,
        message: `${path} is no longer a regular file (a device, FIFO or socket took its place)`,
        hint: 'a package holds only regular files and folders',
      });
    }
    const raw = fd.createReadStream({ highWaterMark: MiB });
    const guard = new MemberGuard({ size: e.size }, path);
    raw.on('error', (err) => guard.destroy(err));
    raw.pipe(guard);
    guard.on('close', () => raw.destroy());
    return guard;
  }

  async close(): Promise<void> {}
}
