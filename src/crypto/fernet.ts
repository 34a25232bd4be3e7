/**
 * Fernet (version 0x80) as the public Fernet spec defines it, over
 * `node:crypto` alone, so tokens interoperate with every other Fernet
 * implementation (Python's `cryptography`, Go's `fernet-go`, ...).
 *
 * Token: base64url(0x80 ‖ timestamp (u64 BE, seconds) ‖ IV (16) ‖
 * AES-128-CBC/PKCS7 ciphertext ‖ HMAC-SHA256(version … ciphertext)).
 * Key: base64url(signing key (16) ‖ encryption key (16)).
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const VERSION = 0x80;
const HEADER_BYTES = 1 + 8 + 16;
const HMAC_BYTES = 32;
const BLOCK_BYTES = 16;
/** The spec's tolerance for a token stamped slightly in the future. */
export const MAX_CLOCK_SKEW_SECONDS = 60;

/**
 * Every reason a token is refused ends here with the same message: the spec
 * asks implementations not to tell an attacker which check failed.
 */
export class InvalidFernetToken extends Error {
  constructor() {
    super('invalid Fernet token');
    this.name = 'InvalidFernetToken';
  }
}

export class InvalidFernetKey extends Error {
  constructor(problem = 'a Fernet key must be 32 bytes encoded as URL-safe base64 (44 characters)') {
    super(problem);
    this.name = 'InvalidFernetKey';
  }
}

const BASE64URL_PADDED = /^[A-Za-z0-9_-]*={0,2}$/;

/**
 * Strict URL-safe base64 with padding. `Buffer.from(s, 'base64url')` silently
 * skips characters it does not know (`%`, `/`, `+`, `*`) and stops at `=`,
 * which would accept several of the spec's invalid vectors; re-encoding and
 * comparing rejects those and any non-canonical spelling.
 */
export function decodeBase64UrlStrict(text: string): Buffer | undefined {
  if (text.length % 4 !== 0 || !BASE64URL_PADDED.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return encodeBase64Url(bytes) === text ? bytes : undefined;
}

/** URL-safe base64 with `=` padding, the encoding of Fernet keys and tokens. */
export function encodeBase64Url(bytes: Buffer): string {
  return bytes.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

/** A fresh random Fernet key (32 bytes, URL-safe base64). */
export function generateFernetKey(): string {
  return encodeBase64Url(randomBytes(32));
}

/** Throws `InvalidFernetKey` unless `key` is a well-formed Fernet key. */
export function parseFernetKey(key: string): { signingKey: Buffer; encryptionKey: Buffer } {
  const bytes = typeof key === 'string' ? decodeBase64UrlStrict(key) : undefined;
  if (!bytes || bytes.length !== 32) throw new InvalidFernetKey();
  return { signingKey: bytes.subarray(0, 16), encryptionKey: bytes.subarray(16) };
}

export interface FernetEncryptOptions {
  /** Seconds since the epoch to stamp the token with (default: now). */
  now?: number;
  /** A fixed IV, for test vectors only: real tokens need a fresh random IV. */
  iv?: Buffer;
}

export interface FernetDecryptOptions {
  /** Refuse tokens older than this many seconds. */
  ttl?: number;
  /** Seconds since the epoch to check the TTL against (default: now). */
  now?: number;
}

export class Fernet {
  readonly #signingKey: Buffer;
  readonly #encryptionKey: Buffer;

  constructor(key: string) {
    const { signingKey, encryptionKey } = parseFernetKey(key);
    this.#signingKey = signingKey;
    this.#encryptionKey = encryptionKey;
  }

  encrypt(plain: Buffer | string, opts: FernetEncryptOptions = {}): string {
    const data = typeof plain === 'string' ? Buffer.from(plain, 'utf8') : plain;
    const iv = opts.iv ?? randomBytes(16);
    if (iv.length !== 16) throw new RangeError(`a Fernet IV is 16 bytes, got ${iv.length}`);
    const now = Math.floor(opts.now ?? Date.now() / 1000);
    if (!Number.isSafeInteger(now) || now < 0) throw new RangeError(`invalid Fernet timestamp ${opts.now}`);

    const header = Buffer.alloc(HEADER_BYTES);
    header[0] = VERSION;
    header.writeBigUInt64BE(BigInt(now), 1);
    iv.copy(header, 9);
    const cipher = createCipheriv('aes-128-cbc', this.#encryptionKey, iv);
    const body = Buffer.concat([header, cipher.update(data), cipher.final()]);
    const mac = createHmac('sha256', this.#signingKey).update(body).digest();
    return encodeBase64Url(Buffer.concat([body, mac]));
  }

  decrypt(token: string, opts: FernetDecryptOptions = {}): Buffer {
    const raw = typeof token === 'string' ? decodeBase64UrlStrict(token) : undefined;
    const cipherBytes = raw ? raw.length - HEADER_BYTES - HMAC_BYTES : -1;
    if (!raw || raw[0] !== VERSION || cipherBytes <= 0 || cipherBytes % BLOCK_BYTES !== 0) {
      throw new InvalidFernetToken();
    }

    const timestamp = Number(raw.readBigUInt64BE(1));
    // The age and skew checks apply only when a TTL is asked for, as in other
    // implementations: secrets kept at rest have no TTL and must stay readable
    // whatever the clock says.
    if (opts.ttl !== undefined) {
      const now = opts.now ?? Date.now() / 1000;
      if (timestamp + opts.ttl < now) throw new InvalidFernetToken();
      if (timestamp > now + MAX_CLOCK_SKEW_SECONDS) throw new InvalidFernetToken();
    }

    const body = raw.subarray(0, raw.length - HMAC_BYTES);
    const expected = createHmac('sha256', this.#signingKey).update(body).digest();
    if (!timingSafeEqual(expected, raw.subarray(raw.length - HMAC_BYTES))) throw new InvalidFernetToken();

    try {
      const decipher = createDecipheriv('aes-128-cbc', this.#encryptionKey, raw.subarray(9, HEADER_BYTES));
      return Buffer.concat([decipher.update(body.subarray(HEADER_BYTES)), decipher.final()]);
    } catch {
      throw new InvalidFernetToken();
    }
  }
}
