/**
 * vnfm's stdout and stderr writers (src/cli/stdio.ts) on real descriptors:
 * a file, /dev/null, a closed pipe, and a non-blocking FIFO that fills up.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { descriptorStream, isTerminal } from '../../src/cli/stdio.js';

const work = mkdtempSync(join(tmpdir(), 'vnfm-stdio-'));

/** A stream standing in for Node's process.stdout: what it is given, in order. */
function collector() {
  const got: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      got.push(Buffer.from(chunk));
      cb();
    },
  });
  return { stream, text: () => Buffer.concat(got).toString() };
}

describe('descriptor writers', () => {
  it('write text whole to the descriptor, and build the stream only for more than write and isTTY', () => {
    const file = join(work, 'out.txt');
    const fd = openSync(file, 'w');
    let built = 0;
    const c = collector();
    const out = descriptorStream(fd, () => (built++, c.stream));
    expect(out.write('one ✓\n')).toBe(true);
    out.write(Buffer.from('two\n'));
    expect(out.isTTY).toBeUndefined();
    expect(built).toBe(0);
    // Anything else is the stream's, and later writes go through it, after what the descriptor got.
    expect(typeof out.once).toBe('function');
    expect(built).toBe(1);
    out.write('three\n');
    closeSync(fd);
    expect(readFileSync(file, 'utf8')).toBe('one ✓\ntwo\n');
    expect(c.text()).toBe('three\n');
    expect(out instanceof Writable).toBe(true);
  });

  it('tell a terminal without the tty module where the answer is plain: a file and /dev/null are not', () => {
    const fd = openSync('/dev/null', 'w');
    expect(isTerminal(fd)).toBe(false);
    closeSync(fd);
    expect(isTerminal(openSync(join(work, 'f'), 'w'))).toBe(false);
    expect(isTerminal(987654)).toBe(false);
  });

  it('hand the rest to the stream when a non-blocking descriptor refuses a write (EAGAIN), in order', () => {
    const fifo = join(work, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    const c = collector();
    const out = descriptorStream(writer, () => c.stream);
    // More than a pipe holds (64 KiB on Linux): the kernel takes part, then says EAGAIN.
    const text = Array.from({ length: 40_000 }, (_, i) => `${i}\n`).join('');
    out.write(text);
    out.write('after\n');
    const got = Buffer.alloc(text.length + 16);
    let n = 0;
    for (;;) {
      try {
        const r = readSync(reader, got, n, got.length - n, null);
        if (r === 0) break;
        n += r;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') break;
        throw err;
      }
    }
    closeSync(writer);
    closeSync(reader);
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThan(text.length);
    expect(got.subarray(0, n).toString() + c.text()).toBe(text + 'after\n');
  });

  it('drop what follows a closed pipe (EPIPE) without throwing or building the stream', () => {
    const fifo = join(work, 'gone');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY);
    let built = 0;
    const out = descriptorStream(writer, () => (built++, collector().stream));
    closeSync(reader);
    expect(out.write('nobody reads this\n')).toBe(true);
    expect(out.write('nor this\n')).toBe(true);
    expect(built).toBe(0);
    closeSync(writer);
  });
});
