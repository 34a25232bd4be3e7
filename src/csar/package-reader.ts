/**
 * What the zip and the directory readers share: the `OpenedPackage` they
 * return, the base class that answers `list`, `has`, `size` and `readText`
 * from their table of members, and the guard that holds every member stream
 * to the size (and CRC) it declares.
 */
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import { crc32 } from 'node:zlib';
import type { Finding, PackageFiles } from '../model/package-files.js';
import { PackageError } from './package-error.js';
import { DEFAULT_TEXT_BYTES, type PackageLimits } from './package-limits.js';

/** `PackageFiles` plus what the reader found while opening it. */
export interface OpenedPackage extends PackageFiles {
  /** Findings about members the reader refused (they are not in `list()`). */
  readonly findings: readonly Finding[];
  readonly kind: 'zip' | 'directory';
  readonly limits: Readonly<PackageLimits>;
  /**
   * `paths` in the order to stream them (for a zip, as their data lies in
   * the file: one sequential reading); a zip opened with a tap starts its one
   * pass over the file here.
   */
  planReading(paths: readonly string[]): Promise<string[]>;
  /** A zip opened with a tap: reads the rest of the file through it (what no member took); resolves at its end. */
  finishReading(): Promise<void>;
}

/** The package's reading plan when it has one (an opened package), else undefined. */
export function readingPlan(files: PackageFiles): OpenedPackage['planReading'] | undefined {
  const f = files as Partial<OpenedPackage>;
  return typeof f.planReading === 'function' ? f.planReading.bind(files) : undefined;
}

/** The findings a package's reader gathered while opening it, if it kept any. */
export function openFindings(files: PackageFiles): Finding[] {
  const f = (files as Partial<OpenedPackage>).findings;
  return Array.isArray(f) ? [...f] : [];
}

export const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A package whose members, by path, are entries of type `E`; the subclass streams them. */
export abstract class PackageReader<E extends { size: number }> implements OpenedPackage {
  abstract readonly kind: 'zip' | 'directory';
  private readonly sorted: string[];

  constructor(
    readonly origin: string,
    private readonly entries: ReadonlyMap<string, E>,
    readonly findings: readonly Finding[],
    readonly limits: Readonly<PackageLimits>,
  ) {
    this.sorted = [...entries.keys()].sort();
  }

  list(): string[] {
    return [...this.sorted];
  }
  has(path: string): boolean {
    return this.entries.has(path);
  }
  size(path: string): number {
    return this.entry(path).size;
  }
  readText(path: string, maxBytes = DEFAULT_TEXT_BYTES): Promise<string> {
    return readTextFrom(this, path, maxBytes);
  }

  async planReading(paths: readonly string[]): Promise<string[]> {
    return paths.filter((p) => this.has(p)).sort();
  }
  async finishReading(): Promise<void> {}

  abstract stream(path: string): Promise<Readable>;
  abstract close(): Promise<void>;

  protected entry(path: string): E {
    const e = this.entries.get(path);
    if (!e) throw missingMember(this.origin, path);
    return e;
  }
}

function missingMember(origin: string, path: string): PackageError {
  return new PackageError({
    severity: 'error',
    code: 'member-missing',
    file: path,
    message: `${path} is not in package ${origin}`,
    hint: 'add the file to the package, or correct the reference to it',
  });
}

async function readTextFrom(files: PackageFiles, path: string, maxBytes: number): Promise<string> {
  const size = files.size(path);
  if (size > maxBytes) {
    throw new PackageError({
      severity: 'error',
      code: 'text-too-large',
      file: path,
      message: `${path} is ${size} bytes, more than the ${maxBytes} read as text`,
      hint: 'descriptors and metadata files are small: check that the right file is referenced',
    });
  }
  const chunks: Buffer[] = [];
  for await (const chunk of await files.stream(path)) chunks.push(chunk as Buffer);
  const buf = Buffer.concat(chunks);
  let text: string;
  try {
    text = utf8.decode(buf);
  } catch {
    throw new PackageError({
      severity: 'error',
      code: 'not-utf8',
      file: path,
      message: `${path} is not UTF-8 text`,
      hint: 'save the file as UTF-8',
    });
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Counts and checksums a member's bytes as they pass: the declared size is a
 * claim to check, not a fact, and a stream that goes past it is stopped there.
 */
export class MemberGuard extends Transform {
  private count = 0;
  private crc = 0;

  constructor(
    private readonly e: { size: number; crc?: number },
    private readonly path: string,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.count += chunk.length;
    if (this.count > this.e.size) {
      cb(
        new PackageError({
          severity: 'error',
          code: 'zip-size-mismatch',
          file: this.path,
          message: `member ${this.path} inflates past its declared size of ${this.e.size} bytes: refused as a zip bomb or damage`,
          hint: 'build the package again with a correct zip tool',
        }),
      );
      return;
    }
    if (this.e.crc !== undefined) this.crc = crc32(chunk, this.crc);
    cb(null, chunk);
  }

  override _flush(cb: TransformCallback): void {
    if (this.count !== this.e.size) {
      cb(
        new PackageError({
          severity: 'error',
          code: 'zip-size-mismatch',
          file: this.path,
          message: `member ${this.path} has ${this.count} bytes, not the ${this.e.size} it declares`,
          hint: 'the package is damaged or changed while being read: build it again',
        }),
      );
      return;
    }
    if (this.e.crc !== undefined && this.crc >>> 0 !== this.e.crc >>> 0) {
      cb(
        new PackageError({
          severity: 'error',
          code: 'zip-crc-mismatch',
          file: this.path,
          message: `member ${this.path} fails its CRC-32 check`,
          hint: 'the zip is damaged: build or download it again',
        }),
      );
      return;
    }
    cb();
  }
}
