/**
 * Declared hashes checked against a package's bytes. Members are streamed
 * once each, feeding every algorithm declared for them, a few at a time, so
 * memory stays flat for multi-gigabyte images.
 */
import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import type { Finding, PackageFiles } from './model.js';
import { findingsFromError } from './package-error.js';

export type HashAlgorithm = 'sha224' | 'sha256' | 'sha384' | 'sha512';

const LABELS: Record<HashAlgorithm, string> = {
  sha224: 'SHA-224',
  sha256: 'SHA-256',
  sha384: 'SHA-384',
  sha512: 'SHA-512',
};
const HEX_LENGTH: Record<HashAlgorithm, number> = { sha224: 56, sha256: 64, sha384: 96, sha512: 128 };

/** `SHA-256` in any letter case (as SOL004 and Tacker spell it) → `sha256`; anything else → undefined. */
export function parseAlgorithm(text: string): HashAlgorithm | undefined {
  const m = /^sha-(224|256|384|512)$/i.exec(text.trim());
  return m ? (`sha${m[1]}` as HashAlgorithm) : undefined;
}

export function algorithmLabel(a: HashAlgorithm): string {
  return LABELS[a];
}

/** Whether `hash` is a hex digest of the right length for `a`. */
export function isHexDigest(a: HashAlgorithm, hash: string): boolean {
  return hash.length === HEX_LENGTH[a] && /^[0-9a-fA-F]+$/.test(hash);
}

/**
 * Image files whose hashes Tacker does not check (it skips these extensions
 * when it validates a package's artifacts).
 */
const IMAGE_EXTENSIONS = new Set(['raw', 'vhd', 'vhdx', 'vmdk', 'vdi', 'iso', 'ploop', 'qcow2', 'aki', 'ari', 'ami', 'img']);

export function isImageFile(path: string): boolean {
  const dot = path.lastIndexOf('.');
  return dot > path.lastIndexOf('/') && IMAGE_EXTENSIONS.has(path.slice(dot + 1).toLowerCase());
}

/** One `Algorithm:`/`Hash:` pair from TOSCA.meta or the manifest. */
export interface HashDeclaration {
  /** The member it is about. */
  path: string;
  algorithm: HashAlgorithm;
  /** Hex digest as declared (compared without regard to case). */
  expected: string;
  /** The file that declares it (TOSCA.meta or the manifest) and the line of its `Hash:`. */
  declaredIn: string;
  line?: number;
}

export interface VerifyHashesOptions {
  /** Skip members Tacker does not hash either (`isImageFile`), with an info finding each. */
  skipImageHashes?: boolean;
  /** Members streamed at once. */
  concurrency?: number;
  /**
   * Members to read through without a declared hash, so that damage (CRC,
   * sizes, bombs) in them is found too.
   */
  alsoRead?: string[];
}

/** Runs `fn` over `items`, at most `limit` at a time, keeping the input order in the result. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

/** Streams one member and returns its digests, hex, one per algorithm asked. */
export async function hashMember(
  files: PackageFiles,
  path: string,
  algorithms: readonly HashAlgorithm[],
): Promise<Map<HashAlgorithm, string>> {
  const hashes = new Map<HashAlgorithm, Hash>();
  for (const a of algorithms) if (!hashes.has(a)) hashes.set(a, createHash(a));
  const stream = await files.stream(path);
  for await (const chunk of stream) {
    for (const h of hashes.values()) h.update(chunk as Buffer);
  }
  const out = new Map<HashAlgorithm, string>();
  for (const [a, h] of hashes) out.set(a, h.digest('hex'));
  return out;
}

/**
 * Checks every declaration whose member is in the package (absent members
 * are the caller's finding: it knows where they were listed). Returns
 * `hash-mismatch` findings, stream failures as their own findings, and
 * `hash-not-checked` infos for skipped images; sorted by member.
 */
export async function verifyHashes(
  files: PackageFiles,
  declarations: readonly HashDeclaration[],
  opts: VerifyHashesOptions = {},
): Promise<Finding[]> {
  const byPath = new Map<string, HashDeclaration[]>();
  for (const d of declarations) {
    if (!files.has(d.path)) continue;
    byPath.set(d.path, [...(byPath.get(d.path) ?? []), d]);
  }
  for (const p of opts.alsoRead ?? []) if (files.has(p) && !byPath.has(p)) byPath.set(p, []);

  const results = await mapLimit([...byPath.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)), opts.concurrency ?? 4, async ([path, decls]) => {
    const findings: Finding[] = [];
    if (opts.skipImageHashes && isImageFile(path)) {
      if (decls.length > 0) {
        findings.push({
          severity: 'info',
          code: 'hash-not-checked',
          file: path,
          message: `the hash of image ${path} was not checked (Tacker does not check image hashes either)`,
          hint: 'validate without skipping image hashes to check it',
        });
      }
      return findings;
    }
    let digests: Map<HashAlgorithm, string>;
    try {
      digests = await hashMember(files, path, decls.map((d) => d.algorithm));
    } catch (err) {
      return findingsFromError(err, path);
    }
    for (const d of decls) {
      const actual = digests.get(d.algorithm)!;
      if (actual !== d.expected.toLowerCase()) {
        findings.push({
          severity: 'error',
          code: 'hash-mismatch',
          file: path,
          message: `${algorithmLabel(d.algorithm)} of ${path} is ${actual}, but ${d.declaredIn}${d.line ? ` (line ${d.line})` : ''} declares ${d.expected}`,
          hint: `if ${path} is the file you meant to ship, rebuild the package with vnfm vnfpkg-build to refresh its hashes`,
        });
      }
    }
    return findings;
  });
  return results.flat();
}
