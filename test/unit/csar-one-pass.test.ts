/**
 * Onboarding reads a zip once: validation's member streams and a tap that
 * sees every byte of the file come from one sequential reading. The tap gets
 * the file exactly; the members are still checked (CRC, declared hashes);
 * onboarding records the SHA-256 of the zip it stores, byte for byte the
 * zip given.
 */
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCsar } from '../../src/csar/build.js';
import { hashingTap } from '../../src/csar/hashes.js';
import { onboardPackage, packageZip } from '../../src/csar/packages.js';
import { validatePackage } from '../../src/csar/validate.js';
import type { FileTap } from '../../src/csar/zip-pass.js';
import { openStore } from '../../src/store/index.js';

const MiB = 1024 * 1024;
const samples = resolve(import.meta.dirname, '../../csar-samples');
let work: string;
let zip: string;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A tap that keeps what it is given (copied: a chunk is valid during the call only), taking a while over some chunks. */
function keepingTap(): FileTap & { bytes: () => Buffer; calls: number } {
  const kept: Buffer[] = [];
  const tap = {
    calls: 0,
    async write(chunk: Buffer) {
      kept.push(Buffer.from(chunk));
      if (++tap.calls % 3 === 0) await new Promise((r) => setTimeout(r, 5));
    },
    bytes: () => Buffer.concat(kept),
  };
  return tap;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'vnfm-one-pass-'));
  const tree = join(work, 'tree');
  cpSync(join(samples, 'basic-cnf/package'), tree, { recursive: true });
  // A stored image larger than a pass's chunk and than the size hashed off the main thread, and a deflated member of several chunks.
  appendFileSync(
    join(tree, 'TOSCA-Metadata/TOSCA.meta'),
    '\nName: Files/images/disk.qcow2\nContent-Type: application/x-iso9066-image\n\nName: Files/data/table.txt\nContent-Type: text/plain\n',
  );
  mkdirSync(join(tree, 'Files/images'), { recursive: true });
  mkdirSync(join(tree, 'Files/data'), { recursive: true });
  writeFileSync(join(tree, 'Files/images/disk.qcow2'), randomBytes(18 * MiB + 12345));
  writeFileSync(join(tree, 'Files/data/table.txt'), Array.from({ length: 400_000 }, (_, i) => `row ${i} ${i % 97}\n`).join(''));
  zip = join(work, 'pkg.zip');
  await buildCsar(tree, zip);
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('one reading of a zip for validation and a tap', () => {
  it('hands the tap every byte of the file, in order, while the members are validated', async () => {
    const tap = keepingTap();
    const result = await validatePackage(zip, { tap });
    expect(result.findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(result.valid).toBe(true);
    const file = readFileSync(zip);
    expect(tap.bytes().length).toBe(file.length);
    expect(sha256(tap.bytes())).toBe(sha256(file));
  });

  it('still finds a damaged member: its bytes come from the pass and are checked as before', async () => {
    const file = readFileSync(zip);
    // A byte in the middle of the stored image (its data is the raw bytes: find them by content).
    const image = readFileSync(join(work, 'tree/Files/images/disk.qcow2'));
    const at = file.indexOf(image.subarray(9 * MiB, 9 * MiB + 64));
    expect(at).toBeGreaterThan(0);
    const bad = Buffer.from(file);
    bad[at + 10] = bad[at + 10]! ^ 0xff;
    const badZip = join(work, 'bad.zip');
    writeFileSync(badZip, bad);
    const tap = keepingTap();
    const result = await validatePackage(badZip, { tap });
    expect(result.valid).toBe(false);
    const codes = result.findings.filter((f) => f.file === 'Files/images/disk.qcow2').map((f) => f.code);
    expect(codes.some((c) => c === 'zip-crc-mismatch' || c === 'hash-mismatch')).toBe(true);
  });

  it('digests what the hashing tap is given, in its own thread', async () => {
    const tap = hashingTap();
    const parts = [randomBytes(3 * MiB), randomBytes(100), Buffer.alloc(0), randomBytes(5 * MiB + 7)];
    const want = sha256(Buffer.concat(parts));
    for (const p of parts) await tap.write(p);
    // The chunks are the caller's again once written: changing them changes nothing.
    for (const p of parts) p.fill(0);
    expect(await tap.digest()).toEqual({ hash: want, size: 8 * MiB + 107 });
  });

  it('onboards the zip byte for byte, with the SHA-256 of the file as its checksum', async () => {
    const home = join(work, 'home');
    const store = openStore(home);
    try {
      const { pkg } = await onboardPackage({ packages: store.packages, home, now: () => new Date() }, { path: zip });
      const file = readFileSync(zip);
      expect(pkg.checksum).toEqual({ algorithm: 'SHA-256', hash: sha256(file) });
      expect(pkg.sizeBytes).toBe(file.length);
      expect(readFileSync(packageZip(home, pkg.id)).equals(file)).toBe(true);
      expect(readdirSync(join(home, 'packages')).filter((n) => n.startsWith('.'))).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
