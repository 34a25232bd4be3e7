/**
 * Reading the files an operator names (request files, vim-configs,
 * kubeconfigs, clouds.yaml, Heat environments, key files): regular files
 * only, of bounded size, and opened so that a FIFO or a device never blocks
 * or streams forever. Shared by every room that reads such a file, as
 * errors.ts is; callers turn a FileReadError into their own ValidationError
 * or UsageError naming the flag or field that pointed here.
 *
 * `-` (and `/dev/stdin`) names the standard input, as `kubectl apply -f -`:
 * read to its end, bounded as a file is, and kept, so that a command reading
 * its file twice (a vim-config: once to parse, once for line numbers) gets
 * the same bytes again. A terminal is refused rather than waited on.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { isatty } from 'node:tty';

/** A named file could not be used; `problem` reads after the path ("does not exist"). */
export class FileReadError extends Error {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path} ${problem}`);
  }
}

/** Most levels of nesting a document read from such a file may have (js-yaml's own bound). */
export const MAX_DOCUMENT_DEPTH = 100;

/**
 * The bytes of a regular file of at most `maxBytes`. Opened non-blocking, so
 * a FIFO with no writer does not hang the open; then checked on the opened
 * descriptor, so what is checked is what is read.
 */
export function readInputBytes(path: string, maxBytes: number): Buffer {
  if (isStdinPath(path)) return readStdin(path, maxBytes);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw new FileReadError(path, problemOf(err));
  }
  try {
    let st: Stats;
    try {
      st = fstatSync(fd);
    } catch (err) {
      throw new FileReadError(path, problemOf(err));
    }
    if (!st.isFile()) throw new FileReadError(path, `is ${kindOfFile(st)}, not a regular file`);
    if (st.size > maxBytes) throw new FileReadError(path, `is ${st.size} bytes, more than the ${maxBytes} accepted`);
    // Read one byte past the bound: a file that grew after the fstat is refused too.
    const buf = Buffer.alloc(Math.min(st.size, maxBytes) + 1);
    let done = 0;
    try {
      for (let n = 1; n > 0 && done < buf.length; done += n) n = readSync(fd, buf, done, buf.length - done, null);
    } catch (err) {
      throw new FileReadError(path, problemOf(err));
    }
    if (done > maxBytes) throw new FileReadError(path, `grew past the ${maxBytes} bytes accepted while being read`);
    return buf.subarray(0, done);
  } finally {
    closeSync(fd);
  }
}

/** `readInputBytes` as UTF-8 text (a byte-order mark dropped). */
export function readInputText(path: string, maxBytes: number): string {
  const text = readInputBytes(path, maxBytes).toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * How deep a parsed document nests, walking without recursion (a document
 * nested thousands deep would overflow the stack of whatever walks it
 * recursively later: JSON.stringify, structuredClone). Stops counting past `limit`.
 */
export function documentDepth(doc: unknown, limit = MAX_DOCUMENT_DEPTH): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[doc, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object' || node instanceof Date || node instanceof Uint8Array) continue;
    const level = depth + 1;
    if (level > deepest) deepest = level;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, level]);
  }
  return deepest;
}

/** The names of the standard input an operator may give for a file: `-`, and the paths a shell has for it. */
const STDIN_PATHS = new Set(['-', '/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);

/** Whether `path` names the standard input (`-`, `/dev/stdin`). */
export function isStdinPath(path: string): boolean {
  return STDIN_PATHS.has(path);
}

const STDIN_FD = 0;
const STDIN_CHUNK = 64 * 1024;
/** What the standard input held, once read to its end (or why it could not be). */
let stdinRead: { bytes: Buffer } | { problem: string } | undefined;

function readStdin(path: string, maxBytes: number): Buffer {
  stdinRead ??= readAllStdin(maxBytes);
  if ('problem' in stdinRead) throw new FileReadError(path, stdinRead.problem);
  if (stdinRead.bytes.length > maxBytes) throw new FileReadError(path, `(the standard input) is ${stdinRead.bytes.length} bytes, more than the ${maxBytes} accepted`);
  return stdinRead.bytes;
}

/**
 * The standard input to its end, at most `maxBytes` (one byte more tells
 * that it is longer). A pipe left non-blocking by whoever shares it answers
 * EAGAIN until its writer writes: waited for a moment, then read again.
 */
function readAllStdin(maxBytes: number): { bytes: Buffer } | { problem: string } {
  if (isatty(STDIN_FD)) return { problem: '(the standard input) is a terminal: pipe the file in (cat FILE | vnfm ...) or give its path' };
  const chunks: Buffer[] = [];
  let total = 0;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    const buf = Buffer.alloc(STDIN_CHUNK);
    let n: number;
    try {
      n = readSync(STDIN_FD, buf, 0, buf.length, null);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        Atomics.wait(pause, 0, 0, 10);
        continue;
      }
      if (code === 'EOF') break;
      return { problem: `(the standard input) cannot be read: ${code ?? String(err)}` };
    }
    if (n === 0) break;
    chunks.push(buf.subarray(0, n));
    total += n;
    if (total > maxBytes) return { problem: `(the standard input) is more than the ${maxBytes} bytes accepted` };
  }
  return { bytes: Buffer.concat(chunks, total) };
}

function kindOfFile(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return 'something else';
}

function problemOf(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'does not exist';
  if (code === 'EACCES') return 'cannot be read: permission denied';
  if (code === 'EISDIR') return 'is a directory, not a regular file';
  return `cannot be read: ${code ?? String(err)}`;
}
