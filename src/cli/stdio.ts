/**
 * The process's standard output and error as vnfm writes them. Node builds
 * `process.stdout` and `process.stderr` on first use, loading its stream
 * classes (and, for a pipe or a terminal, its socket or terminal classes):
 * more CPU than the rest of a short command such as `vim-list`. What vnfm
 * writes is text, written whole, so it goes to the descriptor itself, as
 * Node's own streams write on Linux anyway (synchronously, for files, pipes
 * and terminals alike), and the stream is built only when something asks for
 * more than `write` and `isTTY` (a pipe into it, a wait for 'drain', a
 * terminal's width): from then on every write goes through it, after all that
 * went before.
 *
 * A reader that stops early (`vnfm vnf-list | head -1`) closes the pipe: the
 * rest of the output has nowhere to go, which is not vnfm's failure. The
 * command ends quietly with its own exit code, as Unix tools do on SIGPIPE,
 * instead of dying on an unhandled EPIPE with a stack trace: here, and in the
 * stream once it is built (quietOnClosedPipe).
 */
import { fstatSync, writeSync } from 'node:fs';
import { isatty } from 'node:tty';
import type { Streams } from './io.js';

type Out = Streams['stdout'];

/** Linux's character devices of major 1 (/dev/null, /dev/zero, /dev/full...): never a terminal. */
const MEMORY_DEVICES = 1;

/**
 * Whether a descriptor is a terminal, without Node's tty module where the
 * answer is plain: a file, a pipe or /dev/null is not. A character device
 * that may be one is asked as Node asks (tty.isatty).
 */
export function isTerminal(fd: number): boolean {
  let st;
  try {
    st = fstatSync(fd);
  } catch {
    return false;
  }
  if (!st.isCharacterDevice()) return false;
  // Linux's st_rdev: the major number in bits 8-19 (and above 31, unused for character devices here).
  if (((st.rdev >> 8) & 0xfff) === MEMORY_DEVICES) return false;
  return isatty(fd);
}

class DescriptorWriter {
  private stream: Out | undefined;
  private closed = false;
  private terminal: boolean | undefined;

  constructor(
    private readonly fd: number,
    private readonly build: () => Out,
  ) {}

  /** The Node stream, built now, and every later write through it. */
  real(): Out {
    this.stream ??= this.build();
    return this.stream;
  }

  get isTTY(): boolean | undefined {
    if (this.stream) return this.stream.isTTY;
    this.terminal ??= isTerminal(this.fd);
    return this.terminal || undefined;
  }

  write(chunk: string | Uint8Array, encoding?: BufferEncoding | ((err?: Error | null) => void), cb?: (err?: Error | null) => void): boolean {
    const done = typeof encoding === 'function' ? encoding : cb;
    if (this.stream) return this.stream.write(chunk as string, encoding as BufferEncoding, done);
    if (!this.closed) {
      let bytes: Uint8Array | undefined = typeof chunk === 'string' ? undefined : chunk;
      let at = 0;
      try {
        if (typeof chunk === 'string') {
          // Text goes as it is (Node encodes it into the write): a Buffer only for what a short write leaves.
          const how = typeof encoding === 'string' ? encoding : 'utf8';
          at = writeSync(this.fd, chunk, null, how);
          if (at < Buffer.byteLength(chunk, how)) bytes = Buffer.from(chunk, how);
        }
        while (bytes && at < bytes.length) at += writeSync(this.fd, bytes, at, bytes.length - at);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') {
          this.closed = true;
        } else {
          // A descriptor Node's stream handles otherwise (non-blocking, EAGAIN): the rest goes through the stream.
          const rest = bytes ?? Buffer.from(chunk as string, typeof encoding === 'string' ? encoding : 'utf8');
          return this.real().write(rest.subarray(at), done);
        }
      }
    }
    if (done) process.nextTick(done);
    return true;
  }
}

/**
 * A writer to `fd` that is the stream `build` makes for anything but `write`
 * and `isTTY` (building it on that first use, or when the descriptor refuses a write).
 */
export function descriptorStream(fd: number, build: () => Out): Out {
  const writer = new DescriptorWriter(fd, build);
  return new Proxy(writer, {
    get(target, key) {
      if (key === 'write') return target.write.bind(target);
      if (key === 'isTTY') return target.isTTY;
      const real = target.real() as unknown as Record<PropertyKey, unknown>;
      const value = real[key];
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(real) : value;
    },
    set(target, key, value) {
      (target.real() as unknown as Record<PropertyKey, unknown>)[key] = value;
      return true;
    },
    has: (target, key) => key === 'write' || key === 'isTTY' || key in target.real(),
    getPrototypeOf: (target) => Object.getPrototypeOf(target.real()) as object | null,
  }) as unknown as Out;
}

/** The process's streams: stdout and stderr written to their descriptors, stdin taken when first read. */
export function processStreams(): Streams {
  return {
    get stdin() {
      return process.stdin;
    },
    stdout: descriptorStream(1, () => process.stdout),
    stderr: descriptorStream(2, () => process.stderr),
  };
}

/** The process's own streams, whenever something builds them, end quietly on a closed pipe too. */
export function quietOnClosedPipe(): void {
  for (const name of ['stdout', 'stderr'] as const) {
    const own = Object.getOwnPropertyDescriptor(process, name);
    if (!own?.get || !own.configurable) {
      quiet(process[name]);
      continue;
    }
    const build = own.get;
    let stream: NodeJS.WriteStream | undefined;
    Object.defineProperty(process, name, {
      ...own,
      get() {
        if (!stream) {
          stream = build.call(process) as NodeJS.WriteStream;
          quiet(stream);
        }
        return stream;
      },
    });
  }
}

function quiet(stream: NodeJS.WriteStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    stream.destroy();
  });
}
