/**
 * Reading the files an operator names (request files, vim-configs,
 * kubeconfigs, clouds.yaml, Heat environments, key files): regular files
 * only, of bounded size, and opened so that a FIFO or a device never blocks
 * or streams forever. Shared by every room that reads such a file, as
 * errors.ts is; callers turn a FileReadError into their own ValidationError
 * or UsageError naming the flag or field that pointed here.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';

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
