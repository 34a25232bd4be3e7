/**
 * Declared hashes checked against a package's bytes. Members are streamed
 * once each, feeding every algorithm declared for them, a few at a time, so
 * memory stays flat for multi-gigabyte images.
 */
import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import type { Readable } from 'node:stream';
// Static: the launcher runs the bundle as a vm.Script, where import() of a builtin fails.
import { Worker } from 'node:worker_threads';
import type { Finding, PackageFiles } from '../model/package-files.js';
import { findingsFromError } from './package-error.js';
import { readingPlan } from './package-reader.js';
import type { FileTap } from './zip-pass.js';

/** MD5 only for a software image's checksum (Glance's `checksum`), never for the manifest. */
export type HashAlgorithm = 'sha224' | 'sha256' | 'sha384' | 'sha512' | 'md5';

const LABELS: Record<HashAlgorithm, string> = {
  sha224: 'SHA-224',
  sha256: 'SHA-256',
  sha384: 'SHA-384',
  sha512: 'SHA-512',
  md5: 'MD5',
};
const HEX_LENGTH: Record<HashAlgorithm, number> = { sha224: 56, sha256: 64, sha384: 96, sha512: 128, md5: 32 };

/** `SHA-256` in any letter case (as SOL004 and Tacker spell it) → `sha256`; anything else → undefined. */
export function parseAlgorithm(text: string): HashAlgorithm | undefined {
  const m = /^sha-(224|256|384|512)$/i.exec(text.trim());
  return m ? (`sha${m[1]}` as HashAlgorithm) : undefined;
}

/** The checksum algorithms of sw_image_data vnfm checks, as a hint lists them. */
export const IMAGE_CHECKSUM_ALGORITHMS = "sha-224, sha-256, sha-384, sha-512 (SOL004's names, any case, with or without the dash) and md5";

/**
 * A sw_image_data checksum's algorithm → the hash: SOL001 names it as SOL004
 * does (`sha-256`, `sha-512`; Tacker's samples write `sha-512`, the
 * algorithm Glance reports as os_hash_algo `sha512`), and Glance's
 * `checksum` is MD5. Anything else → undefined.
 */
export function parseImageChecksumAlgorithm(text: string): HashAlgorithm | undefined {
  const t = text.trim();
  if (/^md-?5$/i.test(t)) return 'md5';
  const m = /^sha-?(224|256|384|512)$/i.exec(t);
  return m ? (`sha${m[1]}` as HashAlgorithm) : undefined;
}

export function algorithmLabel(a: HashAlgorithm): string {
  return LABELS[a];
}

/** Hex digits in a digest of `a`. */
export function digestLength(a: HashAlgorithm): number {
  return HEX_LENGTH[a];
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
  /** The file that declares it (TOSCA.meta, the manifest, or the VNFD file with the sw_image_data) and the line of its hash. */
  declaredIn: string;
  line?: number;
  /** For a sw_image_data checksum: the VNFD node whose image this is (its mismatch says so, in the VNFD's words). */
  node?: string;
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

/**
 * Members this large are hashed in a worker thread: the digest of one chunk
 * then overlaps the reading, inflating and CRC of the next on the main
 * thread, so a multi-gigabyte image is checked at about the speed of the
 * hash alone.
 */
const OFF_THREAD_BYTES = 16 * 1024 * 1024;
/** Chunks handed to the worker and not yet hashed: bounds the memory held between the threads. */
const IN_FLIGHT = 8;

/** Streams one member and returns its digests, hex, one per algorithm asked. */
export async function hashMember(files: PackageFiles, path: string, algorithms: readonly HashAlgorithm[]): Promise<Map<HashAlgorithm, string>> {
  const unique = [...new Set(algorithms)];
  if (unique.length > 0 && files.size(path) >= OFF_THREAD_BYTES) return hashOffThread(await files.stream(path), unique);
  const hashes = new Map<HashAlgorithm, Hash>();
  for (const a of unique) hashes.set(a, createHash(a));
  const stream = await files.stream(path);
  for await (const chunk of stream) {
    for (const h of hashes.values()) h.update(chunk as Buffer);
  }
  const out = new Map<HashAlgorithm, string>();
  for (const [a, h] of hashes) out.set(a, h.digest('hex'));
  return out;
}

/** The hashing thread: jobs by id; each chunk is acknowledged once hashed, the digests sent at the end. */
const HASH_WORKER = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const jobs = new Map();
parentPort.on('message', (m) => {
  if (m.algorithms) {
    jobs.set(m.id, m.algorithms.map((a) => [a, createHash(a)]));
  } else if (m.chunk) {
    const b = Buffer.from(m.chunk.buffer, m.chunk.byteOffset, m.chunk.byteLength);
    for (const [, h] of jobs.get(m.id)) h.update(b);
    parentPort.postMessage({ id: m.id, ack: true });
  } else {
    const job = jobs.get(m.id);
    jobs.delete(m.id);
    parentPort.postMessage({ id: m.id, digests: job.map(([a, h]) => [a, h.digest('hex')]) });
  }
});
`;

interface HashJob {
  acked: () => void;
  done: (digests: [HashAlgorithm, string][]) => void;
}

let hashThread: { worker: Worker; jobs: Map<number, HashJob>; next: number } | undefined;

async function hashingThread() {
  if (!hashThread) {
    // A CommonJS script whatever flags started vnfm (--input-type=module would make it ESM).
    const worker = new Worker(HASH_WORKER, { eval: true, execArgv: [] });
    const thread = { worker, jobs: new Map<number, HashJob>(), next: 1 };
    worker.on('message', (m: { id: number; ack?: true; digests?: [HashAlgorithm, string][] }) => {
      const job = thread.jobs.get(m.id);
      if (!job) return;
      if (m.ack) job.acked();
      else {
        thread.jobs.delete(m.id);
        // Idle, the thread does not keep vnfm running.
        if (thread.jobs.size === 0) worker.unref();
        job.done(m.digests!);
      }
    });
    worker.unref();
    hashThread = thread;
  }
  return hashThread;
}

async function hashOffThread(stream: Readable, algorithms: HashAlgorithm[]): Promise<Map<HashAlgorithm, string>> {
  const thread = await hashingThread();
  const id = thread.next++;
  let inFlight = 0;
  let wake: (() => void) | undefined;
  let finish!: (digests: [HashAlgorithm, string][]) => void;
  const finished = new Promise<[HashAlgorithm, string][]>((resolve) => (finish = resolve));
  thread.jobs.set(id, {
    acked: () => {
      inFlight--;
      wake?.();
      wake = undefined;
    },
    done: finish,
  });
  thread.worker.ref();
  thread.worker.postMessage({ id, algorithms });
  try {
    for await (const data of stream) {
      const chunk = data as Buffer;
      // A buffer of its own is handed over; a view into a shared one (inflate's output) is copied first.
      const own = chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength ? chunk : Buffer.from(chunk);
      thread.worker.postMessage({ id, chunk: own }, [own.buffer as ArrayBuffer]);
      if (++inFlight >= IN_FLIGHT) await new Promise<void>((resolve) => (wake = resolve));
    }
  } catch (err) {
    thread.worker.postMessage({ id });
    await finished;
    throw err;
  }
  thread.worker.postMessage({ id });
  return new Map(await finished);
}

/** A file's digest computed from the chunks a pass over it hands a tap. */
export interface HashingTap extends FileTap {
  /** The digest (hex) and size of everything written, once it all is hashed. */
  digest(): Promise<{ hash: string; size: number }>;
  /** Ends the thread without a digest (the reading failed). */
  close(): Promise<void>;
}

/**
 * A tap that hashes (SHA-256 unless told) every chunk it is given in a
 * thread of its own (a copy of each is handed over): the package's checksum
 * is made from the same reading that validates it, on the other core.
 */
export function hashingTap(algorithm: HashAlgorithm = 'sha256'): HashingTap {
  const worker = new Worker(HASH_WORKER, { eval: true, execArgv: [] });
  let inFlight = 0;
  let size = 0;
  let wake: (() => void) | undefined;
  let finish!: (digests: [HashAlgorithm, string][]) => void;
  let fail!: (err: Error) => void;
  const finished = new Promise<[HashAlgorithm, string][]>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  finished.catch(() => undefined);
  worker.on('message', (m: { ack?: true; digests?: [HashAlgorithm, string][] }) => {
    if (m.ack) {
      inFlight--;
      const w = wake;
      wake = undefined;
      w?.();
    } else finish(m.digests!);
  });
  worker.once('error', (err) => fail(err));
  worker.once('exit', (code) => fail(new Error(`the hashing thread ended (${code}) before its digest`)));
  worker.postMessage({ id: 1, algorithms: [algorithm] });
  return {
    async write(chunk) {
      size += chunk.length;
      // Never a slice of Buffer's shared pool: the copy's memory is handed over whole.
      const own = Buffer.allocUnsafeSlow(chunk.length);
      chunk.copy(own);
      worker.postMessage({ id: 1, chunk: own }, [own.buffer as ArrayBuffer]);
      if (++inFlight >= IN_FLIGHT) await new Promise<void>((resolve) => (wake = resolve));
    },
    async digest() {
      worker.postMessage({ id: 1 });
      try {
        const [[, hash]] = (await finished) as [[HashAlgorithm, string]];
        return { hash, size };
      } finally {
        await worker.terminate();
      }
    },
    async close() {
      await worker.terminate();
    },
  };
}

/**
 * The file-hashing thread: reads the file itself (and writes each chunk to
 * `copyTo` when asked), so the calling thread is left free.
 */
const FILE_HASH_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { openSync, readSync, writeSync, closeSync } = require('node:fs');
const hash = createHash(workerData.algorithm);
const buf = Buffer.allocUnsafe(1024 * 1024);
const fd = openSync(workerData.path, 'r');
const out = workerData.copyTo ? openSync(workerData.copyTo, 'wx', 0o600) : undefined;
let size = 0;
try {
  for (;;) {
    const n = readSync(fd, buf, 0, buf.length, null);
    if (n === 0) break;
    const chunk = n === buf.length ? buf : buf.subarray(0, n);
    hash.update(chunk);
    if (out !== undefined) for (let at = 0; at < n; ) at += writeSync(out, chunk, at, n - at);
    size += n;
  }
} finally {
  closeSync(fd);
  if (out !== undefined) closeSync(out);
}
parentPort.postMessage({ hash: hash.digest('hex'), size });
`;

/**
 * A whole file's digest (hex) and size, computed by a thread of its own
 * that reads the file: it runs beside whatever the caller does meanwhile
 * (onboarding validates the package while its copy is made and hashed).
 * With `copyTo`, the bytes hashed are written there as they are read (a new
 * file, 0600): the copy and its hash in one reading.
 */
export async function hashFileOffThread(path: string, opts: { algorithm?: HashAlgorithm; copyTo?: string } = {}): Promise<{ hash: string; size: number }> {
  const worker = new Worker(FILE_HASH_WORKER, { eval: true, execArgv: [], workerData: { path, algorithm: opts.algorithm ?? 'sha256', copyTo: opts.copyTo } });
  try {
    return await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the hashing thread for ${path} ended (${code}) without a digest`)));
    });
  } finally {
    await worker.terminate();
  }
}

/**
 * Checks every declaration whose member is in the package (absent members
 * are the caller's finding: it knows where they were listed). Returns
 * `hash-mismatch` findings, stream failures as their own findings, and
 * `hash-not-checked` infos for skipped images; sorted by member.
 */
export async function verifyHashes(files: PackageFiles, declarations: readonly HashDeclaration[], opts: VerifyHashesOptions = {}): Promise<Finding[]> {
  const byPath = new Map<string, HashDeclaration[]>();
  for (const d of declarations) {
    if (!files.has(d.path)) continue;
    byPath.set(d.path, [...(byPath.get(d.path) ?? []), d]);
  }
  for (const p of opts.alsoRead ?? []) if (files.has(p) && !byPath.has(p)) byPath.set(p, []);

  const skipped = (path: string, decls: readonly HashDeclaration[]) => opts.skipImageHashes === true && (isImageFile(path) || decls.some((d) => d.node !== undefined));
  // The members are streamed in the order the package plans (a zip's: as they lie in the file, one reading).
  const streamed = [...byPath].filter(([path, decls]) => !skipped(path, decls)).map(([path]) => path);
  const plan = readingPlan(files);
  const ordered = plan ? await plan(streamed) : streamed.sort();
  const order = [...ordered, ...[...byPath.keys()].filter((p) => !ordered.includes(p))];

  const results = await mapLimit(
    order.map((path) => [path, byPath.get(path)!] as const),
    opts.concurrency ?? 4,
    async ([path, decls]) => {
      const findings: Finding[] = [];
      if (skipped(path, decls)) {
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
        digests = await hashMember(
          files,
          path,
          decls.map((d) => d.algorithm),
        );
      } catch (err) {
        return findingsFromError(err, path);
      }
      for (const d of decls) {
        const actual = digests.get(d.algorithm)!;
        if (actual !== d.expected.toLowerCase() && d.node !== undefined) findings.push(imageMismatch(d, actual));
        else if (actual !== d.expected.toLowerCase()) {
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
    },
  );
  // Reported by member, whatever order they were read in.
  const byMember = new Map(order.map((path, i) => [path, results[i]!]));
  return [...byMember.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).flatMap((path) => byMember.get(path)!);
}

/** A sw_image_data checksum the image in the package does not have: the VNFD's finding, at the checksum's line. */
function imageMismatch(d: HashDeclaration, actual: string): Finding {
  return {
    severity: 'error',
    code: 'sw-image-checksum-mismatch',
    file: d.declaredIn,
    ...(d.line !== undefined ? { line: d.line } : {}),
    message: `the sw_image_data of ${d.node} declares ${algorithmLabel(d.algorithm)} ${d.expected} for ${d.path}, but ${d.path} has ${actual}`,
    hint: `if ${d.path} is the image ${d.node} should boot, set its checksum.hash to ${actual}; otherwise the package carries another image than the VNFD describes: put the right one at ${d.path}`,
  };
}
