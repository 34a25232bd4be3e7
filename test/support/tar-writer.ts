/**
 * A small tar writer for hostile chart archives: ustar headers written byte
 * by byte (any name, type and link target, which `tar` refuses to create or
 * rewrites), with pax `path` records and GNU long names when asked. The
 * output is a real archive: GNU tar lists it and Helm reads it.
 */
import { gzipSync } from 'node:zlib';

export interface TarMember {
  name: string;
  /** Tar type flag: '0' file (default), '1' hard link, '2' symlink, '3' char device, '4' block device, '5' folder, '6' FIFO. */
  type?: string;
  data?: string | Buffer;
  linkname?: string;
  /** How the name is carried: the header's name field (default), a pax `path` record, or a GNU `L` long-name header. */
  nameAs?: 'header' | 'pax' | 'gnu';
}

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, type: string, size: number, linkname = '', magic: 'ustar' | 'gnu' = 'ustar'): Buffer {
  const h = Buffer.alloc(512);
  h.write(name.slice(0, 100), 0, 'utf8');
  h.write(octal(type === '5' ? 0o755 : 0o644, 8), 100, 'latin1');
  h.write(octal(0, 8), 108, 'latin1');
  h.write(octal(0, 8), 116, 'latin1');
  h.write(octal(size, 12), 124, 'latin1');
  h.write(octal(1_700_000_000, 12), 136, 'latin1');
  h.write(type, 156, 'latin1');
  h.write(linkname.slice(0, 100), 157, 'utf8');
  if (magic === 'ustar') h.write('ustar\x0000', 257, 'latin1');
  else h.write('ustar  \0', 257, 'latin1');
  h.fill(' ', 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148, 'latin1');
  return h;
}

const padded = (data: Buffer): Buffer => Buffer.concat([data, Buffer.alloc((512 - (data.length % 512)) % 512)]);

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = body.length + 1;
  while (String(len).length + body.length !== len) len = String(len).length + body.length;
  return `${len}${body}`;
}

/** The tar bytes of `members`, ended by two zero blocks. */
export function buildTar(members: TarMember[]): Buffer {
  const blocks: Buffer[] = [];
  for (const m of members) {
    const type = m.type ?? '0';
    const data = Buffer.from(m.data ?? '');
    let name = m.name;
    if (m.nameAs === 'pax') {
      const pax = Buffer.from(paxRecord('path', m.name));
      blocks.push(header('PaxHeaders/x', 'x', pax.length), padded(pax));
      name = 'placeholder';
    } else if (m.nameAs === 'gnu') {
      const long = Buffer.from(`${m.name}\0`);
      blocks.push(header('././@LongLink', 'L', long.length, '', 'gnu'), padded(long));
      name = m.name.slice(0, 99);
    }
    const size = type === '0' || type === '7' ? data.length : 0;
    blocks.push(header(name, type, size, m.linkname ?? '', m.nameAs === 'gnu' ? 'gnu' : 'ustar'));
    if (size > 0) blocks.push(padded(data));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

export const buildTarGz = (members: TarMember[]): Buffer => gzipSync(buildTar(members));
