/**
 * The checksums of a VNFD's software images (sw_image_data.checksum of a
 * Vdu.Compute or a VirtualBlockStorage) against the image files the package
 * carries, as vnfpkg-validate and vnfpkg-onboard check them (validateFiles):
 * a lying checksum is an error at the VNFD's line naming the node, the file,
 * the declared and the actual digest; each image is read once even when the
 * manifest hashes it too.
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateFiles } from '../../src/csar/validate.js';
import type { Finding, PackageFiles } from '../../src/model/package-files.js';
import { memoryPackage, readDirectoryTree } from '../support/memory-package.js';

const FIXTURE = resolve(import.meta.dirname, '../fixtures/vnfd/heat');
const DF = 'Definitions/heat_df_simple.yaml';
const IMAGE = 'Files/images/cirros-0.6.2-x86_64-disk.img';
const META = 'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: vnfm tests\nEntry-Definitions: Definitions/heat_top.vnfd.yaml\n';

type Members = Record<string, string>;

const digest = (alg: string, text: string) => createHash(alg).update(text).digest('hex');

async function members(): Promise<Members> {
  return { ...(await readDirectoryTree(FIXTURE)), 'TOSCA-Metadata/TOSCA.meta': META };
}

/** VDU1's checksum replaced by `algorithm` / `hash`. */
function withChecksum(m: Members, algorithm: string, hash: string): Members {
  const text = m[DF]!;
  const from = /algorithm: sha-256\n {12}hash: [0-9a-f]{64}/;
  if (!from.test(text)) throw new Error(`VDU1's checksum is no longer where the test expects it in ${DF}`);
  return { ...m, [DF]: text.replace(from, `algorithm: ${algorithm}\n            hash: ${hash}`) };
}

/** The 1-based line of the only line of `text` containing `marker`. */
function lineOf(text: string, marker: string): number {
  const hits = text.split('\n').flatMap((l, i) => (l.includes(marker) ? [i + 1] : []));
  if (hits.length !== 1) throw new Error(`${marker} is on ${hits.length} lines`);
  return hits[0]!;
}

/** The package, counting how often each member is streamed. */
function counted(m: Members): { files: PackageFiles; streams: Map<string, number> } {
  const inner = memoryPackage(m);
  const streams = new Map<string, number>();
  return {
    streams,
    files: {
      ...inner,
      stream: (path) => {
        streams.set(path, (streams.get(path) ?? 0) + 1);
        return inner.stream(path);
      },
    },
  };
}

const about = (findings: Finding[]) => findings.filter((f) => f.code.startsWith('sw-image') || f.code.startsWith('hash-'));

describe('software image checksums at validate and onboard', () => {
  it('passes when the image has the checksum the VNFD declares, reading the image once', async () => {
    const { files, streams } = counted(await members());
    const result = await validateFiles(files);
    expect(about(result.findings)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(streams.get(IMAGE)).toBe(1);
  });

  it('refuses an image whose content is not what sw_image_data declares: the node, the file, expected and actual, at the hash line', async () => {
    const m = await members();
    m[IMAGE] = 'a different disk image, swapped in after the VNFD was written\n';
    const result = await validateFiles(memoryPackage(m));
    expect(result.valid).toBe(false);
    const expected = digest('sha256', 'not a real disk image: the tests only need the member to exist\n');
    const actual = digest('sha256', m[IMAGE]);
    expect(about(result.findings)).toEqual([
      {
        severity: 'error',
        code: 'sw-image-checksum-mismatch',
        file: DF,
        line: lineOf(m[DF]!, `hash: ${expected}`),
        message: `the sw_image_data of VDU1 declares SHA-256 ${expected} for ${IMAGE}, but ${IMAGE} has ${actual}`,
        hint: expect.stringContaining(`set its checksum.hash to ${actual}`),
      },
    ]);
  });

  it.each([
    ['sha-512', 'sha512'],
    ['SHA-512', 'sha512'],
    ['sha512', 'sha512'],
    ['sha-384', 'sha384'],
    ['sha-224', 'sha224'],
    ['md5', 'md5'],
    ['MD5', 'md5'],
  ])('checks a checksum given as %s', async (written, alg) => {
    const good = await members();
    const right = withChecksum(good, written, digest(alg, good[IMAGE]!).toUpperCase());
    expect(about((await validateFiles(memoryPackage(right))).findings)).toEqual([]);
    const wrong = withChecksum(good, written, digest(alg, 'another image'));
    expect(about((await validateFiles(memoryPackage(wrong))).findings).map((f) => [f.severity, f.code])).toEqual([['error', 'sw-image-checksum-mismatch']]);
  });

  it('checks the manifest hash and the VNFD checksum of an image in the same reading', async () => {
    const m = await members();
    m['TOSCA-Metadata/TOSCA.meta'] = `${META}ETSI-Entry-Manifest: heat.mf\n`;
    m['heat.mf'] = [
      'metadata:',
      '  vnf_provider_id: Example',
      '  vnf_product_name: Heat',
      '  vnf_release_date_time: 2026-01-01T00:00:00Z',
      '  vnf_package_version: 1.0',
      '',
      `Source: ${IMAGE}`,
      'Algorithm: SHA-256',
      `Hash: ${digest('sha256', m[IMAGE]!)}`,
      '',
    ].join('\n');
    // The manifest is right; the VNFD's SHA-512 is of another image.
    const lying = withChecksum(m, 'sha-512', digest('sha512', 'another image'));
    const { files, streams } = counted(lying);
    const result = await validateFiles(files);
    expect(about(result.findings).map((f) => [f.code, f.file])).toEqual([['sw-image-checksum-mismatch', DF]]);
    expect(streams.get(IMAGE)).toBe(1);
  });

  it('says what it cannot check: an unknown algorithm (warning), a hash that is no digest (error), an image given by URL (note)', async () => {
    const good = await members();
    const crc = about((await validateFiles(memoryPackage(withChecksum(good, 'crc32', 'deadbeef')))).findings);
    expect(crc.map((f) => [f.severity, f.code])).toEqual([['warning', 'sw-image-checksum-unsupported']]);
    expect(crc[0]!.message).toMatch(/VDU1 .*"crc32".*not checked/);
    expect(crc[0]!.hint).toMatch(/sha-256.*md5/);

    const short = about((await validateFiles(memoryPackage(withChecksum(good, 'sha-256', 'abc123')))).findings);
    expect(short.map((f) => [f.severity, f.code, f.file])).toEqual([['error', 'sw-image-checksum-invalid', DF]]);
    expect(short[0]!.message).toMatch(/64 digits/);

    const url = { ...good, [DF]: good[DF]!.replace('file: ../Files/images/cirros-0.6.2-x86_64-disk.img', 'file: https://images.example.net/cirros.img') };
    const external = about((await validateFiles(memoryPackage(url))).findings);
    expect(external.map((f) => [f.severity, f.code, f.file])).toEqual([['info', 'sw-image-external', DF]]);
    expect(external[0]!.hint).toMatch(/image named cirros-0\.6\.2 must exist/);
  });

  it('an image file the VNFD names but the package lacks is an error', async () => {
    const m = await members();
    delete m[IMAGE];
    const result = await validateFiles(memoryPackage(m));
    expect(result.findings.filter((f) => f.severity === 'error').map((f) => [f.code, f.file])).toEqual([['artifact-file-missing', DF]]);
  });

  it('with skipImageHashes (as Tacker), the checksum is left unchecked with a note', async () => {
    const m = await members();
    m[IMAGE] = 'another image';
    const result = await validateFiles(memoryPackage(m), { skipImageHashes: true });
    expect(result.valid).toBe(true);
    expect(about(result.findings).map((f) => [f.severity, f.code, f.file])).toEqual([['info', 'hash-not-checked', IMAGE]]);
  });
});
