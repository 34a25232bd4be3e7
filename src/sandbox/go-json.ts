/**
 * What the API server's JSON decoder (Go's encoding/json) says of a
 * malformed body. Go checks the whole input's syntax before it decodes
 * anything, so its error names the first byte that cannot continue the
 * document, in the words of its scanner (`invalid character '}' looking
 * for beginning of value`, `unexpected end of JSON input`); the sandbox's
 * own parser words them otherwise, so this scanner is the one that judges.
 */

/** How Go's scanner quotes the byte it stopped at. */
function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return `'"'`;
  const escapes: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 0x5c: '\\\\' };
  if (escapes[c]) return `'${escapes[c]}'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, '0')}'`;
  // A byte above 0x7f is quoted as the rune of the same number.
  if (c >= 0x80 && (c < 0xa1 || c === 0xad)) return `'\\u00${c.toString(16).padStart(2, '0')}'`;
  return `'${String.fromCharCode(c)}'`;
}

class SyntaxError {
  constructor(readonly message: string) {}
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/** A recursive reader of one JSON document that fails as Go's scanner does. */
class Scanner {
  private i = 0;

  constructor(private readonly b: Buffer) {}

  private fail(c: number, context: string): never {
    throw new SyntaxError(`invalid character ${quoteChar(c)} ${context}`);
  }

  /** The next byte; the end of the input is Go's `unexpected end of JSON input`. */
  private next(): number {
    if (this.i >= this.b.length) throw new SyntaxError('unexpected end of JSON input');
    return this.b[this.i++]!;
  }

  private nextNonSpace(): number {
    let c = this.next();
    while (isSpace(c)) c = this.next();
    return c;
  }

  document(): void {
    this.value(this.nextNonSpace());
    while (this.i < this.b.length) {
      const c = this.b[this.i++]!;
      if (!isSpace(c)) this.fail(c, 'after top-level value');
    }
  }

  /** Reads the value that starts with `c`; numbers leave the byte after them unread. */
  private value(c: number): void {
    if (c === 0x7b) return this.object();
    if (c === 0x5b) return this.array();
    if (c === 0x22) return this.string();
    if (c === 0x2d || isDigit(c)) return this.number(c);
    if (c === 0x74) return this.literal('true');
    if (c === 0x66) return this.literal('false');
    if (c === 0x6e) return this.literal('null');
    this.fail(c, 'looking for beginning of value');
  }

  private object(): void {
    let c = this.nextNonSpace();
    if (c === 0x7d) return;
    for (;;) {
      if (c !== 0x22) this.fail(c, 'looking for beginning of object key string');
      this.string();
      c = this.nextNonSpace();
      if (c !== 0x3a) this.fail(c, 'after object key');
      this.value(this.nextNonSpace());
      c = this.nextNonSpace();
      if (c === 0x7d) return;
      if (c !== 0x2c) this.fail(c, 'after object key:value pair');
      c = this.nextNonSpace();
    }
  }

  private array(): void {
    let c = this.nextNonSpace();
    if (c === 0x5d) return;
    for (;;) {
      this.value(c);
      c = this.nextNonSpace();
      if (c === 0x5d) return;
      if (c !== 0x2c) this.fail(c, 'after array element');
      c = this.nextNonSpace();
    }
  }

  private string(): void {
    for (;;) {
      const c = this.next();
      if (c === 0x22) return;
      if (c < 0x20) this.fail(c, 'in string literal');
      if (c !== 0x5c) continue;
      const e = this.next();
      if (e === 0x75) {
        for (let k = 0; k < 4; k++) {
          const h = this.next();
          if (!isHex(h)) this.fail(h, 'in \\u hexadecimal character escape');
        }
      } else if (!'bfnrt\\/"'.includes(String.fromCharCode(e))) {
        this.fail(e, 'in string escape code');
      }
    }
  }

  private literal(word: string): void {
    for (const expected of word.slice(1)) {
      const c = this.next();
      if (c !== expected.charCodeAt(0)) this.fail(c, `in literal ${word} (expecting '${expected}')`);
    }
  }

  /** Peeks at the byte after a number; the end of the input ends a number. */
  private peek(): number | undefined {
    return this.i < this.b.length ? this.b[this.i] : undefined;
  }

  private number(first: number): void {
    let c: number | undefined = first;
    if (c === 0x2d) {
      c = this.next();
      if (!isDigit(c)) this.fail(c, 'in numeric literal');
    }
    if (c !== 0x30) while (this.peek() !== undefined && isDigit(this.peek()!)) this.i++;
    if (this.peek() === 0x2e) {
      this.i++;
      const d = this.next();
      if (!isDigit(d)) this.fail(d, 'after decimal point in numeric literal');
      while (this.peek() !== undefined && isDigit(this.peek()!)) this.i++;
    }
    if (this.peek() === 0x65 || this.peek() === 0x45) {
      this.i++;
      let e = this.next();
      if (e === 0x2b || e === 0x2d) e = this.next();
      if (!isDigit(e)) this.fail(e, 'in exponent of numeric literal');
      while (this.peek() !== undefined && isDigit(this.peek()!)) this.i++;
    }
  }
}

/** Go's error for `raw` as a JSON document, or undefined when its syntax is valid. */
export function goJsonSyntaxError(raw: Buffer): string | undefined {
  try {
    new Scanner(raw).document();
    return undefined;
  } catch (err) {
    if (err instanceof SyntaxError) return err.message;
    throw err;
  }
}

/** The JSON type name Go's decoder gives a value it cannot put into a Go type (`cannot unmarshal array into ...`). */
export function goJsonTypeName(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'boolean') return 'bool';
  return typeof value;
}

/**
 * How the API server quotes a body it could not decode in its error: the
 * first 30 bytes, as text when it starts like an object, in hex otherwise.
 */
export function summarizeBody(raw: Buffer): string {
  const max = 30;
  if (raw.length === 0) return '<empty>';
  const head = raw.subarray(0, max);
  const more = raw.length > max ? ' ...' : '';
  return raw[0] === 0x7b ? `${head.toString('utf8')}${more}` : `${head.toString('hex')}${more}`;
}

/** A JSON body whose syntax Go's decoder refuses: each handler words the 400 its own way (rest.ts). */
export class MalformedJsonBody extends Error {
  constructor(
    readonly raw: Buffer,
    readonly goError: string,
  ) {
    super(goError);
    this.name = 'MalformedJsonBody';
  }
}
