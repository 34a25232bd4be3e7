import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { Fernet, InvalidFernetKey, InvalidFernetToken, generateFernetKey } from '../../src/crypto/index.js';

const fixtures = (name: string): unknown => JSON.parse(readFileSync(fileURLToPath(new URL(`../fixtures/fernet/${name}`, import.meta.url)), 'utf8'));

interface GenerateVector {
  token: string;
  now: string;
  iv: number[];
  src: string;
  secret: string;
}
interface VerifyVector {
  token: string;
  now: string;
  ttl_sec: number;
  src: string;
  secret: string;
}
interface InvalidVector {
  desc: string;
  token: string;
  now: string;
  ttl_sec: number;
  secret: string;
}

const seconds = (iso: string): number => Date.parse(iso) / 1000;

describe('Fernet spec vectors', () => {
  it.each(fixtures('generate.json') as GenerateVector[])('generates $token', (v) => {
    const token = new Fernet(v.secret).encrypt(v.src, { now: seconds(v.now), iv: Buffer.from(v.iv) });
    expect(token).toBe(v.token);
  });

  it.each(fixtures('verify.json') as VerifyVector[])('verifies $token', (v) => {
    const plain = new Fernet(v.secret).decrypt(v.token, { ttl: v.ttl_sec, now: seconds(v.now) });
    expect(plain.toString('utf8')).toBe(v.src);
  });

  it.each(fixtures('invalid.json') as InvalidVector[])('rejects: $desc', (v) => {
    expect(() => new Fernet(v.secret).decrypt(v.token, { ttl: v.ttl_sec, now: seconds(v.now) })).toThrow(InvalidFernetToken);
  });
});

describe('Fernet', () => {
  const key = generateFernetKey();

  it('round-trips text and binary, empty included', () => {
    const f = new Fernet(key);
    expect(f.decrypt(f.encrypt('pässwörd')).toString('utf8')).toBe('pässwörd');
    const bytes = Buffer.from([0, 255, 1, 254, 16, 16, 16]);
    expect(f.decrypt(f.encrypt(bytes)).equals(bytes)).toBe(true);
    expect(f.decrypt(f.encrypt('')).length).toBe(0);
  });

  it('uses a fresh IV for every token', () => {
    const f = new Fernet(key);
    expect(f.encrypt('same')).not.toBe(f.encrypt('same'));
  });

  it('refuses a token made with another key', () => {
    const token = new Fernet(generateFernetKey()).encrypt('x');
    expect(() => new Fernet(key).decrypt(token)).toThrow(InvalidFernetToken);
  });

  it('refuses a token of another version', () => {
    const raw = Buffer.from(new Fernet(key).encrypt('x'), 'base64url');
    raw[0] = 0x81;
    expect(() => new Fernet(key).decrypt(raw.toString('base64').replace(/\+/g, '-').replace(/\//g, '_'))).toThrow(InvalidFernetToken);
  });

  it('refuses a token without its base64 padding', () => {
    const token = new Fernet(key).encrypt('hello');
    expect(token.endsWith('=')).toBe(true);
    expect(() => new Fernet(key).decrypt(token.replace(/=+$/, ''))).toThrow(InvalidFernetToken);
  });

  it('checks age and clock skew only when a TTL is given', () => {
    const f = new Fernet(key);
    const token = f.encrypt('x', { now: 1_000_000 });
    expect(f.decrypt(token, { now: 9_000_000 }).toString()).toBe('x');
    expect(f.decrypt(token, { ttl: 10, now: 1_000_010 }).toString()).toBe('x');
    expect(() => f.decrypt(token, { ttl: 10, now: 1_000_011 })).toThrow(InvalidFernetToken);
    expect(f.decrypt(token, { ttl: 10, now: 1_000_000 - 60 }).toString()).toBe('x');
    expect(() => f.decrypt(token, { ttl: 10, now: 1_000_000 - 61 })).toThrow(InvalidFernetToken);
  });

  it.each([
    ['too short', 'cw_0x689RpI-jtRR7oE8h_eQsKImvJapLeSbXpwF4e4'],
    ['16 bytes', Buffer.alloc(16).toString('base64url') + '=='],
    ['standard base64 alphabet', '+w/0x689RpI+jtRR7oE8h/eQsKImvJapLeSbXpwF4e4='],
    ['garbage', 'not a key at all'],
  ])('refuses a malformed key (%s)', (_desc, bad) => {
    expect(() => new Fernet(bad)).toThrow(InvalidFernetKey);
  });

  it('generates 32-byte URL-safe keys', () => {
    const k = generateFernetKey();
    expect(k).toMatch(/^[A-Za-z0-9_-]{43}=$/);
    expect(Buffer.from(k, 'base64url')).toHaveLength(32);
  });
});

/** Debian's python3-cryptography, not the pyenv interpreter on PATH. */
const PYTHON = '/usr/bin/python3';

function python(script: string, ...args: string[]): string {
  const r = spawnSync(PYTHON, ['-c', script, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`python failed (${r.status}): ${r.stderr}`);
  return r.stdout.trim();
}

describe('interoperability with python3-cryptography', () => {
  const key = generateFernetKey();
  const message = 'bearer token: eyJhbGciOi… ünïcode';

  it('decrypts in Python what vnfm encrypted', () => {
    const token = new Fernet(key).encrypt(message);
    const out = python(
      'import sys; from cryptography.fernet import Fernet; sys.stdout.buffer.write(Fernet(sys.argv[1].encode()).decrypt(sys.argv[2].encode(), ttl=3600).hex().encode())',
      key,
      token,
    );
    expect(Buffer.from(out, 'hex').toString('utf8')).toBe(message);
  });

  it('decrypts in vnfm what Python encrypted, and Python keys work', () => {
    const out = python(
      'import sys, json; from cryptography.fernet import Fernet; k = Fernet.generate_key(); print(json.dumps([k.decode(), Fernet(k).encrypt(bytes.fromhex(sys.argv[1])).decode()]))',
      Buffer.from(message, 'utf8').toString('hex'),
    );
    const [pyKey, pyToken] = JSON.parse(out) as [string, string];
    expect(new Fernet(pyKey).decrypt(pyToken, { ttl: 3600 }).toString('utf8')).toBe(message);
  });

  it('agrees with Python on a fixed timestamp and IV', () => {
    const iv = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
    const out = python(
      'import sys; from cryptography.fernet import Fernet; print(Fernet(sys.argv[1].encode())._encrypt_from_parts(b"fixed", 1234567890, bytes(range(16))).decode())',
      key,
    );
    expect(new Fernet(key).encrypt('fixed', { now: 1234567890, iv })).toBe(out);
  });
});
