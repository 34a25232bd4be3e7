/**
 * What the package room shares with the VNFD room and the commands: a
 * read-only view of a package's members, and findings.
 */
import type { Readable } from 'node:stream';

/**
 * A package's members, whether it is a zip or an unpacked directory. Paths
 * are '/'-separated, relative to the package root, never with '..' or a
 * leading '/' (the reader refuses such members before anything sees them).
 */
export interface PackageFiles {
  /** Where the package came from, for messages (the zip or directory path). */
  readonly origin: string;
  /** Every regular file member, sorted. */
  list(): string[];
  has(path: string): boolean;
  /** Uncompressed size in bytes. */
  size(path: string): number;
  /**
   * A small member as UTF-8 text. Refuses members larger than `maxBytes`
   * (default 4 MiB) with a finding-worthy error.
   */
  readText(path: string, maxBytes?: number): Promise<string>;
  /** A member as a stream of its uncompressed bytes, for hashing and copying large files. */
  stream(path: string): Promise<Readable>;
  close(): Promise<void>;
}

export type Severity = 'error' | 'warning' | 'info';

/**
 * One problem (or note) about a package. Validation gathers all of them; a
 * package with any `error` is rejected.
 */
export interface Finding {
  severity: Severity;
  /** A stable identifier for scripts, e.g. `hash-mismatch`, `zip-slip`, `removed-api-version`. */
  code: string;
  /** The member (or the package itself) the finding is about. */
  file?: string;
  /** 1-based, where the parser knows it. */
  line?: number;
  /** What is wrong. */
  message: string;
  /** What to do about it. */
  hint?: string;
}

export const hasErrors = (findings: Finding[]): boolean => findings.some((f) => f.severity === 'error');
