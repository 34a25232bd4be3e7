/**
 * Large members are hashed in a worker thread while the main thread reads:
 * the digests are those of the bytes, whatever buffers the stream hands
 * over (buffers of their own are moved, views into shared ones copied).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { hashFileOffThread, hashMember } from '../../src/csar/hashes.js';

const MiB = 1024 * 1024;

/** A PackageFiles with one member streamed as `chunks`, optionally failing after them. */
function filesOf(chunks: Buffer[], failAfter = false) {
  const size = chunks.reduce((n, c) => n + c.length, 0);
  return {
    origin: 'test.csar',
    list: () => ['Files/images/disk.qcow2'],
    has: () => true,
    size: () => size,
    readText: async () => '',
    close: async () => undefined,
    stream: async () =>
      Readable.from(
        (function* () {
          yield* chunks;
          if (failAfter) throw new Error('member Files/images/disk.qcow2 fails its CRC-32 check');
        })(),
        { objectMode: false },
      ),
  };
}

describe('hashing a large member off the main thread', () => {
  it('gives the digests of the bytes, for buffers of their own and views into a shared one', async () => {
    const shared = randomBytes(4 * MiB);
    const chunks = [
      ...Array.from({ length: 8 }, () => randomBytes(2 * MiB)), // buffers of their own (moved)
      shared.subarray(0, MiB),
      shared.subarray(MiB, 4 * MiB), // views into one buffer (copied)
      Buffer.from('tail'),
    ];
    const expected = (a: string) => {
      const h = createHash(a);
      for (const c of chunks) h.update(c);
      return h.digest('hex');
    };
    const want = { sha256: expected('sha256'), sha512: expected('sha512') };
    const got = await hashMember(filesOf(chunks) as never, 'Files/images/disk.qcow2', ['sha256', 'sha512', 'sha256']);
    expect(Object.fromEntries(got)).toEqual(want);
    // several members at once, each its own job
    const again = await Promise.all([1, 2, 3].map(() => hashMember(filesOf(Array.from({ length: 9 }, () => shared.subarray(0, 2 * MiB))) as never, 'm', ['sha256'])));
    const h = createHash('sha256');
    for (let i = 0; i < 9; i++) h.update(shared.subarray(0, 2 * MiB));
    const digest = h.digest('hex');
    expect(again.map((m) => m.get('sha256'))).toEqual([digest, digest, digest]);
  });

  it('a stream that fails mid-member fails the hash with its error', async () => {
    const chunks = Array.from({ length: 10 }, () => randomBytes(2 * MiB));
    await expect(hashMember(filesOf(chunks, true) as never, 'Files/images/disk.qcow2', ['sha256'])).rejects.toThrow(/CRC-32/);
  });
});

describe('a whole file hashed in a thread of its own', () => {
  it('gives the digest and size of the file, and with copyTo writes the same bytes to a new file only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vnfm-hash-file-'));
    try {
      const bytes = randomBytes(3 * MiB + 17);
      const from = join(dir, 'package.zip');
      writeFileSync(from, bytes);
      const expected = { hash: createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
      expect(await hashFileOffThread(from)).toEqual(expected);
      expect(await hashFileOffThread(from, { algorithm: 'sha512' })).toEqual({ hash: createHash('sha512').update(bytes).digest('hex'), size: bytes.length });

      const to = join(dir, 'copy.zip');
      expect(await hashFileOffThread(from, { copyTo: to })).toEqual(expected);
      expect(readFileSync(to).equals(bytes)).toBe(true);
      expect(statSync(to).mode & 0o777).toBe(0o600);
      // An existing file is never overwritten.
      await expect(hashFileOffThread(from, { copyTo: to })).rejects.toThrow(/EEXIST/);
      await expect(hashFileOffThread(join(dir, 'missing.zip'))).rejects.toThrow(/ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
