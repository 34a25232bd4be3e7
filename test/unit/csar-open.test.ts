import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkCsarStructure } from '../../src/csar/check-structure.js';
import type { Finding } from '../../src/model/package-files.js';
import { openPackage, type PackageLimits } from '../../src/csar/open-package.js';
import { PackageError } from '../../src/csar/package-error.js';
import { buildZip, goodPackageMembers, type BuildZipOptions, type RawEntry, zeroBomb } from '../support/zip-builder.js';

const tmp = mkdtempSync(join(tmpdir(), 'vnfm-csar-open-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
function writeZip(entries: RawEntry[], opts?: BuildZipOptions): string {
  const file = join(tmp, `p${n++}.zip`);
  writeFileSync(file, buildZip(entries, opts));
  return file;
}

/** Opens and validates; a fatal open error becomes its findings. */
async function validate(path: string, limits?: Partial<PackageLimits>): Promise<Finding[]> {
  let files;
  try {
    files = await openPackage(path, limits);
  } catch (err) {
    if (err instanceof PackageError) return err.findings;
    throw err;
  }
  try {
    return (await checkCsarStructure(files)).findings;
  } finally {
    await files.close();
  }
}

/** Members of 16 MiB of zeros each (about 16 KiB compressed): each exactly at the per-member ratio floor. */
function manyZeroMembers(count: number, declaredSize?: number): RawEntry[] {
  const b = zeroBomb(1);
  return Array.from({ length: count }, (_, i) => ({ name: `Files/zeros/${i}.bin`, payload: b.payload, size: declaredSize ?? b.size, crc: 0 }));
}

const errorsOf = (fs: Finding[]) => fs.filter((f) => f.severity === 'error').map((f) => ({ code: f.code, file: f.file }));
const good = goodPackageMembers();
const symlinkMode = 0o120777;

describe('hostile and broken zips', () => {
  const cases: Array<{ name: string; entries: () => RawEntry[]; opts?: BuildZipOptions; limits?: Partial<PackageLimits>; code: string; file?: string | 'ORIGIN' }> = [
    { name: "a '..' member", entries: () => [...good, { name: '../evil.sh', data: 'x' }], code: 'zip-slip', file: '../evil.sh' },
    { name: "a nested '..' member", entries: () => [...good, { name: 'Files/../../evil', data: 'x' }], code: 'zip-slip', file: 'Files/../../evil' },
    { name: 'an absolute member', entries: () => [...good, { name: '/etc/cron.d/evil', data: 'x' }], code: 'zip-slip', file: '/etc/cron.d/evil' },
    { name: 'a drive letter', entries: () => [...good, { name: 'C:/Windows/evil.dll', data: 'x' }], code: 'zip-slip', file: 'C:/Windows/evil.dll' },
    { name: 'backslashes that escape', entries: () => [...good, { name: '..\\..\\evil', data: 'x' }], code: 'zip-slip', file: '..\\..\\evil' },
    { name: 'a NUL byte in a name', entries: () => [...good, { name: 'Files/a\0.yaml', data: 'x' }], code: 'zip-slip', file: 'Files/a\0.yaml' },
    { name: "a '..' directory entry", entries: () => [...good, { name: '../outside/', data: '' }], code: 'zip-slip', file: '../outside/' },
    { name: 'a symlink member', entries: () => [...good, { name: 'Files/link', data: '/etc/passwd', method: 0, mode: symlinkMode }], code: 'symlink', file: 'Files/link' },
    { name: 'a FIFO member', entries: () => [...good, { name: 'Files/fifo', data: '', method: 0, mode: 0o010644 }], code: 'special-file', file: 'Files/fifo' },
    { name: 'a device member', entries: () => [...good, { name: 'Files/sda', data: '', method: 0, mode: 0o060644 }], code: 'special-file', file: 'Files/sda' },
    { name: 'a duplicate name', entries: () => [...good, { name: 'Files/a.txt', data: '1' }, { name: 'Files/a.txt', data: '2' }], code: 'duplicate-name', file: 'Files/a.txt' },
    {
      name: 'a duplicate after normalisation',
      entries: () => [...good, { name: 'Files/a.txt', data: '1' }, { name: './Files//a.txt', data: '2' }],
      code: 'duplicate-name',
      file: './Files//a.txt',
    },
    { name: 'an encrypted member', entries: () => [...good, { name: 'Files/secret', data: 'x', flags: 1 }], code: 'zip-encrypted', file: 'Files/secret' },
    {
      name: 'an AES (method 99) member',
      entries: () => [...good, { name: 'Files/aes', data: 'x', method: 99, payload: Buffer.from('x') }],
      code: 'zip-encrypted',
      file: 'Files/aes',
    },
    {
      name: 'an unknown method',
      entries: () => [...good, { name: 'Files/bz', data: 'x', method: 12, payload: Buffer.from('BZh') }],
      code: 'zip-unsupported-method',
      file: 'Files/bz',
    },
    {
      name: 'a declared zip bomb (1 GiB of zeros in 1 MiB)',
      entries: () => {
        const b = zeroBomb(64);
        return [...good, { name: 'Files/zeros.bin', payload: b.payload, size: b.size, crc: 0 }];
      },
      code: 'zip-bomb',
      file: 'Files/zeros.bin',
    },
    {
      name: 'a bomb declared small (inflates past its size)',
      entries: () => {
        const b = zeroBomb(64);
        return [...good, { name: 'Files/small.bin', payload: b.payload, size: 1000, crc: 0 }];
      },
      code: 'zip-size-mismatch',
      file: 'Files/small.bin',
    },
    { name: 'a member shorter than declared', entries: () => [...good, { name: 'Files/short', data: 'hello', size: 10 }], code: 'zip-size-mismatch', file: 'Files/short' },
    { name: 'a stored member whose sizes differ', entries: () => [...good, { name: 'Files/st', data: 'hello', method: 0, size: 3 }], code: 'zip-size-mismatch', file: 'Files/st' },
    { name: 'a bad CRC', entries: () => [...good, { name: 'Files/crc', data: 'hello world', crc: 1234 }], code: 'zip-crc-mismatch', file: 'Files/crc' },
    {
      name: 'corrupt deflate data',
      entries: () => [...good, { name: 'Files/junk', data: 'abc', payload: Buffer.from([0xff, 0xff, 0xff, 0xff]) }],
      code: 'zip-corrupt',
      file: 'Files/junk',
    },
    { name: 'a local name that differs', entries: () => [...good, { name: 'Files/a', data: 'x', localName: '../../a' }], code: 'zip-header-mismatch', file: 'Files/a' },
    {
      name: 'overlapping members',
      entries: () => [...good, { name: 'Files/a', data: 'x'.repeat(100) }, { name: 'Files/b', data: 'x'.repeat(100), sameOffsetAs: 2 }],
      code: 'zip-overlap',
      file: 'Files/a',
    },
    { name: 'a truncated central directory', entries: () => good, opts: { truncateCentralDirectory: 10 }, code: 'zip-corrupt', file: 'ORIGIN' },
    { name: 'a wrong entry count', entries: () => good, opts: { entryCount: 3 }, code: 'zip-corrupt', file: 'ORIGIN' },
    { name: 'a multi-disk archive', entries: () => good, opts: { diskNumber: 2 }, code: 'zip-multi-disk', file: 'ORIGIN' },
    {
      name: 'too many members',
      entries: () => [...good, ...Array.from({ length: 20 }, (_, i) => ({ name: `Files/${i}`, data: 'x' }))],
      limits: { maxMembers: 10 },
      code: 'too-many-members',
      file: 'ORIGIN',
    },
    {
      name: 'a member over the size limit',
      entries: () => [...good, { name: 'Files/big', data: 'x'.repeat(5000) }],
      limits: { maxMemberBytes: 4096 },
      code: 'member-too-large',
      file: 'Files/big',
    },
    {
      name: 'a package over the total limit',
      entries: () => [...good, { name: 'Files/a', data: 'x'.repeat(3000) }, { name: 'Files/b', data: 'x'.repeat(3000) }],
      limits: { maxTotalBytes: 5000 },
      code: 'package-too-large',
      file: 'ORIGIN',
    },
    {
      name: 'a bomb of many members each at the ratio floor (300 × 16 MiB of zeros)',
      entries: () => [...good, ...manyZeroMembers(300)],
      code: 'zip-bomb',
      file: 'ORIGIN',
    },
    {
      name: 'a package over the default total limit',
      entries: () => [...good, ...Array.from({ length: 9 }, (_, i) => ({ name: `Files/images/${i}.img`, payload: Buffer.alloc(8), size: 1024 ** 3, crc: 0 }))],
      limits: { maxRatio: 1e12 },
      code: 'package-too-large',
      file: 'ORIGIN',
    },
    { name: 'a file also used as a folder', entries: () => [...good, { name: 'Files/a', data: 'x' }, { name: 'Files/a/b', data: 'y' }], code: 'path-conflict', file: 'Files/a' },
  ];

  it.each(cases)('refuses $name with $code', async ({ entries, opts, limits, code, file }) => {
    const path = writeZip(entries(), opts);
    const errs = errorsOf(await validate(path, limits));
    expect(errs).toContainEqual({ code, file: file === 'ORIGIN' ? path : file });
  });

  it('reports every hostile member at once, and still checks the rest', async () => {
    const path = writeZip([
      ...good,
      { name: '../a', data: 'x' },
      { name: '/b', data: 'x' },
      { name: 'Files/l', data: 'x', method: 0, mode: symlinkMode },
      { name: 'Files/c', data: 'hello', crc: 1 },
    ]);
    const codes = errorsOf(await validate(path)).map((f) => f.code);
    expect(codes).toEqual(['zip-slip', 'zip-slip', 'symlink', 'zip-crc-mismatch']);
  });

  it('keeps refused members out of list()', async () => {
    const files = await openPackage(writeZip([...good, { name: '../a', data: 'x' }, { name: 'Files/l', data: 'x', method: 0, mode: symlinkMode }]));
    expect(files.list()).toEqual(['Definitions/top.yaml', 'TOSCA-Metadata/TOSCA.meta']);
    expect(() => files.size('Files/l')).toThrow(PackageError);
    await files.close();
  });

  it('refuses a file that is not a zip', async () => {
    const path = join(tmp, 'notzip.csar');
    writeFileSync(path, 'just text, no zip here\n'.repeat(10));
    expect(errorsOf(await validate(path))).toEqual([{ code: 'not-a-zip', file: path }]);
  });

  it('stops inflating a bomb at its declared size without reading it all', async () => {
    const b = zeroBomb(64);
    const path = writeZip([...good, { name: 'Files/small.bin', payload: b.payload, size: 1000, crc: 0 }]);
    const files = await openPackage(path);
    let seen = 0;
    await expect(
      (async () => {
        for await (const c of await files.stream('Files/small.bin')) seen += (c as Buffer).length;
      })(),
    ).rejects.toMatchObject({ code: 'zip-size-mismatch' });
    expect(seen).toBeLessThanOrEqual(1000);
    await files.close();
  });
});

describe('package-wide limits', () => {
  it('refuses the many-member bomb from its central directory, naming the limit and the flag', async () => {
    const path = writeZip([...good, ...manyZeroMembers(300)]);
    const err = await openPackage(path).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PackageError);
    const f = (err as PackageError).findings[0]!;
    expect(f.code).toBe('zip-bomb');
    expect(f.message).toMatch(/inflates \d+ compressed bytes to 50331649\d\d \(4\.7 GiB, ratio 10\d\d\), more than the ratio limit of 200: refused as a zip bomb$/);
    expect(f.hint).toMatch(/--max-ratio \d+/);
    // The same package is let in when the operator raises the ratio (and nothing else is wrong with it).
    const files = await openPackage(path, { maxRatio: 100_000 });
    expect(files.list()).toHaveLength(302);
    await files.close();
  });

  it('names --max-unpacked-size and --max-members with a value that would let the package in', async () => {
    const big = writeZip([...good, { name: 'Files/images/a.img', payload: Buffer.alloc(8), size: 9 * 1024 ** 3 + 1, crc: 0, zip64: true }]);
    const e1 = (await openPackage(big, { maxRatio: 1e12 }).catch((e: unknown) => e)) as PackageError;
    expect(e1.findings[0]).toMatchObject({ code: 'package-too-large', hint: expect.stringMatching(/--max-unpacked-size 10GiB$/) });
    expect(e1.findings[0]!.message).toMatch(/more than the limit of 8 GiB/);
    const many = writeZip([...good, ...Array.from({ length: 20 }, (_, i) => ({ name: `Files/${i}`, data: 'x' }))]);
    const e2 = (await openPackage(many, { maxMembers: 10 }).catch((e: unknown) => e)) as PackageError;
    expect(e2.findings[0]).toMatchObject({ code: 'too-many-members', hint: expect.stringMatching(/--max-members 22$/) });
  });

  it('stops a member whose central directory understates its size while inflating, at the declared size', async () => {
    const path = writeZip([...good, ...manyZeroMembers(3, 1000)]);
    const files = await openPackage(path);
    let seen = 0;
    await expect(
      (async () => {
        for await (const c of await files.stream('Files/zeros/0.bin')) seen += (c as Buffer).length;
      })(),
    ).rejects.toMatchObject({ code: 'zip-size-mismatch' });
    expect(seen).toBeLessThanOrEqual(1000);
    await files.close();
  });

  it('lets in a package whose large member barely compresses (a container image tarball)', async () => {
    const noise = Buffer.alloc(24 * 1024 * 1024);
    for (let i = 0; i < noise.length; i += 4) noise.writeUInt32LE((Math.imul(i, 2654435761) ^ (i >>> 7)) >>> 0, i);
    const path = writeZip([...good, { name: 'Files/images/image.tar', data: noise, method: 0 }, { name: 'Files/chart/values.yaml', data: 'replicas: 1\n'.repeat(2000) }]);
    const files = await openPackage(path);
    expect(files.findings).toEqual([]);
    expect(errorsOf((await checkCsarStructure(files)).findings)).toEqual([]);
    await files.close();
  });
});

describe('good zips', () => {
  it('reads STORE and DEFLATE members, UTF-8 names and a BOM', async () => {
    const path = writeZip([
      ...good,
      { name: 'Files/stored.txt', data: 'stored', method: 0 },
      { name: 'Files/deflated.txt', data: 'deflated '.repeat(100) },
      { name: 'Files/ünïcode.txt', data: '\ufeffhi', flags: 0x800 },
      { name: 'Files/', data: '' },
      { name: 'Files/empty', data: '', method: 0 },
    ]);
    const files = await openPackage(path);
    expect(files.kind).toBe('zip');
    expect(files.findings).toEqual([]);
    expect(await files.readText('Files/stored.txt')).toBe('stored');
    expect(await files.readText('Files/deflated.txt')).toBe('deflated '.repeat(100));
    expect(await files.readText('Files/ünïcode.txt')).toBe('hi');
    expect(await files.readText('Files/empty')).toBe('');
    expect(files.size('Files/deflated.txt')).toBe(900);
    await expect(files.readText('Files/deflated.txt', 100)).rejects.toMatchObject({ code: 'text-too-large' });
    const { findings } = await checkCsarStructure(files);
    expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
    await files.close();
  });

  it('reads ZIP64 members and end records', async () => {
    const path = writeZip(
      [
        { ...good[0]!, zip64: true },
        { ...good[1]!, zip64: true, method: 0 },
        { name: 'Files/z.txt', data: 'zip64 '.repeat(50), zip64: true },
      ],
      { zip64End: true },
    );
    const files = await openPackage(path);
    expect(files.list()).toEqual(['Definitions/top.yaml', 'Files/z.txt', 'TOSCA-Metadata/TOSCA.meta']);
    expect(await files.readText('Files/z.txt')).toBe('zip64 '.repeat(50));
    expect(errorsOf((await checkCsarStructure(files)).findings)).toEqual([]);
    await files.close();
  });

  it('accepts a zip made by Info-ZIP', async () => {
    const dir = join(tmp, 'infozip');
    mkdirSync(join(dir, 'TOSCA-Metadata'), { recursive: true });
    mkdirSync(join(dir, 'Definitions'));
    writeFileSync(join(dir, 'TOSCA-Metadata/TOSCA.meta'), 'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-by: t\nEntry-Definitions: Definitions/top.yaml\n');
    writeFileSync(join(dir, 'Definitions/top.yaml'), 'tosca_definitions_version: tosca_simple_yaml_1_2\n'.repeat(100));
    const out = join(tmp, 'infozip.zip');
    execFileSync('zip', ['-qr', out, '.'], { cwd: dir });
    const files = await openPackage(out);
    expect(files.findings).toEqual([]);
    expect(errorsOf((await checkCsarStructure(files)).findings)).toEqual([]);
    await files.close();
  });
});

describe('directories', () => {
  function tree(): string {
    const dir = mkdtempSync(join(tmp, 'dir-'));
    mkdirSync(join(dir, 'TOSCA-Metadata'));
    mkdirSync(join(dir, 'Definitions'));
    writeFileSync(join(dir, 'TOSCA-Metadata/TOSCA.meta'), good[0]!.data as string);
    writeFileSync(join(dir, 'Definitions/top.yaml'), good[1]!.data as string);
    return dir;
  }

  it('reads a clean tree', async () => {
    const files = await openPackage(tree());
    expect(files.kind).toBe('directory');
    expect(files.list()).toEqual(['Definitions/top.yaml', 'TOSCA-Metadata/TOSCA.meta']);
    expect(errorsOf((await checkCsarStructure(files)).findings)).toEqual([]);
  });

  it('refuses symlinks, inside or out', async () => {
    const dir = tree();
    symlinkSync('/etc/passwd', join(dir, 'Definitions/out'));
    symlinkSync('top.yaml', join(dir, 'Definitions/in.yaml'));
    const files = await openPackage(dir);
    expect(errorsOf([...files.findings])).toEqual([
      { code: 'symlink', file: 'Definitions/in.yaml' },
      { code: 'symlink', file: 'Definitions/out' },
    ]);
    expect(files.findings.find((f) => f.file === 'Definitions/out')?.message).toMatch(/outside the package/);
    expect(files.has('Definitions/out')).toBe(false);
  });

  it('refuses special files', async () => {
    const dir = tree();
    execFileSync('mkfifo', [join(dir, 'Files-fifo')]);
    const files = await openPackage(dir);
    expect(errorsOf([...files.findings])).toEqual([{ code: 'special-file', file: 'Files-fifo' }]);
  });

  it('applies the size and member limits', async () => {
    const dir = tree();
    writeFileSync(join(dir, 'big.bin'), Buffer.alloc(5000));
    const files = await openPackage(dir, { maxMemberBytes: 4096 });
    expect(errorsOf([...files.findings])).toEqual([{ code: 'member-too-large', file: 'big.bin' }]);
    await expect(openPackage(dir, { maxMembers: 2 })).rejects.toMatchObject({ code: 'too-many-members' });
    await expect(openPackage(dir, { maxTotalBytes: 1000 })).rejects.toMatchObject({ code: 'package-too-large' });
  });

  it('refuses a file swapped for a FIFO after it was listed, without blocking', async () => {
    const dir = tree();
    const files = await openPackage(dir);
    rmSync(join(dir, 'Definitions/top.yaml'));
    execFileSync('mkfifo', [join(dir, 'Definitions/top.yaml')]);
    await expect(files.readText('Definitions/top.yaml')).rejects.toMatchObject({ code: 'special-file' });
  });

  it('notices a file that grew after it was listed', async () => {
    const dir = tree();
    const files = await openPackage(dir);
    writeFileSync(join(dir, 'Definitions/top.yaml'), 'x'.repeat(10_000));
    await expect(files.readText('Definitions/top.yaml')).rejects.toMatchObject({ code: 'zip-size-mismatch' });
  });
});
